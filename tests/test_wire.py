"""Tests for model.wire: schema conformance, round trips, and the RFD checklist.

The official ACP schemas (fixtures ``schema_v2``/``schema_v1`` in conftest.py)
are the oracle for every shape the codec can produce.
"""
from __future__ import annotations

import copy
import json
import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acplab.model.wire import (
    NULL, AgentMessage, AgentMessageChunk, AgentThought, AgentThoughtChunk,
    CancelRequest, CancelSession, Close, CloseResult, ErrorObject, ErrorResponse,
    GenericNotification, GenericResult, JsonNull, NewSession, NewSessionResult,
    Notice, PermissionResult, Prompt, PromptResult, PromptResultV1, RawJson,
    RequestPermission, Resume, ResumeResult, StateUpdate, ToolCallUpdate,
    UnknownUpdate, Update, UserMessage, UserMessageChunk, WireError,
    canonical_json, decode, encode, is_notification, is_request, is_response,
    method_of, rid_of,
)

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------------------
# Strategies (well-formed values only: valid field combinations)
# ---------------------------------------------------------------------------


def build(cls, *fields):
    """Like st.builds, but positional only (never draws the ``kind`` tag)."""
    return st.tuples(*fields).map(lambda t: cls(*t))


rids = st.one_of(st.integers(-(2**63), 2**63 - 1), st.text(max_size=6))
ids = st.text(max_size=6)
blocks = st.text(max_size=8)
contents = st.one_of(st.none(), st.just(NULL), st.lists(blocks, max_size=3).map(tuple))
json_scalars = st.one_of(st.integers(-1000, 1000), st.booleans(), st.text(max_size=4))
json_values = st.recursive(
    json_scalars,
    lambda kids: st.one_of(st.lists(kids, max_size=3),
                           st.dictionaries(st.text(max_size=4), kids, max_size=3)),
    max_leaves=6)
error_data = st.one_of(
    st.none(), st.text(max_size=6),
    json_values.filter(lambda v: not isinstance(v, str)).map(RawJson.of))
error_objects = build(ErrorObject, st.integers(-(2**31), 2**31 - 1),
                          st.text(max_size=8), error_data)
known_stops = ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
backgrounds = st.one_of(st.none(), st.just(NULL), st.lists(ids, max_size=3).map(tuple))


@st.composite
def state_updates(draw):
    """W5-W8: stopReason only on idle; error only beside stopReason "error"."""
    state = draw(st.sampled_from(["running", "idle", "requires_action", "_vendor_paused"]))
    stop = error = None
    if state == "idle":
        stop = draw(st.sampled_from(
            [None, *known_stops, "error", "_vendor_timeout", "future_reason"]))
        if stop == "error":
            error = draw(st.one_of(st.none(), st.just(NULL), error_objects))
    return StateUpdate(state, stop, error, draw(backgrounds))


@st.composite
def unknown_updates(draw):
    su = draw(st.sampled_from(["_vendor_ping", "future_update", "_x.y"]))
    extra = draw(st.dictionaries(st.text(max_size=4).filter(lambda k: k != "sessionUpdate"),
                                 json_values, max_size=3))
    return UnknownUpdate(su, canonical_json({**extra, "sessionUpdate": su}))


v2_updates = st.one_of(
    build(UserMessage, ids, contents),
    build(AgentMessage, ids, contents),
    build(AgentThought, ids, contents),
    build(UserMessageChunk, ids, blocks),
    build(AgentMessageChunk, ids, blocks),
    build(AgentThoughtChunk, ids, blocks),
    state_updates(),
    build(ToolCallUpdate, ids,
              st.sampled_from([None, "pending", "in_progress", "paused", "completed",
                               "failed", "cancelled", "_vendor"]),
              st.one_of(st.none(), st.text(max_size=6))),
    build(Notice, st.sampled_from(["info", "warning", "error", "_vendor"]),
              st.text(min_size=1, max_size=6), st.one_of(st.none(), st.text(max_size=6))),
    unknown_updates(),
)
permission_results = st.one_of(
    build(PermissionResult, rids, st.just("selected"), ids),
    build(PermissionResult, rids, st.just("cancelled")),
    build(PermissionResult, rids, st.just("_vendor_deferred")),
)
options = st.lists(st.tuples(ids, st.sampled_from(
    ["allow_once", "allow_always", "reject_once", "reject_always", "_vendor"])),
    min_size=1, max_size=3).map(tuple)


def _with(strategy, response_to=None, version="v2"):
    return strategy.map(lambda m: (m, response_to, version))


# (message, response_to, version) triples valid against the v2 schema.
v2_messages = st.one_of(
    _with(build(NewSession, rids, st.text(max_size=6))),
    _with(build(Prompt, rids, ids, st.lists(blocks, min_size=1, max_size=3).map(tuple))),
    _with(build(Resume, rids, ids,
                    st.sampled_from([None, "start", "_vendor_cursor", "message"]),
                    st.text(max_size=6))),
    _with(build(Close, rids, ids)),
    _with(build(CancelSession, ids)),
    _with(build(CancelRequest, rids)),
    _with(permission_results, "session/request_permission"),
    _with(build(RequestPermission, rids, ids, st.one_of(st.none(), ids),
                    st.text(max_size=6), options)),
    _with(build(NewSessionResult, rids, ids), "session/new"),
    _with(build(ResumeResult, rids), "session/resume"),
    _with(build(CloseResult, rids), "session/close"),
    _with(build(PromptResult, rids, ids), "session/prompt"),
    _with(build(ErrorResponse, st.one_of(st.none(), rids), error_objects),
          "session/prompt"),
    _with(build(GenericResult, rids, json_values.map(canonical_json))),
    _with(build(GenericNotification, st.sampled_from(["_vendor/ping", "$/progress"]),
                    st.one_of(st.none(), st.dictionaries(st.text(max_size=4), json_values,
                                                         max_size=2).map(canonical_json)))),
    _with(build(Update, ids, v2_updates)),
)

# v1-only shapes: chunks without messageId (U10) and the v1 prompt response (W14).
v1_messages = st.one_of(
    _with(build(Update, ids, st.one_of(
        build(UserMessageChunk, st.none(), blocks),
        build(AgentMessageChunk, st.none(), blocks),
        build(AgentThoughtChunk, st.none(), blocks)))),
    _with(build(PromptResultV1, rids, st.sampled_from(known_stops)),
          "session/prompt", "v1"),
)


def upd(update: dict, session_id: str = "s1") -> dict:
    return {"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": session_id, "update": update}}


def idle(**fields) -> dict:
    return upd({"sessionUpdate": "state_update", "state": "idle", **fields})


def prompt_response(result, rid=7) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def decoded_state(obj: dict) -> StateUpdate:
    msg = decode(obj)
    assert isinstance(msg, Update) and isinstance(msg.update, StateUpdate)
    return msg.update


AUTH = {"code": -32000, "message": "Authentication required"}

# ---------------------------------------------------------------------------
# Property tests: schema conformance, round trips, hashability
# ---------------------------------------------------------------------------


@SETTINGS
@given(v2_messages)
def test_every_v2_message_validates_against_v2_schema(schema_v2, triple):
    msg, response_to, _ = triple
    schema_v2.validate(encode(msg), response_to)


@SETTINGS
@given(v1_messages)
def test_v1_shapes_validate_against_v1_schema(schema_v1, triple):
    msg, response_to, _ = triple
    schema_v1.validate(encode(msg), response_to)


@SETTINGS
@given(st.one_of(v2_messages, v1_messages,
                 _with(build(PromptResult, rids, st.none()), "session/prompt", "v2-draft")))
def test_round_trip(triple):
    msg, response_to, version = triple
    obj = encode(msg)
    # the encoding is plain JSON: it survives serialisation unchanged
    assert json.loads(json.dumps(obj)) == obj
    assert decode(obj, response_to=response_to, version=version) == msg


@SETTINGS
@given(st.one_of(v2_messages, v1_messages))
def test_values_are_hashable_and_picklable(triple):
    msg = triple[0]
    assert hash(msg) == hash(copy.deepcopy(msg))
    assert pickle.loads(pickle.dumps(msg)) == msg


def test_classes_with_equal_fields_never_compare_equal():
    assert ResumeResult(1) != CloseResult(1)
    assert UserMessage("m") != AgentMessage("m") != AgentThought("m")
    assert UserMessageChunk("m", "x") != AgentMessageChunk("m", "x")
    assert CancelRequest("s") != CancelSession("s")
    assert len({ResumeResult(1), CloseResult(1), ResumeResult(1)}) == 2


def test_null_sentinel():
    assert JsonNull() is NULL and repr(NULL) == "NULL"
    assert copy.deepcopy(NULL) is NULL and pickle.loads(pickle.dumps(NULL)) is NULL
    assert hash(NULL) == hash(JsonNull())
    assert UserMessage("m", NULL) != UserMessage("m", None) != UserMessage("m", ())


def test_classification_helpers():
    assert method_of(Prompt(1, "s", ("hi",))) == "session/prompt"
    assert method_of(Update("s", Notice("info", "t"))) == "session/update"
    assert method_of(CancelRequest(3)) == "$/cancel_request"
    assert method_of(PromptResult(1, "m")) is None
    assert is_request(RequestPermission(1, "s", "tc")) and not is_request(CancelSession("s"))
    assert is_response(ErrorResponse(1, ErrorObject(-32603, "x"))) and is_response(GenericResult(1, "{}"))
    assert is_notification(CancelSession("s")) and not is_notification(Close(1, "s"))
    assert rid_of(Close(9, "s")) == 9 and rid_of(PromptResult("a", "m")) == "a"
    assert rid_of(Update("s", Notice("info", "t"))) is None


def test_encode_exact_shapes():
    assert encode(Prompt(1, "s1", ("hi",))) == {
        "jsonrpc": "2.0", "id": 1, "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}}
    assert encode(Resume(2, "s1", "start"))["params"] == {
        "sessionId": "s1", "cwd": "/work", "replayFrom": {"type": "start"}}
    assert "replayFrom" not in encode(Resume(2, "s1"))["params"]
    assert encode(PermissionResult(4, "cancelled")) == {
        "jsonrpc": "2.0", "id": 4, "result": {"outcome": {"outcome": "cancelled"}}}
    assert encode(Update("s1", StateUpdate("running"))) == upd(
        {"sessionUpdate": "state_update", "state": "running"})
    assert encode(Update("s1", UserMessage("m", NULL)))["params"]["update"] == {
        "sessionUpdate": "user_message", "messageId": "m", "content": None}
    with pytest.raises(TypeError):
        encode(("not", "a", "message"))


# ---------------------------------------------------------------------------
# RFD checklist: prompt response ID (P4 / W1)
# ---------------------------------------------------------------------------


def test_prompt_response_valid_message_id(schema_v2):
    obj = prompt_response({"messageId": "msg_1"})
    schema_v2.validate(obj, "session/prompt")
    assert decode(obj, response_to="session/prompt") == PromptResult(7, "msg_1")


def test_prompt_response_missing_message_id_rejected(schema_v2):
    obj = prompt_response({})
    with pytest.raises(WireError, match=r"session/prompt response id 7: messageId is missing \(P4/W1\)"):
        decode(obj, response_to="session/prompt")
    assert not schema_v2.is_valid(obj, "session/prompt")


def test_prompt_response_null_message_id_rejected(schema_v2):
    obj = prompt_response({"messageId": None})
    with pytest.raises(WireError, match="messageId is null"):
        decode(obj, response_to="session/prompt")
    assert not schema_v2.is_valid(obj, "session/prompt")


@pytest.mark.parametrize("bad", [42, 1.5, True, {}, [], ["m"]])
def test_prompt_response_non_string_message_id_rejected(schema_v2, bad):
    obj = prompt_response({"messageId": bad})
    with pytest.raises(WireError, match="messageId is not a string"):
        decode(obj, response_to="session/prompt")
    assert not schema_v2.is_valid(obj, "session/prompt")


def test_draft_empty_prompt_result_is_a_documented_difference(schema_v2):
    """D1: the older v2 draft answered ``{}``. That is invalid v2 for
    ``$defs.PromptResponse``, although the root schema alone accepts it (the
    empty object also matches ResumeSessionResponse/ExtResponse)."""
    obj = encode(PromptResult(7, None))
    assert obj == prompt_response({})
    assert not schema_v2.is_valid(obj, "session/prompt")
    assert not list(schema_v2.root.iter_errors(obj))  # root-only check is vacuous here
    assert decode(obj, response_to="session/prompt", version="v2-draft") == PromptResult(7, None)


def test_v1_prompt_response(schema_v1, schema_v2):
    obj = prompt_response({"stopReason": "end_turn"})
    schema_v1.validate(obj, "session/prompt")
    assert not schema_v2.is_valid(obj, "session/prompt")
    assert decode(obj, response_to="session/prompt", version="v1") == PromptResultV1(7, "end_turn")
    with pytest.raises(WireError, match="stopReason is missing"):
        decode(prompt_response({}), response_to="session/prompt", version="v1")
    with pytest.raises(WireError, match="messageId is missing"):
        decode(obj, response_to="session/prompt")


def test_v1_chunk_without_message_id_is_v1_only(schema_v1, schema_v2):
    """U10: v2 chunks require messageId; the decoder tolerates its absence."""
    obj = encode(Update("s1", AgentMessageChunk(None, "hi")))
    schema_v1.validate(obj)
    assert not schema_v2.is_valid(obj)
    assert decode(obj) == Update("s1", AgentMessageChunk(None, "hi"))


# ---------------------------------------------------------------------------
# RFD checklist: error stop reason (E5 / W6 / W7 / W8)
# ---------------------------------------------------------------------------


def test_idle_with_error(schema_v2):
    obj = idle(stopReason="error", error=AUTH)
    schema_v2.validate(obj)
    assert decoded_state(obj) == StateUpdate(
        "idle", "error", ErrorObject(-32000, "Authentication required"))


def test_idle_with_error_data(schema_v2):
    obj = idle(stopReason="error", error={**AUTH, "data": {"retryAfter": 3}})
    schema_v2.validate(obj)
    assert decoded_state(obj).error == ErrorObject(
        -32000, "Authentication required", RawJson('{"retryAfter":3}'))


def test_idle_error_without_error_object(schema_v2):
    obj = idle(stopReason="error")
    schema_v2.validate(obj)
    assert decoded_state(obj) == StateUpdate("idle", "error", None)


def test_idle_error_with_null_error(schema_v2):
    obj = idle(stopReason="error", error=None)
    schema_v2.validate(obj)
    assert decoded_state(obj) == StateUpdate("idle", "error", NULL)
    assert encode(Update("s1", StateUpdate("idle", "error", NULL))) == obj


@pytest.mark.parametrize("stop", ["end_turn", "cancelled", "_vendor_timeout", None])
def test_error_beside_other_stop_reason_is_unknown_field(schema_v2, stop):
    fields = {"error": AUTH} if stop is None else {"stopReason": stop, "error": AUTH}
    obj = idle(**fields)
    schema_v2.validate(obj)  # an unknown field, not a validation failure
    assert decoded_state(obj) == StateUpdate("idle", stop, None)


@pytest.mark.parametrize("stop", ["_vendor_timeout", "future_reason"])
def test_unknown_stop_reason_tolerated(schema_v2, stop):
    obj = idle(stopReason=stop)
    schema_v2.validate(obj)
    assert decoded_state(obj) == StateUpdate("idle", stop)


def test_omitted_stop_reason_tolerated(schema_v2):
    obj = idle()
    schema_v2.validate(obj)
    assert decoded_state(obj) == StateUpdate("idle")


def test_null_stop_reason_tolerated(schema_v2):
    obj = idle(stopReason=None)
    schema_v2.validate(obj)
    assert decoded_state(obj) == StateUpdate("idle")


@pytest.mark.parametrize("bad", [42, {}, ["end_turn"], True])
def test_malformed_stop_reason_tolerated(schema_v2, bad):
    """W6: read as "not reported". The schema itself rejects the value; the
    tolerance comes from ``x-deserialize-default-on-error``."""
    obj = idle(stopReason=bad)
    assert not schema_v2.is_valid(obj)
    assert decoded_state(obj) == StateUpdate("idle")


@pytest.mark.parametrize("bad", ["boom", 42, [], {}, {"code": -32000},
                                 {"message": "m"}, {"code": "-32000", "message": "m"},
                                 {"code": 1.5, "message": "m"}, {"code": True, "message": "m"},
                                 {"code": -32000, "message": None}])
def test_malformed_error_read_as_absent(bad):
    assert decoded_state(idle(stopReason="error", error=bad)) == StateUpdate("idle", "error", None)


@pytest.mark.parametrize("state", ["running", "requires_action", "_vendor_state"])
def test_stop_reason_on_non_idle_state_ignored(schema_v2, state):
    obj = upd({"sessionUpdate": "state_update", "state": state,
               "stopReason": "error", "error": AUTH})
    schema_v2.validate(obj)
    assert decoded_state(obj) == StateUpdate(state)


def test_background_snapshot_decoding(schema_v2):
    obj = upd({"sessionUpdate": "state_update", "state": "running", "background": [
        {"type": "tool_call", "toolCallId": "tc1"}, {"type": "terminal", "terminalId": "t1"},
        {"type": "_vendor_job"}]})
    schema_v2.validate(obj)
    assert decoded_state(obj) == StateUpdate("running", background=("tc1", "[terminal]", "[_vendor_job]"))
    assert decoded_state(idle(background=None)).background is NULL
    assert decoded_state(idle(background=[])).background == ()
    # G1: a malformed list counts as not reported
    for bad in ["x", [{"type": "tool_call"}], [42]]:
        assert decoded_state(idle(background=bad)).background is None


# ---------------------------------------------------------------------------
# Error responses (W9) and framing
# ---------------------------------------------------------------------------


def test_error_response_decodes(schema_v2):
    obj = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32800, "message": "Request cancelled"}}
    schema_v2.validate(obj)
    assert decode(obj, response_to="session/prompt") == ErrorResponse(3, ErrorObject(-32800, "Request cancelled"))
    assert decode(obj) == ErrorResponse(3, ErrorObject(-32800, "Request cancelled"))


@pytest.mark.parametrize("bad", [{"message": "m"}, {"code": "1", "message": "m"},
                                 {"code": 1.5, "message": "m"}, {"code": False, "message": "m"}])
def test_error_response_without_int_code_rejected(schema_v2, bad):
    obj = {"jsonrpc": "2.0", "id": 3, "error": bad}
    with pytest.raises(WireError, match=r"error\.code .*\(W9\)"):
        decode(obj, response_to="session/prompt")


@pytest.mark.parametrize("bad", [{"code": -32603}, {"code": -32603, "message": None},
                                 {"code": -32603, "message": 5}])
def test_error_response_without_str_message_rejected(schema_v2, bad):
    obj = {"jsonrpc": "2.0", "id": 3, "error": bad}
    assert not schema_v2.is_valid(obj)
    with pytest.raises(WireError, match=r"error\.message .*\(W9\)"):
        decode(obj, response_to="session/prompt")


def test_error_response_error_not_an_object_rejected():
    with pytest.raises(WireError, match="error is not an object"):
        decode({"jsonrpc": "2.0", "id": 3, "error": "boom"})


@pytest.mark.parametrize("obj,match", [
    ([1, 2], "not a JSON object"),
    ("x", "not a JSON object"),
    ({"id": 1, "method": "session/close", "params": {"sessionId": "s"}}, "jsonrpc"),
    ({"jsonrpc": "1.0", "id": 1, "result": {}}, "jsonrpc"),
    ({"jsonrpc": "2.0", "id": 1, "method": "session/frobnicate", "params": {}}, "unknown request method"),
    ({"jsonrpc": "2.0", "id": None, "method": "session/close", "params": {"sessionId": "s"}}, "id must be"),
    ({"jsonrpc": "2.0", "id": 1}, "neither"),
    ({"jsonrpc": "2.0", "result": {"messageId": "m"}}, "id is missing"),
    ({"jsonrpc": "2.0", "id": 1.5, "result": {"messageId": "m"}}, "id must be"),
    ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": AUTH}, "both"),
    ({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s"}}, "prompt is missing"),
    ({"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
      "params": {"sessionId": "s", "prompt": [{"text": "no type"}]}}, "malformed content block"),
    (upd({"sessionUpdate": "user_message"}), "messageId is missing"),
    (upd({"sessionUpdate": "agent_message_chunk", "messageId": "m"}), "content block"),
    (upd({"sessionUpdate": "state_update"}), "state is missing"),
])
def test_invalid_input_rejected(obj, match):
    with pytest.raises(WireError, match=match):
        decode(obj, response_to="session/prompt")


def test_unknown_version_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown version"):
        decode(prompt_response({"messageId": "m"}), response_to="session/prompt", version="v3")


def test_unknown_notification_kept_generic():
    obj = {"jsonrpc": "2.0", "method": "$/progress", "params": {"b": 1, "a": 2}}
    assert decode(obj) == GenericNotification("$/progress", '{"a":2,"b":1}')


def test_response_without_known_request_is_generic():
    obj = prompt_response({"messageId": "m", "x": [1]})
    assert decode(obj) == GenericResult(7, '{"messageId":"m","x":[1]}')
    assert decode(obj, response_to="_vendor/method") == GenericResult(7, '{"messageId":"m","x":[1]}')


# ---------------------------------------------------------------------------
# Message updates (W3, W12, U4-U10)
# ---------------------------------------------------------------------------


def test_user_message_content_patch_shapes():
    base = {"sessionUpdate": "user_message", "messageId": "m"}
    assert decode(upd(base)).update == UserMessage("m", None)
    assert decode(upd({**base, "content": None})).update == UserMessage("m", NULL)
    assert decode(upd({**base, "content": []})).update == UserMessage("m", ())


@pytest.mark.parametrize("bad", ["oops", 42, {"type": "text", "text": "x"}, True])
def test_malformed_user_message_content_falls_back_to_default(bad):
    """W3: x-deserialize-default-on-error -> treated as omitted."""
    obj = upd({"sessionUpdate": "user_message", "messageId": "m", "content": bad})
    assert decode(obj).update == UserMessage("m", None)


def test_invalid_content_items_skipped(schema_v2):
    obj = upd({"sessionUpdate": "user_message", "messageId": "m", "content": [
        {"type": "text", "text": "a"}, 42, {"type": "text"}, {"no": "type"},
        {"type": "image", "mimeType": "image/png", "data": ""}, {"type": "text", "text": "b"}]})
    assert decode(obj).update == UserMessage("m", ("a", "[image]", "b"))


def test_unknown_session_update_kept_raw(schema_v2):
    u = {"sessionUpdate": "_vendor_ping", "z": 1, "a": {"b": None}}
    obj = upd(u)
    schema_v2.validate(obj)
    got = decode(obj).update
    assert got == UnknownUpdate("_vendor_ping", '{"a":{"b":null},"sessionUpdate":"_vendor_ping","z":1}')
    assert encode(Update("s1", got)) == obj


def test_known_but_unmodelled_update_is_unknown():
    u = {"sessionUpdate": "plan_update", "entries": []}
    assert decode(upd(u)).update == UnknownUpdate("plan_update", canonical_json(u))


def test_unknown_state_kept(schema_v2):
    obj = upd({"sessionUpdate": "state_update", "state": "_vendor_compacting"})
    schema_v2.validate(obj)
    assert decoded_state(obj) == StateUpdate("_vendor_compacting")


def test_request_permission_validates_with_tool_call_subject(schema_v2):
    msg = RequestPermission(5, "s1", "tc1")
    obj = encode(msg)
    schema_v2.validate(obj)
    assert obj["params"]["subject"] == {"type": "tool_call", "toolCall": {"toolCallId": "tc1"}}
    assert decode(obj) == msg


def test_resume_with_malformed_cursor_rejected():
    obj = encode(Resume(1, "s1", "start"))
    obj["params"]["replayFrom"] = "start"
    with pytest.raises(WireError, match=r"replayFrom .*\(R2\)"):
        decode(obj)
    obj["params"]["replayFrom"] = None
    assert decode(obj) == Resume(1, "s1", None)
