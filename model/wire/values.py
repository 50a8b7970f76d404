"""Message values of the ACP v2 prompt lifecycle: abstract, immutable, hashable.

Every message class ends with ``kind: str = "<tag>"`` so values of different
classes never compare equal (NamedTuples compare as plain tuples).  A content
block is abstracted as ``str`` (a text block).  ``None`` in a field means
"omitted"; the singleton ``NULL`` means JSON ``null`` (patch fields, U5 / E5 /
G1).  :mod:`.codec` turns these values into the exact JSON-RPC objects that
cross the wire and back.
"""
from __future__ import annotations

import json
from typing import Any, NamedTuple, Optional, Union

__all__ = [
    "V1_STOP_REASONS",
    "VERSIONS",
    "WireError",
    "JsonNull",
    "NULL",
    "canonical_json",
    "RawJson",
    "RequestId",
    "Content",
    "ErrorObject",
    "NewSession",
    "Prompt",
    "Resume",
    "Load",
    "LoadResult",
    "Close",
    "CancelSession",
    "CancelRequest",
    "PermissionResult",
    "DEFAULT_OPTIONS",
    "RequestPermission",
    "NewSessionResult",
    "ResumeResult",
    "CloseResult",
    "PromptResult",
    "PromptResultV1",
    "ErrorResponse",
    "GenericResult",
    "GenericNotification",
    "UserMessage",
    "AgentMessage",
    "AgentThought",
    "UserMessageChunk",
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "StateUpdate",
    "ToolCallUpdate",
    "Notice",
    "UnknownUpdate",
    "SessionUpdate",
    "Update",
]

VERSIONS = ("v2", "v2-draft", "v1")

#: v1's closed ``StopReason`` enum (W14): no ``error``, no custom values
V1_STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled")
"""Dialects accepted by :func:`decode` (only the prompt response differs, D1/W14)."""


class WireError(ValueError):
    """A message that must be rejected; the text says what and where."""


class JsonNull:
    """Type of the :data:`NULL` singleton: an explicit JSON ``null``."""
    __slots__ = ()
    _instance: "JsonNull | None" = None

    def __new__(cls) -> "JsonNull":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NULL"

    def __reduce__(self) -> str:
        return "NULL"  # pickles (and copies) as the module-level singleton


NULL = JsonNull()


def canonical_json(value: Any) -> str:
    """Canonical JSON text (sorted keys, compact) used for raw payloads."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class RawJson(NamedTuple):
    """An arbitrary JSON value kept as canonical text (hashable)."""
    text: str
    kind: str = "raw_json"

    @classmethod
    def of(cls, value: Any) -> "RawJson":
        return cls(canonical_json(value))

    def value(self) -> Any:
        return json.loads(self.text)


RequestId = Union[int, str]
Content = Union[None, JsonNull, "tuple[str, ...]"]


class ErrorObject(NamedTuple):
    """JSON-RPC error object (W9, E5): int ``code``, str ``message``, optional
    ``data`` (None = omitted, a str, or :class:`RawJson` for any other JSON)."""
    code: int
    message: str
    data: Union[None, str, RawJson] = None
    kind: str = "error_object"


# --------------------------------------------------------------------------
# Client -> agent
# --------------------------------------------------------------------------
class NewSession(NamedTuple):
    rid: RequestId
    cwd: str = "/work"
    kind: str = "new_session"


class Prompt(NamedTuple):
    """``session/prompt`` (W2): no promptId/messageId on the request (P13).

    ``prompt_id`` exists only for the RFD's rejected alternatives (a client
    correlation token or a client-chosen ID); it travels in ``_meta.promptId``.
    """
    rid: RequestId
    session_id: str
    content: "tuple[str, ...]"
    prompt_id: Optional[str] = None
    kind: str = "prompt"


class Resume(NamedTuple):
    """``session/resume`` (R1): ``replay_from`` None = omitted, ``"start"``, or
    any other cursor type (R2: the agent rejects unsupported ones)."""
    rid: RequestId
    session_id: str
    replay_from: Optional[str] = None
    cwd: str = "/work"
    kind: str = "resume"


class Load(NamedTuple):
    """``session/load``: attach to a session and replay its whole history, then the response."""
    rid: RequestId
    session_id: str
    cwd: str = "/work"
    kind: str = "load"


class Close(NamedTuple):
    rid: RequestId
    session_id: str
    kind: str = "close"


class CancelSession(NamedTuple):
    session_id: str
    kind: str = "cancel_session"


class CancelRequest(NamedTuple):
    """``$/cancel_request`` (C3); sent in either direction."""
    rid: RequestId
    kind: str = "cancel_request"


class PermissionResult(NamedTuple):
    """Response to ``session/request_permission``: ``outcome`` is "selected"
    (with ``option_id``), "cancelled", or an unknown string (C16)."""
    rid: RequestId
    outcome: str
    option_id: Optional[str] = None
    kind: str = "permission_result"


# --------------------------------------------------------------------------
# Agent -> client
# --------------------------------------------------------------------------
DEFAULT_OPTIONS = (("allow", "allow_once"), ("reject", "reject_once"))


class RequestPermission(NamedTuple):
    """``session/request_permission``; ``options`` are ``(optionId, kind)``
    pairs (the name is the optionId); the subject is the tool call (None on
    decode when the request has no tool-call subject)."""
    rid: RequestId
    session_id: str
    tool_call_id: Optional[str]
    title: str = "Allow?"
    options: "tuple[tuple[str, str], ...]" = DEFAULT_OPTIONS
    kind: str = "request_permission"


class NewSessionResult(NamedTuple):
    rid: RequestId
    session_id: str
    kind: str = "new_session_result"


class ResumeResult(NamedTuple):
    rid: RequestId
    kind: str = "resume_result"


class LoadResult(NamedTuple):
    rid: RequestId
    kind: str = "load_result"


class CloseResult(NamedTuple):
    rid: RequestId
    kind: str = "close_result"


class PromptResult(NamedTuple):
    """v2 prompt success (P4/W1): ``{"messageId": id}``. ``message_id=None``
    encodes as ``{}``, the older v2 draft (D1), which is invalid v2."""
    rid: RequestId
    message_id: Optional[str]
    kind: str = "prompt_result"


class PromptResultV1(NamedTuple):
    """v1 prompt response ``{"stopReason": ...}`` (W14, B6)."""
    rid: RequestId
    stop_reason: str
    kind: str = "prompt_result_v1"


class ErrorResponse(NamedTuple):
    """JSON-RPC error response (E1, W9). ``rid`` may be None (``id: null``)."""
    rid: Optional[RequestId]
    error: ErrorObject
    kind: str = "error_response"


class GenericResult(NamedTuple):
    """A success response decoded without knowing its request (raw result)."""
    rid: RequestId
    raw_json: str
    kind: str = "generic_result"


class GenericNotification(NamedTuple):
    """A notification with a method this codec does not model (C3: may be
    ignored). ``raw_json`` is the canonical params, None when absent."""
    method: str
    raw_json: Optional[str] = None
    kind: str = "generic_notification"


# --------------------------------------------------------------------------
# Session updates (payload of ``session/update``)
# --------------------------------------------------------------------------
class UserMessage(NamedTuple):
    """Upsert keyed by messageId (U4/U5/W3): content None = unchanged,
    NULL or () = clear, tuple = replace.  ``prompt_id`` (variants only) is
    echoed in ``_meta.promptId``."""
    message_id: str
    content: Content = None
    prompt_id: Optional[str] = None
    kind: str = "user_message"


class AgentMessage(NamedTuple):
    message_id: str
    content: Content = None
    kind: str = "agent_message"


class AgentThought(NamedTuple):
    message_id: str
    content: Content = None
    kind: str = "agent_thought"


class UserMessageChunk(NamedTuple):
    """Appends one block (U7/W4). ``message_id=None`` is the v1 shape (U10)."""
    message_id: Optional[str]
    block: str
    kind: str = "user_message_chunk"


class AgentMessageChunk(NamedTuple):
    message_id: Optional[str]
    block: str
    kind: str = "agent_message_chunk"


class AgentThoughtChunk(NamedTuple):
    message_id: Optional[str]
    block: str
    kind: str = "agent_thought_chunk"


class StateUpdate(NamedTuple):
    """``state_update`` (W5-W8, E5, G1). ``stop_reason``: None = omitted or a
    string; ``error``: None = omitted, NULL, or ErrorObject; ``background``:
    None = omitted, NULL, or a tuple of tool-call ids."""
    state: str
    stop_reason: Optional[str] = None
    error: Union[None, JsonNull, ErrorObject] = None
    background: Union[None, JsonNull, "tuple[str, ...]"] = None
    kind: str = "state_update"


class ToolCallUpdate(NamedTuple):
    tool_call_id: str
    status: Optional[str] = None
    title: Optional[str] = None
    kind: str = "tool_call_update"


class Notice(NamedTuple):
    """``notice`` (N5): severity is an open enum; title is non-empty."""
    severity: str
    title: str
    description: Optional[str] = None
    kind: str = "notice"


class UnknownUpdate(NamedTuple):
    """Any update this codec does not model (W12): the whole update object
    is kept as canonical JSON text."""
    session_update: str
    raw_json: str
    kind: str = "unknown_update"


SessionUpdate = Union[
    UserMessage, AgentMessage, AgentThought, UserMessageChunk,
    AgentMessageChunk, AgentThoughtChunk, StateUpdate, ToolCallUpdate,
    Notice, UnknownUpdate,
]


class Update(NamedTuple):
    """``session/update`` notification (S18)."""
    session_id: str
    update: SessionUpdate
    kind: str = "update"
