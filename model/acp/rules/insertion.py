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
  tell apart;
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

from ..observe import ONLY_V2, Monitor, conn_name, violation, warning
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


def _matches(prompt: tuple, content: tuple, chunk: bool) -> bool:
    if not content:
        return False
    if chunk:
        return bool(prompt) and prompt[0] == content[0]
    return prompt == content


class PromptOutcomesMatchInsertion(Monitor):
    """E1, E2, C1, P16, C4, S4 and the P2 smell, from insertion evidence on the wire (see the module)."""

    name = "PromptOutcomesMatchInsertion"
    rules = ("E1", "E2", "C1", "P16", "C4", "S4", "P2")
    description = "an error on session/prompt means nothing was inserted; inserted prompts succeed"
    keys = ("req:session/prompt", "res:session/prompt") + USER_UPDATES
    armed = {"note:session/cancel": ("pending",), "upd:state_update": ("watch",), "close": ("pending", "rejected")}
    dialects = ONLY_V2
    #: ``watch``: the pending prompts an ending idle or new work can tell something about (evidenced or cancelled)
    fields = {"pending": dict, "seen": set, "rejected": dict, "orphans": dict, "watch": set}

    def on(self, b, o):
        if o.kind == "close":
            for (conn, _rid), p in list(b.pending.items()):
                if conn == o.conn:
                    b.orphans[(p.sid, p.content)] = p.stamp  # its outcome may still show on another connection
            bound(b.orphans, 64)
            drop_conn(b.pending, o.conn)
            drop_conn(b.rejected, o.conn)
            drop_conn(b.watch, o.conn)
            return None
        if o.shape == "request":
            content = o.params.get("prompt") if o.params is not None else None
            for k, p in list(b.pending.items()):
                if p.sid == o.sid and p.cancelled is not None and p.rerun is None and not p.excused:
                    b.pending[k] = p._replace(excused=True)
            if o.sid is not None and isinstance(content, list):
                b.pending[(o.conn, o.rid)] = Pending(o.sid, content_key(content), o.stamp)
            return None
        if o.shape == "response":
            result = o.msg.get("result")
            if result.__class__ is dict and o.sid is not None:
                mid = result.get("messageId")
                if mid.__class__ is str:
                    b.seen.add((o.sid, mid))  # claimed by a success: never evidence for another prompt
            return self._answered(b, o)
        if o.method == "session/cancel":
            if o.dir == C2A and o.sid is not None:
                for k, p in list(b.pending.items()):
                    if p.sid == o.sid and p.evidence is None and p.cancelled is None:
                        b.pending[k] = p._replace(cancelled=o.stamp)
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
        if (o.sid, mid) in b.seen:
            return None
        b.seen.add((o.sid, mid))
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
        if len(mine) == 1:
            b.pending[mine[0]] = b.pending[mine[0]]._replace(evidence=mid, evidence_stamp=o.stamp,
                                                              unique=len(same) == 1 and not orphaned)
            b.watch.add(mine[0])
            return None
        if mine or same:
            return None
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
        if p is None or (p.held is None and p.rerun is None and p.evidence is None and p.cancelled is None
                         and "error" not in o.msg):
            return None  # the common case: nothing to judge, nothing to remember
        where = f"session/prompt #{o.rid} on {conn_name(o.conn)}"
        out = []
        if is_success(o.msg):
            if p.held is not None:
                out.append(warning(("P2",), f"{where} was answered only after the work its message {p.evidence} "
                                            "started had ended (idle): the response waits for processing",
                                   p.evidence_stamp, p.held, o.stamp))
            if p.rerun is not None and not p.evidence_at_idle:
                out.append(violation(("C4",), f"{where} was held (not inserted) at session/cancel, and was "
                                              "answered and run only after the cancelled idle instead of -32800",
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
        return out

    def _ended(self, b, o):
        reason = stop_reason(o.update)
        for k, p in list(b.pending.items()):
            if k[0] != o.conn or p.sid != o.sid:
                continue
            if p.evidence is not None and reason != "error" and p.held is None:
                p = p._replace(held=o.stamp)
            if p.cancelled is not None and p.past_idle is None:
                p = p._replace(past_idle=o.stamp, evidence_at_idle=p.evidence is not None)
            b.pending[k] = p


ALL = (PromptOutcomesMatchInsertion,)
