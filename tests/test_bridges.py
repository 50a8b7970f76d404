"""The v1<->v2 bridge models (model/bridges.py): conforming models hold, mutants are caught."""

import pytest

from acplab.model.acp.bridges import BRIDGE_MODELS, MUTANTS, V1AgentBehindBridge, V2AgentBehindBridge, format_message
from acplab.model.engine import explore
from acplab.model.wire import ErrorResponse

# pinned from one exploration; a change means the model changed
STATE_COUNTS = {"v1-agent": 99, "v2-agent": 115}

# (model, mutant) -> (expected property, shortest counterexample length)
EXPECTED = {
    ("v1-agent", "early_ack"): ("B7_InsertionReportedOnlyOnEvidence", 2),
    ("v1-agent", "error_response_after_insertion"): ("B1_ErrorAfterInsertionBecomesIdleError", 7),
    ("v1-agent", "error_object_lost"): ("B1_ErrorAfterInsertionBecomesIdleError", 7),
    ("v2-agent", "forward_error_stop_reason"): ("W14_V1StopReasonInClosedEnum", 7),
    ("v2-agent", "drop_error_object"): ("B3_IdleErrorBecomesV1ErrorResponse", 7),
    ("v2-agent", "raw_state_update"): ("B4_NoV2OnlyValuesToV1", 7),
    ("v2-agent", "silent_replace"): ("B5_UnrepresentableUpdateNotDropped", 11),
}


def test_registry_covers_every_mutant():
    assert set(BRIDGE_MODELS) == set(MUTANTS)
    assert {(m, x) for m, xs in MUTANTS.items() for x in xs} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(BRIDGE_MODELS))
def test_conforming_model_holds(name):
    r = explore(BRIDGE_MODELS[name]())
    assert r.complete
    assert r.verdict == "holds", [v.property.name for v in r.violations]
    assert r.missing_witnesses == []
    assert len(r.witnesses) >= 4
    assert r.stats.states == STATE_COUNTS[name]
    assert r.stats.states > 50


@pytest.mark.parametrize("name,mutant", sorted(EXPECTED))
def test_mutant_is_caught(name, mutant):
    prop, length = EXPECTED[(name, mutant)]
    r = explore(BRIDGE_MODELS[name](mutant=mutant), expand_violating=True)
    assert r.verdict == "violated"
    found = {v.property.name: v for v in r.violations}
    assert prop in found, sorted(found)
    assert len(found[prop].path) == length
    rule = prop.split("_")[0]
    assert rule in found[prop].property.rules


def test_error_response_after_insertion_also_breaks_e1_at_the_client():
    r = explore(V1AgentBehindBridge(mutant="error_response_after_insertion"), expand_violating=True)
    names = {v.property.name: len(v.path) for v in r.violations}
    assert names.get("E1_ErrorResponseMeansNotInserted") == 10


def test_unknown_mutant_rejected():
    with pytest.raises(ValueError):
        V1AgentBehindBridge(mutant="nope")
    with pytest.raises(ValueError):
        V2AgentBehindBridge(mutant="early_ack")
    with pytest.raises(ValueError):
        V1AgentBehindBridge(mutant="early_ack", conforming=True)


def test_x33_error_before_echo_race_is_reachable_and_fails_the_v2_prompt():
    model = V1AgentBehindBridge()
    r = explore(model)
    path = r.witnesses["W_ErrorBeforeEchoBecomesErrorResponse"]
    assert path is not None
    actions = [model.format_action(a) for a, _ in path.steps]
    assert "agent_echo" not in actions and "agent_error" in actions
    final = path.last_state
    client = [m for e, m in final.log if e == "client_recv"]
    assert [format_message(m) for m in client] == ["err#7(-32603)"]
    assert isinstance(client[0], ErrorResponse) and client[0].error == V1AgentBehindBridge.V1_ERROR


def test_x33_main_line_matches_races_md():
    r = explore(V1AgentBehindBridge())
    final = r.witnesses["W_ErrorAfterEchoBecomesIdleError"].last_state
    client = [format_message(m) for e, m in final.log if e == "client_recv"]
    assert client == ["um(m1)", "ok#7{m1}", "st:idle/error{-32603}"]


def test_x33_late_echo_after_error_is_withheld():
    r = explore(V1AgentBehindBridge())
    final = r.witnesses["W_LateEchoAfterErrorWithheld"].last_state
    client = [format_message(m) for e, m in final.log if e == "client_recv"]
    assert client == ["err#7(-32603)"]


def test_early_ack_hides_the_error_before_echo_race():
    # with an early ack a pre-echo v1 error can no longer fail the v2 prompt
    r = explore(V1AgentBehindBridge(mutant="early_ack"), expand_violating=True)
    assert "W_ErrorBeforeEchoBecomesErrorResponse" in r.missing_witnesses


def test_x32_each_agent_outcome_mapped():
    r = explore(V2AgentBehindBridge())
    expected = {
        "W_EndTurnMapped": "ok#7{end_turn}",
        "W_ErrorWithObjectMapped": "err#7(-32000)",
        "W_ErrorWithoutObjectMapped": "err#7(-32603)",
        "W_VendorStopReasonFailsV1Prompt": "err#7(-32603)",
    }
    for witness, label in expected.items():
        final = r.witnesses[witness].last_state
        assert [format_message(m) for e, m in final.log if e == "client_recv"] == [label], witness


# -- the options the matrix's bridge rows use (off by default: the pinned models above are unchanged) --------


def _goal_violations(model):
    from acplab.model.acp.bridge_goals import with_goals

    r = explore(with_goals(model), expand_violating=True)
    assert r.complete
    return {v.property.name: v for v in r.violations}


@pytest.mark.parametrize("cls", [V1AgentBehindBridge, V2AgentBehindBridge])
def test_the_rfd_bridges_lose_nothing_of_a_detailed_error(cls):
    assert _goal_violations(cls(detailed=True)) == {}


def test_a_new_error_type_loses_the_code_and_data_in_each_direction():
    v1 = _goal_violations(V1AgentBehindBridge(detailed=True, error_type="new"))
    assert "-32002" in v1["OutcomeKnown"].sentence and "learned -32603" in v1["OutcomeKnown"].sentence
    assert "B1_ErrorAfterInsertionBecomesIdleError" in v1  # B1 asks for the JSON-RPC object (by design there)
    v2 = _goal_violations(V2AgentBehindBridge(detailed=True, error_type="new"))
    assert set(v2) == {"OutcomeKnown"} and "uri" in v2["OutcomeKnown"].sentence
    # an error the new type's kinds cover converts back without loss
    assert _goal_violations(V2AgentBehindBridge(error_type="new")) == {}


def test_b5_a_replaced_message_is_surfaced_but_v1_cannot_show_the_replacement():
    found = _goal_violations(V2AgentBehindBridge(updates=True))
    assert set(found) == {"ViewsConverge"}
    assert "[replaced] ok!" in found["ViewsConverge"].sentence
    r = explore(V2AgentBehindBridge(updates=True))
    assert r.witnesses["W_ReplacementSurfaced"] is not None


def test_b8_the_idle_of_the_agents_own_work_answers_the_v1_prompt():
    found = _goal_violations(V2AgentBehindBridge(detailed=True, own_work=True))
    assert set(found) == {"OutcomeKnown"} and "learned stopReason end_turn" in found["OutcomeKnown"].sentence
    path = found["OutcomeKnown"].path
    labels = [format_message(m) for e, m in path.last_state.log if e == "agent_sent"]
    assert labels.index("ok#70{m1}") < labels.index("st:idle/end_turn")  # the own work's idle came after insertion
