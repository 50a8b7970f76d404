"""The network between the clients and the agent: per connection, one channel each way.

Semantics, named once (DESIGN.md "Network"; Stateright's ``Network``):

* **ordered** (the default): each channel is FIFO, as on stdio or a
  WebSocket; only a channel's oldest message can be delivered or dropped.
* **unordered**: any message in a channel may be delivered next (a transport
  or a proxy that reorders); drops still take the oldest, a fault budget
  being about loss, not order.
* **lossy** within budgets: a drop loses one message; a cut closes a
  connection and every message in flight on it is lost (E10).
* **proxied**: a proxy between clients and agent may rewrite the ids of the
  clients' requests and map its responses back (P19); the wire is observed
  on the agent's side of it.

Every function is pure and returns a new :class:`~.state.World`.
"""

from __future__ import annotations

from . import events as ev
from .state import Link, World, replace_at

#: message kinds whose ``rid`` is a client request id (or answers one): what a proxy rewrites
_CLIENT_ID_KINDS = frozenset({"prompt", "resume", "cancel_request", "prompt_result", "prompt_result_v1",
                              "error_response", "resume_result"})


def through_proxy(msg, offset: int):
    """P19: a proxy may rewrite the ids of the client's requests (and map its responses back)."""
    if offset and msg.kind in _CLIENT_ID_KINDS:
        return msg._replace(rid=msg.rid + offset)
    return msg


def epochs(w: World) -> tuple[int, ...]:
    """Each client's current connection epoch."""
    return tuple(link.epoch for link in w.links)


def route(w: World, events: list, proxy_offset: int) -> tuple[World, list]:
    """Put every ``Send`` on its connection's channel; a send on a dead connection is lost."""
    links = list(w.links)
    routed = []
    for e in events:
        if e.kind != "send":
            routed.append(e)
            continue
        c, epoch = e.conn
        link = links[c]
        if not link.up or link.epoch != epoch:
            routed.append(e._replace(lost=True))
            continue
        if e.dir == ev.A2C:
            links[c] = link._replace(to_client=link.to_client + (e.msg,))
        else:
            # The wire is observed on the agent's side of a proxy, if there is one.
            e = e._replace(msg=through_proxy(e.msg, proxy_offset))
            links[c] = link._replace(to_agent=link.to_agent + (e.msg,))
        routed.append(e)
    return w._replace(links=tuple(links)), routed


def deliverable(channel: tuple, ordered: bool) -> range:
    """Positions in a channel that may be delivered next: the oldest, or any when unordered."""
    if not channel:
        return range(0)
    return range(1) if ordered else range(len(channel))


def take(w: World, c: int, to_agent: bool, position: int = 0) -> tuple[World, object, int]:
    """Remove the message at ``position`` from client ``c``'s channel; returns it and the link's epoch."""
    link = w.links[c]
    channel = link.to_agent if to_agent else link.to_client
    msg = channel[position]
    rest = channel[:position] + channel[position + 1:]
    link = link._replace(to_agent=rest) if to_agent else link._replace(to_client=rest)
    return w._replace(links=replace_at(w.links, c, link)), msg, link.epoch


def close(w: World, c: int) -> tuple[World, tuple]:
    """Close client ``c``'s connection: it goes down and what was in flight is lost."""
    link = w.links[c]
    lost = link.to_agent + link.to_client
    return w._replace(links=replace_at(w.links, c, link._replace(up=False, to_agent=(), to_client=()))), lost


def open_link(w: World, c: int, epoch: int) -> World:
    """A fresh connection for client ``c`` (a reconnect): empty channels, the new epoch."""
    return w._replace(links=replace_at(w.links, c, Link(epoch=epoch, proxy=w.links[c].proxy)))


def network_steps(w: World, ordered: bool) -> list[tuple[str, tuple]]:
    """``(name, args)`` of the enabled network steps: deliveries, and faults within budgets.

    Ordered deliveries take ``(client,)``; unordered ones ``(client, position)``.
    """
    steps = []
    for c, link in enumerate(w.links):
        steps += link_steps(c, link, w.budget, ordered)
    return steps


def link_steps(c: int, link: Link, b, ordered: bool) -> list[tuple[str, tuple]]:
    """The enabled network steps of client ``c``'s connection (see :func:`network_steps`)."""
    if not link.up:
        return []
    steps = []
    for name, channel in (("deliver_to_agent", link.to_agent), ("deliver_to_client", link.to_client)):
        for i in deliverable(channel, ordered):
            steps.append((name, (c,) if ordered else (c, i)))
    if b.drops:
        if link.to_agent:
            steps.append(("drop_to_agent", (c,)))
        if link.to_client:
            steps.append(("drop_to_client", (c,)))
    if b.cuts:
        steps.append(("cut", (c,)))
    return steps


def in_flight(w: World) -> bool:
    """Whether any live channel still holds a message."""
    return any(link.to_agent or link.to_client for link in w.links)
