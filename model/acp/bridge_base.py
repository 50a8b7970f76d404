"""What the two v1 <-> v2 bridge models share: their state, channels, actions and labels.

Three parties (client C, bridge B, agent A) joined by four FIFO channels
(C->B, B->A, A->B, B->C); a state keeps a bounded ``log`` of what happened,
over which the bridge monitors are ``always`` properties.  The models
themselves are in :mod:`.bridges`.
"""

from __future__ import annotations

from typing import NamedTuple

import json

from acplab.model.wire import (
    AgentMessageChunk,
    ErrorObject,
    ErrorResponse,
    Prompt,
    PromptResult,
    PromptResultV1,
    RawJson,
    StateUpdate,
    UnknownUpdate,
    Update,
    UserMessage,
    UserMessageChunk,
    canonical_json,
)


SESSION = "s1"
CLIENT_RID = 7  # the client's request id on its side of the bridge
AGENT_RID = 70  # the bridge's request id towards the agent
TEXT = ("hi",)
MINTED_ID = "m1"
INTERNAL_ERROR = ErrorObject(-32603, "Internal error")
AUTH_ERROR = ErrorObject(-32000, "Authentication required")
#: a failure with details: a code a client can act on and ``data`` (the bridges' ``detailed`` option)
RESOURCE_ERROR = ErrorObject(-32002, "Resource not found", RawJson.of({"uri": "file:///notes.md"}))

# -- the new-error-type alternative -------------------------------------------------------
#: A new error type for failures after insertion, as the FAQ's alternative might define it:
#: ``{kind, message}`` with a closed set of kinds, and no JSON-RPC code or ``data``.  (A type
#: that kept the code space and ``data`` would be the JSON-RPC error object by another name.)
#: A bridge maps codes to kinds and back with this table; other codes become "internal".
NEW_ERROR_KINDS = {-32000: "auth_required", -32603: "internal"}
_CODE_OF_KIND = {kind: code for code, kind in NEW_ERROR_KINDS.items()}


def new_type_idle(error: ErrorObject | None) -> Update:
    """An idle ending failed work whose failure is the new error type (what its agent or bridge sends)."""
    body: dict = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error"}
    if error is not None:
        body["error"] = {"kind": NEW_ERROR_KINDS.get(error.code, "internal"), "message": error.message}
    return Update(SESSION, UnknownUpdate("state_update", canonical_json(body)))


def new_type_error(update) -> ErrorObject | None:
    """The JSON-RPC error a bridge (or a client) can recover from a new-type idle: kind -> code, no data.

    None when ``update`` is not a new-type idle error or carries no failure.
    """
    if not isinstance(update, UnknownUpdate) or update.session_update != "state_update":
        return None
    failure = json.loads(update.raw_json).get("error")
    if not isinstance(failure, dict):
        return None
    return ErrorObject(_CODE_OF_KIND.get(failure.get("kind"), -32603), str(failure.get("message", "")))


class BAction(NamedTuple):
    """``name`` is ``client_send``, ``deliver`` (``channel`` set) or an agent step."""

    name: str
    channel: str | None = None


class BState(NamedTuple):
    """One global state of either bridge model.

    ``log`` entries are ``(event, message)`` with event one of ``client_sent``,
    ``agent_sent``, ``bridge_recv`` (from the agent), ``bridge_sent`` (to the
    client), ``bridge_dropped`` (withheld), ``client_recv``.
    """

    c2b: tuple
    b2a: tuple
    a2b: tuple
    b2c: tuple
    client_sent: bool
    agent: str  # waiting | working | inserted | running | done
    agent_echoed: bool
    agent_end: str | None  # how the agent ended (for witnesses)
    reported: bool  # bridge sent PromptResult (v1 model) / saw PromptResult (v2 model)
    um_sent: bool  # bridge sent the v2 user_message (v1 model)
    failed: bool  # bridge answered the client's prompt with an error
    log: tuple
    #: agent-initiated work of the v2 agent (B8 option): "" none yet, "running", "done"
    own: str = ""


CHANNELS = ("c2b", "b2a", "a2b", "b2c")
CHANNEL_NAMES = {"c2b": "client -> bridge", "b2a": "bridge -> agent", "a2b": "agent -> bridge", "b2c": "bridge -> client"}


def _init() -> BState:
    return BState((), (), (), (), False, "waiting", False, None, False, False, False, ())


def _push(s: BState, channel: str, *msgs) -> BState:
    return s._replace(**{channel: getattr(s, channel) + tuple(msgs)})


def _sent(s: BState, *msgs) -> BState:
    """The bridge sends ``msgs`` to the client, in order."""
    s = _push(s, "b2c", *msgs)
    return s._replace(log=s.log + tuple(("bridge_sent", m) for m in msgs))


def _payload(msg):
    return msg.update if isinstance(msg, Update) else msg


def _events(s: BState, event: str) -> list:
    return [_payload(m) for e, m in s.log if e == event]


def _fmt(msg) -> str:
    p = _payload(msg)
    if isinstance(p, Prompt):
        return f"prompt#{p.rid}"
    if isinstance(p, PromptResult):
        return f"ok#{p.rid}{{{p.message_id}}}"
    if isinstance(p, PromptResultV1):
        return f"ok#{p.rid}{{{p.stop_reason}}}"
    if isinstance(p, ErrorResponse):
        return f"err#{p.rid}({p.error.code})"
    if isinstance(p, UserMessage):
        return f"um({p.message_id})"
    if isinstance(p, UserMessageChunk):
        return f"umc({p.message_id})"
    if isinstance(p, StateUpdate):
        err = "" if p.error is None else f"{{{p.error.code}}}"
        return f"st:{p.state}" + (f"/{p.stop_reason}{err}" if p.stop_reason else "")
    if isinstance(p, UnknownUpdate) and p.session_update == "state_update":
        kind = (json.loads(p.raw_json).get("error") or {}).get("kind", "")
        return f"st:idle/error{{{kind}}}"
    if isinstance(p, AgentMessageChunk):
        return f"amc({p.block})"
    if hasattr(p, "message_id") and hasattr(p, "content"):
        return f"{p.kind}({p.message_id}: {'/'.join(p.content or ())})"
    return repr(p)


def _after(s: BState, index: int, event: str) -> list:
    return [_payload(m) for e, m in s.log[index + 1 :] if e == event]


def _before(s: BState, index: int, event: str) -> list:
    return [_payload(m) for e, m in s.log[:index] if e == event]


class _Base:
    """Options every bridge model takes: ``error_type`` "jsonrpc" (the RFD) or "new" (the new error
    type alternative, for failures after insertion); ``detailed``: the agent's failure is
    :data:`RESOURCE_ERROR` (a code and ``data``) rather than its default one."""

    check_deadlock = False
    MUTANTS: tuple[str, ...] = ()

    def __init__(self, mutant: str | None = None, conforming: bool | None = None, error_type: str = "jsonrpc",
                 detailed: bool = False) -> None:
        if mutant is not None and mutant not in self.MUTANTS:
            raise ValueError(f"unknown mutant {mutant!r} for {type(self).__name__}; known: {self.MUTANTS}")
        if conforming is not None and conforming != (mutant is None):
            raise ValueError("conforming=True excludes a mutant; a mutant needs conforming=False (or None)")
        if error_type not in ("jsonrpc", "new"):
            raise ValueError(f"unknown error type {error_type!r}; known: jsonrpc, new")
        self.mutant = mutant
        self.conforming = mutant is None
        self.error_type = error_type
        self.detailed = detailed

    def init_states(self):
        return [_init()]

    def action_kind(self, action: BAction) -> str:
        """What kind of step, for coverage counts (a delivery with its channel)."""
        return self.format_action(action)

    def format_action(self, action: BAction) -> str:
        return action.name if action.channel is None else f"deliver {CHANNEL_NAMES[action.channel]}"

    def is_final(self, s: BState) -> bool:
        return s.client_sent and s.agent == "done" and not any(getattr(s, c) for c in CHANNELS)

    def successors(self, s: BState):
        out = []
        if not s.client_sent:
            p = Prompt(CLIENT_RID, SESSION, TEXT)
            out.append((BAction("client_send"), s._replace(c2b=(p,), client_sent=True, log=s.log + (("client_sent", p),))))
        for ch in CHANNELS:
            queue = getattr(s, ch)
            if queue:
                msg, rest = queue[0], queue[1:]
                out.append((BAction("deliver", ch), self._deliver(s._replace(**{ch: rest}), ch, msg)))
        out.extend(self._agent_steps(s))
        return out

    def _deliver(self, s: BState, ch: str, msg) -> BState:
        if ch == "b2c":
            return s._replace(log=s.log + (("client_recv", msg),))
        if ch == "b2a":  # the agent receives the forwarded prompt
            return s._replace(agent="working")
        if ch == "c2b":
            return self._bridge_from_client(s, msg)
        s = s._replace(log=s.log + (("bridge_recv", msg),))
        return self._bridge_from_agent(s, msg)

    def _agent_send(self, s: BState, name: str, msg, **changes) -> tuple[BAction, BState]:
        s = _push(s, "a2b", msg)
        return BAction(name), s._replace(log=s.log + (("agent_sent", msg),), **changes)


def format_message(msg) -> str:
    """A short label for a message, in the RACES.md notation (``ok#7{m1}``, ``st:idle/error{-32603}``)."""
    return _fmt(msg)
