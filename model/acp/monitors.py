"""The model monitors that judge what clients show: the part of the monitor set no capture carries.

Every rule of the RFD that the agent's side of a connection (or its internal
events) can witness is judged by the trace checker's rule monitors
(:mod:`.rules`, run in the model by :class:`~.rules_in_model.RuleMonitors`; the
whole set is :func:`~.monitor_set.monitor_set`).  What is left here reads a
client's record, which no recording carries, in the order that decides which
one a step that breaks two rules reports (:data:`CLIENT_MONITORS`):

* the order a live client shows (``FeedFollowsHistory``, P1, U1);
* whether a response holds the client until the work ends
  (``ResponseNotHeldForWorkEnd``, P2, S1: the v1 shape, judged on behaviour);
* what a client that lost nothing shows at rest, against what the agent holds
  (``OneMessagePerSubmission``, ``ViewMatchesHistory``: U2, P9, U9, U4-U7, R7);
* what it knows of foreground work at rest: the state it shows and how the
  last work ended (``StateViewMatches``, ``OutcomeVisible``: S13, S2, E3, E13,
  N2, S15).

Where each report is *sent* (P1, U1, S6) is judged on the wire by the rule
monitor ``UserMessageReportedInPlace`` (:mod:`.rules.placement`).

Choice where the RFD is silent: a client rebuilt by replay (or resumed after
one) is not held to the order, because upserts keep the messages it already
shows where they are and a replay cannot place a message it missed before
them (an open question for the RFD, found by the simulator with a dropped
chunk).

The protocol is :class:`~.monitors_base.Monitor`; a class defined here is a
client monitor (:func:`~.monitors_base.defined_in`), no list to keep.
"""

from __future__ import annotations

from .events import A2C
from .monitors_base import Monitor, conn_name as _conn, defined_in
from .state import World


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


def work_ended(before: World | None, after: World | None) -> bool:
    """The step ended foreground work (it ran before and not after)."""
    return before is not None and after is not None and before.agent.work is not None and after.agent.work is None


class ResponseNotHeldForWorkEnd(Monitor):
    """P2/S1: judged on behaviour: a response to a prompt sent in the very step that ended the
    work that prompt's message started (or joined) was released by the end of the work."""

    name = "ResponseNotHeldForWorkEnd"
    rules = ("P2", "S1")
    description = "the prompt response does not wait for the end of the work (insertion is the acknowledgement)"
    kinds = frozenset({"send"})

    def observe(self, m, e, before, after):
        if e.kind != "send" or e.dir != A2C or not work_ended(before, after):
            return m, None
        if e.msg.kind not in ("prompt_result", "prompt_result_v1", "error_response"):
            return m, None
        mids = before.agent.work.mids
        for r in before.agent.reqs:
            if (r.client, r.epoch, r.rid) == (*e.conn, e.msg.rid) and r.mid in mids:
                return m, f"the response to prompt #{e.msg.rid} on {_conn(e.conn)} was sent by the step " \
                          f"that ended its work: it was held until the work ended"
        return m, None


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


class OutcomeVisible(Monitor):
    """E3/E13/N2/S15: at rest a client knows how the last foreground work ended.

    A client that saw everything live must know any outcome.  A client that
    resumed learns the state from the resume snapshot, where a plain idle is
    allowed (S14): it must know the outcome only when the work failed, since
    the error lives in the idle snapshot that resume carries (E13).
    """

    name = "OutcomeVisible"
    rules = ("E3", "E13", "N2", "S15")
    description = "at rest a client that lost nothing knows how the last foreground work ended"
    kinds = frozenset({"work_end", "restart"})
    initial = None  # how the last work ended; RESTARTED after a restart (E10: nothing to tell)
    RESTARTED = "<restart>"

    def observe(self, m, e, before, after):
        return (self.RESTARTED if e.kind == "restart" else e.reason), None

    def at_rest(self, m, world):
        if m == self.RESTARTED or m is None:
            return None
        for c, client in enumerate(world.clients):
            if not client.up or client.last_stop == m:
                continue
            if client.view == "live" or (client.view in ("replayed", "resumed") and m == "error"):
                return f"the last work ended {m!r} but client c{c + 1} believes {client.last_stop!r}"
        return None


#: in the order that decides which one a step that breaks two rules reports: the order of the classes above
CLIENT_MONITORS: tuple[Monitor, ...] = tuple(cls() for cls in defined_in(__name__))

__all__ = ["CLIENT_MONITORS", "Monitor", "feed_out_of_order", "work_ended"] + [type(m).__name__ for m in CLIENT_MONITORS]
