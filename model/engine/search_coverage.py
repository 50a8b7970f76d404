"""Coverage: how often each kind of action fired, and each property was evaluated, armed and violated.

A ``holds`` says little when the behaviour a property watches never
happened.  Every search (:func:`.search.explore`, :func:`.walk.random_walks`) fills a :class:`Tally` as it goes and puts a
:class:`Coverage` on its result.

What is counted
---------------
``actions``
    per kind of action (the model's ``action_kind(action) -> str``; a model
    without it gets no action counts), the transitions explored: every
    successor generated from an expanded state, new or already seen, so the
    counts add up to ``Stats.transitions``.  A random walk counts the steps
    it took.
``evaluated``
    the states on which the property's condition was checked.  ``always``
    and ``sometimes``: the states discovered up to and including the one
    that settled it (its first violation, its witness), else all of them;
    ``eventually``: every state (the liveness pass reads all of them);
    deadlock: the terminal states.
``armed``
    the states on which the property had something to watch.  ``always``:
    the states (among those evaluated) where the property's own ``armed``
    predicate holds (the model says what it means, e.g. a monitor's
    bookkeeping away from its initial value; None when the property has
    no such predicate), or that the step discovering them armed on the
    way (a model's optional ``armed_during(successor) -> names``: a monitor
    may be armed and disarmed by the events of one step).  ``eventually``:
    the states where its condition is false (an obligation is open).
    ``sometimes`` and deadlock: None.
``violated``
    the violations reported: 0 or 1, as a search reports the first (shortest)
    violation of each property and stops watching it; a missing required
    witness after a complete run counts as 1.

A property that was evaluated but never armed (nor violated) is *vacuous*:
it held because nothing it speaks about happened (:attr:`Coverage.vacuous`).

Not covered: a step that arms a property on the way into a state already
discovered is not counted (only discovering steps are); a confirming
unreduced run (:mod:`.por`) leaves the reduced run's counts in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .hooks import hooks_of


@dataclass
class PropertyCoverage:
    """One property's counts (see the module docstring)."""

    expectation: str
    evaluated: int
    armed: int | None
    violated: int

    def json(self) -> dict:
        return {"expectation": self.expectation, "evaluated": self.evaluated, "armed": self.armed,
                "violated": self.violated}


@dataclass
class Coverage:
    """Actions per kind and per-property counts of one search."""

    actions: dict[str, int] = field(default_factory=dict)
    properties: dict[str, PropertyCoverage] = field(default_factory=dict)

    @property
    def vacuous(self) -> list[str]:
        """Properties evaluated on some state, never armed there and not violated, in declaration order."""
        return [name for name, c in self.properties.items() if c.armed == 0 and c.evaluated > 0 and not c.violated]


class Tally:
    """The counters a search fills: an action per transition, the armed predicates per state.

    ``actions`` maps an action to its count (the search updates it inline:
    a dict update per transition, keyed by the action itself, so actions
    must be hashable; :meth:`kinds` folds them into kinds at the end);
    :meth:`state` runs the ``always`` properties' ``armed`` predicates on a
    discovered state; :meth:`stop` drops a property once the search stops
    watching it.
    """

    def __init__(self, model, props) -> None:
        hooks = hooks_of(model)
        self.kind, self.during = hooks.action_kind, hooks.armed_during
        self.actions: dict = {}  # action -> count
        self.armed: dict[str, int] = {p.name: 0 for p in props
                                      if p.expectation == "always" and p.armed is not None}
        self.armers = [(p.name, p.armed) for p in props if p.name in self.armed]
        self.terminals = 0

    def kinds(self) -> dict[str, int]:
        """The counts per kind: a search may count per action (hashable) in ``actions`` and fold here."""
        out: dict[str, int] = {}
        kind = self.kind
        if kind is None:  # a model without action kinds counts no actions
            return out
        for act, n in self.actions.items():
            k = kind(act)
            out[k] = out.get(k, 0) + n
        return out

    def state(self, state, successor=None) -> None:
        """Count ``state`` armed for each watched property whose predicate holds there, or that the
        step discovering it (``successor``) armed on the way (the model's ``armed_during``)."""
        armed = self.armed
        if successor is None or self.during is None:  # the common case: the predicates alone
            for name, arm in self.armers:
                if arm(state):
                    armed[name] += 1
            return
        during = self.during(successor)
        for name, arm in self.armers:
            if name in during or arm(state):
                armed[name] += 1

    def stop(self, name: str) -> None:
        """No longer count ``name`` armed (the search no longer evaluates it)."""
        self.armers = [(n, arm) for n, arm in self.armers if n != name]

    def watch(self, props) -> None:
        """Count armed only for ``props`` (the ``always`` properties still watched)."""
        self.armers = [(p.name, p.armed) for p in props if p.name in self.armed]

    def add(self, counts: tuple) -> None:
        """Add another tally's counts, as :meth:`take` gives them (a worker's, or a checkpoint's)."""
        actions, armed, terminals = counts
        for k, v in actions.items():
            self.actions[k] = self.actions.get(k, 0) + v
        for k, v in armed.items():
            self.armed[k] = self.armed.get(k, 0) + v
        self.terminals += terminals

    def take(self) -> tuple[dict, dict[str, int], int]:
        """The counts so far, and start again from zero (a worker hands them over)."""
        out = (self.actions, self.armed, self.terminals)
        self.actions, self.armed, self.terminals = {}, {k: 0 for k in self.armed}, 0
        return out


def summarize(props, tally: Tally, states: int, settled: dict[str, int], violated: set[str], missing: set[str],
              deadlock=None, falsified: dict[str, int] | None = None) -> Coverage:
    """The :class:`Coverage` of a finished search.

    ``settled[name]`` is the discovery position (0-based) of the state that
    settled a property (its first violation or its witness); ``violated``
    the properties reported violated (or warned); ``missing`` the required
    witnesses missing after a complete run; ``falsified[name]`` the states
    falsifying an ``eventually`` condition (None: not evaluated).
    """
    out = Coverage(dict(sorted(tally.kinds().items())))
    for p in props:
        armed: int | None
        if p.expectation == "eventually":
            evaluated = states if falsified is not None else 0
            armed = (falsified or {}).get(p.name, 0)
        else:
            evaluated = settled[p.name] + 1 if p.name in settled else states
            armed = tally.armed.get(p.name)
        bad = 1 if p.name in violated or p.name in missing else 0
        out.properties[p.name] = PropertyCoverage(p.expectation, evaluated, armed, bad)
    if deadlock is not None:
        out.properties[deadlock.name] = PropertyCoverage("always", tally.terminals, None,
                                                         1 if deadlock.name in violated else 0)
    return out
