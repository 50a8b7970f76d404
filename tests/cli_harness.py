"""Run ``acplab`` in this process (fast enough to fuzz) and check the command-line contract.

The contract (DESIGN.md): exit 0, 1, 2 or 3; never a traceback; on exit 2 one
line on stderr; with ``--json`` one JSON object on stdout, on exit 2 too.
"""

from __future__ import annotations

import contextlib
import io
import json
import os

from hypothesis import HealthCheck, settings

from acplab.model.app.cli import main

#: the fuzz profile: ``ACPLAB_FUZZ=nightly pytest tests/test_fuzz_*.py`` runs 40x more examples
PROFILE = os.environ.get("ACPLAB_FUZZ", "fast")
EXAMPLES = {"fast": 1, "nightly": 40}[PROFILE]


def fuzz_settings(examples: int) -> settings:
    """Hypothesis settings for a fuzz test: ``examples`` by default, 40x that in the nightly profile."""
    return settings(max_examples=examples * EXAMPLES, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                           HealthCheck.filter_too_much, HealthCheck.data_too_large])


def run_cli(*args: str) -> tuple[int, str, str]:
    """``acplab ARGS`` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 2)
    return code, out.getvalue(), err.getvalue()


def check_contract(code: int, out: str, err: str, as_json: bool) -> dict | None:
    """Assert the contract; return the JSON object under ``as_json``."""
    assert code in (0, 1, 2, 3), (code, err[-500:])
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    if code == 2:
        assert err.endswith("\n") and err.count("\n") == 1 and err.startswith("acplab: error: "), err
    if not as_json:
        return None
    obj = json.loads(out)
    assert isinstance(obj, dict), out[:200]
    if code == 2:
        assert obj["verdict"] == "error" and obj["error"], obj
    return obj


def contract(*args: str) -> tuple[int, str, str, dict | None]:
    """Run and check: (exit code, stdout, stderr, the JSON object or None)."""
    code, out, err = run_cli(*args)
    args_before = list(args)[: list(args).index("--")] if "--" in args else list(args)
    return code, out, err, check_contract(code, out, err, "--json" in args_before)
