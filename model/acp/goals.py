"""Goals: what any design of the prompt lifecycle should achieve, judged without the RFD's mechanisms.

The rule monitors (:mod:`.monitors`) check the RFD's own rules, so an
alternative that replaces a mechanism breaks them by definition.  These
goals instead judge outcomes a user or a client author can observe, and
say nothing about *how* a design reaches them: no goal mentions a
``messageId`` in a response, insertion as the acknowledgement, or an idle
stop reason.  Each still names the RULES.md IDs it relates to, for context
only.  They are ordinary monitors (``always``, and one ``eventually``
obligation under weak fairness) and run beside the rules in ``acplab
matrix``; ``acplab properties`` lists them with the specs that violate
them (:mod:`.killers`).

What the goals judge, and what not (their shared choices):

* at rest (nothing in flight, no work, nothing pending at the agent);
* a client that is connected and has lost nothing (its view ``live``, or
  rebuilt by a ``replayed`` resume, or ``resumed`` without replay where
  the goal says so).  Dropped messages and connections that stay closed
  are faults no design can hide, so those clients are not judged;
* a submission made ambiguous by a lost connection (R11) is the RFD's
  declared limitation: :class:`LostResponseRecoverable` judges it (the
  RFD lists that goal in :data:`KNOWN_LIMITATIONS`), the others do not.
"""

from __future__ import annotations

from .monitors_base import Monitor, conn_name as _conn
from .state import World


def _token(c: int, sub, world: World) -> tuple[int, int, int]:
    """The submission as the agent knows it: a proxy may have rewritten the request id (P19)."""
    return (c, sub.epoch, sub.rid + world.links[c].proxy)


def _judged(client) -> bool:
    """A connected client that lost nothing (a drop makes its view ``partial``)."""
    return client.up and client.view in ("live", "replayed", "resumed")


def _who(sub, world: World | None = None) -> str:
    """A submission the agent knows, in the client's words (its own request id, before any proxy)."""
    if sub is None:
        return "an imported message"
    proxy = world.links[sub[0]].proxy if world is not None else 0
    return f"c{sub[0] + 1}'s prompt #{sub[2] - proxy}"


class NoDuplicateMessages(Monitor):
    """At rest no client shows one submission twice.

    Each item of a client's feed stands for a submission: its own local copy
    stands for the submission it was made for, an item the agent reported
    stands for the submission that inserted that message.  Two items for one
    submission are a duplicate (a local copy the client could not reconcile
    with the report).  A copy the client marked ambiguous after losing the
    connection is shown as unresolved, not as the message: not counted.
    """

    name = "NoDuplicateMessages"
    rules = ("U2", "P9", "U9")
    description = "no client shows one submission twice"

    def at_rest(self, m, world: World):
        owner = {e.mid: e.sub for e in world.agent.history if e.role == "user" and e.sub is not None}
        for c, client in enumerate(world.clients):
            if not _judged(client):
                continue
            seen: dict = {}
            for item in client.feed:
                if item.role != "user":
                    continue
                if item.provisional and item.sub is not None:
                    sub = client.subs[item.sub]
                    if sub.status == "ambiguous":
                        continue
                    token = _token(c, sub, world)
                else:
                    token = owner.get(item.mid)
                if token is None:
                    continue
                if token in seen:
                    shown = " and ".join(sorted({seen[token], item.mid or "its local copy"}))
                    return f"client c{c + 1} shows {_who(token, world)} twice: as {shown}"
                seen[token] = item.mid or "its local copy"
        return None


class NoMisattribution(Monitor):
    """No client binds its submission to a message that another submission inserted.

    Judged when a client links a submission to a message, and again at rest
    (a later message under the same ID makes an earlier link ambiguous).
    """

    name = "NoMisattribution"
    rules = ("P9", "P5", "U2")
    description = "no client binds its submission to another message"
    kinds = frozenset({"bind"})

    def observe(self, m, e, before, after):
        c, epoch, rid = e.sub
        sub = (c, epoch, rid + after.links[c].proxy)
        others = [x.sub for x in after.agent.history if x.mid == e.mid and x.role == "user" and x.sub != sub]
        if others:
            return m, f"client c{e.client + 1} linked its prompt #{rid} to {e.mid}, which is {_who(others[0], after)}"
        return m, None

    def at_rest(self, m, world: World):
        for c, client in enumerate(world.clients):
            for sub in client.subs:
                if sub.mid is None or sub.status not in ("accepted", "received"):
                    continue
                others = [x.sub for x in world.agent.history
                          if x.mid == sub.mid and x.role == "user" and x.sub != _token(c, sub, world)]
                if others:
                    return f"client c{c + 1} holds its prompt #{sub.rid} as {sub.mid}, which is {_who(others[0], world)}"
        return None


class OutcomeKnown(Monitor):
    """At rest a submitter knows whether its prompt was inserted, and how the work it joined ended.

    Insertion: every submission of a judged client is resolved (inserted, or
    not) and what the client believes is true; a submission left ambiguous by
    a lost connection is the RFD's declared limitation (see
    :class:`LostResponseRecoverable`).  How the work ended: a client whose
    inserted message took part in the last work that ended knows its stop
    reason when it saw that work live, and a failure when it resumed (the
    outcome a user must act on; a resumed client may take a plain idle for
    a normal end, S14).
    """

    name = "OutcomeKnown"
    rules = ("E1", "E3", "E13", "R11")
    description = "at rest a submitter knows whether its prompt was inserted and how the work ended"
    kinds = frozenset({"insert", "work_end", "restart"})
    #: ((submission, mid) inserted so far, how the last work ended: (reason, its mids) or None/RESTARTED)
    initial = ((), None)
    RESTARTED = "<restart>"

    def rename_clients(self, m, new_index):
        inserted = tuple(sorted(((new_index[s[0]],) + s[1:], mid) for s, mid in m[0]))
        return (inserted, m[1])

    def observe(self, m, e, before, after):
        if e.kind == "insert":
            return (m if e.sub is None else (tuple(sorted(m[0] + ((e.sub, e.mid),))), m[1])), None
        if e.kind == "restart":
            return (m[0], self.RESTARTED), None
        mids = before.agent.work.mids if before is not None and before.agent.work is not None else ()
        return (m[0], (e.reason, mids)), None

    def at_rest(self, m, world: World):
        inserted = dict(m[0])
        for c, client in enumerate(world.clients):
            if not _judged(client):
                continue
            for sub in client.subs:
                said = _insertion_known(c, sub, inserted.get(_token(c, sub, world)))
                if said:
                    return said
            said = _ending_known(c, client, m[1], inserted, self.RESTARTED, world)
            if said:
                return said
        return None


def _insertion_known(c: int, sub, mid) -> str | None:
    """What client ``c`` gets wrong or cannot tell about one submission (``mid``: where it was inserted)."""
    what = f"client c{c + 1}"
    truth = f"it was inserted as {mid}" if mid else "it was not inserted"
    if sub.status in ("pending", "sent", "received", "failed"):
        return f"{what} cannot tell whether its prompt #{sub.rid} was inserted ({truth})"
    if sub.status in ("accepted", "done") and mid is None:
        return f"{what} believes its prompt #{sub.rid} was inserted, but {truth}"
    if sub.status in ("rejected", "cancelled") and mid is not None:
        return f"{what} believes its prompt #{sub.rid} was not inserted, but {truth}"
    return None


def _ending_known(c: int, client, last, inserted: dict, restarted, world: World) -> str | None:
    if last is None or last == restarted:
        return None
    reason, mids = last
    if not any(inserted.get(_token(c, s, world)) in mids for s in client.subs):
        return None  # not a submitter of that work
    if client.view == "live" or reason == "error":
        if client.last_stop != reason:
            believed = "nothing (no stop reason reached it)" if client.last_stop is None else repr(client.last_stop)
            return f"the work of c{c + 1}'s prompt ended {reason!r} but c{c + 1} believes {believed}"
    return None


class NoHang(Monitor):
    """No prompt waits forever and no work runs forever: an obligation under weak fairness.

    Owed: a prompt request a client awaits an answer to, until the answer
    reaches it (or its connection closes, or the request or the answer is
    dropped: faults end the wait); a prompt the agent received, until it is
    inserted or rejected (or the agent restarts); foreground work, until it
    ends (or the agent restarts).  A fire-and-forget prompt is awaited by
    nobody: what its sender cannot know is :class:`OutcomeKnown`'s.
    """

    name = "NoHang"
    rules = ("P2", "S2", "S3")
    description = "no prompt waits forever and no work runs forever"
    expectation = "eventually"
    kinds = frozenset({"send", "deliver", "drop", "cut", "insert", "reject", "work_start", "work_end", "restart"})
    initial = ()  # ("held", submission) / ("wait", conn, rid) / ("work",)

    def rename_clients(self, m, new_index):
        out = []
        for k in m:
            if k[0] == "held":
                k = ("held", (new_index[k[1][0]],) + k[1][1:])
            elif k[0] == "wait":
                k = ("wait", (new_index[k[1][0]], k[1][1]), k[2])
            out.append(k)
        return tuple(sorted(out))

    def observe(self, m, e, before, after):
        kind = e.kind
        if kind == "work_start":
            return (m if ("work",) in m else tuple(sorted(m + (("work",),)))), None
        if kind == "work_end":
            return tuple(k for k in m if k != ("work",)), None
        if kind == "restart":
            return tuple(k for k in m if k[0] == "wait"), None
        if kind in ("insert", "reject"):
            return (tuple(k for k in m if k != ("held", e.sub)) if e.sub is not None else m), None
        if kind == "cut":
            return tuple(k for k in m if not (k[0] == "wait" and k[1] == e.conn)), None
        msg = e.msg
        if kind == "send":
            if e.dir == "client->agent" and msg.kind == "prompt" and not e.lost and _awaits(after, e.conn, msg.rid):
                return tuple(sorted(m + (("wait", e.conn, msg.rid),))), None
            return m, None
        if msg.kind == "prompt" and e.dir == "client->agent":
            if kind == "drop":
                return tuple(k for k in m if k != ("wait", e.conn, msg.rid)), None
            return tuple(sorted(m + (("held", (*e.conn, msg.rid)),))), None
        if e.dir == "agent->client" and msg.kind in ("prompt_result", "prompt_result_v1", "error_response"):
            return tuple(k for k in m if k != ("wait", e.conn, msg.rid)), None
        return m, None

    def at_rest(self, m, world):
        if not m:
            return None
        k = m[0]
        if k[0] == "work":
            return "foreground work never ends"
        if k[0] == "held":
            return f"the agent never inserts or rejects {_who(k[1])}"
        return f"{_conn(k[1])} waits for ever for the answer to its prompt #{k[2]}"


def _awaits(world: World | None, conn, rid) -> bool:
    """Whether the client that sent prompt ``rid`` on ``conn`` awaits an answer (not fire-and-forget)."""
    if world is None:
        return True
    return any(s.rid == rid and s.epoch == conn[1] and s.status == "pending" for s in world.clients[conn[0]].subs)


class NoReexecution(Monitor):
    """No submission's work runs twice: a command executes once per submission that inserted it,
    also across replay and restarts (a retry is a new submission: see the RFD's P12)."""

    name = "NoReexecution"
    rules = ("R9", "P12")
    description = "a command runs at most once per submission that asked for it"
    kinds = frozenset({"insert", "execute"})
    initial = ()  # commands inserted and not yet executed (one entry per submission)

    def observe(self, m, e, before, after):
        if e.kind == "insert":
            return (tuple(sorted(m + (e.mid,))) if e.origin == "command" else m), None
        if e.mid in m:
            i = m.index(e.mid)
            return m[:i] + m[i + 1 :], None
        return m, f"command {e.mid} ran again, with no new submission asking for it"


class ViewsConverge(Monitor):
    """At rest every connected view that lost nothing equals history in content, order and IDs.

    The view is the messages a client shows under an ID; a live view must
    equal the whole history, a view rebuilt by replay its retained part
    (messages replay may omit, R4, are not judged).  A local copy the client
    shows under no ID is :class:`NoDuplicateMessages`'s to judge.
    """

    name = "ViewsConverge"
    rules = ("U4", "U5", "U7", "R5", "R7", "P1")
    description = "at rest every connected view equals history in content, order and IDs"

    def at_rest(self, m, world: World):
        history = world.agent.history
        for c, client in enumerate(world.clients):
            if not client.up or client.view not in ("live", "replayed"):
                continue
            if client.view == "live":
                want = [(e.mid, e.role, e.content) for e in history]
                shown = [(i.mid, i.role, i.content) for i in client.feed if i.mid is not None]
            else:
                kept = {e.mid for e in history if e.retained}
                want = [(e.mid, e.role, e.content) for e in history if e.retained]
                shown = [(i.mid, i.role, i.content) for i in client.feed if i.mid in kept]
            if shown != want:
                return f"client c{c + 1} shows {_listing(shown)} but the conversation is {_listing(want)}"
        return None


def _listing(items) -> str:
    return "[" + ", ".join(f"{mid} {'/'.join(content) or '(empty)'}" for mid, _role, content in items) + "]"


class StateAgrees(Monitor):
    """At rest each connected client that lost nothing shows the agent's foreground state,
    also after resuming (with or without replay)."""

    name = "StateAgrees"
    rules = ("S13", "S2", "S15")
    description = "at rest each connected client's state equals the agent's"

    def at_rest(self, m, world: World):
        for c, client in enumerate(world.clients):
            if _judged(client) and client.fg != world.agent.fg:
                return f"client c{c + 1} shows {client.fg!r} but the agent is {world.agent.fg!r}"
        return None


class LostResponseRecoverable(Monitor):
    """After a lost response and a reconnect with replay, the client can tell its submission was inserted.

    Judged where it can be: the message was inserted and retained, so the
    replay carried it.  A submission that was not inserted (or not retained)
    leaves no trace any design could show (blind spot, as R4 allows).
    """

    name = "LostResponseRecoverable"
    rules = ("R11", "R12", "P12")
    description = "after a lost response and a reconnect, the client can tell whether its submission was inserted"

    def at_rest(self, m, world: World):
        for c, client in enumerate(world.clients):
            if not client.up or client.view != "replayed":
                continue
            for sub in client.subs:
                if sub.status not in ("ambiguous", "sent"):  # "sent": a fire-and-forget prompt, never answered
                    continue
                entry = next((e for e in world.agent.history if e.sub == _token(c, sub, world) and e.retained), None)
                if entry is not None:
                    lost = "lost the response to" if sub.status == "ambiguous" else "got no answer to"
                    return f"client c{c + 1} {lost} its prompt #{sub.rid} and resumed with replay; it has been " \
                           f"shown {entry.mid}, which that prompt inserted, yet cannot tell it is its own"
        return None


GOALS: tuple[Monitor, ...] = (
    NoDuplicateMessages(),
    NoMisattribution(),
    OutcomeKnown(),
    NoHang(),
    NoReexecution(),
    ViewsConverge(),
    StateAgrees(),
    LostResponseRecoverable(),
)

GOAL_NAMES: tuple[str, ...] = tuple(g.name for g in GOALS)

#: Goals the RFD itself declares it does not meet, with its words (paraphrased).
KNOWN_LIMITATIONS: dict[str, str] = {
    "LostResponseRecoverable": "the RFD: a lost response remains an ambiguous outcome; replay cannot reliably "
                               "associate a message with the uncertain submission, and its checklist asks to cover "
                               "the lost-response limitation rather than promise recovery",
}

__all__ = ["GOALS", "GOAL_NAMES", "KNOWN_LIMITATIONS"] + [type(g).__name__ for g in GOALS]
