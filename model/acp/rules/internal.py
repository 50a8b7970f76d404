"""Rules that need internal events: insertion (P3, P7, U3, E1, E2, C1, C4, P1), IDs (P5), work (S2, S3, E3),
cancellation routing (C3), retention (R5), command execution (R9) and a client's correlation (P9, R11, U2).

In the model these events come from the agent and the clients (see
:mod:`..rules_in_model`).  For recorded traffic they come from a sidecar that an
instrumented adapter or client writes next to the capture (``acplab trace
check CAPTURE --internal EVENTS.jsonl``; the format is in the README).  The
vocabulary, one JSON object per event, each with ``after`` (the capture seq
it follows):

* ``insert``: ``session``, ``messageId``, ``conn`` and ``request`` (the
  prompt that inserted it; absent for imported messages), ``retained``;
  a message inserted with a request while work runs joins that work, else
  it starts the next (the model's reading; the RFD leaves it open);
* ``assign``: ``session``, ``messageId``, ``conn``, ``request`` (an ID the
  adapter assigned to a held prompt before inserting it: not evidence of
  insertion, P7, but never to be given to another submission, P5);
* ``reject``: ``conn``, ``request`` (rejected before insertion), and
  ``cancelled_by`` (a connection) when a ``$/cancel_request`` withdrew it;
* ``work_start`` / ``work_end``: ``session`` (and on ``work_end``:
  ``reason``, the stop reason the work ended with, and ``background``, the
  tool calls and terminals that go on as background work: with it, nothing
  else of the ended work may follow its idle);
* ``fail``: ``session``, ``after_insertion`` (a failure of the running work),
  ``aborting`` (raised while aborting cancelled work: C9 reports it as
  ``cancelled``);
* ``forget``: ``session``, ``messageId`` (no longer retained); ``restart``
  (the agent process restarted: live-only history is gone);
* ``execute``: ``session``, ``messageId`` (a local command ran);
* ``bind``: ``conn``, ``request``, ``messageId``, ``how`` (a *client* linked
  its submission to a message: ``response``, ``content`` or ``order``).
"""

from __future__ import annotations

from ..rule_monitor import BOTH, INTERNAL, NO_STAMP, WIRE, Finding, Monitor, conn_name, obligation, violation
from .common import (C2A, MESSAGE_UPDATES, USER_UPDATES, bound, drop_conn, error_code, is_live, is_success, message_id,
                     stop_reason)

_BOTH_NEEDS = frozenset({WIRE, INTERNAL})


class ResponsesFollowInsertion(Monitor):
    """P3, P7, U3, E1, E2, C1: a prompt succeeds only after its insertion, under the inserted ID; an
    inserted prompt is never answered with an error (``-32800`` included, C1); a live user-message
    report names an inserted message (U3: a report under any other ID belongs to no submission).

    The sidecar must record every insertion of the session from the capture's start (replayed
    history is not judged)."""

    name = "ResponsesFollowInsertion"
    rules = ("P3", "P7", "U3", "E1", "E2", "C1")
    description = "success only after insertion and under the inserted ID; reports under it; no error once inserted"
    keys = ("int:insert", "int:restart", "res:session/prompt", "close") + USER_UPDATES
    dialects = BOTH
    needs = _BOTH_NEEDS
    events = ("insert",)
    fields = {"inserted": dict, "ids": set}
    LIMIT = 1 << 16

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.inserted, o.conn)
            return None
        if o.kind == "internal":
            if o.event == "restart":
                b.inserted.clear()  # the IDs stay: retained messages come back under them (R5)
                return None
            b.ids.add((o.data.get("session"), o.data.get("messageId")))
            if len(b.ids) > self.LIMIT:  # a heuristic's bound on a long capture; never reached by the model
                b.ids.clear()
            if o.data.get("conn") is not None and o.data.get("request") is not None and not o.stale:
                b.inserted[(o.data["conn"], o.data["request"])] = (o.data.get("messageId"), o.stamp)
            return None
        if o.shape != "response":
            mid = message_id(o.update)
            if mid is None or o.sid is None or o.dir == C2A or not is_live(o) or (o.sid, mid) in b.ids or not b.ids:
                return None
            return [violation(("U3",), f"{o.utype} on {conn_name(o.conn)} reports {mid}, which is not the ID of "
                                       "any inserted message", o.stamp)]
        got = b.inserted.pop((o.conn, o.rid), None)
        where = f"session/prompt #{o.rid} on {conn_name(o.conn)}"
        if is_success(o.msg):
            if got is None:
                return [violation(("P3", "P7"), f"{where} succeeds before its message was inserted", o.stamp)]
            result = o.msg["result"]
            mid = result.get("messageId") if isinstance(result, dict) else None
            if isinstance(mid, str) and mid != got[0]:
                return [violation(("U3",), f"{where} returns {mid}, but its message was inserted as {got[0]}",
                                  got[1], o.stamp)]
            return None
        if got is not None:
            code = error_code(o.msg)
            rules = ("C1", "E1") if code == -32800 else ("E1", "E2")
            return [violation(rules, f"{where} is answered with error {code}, but its message was inserted as "
                                     f"{got[0]}", got[1], o.stamp)]
        return None


class InsertedIdsDistinct(Monitor):
    """P5 (exact, from ``insert`` and ``assign``): an ID given to one submission is never given to another.

    The wire version (:class:`~.prompts.MessageIdsDistinct`) sees only the
    IDs that successes carried; this one sees every insertion, including
    those whose success was lost with its connection, and every ID assigned
    before insertion: one assigned to a prompt that was then rejected or
    withdrawn retires with it (P16: nothing of a rejected submission
    surfaces), so it may not name the next message either.
    """

    name = "InsertedIdsDistinct"
    rules = ("P5",)
    description = "every submission gets its own messageId, never given to another (not even a retired one)"
    keys = ("int:insert", "int:assign")
    dialects = BOTH
    needs = frozenset({INTERNAL})
    events = ("insert", "assign")
    fields = {"ids": dict}

    def on(self, b, o):
        key = (o.data.get("session"), o.data.get("messageId"))
        owner = (o.data.get("conn"), o.data.get("request"))
        first = b.ids.get(key)
        if first is not None and first[0] != owner:
            was = _owner(first[0])
            now = _owner(owner)
            verb = "assigned" if o.event == "assign" else "inserted"
            return [violation(self.rules, f"message ID {key[1]} {verb} for {now} was already given to {was}",
                              first[1], o.stamp)]
        b.ids.setdefault(key, (owner, o.stamp))
        return None


def _owner(owner) -> str:
    conn, request = owner
    return "an imported message" if conn is None else f"session/prompt #{request} on {conn_name(conn)}"


class WorkReportedByState(Monitor):
    """S2, S3, S5, E3: every piece of foreground work ends with one idle that names how it ended.

    From ``work_start`` / ``work_end`` (and ``fail``): when work ends, an
    ending idle of the session (on any attached connection) reports it with
    the same stop reason; a failure after insertion ends it as ``error``
    (E3: a MUST, so an idle without a stop reason after a failure, or none
    at all, is a violation); a failure raised while aborting cancelled work
    is exempt (C9: it ends ``cancelled``); work does not start again while
    the last end went unreported.  With no connection attached there is
    nobody to tell (E10).  Another ending idle without a stop reason takes
    the preset's S5 level.  An idle on a connection whose state the wire has
    not shown yet (one attached by a resume served in steps, before its
    snapshot) reports the end too: to that connection it is a first state,
    not an ending, but it names how the work ended.  A successful
    ``session/close`` detaches its connection (C14): work that ends after
    it has nobody there to tell.
    """

    name = "WorkReportedByState"
    rules = ("S2", "S3", "S5", "E3")
    description = "foreground work that started ends with exactly one idle carrying its stop reason"
    keys = ("int:work_start", "int:work_end", "int:fail", "int:restart", "upd:state_update", "close",
            "res:session/close:ok")
    dialects = BOTH
    needs = _BOTH_NEEDS
    events = ("work_start", "work_end", "fail")
    fields = {"working": dict, "ended": dict, "awaiting": dict, "failed": dict, "attached": set}

    def on(self, b, o):
        if o.kind == "close":
            for k in [k for k in b.attached if k[1] == o.conn]:
                b.attached.discard(k)
            return None
        if o.kind == "msg":
            if o.answers == "session/close":
                b.attached.discard((o.sid, o.conn))
                return None
            if o.dir != C2A and o.sid is not None:
                b.attached.add((o.sid, o.conn))
                if o.ending or o.fg is None and o.utype == "state_update" and o.update.get("state") == "idle":
                    return self._idle(b, o)
            return None
        sid = o.data.get("session")
        if o.event == "restart":
            for table in (b.working, b.ended, b.awaiting, b.failed):
                table.clear()
            return None
        if o.event == "fail":
            # a failure raised while aborting cancelled work is reported as cancelled (C9), not as E3's error
            if o.data.get("after_insertion", True) and not o.data.get("aborting", False):
                b.failed[sid] = o.stamp
            return None
        if o.event == "work_start":
            out = None
            late = b.awaiting.pop(sid, None)
            if late is not None:
                out = [violation(("S2",), f"work started again in {sid} while the end of the last ({late[0]}) was "
                                          "never reported with idle", late[1], o.stamp)]
            b.working[sid] = o.stamp
            b.ended.pop(sid, None)
            return out
        return self._work_end(b, o, sid)

    def _work_end(self, b, o, sid):
        reason = o.data.get("reason")
        b.working.pop(sid, None)
        out = []
        failed = b.failed.pop(sid, None)
        if failed is not None and reason != "error":
            out.append(violation(("E3",), f"work in {sid} failed after insertion but ended as {reason!r}",
                                 failed, o.stamp))
        if sid in b.ended:
            reported, stamp = b.ended.pop(sid)
            out += self._compare(reason, reported, stamp, o.stamp, sid)
        elif any(s == sid for s, _c in b.attached):
            b.awaiting[sid] = (reason, o.stamp)
        return out

    def _idle(self, b, o):
        reported = stop_reason(o.update)
        late = b.awaiting.pop(o.sid, None)
        if late is not None:
            return self._compare(late[0], reported, o.stamp, late[1], o.sid)
        if o.sid in b.working and o.sid not in b.ended:
            b.ended[o.sid] = (reported, o.stamp)
        return None

    def _compare(self, reason, reported, *stamps_and_sid):
        *stamps, sid = stamps_and_sid
        if reported is None and reason == "error":
            return [violation(("E3", "S5"), f"work in {sid} failed and ended with an idle that names no stop "
                                            "reason: a failure ends with stopReason error", *stamps)]
        if reported is None:
            return [Finding(self.switches.idle_stop_reason, ("S5",),
                            f"work in {sid} ended ({reason}) with an idle that names no stop reason",
                            tuple(s for s in stamps if s not in (None, NO_STAMP)))]
        if reason is not None and reported != reason:
            return [violation(("S2", "E3"), f"work in {sid} ended {reason!r} but the idle reports {reported!r}",
                              *stamps)]
        return []

    def end(self, b, complete, front=None):
        out = [obligation(("S2", "S3"), f"work in {sid} ended ({reason}) and no idle reported it", stamp)
               for sid, (reason, stamp) in sorted(b.awaiting.items())]
        out += [obligation(("S3",), f"work in {sid} started and never ended", stamp)
                for sid, stamp in sorted(b.working.items())]
        return out


class HeldPromptsWithdrawnOnCancel(Monitor):
    """C4: ``session/cancel`` withdraws prompts held but not inserted: ``-32800``, never a later insertion."""

    name = "HeldPromptsWithdrawnOnCancel"
    rules = ("C4",)
    description = "session/cancel answers held, not yet inserted prompts with -32800"
    keys = ("int:insert", "req:session/prompt", "res:session/prompt", "note:session/cancel", "close")
    dialects = BOTH
    needs = _BOTH_NEEDS
    events = ("insert",)
    fields = {"pending": dict, "held": dict}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.pending, o.conn)
            drop_conn(b.held, o.conn)
            return None
        if o.kind == "internal":
            if o.stale:
                return None
            key = (o.data.get("conn"), o.data.get("request"))
            b.pending.pop(key, None)
            stamp = b.held.pop(key, None)
            if stamp is not None:
                return [violation(self.rules, f"session/prompt #{key[1]} on {conn_name(key[0])} was held at "
                                              "session/cancel and inserted afterwards; it must be withdrawn with "
                                              "-32800", stamp, o.stamp)]
            return None
        if o.shape == "request":
            b.pending[(o.conn, o.rid)] = o.sid
        elif o.shape == "response":
            b.pending.pop((o.conn, o.rid), None)
            b.held.pop((o.conn, o.rid), None)
        elif o.dir == C2A:
            for k, sid in b.pending.items():
                if sid == o.sid:
                    b.held.setdefault(k, o.stamp)
        return None


class CancelRequestMatchesSender(Monitor):
    """C3, P19: a ``$/cancel_request`` names an id its sender issued; it withdraws only the sender's request.

    JSON-RPC ids are chosen per connection (P19), so the same id may be
    pending on two connections.  From ``reject`` with ``cancelled_by``: a
    prompt withdrawn by another connection's cancel was matched by id alone.
    """

    name = "CancelRequestMatchesSender"
    rules = ("C3", "P19")
    description = "$/cancel_request withdraws only the sender's own request with that id"
    keys = ("int:reject",)
    dialects = BOTH
    needs = frozenset({INTERNAL})
    events = ("reject",)

    def on(self, b, o):
        by, conn = o.data.get("cancelled_by"), o.data.get("conn")
        if by is None or by == conn:
            return None
        request = o.data.get("request")
        return [violation(self.rules, f"session/prompt #{request} on {conn_name(conn)} was withdrawn by the "
                                      f"$/cancel_request of {conn_name(by)}: a cancel names the sender's own "
                                      "request", o.stamp)]


class RetainedMessagesReplayed(Monitor):
    """R5 (and R1's completeness): replay from the start carries every retained user message under its ID.

    Retention comes from ``insert`` (``retained``), ``forget`` and
    ``restart``; a message retained when the resume arrives must be among
    the user messages its replay reports.
    """

    name = "RetainedMessagesReplayed"
    rules = ("R5", "R1")
    description = "replay carries every retained user message under the ID it was inserted with"
    keys = ("int:insert", "int:forget", "req:session/resume", "res:session/resume")
    armed = dict.fromkeys(USER_UPDATES + ("close",), ("expected",))
    dialects = BOTH
    needs = _BOTH_NEEDS
    events = ("insert", "forget")
    fields = {"retained": dict, "expected": dict}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.expected, o.conn)
            return None
        if o.kind == "internal":
            key = (o.data.get("session"), o.data.get("messageId"))
            if o.event == "insert" and o.data.get("retained", True):
                b.retained[key] = o.stamp
            elif o.event == "forget":
                b.retained.pop(key, None)
            return None
        if o.shape == "request":
            if o.params is not None and isinstance(o.params.get("replayFrom"), dict) and \
                    o.params["replayFrom"].get("type") == "start":
                for (sid, mid), stamp in b.retained.items():
                    if sid == o.sid:
                        b.expected[(o.conn, sid, mid)] = stamp
            return None
        if o.shape == "response":
            missing = sorted((k, v) for k, v in b.expected.items() if k[:2] == (o.conn, o.sid))
            for k, _v in missing:
                del b.expected[k]
            if not is_success(o.msg):
                return None
            return [violation(("R5",), f"replay on {conn_name(o.conn)} does not carry retained message {k[2]} under "
                                       "its ID", v, o.stamp) for k, v in missing]
        mid = message_id(o.update)
        if mid is not None and o.resumed is not None:  # live or replayed, the connection got it in its window
            b.expected.pop((o.conn, o.sid, mid), None)
        return None


class CommandsRunOnce(Monitor):
    """R9: a locally handled command runs once; a replayed command is reported, never executed again."""

    name = "CommandsRunOnce"
    rules = ("R9",)
    description = "a replayed command is reported, never executed again"
    keys = ("int:execute",)
    dialects = BOTH
    needs = frozenset({INTERNAL})
    events = ("execute",)
    fields = {"ran": set}

    def on(self, b, o):
        key = (o.data.get("session"), o.data.get("messageId"))
        if key in b.ran:
            return [violation(self.rules, f"command {key[1]} executed a second time", o.stamp)]
        b.ran.add(key)
        return None


class ClientsLinkByResponse(Monitor):
    """P9, R11, U2, P5 (client side): a client links its submission to a message only through its response.

    From the client's ``bind`` events: linking by content or arrival order
    is never allowed (P9, R11); linking to a message that another submission
    inserted (per the agent's ``insert`` events) is wrong whatever the method.
    """

    name = "ClientsLinkByResponse"
    rules = ("P9", "R11", "U2", "P5")
    description = "a client links a submission to a message only through its prompt response"
    keys = ("int:bind", "int:insert")
    dialects = BOTH
    needs = frozenset({INTERNAL})
    events = ("bind", "insert")
    fields = {"inserted": dict}

    def on(self, b, o):
        d = o.data
        if o.event == "insert":
            b.inserted[d.get("messageId")] = (d.get("conn"), d.get("request"))
            return None
        who = f"the client on {conn_name(d.get('conn'))}"
        if d.get("how") in ("content", "order"):
            return [violation(("P9", "R11"), f"{who} linked its prompt #{d.get('request')} to {d.get('messageId')} "
                                             f"by {d.get('how')}", o.stamp)]
        owner = b.inserted.get(d.get("messageId"))
        if owner is not None and owner != (d.get("conn"), d.get("request")):
            return [violation(("P9", "U2", "P5"), f"{who} linked its prompt #{d.get('request')} to "
                                                  f"{d.get('messageId')}, which another submission inserted",
                              o.stamp)]
        return None
