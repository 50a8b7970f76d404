"""The goals and the fair renderings they judge: each alternative as its proponents would build it."""

import copy

import pytest

from acplab.model.acp import client as cl
from acplab.model.acp.goals import GOALS, KNOWN_LIMITATIONS
from acplab.model.acp.model import AcpModel
from acplab.model.acp.monitor_set import monitor_set
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import RFD, SPECS
from acplab.model.acp.state import Client
from acplab.model.engine import explore
from acplab.model.acp.agent_common import AUTH_REQUIRED
from acplab.model.wire import PromptResult, StateUpdate, UnknownUpdate, Update, UserMessage, canonical_json, decode, encode


def _explore(spec, scenario, **overrides):
    model = AcpModel(spec, SCENARIOS[scenario].bounds._replace(**overrides), monitors=monitor_set() + GOALS,
                     symmetry=True, continue_after_violation=True)
    result = explore(model, expand_violating=True)
    assert result.complete
    return {v.property.name: v for v in result.violations}


@pytest.mark.slow  # about 11 s
def test_rfd_meets_every_goal_but_the_limitation_it_declares():
    """On the small scenarios; the figures' regeneration checks every matrix scenario (test_figures)."""
    for scenario in ("failure-outcome", "cancellation", "streamed-replay", "retained-command"):
        assert set(_explore(RFD, scenario)) <= set(KNOWN_LIMITATIONS), scenario


def test_a_client_binds_a_copy_accepted_by_an_empty_result_when_the_report_names_its_token():
    """The _guess fix: the {} response first, then the report: the client knows the ID and binds its copy."""
    spec = RFD._replace(response="empty", client_correlation="token")
    client, _ = cl.submit(Client(), 0, ("hi",), spec)
    client, _ = cl.receive(client, 0, PromptResult(1, None), spec)
    assert client.subs[0].status == "accepted" and client.subs[0].mid is None
    client, binds = cl.receive(client, 0, Update("s1", UserMessage("m1", ("hi",), "p1")), spec)
    assert [b.mid for b in binds] == ["m1"] and client.subs[0].mid == "m1"
    assert [(i.mid, i.provisional) for i in client.feed] == [("m1", False)]
    for name in ("reuse-jsonrpc-id",):
        assert "OneMessagePerSubmission" not in _explore(SPECS[name], "report-order")
    assert "OneMessagePerSubmission" not in _explore(spec, "report-order")


def test_tokens_are_unique_across_clients_unless_their_generators_collide():
    """Colliding generators (the ``id-collision`` scenario's fault) misattribute nothing when the response is
    authoritative live (the strongest build); the naive build, binding by token, misattributes (its per-client
    tokens collide: figures/matrix, multi-client)."""
    spec = SPECS["client-correlation-token"]
    assert "NoMisattribution" not in _explore(spec, "id-collision")
    client, sent = cl.submit(Client(), 1, ("hi",), spec, ordinal=2)
    assert sent[0].msg.prompt_id == "p2" and client.subs[0].pid == "p2"
    _, sent = cl.submit(Client(), 1, ("hi",), spec, ordinal=2, collide=True)
    assert sent[0].msg.prompt_id == "p1"  # the client's own counter, as for JSON-RPC ids
    _, sent = cl.submit(Client(), 1, ("hi",), SPECS["client-correlation-token-naive"], ordinal=2)
    assert sent[0].msg.prompt_id == "p1"  # the naive build numbers its own


def test_the_token_recovers_a_lost_response_and_keeps_the_returned_id():
    spec = SPECS["client-correlation-token"]
    assert spec.response == "message_id"
    for scenario in ("streamed-replay", "failure-outcome"):
        assert "LostResponseRecoverable" not in _explore(spec, scenario), scenario
        assert "LostResponseRecoverable" in _explore(RFD, scenario), scenario


def test_the_notification_variant_guesses_nothing_and_its_sender_cannot_tell():
    """The naive build (no token, no rejection notification); the strongest is tests/test_matrix_columns.py's."""
    found = _explore(SPECS["prompt-as-notification-naive"], "report-order")
    assert "ClientsLinkByResponse" not in found
    assert {"NoDuplicateMessages", "OutcomeKnown", "PromptsAnswered"} <= set(found)


def test_two_phase_acknowledgement_signals_a_rejection_after_the_receipt():
    spec = SPECS["ack-before-insertion"]
    client, _ = cl.submit(Client(), 0, ("hi",), spec)
    client, _ = cl.receive(client, 0, PromptResult(1, "m1"), spec)
    assert client.subs[0].status == "received"
    body = canonical_json({"sessionUpdate": "prompt_rejected", "messageId": "m1"})
    rejected, _ = cl.receive(client, 0, Update("s1", UnknownUpdate("prompt_rejected", body)), spec)
    assert rejected.subs[0].status == "rejected" and rejected.feed == ()
    inserted, _ = cl.receive(client, 0, Update("s1", UserMessage("m1", ("hi",))), spec)
    assert inserted.subs[0].status == "accepted"
    found = _explore(spec, "failure-after-insertion")
    assert "OutcomeKnown" not in found and "ResponsesFollowInsertion" in found  # the latter by design
    assert "OutcomeKnown" in _explore(SPECS["early-success"], "failure-after-insertion")  # no signal: unknown


def test_a_forgotten_prose_rule_shows_a_failed_turn_only_with_the_sibling_field():
    sibling = SPECS["error-sibling-field-naive"]  # the forgetful agent and a client that reads the stale error
    found = _explore(sibling, "failure-after-insertion", prompts=2)
    assert "ended 'end_turn' but c1 believes 'error'" in found["OutcomeKnown"].sentence
    # the same forgetful agent under the RFD's shape: the stale error beside end_turn is an unknown field (W7)
    assert "OutcomeKnown" not in _explore(RFD._replace(stale_error=True), "failure-after-insertion", prompts=2)


def test_the_rfds_shape_drops_a_stale_error_that_the_sibling_field_keeps():
    """W7 on the wire: the codec (the RFD's shape) reads no error beside end_turn."""
    stale = encode(Update("s1", StateUpdate("idle", "end_turn", AUTH_REQUIRED)))
    assert stale["params"]["update"]["error"]["code"] == -32000  # on the wire, beside end_turn
    decoded = decode(stale)
    assert decoded.update.stop_reason == "end_turn" and decoded.update.error is None


def _idle_schemas(schema_v2):
    """The official IdleStateUpdate, and the same type with ``error`` as a sibling of a plain stopReason.

    ``unevaluatedProperties: false`` makes each behave as a decoder generated from it: a field the
    chosen variant does not declare is not read.
    """
    defs = copy.deepcopy(schema_v2.schema["$defs"])
    sibling = copy.deepcopy(defs["IdleStateUpdate"])
    sibling.pop("anyOf")
    sibling["properties"]["error"] = defs["ErrorStopReason"]["properties"]["error"]
    defs["SiblingIdle"] = sibling
    wrap = {"sessionUpdate": {"const": "state_update"}, "state": {"const": "idle"}}
    make = lambda ref: {"$schema": schema_v2.schema["$schema"], "$defs": defs, "allOf": [{"$ref": ref}],  # noqa: E731
                        "properties": wrap, "unevaluatedProperties": False}
    return schema_v2._cls(make("#/$defs/IdleStateUpdate")), schema_v2._cls(make("#/$defs/SiblingIdle"))


def test_a_schema_with_the_sibling_field_accepts_the_stale_error_the_rfds_shape_rejects(schema_v2):
    rfd_shape, sibling = _idle_schemas(schema_v2)
    stale = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn",
             "error": {"code": -32000, "message": "Authentication required"}}
    failed = dict(stale, stopReason="error")
    assert sibling.is_valid(stale) and sibling.is_valid(failed)
    assert rfd_shape.is_valid(failed) and not rfd_shape.is_valid(stale)
