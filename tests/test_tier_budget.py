"""The tests moved to the deep tier for CI's budget (``tiers.OVER_CI_BUDGET``) are still there, and deep.

A renamed or removed test would otherwise drop out of the list silently, and the budget it was moved
for would no longer be what the list says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tiers import OVER_CI_BUDGET

TESTS = Path(__file__).resolve().parent


def _collected(marks: str) -> set[str]:
    files = sorted({name.split("::")[0] for name in OVER_CI_BUDGET})
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-n", "0",
                          "-p", "no:cacheprovider", "-m", marks, *files],
                         cwd=TESTS, capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 5), run.stdout[-2000:] + run.stderr[-2000:]
    return {line.split("/")[-1] for line in run.stdout.splitlines() if "::" in line}


def test_every_test_over_the_budget_is_collected_in_the_deep_tier_and_not_in_ci():
    """One collection (two took 23 s of CI): a test collected by ``-m "deep and slow"`` is one that CI's
    ``-m 'not deep'`` leaves out and ``-m "not slow"`` too."""
    deep = _collected("deep and slow")
    assert set(OVER_CI_BUDGET) <= deep, sorted(set(OVER_CI_BUDGET) - deep)
    assert all(reason.strip() for reason in OVER_CI_BUDGET.values())
