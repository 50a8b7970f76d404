"""Goals of what each client knows at rest: which message is its own, how work ended, what a cancel did.

Design-neutral like :mod:`.goals`: each judges what a user of a client can
tell, never the mechanism a design uses to tell it.  Judged clients and the
granularity of an ending (stop reason, and a failure's error code and
message) are :mod:`.goals_common`'s, shared with ``OutcomeKnown``.
"""

from __future__ import annotations

from .goals_common import ending_known, insertion_known, judged, token
from .monitors_base import Monitor
from .state import World

_RESTARTED = "<restart>"


class OwnMessageKnown(Monitor):
    """At rest a submitter knows which message of the conversation is its own.

    For each submission a judged client made whose message was inserted: the
    client holds that message's ID, or, in a design without user-message IDs
    (v1), shows its local copy and nothing else for it (the copy stands for
    the message).  A submission whose response was lost is
    ``LostResponseRecoverable``'s (the RFD's declared limitation, R11).
    """

    name = "OwnMessageKnown"
    rules = ("P4", "P9", "U2")
    description = "at rest a submitter knows which message is its own"

    def at_rest(self, m, world: World):
        for c, client in enumerate(world.clients):
            if not judged(client):
                continue
            shown = {i.mid for i in client.feed if i.mid is not None}
            for n, sub in enumerate(client.subs):
                entry = next((e for e in world.agent.history if e.sub == token(c, sub, world)), None)
                if entry is None or sub.status == "ambiguous" or sub.mid == entry.mid:
                    continue
                copy = any(i.sub == n and i.mid is None for i in client.feed)
                if sub.mid is None and copy and entry.mid not in shown:
                    continue  # its local copy is its message, and the only one shown for it
                held = f"holds it as {sub.mid}" if sub.mid else "holds no ID for it"
                return f"client c{c + 1}'s prompt #{sub.rid} was inserted as {entry.mid}, but c{c + 1} {held}"
        return None


class EndingKnownToAll(Monitor):
    """At rest every judged client, not only the submitter, knows how the last work ended.

    The same granularity as ``OutcomeKnown`` (stop reason; a failure's error
    code and message), asked of every client: one that saw the work live
    must know how it ended, one that resumed must know a failure.
    """

    name = "EndingKnownToAll"
    rules = ("S2", "E3", "E13", "S14")
    description = "at rest every client knows how the last work ended"
    kinds = frozenset({"work_end", "restart"})
    #: the last ending: (reason, error, ()), the restart marker, or None
    initial = None

    def observe(self, m, e, before, after):
        return (_RESTARTED if e.kind == "restart" else (e.reason, e.error, ())), None

    def at_rest(self, m, world: World):
        if m is None or m == _RESTARTED:
            return None
        for c, client in enumerate(world.clients):
            if judged(client):
                said = ending_known(c, client, m)
                if said:
                    return said
        return None


class CancellationOutcomeKnown(Monitor):
    """At rest a client that cancelled knows what its cancel did.

    ``session/cancel``: when the work it reached ended (the first work end
    after it, while it is still the last one), the client knows how
    (cancelled, or the stop reason the work ended with anyway).
    ``$/cancel_request``: the client knows whether the prompt was inserted
    after all (C1: an inserted prompt still succeeds) or withdrawn.  A client
    that lost its connection since is not judged.
    """

    name = "CancellationOutcomeKnown"
    rules = ("C1", "C2", "C4", "C9")
    description = "at rest a client that cancelled knows what its cancel did"
    kinds = frozenset({"send", "work_end", "restart"})
    #: cancels sent: ("session", client, the ending that followed or None) / ("request", client, (epoch, rid))
    initial = ()

    def rename_clients(self, m, new_index):
        return tuple(sorted((k, new_index[c], x) for k, c, x in m))

    def observe(self, m, e, before, after):
        if e.kind in ("work_end", "restart"):
            ending = None if e.kind == "restart" else (e.reason, e.error, ())
            sessions = {("session", c, ending) for k, c, x in m if k == "session" and x is None and ending}
            return tuple(sorted({r for r in m if r[0] == "request"} | sessions)), None
        if e.dir != "client->agent" or e.lost or e.msg.kind not in ("cancel_session", "cancel_request"):
            return m, None
        c, epoch = e.conn
        record = ("session", c, None) if e.msg.kind == "cancel_session" else ("request", c, (epoch, e.msg.rid))
        return tuple(sorted(set(m) | {record})), None

    def at_rest(self, m, world: World):
        for kind, c, ref in m:
            client = world.clients[c]
            if not judged(client):
                continue
            if kind == "session":
                said = ending_known(c, client, ref) if ref is not None and client.view == "live" else None
                if said:
                    return f"c{c + 1} cancelled the work: {said}"
                continue
            sub = next((s for s in client.subs if (s.epoch, s.rid) == ref), None)
            if sub is None or sub.status == "ambiguous":
                continue
            entry = next((e for e in world.agent.history if e.sub == token(c, sub, world)), None)
            said = insertion_known(c, sub, entry.mid if entry is not None else None)
            if said:
                return f"after its $/cancel_request, {said}"
        return None

