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
