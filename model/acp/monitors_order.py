"""The order a client shows: a live client renders the messages it shows in history order.

:class:`FeedFollowsHistory`: a live client (connected throughout, nothing
lost) renders the messages it shows in history order.  Where the agent sends
each report (P1, U1, S6) is judged on the wire by the rule monitor
``UserMessageReportedInPlace`` (:mod:`.rules.placement`).

Choice where the RFD is silent: a client rebuilt by replay (or resumed after
one) is not held to the order, because upserts keep the messages it already
shows where they are and a replay cannot place a message it missed before
them (an open question for the RFD, found by the simulator with a dropped
chunk).
"""

from __future__ import annotations

from .monitors_base import Monitor
from .state import World


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
