"""The SimPy runtime: timed schedules over the model's own actions.

The runtime holds one :class:`~model.state.World` and changes it only through
``model.step(world, action)``, with an action that ``model.actions(world)``
currently offers.  SimPy processes decide *which* action happens *when*:

* network: one process per channel (connection x direction).  Every ``Send``
  the step emits is put on the channel's :class:`simpy.Store` with a due time
  ``max(now + latency, previous due time)`` (FIFO: no overtaking); at the due
  time the head is delivered, or dropped with probability ``drop``.  A cut
  ends the channel (its messages died with the connection: the model's cut
  already removed them).  Cuts arrive per client at ``disconnect_rate``.
* agent: *intake* inserts (or, with probability ``reject``, rejects) the
  oldest held prompt when no work runs; per inserted prompt, *echo* and
  *answer* fire after independent delays (so either order happens); *work*
  advances the script one step per ``step_ms`` (a failure with probability
  ``fail`` per step) once the work's user messages were reported; agent
  restarts at ``restart_rate``.
* clients: *workload* (think, submit, wait for the outcome, retry after a cut
  or a timeout), *cancel* (``session/cancel``) or ``$/cancel_request`` after
  some submissions, *reconnect* after a cut,
  resuming with replay with probability ``replay``; a resume left unanswered
  for ``resume_timeout_s`` closes the connection (a cut) and starts over.

All randomness comes from one ``random.Random``; SimPy orders simultaneous
events by scheduling order, so a seed fixes the run.  Every step also tells
the run's metrics which fault windows it opened (:mod:`.fault_windows`).
"""

from __future__ import annotations

import math
import random
from collections import deque
from typing import NamedTuple

import simpy
from simpy.events import PENDING

from acplab.model.acp import agent as ag
from acplab.model.acp.model import AcpModel, Action, Bounds, quiescent
from acplab.model.acp.events import C2A
from acplab.model.acp.monitor_set import monitor_names, monitor_set
from acplab.model.acp.spec import get_spec
from .fault_windows import opened
from .metrics import RunMetrics
from .params import CONTENTS, SimParams

BIG = 10**9


class Violation(NamedTuple):
    monitor: str
    sentence: str
    t: float  # simulated seconds
    step: int  # 1-based index of the violating step


class RunResult(NamedTuple):
    index: int
    seed: int
    end_s: float
    at_rest: bool
    violations: tuple[Violation, ...]
    metrics: RunMetrics
    steps: list  # (t, action, events) for every applied step (kept only when asked or violated)


def build_model(p: SimParams) -> AcpModel:
    """The explorer's model with simulation-sized budgets: timing and probabilities decide what happens."""
    prompts = p.clients * p.prompts * (1 + p.retries) + p.clients
    bounds = Bounds(
        clients=p.clients, prompts=prompts, contents=CONTENTS[: p.contents],
        drops=BIG if p.drop > 0 else 0, disconnects=BIG, cancels=BIG if p.cancel > 0 else 0,
        cancel_requests=BIG if p.cancel_request > 0 else 0,
        failures=BIG if (p.reject > 0 or p.fail > 0) else 0, restarts=BIG if p.restart_rate > 0 else 0,
        chunks=p.chunks, retain=True, tools=p.tools, output=True,
    )
    spec = get_spec(p.spec)
    skip = set(p.disable_monitors) | not_applicable_monitors(spec)
    return AcpModel(spec, bounds, monitors=monitor_set(skip=skip, memo=False))


def not_applicable_monitors(spec) -> set[str]:
    """The monitors a spec does not speak to (as the variant matrix leaves them out)."""
    names = dict(spec.not_applicable)
    return set(monitor_names()) if "*" in names else set(names)


def run_seed(seed: int, index: int) -> int:
    """The sub-seed of run ``index``: derived from the seed alone (str seeds hash with SHA-512)."""
    return random.Random(f"acplab-sim/{seed}/{index}").getrandbits(63)


class _Channel:
    """One direction of one connection: a FIFO with a single consumer (the channel's wire process).

    It schedules exactly the SimPy events a :class:`simpy.Store` whose one
    consumer never cancels would schedule *and that do something*: a get is
    answered at once when an item is there; a put made while the consumer
    waits schedules the event whose processing hands it the oldest item.  A
    Store's other put events find nobody waiting; they are left out, which
    keeps every other event's order (SimPy orders by time, then by
    scheduling order), so the same seed gives the same run.
    """

    __slots__ = ("env", "items", "getter", "kick", "last")

    def __init__(self, env) -> None:
        self.env = env
        self.items: deque = deque()
        self.getter = None  # the consumer's get, while it waits
        self.kick = None  # the scheduled event that will answer it
        self.last = 0.0

    def put(self, item) -> None:
        self.items.append(item)
        if self.getter is not None and self.kick is None:
            self.kick = simpy.Event(self.env)
            self.kick.callbacks.append(self._hand_over)
            self.kick.succeed()

    def get(self):
        ev = simpy.Event(self.env)
        if self.items:
            ev.succeed(self.items.popleft())
        else:
            self.getter = ev
        return ev

    def _hand_over(self, _event) -> None:
        self.kick = None
        if self.getter is not None and self.items:
            getter, self.getter = self.getter, None
            getter.succeed(self.items.popleft())


class _FirstOf(simpy.Event):
    """``a | b`` as the processes use it (nobody reads the value): triggered, at the same point a
    :class:`simpy.AnyOf` would be, by the first of the two to be processed, without its bookkeeping."""

    def __init__(self, env, a, b) -> None:
        super().__init__(env)
        self._events = (a, b)
        for e in self._events:
            if e.callbacks is None:
                self._check(e)
            else:
                e.callbacks.append(self._check)

    def _check(self, event) -> None:
        if self._value is not PENDING:
            return
        self.succeed()
        for e in self._events:
            if e.callbacks and self._check in e.callbacks:
                e.callbacks.remove(self._check)


class Session:
    """One simulated session: ``clients`` clients on one agent, until done, violated or ``duration_s``."""

    def __init__(self, model: AcpModel, p: SimParams, seed: int, index: int = 0, keep_steps: bool = True) -> None:
        self.model = model
        self.p = p
        self.index = index
        self.seed = seed
        self.rng = random.Random(seed)
        self.env = simpy.Environment()
        self.world = model.init_states()[0]
        self.changed = self.env.event()
        self.stop = self.env.event()
        self.steps: list = []
        self.keep_steps = keep_steps
        self.violations: list[Violation] = []
        self.metrics = RunMetrics(p.clients)
        self.channels: dict = {}
        self.pending_workloads = p.clients
        self.busy = [True] * p.clients  # client workload still running
        lat = p.latency_ms / 1000.0
        self._mu = math.log(lat) - p.latency_sigma ** 2 / 2.0

    # -- sampling ------------------------------------------------------------

    def exp(self, mean_s: float) -> float:
        return self.rng.expovariate(1.0 / mean_s)

    def latency(self) -> float:
        if self.p.latency_sigma == 0:
            return self.p.latency_ms / 1000.0
        return self.rng.lognormvariate(self._mu, self.p.latency_sigma)

    # -- the one place the world changes ------------------------------------------------

    def apply(self, action: Action, enabled: bool = False):
        """Step the model with ``action`` if it is enabled now; return its events, or None.

        ``enabled``: the caller has just seen that it is (a channel's wire process, whose head
        message is the model's: the channel and the model's queue change together, no re-sync).
        """
        w = self.world
        if w.violation is not None or self.stop.triggered or not (enabled or self.model.enabled(w, action)):
            return None
        after, events = self.model.step(w, action)
        now = self.env.now
        self.world = after
        self.steps.append((now, action, events))
        self.metrics.observe(now, action, events)
        self.metrics.opened(opened(w, action, events, after))
        end_mids = None
        for e in events:
            if e.kind == "work_end" and w.agent.work is not None:
                end_mids = w.agent.work.mids
        for e in events:
            if e.kind == "send" and not e.lost:
                tag = None
                if end_mids is not None and e.dir != C2A and e.msg.kind == "update":
                    u = e.msg.update
                    if u.kind == "state_update" and u.state == "idle":
                        tag = end_mids
                self._put(e, tag)
        if action.name == "insert":
            self._on_insert(events)  # the runtime reports and answers after their own delays
        if after.violation is not None:
            self._violated(after.violation)
        old, self.changed = self.changed, self.env.event()
        old.succeed()
        self._maybe_done()
        return events

    def _violated(self, violation) -> None:
        name, sentence = violation
        self.violations.append(Violation(name, sentence, self.env.now, len(self.steps)))
        if self.p.on_violation == "continue":
            # record and go on: the flag is the runtime's to clear; the monitors' bookkeeping stays
            self.world = self.world._replace(violation=None)
        elif not self.stop.triggered:
            self.stop.succeed("violation")

    def _maybe_done(self) -> None:
        if self.pending_workloads or self.stop.triggered:
            return
        if self._at_rest(self.world):
            self.stop.succeed("done")

    @staticmethod
    def _at_rest(w) -> bool:
        """The model's rest (nothing in flight, no work, no prompt pending) with every client settled."""
        return quiescent(w) and all(c.up and c.resume_rid is None for c in w.clients)

    # -- network ------------------------------------------------------------

    def _put(self, e, tag) -> None:
        key = (e.conn, e.dir)
        ch = self.channels.get(key)
        if ch is None:
            ch = self.channels[key] = _Channel(self.env)
            self.env.process(self._wire(key, ch))
        due = max(self.env.now + self.latency(), ch.last)
        ch.last = due
        ch.put((due, e.msg, tag))

    def _wire(self, key, ch: _Channel):
        (c, epoch), direction = key
        to_agent = direction == C2A
        deliver = Action("net", "deliver_to_agent" if to_agent else "deliver_to_client", (c,))
        drop = Action("net", "drop_to_agent" if to_agent else "drop_to_client", (c,))
        while True:
            due, msg, tag = yield ch.get()
            if due > self.env.now:
                yield self.env.timeout(due - self.env.now)
            link = self.world.links[c]
            if link.epoch != epoch or not link.up:
                return  # the connection is gone, and its messages with it
            queue = link.to_agent if to_agent else link.to_client
            if not queue or queue[0] != msg:
                continue
            if self.p.drop and self.rng.random() < self.p.drop:
                self.apply(drop)
            elif self.apply(deliver, enabled=True) is not None and tag is not None:
                self.metrics.idle_delivered(self.env.now, (c, epoch), tag)

    def _cuts(self, c: int):
        cut = Action("net", "cut", (c,))
        while self.busy[c]:
            yield self.env.timeout(self.exp(1.0 / self.p.disconnect_rate))
            if self.busy[c] and self.world.links[c].up:
                self.apply(cut)

    # -- agent ------------------------------------------------------------

    def _intake(self):
        while True:
            a = self.world.agent
            i = ag.next_held(a)
            if i is None or a.work is not None:
                yield self.changed
                continue
            token = a.reqs[i].token
            yield self.env.timeout(self.exp(self.p.insert_ms / 1000.0))
            a = self.world.agent
            i = ag.next_held(a)
            if i is None or a.work is not None or a.reqs[i].token != token:
                continue
            if self.p.reject and self.rng.random() < self.p.reject:
                self.apply(Action("agent", "reject", (i,)))
            else:
                self.apply(Action("agent", "insert", (i,)))

    def _report(self, name: str, token, mid, delay: float):
        yield self.env.timeout(delay)
        for i, req in enumerate(self.world.agent.reqs):
            if req.token == token and req.mid == mid:
                self.apply(Action("agent", name, (i,)))
                return

    def _work(self):
        opts = self.model.opts
        while True:
            a = self.world.agent
            work = a.work
            if work is None or work.perms or any(
                r.inserted and not r.echoed and r.mid in work.mids for r in a.reqs
            ):
                yield self.changed  # the runtime reports a message before working on it
                continue
            yield self.env.timeout(self.exp(self.p.step_ms / 1000.0))
            a = self.world.agent
            steps = ag.work_steps(a, opts, self.world.budget.failures > 0, self.model.spec)
            if not steps:
                continue
            if "end_cancelled" in steps:
                name = "end_cancelled"
            elif "fail" in steps and self.p.fail and self.rng.random() < self.p.fail:
                name = "fail"
            else:
                name = next((s for s in steps if s != "fail"), None)
                if name is None:
                    continue
            self.apply(Action("agent", name))

    def _restarts(self):
        while self.pending_workloads:
            yield self.env.timeout(self.exp(1.0 / self.p.restart_rate))
            if self.pending_workloads:
                self.apply(Action("agent", "restart"))

    def _on_insert(self, events) -> None:
        for e in events:
            if e.kind == "insert" and e.sub is not None:
                self.env.process(self._report("echo", e.sub, e.mid, self.exp(self.p.echo_ms / 1000.0)))
                self.env.process(self._report("answer", e.sub, e.mid, self.exp(self.p.answer_ms / 1000.0)))

    # -- clients ------------------------------------------------------------

    def _connected(self, c: int):
        """Wait until client ``c`` is up with its resume answered (the reconnect lane sees to it)."""
        while True:
            client = self.world.clients[c]
            if client.up and client.resume_rid is None:
                return
            yield self.changed

    def _submit(self, c: int, content: str):
        """Submit once (waiting until the client may); returns the submission's token."""
        while True:
            yield from self._connected(c)
            client = self.world.clients[c]
            token = (c, client.epoch, client.next_rid)
            index = len(client.subs)
            if self.apply(Action("client", "submit", (c, content))) is not None:
                if self.p.cancel and self.rng.random() < self.p.cancel:
                    self.env.process(self._cancel_later(c))
                if self.p.cancel_request and self.rng.random() < self.p.cancel_request:
                    self.env.process(self._cancel_request_later(c, index))
                return token
            yield self.changed

    def _outcome(self, c: int, token):
        """Wait for the submission's outcome: its status, or "timeout"."""
        deadline = self.env.timeout(self.p.retry_timeout_s)
        while True:
            st = self._status(c, token)
            if st != "pending":
                return st
            if deadline.processed:
                return "timeout"
            yield _FirstOf(self.env, self.changed, deadline)

    def _status(self, c: int, token) -> str:
        for s in self.world.clients[c].subs:
            if (c, s.epoch, s.rid) == token:
                return s.status
        return "pending"

    def _workload(self, c: int):
        contents = CONTENTS[: self.p.contents]
        for _ in range(self.p.prompts):
            yield self.env.timeout(self.exp(self.p.think_s))
            content = contents[self.rng.randrange(len(contents))]
            token = yield from self._submit(c, content)
            outcome = yield from self._outcome(c, token)
            tries = 0
            while outcome in ("ambiguous", "timeout") and tries < self.p.retries:
                tries += 1
                again = yield from self._submit(c, content)
                self.metrics.retry(token, again)
                token = again
                outcome = yield from self._outcome(c, token)
        self.busy[c] = False
        self.pending_workloads -= 1
        self._maybe_done()

    def _cancel_later(self, c: int):
        yield self.env.timeout(self.exp(self.p.cancel_ms / 1000.0))
        self.apply(Action("client", "cancel", (c,)))

    def _cancel_request_later(self, c: int, index: int):
        """``$/cancel_request`` for submission ``index`` after a while, if it is still pending by then."""
        yield self.env.timeout(self.exp(self.p.cancel_ms / 1000.0))
        self.apply(Action("client", "cancel_request", (c, index)))

    def _reconnects(self, c: int):
        """Reconnect after a cut; close a connection whose resume stays unanswered and start over."""
        while True:
            client = self.world.clients[c]
            if not client.up and client.cut:
                yield self.env.timeout(self.exp(self.p.reconnect_ms / 1000.0))
                self.apply(Action("client", "reconnect", (c, self.rng.random() < self.p.replay)))
                continue
            if client.up and client.resume_rid is not None:
                epoch = client.epoch
                deadline = self.env.timeout(self.p.resume_timeout_s)
                while True:
                    yield _FirstOf(self.env, self.changed, deadline)
                    client = self.world.clients[c]
                    if client.epoch != epoch or not client.up or client.resume_rid is None:
                        break
                    if deadline.processed:
                        if self.world.links[c].up:
                            self.apply(Action("net", "cut", (c,)))  # the client gives up and closes
                        break
                continue
            yield self.changed

    # -- running ------------------------------------------------------------

    def run(self) -> RunResult:
        env = self.env
        env.process(self._intake())
        env.process(self._work())
        if self.p.restart_rate > 0:
            env.process(self._restarts())
        for c in range(self.p.clients):
            env.process(self._workload(c))
            env.process(self._reconnects(c))
            if self.p.disconnect_rate > 0:
                env.process(self._cuts(c))

        def limit():
            yield env.timeout(self.p.duration_s)
            if not self.stop.triggered:
                self.stop.succeed("duration")

        env.process(limit())
        if self.pending_workloads == 0 or self.p.prompts == 0:
            self.pending_workloads = 0
            self._maybe_done()
        env.run(until=self.stop)
        at_rest = self.stop.value == "done"
        self.metrics.finish(self.world, at_rest)
        steps = self.steps if (self.keep_steps or self.violations) else []
        return RunResult(self.index, self.seed, env.now, at_rest, tuple(self.violations), self.metrics, steps)


def run_session(p: SimParams, index: int, model: AcpModel | None = None, keep_steps: bool = False) -> RunResult:
    """Run session ``index`` of a simulation (its seed derives from ``p.seed`` and ``index``)."""
    model = model or build_model(p)
    return Session(model, p, run_seed(p.seed, index), index, keep_steps).run()
