"""The ACP v2 prompt-lifecycle model as a transition system for the explorer.

One session; an agent (adapter + runtime, :mod:`.agent`); 1..N clients
(:mod:`.client`), each on its own connection with a channel each way
(:mod:`.network`: FIFO by default, optionally unordered); fault budgets for
drops, connection cuts, failures and restarts.  A step is one action of one
actor, dispatched through an explicit table; its events feed the rule
monitors (:mod:`.monitors`), whose bookkeeping is part of the state.  A
violating state records the monitor's sentence and is not expanded.

Monitors become properties: ``always`` ones (a SHOULD as a warning), and
``eventually`` ones for obligations (an answer owed, an idle owed, a report
owed), checked from every state under weak fairness (:mod:`.fairness`):
agent and network steps are fair per kind (and per channel), and so is
answering a permission request; user decisions, faults, restarts and the
agent's own optional choices are not.  A behaviour may end wherever no fair
action is enabled, so a pending user choice cannot hide an obligation owed
there.  A terminal state that is not at rest violates ``NoStuckState``.
"""

from __future__ import annotations


from functools import partial

from acplab.model.engine import Property, always, eventually, sometimes

from . import agent as ag
from . import client as cl
from . import events as ev
from . import network as net
from .bounds import Bounds  # noqa: F401 - re-exported: scenarios and tests import it from here
from .enabling import EnabledActions
from .fairness import fairness_class
from .events import Action
from .monitors import Monitor
from .spec import Spec
from .state import Agent, Budget, Client, Link, World, replace_at


def quiescent(w: World) -> bool:
    """Nothing in flight, no work, no prompt pending at the agent: the world is at rest."""
    a = w.agent
    if a.work is not None or a.reqs or a.late or a.resumes or a.background or a.closing:
        return False
    return not net.in_flight(w)


def stuck_sentence(w: World) -> str:
    """What a terminal state that is not at rest still owes, in words."""
    a = w.agent
    if a.reqs:
        r = a.reqs[0]
        state = "inserted as " + r.mid if r.inserted else "not inserted"
        missing = [what for what, done in (("answered", r.answered), ("reported", r.echoed or not r.inserted))
                   if not done]
        return f"nothing can happen, yet the agent still holds c{r.client + 1}'s prompt #{r.rid} ({state}, " \
               f"not {' or '.join(missing) or 'settled'})"
    if a.work is not None:
        what = ", ".join(a.work.mids) or a.work.origin
        return f"nothing can happen, yet foreground work for {what} is still {a.fg}"
    if a.late or a.resumes or a.background:
        return "nothing can happen, yet updates of ended or background work or a resume are still unsent"
    return "nothing can happen, yet messages are still in flight"


#: The property a terminal state that is not at rest violates (the engine's deadlock, named).
NO_STUCK_STATE = Property(
    "NoStuckState", "always", lambda w: True, ("P2", "S2", "S3", "U1"),
    "every behaviour that stops, stops at rest: nothing in flight, no work, no prompt pending",
    stuck_sentence,
)

class AcpModel(EnabledActions):
    """The transition system: ``init_states``, ``successors``, ``properties``, ``format_action``."""

    check_deadlock = True
    deadlock_property = NO_STUCK_STATE

    def __init__(self, spec: Spec, bounds: Bounds, witnesses=(), symmetry: bool = False,
                 monitors: tuple[Monitor, ...] | None = None, continue_after_violation: bool = False) -> None:
        #: keep stepping after a violation (each state records only its own step's violation)
        self.continue_after_violation = continue_after_violation
        self.spec = spec
        #: a reordering transport (``transport_reorders``) is the unordered network, a lossy one (``transport_loses``)
        #: the drop budget: one reading of order and of loss, the bounds'
        if spec.transport_reorders:
            bounds = bounds._replace(ordered=False)
        if spec.transport_loses:
            bounds = bounds._replace(drops=max(bounds.drops, 1))
        self.bounds = bounds
        self.opts = bounds.options()
        if monitors is None:  # the one monitor set: the trace checker's rule monitors and the client view
            from .monitor_set import monitor_set

            monitors = monitor_set()
        self.monitors = monitors
        self.witnesses = tuple(witnesses)
        self.symmetry = symmetry
        self._by_kind: dict[str, list[tuple[int, Monitor]]] = {}
        for k, m in enumerate(monitors):
            for kind in m.kinds:
                self._by_kind.setdefault(kind, []).append((k, m))
        self._handlers = self._dispatch_table()
        self._resting = [(k, m) for k, m in enumerate(monitors)
                         if type(m).at_rest is not Monitor.at_rest and m.expectation == "always"]
        self._warning = frozenset(m.name for g in monitors for m in _members(g) if m.level == "warning")
        #: per monitor, the bookkeeping at which it watches nothing (_UNARMED: it keeps none)
        self._rest = [m.initial if m.keeps_bookkeeping else _UNARMED for m in monitors]
        #: monitor index -> its members' initial books, for a group whose members are properties (coverage)
        self._groups = {k: m.initial[1] for k, m in enumerate(monitors)
                        if getattr(m, "members_as_properties", False)}
        if symmetry:
            from .symmetry import canonical_hasher

            self.fingerprint = canonical_hasher(monitors)

    # -- the interface ------------------------------------------------------------

    def init_states(self):
        b = self.bounds
        n = b.clients
        late = range(n - b.late_joiners, n)
        agent = Agent(attached=tuple(c not in late for c in range(n)))
        budget = Budget(b.prompts, b.drops, b.disconnects, b.cancels, b.cancel_requests, b.failures, b.restarts,
                        b.own_work, b.forgets, b.retries, b.notices, b.closes)
        mon = tuple(m.initial for m in self.monitors)
        clients = tuple(cl.not_yet_joined() if c in late else Client() for c in range(n))
        links = tuple(Link(epoch=-1 if c in late else 0, up=c not in late, proxy=self.spec.proxy_id_offset)
                      for c in range(n))
        return [World(agent, clients, links, budget, mon)]

    def successors(self, w: World):
        """``(action, next world, events)`` for every enabled action, in a fixed order."""
        return [(action, *self.step(w, action)) for action in self.actions(w)]

    def properties(self) -> list[Property]:
        """Each monitor as a property (``always``, a warning, or an ``eventually`` obligation),
        then the scenario's witnesses (``required=False`` when the user chose the bounds)."""
        props = []
        for k, group in enumerate(self.monitors):
            for m in _members(group):
                if m.expectation == "eventually":
                    props.append(eventually(m.name, _discharged(k, m, self.continue_after_violation), m.rules,
                                            m.description, _owed(k, m), every_state=True))
                elif m.level == "warning":
                    props.append(always(m.name, _not_warned(m.name), m.rules, m.description, _what_warned,
                                        "warning", _armed(k, m)))
                else:
                    props.append(always(m.name, _not_violated(m.name), m.rules, m.description,
                                        _what_happened(m.name), armed=_armed(k, m)))
        props += [sometimes(name, cond, rules, desc, self.witnesses_required)
                  for name, cond, rules, desc in self.witnesses]
        return props

    #: whether a scenario's witnesses must be reached (False when the user overrode its bounds)
    witnesses_required = True

    def format_action(self, a: Action) -> str:
        return format_action(a)

    @staticmethod
    def action_kind(a: Action) -> str:
        """Who does what, without the arguments ("net drop_to_agent"): what coverage counts."""
        return a.actor + " " + a.name

    def is_final(self, w: World) -> bool:
        """At rest, or stopped by a violation (already reported): not a stuck state."""
        return w.violation is not None or quiescent(w)

    #: weak fairness per kind of step (:mod:`.fairness`): agent steps and deliveries, a permission answer
    fairness_class = staticmethod(fairness_class)

    # -- one step ------------------------------------------------------------

    def _dispatch_table(self) -> dict:
        """``(actor, action name) -> handler``: every kind of step the model can take."""
        table = {
            ("net", "deliver_to_agent"): self._net_deliver_to_agent,
            ("net", "deliver_to_client"): self._net_deliver_to_client,
            ("net", "drop_to_agent"): self._net_drop_to_agent,
            ("net", "drop_to_client"): self._net_drop_to_client,
            ("net", "cut"): self._net_cut,
            ("agent", "insert"): self._agent_insert,
            ("agent", "reject"): self._agent_reject,
            ("agent", "echo"): self._agent_echo,
            ("agent", "answer"): self._agent_answer,
            ("agent", "import"): self._agent_import,
            ("agent", "restart"): self._agent_restart,
            ("agent", "assign_id"): self._agent_assign_id,
            ("agent", "hook"): self._agent_hook,
            ("agent", "start_own_work"): self._agent_start_own_work,
            ("agent", "late_update"): self._agent_late_update,
            ("agent", "background_step"): self._agent_background_step,
            ("agent", "forget"): self._agent_forget,
            ("agent", "resume_step"): self._agent_resume_step,
            ("agent", "swallow"): self._agent_swallow,
            ("agent", "notice"): self._agent_notice,
            ("client", "submit"): self._client_submit,
            ("client", "cancel"): self._client_cancel,
            ("client", "retry"): self._client_retry,
            ("client", "close"): self._client_close,
            ("client", "cancel_request"): self._client_cancel_request,
            ("client", "answer_permission"): self._client_answer_permission,
            ("client", "reconnect"): self._client_reconnect,
        }
        for step in ag.WORK_STEPS:
            table[("agent", step)] = partial(self._agent_work_step, step)
        return table

    def step(self, w: World, a: Action) -> tuple[World, list]:
        """Apply action ``a``; return the next world and the step's events.

        When the step armed a monitor on the way and disarmed it again (its bookkeeping left the
        initial value after some event and a later event of the step brought it back), the
        events are an :class:`Events` list naming those monitors in ``armed`` (for coverage).
        """
        after, events = self._handlers[(a.actor, a.name)](w, *a.args)
        after, armed = self._monitor(w, after, events)
        if armed:
            events = Events(events)
            events.armed = armed
        return after, events

    def armed_during(self, successor: tuple):
        """The monitors a step armed and disarmed on the way (coverage; see :meth:`step`)."""
        events = successor[2]
        return events.armed if type(events) is Events else ()

    def _monitor(self, before: World, after: World, events: list) -> tuple[World, tuple]:
        """Feed the step's events to the monitors; record this step's violation and warning.

        Returns the next world and the names of the monitors the step armed on the way.
        """
        mon = None
        violation = warning = None
        more: list = []
        armed: list | None = None  # indices of the monitors some event of the step armed
        members_armed: set | None = None  # (group index, member index) of the group members it armed
        warns = self._warning
        rest = self._rest
        groups = self._groups
        for e in events:
            for k, m in self._by_kind.get(e.kind, ()):
                if mon is None:
                    mon = list(before.mon)
                prev = mon[k]
                state, bad = m.observe(prev, e, before, after)
                mon[k] = state
                if state is not prev and k in groups:
                    members_armed = _members_armed(members_armed, k, groups[k], state[1], prev[1])
                elif state is not prev and rest[k] is not _UNARMED and state != rest[k]:
                    if armed is None:
                        armed = [k]
                    elif k not in armed:
                        armed.append(k)
                if bad is None:
                    continue
                for name, said in _findings(m, bad):
                    if name in warns:
                        warning = warning or (name, said)
                    elif violation is None:
                        violation = (name, said)
                    elif name != violation[0] and all(n != name for n, _ in more):
                        more.append((name, said))
        if mon is not None:
            after = after._replace(mon=tuple(mon))
        if quiescent(after):  # every at-rest monitor is asked: none masks another
            for k, m in self._resting:
                bad = m.at_rest(after.mon[k], after)
                if bad is None:
                    continue
                for name, said in _findings(m, bad):
                    if violation is None:
                        violation = (name, said)
                    elif name != violation[0] and all(n != name for n, _ in more):
                        more.append((name, said))
        if violation is not None or after.violation is not None or after.more:
            after = after._replace(violation=violation, more=tuple(more))
        if warning is not None or after.warning is not None:
            after = after._replace(warning=warning)
        if armed is None and members_armed is None:
            return after, ()
        # only those the step disarmed again: the others are armed in the next world, where coverage sees them
        names = [self.monitors[k].name for k in armed or () if after.mon[k] == rest[k]]
        for k, i in sorted(members_armed or ()):
            if after.mon[k][1][i] == groups[k][i]:
                names.append(self.monitors[k].monitors[i].name)
        return after, tuple(names)

    def _epochs(self, w: World) -> tuple[int, ...]:
        return net.epochs(w)

    def _route(self, w: World, events: list) -> tuple[World, list]:
        if w.agent.background:  # a state update that dropped finished background work (G4)
            w = w._replace(agent=ag.reported_drop(w.agent, events))
        return net.route(w, events, self.spec.proxy_id_offset)

    # network

    def _net_deliver_to_agent(self, w: World, c: int, position: int = 0):
        w, msg, epoch = net.take(w, c, True, position)
        agent, out = ag.receive(w.agent, c, epoch, msg, self.spec, self.opts, self._epochs(w))
        w, out = self._route(w._replace(agent=agent), out)
        return w, [ev.Deliver((c, epoch), ev.C2A, msg)] + out

    def _net_deliver_to_client(self, w: World, c: int, position: int = 0):
        w, msg, epoch = net.take(w, c, False, position)
        msg = net.through_proxy(msg, -self.spec.proxy_id_offset)
        client, out = cl.receive(w.clients[c], c, msg, self.spec)
        w, out = self._route(w._replace(clients=replace_at(w.clients, c, client)), out)
        return w, [ev.Deliver((c, epoch), ev.A2C, msg)] + out

    def _net_drop_to_agent(self, w: World, c: int):
        w, msg, epoch = net.take(w, c, True)
        return w._replace(budget=w.budget._replace(drops=w.budget.drops - 1)), [ev.Drop((c, epoch), ev.C2A, msg)]

    def _net_drop_to_client(self, w: World, c: int):
        w, msg, epoch = net.take(w, c, False)
        client = w.clients[c]
        if client.view != "partial":
            client = client._replace(view="partial")
        w = w._replace(clients=replace_at(w.clients, c, client), budget=w.budget._replace(drops=w.budget.drops - 1))
        return w, [ev.Drop((c, epoch), ev.A2C, msg)]

    def _net_cut(self, w: World, c: int, budgeted: bool = True):
        epoch = w.links[c].epoch
        w, lost = net.close(w, c)
        w = w._replace(clients=replace_at(w.clients, c, cl.disconnected(w.clients[c])))
        if budgeted:
            w = w._replace(budget=w.budget._replace(cuts=w.budget.cuts - 1))
        agent, out = ag.connection_lost(w.agent, c, self._epochs(w), self.spec)
        w, out = self._route(w._replace(agent=agent), out)
        return w, [ev.Cut((c, epoch), lost)] + out

    # agent

    def _agent_insert(self, w: World, i: int):
        agent, out = ag.insert(w.agent, i, self.spec, self.opts, self._epochs(w))
        return self._route(w._replace(agent=agent), out)

    def _agent_reject(self, w: World, i: int):
        agent, out = ag.reject(w.agent, i, self.spec)
        w = w._replace(agent=agent, budget=w.budget._replace(failures=w.budget.failures - 1))
        return self._route(w, out)

    def _agent_echo(self, w: World, i: int, *chunked: bool):
        agent, out = ag.echo(w.agent, i, self.spec, self.opts, self._epochs(w), *chunked)
        return self._route(w._replace(agent=agent), out)

    def _agent_assign_id(self, w: World, i: int):
        agent, out = ag.assign_id(w.agent, i, self.spec)
        return w._replace(agent=agent), out

    def _agent_hook(self, w: World, i: int):
        agent, out = ag.hook(w.agent, i, self.spec, self._epochs(w))
        return self._route(w._replace(agent=agent), out)

    def _agent_start_own_work(self, w: World):
        agent, out = ag.start_own_work(w.agent, self.spec, self._epochs(w))
        w = w._replace(agent=agent, budget=w.budget._replace(own_work=w.budget.own_work - 1))
        return self._route(w, out)

    def _agent_notice(self, w: World):
        out = ag.broadcast(w.agent, self._epochs(w), ag.notice(self.spec))
        return self._route(w._replace(budget=w.budget._replace(notices=w.budget.notices - 1)), out)

    def _agent_swallow(self, w: World, i: int):
        agent, out = ag.swallow(w.agent, i)
        return w._replace(agent=agent), out

    def _agent_resume_step(self, w: World, k: int):
        agent, out = ag.resume_step(w.agent, k, self.spec, self.opts, self._epochs(w))
        return self._route(w._replace(agent=agent), out)

    def _agent_forget(self, w: World, i: int):
        agent, out = ag.forget(w.agent, i)
        return w._replace(agent=agent, budget=w.budget._replace(forgets=w.budget.forgets - 1)), out

    def _agent_late_update(self, w: World):
        agent, out = ag.send_late(w.agent, self._epochs(w))
        return self._route(w._replace(agent=agent), out)

    def _agent_background_step(self, w: World):
        agent, out = ag.background_step(w.agent, self.spec, self._epochs(w))
        return self._route(w._replace(agent=agent), out)

    def _agent_answer(self, w: World, i: int):
        agent, out = ag.answer(w.agent, i, self.spec)
        return self._route(w._replace(agent=agent), out)

    def _agent_import(self, w: World):
        agent, out = ag.import_message(w.agent, self.spec, self._epochs(w))
        return self._route(w._replace(agent=agent), out)

    def _agent_restart(self, w: World):
        out: list = []
        for c, link in enumerate(w.links):
            if link.up:
                w, cut = self._net_cut(w, c, budgeted=False)
                out += cut
        agent, more = ag.restart(w.agent, self.spec)
        w = w._replace(agent=agent, budget=w.budget._replace(restarts=w.budget.restarts - 1))
        return w, out + more

    def _agent_work_step(self, step: str, w: World, *reason: str):
        """One step of the foreground work (output, tool, permission, finish with a stop reason, failure, ...)."""
        agent, out = ag.work_step(w.agent, step, self.spec, self.opts, self._epochs(w), *reason)
        if step == "keep_working":
            return w, out  # nothing changes: the same state again
        w = w._replace(agent=agent)
        if step == "fail":
            w = w._replace(budget=w.budget._replace(failures=w.budget.failures - 1))
        return self._route(w, out)

    # clients

    def _client_submit(self, w: World, c: int, content: str):
        ordinal = self.bounds.prompts - w.budget.prompts + 1  # among all clients' submissions
        client, out = cl.submit(w.clients[c], c, (content,), self.spec, ordinal, self.bounds.colliding_ids)
        w = w._replace(clients=replace_at(w.clients, c, client), budget=w.budget._replace(prompts=w.budget.prompts - 1))
        return self._route(w, out)

    def _client_retry(self, w: World, c: int, i: int):
        """The client timed out waiting for submission ``i`` and sends its text again (its own ordinal)."""
        b = self.bounds
        ordinal = b.prompts + b.retries - w.budget.retries + 1
        client, out = cl.submit(w.clients[c], c, w.clients[c].subs[i].content, self.spec, ordinal, b.colliding_ids, i)
        w = w._replace(clients=replace_at(w.clients, c, client), budget=w.budget._replace(retries=w.budget.retries - 1))
        return self._route(w, out)

    def _client_cancel(self, w: World, c: int):
        client, out = cl.cancel_session(w.clients[c], c)
        return self._route(w._replace(budget=w.budget._replace(cancels=w.budget.cancels - 1)), out)

    def _client_close(self, w: World, c: int):
        client, out = cl.close_session(w.clients[c], c)
        w = w._replace(clients=replace_at(w.clients, c, client), budget=w.budget._replace(closes=w.budget.closes - 1))
        return self._route(w, out)

    def _client_cancel_request(self, w: World, c: int, i: int):
        client, out = cl.cancel_request(w.clients[c], c, i)
        w = w._replace(budget=w.budget._replace(cancel_requests=w.budget.cancel_requests - 1))
        return self._route(w, out)

    def _client_answer_permission(self, w: World, c: int, rid: int, approve: bool):
        client, out = cl.answer_permission(w.clients[c], c, rid, approve)
        return self._route(w._replace(clients=replace_at(w.clients, c, client)), out)

    def _client_reconnect(self, w: World, c: int, replay: bool):
        client, out = cl.reconnect(w.clients[c], c, replay, self.spec)
        w = net.open_link(w._replace(clients=replace_at(w.clients, c, client)), c, client.epoch)
        return self._route(w, out)


def _members(monitor) -> tuple:
    """The properties a monitor stands for: itself, or each member of a group (one shared front end, as
    :class:`~.rules_in_model.RuleMonitors` with ``members_as_properties``), each with ``name``, ``rules``,
    ``description``, ``expectation``, ``level``, ``owes(mstate)`` and ``at_rest(mstate, world)``."""
    members = getattr(monitor, "members", None)
    return members() if members is not None else (monitor,)


def _findings(monitor, bad) -> tuple:
    """``(property name, sentence)`` pairs from what a monitor reported: a group names its member."""
    return ((monitor.name, bad),) if isinstance(bad, str) else bad


def _members_armed(found: set | None, k: int, initial: tuple, books: tuple, before: tuple) -> set | None:
    """Add the members of group ``k`` whose book an event moved away from its initial value (compared by
    value: a state that went through pickle shares no objects with the one it was copied from)."""
    for i, book in enumerate(books):
        if book != before[i] and book != initial[i]:
            found = found if found is not None else set()
            found.add((k, i))
    return found


class Events(list):
    """A step's events, naming the monitors the step armed on the way (see :meth:`AcpModel.step`)."""

    __slots__ = ("armed",)


def _not_violated(name: str):
    return lambda w: w.violation is None or (w.violation[0] != name and all(n != name for n, _ in w.more))


def _what_happened(name: str):
    """The monitor's own sentence, recorded in the state by the step that broke it."""
    def sentence(w: World) -> str | None:
        for n, said in ((w.violation,) if w.violation else ()) + w.more:
            if n == name:
                return said
        return None

    return sentence


#: the bookkeeping "at rest" of a monitor that keeps none (never equal to any bookkeeping)
_UNARMED = object()


def _armed(k: int, m: Monitor):
    """Where monitor ``m`` has something to watch (its bookkeeping is not initial); None if it keeps none."""
    if not m.keeps_bookkeeping:
        return None
    armed_in = getattr(m, "armed_in", None)  # a member of a group: its own part of the group's bookkeeping
    if armed_in is not None:
        return lambda w: armed_in(w.mon[k])
    initial = m.initial
    return lambda w: w.mon[k] != initial


def _not_warned(name: str):
    return lambda w: w.warning is None or w.warning[0] != name


def _what_warned(w: World) -> str | None:
    return w.warning[1] if w.warning is not None else None


def _discharged(k: int, m: Monitor, continuing: bool = False):
    """An obligation monitor's condition: nothing owed (or the run was stopped by a violation; a
    model that goes on past violations, as the matrix's does, owes its obligations there too)."""
    owes = m.owes
    if continuing:
        return lambda w: not owes(w.mon[k])
    return lambda w: w.violation is not None or not owes(w.mon[k])


def _owed(k: int, m: Monitor):
    """What is still owed where a behaviour stops or loops, in the monitor's words."""
    return lambda w: m.at_rest(w.mon[k], w)


def format_action(a: Action) -> str:
    """A one-line label: who does what."""
    args = a.args
    if a.actor == "net":
        c = f"c{args[0] + 1}"
        return {
            "deliver_to_agent": f"network delivers {c}'s next message to the agent",
            "deliver_to_client": f"network delivers the agent's next message to {c}",
            "drop_to_agent": f"network drops {c}'s next message to the agent",
            "drop_to_client": f"network drops the agent's next message to {c}",
            "cut": f"connection of {c} is cut",
        }[a.name]
    if a.actor == "agent":
        if a.name in ("insert", "reject", "echo", "answer"):
            verb = {"insert": "inserts", "reject": "rejects", "echo": "reports", "answer": "answers"}[a.name]
            return f"agent {verb} held prompt {args[0] + 1}" if a.name in ("insert", "reject") else f"agent {verb} prompt {args[0] + 1}"
        if a.name == "assign_id":
            return f"agent assigns an ID to held prompt {args[0] + 1} (no answer yet)"
        if a.name == "hook":
            return f"agent runs a foreground hook for held prompt {args[0] + 1}"
        if a.name == "finish" and args:
            return f"agent: finish ({args[0]})"
        if a.name == "swallow":
            return f"the runtime swallows held prompt {args[0] + 1}: no insertion event will come"
        if a.name == "resume_step":
            return f"agent serves the next step of pending resume {args[0] + 1}"
        if a.name == "forget":
            return f"agent's retention policy forgets history entry {args[0] + 1}"
        return {"start_own_work": "agent starts work on its own", "notice": "agent sends a notice", "keep_working": "agent keeps working",
                "late_update": "agent sends a late update of ended work",
                "background_step": "agent's background work reports"}.get(a.name, f"agent: {a.name.replace('_', ' ')}")
    c = f"c{args[0] + 1}"
    if a.name == "submit":
        return f"{c} submits {args[1]!r}"
    if a.name == "reconnect":
        if args[1] == "load":
            return f"{c} connects and loads the session (session/load)"
        return f"{c} reconnects and resumes" + (" with replay from start" if args[1] else " without replay")
    if a.name == "cancel_request":
        return f"{c} sends $/cancel_request for its prompt {args[1] + 1}"
    if a.name == "close":
        return f"{c} sends session/close"
    if a.name == "retry":
        return f"{c} times out waiting for its prompt {args[1] + 1} and submits it again"
    if a.name == "answer_permission":
        return f"{c} {'allows' if args[2] else 'rejects'} permission request #{args[1]}"
    return f"{c} sends session/cancel"
