"""What a client knows of foreground work: the state it shows, and the outcome of its prompts (S13, E).

Both are judged at rest, on the client's record (no capture carries it).
"""

from __future__ import annotations

from .monitors_base import Monitor


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
