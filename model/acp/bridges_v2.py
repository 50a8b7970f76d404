"""The v2 agent -> bridge -> v1 client model (X32): B3, B4, B5, B6, B8 and W14.

See :mod:`.bridges` for the shared setting.  The v2 agent answers
``PromptResult{m1}`` at insertion, may report ``running``, then goes idle
with ``end_turn``, ``error`` with an error object, ``error`` without one, or
a custom ``_vendor`` stop reason.  The conforming bridge withholds every
``state_update`` and the v2 ``PromptResult`` from v1 (v1 has neither; B4),
and answers the v1 prompt once, on the first idle after the ``PromptResult``
(B6): ``end_turn`` -> ``PromptResultV1(end_turn)``; ``error`` -> an error
response with the same error object, or ``-32603`` when absent (B3); a stop
reason v1's closed enum cannot carry fails the v1 prompt with ``-32603``
naming it (B4: withholding would leave the prompt unanswered, mapping it to
``end_turn`` would lose it).

Options (each off by default, so the pinned model is unchanged):

* ``error_type="new"``: the agent reports a failure after insertion in the
  new error type (:func:`.bridge_base.new_type_idle`); the bridge maps its
  kind back to a JSON-RPC code (:data:`.bridge_base.NEW_ERROR_KINDS`).
* ``detailed``: the agent's error object is :data:`.bridge_base.RESOURCE_ERROR`.
* ``updates`` (B5): the agent streams an agent message: a chunk, or a whole
  update, and may then replace its content with a whole update.  v1 chunks
  can only append.  Decision (B5: never drop silently): the bridge fans a
  whole update out as a chunk while v1 holds no content for the message, and
  forwards a replacement as one more chunk marked ``[replaced]``, so the v1
  user sees it; the ``silent_replace`` mutant drops it.
* ``own_work`` (B8): the agent may run work of its own (``running`` ...
  ``idle end_turn``) while the prompt waits; the prompt's own work starts
  only after it.  The bridge still maps the first idle after the
  ``PromptResult``: the B8 question (an idle is session-scoped) made
  concrete.  The RFD leaves it open; the model shows what this bridge does.
"""

from __future__ import annotations

from acplab.model.engine import Property, always, sometimes
from acplab.model.wire import (
    AgentMessage,
    AgentMessageChunk,
    ErrorObject,
    ErrorResponse,
    Prompt,
    PromptResult,
    PromptResultV1,
    StateUpdate,
    UnknownUpdate,
    Update,
    V1_STOP_REASONS,
)

from .bridge_base import (
    AGENT_RID,
    AUTH_ERROR,
    BState,
    CLIENT_RID,
    INTERNAL_ERROR,
    MINTED_ID,
    RESOURCE_ERROR,
    SESSION,
    _Base,
    _after,
    _events,
    _payload,
    _push,
    _sent,
    new_type_error,
    new_type_idle,
)

#: the agent's possible endings: (label, idle StateUpdate) with its default error object
V2_ENDINGS = (
    ("end_turn", StateUpdate("idle", "end_turn")),
    ("error_with_object", StateUpdate("idle", "error", AUTH_ERROR)),
    ("error_without_object", StateUpdate("idle", "error", None)),
    ("vendor", StateUpdate("idle", "_vendor")),
)
AGENT_MESSAGE = "a1"
REPLACED = "[replaced] "


class V2AgentBehindBridge(_Base):
    """A v1 client talks to a v2 agent through a bridge (X32; B3, B4, B5, B6, B8, W14)."""

    MUTANTS = ("forward_error_stop_reason", "drop_error_object", "raw_state_update", "silent_replace")

    def __init__(self, mutant: str | None = None, conforming: bool | None = None, error_type: str = "jsonrpc",
                 detailed: bool = False, updates: bool = False, own_work: bool = False) -> None:
        super().__init__(mutant, conforming, error_type, detailed)
        self.updates = updates or mutant == "silent_replace"
        self.own_work = own_work

    def endings(self):
        """The idle updates the agent may end the prompt's work with: ``(label, update)``."""
        for label, idle in V2_ENDINGS:
            if label == "error_with_object" and self.detailed:
                idle = idle._replace(error=RESOURCE_ERROR)
            if idle.stop_reason == "error" and self.error_type == "new":
                yield label, new_type_idle(idle.error if isinstance(idle.error, ErrorObject) else None)
            else:
                yield label, Update(SESSION, idle)

    def agent_failure(self, label: str) -> ErrorObject | None:
        """The failure behind ending ``label``, as a JSON-RPC error object (None: no details)."""
        if label == "error_with_object":
            return RESOURCE_ERROR if self.detailed else AUTH_ERROR
        return None

    def is_final(self, s: BState) -> bool:
        return super().is_final(s) and s.own != "running"

    def _agent_steps(self, s: BState):
        out = []
        if self.own_work and s.own == "" and s.agent in ("waiting", "working", "inserted"):
            out.append(self._agent_send(s, "agent_own_work", Update(SESSION, StateUpdate("running")), own="running"))
        if s.own == "running":
            out.append(self._agent_send(s, "agent_own_work_ends", Update(SESSION, StateUpdate("idle", "end_turn")),
                                        own="done"))
        if s.agent == "working":
            out.append(self._agent_send(s, "agent_insert", PromptResult(AGENT_RID, MINTED_ID), agent="inserted"))
        elif s.agent in ("inserted", "running") and s.own != "running":
            if s.agent == "running":
                out += self._message_steps(s)
            if s.agent == "inserted":
                out.append(self._agent_send(s, "agent_running", Update(SESSION, StateUpdate("running")), agent="running"))
            for label, idle in self.endings():
                out.append(self._agent_send(s, f"agent_idle_{label}", idle, agent="done", agent_end=label))
        return out

    def _message_steps(self, s: BState):
        """B5: the prompt's work streams an agent message, whole or chunked, and may replace it."""
        if not self.updates:
            return []
        sent = [m for m in _events(s, "agent_sent") if isinstance(m, (AgentMessage, AgentMessageChunk))]
        if not sent:
            return [self._agent_send(s, "agent_message_chunk", Update(SESSION, AgentMessageChunk(AGENT_MESSAGE, "ok"))),
                    self._agent_send(s, "agent_message_whole", Update(SESSION, AgentMessage(AGENT_MESSAGE, ("ok",))))]
        if len(sent) == 1:
            return [self._agent_send(s, "agent_message_replace",
                                     Update(SESSION, AgentMessage(AGENT_MESSAGE, ("ok!",))))]
        return []

    def _bridge_from_client(self, s: BState, msg) -> BState:
        return _push(s, "b2a", Prompt(AGENT_RID, msg.session_id, msg.content))

    def _bridge_from_agent(self, s: BState, msg) -> BState:
        p = _payload(msg)
        if isinstance(p, PromptResult):  # v1 has no insertion receipt: withhold
            return s._replace(reported=True, log=s.log + (("bridge_dropped", msg),))
        if isinstance(p, (AgentMessage, AgentMessageChunk)):
            return self._message_to_v1(s, msg, p)
        if isinstance(p, UnknownUpdate):  # a new-type idle error: only the idle after insertion counts (B8)
            if not s.reported or _v1_responses(s):
                return s._replace(log=s.log + (("bridge_dropped", msg),))
            return _sent(s, ErrorResponse(CLIENT_RID, new_type_error(p) or INTERNAL_ERROR))
        if isinstance(p, StateUpdate):
            if self.mutant == "raw_state_update":
                s = _sent(s, msg)
            elif p.state != "idle":
                s = s._replace(log=s.log + (("bridge_dropped", msg),))
            if p.state != "idle":
                return s
            if not s.reported or _v1_responses(s):  # B8: the first idle after insertion ends the v1 prompt
                return s
            return _sent(s, self._v1_response(p))
        raise AssertionError(f"unexpected message from the v2 agent: {msg!r}")

    def _message_to_v1(self, s: BState, msg, p) -> BState:
        """B5: v1 chunks append; a whole update fans out while v1 holds no content, else is marked."""
        if isinstance(p, AgentMessageChunk):
            return _sent(s, Update(SESSION, AgentMessageChunk(None, p.block)))
        held = any(isinstance(m, AgentMessageChunk) for m in _events(s, "bridge_sent"))
        text = "".join(p.content or ())
        if not held:
            return _sent(s, Update(SESSION, AgentMessageChunk(None, text)))
        if self.mutant == "silent_replace":
            return s._replace(log=s.log + (("bridge_dropped", msg),))
        return _sent(s, Update(SESSION, AgentMessageChunk(None, REPLACED + text)))

    def _v1_response(self, idle: StateUpdate):
        reason = idle.stop_reason
        if reason == "error":
            if self.mutant == "forward_error_stop_reason":
                return PromptResultV1(CLIENT_RID, "error")
            if self.mutant == "drop_error_object" or not isinstance(idle.error, ErrorObject):
                return ErrorResponse(CLIENT_RID, INTERNAL_ERROR)
            return ErrorResponse(CLIENT_RID, idle.error)
        if reason in V1_STOP_REASONS:
            return PromptResultV1(CLIENT_RID, reason)
        # B4 decision: fail the v1 prompt rather than send invalid v1 or lose the reason
        return ErrorResponse(CLIENT_RID, ErrorObject(-32603, f"unrepresentable v2 stop reason: {reason}"))

    def properties(self) -> list[Property]:
        props = [
            always("B3_IdleErrorBecomesV1ErrorResponse", _b3, ("B3",),
                   "an idle error becomes a v1 error response with the same error object, or -32603 when absent"),
            always("B4_NoV2OnlyValuesToV1", _b4, ("B4",),
                   "no state_update, no v2 PromptResult and no custom stop reason reaches the v1 client"),
            always("W14_V1StopReasonInClosedEnum",
                   lambda s: all(m.stop_reason in V1_STOP_REASONS for m in _events(s, "bridge_sent")
                                 if isinstance(m, PromptResultV1)),
                   ("W14", "B4"), "every v1 prompt response's stopReason is one of v1's five values"),
            always("B6_ExactlyOneV1Response",
                   lambda s: len(_v1_responses(s)) <= 1 and (not self.is_final(s) or len(_v1_responses(s)) == 1),
                   ("B6",), "the v1 prompt gets at most one response, and exactly one once everything is delivered"),
            sometimes("W_EndTurnMapped",
                      lambda s: any(m == PromptResultV1(CLIENT_RID, "end_turn") for m in _events(s, "client_recv")),
                      ("B6",), "idle end_turn -> v1 PromptResultV1(end_turn)"),
            sometimes("W_ErrorWithObjectMapped",
                      lambda s: s.agent_end == "error_with_object" and any(
                          isinstance(m, ErrorResponse) for m in _events(s, "client_recv")),
                      ("B3",), "idle error with an error object -> a v1 error response"),
            sometimes("W_ErrorWithoutObjectMapped",
                      lambda s: s.agent_end == "error_without_object"
                      and ErrorResponse(CLIENT_RID, INTERNAL_ERROR) in _events(s, "client_recv"),
                      ("B3",), "idle error with no error object -> v1 error response -32603"),
            sometimes("W_VendorStopReasonFailsV1Prompt",
                      lambda s: s.agent_end == "vendor" and any(
                          isinstance(m, ErrorResponse) and m.error.code == -32603 and "_vendor" in m.error.message
                          for m in _events(s, "client_recv")),
                      ("B4",), "idle _vendor -> v1 error response -32603 naming the stop reason"),
            sometimes("W_RunningWithheld",
                      lambda s: any(e == "bridge_dropped" and isinstance(_payload(m), StateUpdate)
                                    and _payload(m).state == "running" for e, m in s.log),
                      ("B4",), "a running state_update is withheld from the v1 client"),
        ]
        if self.updates:
            props.append(always("B5_UnrepresentableUpdateNotDropped", _b5, ("B5",),
                                "a whole-message update v1 chunks cannot express is surfaced, never silently dropped"))
            props.append(sometimes("W_ReplacementSurfaced",
                                   lambda s: any(isinstance(m, AgentMessageChunk) and m.block.startswith(REPLACED)
                                                 for m in _events(s, "client_recv")),
                                   ("B5",), "a replaced agent message reaches the v1 client as a marked chunk"))
        if self.own_work:
            props.append(sometimes("W_OwnWorkIdleAfterInsertion", _own_idle_after_insertion, ("B8",),
                                   "the idle of the agent's own work arrives after the prompt's PromptResult"))
        return props


def _v1_responses(s: BState) -> list:
    return [m for m in _events(s, "bridge_sent") if isinstance(m, (PromptResultV1, ErrorResponse)) and m.rid == CLIENT_RID]


def _b3(s: BState) -> bool:
    for i, (e, m) in enumerate(s.log):
        p = _payload(m)
        if e == "bridge_recv" and isinstance(p, StateUpdate) and p.state == "idle" and p.stop_reason == "error":
            later = [x for x in _after(s, i, "bridge_sent") if isinstance(x, (PromptResultV1, ErrorResponse))]
            if not later:
                continue
            resp = later[0]
            if not isinstance(resp, ErrorResponse):
                return False
            if isinstance(p.error, ErrorObject):
                if resp.error != p.error:
                    return False
            elif resp.error.code != -32603:
                return False
    return True


def _b4(s: BState) -> bool:
    for m in _events(s, "bridge_sent"):
        if isinstance(m, (StateUpdate, PromptResult)):
            return False
        if isinstance(m, PromptResultV1) and m.stop_reason.startswith("_"):
            return False
    return True


def _b5(s: BState) -> bool:
    """Each whole agent-message update the bridge received is followed, in the same step, by a v1 chunk."""
    for i, (e, m) in enumerate(s.log):
        if e == "bridge_recv" and isinstance(_payload(m), AgentMessage):
            nxt = s.log[i + 1] if i + 1 < len(s.log) else None
            if nxt is not None and not (nxt[0] == "bridge_sent" and isinstance(_payload(nxt[1]), AgentMessageChunk)):
                return False
    return True


def _own_idle_after_insertion(s: BState) -> bool:
    recv = _events(s, "bridge_recv")
    first = next((i for i, m in enumerate(recv) if isinstance(m, PromptResult)), None)
    return first is not None and any(isinstance(m, StateUpdate) and m.state == "idle" for m in recv[first:]) \
        and s.own == "done"
