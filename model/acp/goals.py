"""Goals: what any design of the prompt lifecycle should achieve, judged without the RFD's mechanisms.

The rule monitors (:mod:`.rules`) check the RFD's own rules, so an
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
  RFD lists that goal in :data:`KNOWN_LIMITATIONS`), the others do not;
* no goal cites a rule of the RFD to excuse a behaviour: what the RFD
  declares it does not meet is listed in :data:`KNOWN_LIMITATIONS` and
  still shown (a retry that inserts a second message is a duplicate
  execution, P12 declares it);
* one granularity on every model: an ending is its stop reason and, for a
  failure, the error's code and message (:mod:`.goals_common`, and the
  bridges' :mod:`.bridge_goals`); a state by what it means to a user
  (:data:`STATE_MEANING`), not by the RFD's words; a view by its content,
  and by its IDs where it shows them.

:mod:`.goals_knowledge` adds what each client knows at rest: which message
is its own, how work ended (every client, not only the submitter), what a
cancel did.
"""

from __future__ import annotations

from . import goals_knowledge
from .goals_knowledge import CancellationOutcomeKnown, EndingKnownToAll, OwnMessageKnown  # noqa: F401
from .goals_common import ending_known, insertion_known, judged as _judged, token as _token, who as _who
from .monitors_base import Monitor, conn_name as _conn, defined_in
from .state import World


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

    A retry and the submission it retries are one request of the user: binding a retry to the message
    of the submission it retries is no misattribution (a design that deduplicates does exactly that).

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
        mine = _request(sub, after)
        others = [x.sub for x in after.agent.history if x.mid == e.mid and x.role == "user" and x.sub != sub
                  and (mine is None or _request(x.sub, after) != mine)]
        if others:
            return m, f"client c{e.client + 1} linked its prompt #{rid} to {e.mid}, which is {_who(others[0], after)}"
        return m, None

    def at_rest(self, m, world: World):
        for c, client in enumerate(world.clients):
            for sub in client.subs:
                if sub.mid is None or sub.status not in ("accepted", "received"):
                    continue
                mine = _request(_token(c, sub, world), world)
                others = [x.sub for x in world.agent.history if x.mid == sub.mid and x.role == "user"
                          and x.sub != _token(c, sub, world) and (mine is None or _request(x.sub, world) != mine)]
                if others:
                    return f"client c{c + 1} holds its prompt #{sub.rid} as {sub.mid}, which is {_who(others[0], world)}"
        return None


class OutcomeKnown(Monitor):
    """At rest a submitter knows whether its prompt was inserted, and how the work it joined ended.

    Insertion: every submission of a judged client is resolved (inserted, or
    not) and what the client believes is true; a submission left ambiguous by
    a lost connection is :class:`LostResponseRecoverable`'s to judge (it is
    the RFD's declared limitation, R11).  How the work ended: a client whose
    inserted message took part in the last work that ended knows its stop
    reason and, for a failure, the error's code and message (one granularity
    on every model, the bridges' too), when it saw that work live; a failure
    when it resumed (:func:`.goals_common.ending_known`).
    """

    name = "OutcomeKnown"
    rules = ("E1", "E3", "E5", "E13", "R11")
    description = "at rest a submitter knows whether its prompt was inserted and how the work ended, with its error"
    kinds = frozenset({"insert", "work_end", "restart"})
    #: ((submission, mid) inserted so far, how the last work ended: (reason, error, its mids) or None/RESTARTED)
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
        return (m[0], (e.reason, e.error, mids)), None

    def at_rest(self, m, world: World):
        inserted = dict(m[0])
        for c, client in enumerate(world.clients):
            if not _judged(client):
                continue
            for sub in client.subs:
                said = insertion_known(c, sub, inserted.get(_token(c, sub, world)) or _retried_as(c, sub, world))
                if said:
                    return said
            last = m[1]
            if last is None or last == self.RESTARTED:
                continue
            if any(inserted.get(_token(c, s, world)) in last[2] for s in client.subs):  # a submitter of that work
                said = ending_known(c, client, last)
                if said:
                    return said
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
            settled = {("wait", e.conn, msg.rid)}
            if _names_an_earlier_message(msg, e.conn, after):  # a deduplication: the prompt is settled
                settled.add(("held", (*e.conn, msg.rid)))
            return tuple(k for k in m if k not in settled), None
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


def _names_an_earlier_message(msg, conn, world: World | None) -> bool:
    """A success naming a message another submission inserted: this prompt will never be inserted."""
    mid = getattr(msg, "message_id", None)
    if mid is None or world is None:
        return False
    return any(e.mid == mid and e.sub is not None and e.sub != (*conn, msg.rid) for e in world.agent.history)


def _awaits(world: World | None, conn, rid) -> bool:
    """Whether the client that sent prompt ``rid`` on ``conn`` awaits an answer (not fire-and-forget)."""
    if world is None:
        return True
    return any(s.rid == rid and s.epoch == conn[1] and s.status == "pending" for s in world.clients[conn[0]].subs)


class NoReexecution(Monitor):
    """No request of the user runs twice: a submission and its retries insert at most one message, and a
    command executes once per submission that inserted it, also across replay and restarts.

    Judged as the user sees it: a retry after a timeout (the client marks it,
    ``Sub.retry_of``) asks for the same work again, so its insertion beside the
    original's is a duplicate execution whatever the design promises (the RFD
    declares it, P12: :data:`KNOWN_LIMITATIONS`).
    """

    name = "NoReexecution"
    rules = ("R9", "P12")
    description = "a request of the user (a submission and its retries) runs at most once"
    kinds = frozenset({"insert", "execute"})
    #: (commands inserted and not yet executed, one entry per submission; requests inserted: (client, root sub))
    initial = ((), ())

    def rename_clients(self, m, new_index):
        return (m[0], tuple(sorted((new_index[c], root) for c, root in m[1])))

    def observe(self, m, e, before, after):
        pending, requests = m
        if e.kind == "insert":
            if e.origin == "command":
                pending = tuple(sorted(pending + (e.mid,)))
            request = _request(e.sub, after)
            if request is None:
                return (pending, requests), None
            if request in requests:
                c, root = request
                return (pending, requests), f"c{c + 1}'s prompt #{root} ran twice: its retry was inserted too, as {e.mid}"
            return (pending, tuple(sorted(requests + (request,)))), None
        if e.mid in pending:
            i = pending.index(e.mid)
            return (pending[:i] + pending[i + 1 :], requests), None
        return m, f"command {e.mid} ran again, with no new submission asking for it"


def _retried_as(c: int, sub, world: World) -> str | None:
    """The message a submission stands for through its request: the one another submission of the same
    request (a retry, or the original) inserted, when the client holds that ID for it (a deduplication)."""
    if sub.mid is None:
        return None
    mine = _request(_token(c, sub, world), world)
    hit = next((e for e in world.agent.history if e.mid == sub.mid and e.sub is not None
                and _request(e.sub, world) == mine), None)
    return hit.mid if hit is not None and mine is not None else None


def _request(sub, world: World | None):
    """The user's request a submission ``(client, epoch, rid)`` belongs to: (client, the first submission's
    request id), following retries back (``Sub.retry_of``); None for a message no client submitted."""
    if sub is None or world is None:
        return None
    c, epoch, rid = sub
    subs = world.clients[c].subs
    i = next((i for i, s in enumerate(subs) if s.epoch == epoch and s.rid + world.links[c].proxy == rid), None)
    if i is None:
        return None
    while subs[i].retry_of is not None:
        i = subs[i].retry_of
    return (c, subs[i].rid)


class ViewsConverge(Monitor):
    """At rest every connected view that lost nothing equals history in content and order, and in IDs
    where it shows them.

    The view is what a client shows: the messages under an ID and its own
    local copies (how a design without user-message IDs, v1, shows a
    prompt), compared on role and content, and on the ID when the item has
    one.  A live view must equal the whole history, a view rebuilt by replay
    its retained part (messages replay may omit, R4, are not judged).  A copy
    the client marked ambiguous after losing the connection is shown as
    unresolved, not as a message: not counted.
    """

    name = "ViewsConverge"
    rules = ("U4", "U5", "U7", "R5", "R7", "P1")
    description = "at rest every connected view equals history in content and order (and IDs where shown)"

    def at_rest(self, m, world: World):
        history = world.agent.history
        for c, client in enumerate(world.clients):
            if not client.up or client.view not in ("live", "replayed"):
                continue
            entries = history if client.view == "live" else tuple(e for e in history if e.retained)
            known = {e.mid for e in entries}
            shown = [i for i in client.feed if (i.mid in known if i.mid is not None else _shown_copy(client, i))]
            if not _same_view(shown, entries):
                return f"client c{c + 1} shows {_listing(shown)} but the conversation is {_listing(entries)}"
        return None


def _shown_copy(client, item) -> bool:
    """A local copy shown as the client's message (not one it marked ambiguous)."""
    return item.sub is not None and client.subs[item.sub].status != "ambiguous"


def _same_view(shown, entries) -> bool:
    return len(shown) == len(entries) and all(
        i.role == e.role and tuple(i.content) == tuple(e.content) and (i.mid is None or i.mid == e.mid)
        for i, e in zip(shown, entries))


def _listing(items) -> str:
    return "[" + ", ".join(f"{i.mid or 'a local copy'} {'/'.join(i.content) or '(empty)'}" for i in items) + "]"


#: what a foreground state means to a user: work goes on, the user must act, or nothing runs.  An unknown
#: state a client shows as busy (S15) means work goes on; a design's own terminal state (``failed``) means
#: nothing runs.  The RFD's vocabulary is one spelling among several.
STATE_MEANING: dict[str, str] = {"idle": "nothing runs", "failed": "nothing runs", "running": "work goes on",
                                 "busy": "work goes on", "requires_action": "the user must act"}


def state_meaning(state: str) -> str:
    return STATE_MEANING.get(state, "work goes on")


class StateAgrees(Monitor):
    """At rest each connected client that lost nothing shows what the agent's foreground state means
    (:data:`STATE_MEANING`), also after resuming (with or without replay)."""

    name = "StateAgrees"
    rules = ("S13", "S2", "S15")
    description = "at rest each connected client's state means what the agent's does"

    def at_rest(self, m, world: World):
        for c, client in enumerate(world.clients):
            if _judged(client) and state_meaning(client.fg) != state_meaning(world.agent.fg):
                return (f"client c{c + 1} shows {client.fg!r} ({state_meaning(client.fg)}) but the agent is "
                        f"{world.agent.fg!r} ({state_meaning(world.agent.fg)})")
        return None


class LostResponseRecoverable(Monitor):
    """After a lost response and a reconnect with replay, the client tells correctly whether its
    submission was inserted.

    Judged where it can be: a submission made on an earlier connection whose
    answer never came (ambiguous, or fire-and-forget) and whose message was
    inserted and retained, so the replay carried it, must be bound to that
    message; and any binding the client made after the loss must be correct
    (a binding to another submission's message is no recovery).  A submission
    that was not inserted (or not retained) leaves no trace any design could
    show (blind spot, as R4 allows), unless the client binds it wrongly.
    """

    name = "LostResponseRecoverable"
    rules = ("R11", "R12", "P12")
    description = "after a lost response and a reconnect, the client tells correctly whether its submission was inserted"

    def at_rest(self, m, world: World):
        for c, client in enumerate(world.clients):
            if not client.up or client.view != "replayed":
                continue
            for sub in client.subs:
                said = _recovered(c, sub, client, world)
                if said:
                    return said
        return None


def _recovered(c: int, sub, client, world: World) -> str | None:
    entry = next((e for e in world.agent.history if e.sub == _token(c, sub, world)), None)
    if sub.status in ("ambiguous", "sent"):  # "sent": a fire-and-forget prompt, never answered
        if entry is not None and entry.retained:
            lost = "lost the response to" if sub.status == "ambiguous" else "got no answer to"
            return f"client c{c + 1} {lost} its prompt #{sub.rid} and resumed with replay; it has been " \
                   f"shown {entry.mid}, which that prompt inserted, yet cannot tell it is its own"
        return None
    if sub.epoch >= client.epoch or sub.mid is None:
        return None
    others = [e.sub for e in world.agent.history if e.mid == sub.mid and e is not entry]
    if entry is not None and entry.mid == sub.mid and not others:
        return None  # a correct binding
    truth = f"its own is {entry.mid}" if entry is not None else "it was not inserted"
    also = f", and {sub.mid} is {_who(others[0], world)}" if others else ""
    return f"client c{c + 1} bound its prompt #{sub.rid}, made before the cut, to {sub.mid}, but {truth}{also}"


#: every goal, in the order of the matrix's columns: this module's classes as defined, then what clients know
#: (:mod:`.goals_knowledge`); a class defined in either is a goal (:func:`~.monitors_base.defined_in`)
GOALS: tuple[Monitor, ...] = tuple(cls() for cls in defined_in(__name__, goals_knowledge.__name__))

GOAL_NAMES: tuple[str, ...] = tuple(g.name for g in GOALS)

#: Goals the RFD itself declares it does not meet, with its words (paraphrased).
KNOWN_LIMITATIONS: dict[str, str] = {
    "LostResponseRecoverable": "the RFD: a lost response remains an ambiguous outcome; replay cannot reliably "
                               "associate a message with the uncertain submission, and its checklist asks to cover "
                               "the lost-response limitation rather than promise recovery",
    "NoReexecution": "the RFD (P12): a retry, including one after a lost response, may be accepted as a separate "
                     "submission; there is no deduplication or exactly-once guarantee",
}

__all__ = ["GOALS", "GOAL_NAMES", "KNOWN_LIMITATIONS"] + [type(g).__name__ for g in GOALS]
