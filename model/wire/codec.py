"""JSON-RPC codec for the ACP (Agent Client Protocol) v2 prompt lifecycle: values <-> wire objects.

Abstract, immutable, hashable message values (``typing.NamedTuple``) on one
side; the exact JSON-RPC 2.0 objects that cross the wire on the other.

Sources (rule IDs refer to ``shared/RULES.md``):

* ACP v2 schema, ``schema/v2/schema.json`` (SDK 2.4.0) -- the oracle for the
  shapes (W1-W12, E5, N5, G1);
* ACP v1 schema, ``schema/v1/schema.json`` -- v1 prompt response and chunks
  (W14, U10);
* the "v2 Prompt Lifecycle" RFD (seed), section "Report failures after
  insertion" and its implementation checklist (W6, W7, E5).

Conventions:

* Every message class ends with ``kind: str = "<tag>"`` so values of different
  classes never compare equal (NamedTuples compare as plain tuples).
* A content block is abstracted as ``str`` (a text block). Decoding a non-text
  block yields ``"[<type>]"``.
* ``None`` in a field means "omitted"; the singleton ``NULL`` means JSON ``null``
  (needed for patch fields, U5 / E5 / G1).
* ``encode`` emits exactly what the value holds; choosing valid combinations is
  the model's job. ``decode`` is tolerant where the protocol says receivers must
  be (W3, W6, W7, W8, W12, D4) and raises :class:`WireError` otherwise.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Optional, Union

from .values import (  # the value classes the codec reads and writes
    canonical_json,
    VERSIONS,
    WireError,
    JsonNull,
    NULL,
    RawJson,
    RequestId,
    Content,
    ErrorObject,
    NewSession,
    Prompt,
    Resume,
    Load,
    LoadResult,
    Close,
    CancelSession,
    CancelRequest,
    PermissionResult,
    RequestPermission,
    NewSessionResult,
    ResumeResult,
    CloseResult,
    PromptResult,
    PromptResultV1,
    ErrorResponse,
    GenericResult,
    GenericNotification,
    UserMessage,
    AgentMessage,
    AgentThought,
    UserMessageChunk,
    AgentMessageChunk,
    AgentThoughtChunk,
    StateUpdate,
    ToolCallUpdate,
    Notice,
    UnknownUpdate,
    SessionUpdate,
    Update,
)
# --------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------
_REQUEST_METHODS: "dict[type, str]" = {
    NewSession: "session/new", Prompt: "session/prompt",
    Resume: "session/resume", Close: "session/close", Load: "session/load",
    RequestPermission: "session/request_permission",
}
#: the request methods the codec models (others: initialize, fs/*, session/load... are not decoded)
MODELLED_REQUESTS = frozenset(_REQUEST_METHODS.values())
_NOTIFICATION_METHODS: "dict[type, str]" = {
    CancelSession: "session/cancel", CancelRequest: "$/cancel_request",
    Update: "session/update",
}
_RESPONSE_TO: "dict[type, Optional[str]]" = {
    NewSessionResult: "session/new", ResumeResult: "session/resume", LoadResult: "session/load",
    CloseResult: "session/close", PromptResult: "session/prompt",
    PromptResultV1: "session/prompt",
    PermissionResult: "session/request_permission",
    ErrorResponse: None, GenericResult: None,
}


def method_of(msg: Any) -> Optional[str]:
    """JSON-RPC method of a request/notification value, None for responses."""
    if isinstance(msg, GenericNotification):
        return msg.method
    return _REQUEST_METHODS.get(type(msg)) or _NOTIFICATION_METHODS.get(type(msg))


def is_request(msg: Any) -> bool:
    return type(msg) in _REQUEST_METHODS


def is_response(msg: Any) -> bool:
    return type(msg) in _RESPONSE_TO


def is_notification(msg: Any) -> bool:
    return type(msg) in _NOTIFICATION_METHODS or isinstance(msg, GenericNotification)


def rid_of(msg: Any) -> Optional[RequestId]:
    """The JSON-RPC id of a request or response (for CancelRequest: the id it
    names); None for notifications."""
    return getattr(msg, "rid", None)


# --------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------
def _req(rid: RequestId, method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _note(method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def _res(rid: RequestId, result: Any) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _enc_block(text: str) -> dict:
    return {"type": "text", "text": text}


def _enc_null(value: Any, fn: Callable[[Any], Any]) -> Any:
    return None if value is NULL else fn(value)


def _enc_error(err: ErrorObject) -> dict:
    out: dict = {"code": err.code, "message": err.message}
    if err.data is not None:
        out["data"] = err.data.value() if isinstance(err.data, RawJson) else err.data
    return out


def _tag(u: Any) -> str:
    """The ``sessionUpdate`` name: the class's default kind tag."""
    return type(u)._field_defaults["kind"]


def _enc_whole(u: Any) -> dict:
    out = {"sessionUpdate": _tag(u), "messageId": u.message_id}
    if u.content is not None:
        out["content"] = _enc_null(u.content, lambda c: [_enc_block(b) for b in c])
    if getattr(u, "prompt_id", None) is not None:
        out["_meta"] = {"promptId": u.prompt_id}
    return out


def _prompt_id(d: dict) -> Optional[str]:
    """A variant's correlation token from ``_meta.promptId`` (None if absent or malformed)."""
    meta = d.get("_meta")
    value = meta.get("promptId") if isinstance(meta, dict) else None
    return value if isinstance(value, str) else None


def _enc_chunk(u: Any) -> dict:
    out: dict = {"sessionUpdate": _tag(u)}
    if u.message_id is not None:
        out["messageId"] = u.message_id
    out["content"] = _enc_block(u.block)
    return out


def _enc_state(u: StateUpdate) -> dict:
    """W5-W8/E5/G1: emits exactly the fields present in the value."""
    out: dict = {"sessionUpdate": "state_update", "state": u.state}
    if u.stop_reason is not None:
        out["stopReason"] = u.stop_reason
    if u.error is not None:
        out["error"] = _enc_null(u.error, _enc_error)
    if u.background is not None:
        out["background"] = _enc_null(
            u.background, lambda bg: [{"type": "tool_call", "toolCallId": t} for t in bg])
    return out


def _enc_tool_call(u: ToolCallUpdate) -> dict:
    out = {"sessionUpdate": "tool_call_update", "toolCallId": u.tool_call_id}
    if u.status is not None:
        out["status"] = u.status
    if u.title is not None:
        out["title"] = u.title
    return out


def _enc_notice(u: Notice) -> dict:
    out = {"sessionUpdate": "notice", "severity": u.severity, "title": u.title}
    if u.description is not None:
        out["description"] = u.description
    return out


def _enc_unknown(u: UnknownUpdate) -> dict:
    out = json.loads(u.raw_json)
    out["sessionUpdate"] = u.session_update
    return out


_UPDATE_ENCODERS: "dict[type, Callable[[Any], dict]]" = {
    UserMessage: _enc_whole, AgentMessage: _enc_whole, AgentThought: _enc_whole,
    UserMessageChunk: _enc_chunk, AgentMessageChunk: _enc_chunk,
    AgentThoughtChunk: _enc_chunk, StateUpdate: _enc_state,
    ToolCallUpdate: _enc_tool_call, Notice: _enc_notice, UnknownUpdate: _enc_unknown,
}


def _enc_resume(m: Resume) -> dict:
    params: dict = {"sessionId": m.session_id, "cwd": m.cwd}
    if m.replay_from is not None:
        params["replayFrom"] = {"type": m.replay_from}
    return _req(m.rid, "session/resume", params)


def _enc_permission_request(m: RequestPermission) -> dict:
    params: dict = {"sessionId": m.session_id, "title": m.title,
                    "options": [{"optionId": o, "name": o, "kind": k} for o, k in m.options]}
    if m.tool_call_id is not None:
        params["subject"] = {"type": "tool_call", "toolCall": {"toolCallId": m.tool_call_id}}
    return _req(m.rid, "session/request_permission", params)


def _enc_permission_result(m: PermissionResult) -> dict:
    outcome: dict = {"outcome": m.outcome}
    if m.option_id is not None:
        outcome["optionId"] = m.option_id
    return _res(m.rid, {"outcome": outcome})


def _enc_generic_note(m: GenericNotification) -> dict:
    out: dict = {"jsonrpc": "2.0", "method": m.method}
    if m.raw_json is not None:
        out["params"] = json.loads(m.raw_json)
    return out


_ENCODERS: "dict[type, Callable[[Any], dict]]" = {
    NewSession: lambda m: _req(m.rid, "session/new", {"cwd": m.cwd, "mcpServers": []}),
    Prompt: lambda m: _req(m.rid, "session/prompt", {
        "sessionId": m.session_id, "prompt": [_enc_block(b) for b in m.content],
        **({"_meta": {"promptId": m.prompt_id}} if m.prompt_id is not None else {})}),
    Resume: _enc_resume,
    Load: lambda m: _req(m.rid, "session/load", {"sessionId": m.session_id, "cwd": m.cwd, "mcpServers": []}),
    Close: lambda m: _req(m.rid, "session/close", {"sessionId": m.session_id}),
    CancelSession: lambda m: _note("session/cancel", {"sessionId": m.session_id}),
    CancelRequest: lambda m: _note("$/cancel_request", {"requestId": m.rid}),
    PermissionResult: _enc_permission_result,
    RequestPermission: _enc_permission_request,
    NewSessionResult: lambda m: _res(m.rid, {"sessionId": m.session_id}),
    ResumeResult: lambda m: _res(m.rid, {}),
    LoadResult: lambda m: _res(m.rid, {}),
    CloseResult: lambda m: _res(m.rid, {}),
    PromptResult: lambda m: _res(
        m.rid, {} if m.message_id is None else {"messageId": m.message_id}),
    PromptResultV1: lambda m: _res(m.rid, {"stopReason": m.stop_reason}),
    ErrorResponse: lambda m: {"jsonrpc": "2.0", "id": m.rid, "error": _enc_error(m.error)},
    GenericResult: lambda m: _res(m.rid, json.loads(m.raw_json)),
    GenericNotification: _enc_generic_note,
    Update: lambda m: _note("session/update", {
        "sessionId": m.session_id, "update": _UPDATE_ENCODERS[type(m.update)](m.update)}),
}


def encode(msg: Any) -> dict:
    """The exact JSON-RPC object for ``msg`` (no version flag: v1 shapes are
    their own values, e.g. :class:`PromptResultV1`, chunks without an id)."""
    try:
        fn = _ENCODERS[type(msg)]
    except KeyError:
        raise TypeError(f"encode: not a wire message: {msg!r}") from None
    return fn(msg)


# --------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------
def _what(d: dict, key: str) -> str:
    if key not in d:
        return "missing"
    if d[key] is None:
        return "null"
    return f"not a string (got {type(d[key]).__name__})"


def _str(d: dict, key: str, where: str, rule: str = "") -> str:
    v = d.get(key)
    if isinstance(v, str):
        return v
    tag = f" ({rule})" if rule else ""
    raise WireError(f"{where}: {key} is {_what(d, key)}{tag}")


def _opt_str(d: dict, key: str) -> Optional[str]:
    """Optional string field with default-on-error: non-strings read as None."""
    v = d.get(key)
    return v if isinstance(v, str) else None


def _obj(v: Any, where: str) -> dict:
    if not isinstance(v, dict):
        raise WireError(f"{where}: expected a JSON object, got {type(v).__name__}")
    return v


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _rid(v: Any, where: str) -> RequestId:
    if _is_int(v) or isinstance(v, str):
        return v
    raise WireError(f"{where}: id must be an integer or a string (W11), got {v!r}")


def _dec_block(b: Any) -> Optional[str]:
    """A content block as str; None if the block is malformed."""
    if not isinstance(b, dict) or not isinstance(b.get("type"), str):
        return None
    if b["type"] == "text":
        t = b.get("text")
        return t if isinstance(t, str) else None
    return "[" + b["type"] + "]"


def _error_problem(e: Any) -> Optional[str]:
    """Why ``e`` is not a JSON-RPC error object (W9), or None if it is."""
    if not isinstance(e, dict):
        return f"error is not an object (got {type(e).__name__})"
    if not _is_int(e.get("code")):
        return "error.code is missing or not an integer"
    if not isinstance(e.get("message"), str):
        return f"error.message is {_what(e, 'message')}"
    return None


def _dec_error(e: Any) -> Optional[ErrorObject]:
    """W9: a JSON-RPC error object, or None when it is not one."""
    return None if _error_problem(e) is not None else _error_object(e)


def _error_object(e: dict) -> ErrorObject:
    """An error object :func:`_error_problem` found nothing wrong with."""
    data = e.get("data")
    if data is not None and not isinstance(data, str):
        data = RawJson.of(data)
    return ErrorObject(e["code"], e["message"], data)


def _dec_content(u: dict) -> Content:
    """W3/U5: omitted -> None, null -> NULL; a malformed value falls back to
    the default (omitted); invalid items are skipped."""
    if "content" not in u:
        return None
    c = u["content"]
    if c is None:
        return NULL
    if not isinstance(c, list):
        return None
    return tuple(s for s in map(_dec_block, c) if s is not None)


def _dec_background(bg: Any) -> Union[None, JsonNull, "tuple[str, ...]"]:
    """G1: omitted -> None, null -> NULL, malformed list -> None (not
    reported). tool_call items give their id; other items ``"[<type>]"``."""
    if bg is None:
        return NULL
    if not isinstance(bg, list):
        return None
    out = []
    for item in bg:
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            return None
        t = item["type"]
        if t == "tool_call":
            if not isinstance(item.get("toolCallId"), str):
                return None
            out.append(item["toolCallId"])
        elif t == "terminal" and not isinstance(item.get("terminalId"), str):
            return None
        else:
            out.append("[" + t + "]")
    return tuple(out)


def _dec_state(u: dict, where: str) -> StateUpdate:
    """W6: omitted/null/malformed stopReason -> None, unknown strings kept.
    W8: stopReason only on idle. W7/E5: error only beside stopReason "error";
    null -> NULL; malformed -> absent."""
    state = _str(u, "state", where, "W5")
    stop = error = None
    if state == "idle":
        stop = _opt_str(u, "stopReason")
        if stop == "error" and "error" in u:
            error = NULL if u["error"] is None else _dec_error(u["error"])
    background = _dec_background(u["background"]) if "background" in u else None
    return StateUpdate(state, stop, error, background)


_WHOLE = {"user_message": UserMessage, "agent_message": AgentMessage,
          "agent_thought": AgentThought}
_CHUNK: dict[str, Callable[[Optional[str], str], SessionUpdate]] = {"user_message_chunk": UserMessageChunk,
          "agent_message_chunk": AgentMessageChunk,
          "agent_thought_chunk": AgentThoughtChunk}


def _dec_update(u: Any, where: str) -> SessionUpdate:
    u = _obj(u, where + " update")
    su = _str(u, "sessionUpdate", where)
    where = f"{where} {su}"
    if su == "user_message":
        return UserMessage(_str(u, "messageId", where, "U4"), _dec_content(u), _prompt_id(u))
    if su in _WHOLE:
        return _WHOLE[su](_str(u, "messageId", where, "U4"), _dec_content(u))
    if su in _CHUNK:
        # U10: v2 requires messageId; tolerated as None (the v1 shape).
        block = _dec_block(u.get("content"))
        if block is None:
            raise WireError(f"{where}: content is not a content block (W4)")
        return _CHUNK[su](_opt_str(u, "messageId"), block)
    if su == "state_update":
        return _dec_state(u, where)
    if su == "tool_call_update":
        return ToolCallUpdate(_str(u, "toolCallId", where),
                              _opt_str(u, "status"), _opt_str(u, "title"))
    if su == "notice":
        return Notice(_str(u, "severity", where, "N5"), _str(u, "title", where, "N5"),
                      _opt_str(u, "description"))
    return UnknownUpdate(su, canonical_json(u))  # W12


def _dec_prompt(rid: RequestId, p: dict, where: str) -> Prompt:
    blocks = p.get("prompt")
    if not isinstance(blocks, list):
        raise WireError(f"{where}: prompt is {_what(p, 'prompt')} (W2)")
    decoded = tuple(map(_dec_block, blocks))
    if None in decoded:
        raise WireError(f"{where}: prompt contains a malformed content block (W2)")
    content = tuple(b for b in decoded if b is not None)
    return Prompt(rid, _str(p, "sessionId", where), content, _prompt_id(p))


def _dec_resume(rid: RequestId, p: dict, where: str) -> Resume:
    rf = p.get("replayFrom")
    if rf is not None:
        if not isinstance(rf, dict) or not isinstance(rf.get("type"), str):
            raise WireError(f"{where}: replayFrom must be an object with a string type (R2)")
        rf = rf["type"]
    return Resume(rid, _str(p, "sessionId", where), rf, _str(p, "cwd", where))


def _dec_permission_request(rid: RequestId, p: dict, where: str) -> RequestPermission:
    opts = p.get("options")
    if not isinstance(opts, list) or not opts:
        raise WireError(f"{where}: options must be a non-empty array")
    options = tuple((_str(_obj(o, where + " option"), "optionId", where),
                     _str(o, "kind", where)) for o in opts)
    subject, tool_call_id = p.get("subject"), None
    if isinstance(subject, dict) and subject.get("type") == "tool_call":
        tool_call_id = _str(_obj(subject.get("toolCall"), where + " subject.toolCall"),
                            "toolCallId", where + " subject.toolCall")
    return RequestPermission(rid, _str(p, "sessionId", where), tool_call_id,
                             _str(p, "title", where), options)


_REQUEST_DECODERS: "dict[str, Callable[[RequestId, dict, str], Any]]" = {
    "session/new": lambda rid, p, w: NewSession(rid, _str(p, "cwd", w)),
    "session/prompt": _dec_prompt,
    "session/resume": _dec_resume,
    "session/load": lambda rid, p, w: Load(rid, _str(p, "sessionId", w), _str(p, "cwd", w)),
    "session/close": lambda rid, p, w: Close(rid, _str(p, "sessionId", w)),
    "session/request_permission": _dec_permission_request,
}

_NOTIFICATION_DECODERS: "dict[str, Callable[[dict, str], Any]]" = {
    "session/cancel": lambda p, w: CancelSession(_str(p, "sessionId", w)),
    "$/cancel_request": lambda p, w: CancelRequest(_rid(p.get("requestId"), w + " requestId")),
    "session/update": lambda p, w: Update(_str(p, "sessionId", w),
                                          _dec_update(p.get("update"), w)),
}


def _dec_prompt_result(rid: RequestId, r: dict, where: str, version: str) -> Any:
    """P4/W1 (v2): messageId required, non-null string. D1 (v2-draft): ``{}``
    accepted. W14 (v1): stopReason required."""
    if version == "v1":
        return PromptResultV1(rid, _str(r, "stopReason", where, "W14"))
    if version == "v2-draft":
        return PromptResult(rid, _opt_str(r, "messageId"))
    return PromptResult(rid, _str(r, "messageId", where, "P4/W1"))


def _dec_permission_result(rid: RequestId, r: dict, where: str, version: str) -> Any:
    o = _obj(r.get("outcome"), where + " outcome")
    outcome = _str(o, "outcome", where + " outcome")
    option = _str(o, "optionId", where + " outcome") if outcome == "selected" else None
    return PermissionResult(rid, outcome, option)


_RESULT_DECODERS: "dict[str, Callable[[RequestId, dict, str, str], Any]]" = {
    "session/new": lambda rid, r, w, v: NewSessionResult(rid, _str(r, "sessionId", w)),
    "session/resume": lambda rid, r, w, v: ResumeResult(rid),
    "session/load": lambda rid, r, w, v: LoadResult(rid),
    "session/close": lambda rid, r, w, v: CloseResult(rid),
    "session/prompt": _dec_prompt_result,
    "session/request_permission": _dec_permission_result,
}


def _dec_response(obj: dict, response_to: Optional[str], version: str) -> Any:
    label = f"{response_to} response" if response_to else "response"
    if "error" in obj:
        rid = obj.get("id")
        if rid is not None:
            rid = _rid(rid, label)
        where = f"{label} id {rid!r}"
        if "result" in obj:
            raise WireError(f"{where}: has both result and error")
        problem = _error_problem(obj["error"])
        if problem:
            raise WireError(f"{where}: {problem} (W9)")
        return ErrorResponse(rid, _error_object(obj["error"]))
    if "result" not in obj:
        raise WireError(f"{label}: has neither method, result nor error")
    if "id" not in obj:
        raise WireError(f"{label}: id is missing (W11)")
    rid = _rid(obj["id"], label)
    where = f"{label} id {rid!r}"
    dec = _RESULT_DECODERS.get(response_to) if response_to else None
    if dec is None:
        return GenericResult(rid, canonical_json(obj["result"]))
    return dec(rid, _obj(obj["result"], where + " result"), where, version)


def decode(obj: Any, *, response_to: Optional[str] = None, version: str = "v2") -> Any:
    """Parse one JSON-RPC message (already ``json.loads``-ed) into a value.

    Requests and notifications are identified by method; a response by
    ``response_to`` (the method of the request it answers, tracked by the
    caller). ``version`` ("v2", "v2-draft" or "v1") only affects the
    ``session/prompt`` response (P4/W1, D1, W14). Raises :class:`WireError`.
    """
    if version not in VERSIONS:
        raise ValueError(f"decode: unknown version {version!r}, expected one of {VERSIONS}")
    if not isinstance(obj, dict):
        raise WireError(f"message is not a JSON object (got {type(obj).__name__})")
    if obj.get("jsonrpc") != "2.0":
        raise WireError(f"message needs \"jsonrpc\": \"2.0\" (got {obj.get('jsonrpc')!r})")
    if "method" not in obj:
        return _dec_response(obj, response_to, version)
    method = obj["method"]
    if not isinstance(method, str):
        raise WireError(f"method is not a string (got {method!r})")
    params = obj.get("params")
    if "id" in obj:
        rid = _rid(obj["id"], f"{method} request")
        where = f"{method} request id {rid!r}"
        dec = _REQUEST_DECODERS.get(method)
        if dec is None:
            raise WireError(f"{where}: unknown request method {method!r}")
        return dec(rid, _obj(params, where + " params"), where)
    dec_n = _NOTIFICATION_DECODERS.get(method)
    if dec_n is None:
        return GenericNotification(method, canonical_json(params) if "params" in obj else None)
    where = f"{method} notification"
    return dec_n(_obj(params, where + " params"), where)
