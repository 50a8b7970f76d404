"""Placement: insertion gives a user message its position (P1), and its live report shows it there (U1, S6).

The RFD: insertion adds the user message "with a messageId and a position
relative to other messages"; the user-message updates "establish its content
and placement in the client-visible conversation"; and "the idle update
follows all updates for the work that ended".  When insertion happened is
internal (the ``insert`` event), so this needs the sidecar (or the model).
"""

from __future__ import annotations

from ..rule_monitor import INTERNAL, ONLY_V2, WIRE, Monitor, conn_name, violation
from .common import C2A, MESSAGE_UPDATES, USER_UPDATES, bound, drop_conn, is_live, message_id

_OUTPUT = tuple("upd:" + k for k, (kind, _chunk) in MESSAGE_UPDATES.items() if kind != "user")


class UserMessageReportedInPlace(Monitor):
    """P1, U1, S6: on each connection a message's live report comes before anything placed after it, and before
    the idle that ends the work it started or joined.

    Positions: user messages in the order of their ``insert`` events; an
    agent message or thought at its first live sighting (it is produced
    after everything inserted before).  A message inserted for a request
    joins the work that runs (or starts the next one): its report is an
    update of that work (S6).  Judged when the report reaches a connection
    (so a connection the agent does not report the message to owes nothing:
    fan-out is not required, U1); a later chunk of a message already reported
    there is not judged (chunks of different messages may interleave, U7),
    nor is replay (it rebuilds history in order).

    Choices where the RFD is silent: the report of a message counts as an
    update of the work it started or joined; a connection that only got
    the message by replay is not held to a live report.
    """

    name = "UserMessageReportedInPlace"
    rules = ("P1", "U1", "S6")
    description = "a message's user-message report precedes any later message and the idle of its work"
    keys = ("int:insert", "int:work_start", "int:work_end", "int:restart", "ending", "close") + USER_UPDATES + _OUTPUT
    needs = frozenset({WIRE, INTERNAL})
    dialects = ONLY_V2
    events = ("insert", "work_start", "work_end")
    #: ``ranks``: (session, type, ID) -> position; ``work``/``ended``: (session, ID) of the running work's and the
    #: just-ended work's messages; ``top``: (conn, session) -> (position, ID) of the furthest message sent there;
    #: ``late``: (conn, session, ID) -> stamp of the idle that ended its work there before its report; ``seen``:
    #: (conn, session, ID) of the user messages already reported live there
    fields = {"rank": 0, "ranks": dict, "work": set, "ended": set, "top": dict, "late": dict, "seen": dict}
    LIMIT = 4096

    def on(self, b, o):
        if o.kind == "close":
            for table in (b.top, b.late, b.seen):
                drop_conn(table, o.conn)
            return None
        if o.kind == "internal":
            return self._internal(b, o)
        if o.dir == C2A or o.sid is None or not is_live(o):
            return None
        if o.utype == "state_update":
            self._idle(b, o)
            return None
        mid = message_id(o.update)
        if mid is None:
            return None
        kind = MESSAGE_UPDATES[o.utype][0]
        if kind != "user":
            rank = b.ranks.get((o.sid, kind, mid))
            if rank is None:  # first seen: placed after everything so far
                b.rank += 1
                rank = b.ranks[(o.sid, kind, mid)] = b.rank
                bound(b.ranks, self.LIMIT)
            self._raise(b, (o.conn, o.sid), rank, mid)
            return None
        return self._report(b, o, mid)

    def _internal(self, b, o):
        sid = o.data.get("session")
        if o.event == "restart":
            for table in (b.ranks, b.work, b.ended, b.top, b.late, b.seen):
                table.clear()
            b.rank = 0
        elif o.event == "insert":
            b.rank += 1
            mid = o.data.get("messageId")
            b.ranks[(sid, "user", mid)] = b.rank
            bound(b.ranks, self.LIMIT)
            if o.data.get("request") is not None:
                b.work.add((sid, mid))
        elif o.event == "work_start":
            b.ended.difference_update([k for k in b.ended if k[0] == sid])
        else:  # work_end: its messages are the just-ended work's until new work starts
            done = [k for k in b.work if k[0] == sid]
            b.work.difference_update(done)
            b.ended.difference_update([k for k in b.ended if k[0] == sid])
            b.ended.update(done)
        return None

    def _idle(self, b, o):
        """An idle that ends work reaches ``o.conn``: the work's messages not yet reported there are late now."""
        for k in [k for k in b.late if k[0] == o.conn and k[1] == o.sid]:
            del b.late[k]
        for sid, mid in b.work | b.ended:
            if sid == o.sid and (o.conn, sid, mid) not in b.seen:
                b.late[(o.conn, sid, mid)] = o.stamp

    def _raise(self, b, key, rank, mid) -> None:
        top = b.top.get(key)
        if top is None or rank > top[0]:
            b.top[key] = (rank, mid)

    def _report(self, b, o, mid):
        key = (o.conn, o.sid, mid)
        if key in b.seen:
            return None
        b.seen[key] = o.stamp
        bound(b.seen, self.LIMIT)
        rank = b.ranks.get((o.sid, "user", mid))
        if rank is None:
            return None  # not inserted (ResponsesFollowInsertion's U3), or before the sidecar began
        where = conn_name(o.conn)
        idle = b.late.pop(key, None)
        top = b.top.get((o.conn, o.sid))
        self._raise(b, (o.conn, o.sid), rank, mid)
        if idle is not None:
            return [violation(("S6", "U1"), f"the idle that ended the work of {mid} reached {where} before "
                                            f"{mid}'s {o.utype}", idle, o.stamp)]
        if top is not None and top[0] > rank:
            return [violation(("P1", "U1"), f"{where} got {top[1]} before the {o.utype} of {mid}, which comes "
                                            "first in the conversation", o.stamp)]
        return None
