"""Partial-order reduction for the ACP model: a delivery to a client that nothing else can disturb.

Two clients each consuming the agent's broadcast interleave in every order;
most of those orders lead to the same states.  The ample set here is one
action, ``d = deliver_to_client(c)``, taken alone in the state ``w`` when all
of these hold (:class:`DeliveryReduction`):

R1. the network is FIFO, no drop, cut or restart budget is left and ``w``
    records no violation: nothing but ``d`` can remove the head of ``c``'s
    channel, no connection can close, the agent's history only grows by
    appending (``agent.insert``, ``import_message``, ``work_step``; only a
    restart filters it);
R2. client ``c`` has no action of its own enabled (no submit, cancel, answer
    or reconnect): its record changes only through deliveries to it, and
    budgets only shrink, so none becomes enabled before ``d``;
R3. ``d``'s step emits nothing but its ``Deliver`` event (no ``Bind``, no
    send) and records no violation or warning (:func:`invisible`).  Client
    ``c``'s next record is ``client.receive(record, msg)``: the same whenever
    ``d`` is taken, and so is the event;
R4. ``c``'s channel holds at least two messages: no state between ``w`` and
    the original place of ``d`` is at rest, before or after ``d`` (at-rest
    checks, :func:`~.model.quiescent`, and the client-view monitors
    ``OneMessagePerSubmission``, ``ViewMatchesHistory``, ``StateViewMatches``,
    ``OutcomeVisible`` run only at rest), and ``d`` lowers the messages in
    flight by one;
R5. every monitor is one this argument was checked against, and every one
    that observes a delivery to a client judges ``d`` the same whenever it is
    taken.  The rule monitors (one :class:`~.rules_in_model.RuleMonitors` group) see
    what the agent's side of each connection sees: sends, deliveries *to the
    agent*, cuts and internal events (``RuleMonitors.observations``); ``d``
    gives them no observation, so their bookkeeping and findings do not move.
    Of the client-view monitors only ``FeedFollowsHistory`` observes ``d``; it
    also reads the agent's history, so ``d`` qualifies
    only if its verdict cannot depend on which appends come first
    (:func:`feed_verdict_is_fixed`): ``c``'s view after ``d`` is not judged, or
    its feed shows at most one message, or every message it shows is already
    in the history and the spec never gives an ID twice (:func:`ids_never_repeat`),
    so later appends neither add shown messages nor move them.

Why ``always`` verdicts are kept (C0-C3).  C0: the set is one enabled action.
C1 (persistence): every action other than ``d`` is independent of it until
``d`` is taken: agent steps and deliveries to the agent append to the tail of
``c``'s channel or pop its other channel and never read a client's record
(R1); other clients touch their own records; client ``c`` cannot act (R2).
C2 (invisibility): moving ``d`` to the front of a path (or adding it, if the
path never takes it) gives a path through states that differ only in client
``c`` and ``c``'s channel head;
every step sees the same events and monitor bookkeeping and records the same
violation (R3, R5), no state on the way is at rest (R4), and the last state is
the same.  C3: a cycle of reduced steps alone is impossible: each lowers the
messages in flight (R4).  So the reduced graph reaches a violation of every
property the full graph violates, and the same terminal states, each at the
same depth (so ``NoStuckState`` keeps its shortest length).

``eventually`` under weak fairness.  The obligations (the rule monitors
``PromptsAnswered``, ``WorkEndsWithIdle``, ``RequiresActionResolves`` and
``AcceptedMessagesReportedLive``) live in the rule monitors' bookkeeping,
which ``d`` does not move (R5), so a state's flags equal those of the state
it was reordered from.  Take a weakly fair behaviour of the full graph that owes
something forever.  At a reduced state, ``d`` stays enabled until taken and
is the only action of its fairness class (one channel, FIFO), so fairness
makes the behaviour take it: move it to the front.  The tail is unchanged,
so the moved behaviour is still fair; repeating this at every state (runs of
reduced steps are finite, C3) builds a behaviour of the reduced graph with
the same actions, the same flags and the same enabled fairness classes at
corresponding states (delivering early to ``c`` enables or disables no fair
class: ``c``'s channel keeps a message, R4, and client steps have none, but
a client's answer to a permission request, which is fair: so a permission
request, whose delivery enables it, is never delivered early,
``fairness.ENABLES_FAIR_CLIENT``).  It
is weakly fair, so the reduced graph has a fair cycle of owing states (or the
same owing terminal) whenever the full graph has one.  The converse holds
because the engine records, for a reduced state, the fairness classes of
*every* enabled action (``DeliveryReduction.enabled``): a fair cycle of the
reduced graph is a fair cycle of the full one.  Verdicts are kept; so is a
stuck behaviour's length (the same terminals at the same depths).  A lasso's
length is not (it is the liveness pass's pick on a different graph), so the
engine replaces lassos by those of an unreduced run (:func:`~acplab.model.engine.por.confirm`).

What is preserved, exactly: every property's verdict (``always``, warnings,
``eventually``, ``NoStuckState``); the shortest counterexample length of each
violated property (``always`` ones by the engine's confirming run, stuck
states by the argument, lassos by the unreduced re-run); every witness and
its path (the engine does not reduce while a witness is missing).  State and
transition counts are the reduced graph's.  The argument is made on the
unquotiented graph; with symmetry the rule is applied to whichever member of
an orbit is stored, which is one more state of the full graph, and is blind
to client names apart from the choice of ``c``.

Not covered, hence never reduced: states with a fault budget left, an
unordered network, and models with a monitor this text was not checked
against.

What guards the argument when the model changes (:class:`Guard`): not a
digest of the model's text, but the conditions themselves, checked on the
states the reduction reduces as the search meets them.  For a reduced state
``w`` with chosen delivery ``d`` (``w --d--> wd``): ``wd`` is not at rest,
its monitor bookkeeping is ``w``'s and every ``always``/``eventually``
property judges it as ``w`` (C2, R4, R5; but for what ``w`` records of the
step into it, a warning, which is that step's); its enabled actions have
the fairness classes of ``w``'s; and every other action ``a`` enabled in
``w`` stays enabled after ``d``, records the same findings after it, and
commutes with it: ``w --a--> --d-->`` and ``w --d--> --a-->`` reach the
same state with the same events (C1), or both end the behaviour with the
same violation when ``a`` violates.  A
failed check raises :class:`UnsoundReduction` naming the pair and the
state; it never switches the reduction off.  An edit that keeps these
conditions keeps the reduction (and its state counts); one that breaks them
stops the first search that meets a broken state.
"""

from __future__ import annotations

from . import model, state
from .rules_in_model import RuleMonitors
from .model import quiescent
from .fairness import ENABLES_FAIR_CLIENT
from .monitors import CLIENT_MONITORS, FeedFollowsHistory

#: the monitors that observe deliveries and what R5 says of each
_DELIVERY_OBSERVERS = frozenset({"FeedFollowsHistory"})


def why_not(m: "model.AcpModel") -> str | None:
    """Why this model cannot be reduced, or None when it can."""
    if not m.bounds.ordered:
        return "the network is unordered"
    known = {type(x) for x in CLIENT_MONITORS}
    strangers = [x.name for x in m.monitors if type(x) not in known and not isinstance(x, RuleMonitors)]
    if strangers:
        return f"monitor {strangers[0]} is not one the reduction was checked against"
    unchecked = [x.name for x in m.monitors if "deliver" in x.kinds and x.name not in _DELIVERY_OBSERVERS
                 and not isinstance(x, RuleMonitors)]
    if unchecked:
        return f"monitor {unchecked[0]} observes deliveries and the argument does not cover it"
    return None


def ids_never_repeat(spec, bounds) -> bool:
    """Whether no message ID is ever appended to the history twice.

    Relies on ``agent_common.fresh_id``: IDs come from a counter unless the spec
    reuses the last one (``reuse_ids``), recycles withdrawn ones, lets the
    request id or the client name the message (``message_ids``), or resets
    the counter at a restart the bounds allow.
    """
    return (spec.message_ids == "agent" and not spec.reuse_ids and spec.withdrawn_ids == "retired"
            and (spec.ids_survive_restart or bounds.restarts == 0))


def shown_ids(feed) -> list:
    """The IDs of the messages a feed shows that ``feed_out_of_order`` may compare (not local copies)."""
    return [item.mid for item in feed if item.mid is not None and not item.provisional]


def feed_verdict_is_fixed(views, after, history, unique: bool) -> bool:
    """Whether ``FeedFollowsHistory``'s verdict on a delivery leaving the client ``after`` is the same
    for every history that appends to ``history`` (R5).

    ``monitors.feed_out_of_order`` compares the order of the shown IDs
    that are in the history with their last positions there: fixed if the
    view is not judged, if at most one ID is shown, or if every shown ID is
    already in the history and none can be appended again (``unique``).
    """
    if after.view not in views:
        return True
    shown = shown_ids(after.feed)
    if len(shown) < 2:
        return True
    if not unique:
        return False
    held = {e.mid for e in history}
    return all(mid in held for mid in shown)


def invisible(after: state.World) -> bool:
    """Whether the step into ``after`` recorded no violation and no warning (C2: with R5 it then
    records none wherever it is taken)."""
    return after.violation is None and not after.more and after.warning is None


class UnsoundReduction(AssertionError):
    """A state where the reduction's conditions fail: the model changed in a way the argument does not cover."""


class Guard:
    """The argument's local conditions, checked on the states the reduction reduces (module docstring).

    ``every``: check the first ``FIRST`` reduced states a process meets, then one
    in ``every`` (1: all of them), counted in the order the search meets them, so
    a run checks the same states each time.  Sampling rather than always-on
    is a cost choice: each check steps every postponed action twice more and
    re-lists two states' actions; on the default check (1,630 reduced states)
    checking all of them added about 45% to the search's CPU time, the first
    128 then one in 16 (221 checked) about 10%.  A broken condition usually
    shows on many states, the first ones too.
    """

    FIRST = 128
    EVERY = 16

    def __init__(self, m: "model.AcpModel", every: int | None = None) -> None:
        self.model = m
        self.every = self.EVERY if every is None else every
        self.props = [p for p in m.properties() if p.expectation != "sometimes"]
        self.met = 0
        self.checked = 0

    def check(self, w: state.World, acts: list, d, wd: state.World, devs: list) -> None:
        """Check state ``w``, reduced to ``d`` (``w --d--> wd`` with events ``devs``), when it is due."""
        self.met += 1
        if self.met > self.FIRST and self.met % self.every:
            return
        self.checked += 1
        after = self.model.actions(wd)
        problem = self.invisibility(w, acts, wd, after)
        if problem:
            raise UnsoundReduction(f"partial-order reduction: {_said(self.model, d)} is not invisible in a state it "
                                   f"reduces ({problem}); state: {w}")
        for a in acts:
            if a != d:
                problem = self.commutes(w, d, wd, devs, a, after)
                if problem:
                    raise UnsoundReduction(f"partial-order reduction: {_said(self.model, d)} and "
                                           f"{_said(self.model, a)} are not independent ({problem}); state: {w}")

    def invisibility(self, w, acts, wd, after) -> str | None:
        """Why ``d`` is visible (C2, R4, R5), or None: at rest after it, bookkeeping or a verdict moved, or the
        fairness classes enabled changed."""
        if quiescent(wd):
            return "the state after it is at rest"
        if wd.mon != w.mon:
            moved = [m.name for m, x, y in zip(self.model.monitors, w.mon, wd.mon) if x != y]
            return f"it moves the bookkeeping of {', '.join(moved)}"
        # what ``w`` records of the step into it (violation, warning) is that step's, not ``d``'s (R3): compare
        # the state itself
        here = w._replace(warning=None, more=()) if w.warning is not None or w.more else w
        judged = [p.name for p in self.props if p.condition(wd) != p.condition(here)]
        if judged:
            return f"it changes the verdict of {', '.join(judged)}"
        fair = self.model.fairness_class  # None: an action of no class (a client's, which d may enable: R2)
        if {fair(x) for x in after} - {None} != {fair(x) for x in acts} - {None}:
            return "it changes the fairness classes enabled"
        return None

    def commutes(self, w, d, wd, devs, a, after) -> str | None:
        """Why ``a`` and ``d`` do not commute from ``w`` (C1), or None (``after``: the actions enabled in ``wd``)."""
        step = self.model.step
        if a not in after:
            return "the second is disabled by the first"
        wda, daevs = step(wd, a)
        wa, aevs = step(w, a)
        if wa.violation is not None:  # a behaviour ends there: after d it must end with the same finding
            same = (wda.violation, wda.more, daevs) == (wa.violation, wa.more, aevs)
            return None if same else "the second's violation differs after the first"
        if d not in self.model.actions(wa):
            return "the first is disabled by the second"
        if (wda.violation, wda.more, wda.warning) != (wa.violation, wa.more, wa.warning):
            return "the second records another finding after the first"
        wad, adevs = step(wa, d)
        if adevs != devs or daevs != aevs:
            return "their events differ in the other order"
        if (wad.violation, wad.more, wad.warning) != (wd.violation, wd.more, wd.warning):
            return "the first records another finding after the second"
        # what a state records of the step into it (warning, more) is that last step's: each step's finding in
        # the other order was compared above, so the states are compared without it
        same = wad._replace(warning=None, more=()) == wda._replace(warning=None, more=())
        return None if same else "the two orders reach different states"


def _said(m, a) -> str:
    return m.format_action(a) if hasattr(m, "format_action") else repr(a)


class DeliveryReduction:
    """``ample(w)`` for :class:`~.model.AcpModel`: one undisturbable delivery to a client, or None.

    ``keeps_eventually``: the argument covers ``eventually`` properties under
    weak fairness, given that the engine reads the fairness classes of a
    reduced state from :meth:`enabled` (every enabled action).
    """

    keeps_eventually = True

    def __init__(self, m: "model.AcpModel") -> None:
        self.model = m
        feed = [x for x in m.monitors if isinstance(x, FeedFollowsHistory)]
        self.views = feed[0].views if feed else ()
        self.unique = ids_never_repeat(m.spec, m.bounds)
        self._last = (None, None)
        self.guard = Guard(m)
        #: reduced states that had another action enabled (whose successors the reduction left out)
        self.pruned = 0

    def enabled(self, w: state.World) -> list:
        """Every action enabled in ``w`` (the order of ``successors``), for fairness classes."""
        last, acts = self._last
        return acts if last is w else self.model.actions(w)

    def __call__(self, w: state.World):
        b = w.budget
        if b.drops or b.cuts or b.restarts or w.violation is not None:
            return None
        acts = self.model.actions(w)
        self._last = (w, acts)
        busy = {a.args[0] for a in acts if a.actor == "client"}
        for ordinal, a in enumerate(acts):
            if a.name != "deliver_to_client" or a.actor != "net":
                continue
            c = a.args[0]
            if c in busy or len(w.links[c].to_client) < 2 or w.links[c].to_client[0].kind in ENABLES_FAIR_CLIENT:
                continue
            nxt, evs = self.model.step(w, a)
            if len(evs) == 1 and invisible(nxt) and \
                    feed_verdict_is_fixed(self.views, nxt.clients[c], w.agent.history, self.unique):
                self.guard.check(w, acts, a, nxt, evs)
                self.pruned += len(acts) > 1
                return [(ordinal, (a, nxt, evs))]
        return None


def reduce(m: "model.AcpModel") -> str | None:
    """Give ``m`` its ample sets when the argument covers it; returns why not otherwise."""
    reason = why_not(m)
    if reason is None:
        m.ample = DeliveryReduction(m)
    return reason
