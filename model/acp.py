"""The ACP v2 prompt-lifecycle model as a transition system for the explorer.

One session; an agent (adapter + runtime, :mod:`model.agent`); 1..N clients
(:mod:`model.client`), each on its own connection with a FIFO channel each
way (:mod:`model.network` semantics below); fault budgets for drops,
connection cuts, failures and restarts.  A step is one action of one actor;
its events feed the rule monitors (:mod:`model.monitors`), whose bookkeeping
is part of the state.  A violating state records the monitor's sentence and
is not expanded.
"""

from __future__ import annotations

from typing import NamedTuple

from acplab.model import agent as ag
from acplab.model import client as cl
from acplab.model import events as ev
from acplab.model.engine import Property, always, sometimes
from acplab.model.monitors import ALL_MONITORS, Monitor
from acplab.model.spec import Spec
from acplab.model.state import Agent, Budget, Client, Link, World, replace_at


class Bounds(NamedTuple):
    """How much may happen: the explorer's bounds (all small)."""

    clients: int = 2
    prompts: int = 2
    contents: tuple[str, ...] = ("hi",)
    drops: int = 0
    disconnects: int = 0
    cancels: int = 0
    cancel_requests: int = 0
    failures: int = 0
    restarts: int = 0
    imports: int = 0
    chunks: bool = False
    retain: bool = True
    retain_commands: bool = False
    tools: bool = False
    permission: bool = False
    output: bool = False

    def options(self) -> ag.Options:
        return ag.Options(self.chunks, self.retain, self.retain_commands, self.tools, self.permission, self.output)


class Action(NamedTuple):
    actor: str
    name: str
    args: tuple = ()


def quiescent(w: World) -> bool:
    """Nothing in flight, no work, no prompt pending at the agent: the world is at rest."""
    if w.agent.work is not None or w.agent.reqs:
        return False
    return all(not link.to_agent and not link.to_client for link in w.links)


class AcpModel:
    """The transition system: ``init_states``, ``successors``, ``properties``, ``format_action``."""

    check_deadlock = False

    def __init__(self, spec: Spec, bounds: Bounds, witnesses=(), symmetry: bool = False,
                 monitors: tuple[Monitor, ...] = ALL_MONITORS, continue_after_violation: bool = False) -> None:
        #: keep stepping after a violation (each state records only its own step's violation)
        self.continue_after_violation = continue_after_violation
        self.spec = spec
        self.bounds = bounds
        self.opts = bounds.options()
        self.monitors = monitors
        self.witnesses = tuple(witnesses)
        self.symmetry = symmetry
        self._by_kind: dict[str, list[tuple[int, Monitor]]] = {}
        for k, m in enumerate(monitors):
            for kind in m.kinds:
                self._by_kind.setdefault(kind, []).append((k, m))
        self._handlers: dict = {}
        self._resting = [(k, m) for k, m in enumerate(monitors) if type(m).at_rest is not Monitor.at_rest]
        if symmetry:
            from acplab.model.symmetry import canonical_hasher

            self.fingerprint = canonical_hasher(monitors)

    # -- the interface ------------------------------------------------------------

    def init_states(self):
        b = self.bounds
        n = b.clients
        agent = Agent(attached=(True,) * n)
        budget = Budget(b.prompts, b.drops, b.disconnects, b.cancels, b.cancel_requests, b.failures, b.restarts)
        mon = tuple(m.initial for m in self.monitors)
        return [World(agent, (Client(),) * n, (Link(),) * n, budget, mon)]

    def successors(self, w: World):
        """``(action, next world, events)`` for every enabled action, in a fixed order."""
        return [(action, *self.step(w, action)) for action in self.actions(w)]

    def properties(self) -> list[Property]:
        props = [
            always(m.name, _not_violated(m.name), m.rules, m.description, _what_happened) for m in self.monitors
        ]
        props += [sometimes(name, cond, rules, desc) for name, cond, rules, desc in self.witnesses]
        return props

    def format_action(self, a: Action) -> str:
        return format_action(a)

    def is_final(self, w: World) -> bool:
        return True

    # -- enabled actions ------------------------------------------------------------

    def actions(self, w: World) -> list[Action]:
        if w.violation is not None and not self.continue_after_violation:
            return []
        acts: list[Action] = []
        acts += self._network_actions(w)
        acts += self._agent_actions(w)
        acts += self._client_actions(w)
        return acts

    def _network_actions(self, w: World) -> list[Action]:
        acts = []
        b = w.budget
        for c, link in enumerate(w.links):
            if not link.up:
                continue
            if link.to_agent:
                acts.append(Action("net", "deliver_to_agent", (c,)))
            if link.to_client:
                acts.append(Action("net", "deliver_to_client", (c,)))
            if b.drops:
                if link.to_agent:
                    acts.append(Action("net", "drop_to_agent", (c,)))
                if link.to_client:
                    acts.append(Action("net", "drop_to_client", (c,)))
            if b.cuts:
                acts.append(Action("net", "cut", (c,)))
        return acts

    def _agent_actions(self, w: World) -> list[Action]:
        a = w.agent
        acts = []
        held = ag.next_held(a)
        if held is not None and a.work is None:
            acts.append(Action("agent", "insert", (held,)))
            if w.budget.failures and not ag.is_command(a.reqs[held].content):
                acts.append(Action("agent", "reject", (held,)))
        for i, req in enumerate(a.reqs):
            if req.inserted and not req.echoed:
                acts.append(Action("agent", "echo", (i,)))
            if req.inserted and not req.answered and self.spec.respond_at == "insertion":
                acts.append(Action("agent", "answer", (i,)))
        for step in ag.work_steps(a, self.opts, w.budget.failures > 0):
            acts.append(Action("agent", step))
        if self.bounds.imports and a.work is None and not any(e.origin == "imported" for e in a.history):
            acts.append(Action("agent", "import"))
        if w.budget.restarts:
            acts.append(Action("agent", "restart"))
        return acts

    def _client_actions(self, w: World) -> list[Action]:
        acts = []
        b = w.budget
        for c, client in enumerate(w.clients):
            if not client.up:
                if client.cut:
                    acts.append(Action("client", "reconnect", (c, True)))
                    acts.append(Action("client", "reconnect", (c, False)))
                continue
            if client.resume_rid is not None:
                continue
            if b.prompts:
                for content in self.bounds.contents:
                    acts.append(Action("client", "submit", (c, content)))
            pending = [i for i, s in enumerate(client.subs) if s.status == "pending" and s.epoch == client.epoch]
            if b.cancels and (pending or client.fg != "idle"):
                acts.append(Action("client", "cancel", (c,)))
            if b.cancel_requests:
                for i in pending:
                    acts.append(Action("client", "cancel_request", (c, i)))
            for rid, cancelled in client.perms:
                acts.append(Action("client", "answer_permission", (c, rid, not cancelled)))
                if not cancelled:
                    acts.append(Action("client", "answer_permission", (c, rid, False)))
        return acts

    # -- one step ------------------------------------------------------------

    def step(self, w: World, a: Action) -> tuple[World, list]:
        """Apply action ``a``; return the next world and the step's events."""
        handler = self._handlers.get((a.actor, a.name))
        if handler is None:
            handler = self._handlers[(a.actor, a.name)] = getattr(self, f"_{a.actor}_{a.name}")
        after, events = handler(w, *a.args)
        return self._monitor(w, after, events), events

    def _monitor(self, before: World, after: World, events: list) -> World:
        mon = None
        violation = None
        for e in events:
            for k, m in self._by_kind.get(e.kind, ()):
                if mon is None:
                    mon = list(before.mon)
                state, bad = m.observe(mon[k], e, before, after)
                mon[k] = state
                if bad is not None and violation is None:
                    violation = (m.name, bad)
        if mon is not None:
            after = after._replace(mon=tuple(mon))
        if violation is None and quiescent(after):
            for k, m in self._resting:
                bad = m.at_rest(after.mon[k], after)
                if bad is not None:
                    violation = (m.name, bad)
                    break
        if violation is not None or after.violation is not None:
            after = after._replace(violation=violation)
        return after

    def _epochs(self, w: World) -> tuple[int, ...]:
        return tuple(link.epoch for link in w.links)

    def _route(self, w: World, events: list) -> tuple[World, list]:
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
                e = e._replace(msg=_through_proxy(e.msg, self.spec.proxy_id_offset))
                links[c] = link._replace(to_agent=link.to_agent + (e.msg,))
            routed.append(e)
        return w._replace(links=tuple(links)), routed

    # network

    def _net_deliver_to_agent(self, w: World, c: int):
        link = w.links[c]
        msg, rest = link.to_agent[0], link.to_agent[1:]
        w = w._replace(links=replace_at(w.links, c, link._replace(to_agent=rest)))
        agent, out = ag.receive(w.agent, c, link.epoch, msg, self.spec, self.opts, self._epochs(w))
        w, out = self._route(w._replace(agent=agent), out)
        return w, [ev.Deliver((c, link.epoch), ev.C2A, msg)] + out

    def _net_deliver_to_client(self, w: World, c: int):
        link = w.links[c]
        msg, rest = link.to_client[0], link.to_client[1:]
        w = w._replace(links=replace_at(w.links, c, link._replace(to_client=rest)))
        msg = _through_proxy(msg, -self.spec.proxy_id_offset)
        client, out = cl.receive(w.clients[c], c, msg, self.spec)
        w, out = self._route(w._replace(clients=replace_at(w.clients, c, client)), out)
        return w, [ev.Deliver((c, link.epoch), ev.A2C, msg)] + out

    def _net_drop_to_agent(self, w: World, c: int):
        link = w.links[c]
        msg = link.to_agent[0]
        links = replace_at(w.links, c, link._replace(to_agent=link.to_agent[1:]))
        return w._replace(links=links, budget=w.budget._replace(drops=w.budget.drops - 1)), [
            ev.Drop((c, link.epoch), ev.C2A, msg)
        ]

    def _net_drop_to_client(self, w: World, c: int):
        link = w.links[c]
        msg = link.to_client[0]
        links = replace_at(w.links, c, link._replace(to_client=link.to_client[1:]))
        client = w.clients[c]
        if client.view != "partial":
            client = client._replace(view="partial")
        w = w._replace(links=links, clients=replace_at(w.clients, c, client),
                       budget=w.budget._replace(drops=w.budget.drops - 1))
        return w, [ev.Drop((c, link.epoch), ev.A2C, msg)]

    def _net_cut(self, w: World, c: int, budgeted: bool = True):
        link = w.links[c]
        lost = link.to_agent + link.to_client
        w = w._replace(
            links=replace_at(w.links, c, link._replace(up=False, to_agent=(), to_client=())),
            clients=replace_at(w.clients, c, cl.disconnected(w.clients[c])),
        )
        if budgeted:
            w = w._replace(budget=w.budget._replace(cuts=w.budget.cuts - 1))
        agent, out = ag.connection_lost(w.agent, c, self._epochs(w), self.spec)
        w, out = self._route(w._replace(agent=agent), out)
        return w, [ev.Cut((c, link.epoch), lost)] + out

    # agent

    def _agent_insert(self, w: World, i: int):
        agent, out = ag.insert(w.agent, i, self.spec, self.opts, self._epochs(w))
        return self._route(w._replace(agent=agent), out)

    def _agent_reject(self, w: World, i: int):
        agent, out = ag.reject(w.agent, i, self.spec)
        w = w._replace(agent=agent, budget=w.budget._replace(failures=w.budget.failures - 1))
        return self._route(w, out)

    def _agent_echo(self, w: World, i: int):
        agent, out = ag.echo(w.agent, i, self.opts, self._epochs(w))
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
        agent, more = ag.restart(w.agent)
        w = w._replace(agent=agent, budget=w.budget._replace(restarts=w.budget.restarts - 1))
        return w, out + more

    def __getattr__(self, name: str):
        # Work steps share one handler: _agent_output, _agent_finish, _agent_fail, ...
        if name.startswith("_agent_"):
            step = name[len("_agent_"):]

            def handler(w: World, step=step):
                agent, out = ag.work_step(w.agent, step, self.spec, self.opts, self._epochs(w))
                w = w._replace(agent=agent)
                if step == "fail":
                    w = w._replace(budget=w.budget._replace(failures=w.budget.failures - 1))
                return self._route(w, out)

            return handler
        raise AttributeError(name)

    # clients

    def _client_submit(self, w: World, c: int, content: str):
        client, out = cl.submit(w.clients[c], c, (content,), self.spec)
        w = w._replace(clients=replace_at(w.clients, c, client), budget=w.budget._replace(prompts=w.budget.prompts - 1))
        return self._route(w, out)

    def _client_cancel(self, w: World, c: int):
        client, out = cl.cancel_session(w.clients[c], c)
        return self._route(w._replace(budget=w.budget._replace(cancels=w.budget.cancels - 1)), out)

    def _client_cancel_request(self, w: World, c: int, i: int):
        client, out = cl.cancel_request(w.clients[c], c, i)
        w = w._replace(budget=w.budget._replace(cancel_requests=w.budget.cancel_requests - 1))
        return self._route(w, out)

    def _client_answer_permission(self, w: World, c: int, rid: int, approve: bool):
        client, out = cl.answer_permission(w.clients[c], c, rid, approve)
        return self._route(w._replace(clients=replace_at(w.clients, c, client)), out)

    def _client_reconnect(self, w: World, c: int, replay: bool):
        client, out = cl.reconnect(w.clients[c], c, replay)
        links = replace_at(w.links, c, Link(epoch=client.epoch))
        return self._route(w._replace(clients=replace_at(w.clients, c, client), links=links), out)


_CLIENT_ID_KINDS = frozenset({"prompt", "resume", "cancel_request", "prompt_result", "prompt_result_v1",
                              "error_response", "resume_result"})


def _through_proxy(msg, offset: int):
    """P19: a proxy may rewrite the ids of the client's requests (and map its responses back)."""
    if offset and msg.kind in _CLIENT_ID_KINDS:
        return msg._replace(rid=msg.rid + offset)
    return msg


def _not_violated(name: str):
    return lambda w: w.violation is None or w.violation[0] != name


def _what_happened(w: World) -> str | None:
    """The violating monitor's own sentence, recorded in the state by the step that broke it."""
    return w.violation[1] if w.violation is not None else None


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
        return f"agent: {a.name.replace('_', ' ')}"
    c = f"c{args[0] + 1}"
    if a.name == "submit":
        return f"{c} submits {args[1]!r}"
    if a.name == "reconnect":
        return f"{c} reconnects and resumes" + (" with replay from start" if args[1] else " without replay")
    if a.name == "cancel_request":
        return f"{c} sends $/cancel_request for its prompt {args[1] + 1}"
    if a.name == "answer_permission":
        return f"{c} {'allows' if args[2] else 'rejects'} permission request #{args[1]}"
    return f"{c} sends session/cancel"
