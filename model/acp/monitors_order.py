"""Monitors of placement and order: insertion gives a message its position (P1, U1, S6).

The RFD: insertion adds the user message "with a messageId and a position
relative to other messages"; the user-message updates "establish its
content and placement in the client-visible conversation"; and "the idle
update follows all updates for the work that ended".  These monitors hold
the agent and the clients to that:

* :class:`UserMessageReportedInPlace`: on every connection that was attached
  when a message was inserted, its live report comes before any message
  placed after it and before the idle that ends its work.
* :class:`NothingOfEndedWorkAfterIdle`: after the idle that ends a piece of
  work, nothing of that work (its messages' reports, its output, its tool
  calls) follows on that connection; tool calls the idle lists as
  ``background`` are exempt (S11, G1).
* :class:`FeedFollowsHistory`: a live client (connected throughout, nothing
  lost) renders the messages it shows in history order.

Choices where the RFD is silent: a connection that attaches after the
insertion (a resume) learns the message by replay, so it owes nothing live;
the report of a message counts as an update of the work that message
started or joined; a client rebuilt by replay (or resumed after one) is not
held to the order,
because upserts keep the messages it already shows where they are and a
replay cannot place a message it missed before them (an open question for
the RFD, found by the simulator with a dropped chunk).
"""

from __future__ import annotations

from .agent_work import tool_id
from .monitors_base import (
    MESSAGE_UPDATES,
    Monitor,
    attached_conns,
    conn_name as _conn,
    position,
    rename_conn_pairs,
    sent_update,
    work_ended,
)
from .state import World


class UserMessageReportedInPlace(Monitor):
    name = "UserMessageReportedInPlace"
    rules = ("U1", "S6", "P1")
    description = "a message's user-message report precedes any later message and the idle of its work"
    kinds = frozenset({"insert", "send", "cut"})
    initial = ()  # (conn, mid): reports owed on connections attached at insertion

    def rename_clients(self, m, new_index):
        return rename_conn_pairs(m, new_index)

    def observe(self, m, e, before, after):
        if e.kind == "insert":
            owed = [(conn, e.mid) for conn in attached_conns(after)]
            return tuple(sorted(m + tuple(owed))), None
        if e.kind == "cut":
            return tuple(k for k in m if k[0] != e.conn), None
        if not m or e.lost:
            return m, None
        owed = [mid for conn, mid in m if conn == e.conn]
        if not owed:
            return m, None
        update = sent_update(e, *MESSAGE_UPDATES, "state_update")
        if update is None:
            return m, None
        if update.kind == "state_update":
            if update.state == "idle" and work_ended(before, after):
                return m, f"the idle that ended the work of {owed[0]} reached {_conn(e.conn)} " \
                          f"before {owed[0]}'s user_message"
            return m, None
        mid = update.message_id
        if update.kind.startswith("user_message") and mid in owed:
            return tuple(k for k in m if k != (e.conn, mid)), None
        here = position(after, mid)
        for earlier in owed:
            at = position(after, earlier)
            if here is not None and at is not None and here > at:
                return m, f"{_conn(e.conn)} got {mid} before the user_message of {earlier}, " \
                          f"which comes first in the conversation"
        return m, None


class NothingOfEndedWorkAfterIdle(Monitor):
    name = "NothingOfEndedWorkAfterIdle"
    rules = ("S6", "C8")
    description = "after the idle that ends a piece of work nothing of that work follows (background exempt)"
    kinds = frozenset({"send", "cut", "restart"})
    initial = ()  # (conn, id) of messages and tool calls of work whose ending idle went to conn

    def rename_clients(self, m, new_index):
        return rename_conn_pairs(m, new_index)

    def observe(self, m, e, before, after):
        if e.kind == "restart":
            return (), None
        if e.kind == "cut":
            return tuple(k for k in m if k[0] != e.conn), None
        if e.lost:
            return m, None
        update = sent_update(e, *MESSAGE_UPDATES, "tool_call_update", "state_update")
        if update is None:
            return m, None
        if update.kind == "state_update":
            if update.state != "idle" or not work_ended(before, after):
                return m, None
            work = before.agent.work
            exempt = set(update.background) if isinstance(update.background, tuple) else set()
            keys = set(work.mids) | ({work.output} if work.output else set())
            if work.tool is not None:
                keys.add(tool_id(work))
            added = tuple((e.conn, k) for k in sorted(keys - exempt))
            return tuple(sorted(set(m) | set(added))), None
        key = update.tool_call_id if update.kind == "tool_call_update" else update.message_id
        if (e.conn, key) in m and not _is_replay(update):
            return m, f"{_conn(e.conn)} got {update.kind} {key} after the idle that ended its work"
        return m, None


def _is_replay(update) -> bool:
    """Replay re-sends whole messages on a fresh connection; live work streams chunks or tool updates."""
    return update.kind in ("agent_message", "agent_thought")


class FeedFollowsHistory(Monitor):
    name = "FeedFollowsHistory"
    rules = ("P1", "U1")
    description = "a client that lost nothing renders the messages it shows in the conversation's order"
    # A switch of the monitor, not of the agent: the views it judges.
    views = ("live",)
    kinds = frozenset({"deliver"})

    def observe(self, m, e, before, after):
        if e.dir != "agent->client" or after is None:
            return m, None
        c = e.conn[0]
        return m, feed_out_of_order(after, c)


def feed_out_of_order(w: World, c: int) -> str | None:
    """Two messages client ``c`` shows in the opposite order of the agent's history, in words."""
    client = w.clients[c]
    if client.view not in FeedFollowsHistory.views:
        return None
    at = {e.mid: n for n, e in enumerate(w.agent.history)}
    shown = [item.mid for item in client.feed if item.mid in at and not item.provisional]
    for a, b in zip(shown, shown[1:]):
        if at[a] > at[b]:
            history = [e.mid for e in w.agent.history]
            return f"client c{c + 1} renders {shown} while the conversation is {history}: {a} after {b}"
    return None
