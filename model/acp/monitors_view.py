"""What a client that lost nothing shows at rest, against what the agent holds (U2, P9, U9, R)."""

from __future__ import annotations

from .monitors_base import Monitor


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
