"""Cancellation and close: C7, C9, C11, C14, C16, G6 (v2), and C7, C9 for v1 turns.

``session/cancel`` stops the session's foreground work, which ends with an
idle ``cancelled`` (C7), never with ``error`` (C9: abort exceptions are
caught).  Permission requests of cancelled work are not approved (C11, C16).
``session/close`` behaves like a cancel, answers only after the final
updates and the cancelled idle, and is followed by silence (C14; the close
also stops listed background work, G6, so nothing of it follows either).
"""

from __future__ import annotations

from ..rule_monitor import BOTH, NO_STAMP, ONLY_V1, Monitor, conn_name, obligation, violation, warning
from .common import A2C, C2A, FINAL_TOOL, drop_conn, error_code, is_success, stop_reason


def _busy(state) -> bool:
    """Foreground work is reported active: running, requires_action or a custom state (not ``unknown``)."""
    return isinstance(state, str) and state not in ("idle", "unknown")


class CancelEndsWithCancelled(Monitor):
    """C7, C9: a ``session/cancel`` of active work ends it with ``idle`` ``stopReason: "cancelled"``.

    Active means the cancelling connection last saw ``running``,
    ``requires_action`` or a custom state.  The next ending idle there:

    * ``cancelled``: as required;
    * ``error``: a violation of C9 (an abort is reported as ``cancelled``;
      the catalogue's proxy: after a cancel of active work the ending idle is
      not ``error``) when the agent provably had the cancel (the FIFO proof
      below, the model, whose recorder sits at the agent, or a sidecar's
      ``fail`` event with ``aborting``: the agent says the failure was raised
      while aborting the cancelled work, C9's own case); in a capture
      without that proof a warning: the work may have failed before the
      cancel reached the agent (the idle crossed it in flight);
    * another reason: a warning (the work may have ended before the agent
      processed the cancel), unless the agent had answered, before that
      idle, a request the client sent after the cancel on the same
      connection: the connection is FIFO, so the agent had the cancel while
      the work ran, and the traffic leaves no conforming reading (a
      violation);
    * none before the run ends: an obligation.

    A cancel while idle needs no idle; an extra ``cancelled`` idle after it
    reads as a second ending (:class:`~.foreground.SnapshotsAreIdempotent`
    warns about it under S14 and C7).
    """

    name = "CancelEndsWithCancelled"
    rules = ("C7", "C9")
    description = "work stopped by session/cancel ends with idle stopReason cancelled, never error"
    keys = ("note:session/cancel",)
    armed = {"upd:state_update": ("active",), "res": ("active",), "close": ("active",), "int:fail": ("active",)}
    events = ("fail",)
    #: ``proven``: (conn, session) -> the stamp of what proves the agent had the cancel there (a response to a
    #: request sent after it, or an internal failure raised while aborting)
    fields = {"active": dict, "proven": dict}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.active, o.conn)
            drop_conn(b.proven, o.conn)
            return None
        if o.kind == "internal":
            if o.event == "fail" and o.data.get("aborting") is True:
                sid = o.data.get("session")
                for k in b.active:
                    if k[1] == sid and k not in b.proven:
                        b.proven[k] = o.stamp
            return None
        key = (o.conn, o.sid)
        if o.shape == "response":
            if o.answers == "session/close":
                if is_success(o.msg):
                    b.active.pop(key, None)
                    b.proven.pop(key, None)
            elif o.dir == A2C and o.req is not None:
                for k, stamp in b.active.items():
                    if k[0] == o.conn and stamp < o.req[1] and k not in b.proven:
                        b.proven[k] = o.stamp
            return None
        if o.method == "session/cancel":
            if o.dir == C2A and o.sid is not None and _busy(o.fg):
                b.active.setdefault(key, o.stamp)
            return None
        if o.dir == C2A:
            return None
        if o.ending and key in b.active:
            stamp = b.active.pop(key)
            proof = b.proven.pop(key, None)
            reason = stop_reason(o.update)
            where = f"work cancelled on {conn_name(o.conn)}"
            if reason == "error" and (proof is not None or o.stamp == NO_STAMP):
                return [violation(("C9",), f"{where} ended with stopReason error: an abort is reported as "
                                           "cancelled", stamp, *(() if proof is None else (proof,)), o.stamp)]
            if reason == "error":
                return [warning(("C9",), f"{where} ended with stopReason error, not cancelled (unless the work had "
                                         "failed before the cancel reached the agent: nothing in the capture orders "
                                         "them)", stamp, o.stamp)]
            if reason != "cancelled" and proof is not None:
                return [violation(("C7",), f"{where} ended with stopReason {reason!r}, not cancelled, although the "
                                           "agent had answered a request sent after the cancel before it (the "
                                           "connection is in order: it had the cancel)", stamp, proof, o.stamp)]
            if reason != "cancelled":
                return [warning(("C7",), f"{where} ended with stopReason {reason!r}, not cancelled (unless it "
                                         "had ended before the cancel was processed)", stamp, o.stamp)]
        return None

    def end(self, b, complete, front=None):
        return [obligation(("C7",), f"work cancelled on {conn_name(conn)} ({sid}) never ended with idle cancelled",
                           stamp)
                for (conn, sid), stamp in sorted(b.active.items(), key=lambda kv: repr(kv[0]))]


class CloseEndsQuietly(Monitor):
    """C14, G6: ``session/close`` ends active work before its response, and nothing follows it.

    If the connection showed active work at the close, the idle that ends it
    (``cancelled``, or another reason if the work ended by itself meanwhile)
    comes before the close's success (or ``-32002``, which counts as one).
    After that response the agent sends nothing more for the session on that
    connection: no updates, no requests (prompt responses are exempt; they may
    follow).  Prompts pending at the close end with success or ``-32800``;
    another error is a warning.  A later ``session/resume`` re-attaches.
    """

    name = "CloseEndsQuietly"
    rules = ("C14", "G6")
    description = "session/close ends active work with a cancelled idle first, and is followed by silence"
    keys = ("req:session/close",)
    armed = {"res:session/close": ("closing",), "res:session/prompt": ("held",), "upd": ("closing", "closed"),
             "req": ("closed",), "close": ("closing", "closed", "held")}
    fields = {"closing": dict, "closed": dict, "held": dict}

    def on(self, b, o):
        if o.kind == "close":
            for table in (b.closing, b.closed, b.held):
                drop_conn(table, o.conn)
            return None
        if o.dir == A2C and o.shape in ("request", "notification"):
            return self._after(b, o)
        key = (o.conn, o.sid)
        if o.answers == "session/prompt":
            stamp = b.held.pop((o.conn, o.rid), None)
            if stamp is not None and "error" in o.msg and error_code(o.msg) != -32800:
                return [warning(("C14",), f"session/prompt #{o.rid} on {conn_name(o.conn)}, pending at session/close, "
                                          f"is answered with {error_code(o.msg)}, not -32800", stamp, o.stamp)]
            return None
        if o.sid is None:
            return None
        if o.method == "session/resume":
            b.closed.pop(key, None)
        elif o.method == "session/close":
            b.closing[key] = (o.stamp, _busy(o.fg), False)
            for prompt in o.data or ():
                b.held.setdefault(prompt, o.stamp)
        elif o.answers == "session/close":
            closing = b.closing.pop(key, None)
            if closing is None or not (is_success(o.msg) or error_code(o.msg) == -32002):
                return None
            b.closed[key] = o.stamp
            stamp, busy, saw = closing
            if busy and not saw:
                return [violation(("C14",), f"session/close on {conn_name(o.conn)} is answered while work was "
                                            "active and before its cancelled idle", stamp, o.stamp)]
        return None

    def _after(self, b, o):
        key = (o.conn, o.sid)
        closing = b.closing.get(key)
        if closing is not None and o.ending:  # cancelled, or work that ended by itself meanwhile
            b.closing[key] = closing[:2] + (True,)
        stamp = b.closed.get(key)
        if stamp is None:
            return None
        what = o.utype if o.utype else o.method
        return [violation(("C14", "G6"), f"{what} for {o.sid} on {conn_name(o.conn)} after the session/close "
                                         "response: nothing more may be sent for a closed session", stamp, o.stamp)]


class V1CancelEndsTurnCancelled(Monitor):
    """C9, C7 (v1): after ``session/cancel`` the pending v1 prompt ends with ``stopReason: "cancelled"``.

    In v1 the prompt's response ends the turn, so an abort that escapes as a
    JSON-RPC error breaks C9 when the agent provably had the cancel (as in
    :class:`CancelEndsWithCancelled`: it answered, before the error, a request
    sent after the cancel on that connection; or the model's agent-side
    order), else a warning (the turn may have failed before the cancel
    reached the agent); another stop reason is a warning (the turn may have
    ended before the cancel was processed).
    """

    name = "V1CancelEndsTurnCancelled"
    rules = ("C9", "C7")
    description = "v1: a turn cancelled with session/cancel answers its prompt with stopReason cancelled"
    keys = ("note:session/cancel",)
    armed = {"res": ("hit",), "close": ("hit",)}
    dialects = ONLY_V1
    #: ``hit``: (conn, prompt id) -> the stamp of the cancel that found it pending; ``proven``: those whose agent
    #: answered a later request first (FIFO: it had read the cancel)
    fields = {"hit": dict, "proven": set}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.hit, o.conn)
            drop_conn(b.proven, o.conn)
            return None
        if o.shape == "notification":
            if o.dir == C2A:
                for prompt in o.data or ():
                    b.hit.setdefault(prompt, o.stamp)
            return None
        if o.answers != "session/prompt":
            if o.dir == A2C and o.req is not None:
                b.proven.update(k for k, stamp in b.hit.items() if k[0] == o.conn and stamp < o.req[1])
            return None
        stamp = b.hit.pop((o.conn, o.rid), None)
        proven = (o.conn, o.rid) in b.proven or o.stamp == NO_STAMP
        b.proven.discard((o.conn, o.rid))
        if stamp is None:
            return None
        where = f"v1 prompt #{o.rid} on {conn_name(o.conn)}, cancelled,"
        if "error" in o.msg and not proven:
            return [warning(("C9",), f"{where} is answered with error {error_code(o.msg)} (unless the turn had "
                                     "failed before the cancel reached the agent: nothing in the capture orders "
                                     "them)", stamp, o.stamp)]
        if "error" in o.msg:
            return [violation(("C9",), f"{where} is answered with error {error_code(o.msg)}: an abort is reported "
                                       "as stopReason cancelled", stamp, o.stamp)]
        result = o.msg.get("result")
        reason = result.get("stopReason") if isinstance(result, dict) else None
        if reason != "cancelled":
            return [warning(("C7",), f"{where} ends with stopReason {reason!r}", stamp, o.stamp)]
        return None


class PermissionsNotApprovedAfterCancel(Monitor):
    """C11, C16: a permission of cancelled work, or answered with an unknown outcome, is not approval.

    At ``session/cancel`` the agent stops waiting for the session's pending
    ``session/request_permission`` requests and treats them as not approved
    (C11); it should withdraw each with ``$/cancel_request`` before the
    cancelled idle (a warning when it neither withdrew it nor got an answer).
    An outcome other than ``selected`` or ``cancelled``, or an ``optionId``
    that was not offered, is not approval either (C16).  In both cases the
    tool call the request was about must not go ``in_progress`` or
    ``completed`` afterwards (unless a new permission request for it was
    made); that would be a violation.
    """

    name = "PermissionsNotApprovedAfterCancel"
    rules = ("C11", "C16")
    description = "a permission pending at a cancel, or answered with an unknown outcome, is never approval"
    keys = ("req:session/request_permission", "note:session/cancel")
    armed = {"res:session/request_permission": ("perms",), "note:$/cancel_request": ("cancelled",),
             "upd:tool_call_update": ("watch",), "upd:state_update": ("cancelled",), "close": ("perms", "cancelled")}
    dialects = BOTH
    fields = {"perms": dict, "cancelled": dict, "watch": dict}

    def on(self, b, o):
        if o.kind == "close":
            for table in (b.perms, b.cancelled):
                drop_conn(table, o.conn)
            return None
        if o.shape == "request":
            if o.dir == A2C and o.sid is not None:
                tool, options = _subject(o)
                b.perms[(o.conn, o.rid)] = (o.sid, tool, options, o.stamp)
                b.watch.pop((o.sid, tool), None)
            return None
        if o.shape == "response":
            return self._answered(b, o)
        if o.method == "session/cancel":
            if o.dir == C2A:
                for k, (sid, tool, _opts, _s) in b.perms.items():
                    if sid == o.sid:
                        b.cancelled.setdefault(k, (sid, o.stamp, False))
                        if tool is not None:
                            b.watch[(sid, tool)] = ("C11", o.stamp)
            return None
        if o.method == "$/cancel_request":
            rid = o.params.get("requestId") if o.params is not None else None
            hit = b.cancelled.get((o.conn, rid)) if o.dir == A2C else None
            if hit is not None:
                b.cancelled[(o.conn, rid)] = hit[:2] + (True,)
            return None
        if o.utype == "tool_call_update":
            return self._tool(b, o)
        if o.ending and stop_reason(o.update) == "cancelled":
            out = []
            for k, (sid, stamp, withdrawn) in sorted(b.cancelled.items(), key=lambda kv: repr(kv[0])):
                if k[0] == o.conn and sid == o.sid:
                    del b.cancelled[k]
                    if not withdrawn and k in b.perms:
                        out.append(warning(("C11",), f"permission request #{k[1]} on {conn_name(o.conn)} was pending "
                                                     "at session/cancel and was not withdrawn with $/cancel_request",
                                           stamp, o.stamp))
            return out
        return None

    def _answered(self, b, o):
        perm = b.perms.pop((o.conn, o.rid), None)
        if perm is None or "result" not in o.msg:
            return None
        sid, tool, options, _stamp = perm
        result = o.msg["result"]
        outcome = result.get("outcome") if isinstance(result, dict) else None
        kind = outcome.get("outcome") if isinstance(outcome, dict) else None
        option = outcome.get("optionId") if isinstance(outcome, dict) else None
        if kind == "cancelled" or tool is None:
            return None
        if kind != "selected" or option not in options:
            b.watch[(sid, tool)] = ("C16", o.stamp)
        return None

    def _tool(self, b, o):
        tool = o.update.get("toolCallId")
        watch = b.watch.get((o.sid, tool)) if isinstance(tool, str) else None
        status = o.update.get("status")
        if watch is None or status is None:
            return None
        del b.watch[(o.sid, tool)]
        if status in ("in_progress", "completed"):
            rule, stamp = watch
            why = "was pending at session/cancel" if rule == "C11" else "was answered with an unknown outcome"
            return [violation((rule,), f"tool call {tool} goes {status} on {conn_name(o.conn)} although its "
                                       f"permission {why}: that is not approval", stamp, o.stamp)]
        if status not in FINAL_TOOL:
            b.watch[(o.sid, tool)] = watch
        return None

    def end(self, b, complete, front=None):
        return [obligation(("C11",), f"permission request #{rid} on {conn_name(conn)}, pending at session/cancel, "
                                     "was never answered", stamp)
                for (conn, rid), (_sid, stamp, _w) in sorted(b.cancelled.items(), key=lambda kv: repr(kv[0]))
                if (conn, rid) in b.perms]


def _subject(o) -> tuple:
    """(toolCallId, offered optionIds) of a permission request (v2 ``subject.toolCall``, v1 ``toolCall``)."""
    p = o.params or {}
    subject = p.get("subject") if isinstance(p.get("subject"), dict) else p
    call = subject.get("toolCall") if isinstance(subject, dict) else None
    tool = call.get("toolCallId") if isinstance(call, dict) else None
    options = p.get("options")
    ids = tuple(x.get("optionId") for x in options if isinstance(x, dict)) if isinstance(options, list) else ()
    return (tool if isinstance(tool, str) else None, ids)
