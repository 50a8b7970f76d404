"""Insertion evidence on the wire: the trace proxies for E1, E2, C1, P16, C4 and the P2 smell.

Insertion happens inside the agent; the wire shows it only through its
reports.  The *evidence* that prompt ``p`` was inserted is a live user
message on ``p``'s connection, in ``p``'s session, under an ID never seen
before (neither reported nor returned by a success), whose content equals ``p``'s prompt (a chunk: its first block), seen
while ``p`` is pending.  Only an unambiguous match counts: exactly one pending
prompt of the session has that content.  ``running`` is never evidence (S4:
it may precede insertion, for example during a hook).

With evidence the order of the messages leaves no conforming reading:

* an error response after the evidence: the message was inserted, so the
  error broke E2 (a failure after insertion is no error response) and E1 (an
  error means not inserted); with ``-32800`` it broke C1;
* evidence after an error response (a rejected prompt reported anyway): P16
  and E1;
* a prompt held while work ran, pending with no evidence at a
  ``session/cancel``, answered with success only after the cancelled idle
  *and after new work started* (``running`` again, with no other prompt sent
  since the cancel that the work could be for): C4 (held prompts are
  withdrawn with ``-32800``).  Without new work the prompt may have been
  inserted before the cancel and reported late, which the wire cannot
  tell apart.  A capture is recorded at the client, so an idle may cross
  the cancel in flight (the work ended, the held prompt was inserted, then
  the cancel arrived): the idle counts as "after the cancel" only when it is
  ``cancelled``, on the prompt's connection, and that cancel was the first
  cancel (``session/cancel``, ``session/close`` or ``$/cancel_request``) sent
  there since the previous ending idle (on one connection the agent read the
  prompt, then the cancel, and this idle answers a cancel it read after
  them), or when the agent answered, before the idle or before the new
  work's ``running``, a request sent after the cancel on that connection
  (FIFO: it had read the cancel; ``acplab test`` sends such a probe after
  each cancel).  Otherwise a warning (the
  order is unproven).  Under the model the recorder sits at the agent: its
  order is the agent's;
* a success held until after the ending idle of the work its message
  started: the P2 smell (a warning: insertion time is internal).  An error
  idle is exempt (the seed's "failure before the response" case).

Ambiguous matches are warnings: several pending prompts with that content, or
a prompt with that content left pending when its connection ended (its
message may be the one reported now: the lost-response case, R11).
The exact checks, from the agent's insertion events, are in :mod:`.internal`.
"""

from __future__ import annotations

from typing import NamedTuple

from ..rule_monitor import NO_STAMP, ONLY_V2, Monitor, conn_name, violation, warning
from .common import (BUSY, C2A, USER_UPDATES, bound, content_key, drop_conn, error_code, is_live, is_success,
                     message_id, stop_reason, update_content_key)


class Pending(NamedTuple):
    """A pending prompt as the proxy sees it."""

    sid: str
    content: tuple
    stamp: object
    evidence: str | None = None  # the matching user message's ID
    evidence_stamp: object = None
    unique: bool = True
    held: object = None  # stamp of a non-error ending idle that passed while evidenced (P2)
    cancelled: object = None  # stamp of a session/cancel that found it without evidence (C4)
    past_idle: object = None  # stamp of the ending idle after that cancel
    evidence_at_idle: bool = False
    rerun: object = None  # stamp of new work (running) that started after that idle
    excused: bool = False  # another prompt arrived after that cancel: new work may be its
    after_cancel: object = None  # stamp of a session/cancel sent before it on its connection (C4: not covered)
    covered: bool = False  # a cancel, close or $/cancel_request after it could explain -32800
    evidence_conn: object = None  # the connection the evidence was reported on
    cancel_here: bool = False  # that cancel came on its own connection
    first_cancel: bool = False  # ... and was the first cancel there since an ending idle
    cancel_read: bool = False  # a request sent after that cancel there was answered (FIFO: the agent had read it)
    idle_proven: bool = False  # the agent provably had that cancel when it sent the ending idle past_idle


def _matches(prompt: tuple, content: tuple, chunk: bool) -> bool:
    if not content:
        return False
    if chunk:
        return bool(prompt) and prompt[0] == content[0]
    return prompt == content


class PromptOutcomesMatchInsertion(Monitor):
    """E1, E2, C1, P16, C4, S4 and the P2 smell, from insertion evidence on the wire (see the module)."""

    name = "PromptOutcomesMatchInsertion"
    rules = ("E1", "E2", "C1", "P16", "C4", "S4", "P2", "U3")
    description = "an error on session/prompt means nothing was inserted; inserted prompts succeed"
    keys = ("req:session/prompt", "res:session/prompt", "note:session/cancel") + USER_UPDATES
    armed = {"upd:state_update": ("watch",), "note:$/cancel_request": ("pending",), "req:session/close": ("pending",),
             "res": ("watch",),
             "close": ("pending", "rejected", "cancels")}
    dialects = ONLY_V2
    #: ``watch``: the pending prompts an ending idle or new work can tell something about (evidenced or cancelled);
    #: ``answered``: (session, prompt content) -> (connection, returned ID, stamp, connections that reported it)
    #: of recent successes, for their fan-out (U3), with ``reports``: (session, ID) -> the connections that reported
    #: it; ``cancels``: (conn, session) -> the last session/cancel there; ``since_idle``: the (conn, session) where
    #: a cancel was sent since the last ending idle there (C4's proof of order)
    fields = {"pending": dict, "seen": set, "rejected": dict, "orphans": dict, "watch": set, "answered": dict,
              "cancels": dict, "reports": dict, "since_idle": set}

    def on(self, b, o):
        if o.kind == "close":
            for (conn, _rid), p in list(b.pending.items()):
                if conn == o.conn:
                    b.orphans[(p.sid, p.content)] = p.stamp  # its outcome may still show on another connection
            bound(b.orphans, 64)
            drop_conn(b.pending, o.conn)
            drop_conn(b.rejected, o.conn)
            drop_conn(b.watch, o.conn)
            drop_conn(b.cancels, o.conn)
            drop_conn(b.since_idle, o.conn)
            return None
        if o.method == "$/cancel_request":
            rid = o.params.get("requestId") if o.params is not None else None
            p = b.pending.get((o.conn, rid)) if o.dir == C2A and rid.__class__ in (int, str) else None
            if p is not None:
                b.pending[(o.conn, rid)] = p._replace(covered=True)
                if o.stamp != NO_STAMP:  # the proof of order is for captures (the model's order is the agent's)
                    b.since_idle.add((o.conn, p.sid))
            return None
        if o.shape == "request" and o.method == "session/close":
            self._cover(b, o.sid)
            if o.stamp != NO_STAMP:
                b.since_idle.add((o.conn, o.sid))
            return None
        if o.shape == "request":
            content = o.params.get("prompt") if o.params is not None else None
            for k, p in list(b.pending.items()):
                if p.sid == o.sid and p.cancelled is not None and p.rerun is None and not p.excused:
                    b.pending[k] = p._replace(excused=True)
            if o.sid is not None and isinstance(content, list):
                b.pending[(o.conn, o.rid)] = Pending(o.sid, content_key(content), o.stamp,
                                                     after_cancel=b.cancels.get((o.conn, o.sid)))
            return None
        if o.shape == "response":
            if o.dir != C2A and o.req is not None and b.watch:
                self._cancel_read(b, o)
            if o.answers != "session/prompt":
                return None  # armed for the proof above only
            result = o.msg.get("result")
            if result.__class__ is dict and o.sid is not None:
                mid = result.get("messageId")
                if mid.__class__ is str:
                    b.seen.add((o.sid, mid))  # claimed by a success: never evidence for another prompt
            return self._answered(b, o)
        if o.method == "session/cancel":
            if o.dir == C2A and o.sid is not None:
                self._cover(b, o.sid)
                b.cancels[(o.conn, o.sid)] = o.stamp
                stamped = o.stamp != NO_STAMP  # under the model no proof is needed: its books stay as they were
                first = stamped and (o.conn, o.sid) not in b.since_idle
                if stamped:
                    b.since_idle.add((o.conn, o.sid))
                for k, p in list(b.pending.items()):
                    if p.sid == o.sid and p.evidence is None and p.cancelled is None:
                        b.pending[k] = p._replace(cancelled=o.stamp, cancel_here=stamped and k[0] == o.conn,
                                                  first_cancel=first and k[0] == o.conn)
                        b.watch.add(k)
            return None
        if o.utype == "state_update":
            if o.ending:
                self._ended(b, o)
            elif o.update.get("state") in BUSY and o.fg in (None, "idle"):
                for k, p in list(b.pending.items()):
                    if k[0] == o.conn and p.past_idle is not None and p.rerun is None and not p.excused:
                        b.pending[k] = p._replace(rerun=o.stamp)
            return None
        return self._reported(b, o)

    # -- the three moments ------------------------------------------------------------

    def _reported(self, b, o):
        mid = message_id(o.update)
        if mid is None or o.sid is None or o.dir == C2A:
            return None
        key = (o.sid, mid)
        if key in b.seen:
            reported = b.reports.get(key)
            if reported is not None and o.conn not in reported:
                b.reports[key] = reported | {o.conn}  # its fan-out here carries the returned ID (U3)
            return None
        b.seen.add(key)
        if o.stamp != NO_STAMP:
            b.reports[key] = frozenset({o.conn})
            bound(b.reports, 256)
        if not is_live(o):
            return None
        chunk = o.utype == "user_message_chunk"
        content = update_content_key(o.update, chunk)
        if not content:
            return None
        same = [k for k, p in b.pending.items() if p.sid == o.sid and _matches(p.content, content, chunk)] \
            if b.pending else []
        mine = [k for k in same if k[0] == o.conn and b.pending[k].evidence is None]
        orphaned = bool(b.orphans) and any(sid == o.sid and _matches(prompt, content, chunk)
                                           for sid, prompt in b.orphans)
        if not mine and len(same) == 1 and b.pending[same[0]].evidence is None:
            mine = same  # the fan-out to another connection of the session is evidence too (E1, E2)
        if len(mine) == 1:
            b.pending[mine[0]] = b.pending[mine[0]]._replace(evidence=mid, evidence_stamp=o.stamp,
                                                              unique=len(same) == 1 and not orphaned,
                                                              evidence_conn=o.conn)
            b.watch.add(mine[0])
            return None
        if mine or same:
            return None
        fanned = self._fan_out(b, o, mid, content, chunk)
        if fanned:
            return fanned
        rejected = [k for k, (sid, prompt, _s, _c) in b.rejected.items()
                    if k[0] == o.conn and sid == o.sid and _matches(prompt, content, chunk)]
        if not rejected:
            return None
        conn, rid = rejected[0]
        _sid, _prompt, stamp, code = b.rejected.pop(rejected[0])
        make = violation if len(rejected) == 1 else warning
        return [make(("P16", "E1"), f"session/prompt #{rid} on {conn_name(conn)} was rejected with {code}, and "
                                    f"then its content was reported as user message {mid}", stamp, o.stamp)]


    def _answered(self, b, o):
        p = b.pending.pop((o.conn, o.rid), None)
        b.watch.discard((o.conn, o.rid))
        mid = o.msg["result"].get("messageId") if is_success(o.msg) and o.msg["result"].__class__ is dict else None
        if p is not None and mid.__class__ is str and o.stamp != NO_STAMP:
            b.answered[(p.sid, p.content)] = (o.conn, mid, o.stamp)  # its fan-out is judged from now on (U3)
            b.reports.setdefault((p.sid, mid), frozenset())
            bound(b.answered, 64)
            bound(b.reports, 256)
        if p is None or (p.held is None and p.rerun is None and p.evidence is None and p.cancelled is None
                         and "error" not in o.msg):
            return None  # the common case: nothing to judge, nothing to remember
        where = f"session/prompt #{o.rid} on {conn_name(o.conn)}"
        out = []
        if is_success(o.msg):
            if mid.__class__ is str:
                if p.evidence is not None and p.evidence != mid and p.unique:
                    out.append(violation(("U3",), f"{where} returns {mid}, but its insertion was reported on "
                                                  f"{conn_name(p.evidence_conn)} as {p.evidence}: one insertion "
                                                  "carries one ID on every connection", p.evidence_stamp, o.stamp))
            if p.held is not None:
                out.append(warning(("P2",), f"{where} was answered only after the work its message {p.evidence} "
                                            "started had ended (idle): the response waits for processing",
                                   p.evidence_stamp, p.held, o.stamp))
            if p.rerun is not None and not p.evidence_at_idle and (p.idle_proven or p.cancel_read):
                out.append(violation(("C4",), f"{where} was held (not inserted) at session/cancel, and was "
                                              "answered and run only after the cancelled idle instead of -32800",
                                     p.stamp, p.cancelled, p.past_idle, p.rerun, o.stamp))
            elif p.rerun is not None and not p.evidence_at_idle:
                out.append(warning(("C4",), f"{where}, pending with no report at session/cancel, was answered and "
                                            "run after the next idle; unless that idle crossed the cancel (the "
                                            "order is unproven: the prompt may have been inserted before the "
                                            "cancel arrived) it was held and owed -32800",
                                   p.stamp, p.cancelled, p.past_idle, p.rerun, o.stamp))
            return out
        code = error_code(o.msg)
        if p.evidence is not None:
            make = violation if p.unique else warning
            rules = ("C1", "E1") if code == -32800 else ("E2", "E1")
            out.append(make(rules, f"{where} is answered with error {code} after its message was reported as "
                                   f"inserted ({p.evidence}); once inserted it must succeed",
                            p.evidence_stamp, o.stamp))
        else:
            b.rejected[(o.conn, o.rid)] = (p.sid, p.content, o.stamp, code)
            bound(b.rejected, 64)
        if p.cancelled is not None and code != -32800:
            out.append(warning(("C4",), f"{where}, held at session/cancel, is answered with {code}, not -32800",
                               p.cancelled, o.stamp))
        if code == -32800 and p.after_cancel is not None and not p.covered:
            out.append(violation(("C4",), f"{where} was sent after session/cancel on the same connection and is "
                                          "answered -32800 with no cancel after it: a prompt sent after the cancel "
                                          "is not affected by it", p.after_cancel, p.stamp, o.stamp))
        return out

    @staticmethod
    def _cancel_read(b, o) -> None:
        """A response on ``o.conn`` to a request sent after a cancel there: the agent had read that cancel (C4).

        Before the idle it proves the idle came after the cancel; before the new work's ``running`` (the idle may
        have crossed the cancel), that the work started after the agent had read the cancel, with the prompt read
        before it: held at the cancel, then run.
        """
        for k in list(b.watch):
            p = b.pending.get(k)
            if (p is not None and k[0] == o.conn and p.cancel_here and not p.cancel_read and p.rerun is None
                    and p.cancelled < o.req[1]):
                b.pending[k] = p._replace(cancel_read=True)

    @staticmethod
    def _cover(b, sid) -> None:
        """A cancel or close of ``sid``: its pending prompts may now be answered -32800."""
        for k, p in list(b.pending.items()):
            if p.sid == sid and not p.covered:
                b.pending[k] = p._replace(covered=True)

    @staticmethod
    def _fan_out(b, o, mid, content, chunk):
        """U3: a new ID reported on a connection for the content of a prompt just answered on another one.

        Captures only (its tables stay empty under the explorer, whose
        insertion events judge U3 exactly, :mod:`.internal`).

        The answered prompt's message reaches this connection under another
        ID: one insertion, two IDs.  Only when that message was not reported
        here yet (else this is a second message with the same content).
        """
        for key, (conn, returned, stamp) in list(b.answered.items()):
            if key[0] != o.sid or not _matches(key[1], content, chunk):
                continue
            if conn == o.conn or returned == mid or o.conn in b.reports.get((o.sid, returned), (o.conn,)):
                continue
            del b.answered[key]
            return [violation(("U3",), f"{mid} on {conn_name(o.conn)} reports the content of the prompt answered "
                                       f"on {conn_name(conn)} as {returned}, which was never reported here: one "
                                       "insertion carries one ID on every connection", stamp, o.stamp)]
        return None

    def _ended(self, b, o):
        reason = stop_reason(o.update)
        if b.since_idle:
            b.since_idle.discard((o.conn, o.sid))
        for k, p in list(b.pending.items()):
            if k[0] != o.conn or p.sid != o.sid:
                continue
            if p.evidence is not None and reason != "error" and p.held is None:
                p = p._replace(held=o.stamp)
            if p.cancelled is not None and p.past_idle is None:
                proven = o.stamp == NO_STAMP or p.cancel_read or (reason == "cancelled" and p.first_cancel)
                p = p._replace(past_idle=o.stamp, evidence_at_idle=p.evidence is not None, idle_proven=proven)
            b.pending[k] = p
