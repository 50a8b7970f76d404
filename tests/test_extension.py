"""The extension point: a spec file names a class the model loads; the two worked examples in examples/."""

import json
from pathlib import Path

import pytest

from acplab.model.acp import agent as ag
from acplab.model.acp.agent_common import Options
from acplab.model.acp.spec import SPECS
from acplab.model.acp.specfile import load
from acplab.model.acp.state import Agent, Entry
from acplab.model.app import matrix as mx
from acplab.model.errors import InputError
from acplab.model.wire import ErrorResponse, Prompt

from cli_harness import run_cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "extensions"


def _cell_violations(spec, scenario) -> set[str]:
    """The properties one matrix run of ``spec`` violates (the matrix's own run function)."""
    result = mx.run_one(("acp", spec, scenario, {}, None, None, False))
    assert result["complete"]
    return {v["property"] for v in result["violations"]}


def test_dedup_by_prompt_id_runs_a_retried_request_once_where_its_base_runs_it_twice():
    spec = load(EXAMPLES / "dedup-by-prompt-id.toml")
    assert spec.extension.endswith("dedup_by_prompt_id.py:DedupByPromptId")
    assert "NoReexecution" in _cell_violations(SPECS["client-correlation-token"], "timeout-retry")
    found = _cell_violations(spec, "timeout-retry")
    assert not found & {"NoReexecution", "NoMisattribution", "OutcomeKnown", "NoHang", "NoDuplicateMessages"}
    assert "ResponsesFollowInsertion" in found and dict(spec.by_design)["ResponsesFollowInsertion"]


def test_reject_duplicate_client_id_refuses_a_chosen_id_already_in_history():
    spec = load(EXAMPLES / "reject-duplicate-client-id.toml")
    history = (Entry("k1", "user", ("yes",), True, "prompt", (0, 0, 1), "k1"),)
    agent, out = ag.receive(Agent(history=history), 1, 0, Prompt(1, "s1", ("yes",), "k1"), spec, Options(), (0, 0))
    sent = [e.msg for e in out if e.kind == "send"]
    assert isinstance(sent[0], ErrorResponse) and "k1 is already in use" in sent[0].error.message
    assert [e.kind for e in out if e.kind == "reject"] == ["reject"] and agent.reqs == ()
    _, fresh = ag.receive(Agent(history=history), 1, 0, Prompt(1, "s1", ("yes",), "k2"), spec, Options(), (0, 0))
    assert not any(e.kind == "send" for e in fresh)  # a new id is held for insertion as the base says


@pytest.mark.slow
def test_reject_duplicate_client_id_keeps_history_ids_distinct_under_colliding_generators():
    """About 3 s on an idle core (two id-collision runs); the client still binds its chosen id on the first
    report that carries it, before its own answer: NoMisattribution stays a client-strategy question."""
    spec = load(EXAMPLES / "reject-duplicate-client-id.toml")
    base = _cell_violations(SPECS["client-chosen-id-naive"], "id-collision")
    found = _cell_violations(spec, "id-collision")
    assert {"InsertedIdsDistinct", "ViewsConverge"} <= base and not found & {"InsertedIdsDistinct", "ViewsConverge"}


def _spec_file(tmp_path, extension: str, code: str | None = None) -> str:
    if code is not None:
        (tmp_path / "hook.py").write_text(code)
    path = tmp_path / "mine.toml"
    path.write_text(f'name = "mine"\nbase = "client-chosen-id"\nextension = "{extension}"\n')
    return str(path)


@pytest.mark.parametrize("extension,code,says", [
    ("nowhere.py:Hook", None, "extension file"),
    ("hook.py:Missing", "class Hook:\n    def on_prompt(self, prompt):\n        return None\n", "has no class Missing"),
    ("hook.py:Hook", "class Hook:\n    pass\n", "meets neither protocol"),
    ("hook.py:Hook", "raise RuntimeError('boom')\n", "RuntimeError: boom"),
    ("no-colon", None, "must be \"FILE.py:ClassName\""),
])
def test_a_bad_extension_is_one_line_and_exit_2(tmp_path, extension, code, says):
    with pytest.raises(InputError, match="spec file"):
        load(_spec_file(tmp_path, extension, code))
    status, out, err = run_cli("check", "--spec-file", _spec_file(tmp_path, extension, code), "--json")
    assert status == 2 and json.loads(out)["verdict"] == "error"
    assert len(err.strip().splitlines()) == 1 and says in err


def test_the_presets_load_no_extension():
    assert all(spec.extension == "" for spec in SPECS.values())
