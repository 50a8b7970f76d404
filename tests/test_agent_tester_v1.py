"""``acplab test`` against the Python SDK's v1 agent (scripts/sdk_corpus/py-v1/record_v1.py, agent-client-protocol).

The agent answers ``initialize`` with protocol version 1, so it is driven
with the v1 methods and judged by the v1 rules.  Needs the SDK in
scripts/sdk_corpus/py-v1/.venv (``python3 -m venv .venv && .venv/bin/pip
install -r requirements.txt`` there): skipped where missing.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from acplab.model.tester.campaign import Config, run_campaign
from acplab.model.tester.schedule import Schedule, Step

PY_V1 = Path(__file__).resolve().parents[1] / "scripts" / "sdk_corpus" / "py-v1"
PYTHON = PY_V1 / ".venv" / "bin" / "python"
#: the agent's buggy behaviours a client provokes, with the rule that catches each (record_v1.py)
BUGGY = {"v1_cancel_as_error": "C9", "v1_stop_reason_error": "W14", "v1_custom_stop_reason": "W14"}


@pytest.fixture(scope="module")
def v1_agent():
    if not list((PY_V1 / ".venv" / "lib").glob("python3*/site-packages/acp/__init__.py")):
        pytest.skip("scripts/sdk_corpus/py-v1/.venv lacks agent-client-protocol: pip install -r requirements.txt")
    return lambda mode: [str(PYTHON), str(PY_V1 / "record_v1.py"), "agent", mode]


def test_the_v1_agent_is_driven_by_the_v1_methods_and_holds(tmp_path, v1_agent):
    report = run_campaign(Config(v1_agent("v1_normal_turn"), out=str(tmp_path / "o"), max_schedules=1, budget=120.0,
                                 timeout=20.0))  # the SDK and pydantic take seconds to import under load
    assert report.exit_code == 0 and dict(report.dialects) == {"v1": 1}, [f.to_json() for f in report.findings]


#: a prompt, cancelled once its tool call runs (the window of C9); the stop-reason bugs show at the response
PROMPT_THEN_CANCEL = Schedule("prompt-then-cancel", (Step("now", "prompt", ("hi",)), Step("tool_running", "cancel")))


@pytest.mark.slow  # each run starts the SDK's agent: about 1 s idle, 8 s at load 15
@pytest.mark.parametrize("mode", sorted(BUGGY))
def test_each_v1_bug_is_found(tmp_path, v1_agent, mode):
    report = run_campaign(Config(v1_agent(mode), out=str(tmp_path / f"o-{time.monotonic_ns()}"),
                                 schedule=PROMPT_THEN_CANCEL, shrink=False, stop_early=True, budget=120.0,
                                 timeout=20.0))
    assert report.exit_code == 1 and BUGGY[mode] in report.findings[0].rules, report.cases
    assert dict(report.dialects) == {"v1": report.runs}
