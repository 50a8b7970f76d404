"""Which steps of the ACP model are enabled: the whole list, or whether one action is in it.

:class:`EnabledActions` is the part of :class:`~.model.AcpModel` that lists
the enabled actions (for the explorer, in a fixed order) and answers
``enabled(w, a)`` for one (for the simulator, once a step) by asking only
the part of the list that offers ``a``'s kind: the agent's list is four
groups, a client's actions are its own, a connection's network steps its
own.  The groups *are* the list, so the two cannot disagree
(``tests/test_enabled.py`` checks it on every reached state of every
scenario).
"""

from __future__ import annotations

from functools import cached_property

from . import agent as ag
from . import network as net
from .events import Action
from .state import Client, World


class EnabledActions:
    """Mixed into the model, which sets ``spec``, ``bounds``, ``opts`` and ``continue_after_violation``."""

    # -- enabled actions ------------------------------------------------------------

    def actions(self, w: World) -> list[Action]:
        if w.violation is not None and not self.continue_after_violation:
            return []
        acts: list[Action] = []
        acts += self._network_actions(w)
        acts += self._agent_actions(w)
        acts += self._client_actions(w)
        return acts

    def enabled(self, w: World, a: Action) -> bool:
        """``a in self.actions(w)``, asking only the part of :meth:`actions` that offers ``a``'s kind
        (the simulator asks it once a step: building every action list was a quarter of its time)."""
        if w.violation is not None and not self.continue_after_violation:
            return False
        args = a.args
        if a.actor == "agent":
            group = self._agent_groups.get(a.name)
            return group is not None and a in group(w)
        if not args or type(args[0]) is not int or not 0 <= args[0] < len(w.clients):
            return a in self.actions(w)  # an odd argument: the full list decides
        if a.actor == "client":
            return a in self._client_actions_of(w, args[0], w.clients[args[0]])
        if a.actor == "net":
            link_steps = net.link_steps(args[0], w.links[args[0]], w.budget, self.bounds.ordered)
            return (a.name, args) in link_steps
        return False

    def _network_actions(self, w: World) -> list[Action]:
        return [Action("net", name, args) for name, args in net.network_steps(w, self.bounds.ordered)]

    def _agent_actions(self, w: World) -> list[Action]:
        return self._held_actions(w) + self._report_actions(w) + self._work_actions(w) + self._own_actions(w)

    def _held_actions(self, w: World) -> list[Action]:
        """Insert or reject the held prompt; an early ID or a hook for the oldest."""
        a = w.agent
        spec, b = self.spec, self.bounds
        acts = []
        held = ag.insertable(a, spec, b.busy_inserts, b.busy_commands)
        if held is not None:
            acts.append(Action("agent", "insert", (held,)))
            if w.budget.failures and not ag.is_command(a.reqs[held].content):
                acts.append(Action("agent", "reject", (held,)))
        first = ag.next_held(a)
        if first is not None and spec.runtime_swallows and a.work is None:
            acts.append(Action("agent", "swallow", (first,)))
        if first is not None:
            req = a.reqs[first]
            if b.early_ids and spec.ids_before_insertion and req.mid is None and not b.native_ids:
                acts.append(Action("agent", "assign_id", (first,)))
            if b.hooks and spec.running_before_insertion and a.work is None and not ag.is_command(req.content):
                acts.append(Action("agent", "hook", (first,)))
        return acts

    def _report_actions(self, w: World) -> list[Action]:
        """Report inserted prompts live; answer them at insertion."""
        a, spec = w.agent, self.spec
        due = ag.echo_index(a, spec)
        if self.bounds.mixed_shapes:  # each report's shape on its own (U13)
            acts = [Action("agent", "echo", (i, chunked)) for i in due for chunked in (False, True)]
        else:
            acts = [Action("agent", "echo", (i,)) for i in due]
        if spec.answers and spec.respond_at == "insertion":
            for i, req in enumerate(a.reqs):
                if req.inserted and not req.answered:
                    acts.append(Action("agent", "answer", (i,)))
        return acts

    def _work_actions(self, w: World) -> list[Action]:
        """The foreground work's next steps; late updates of ended work."""
        a = w.agent
        acts = [Action("agent", step) for step in ag.work_steps(a, self.opts, w.budget.failures > 0, self.spec)]
        if self.bounds.stop_reasons and Action("agent", "finish") in acts and not a.work.failed:
            # every stop reason the turn may end with; v1's closed enum has no custom value (W14)
            reasons = ag.STOP_REASONS if self.spec.state_updates else ag.STOP_REASONS[:-1]
            at = acts.index(Action("agent", "finish"))
            acts[at:at + 1] = [Action("agent", "finish", (r,)) for r in reasons]
        if a.late:
            acts.append(Action("agent", "late_update"))
        if ag.background_due(a, self.opts):
            acts.append(Action("agent", "background_step"))
        acts += [Action("agent", "resume_step", (k,)) for k in range(len(a.resumes))]
        return acts

    def _own_actions(self, w: World) -> list[Action]:
        """What the agent may do on its own: import, start work, restart, forget a retained message."""
        a, spec, b = w.agent, self.spec, self.bounds
        acts = []
        calm = a.work is None and not (spec.echo_before_work and ag.report_due(a))
        placed = not (spec.echo_before_work and ag.report_due(a))  # an import is reported at once (S6)
        if b.imports and (calm or b.busy_imports and placed) and not any(e.origin == "imported" for e in a.history):
            acts.append(Action("agent", "import"))
        if w.budget.own_work and spec.agent_initiated_work and calm:
            acts.append(Action("agent", "start_own_work"))
        if w.budget.restarts:
            acts.append(Action("agent", "restart"))
        if w.budget.notices and any(a.attached):
            acts.append(Action("agent", "notice"))
        if w.budget.forgets:
            acts += [Action("agent", "forget", (i,)) for i, e in enumerate(a.history) if e.retained]
        return acts

    def _client_actions(self, w: World) -> list[Action]:
        acts = []
        for c, client in enumerate(w.clients):
            acts += self._client_actions_of(w, c, client)
        return acts

    def _client_actions_of(self, w: World, c: int, client: Client) -> list[Action]:
        if not client.up:
            if client.cut:
                acts = [Action("client", "reconnect", (c, True)), Action("client", "reconnect", (c, False))]
                if self.bounds.load_joiners and client.epoch == -1:  # a late joiner may use session/load (R1)
                    acts.append(Action("client", "reconnect", (c, "load")))
                return acts
            return []
        if client.resume_rid is not None:
            return []
        acts = []
        b = w.budget
        if client.closed:
            return self._permission_answers(c, client)
        if b.closes:
            acts.append(Action("client", "close", (c,)))
        if b.prompts:
            for content in self.bounds.contents:
                acts.append(Action("client", "submit", (c, content)))
        pending = [i for i, s in enumerate(client.subs) if s.status == "pending" and s.epoch == client.epoch]
        if b.cancels and (pending or client.fg != "idle"):
            acts.append(Action("client", "cancel", (c,)))
        if b.cancel_requests:
            for i in pending:
                acts.append(Action("client", "cancel_request", (c, i)))
        if b.retries:
            acts += [Action("client", "retry", (c, i)) for i in pending]
        return acts + self._permission_answers(c, client)

    @staticmethod
    def _permission_answers(c: int, client: Client) -> list[Action]:
        acts = []
        for rid, cancelled in client.perms:
            acts.append(Action("client", "answer_permission", (c, rid, not cancelled)))
            if not cancelled:
                acts.append(Action("client", "answer_permission", (c, rid, False)))
        return acts

    @cached_property
    def _agent_groups(self) -> dict:
        """Agent action name -> the part of :meth:`_agent_actions` that offers it (for :meth:`enabled`)."""
        groups = ((self._held_actions, ("insert", "reject", "assign_id", "hook", "swallow")),
                  (self._report_actions, ("echo", "answer")), (self._work_actions, (*ag.WORK_STEPS, "late_update", "resume_step",
                                                             "background_step")),
                  (self._own_actions, ("import", "start_own_work", "restart", "forget", "notice")))
        return {name: group for group, names in groups for name in names}
