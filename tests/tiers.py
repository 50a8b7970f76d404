"""The deep tier: exhaustive cross products of which CI runs a fixed sample.

``pytest`` (the README's test command, what CI runs) leaves out tests marked
``deep`` (pyproject's ``addopts``); ``pytest -m deep`` runs just them and
``pytest -m "deep or not deep"`` runs everything.  A deep test is also
``slow``, so ``-m "not slow"`` never picks one up.

What goes deep is the rest of a cross product whose every row and column CI
still meets: :func:`sampled` keeps every ``stride``-th case of a sorted list
(a stride coprime to the row length moves the kept column from row to row),
so each mutant and each scenario is still run in CI, just not every pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest

DEEP = (pytest.mark.slow, pytest.mark.deep)


def deep(*values, id: str | None = None):
    """One parameter set that runs in the deep tier only."""
    return pytest.param(*values, marks=DEEP, id=id)


def sampled(cases: Iterable[Sequence], stride: int, slow: bool = True) -> list:
    """``cases`` as parameter sets: every ``stride``-th one (from the first) in CI, the others deep.

    The order of ``cases`` is the caller's and must be deterministic (sorted), so CI runs the same
    sample every time; ``slow`` marks the sampled ones slow too."""
    out = []
    for index, case in enumerate(cases):
        if index % stride == 0:
            out.append(pytest.param(*case, marks=pytest.mark.slow) if slow else pytest.param(*case))
        else:
            out.append(deep(*case))
    return out
