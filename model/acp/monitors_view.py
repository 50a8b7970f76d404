"""Monitors of replay and of what clients conclude: identity across replay, correlation, the feed (R, P9, U2).

``ClientNeverGuesses`` judges a client's binding against the evidence the
client received (its prompt response, or the submission's own token in an
alternative that echoes one), not against the code path it took.  The
at-rest monitors compare what a client that lost nothing renders with what
the agent holds.
"""

from __future__ import annotations

from .events import A2C, C2A
from .monitors_base import Monitor, conn_name as _conn, rename_conn, sent_update


class ReplayKeepsIds(Monitor):
    name = "ReplayKeepsIds"
    rules = ("R5", "R6")
    description = "a replayed retained message carries the ID returned at insertion"
    kinds = frozenset({"replayed"})

    def observe(self, m, e, before, after):
        if e.original != e.sent:
            return m, f"replay sends {e.original} as {e.sent}"
        return m, None


class ReplayResetsBeforeChunks(Monitor):
    name = "ReplayResetsBeforeChunks"
    rules = ("R7", "R8")
    description = "replay that streams a user message as chunks first sends user_message content []"
    wire = True
    kinds = frozenset({"send"})
    initial = ()  # (conn, reset mids) for connections inside a replay window

    def rename_clients(self, m, new_index):
        return tuple((rename_conn(c, new_index), mids) for c, mids in m)

    def observe(self, m, e, before, after):
        if e.dir == C2A:
            if e.msg.kind == "resume" and e.msg.replay_from == "start":
                return tuple(w for w in m if w[0] != e.conn) + ((e.conn, ()),), None
            return m, None
        window = next((w for w in m if w[0] == e.conn), None)
        if window is None:
            return m, None
        if e.msg.kind == "resume_result" or e.msg.kind == "error_response":
            return tuple(w for w in m if w[0] != e.conn), None
        update = sent_update(e, "user_message", "user_message_chunk")
        if update is None:
            return m, None
        reset = window[1]
        if update.kind == "user_message":
            if update.content is not None and update.message_id not in reset:
                new = (e.conn, reset + (update.message_id,))
                return tuple(w if w[0] != e.conn else new for w in m), None
            return m, None
        if update.message_id not in reset:
            return m, f"replay on {_conn(e.conn)} streams {update.message_id} as chunks without a user_message content [] first"
        return m, None


class CommandsNeverReexecuted(Monitor):
    name = "CommandsNeverReexecuted"
    rules = ("R9",)
    description = "a replayed command is reported, never executed again"
    kinds = frozenset({"execute"})
    initial = ()

    def observe(self, m, e, before, after):
        if e.mid in m:
            return m, f"command {e.mid} executed a second time"
        return tuple(sorted(m + (e.mid,))), None


#: submissions whose message the client may still learn (their ID unknown to it)
_OPEN = ("pending", "ambiguous", "accepted")


class ClientNeverGuesses(Monitor):
    """P9/R11/U2: a client links a submission to a message only on evidence it received.

    Evidence is the prompt response naming that message for that request,
    delivered to that client, or (in the correlation-token and client-chosen-ID
    alternatives) an update carrying the submission's own token or chosen ID.  Content, arrival order or an
    ID that merely looks like the request id is no evidence.  The evidence of
    the step's delivery is kept until the binding it supports, which in a
    conforming client happens in the same step.
    """

    name = "ClientNeverGuesses"
    rules = ("P9", "R11", "U2")
    description = "a client links a submission to a message only on the evidence of its prompt response"
    kinds = frozenset({"deliver", "bind"})
    initial = ()  # (client, epoch, "#rid" or the submission's own identifier, mid): evidence not yet used

    def rename_clients(self, m, new_index):
        return tuple(sorted((new_index[c], *rest) for c, *rest in m))

    def observe(self, m, e, before, after):
        if e.kind == "deliver":
            if e.dir != A2C:
                return m, None
            c, epoch = e.conn
            msg = e.msg
            open_subs = [s for s in before.clients[c].subs if s.mid is None and s.status in _OPEN] \
                if before is not None else []
            if msg.kind == "prompt_result" and msg.message_id is not None:
                if any((s.epoch, s.rid) == (epoch, msg.rid) for s in open_subs):
                    return tuple(sorted(m + ((c, epoch, f"#{msg.rid}", msg.message_id),))), None
                return m, None
            if msg.kind != "update":
                return m, None
            # The submission's own identifier in a report: its correlation token, or its chosen messageId.
            token = getattr(msg.update, "prompt_id", None)
            mid = getattr(msg.update, "message_id", None)
            mine = [s for s in open_subs if s.pid is not None and s.pid in (token, mid)]
            if mine:
                return tuple(sorted(m + ((c, mine[0].epoch, mine[0].pid, mid),))), None
            return m, None
        c, epoch, rid = e.sub
        pid = next((s.pid for s in after.clients[c].subs if (s.epoch, s.rid) == (epoch, rid)), None)
        backing = [k for k in m if k[0] == c and k[3] == e.mid and (k[1:3] == (epoch, f"#{rid}") or
                                                                   (pid is not None and k[2] == pid))]
        if backing:
            return tuple(k for k in m if k != backing[0]), None
        truth = None
        for entry in after.agent.history:
            if entry.mid == e.mid:
                truth = entry.sub
        whose = "its own, by luck" if truth == e.sub else "not its own"
        return m, f"client c{c + 1} bound its prompt #{rid} to {e.mid} with no response saying so " \
                  f"(by {e.how}; {whose})"


class BindingsMatchTruth(Monitor):
    name = "BindingsMatchTruth"
    rules = ("P9", "P5", "U2")
    description = "a client links its submission only to the message that submission inserted"
    kinds = frozenset({"bind"})

    def observe(self, m, e, before, after):
        owners = [entry.sub for entry in after.agent.history if entry.mid == e.mid]
        if owners and e.sub not in owners:
            owner = owners[0]
            whose = f"c{owner[0] + 1}'s prompt #{owner[2]}" if owner else "an imported message"
            return m, f"client c{e.client + 1} linked its prompt #{e.sub[2]} to {e.mid}, which is {whose}"
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
