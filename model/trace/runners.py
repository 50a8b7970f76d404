"""Runners: how the trace checker feeds one property with recorded messages.

A runner wraps one property: ``on_send(event, rec)`` and ``at_end()`` return
lists of ``(sentence, [seq, ...])``; ``on_cut(conn)`` closes a connection.
``_Generic`` runs a model monitor unchanged; the ``_Fast`` classes are
streaming re-implementations of four wire monitors (same name, rules and
sentences, held equal by a differential test), because the model's
monitors keep sorted tuples that make each step O(n) on long captures; the
v1 and P19 monitors exist only for traces.
"""

from __future__ import annotations

from acplab.model.acp.events import A2C, C2A, Cut
from acplab.model.acp.monitors import TERMINAL_TOOL, Monitor
from acplab.model.wire.capture import conn_label as _conn
from acplab.model.wire.values import V1_STOP_REASONS


# A runner wraps one property: on_send(event, rec) and at_end() return lists of
# (sentence, [seq, ...]); on_cut(conn) closes a connection.


class _Generic:
    """A model monitor run unchanged (immutable bookkeeping, worlds passed as None)."""

    def __init__(self, monitor: Monitor) -> None:
        self.name, self.rules, self.description = monitor.name, monitor.rules, monitor.description
        self.m = monitor
        self.state = monitor.initial
        self.sends = "send" in monitor.kinds
        self.cuts = "cut" in monitor.kinds

    def on_send(self, e, rec):
        if not self.sends:
            return ()
        self.state, bad = self.m.observe(self.state, e, None, None)
        return [(bad, [rec.seq])] if bad else ()

    def on_cut(self, conn):
        if self.cuts:
            self.state, _ = self.m.observe(self.state, Cut(conn), None, None)

    def at_end(self):
        bad = self.m.at_rest(self.state, None)
        return [(bad, [])] if bad else ()


class _Fast:
    """Base of the streaming re-implementations: same name, rules and sentences as the monitor."""

    def __init__(self, monitor: Monitor) -> None:
        self.name, self.rules, self.description = monitor.name, monitor.rules, monitor.description

    def on_send(self, e, rec):
        return ()

    def on_cut(self, conn):
        pass

    def at_end(self):
        return ()


def _update(e, *kinds):
    if e.dir != A2C or e.msg.kind != "update":
        return None
    u = e.msg.update
    return u if u.kind in kinds else None


class _DistinctMessageIds(_Fast):
    def __init__(self, monitor):
        super().__init__(monitor)
        self.first: dict[str, int] = {}  # messageId -> seq of the success that returned it

    def on_send(self, e, rec):
        if e.dir != A2C or e.msg.kind != "prompt_result" or e.msg.message_id is None:
            return ()
        mid = e.msg.message_id
        if mid in self.first:
            return [(f"response #{e.msg.rid} on {_conn(e.conn)} returns {mid}, already returned for another submission",
                     [self.first[mid], rec.seq])]
        self.first[mid] = rec.seq
        return ()


class _AcceptedMessageReportedLive(_Fast):
    def __init__(self, monitor):
        super().__init__(monitor)
        self.awaiting: dict[tuple, int] = {}  # (conn, mid) -> seq of the success
        self.reported: set[tuple] = set()

    def on_cut(self, conn):
        for key in [k for k in self.awaiting if k[0] == conn]:
            del self.awaiting[key]

    def on_send(self, e, rec):
        if e.dir == A2C and e.msg.kind == "prompt_result" and e.msg.message_id is not None:
            key = (e.conn, e.msg.message_id)
            if key not in self.reported:
                self.awaiting.setdefault(key, rec.seq)
            return ()
        u = _update(e, "user_message", "user_message_chunk")
        if u is not None:
            key = (e.conn, u.message_id)
            if key not in self.reported:
                self.awaiting.pop(key, None)
                self.reported.add(key)
        return ()

    def at_end(self):
        return [(f"{mid} was accepted on {_conn(conn)} but never reported there with user_message", [seq])
                for (conn, mid), seq in sorted(self.awaiting.items(), key=lambda kv: kv[1])]


class _ToolCallsTerminalBeforeIdle(_Fast):
    def __init__(self, monitor):
        super().__init__(monitor)
        self.open: dict = {}  # conn -> {toolCallId: seq of the update that left it open}

    def on_send(self, e, rec):
        u = _update(e, "tool_call_update", "state_update")
        if u is None:
            return ()
        calls = self.open.setdefault(e.conn, {})
        if u.kind == "tool_call_update":
            calls.pop(u.tool_call_id, None)
            if u.status not in TERMINAL_TOOL:
                calls[u.tool_call_id] = rec.seq
            return ()
        if u.state == "idle" and u.stop_reason is not None and calls:
            first = min(calls)
            return [(f"idle {u.stop_reason} on {_conn(e.conn)} while tool call {first} is unfinished",
                     [calls[first], rec.seq])]
        return ()


class _ReplayResetsBeforeChunks(_Fast):
    def __init__(self, monitor):
        super().__init__(monitor)
        self.windows: dict = {}  # conn -> (seq of the resume, set of reset messageIds)

    def on_send(self, e, rec):
        if e.dir == C2A:
            if e.msg.kind == "resume" and e.msg.replay_from == "start":
                self.windows[e.conn] = (rec.seq, set())
            return ()
        window = self.windows.get(e.conn)
        if window is None:
            return ()
        if e.msg.kind in ("resume_result", "error_response"):
            del self.windows[e.conn]
            return ()
        u = _update(e, "user_message", "user_message_chunk")
        if u is None:
            return ()
        if u.kind == "user_message":
            if u.content is not None:
                window[1].add(u.message_id)
            return ()
        if u.message_id not in window[1]:
            return [(f"replay on {_conn(e.conn)} streams {u.message_id} as chunks without a user_message content [] first",
                     [window[0], rec.seq])]
        return ()


_FAST = {
    "DistinctMessageIds": _DistinctMessageIds,
    "AcceptedMessageReportedLive": _AcceptedMessageReportedLive,
    "ToolCallsTerminalBeforeIdle": _ToolCallsTerminalBeforeIdle,
    "ReplayResetsBeforeChunks": _ReplayResetsBeforeChunks,
}


# --------------------------------------------------------------------------- trace-only monitors


class _TraceMonitor(_Fast):
    name = ""
    rules: tuple[str, ...] = ()
    description = ""

    def __init__(self) -> None:
        pass


class V1EveryPromptAnsweredOnce(_TraceMonitor):
    """v1: each session/prompt gets exactly one response, a result with stopReason or an error."""

    name = "V1EveryPromptAnsweredOnce"
    rules = ("W14", "B6")
    description = "v1: each session/prompt gets exactly one response (a result with stopReason, or an error)"
    RECENT = 1024

    def __init__(self) -> None:
        self.pending: dict = {}  # (conn, rid) -> seq of the prompt
        self.answered: dict = {}  # (conn, rid) -> seq of its response (the last RECENT)

    def on_send(self, e, rec):
        k = e.msg.kind
        if e.dir == C2A and k == "prompt":
            self.pending[(e.conn, e.msg.rid)] = rec.seq
            self.answered.pop((e.conn, e.msg.rid), None)
            return ()
        if e.dir != A2C or k not in ("prompt_result_v1", "prompt_result", "error_response", "generic_result"):
            return ()
        key = (e.conn, e.msg.rid)
        if key in self.pending:
            if k == "prompt_result":  # only with a v2 decoder: not a v1 response
                return ()
            self.answered[key] = rec.seq
            if len(self.answered) > self.RECENT:
                del self.answered[next(iter(self.answered))]
            return self._done(key)
        if key in self.answered:
            return [(f"session/prompt #{e.msg.rid} on {_conn(e.conn)} is answered a second time",
                     [self.answered[key], rec.seq])]
        return ()

    def _done(self, key):
        del self.pending[key]
        return ()

    def at_end(self):
        return [(f"session/prompt #{rid} on {_conn(conn)} never got a response", [seq])
                for (conn, rid), seq in sorted(self.pending.items(), key=lambda kv: kv[1])]


class V1StopReasonClosedEnum(_TraceMonitor):
    name = "V1StopReasonClosedEnum"
    rules = ("W14",)
    description = "v1: stopReason is one of the five v1 values (no error, no custom values)"

    def on_send(self, e, rec):
        if e.dir == A2C and e.msg.kind == "prompt_result_v1" and e.msg.stop_reason not in V1_STOP_REASONS:
            return [(f"response #{e.msg.rid} on {_conn(e.conn)} ends the turn with stopReason "
                     f"{e.msg.stop_reason!r}, not one of {', '.join(V1_STOP_REASONS)}", [rec.seq])]
        return ()


class RequestIdsUniqueWhilePending(_TraceMonitor):
    """P19: fed by the request tracker, not by events (see ``_Checker``)."""

    name = "RequestIdsUniqueWhilePending"
    rules = ("P19",)
    description = "a sender never reuses a JSON-RPC id while its request with that id is pending"
