"""Rule monitors: observers of the event stream, each tied to RULES.md IDs.

A monitor never acts.  It keeps a small hashable bookkeeping value (part of
the explored state), sees every event of a step with the worlds before and
after, and may report a violation as a sentence with actual and expected
values.  Some also check the world when it is at rest (nothing in flight,
no work, no request pending).

``wire = True`` monitors read only ``Send`` events of wire messages (and
ignore the worlds), so the trace checker runs them unchanged on recorded
traffic; the others need internal events (insertion, failure, a client's
reasoning) and say so.
"""

from __future__ import annotations

from .events import A2C, C2A
from acplab.model.wire.capture import conn_label as _conn
from .state import World

TERMINAL_TOOL = ("completed", "failed", "cancelled")


class Monitor:
    """A property as an observer; subclasses set the class attributes and override hooks."""

    name = ""
    rules: tuple[str, ...] = ()
    description = ""
    wire = False
    kinds: frozenset[str] = frozenset()
    initial = None

    def observe(self, mstate, event, before: World | None, after: World | None):
        """Return ``(new bookkeeping, violation sentence or None)``."""
        return mstate, None

    def at_rest(self, mstate, world: World | None) -> str | None:
        return None

    def rename_clients(self, mstate, new_index: dict[int, int]):
        """The bookkeeping with client indices renamed (symmetry reduction); override if it names any."""
        return mstate


def _rename_conn(conn, new_index):
    return (new_index[conn[0]], conn[1])


def _sent(event, direction, kind):
    return event.kind == "send" and event.dir == direction and event.msg.kind == kind


def _sent_update(event, *kinds):
    if event.kind != "send" or event.dir != A2C or event.msg.kind != "update":
        return None
    update = event.msg.update
    return update if update.kind in kinds else None


def _entry_of(world: World, sub):
    for e in world.agent.history:
        if e.sub == sub:
            return e
    return None


class SuccessOnlyAfterInsertion(Monitor):
    name = "SuccessOnlyAfterInsertion"
    rules = ("P3", "P7")
    description = "a session/prompt success is sent only once its user message was inserted"
    kinds = frozenset({"send"})

    def observe(self, m, e, before, after):
        if after is None or not _sent(e, A2C, "prompt_result"):
            return m, None
        if _entry_of(after, (*e.conn, e.msg.rid)) is None:
            return m, f"response #{e.msg.rid} on {_conn(e.conn)} succeeds, but its message was never inserted"
        return m, None


class SuccessCarriesInsertedId(Monitor):
    name = "SuccessCarriesInsertedId"
    rules = ("P4", "U3", "W1")
    description = "the success result carries, as a string, the ID its submission was inserted under"
    kinds = frozenset({"send"})

    def observe(self, m, e, before, after):
        if not _sent(e, A2C, "prompt_result"):
            return m, None
        mid = e.msg.message_id
        if not isinstance(mid, str):
            return m, f"response #{e.msg.rid} on {_conn(e.conn)} has no messageId"
        entry = _entry_of(after, (*e.conn, e.msg.rid)) if after is not None else None
        if entry is not None and entry.mid != mid:
            return m, f"response #{e.msg.rid} on {_conn(e.conn)} carries {mid} but the message was inserted as {entry.mid}"
        return m, None


class DistinctMessageIds(Monitor):
    name = "DistinctMessageIds"
    rules = ("P5",)
    description = "every accepted submission gets its own messageId, never reused"
    wire = True
    kinds = frozenset({"send"})
    initial = ()

    def observe(self, m, e, before, after):
        if not _sent(e, A2C, "prompt_result") or e.msg.message_id is None:
            return m, None
        mid = e.msg.message_id
        if mid in m:
            return m, f"response #{e.msg.rid} on {_conn(e.conn)} returns {mid}, already returned for another submission"
        return tuple(sorted(m + (mid,))), None


class AcceptedMessageReportedLive(Monitor):
    name = "AcceptedMessageReportedLive"
    rules = ("U1",)
    description = "every accepted message is reported live on the submitting connection under its ID"
    wire = True
    kinds = frozenset({"send", "cut"})
    initial = ((), ())  # (responded (conn, mid) awaiting a report, reported (conn, mid))

    def observe(self, m, e, before, after):
        awaiting, reported = m
        if e.kind == "cut":
            # E10: a closed connection can carry no report; its obligations end with it.
            return (tuple(k for k in awaiting if k[0] != e.conn), reported), None
        if _sent(e, A2C, "prompt_result") and e.msg.message_id is not None and not e.lost:
            key = (e.conn, e.msg.message_id)
            if key not in reported:
                return (tuple(sorted(awaiting + (key,))), reported), None
            return m, None
        update = _sent_update(e, "user_message", "user_message_chunk")
        if update is not None:
            key = (e.conn, update.message_id)
            if key in reported:
                return m, None
            return (tuple(k for k in awaiting if k != key), tuple(sorted(reported + (key,)))), None
        return m, None

    def rename_clients(self, m, new_index):
        return tuple(tuple(sorted((_rename_conn(c, new_index), mid) for c, mid in part)) for part in m)

    def at_rest(self, m, world):
        if m[0]:
            conn, mid = m[0][0]
            return f"{mid} was accepted on {_conn(conn)} but never reported there with user_message"
        return None


class _ErrorMeansNotInserted(Monitor):
    kinds = frozenset({"send"})

    def matches(self, code: int) -> bool:
        raise NotImplementedError

    def observe(self, m, e, before, after):
        if after is None or not _sent(e, A2C, "error_response") or not self.matches(e.msg.error.code):
            return m, None
        entry = _entry_of(after, (*e.conn, e.msg.rid))
        if entry is not None:
            return m, (
                f"error {e.msg.error.code} answers #{e.msg.rid} on {_conn(e.conn)}, "
                f"but its message was inserted as {entry.mid}"
            )
        return m, None


class ErrorResponseMeansNotInserted(_ErrorMeansNotInserted):
    name = "ErrorResponseMeansNotInserted"
    rules = ("E1", "E2")
    description = "a JSON-RPC error on session/prompt means nothing was inserted; later failures are not errors"

    def matches(self, code):
        return code != -32800


class CancelRequestErrorOnlyBeforeInsertion(_ErrorMeansNotInserted):
    name = "CancelRequestErrorOnlyBeforeInsertion"
    rules = ("C1", "E1")
    description = "-32800 on session/prompt only before insertion; afterwards the request succeeds"

    def matches(self, code):
        return code == -32800


class WorkEndsWithOneIdle(Monitor):
    name = "WorkEndsWithOneIdle"
    rules = ("S2", "S5", "S3")
    description = "foreground work that started ends with exactly one idle carrying a stop reason"
    kinds = frozenset({"work_start", "work_end", "restart"})
    initial = False

    def observe(self, m, e, before, after):
        if e.kind == "restart":
            return False, None  # E10: the process exited; no update can report it
        if e.kind == "work_start":
            if m:
                return m, "work started while earlier work had not ended"
            return True, None
        if e.reported is None:
            return False, f"work ended ({e.reason}) without an idle state_update"
        if e.reported == "":
            return False, f"work ended ({e.reason}) with an idle that names no stop reason"
        if e.reported != e.reason:
            return False, f"work ended ({e.reason}) but the agent reported {e.reported!r} instead of idle"
        return False, None

    def at_rest(self, m, world):
        return "work started and never ended with idle" if m else None


class CancelledWorkEndsCancelled(Monitor):
    name = "CancelledWorkEndsCancelled"
    rules = ("C7", "C9")
    description = "work stopped by session/cancel ends with stopReason cancelled"
    kinds = frozenset({"cancel_seen", "work_end", "restart"})
    initial = False

    def observe(self, m, e, before, after):
        if e.kind == "restart":
            return False, None
        if e.kind == "cancel_seen":
            return (m or e.active), None
        if m and e.reason != "cancelled":
            return False, f"work cancelled while active ended with {e.reason}"
        return False, None


class FailureEndsWithErrorIdle(Monitor):
    name = "FailureEndsWithErrorIdle"
    rules = ("E3", "E5")
    description = "a failure after insertion ends the work with idle stopReason error and the error object"
    kinds = frozenset({"fail", "send", "work_end", "restart"})
    initial = False  # a failure after insertion awaits its idle

    def observe(self, m, e, before, after):
        if e.kind == "restart":
            return False, None
        if e.kind == "fail":
            return e.after_insertion, None
        if e.kind == "work_end":
            if m and e.reason != "error":
                return False, f"work failed after insertion but ended as {e.reason}"
            return False, None
        update = _sent_update(e, "state_update")
        if not m or update is None or update.state != "idle":
            return m, None
        if update.stop_reason != "error":
            return False, f"work failed after insertion but idle reports {update.stop_reason!r}"
        if update.error is None or not hasattr(update.error, "code"):
            return False, "idle error carries no error object"
        return m, None


class ToolCallsTerminalBeforeIdle(Monitor):
    name = "ToolCallsTerminalBeforeIdle"
    rules = ("E6", "S6", "C8")
    description = "before the idle that ends work, its tool calls reached a terminal status"
    wire = True
    kinds = frozenset({"send"})
    initial = ()  # open (conn, toolCallId)

    def rename_clients(self, m, new_index):
        return tuple(sorted((_rename_conn(c, new_index), t) for c, t in m))

    def observe(self, m, e, before, after):
        update = _sent_update(e, "tool_call_update", "state_update")
        if update is None:
            return m, None
        if update.kind == "tool_call_update":
            key = (e.conn, update.tool_call_id)
            opened = update.status not in TERMINAL_TOOL
            m = tuple(sorted(k for k in m if k != key) + ([key] if opened else []))
            return m, None
        if update.state == "idle" and update.stop_reason is not None:
            still = [t for c, t in m if c == e.conn]
            if still:
                return m, f"idle {update.stop_reason} on {_conn(e.conn)} while tool call {still[0]} is unfinished"
        return m, None


class ReplayKeepsIds(Monitor):
    name = "ReplayKeepsIds"
    rules = ("R5", "R6")
    description = "a replayed retained message carries the ID returned at insertion"
    kinds = frozenset({"replayed"})

    def observe(self, m, e, before, after):
        if e.original != e.sent:
            return m, f"replay sends {e.original} as {e.sent}"
        return m, None


class ReplayResetsBeforeChunks(Monitor):
    name = "ReplayResetsBeforeChunks"
    rules = ("R7", "R8")
    description = "replay that streams a user message as chunks first sends user_message content []"
    wire = True
    kinds = frozenset({"send"})
    initial = ()  # (conn, reset mids) for connections inside a replay window

    def rename_clients(self, m, new_index):
        return tuple((_rename_conn(c, new_index), mids) for c, mids in m)

    def observe(self, m, e, before, after):
        if e.dir == C2A:
            if e.msg.kind == "resume" and e.msg.replay_from == "start":
                return tuple(w for w in m if w[0] != e.conn) + ((e.conn, ()),), None
            return m, None
        window = next((w for w in m if w[0] == e.conn), None)
        if window is None:
            return m, None
        if e.msg.kind == "resume_result" or e.msg.kind == "error_response":
            return tuple(w for w in m if w[0] != e.conn), None
        update = _sent_update(e, "user_message", "user_message_chunk")
        if update is None:
            return m, None
        reset = window[1]
        if update.kind == "user_message":
            if update.content is not None and update.message_id not in reset:
                new = (e.conn, reset + (update.message_id,))
                return tuple(w if w[0] != e.conn else new for w in m), None
            return m, None
        if update.message_id not in reset:
            return m, f"replay on {_conn(e.conn)} streams {update.message_id} as chunks without a user_message content [] first"
        return m, None


class CommandsNeverReexecuted(Monitor):
    name = "CommandsNeverReexecuted"
    rules = ("R9",)
    description = "a replayed command is reported, never executed again"
    kinds = frozenset({"execute"})
    initial = ()

    def observe(self, m, e, before, after):
        if e.mid in m:
            return m, f"command {e.mid} executed a second time"
        return tuple(sorted(m + (e.mid,))), None


class ClientNeverGuesses(Monitor):
    name = "ClientNeverGuesses"
    rules = ("P9", "R11", "U2")
    description = "a client links a submission to a message only through its prompt response"
    kinds = frozenset({"bind"})

    def observe(self, m, e, before, after):
        if e.how not in ("content", "order"):
            return m, None
        truth = None
        for entry in after.agent.history:
            if entry.mid == e.mid:
                truth = entry.sub
        whose = "its own, by luck" if truth == e.sub else "not its own"
        return m, f"client c{e.client + 1} bound its prompt #{e.sub[2]} to {e.mid} by {e.how} ({whose})"


class BindingsMatchTruth(Monitor):
    name = "BindingsMatchTruth"
    rules = ("P9", "P5", "U2")
    description = "a client links its submission only to the message that submission inserted"
    kinds = frozenset({"bind"})

    def observe(self, m, e, before, after):
        owners = [entry.sub for entry in after.agent.history if entry.mid == e.mid]
        if owners and e.sub not in owners:
            owner = owners[0]
            whose = f"c{owner[0] + 1}'s prompt #{owner[2]}" if owner else "an imported message"
            return m, f"client c{e.client + 1} linked its prompt #{e.sub[2]} to {e.mid}, which is {whose}"
        return m, None


class EveryPromptAnswered(Monitor):
    name = "EveryPromptAnswered"
    rules = ("P2", "E1", "P14")
    description = "every session/prompt that reached the agent is answered: success or a JSON-RPC error"
    wire = True
    kinds = frozenset({"send", "drop", "cut"})
    initial = ()  # (conn, rid) of prompts awaiting their response

    def rename_clients(self, m, new_index):
        return tuple(sorted((_rename_conn(c, new_index), rid) for c, rid in m))

    def observe(self, m, e, before, after):
        if e.kind == "cut":
            return tuple(k for k in m if k[0] != e.conn), None
        if e.kind == "drop":
            if e.dir == C2A and e.msg.kind == "prompt":
                return tuple(k for k in m if k != (e.conn, e.msg.rid)), None
            return m, None
        if e.dir == C2A:
            if e.msg.kind == "prompt" and not e.lost:
                return tuple(sorted(m + ((e.conn, e.msg.rid),))), None
            return m, None
        if e.msg.kind in ("prompt_result", "prompt_result_v1", "error_response", "generic_result"):
            return tuple(k for k in m if k != (e.conn, e.msg.rid)), None
        return m, None

    def at_rest(self, m, world):
        if m:
            conn, rid = m[0]
            return f"prompt #{rid} on {_conn(conn)} reached the agent and was never answered"
        return None


class ResponseNotHeldForWorkEnd(Monitor):
    name = "ResponseNotHeldForWorkEnd"
    rules = ("P2", "S1")
    description = "the prompt response does not wait for the end of the work (insertion is the acknowledgement)"
    kinds = frozenset({"held_response"})

    def observe(self, m, e, before, after):
        return m, f"the response to prompt #{e.sub[2]} on {_conn(e.sub[:2])} was held until its work ended"


class OutcomeVisible(Monitor):
    name = "OutcomeVisible"
    rules = ("E3", "E13", "N2", "S15")
    description = "at rest a client that lost nothing knows how the last foreground work ended"
    kinds = frozenset({"work_end", "restart"})
    initial = None  # how the last work ended; RESTARTED after a restart (E10: nothing to tell)
    RESTARTED = "<restart>"

    def observe(self, m, e, before, after):
        return (self.RESTARTED if e.kind == "restart" else e.reason), None

    def at_rest(self, m, world):
        if m == self.RESTARTED:
            return None
        for c, client in enumerate(world.clients):
            if client.up and client.view in ("live", "replayed", "resumed") and client.last_stop != m:
                return f"the last work ended {m!r} but client c{c + 1} believes {client.last_stop!r}"
        return None


class OneMessagePerSubmission(Monitor):
    name = "OneMessagePerSubmission"
    rules = ("U2", "P9", "U9")
    description = "at rest each client shows one message per ID and no leftover copy of an accepted prompt"

    def at_rest(self, m, world):
        for c, client in enumerate(world.clients):
            mids = [item.mid for item in client.feed if item.mid is not None]
            if len(mids) != len(set(mids)):
                dup = next(x for x in mids if mids.count(x) > 1)
                return f"client c{c + 1} shows {dup} twice"
            for item in client.feed:
                if item.mid is None and client.subs[item.sub].status == "accepted":
                    return f"client c{c + 1} still shows a local copy of accepted prompt #{client.subs[item.sub].rid}"
        return None


class ViewMatchesHistory(Monitor):
    name = "ViewMatchesHistory"
    rules = ("U4", "U5", "U6", "U7", "R7")
    description = "at rest a client that lost nothing renders each message as the agent holds it"

    def at_rest(self, m, world):
        for c, client in enumerate(world.clients):
            if not client.up or client.view not in ("live", "replayed"):
                continue
            for entry in world.agent.history:
                if client.view == "replayed" and not entry.retained:
                    continue
                shown = [item.content for item in client.feed if item.mid == entry.mid]
                if shown != [entry.content]:
                    return f"client c{c + 1} shows {entry.mid} as {shown} but the agent holds {list(entry.content)}"
        return None


class StateViewMatches(Monitor):
    name = "StateViewMatches"
    rules = ("S13", "S2")
    description = "at rest a connected client that lost nothing shows the agent's foreground state"

    def at_rest(self, m, world):
        for c, client in enumerate(world.clients):
            if client.up and client.view in ("live", "replayed", "resumed") and client.fg != world.agent.fg:
                return f"client c{c + 1} shows {client.fg!r} but the agent is {world.agent.fg!r}"
        return None


ALL_MONITORS: tuple[Monitor, ...] = (
    SuccessOnlyAfterInsertion(),
    SuccessCarriesInsertedId(),
    DistinctMessageIds(),
    AcceptedMessageReportedLive(),
    ErrorResponseMeansNotInserted(),
    CancelRequestErrorOnlyBeforeInsertion(),
    WorkEndsWithOneIdle(),
    CancelledWorkEndsCancelled(),
    FailureEndsWithErrorIdle(),
    ToolCallsTerminalBeforeIdle(),
    ReplayKeepsIds(),
    ReplayResetsBeforeChunks(),
    CommandsNeverReexecuted(),
    ClientNeverGuesses(),
    BindingsMatchTruth(),
    EveryPromptAnswered(),
    ResponseNotHeldForWorkEnd(),
    OneMessagePerSubmission(),
    ViewMatchesHistory(),
    StateViewMatches(),
    OutcomeVisible(),
)
