"""Counterexamples that check themselves: where the wire shows an internal violation; bridge wire logs with their
preamble."""

import json

import pytest

from acplab.model.render.artefacts import visibility_line, write_behaviour, write_bridge_behaviour
from acplab.model.trace.check import check_capture
from acplab.model.trace.visible import wire_visibility


def _mutant(name):
    from acplab.model.acp.killers import claims, reproduce
    from acplab.model.acp.model import AcpModel
    from acplab.model.acp.scenarios import SCENARIOS
    from acplab.model.acp.spec import SPECS

    claim = next(c for c in claims() if c.spec == name and c.property == SPECS[name].breaks)
    v = reproduce(claim)
    return AcpModel(SPECS[name], SCENARIOS[claim.scenario].bounds), v


@pytest.mark.parametrize("name,seen", [("early-success", False), ("replay-without-reset", True)])
def test_the_text_trace_says_where_the_wire_shows_the_violation(tmp_path, name, seen):
    """An early success is internal (the wire alone holds); a replay without its reset is on the wire at the
    step that sends the chunk."""
    model, v = _mutant(name)
    steps = v.path.actions_with_effects()
    write_behaviour(tmp_path / name, model, steps, name, (v.property.name, v.sentence), v.property.rules,
                    judge=wire_visibility)
    last = (tmp_path / f"{name}.txt").read_text().splitlines()[-1]
    wire_alone = check_capture(tmp_path / f"{name}.jsonl")  # no sidecar given: the wire log alone
    if seen:
        assert last.startswith(f"visible on the wire at step {len(steps)} (the step that breaks it)"), last
        assert set(v.property.rules) & {r for f in wire_alone.violations for r in f.rules}
    else:
        assert last.startswith(f"not visible on the wire in these {len(steps)} steps"), last
        assert wire_alone.verdict == "holds"


def test_visibility_line_names_the_step_of_the_record():
    # preamble of 4 records; wire records of steps 1, 1, 2, 3; a finding at line 7 is the third wire record: step 2
    text = visibility_line((7, "P", ("R7",)), [1, 1, 2, 3], 4, 3, "x")
    assert text.startswith("visible on the wire at step 2 (1 step(s) before the model's finding)") and "[R7]" in text


@pytest.mark.parametrize("model_name,mutant", [("v1-agent", "early_ack"), ("v2-agent", "raw_state_update")])
def test_bridge_wire_logs_start_with_each_connection_s_preamble(tmp_path, model_name, mutant):
    """Both connections open with ``initialize`` in the version spoken there and ``session/new``: each is judged
    in its own dialect, read from its initialize, not guessed."""
    from acplab.model.acp.bridges import BRIDGE_MODELS
    from acplab.model.engine import explore
    from acplab.model.render.bridgeview import versions

    model = BRIDGE_MODELS[model_name](mutant=mutant)
    v = explore(model, expand_violating=True).violations[0]
    write_bridge_behaviour(tmp_path / "b", model, v.path, "b", (v.property.name, v.sentence), v.property.rules)
    records = [json.loads(line) for line in (tmp_path / "b.jsonl").read_text().splitlines()]
    heads = {}
    for r in records:
        heads.setdefault(r["conn"], []).append(r["msg"].get("method"))
    assert {c: h[0] for c, h in heads.items()} == {"client-bridge": "initialize", "bridge-agent": "initialize"}
    assert all(h[2] == "session/new" for h in heads.values())
    result = check_capture(tmp_path / "b.jsonl")
    spoken = versions(model)
    assert result.dialect_source == "initialize"
    assert result.dialects == {"client-bridge": spoken["client"], "bridge-agent": spoken["agent"]}
    assert not [w for w in result.warnings if w.property == "Unjudgeable"]
