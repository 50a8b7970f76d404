"""Breadth-first explicit-state explorer over a small transition-system interface.

The engine knows nothing about ACP.  A model offers:

``init_states()``
    the initial states, in a fixed order;
``successors(state)``
    ``(action, next_state)`` pairs, or ``(action, next_state, effects)``
    triples, in a deterministic order (paths are stored as ordinals into this
    sequence and rebuilt by replaying it; the effects, such as a step's
    events, travel with the rebuilt path);
``properties()``
    a sequence of :class:`Property`;
``format_action(action)``
    a one-line label for traces.

Optional attributes: ``fingerprint(state) -> int`` (defaults to ``hash``; a
model with symmetry reduction returns the hash of a canonical form),
``check_deadlock`` (default ``True``), ``is_final(state)`` (a terminal state
that is not a deadlock), ``deadlock_property`` (the :class:`Property` a
non-final terminal state violates, so a model can name it and cite rules;
default :data:`DEADLOCK`), ``fairness_class(action) -> hashable | None``
(weak fairness for ``eventually``; see :mod:`.liveness`) and ``ample(state)``
(partial-order reduction: what it keeps and what it does not is in :mod:`.por`).

What each expectation covers
----------------------------
``always``
    checked on every reachable state when it is first discovered; the first
    (hence shortest, by breadth-first order) violating state is reported.
    A violating state is not expanded further, so a second property whose only
    violations lie beyond the first one's violating states is reported only
    through paths that avoid them.  ``severity="warning"`` (a SHOULD): the
    first violating state is reported as a warning with its shortest path,
    the state is still expanded, and the verdict does not change.
``sometimes``
    a witness: some reachable state satisfies the condition.  A missing
    *required* witness after a complete run makes the verdict ``violated``
    (the model cannot reach a state it was declared to reach); a missing
    witness with ``required=False`` is only listed, never changes the verdict.
``eventually``
    every maximal behaviour reaches a state satisfying the condition: from
    the initial states (``<>P``), or with ``every_state`` from every
    reachable state (``[]<>P``: obligations).  After a complete exploration
    the explorer keeps the subgraph of states where the condition is false
    (reachable through such states only, for ``<>P``); it reports a violation
    if that subgraph contains a terminal state (a finite behaviour that never
    satisfies it; the shallowest one) or a cycle that is weakly fair for the
    model's fairness classes (an infinite one; the counterexample is a lasso
    whose ``loop_start`` says where the loop begins).  Covered: weak fairness
    per class (a cycle the system leaves by a continuously enabled class is
    not a counterexample).  Not covered: strong fairness; fairness per action
    instance; a model without ``fairness_class`` (then any cycle counts); and
    incomplete runs (an ``eventually`` property is never reported as holding
    when a limit was hit).
deadlock
    a terminal state (no successor) that the model's ``is_final`` does not
    accept violates ``deadlock_property`` (checked when ``check_deadlock``);
    the shallowest such state is reported once.

States are stored as 60-bit fingerprints (the model's 64-bit hash masked to
60 bits, which keeps each one a 32-byte int), not as values: two distinct
states with equal fingerprints would be merged.  The chance is about
n**2 / 2**61 for n states (about 4e-8 for a million states).
"""

from __future__ import annotations

import gc
import time
from array import array
from collections import _count_elements as count_elements  # Counter.update's C loop
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter

from .coverage import Coverage, Tally, summarize
from .liveness import EventualGraph
from .path import Path, replay
from .por import ample_of, confirm
from .properties import DEADLOCK, Property, TransitionSystem, reject_duplicate_names
from .store import FP_MASK, FingerprintStore

first, second = itemgetter(0), itemgetter(1)


@dataclass(frozen=True)
class Violation:
    """A property and the shortest behaviour found that violates it."""

    property: Property
    path: Path

    @property
    def sentence(self) -> str:
        """What went wrong, in the property's own words."""
        return self.property.sentence(self.path.last_state)


@dataclass
class Stats:
    states: int = 0
    transitions: int = 0
    depth: int = 0
    queue: int = 0
    seconds: float = 0.0


@dataclass
class Result:
    """What an exploration established; ``verdict`` is ``holds`` only if it was complete."""

    complete: bool
    stats: Stats
    violations: list[Violation] = field(default_factory=list)
    witnesses: dict[str, Path | None] = field(default_factory=dict)
    limit: str | None = None
    #: violations of ``severity="warning"`` properties (SHOULDs): reported, verdict unchanged
    warnings: list[Violation] = field(default_factory=list)
    #: witnesses declared ``required=False``: missing ones are warnings
    optional: frozenset[str] = frozenset()
    #: partial-order reduction: whether ample sets were used, and the states of the confirming run
    reduced: bool = False
    confirmed: int | None = None
    #: what the run could not do as asked (say, fewer workers), in a sentence
    note: str | None = None
    #: peak resident memory of the processes that searched, and each worker's CPU seconds, when measured
    peak_bytes: int | None = None
    worker_cpu: list[float] | None = None
    #: how often each kind of action fired and each property was evaluated, armed, violated (:mod:`.coverage`)
    coverage: Coverage | None = None

    @property
    def verdict(self) -> str:
        """``holds`` needs a complete run, no violation and every required witness found.

        A required witness missing after a complete run means the model cannot
        reach a state it was declared to reach: ``violated``, never a quiet
        ``holds``.  Warnings never change the verdict.
        """
        if self.violations or (self.complete and self.missing_required):
            return "violated"
        return "holds" if self.complete else "incomplete"

    @property
    def missing_witnesses(self) -> list[str]:
        return [name for name, path in self.witnesses.items() if path is None]

    @property
    def missing_required(self) -> list[str]:
        """Missing witnesses that make the verdict ``violated``."""
        return [name for name in self.missing_witnesses if name not in self.optional]

    @property
    def missing_optional(self) -> list[str]:
        """Missing witnesses declared ``required=False``: warnings only."""
        return [name for name in self.missing_witnesses if name in self.optional]


@dataclass(frozen=True)
class Limits:
    max_states: int | None = None
    max_seconds: float | None = None
    max_depth: int | None = None


class Visitor:
    """Sees the search as it goes: every stored state once, every transition found.

    ``state(idx, state)`` for a newly stored state (its index in discovery
    order); ``edge(src, dst, successor)`` for each transition out of an
    expanded state, with the model's successor tuple ``(action, next_state[,
    effects])``.  Hooks do nothing by default.  A visitor makes the store keep
    an index, so it costs memory like an ``eventually`` property.
    """

    def state(self, idx: int, state) -> None:
        pass

    def edge(self, src: int, dst: int, successor: tuple) -> None:
        pass


def explore(
    model: TransitionSystem,
    limits: Limits = Limits(),
    progress: Callable[[Stats], None] | None = None,
    stop_on_violation: bool = False,
    expand_violating: bool = False,
    visitor: Visitor | None = None,
    por: bool = True,
) -> Result:
    """Explore every reachable state breadth-first and check the model's properties.

    Returns a :class:`Result`; its verdict is ``holds`` only when the whole
    reachable state space was explored and nothing was violated.
    ``expand_violating`` keeps exploring beyond violating states, so every
    property gets its own shortest counterexample even when another property
    is violated on the way (each property is still reported once).
    ``por`` uses the model's ``ample`` sets when it offers them (see :mod:`.por`).

    Examples
    --------
    >>> from acplab.model.engine.twophase import TwoPhase
    >>> explore(TwoPhase(3)).stats.states
    288
    """
    started = time.perf_counter()
    fingerprint = getattr(model, "fingerprint", hash)
    check_deadlock = getattr(model, "check_deadlock", True)
    is_final = getattr(model, "is_final", None)
    deadlock = getattr(model, "deadlock_property", DEADLOCK)
    props = list(model.properties())
    reject_duplicate_names(props + ([deadlock] if check_deadlock else []))
    active_always = [p for p in props if p.expectation == "always" and p.severity != "warning"]
    active_warn = [p for p in props if p.expectation == "always" and p.severity == "warning"]
    active_sometimes = [p for p in props if p.expectation == "sometimes"]
    eventual = [p for p in props if p.expectation == "eventually"]
    successors = model.successors
    ample = ample_of(model, por, bool(eventual), visitor)
    tally = Tally(model, props)
    count_actions, during, armed = tally.kind is not None, tally.during, tally.armed

    stats = Stats()
    result = Result(complete=False, stats=stats)
    result.witnesses = {p.name: None for p in active_sometimes}
    result.optional = frozenset(p.name for p in active_sometimes if not p.required)
    graph = EventualGraph(eventual, getattr(model, "fairness_class", None)) if eventual else None
    fair = graph is not None and graph.fairness is not None
    violated: list[tuple[Property, int]] = []
    warned: list[tuple[Property, int]] = []
    witnessed: list[tuple[Property, int]] = []

    always_conds = [p.condition for p in active_always]
    sometimes_conds = [p.condition for p in active_sometimes]

    def discover(state, idx, successor=None) -> bool:
        """Check a newly found state (found by ``successor``); return whether it may be expanded."""
        if graph is not None:
            graph.mark(idx, state)
        if visitor is not None:
            visitor.state(idx, state)
        if tally.armers:
            if successor is None or during is None:  # Tally.state's common case, without the call
                for name, arm in tally.armers:
                    if arm(state):
                        armed[name] += 1
            else:
                tally.state(state, successor)
        if active_warn:
            for p in [p for p in active_warn if not p.condition(state)]:
                active_warn.remove(p)
                warned.append((p, idx))
                tally.stop(p.name)
        for cond in always_conds:  # a plain loop: no comprehension frame on the common path
            if not cond(state):
                for p in [p for p in active_always if not p.condition(state)]:
                    active_always.remove(p)
                    violated.append((p, idx))
                    tally.stop(p.name)
                always_conds[:] = [p.condition for p in active_always]
                if not expand_violating:
                    return False
                break
        for cond in sometimes_conds:
            if cond(state):
                for p in [p for p in active_sometimes if p.condition(state)]:
                    active_sometimes.remove(p)
                    witnessed.append((p, idx))
                sometimes_conds[:] = [p.condition for p in active_sometimes]
                break
        return True

    store = FingerprintStore(track_index=graph is not None or visitor is not None)
    seen, index, add = store.seen, store.index, store.add
    parent_of = store.parent
    # without a graph or a visitor the loop stores a state inline (what store.add does, no call)
    plain = graph is None and visitor is None
    seen_add = seen.add if plain else None
    parent_append, ordinal_append = parent_of.append, store.ordinal.append
    acts = tally.actions
    # a level's states to expand, in index order; their indices run on from `base` unless a
    # discovered state was not expanded (then `frontier_idx` lists them): no (state, index) pairs
    frontier, frontier_idx, base = [], None, 0
    for ordinal, state in enumerate(model.init_states()):
        fp = fingerprint(state) & FP_MASK
        if fp in seen:
            continue
        idx = add(fp, -1, ordinal)
        if graph is not None:
            graph.inits.append(idx)
        if discover(state, idx):
            frontier.append(state)
            if frontier_idx is not None:
                frontier_idx.append(idx)
        elif frontier_idx is None:
            frontier_idx = array("q", range(idx))
    limit = None
    next_report = started + 0.25
    transitions = 0
    depth = 1 if frontier else 0
    while frontier and limit is None:
        if stop_on_violation and violated:
            break
        if limits.max_depth is not None and depth >= limits.max_depth:
            limit = f"max depth {limits.max_depth}"
            break
        next_frontier, next_idx = [], None
        reduce = ample if ample is not None and not active_sometimes else None
        result.reduced |= reduce is not None
        size = next_base = len(parent_of)
        for n, state in enumerate(frontier):
            idx = base + n if frontier_idx is None else frontier_idx[n]
            # fairness classes of every successor, for a state that falsifies an `eventually`
            classes = [] if fair and graph.falsifying(idx) else None
            pairs = reduce(state) if reduce is not None else None
            succs = successors(state) if pairs is None else pairs
            if type(succs) is not list:
                succs = list(succs)
            if count_actions:  # per action, in C (Counter's loop); folded into kinds at the end
                count_elements(acts, map(first, succs) if pairs is None else map(first, map(second, pairs)))
            if plain:  # no liveness graph, no visitor: the loop every invariant-only check runs
                for ordinal, successor in enumerate(succs) if pairs is None else succs:
                    fp = fingerprint(successor[1]) & FP_MASK
                    if fp in seen:
                        continue
                    seen_add(fp)
                    parent_append(idx)
                    ordinal_append(ordinal)
                    if discover(successor[1], size, successor):
                        next_frontier.append(successor[1])
                        if next_idx is not None:
                            next_idx.append(size)
                    elif next_idx is None:  # the states kept so far have consecutive indices
                        next_idx = array("q", range(next_base, size))
                    size += 1
            else:
                for ordinal, successor in enumerate(succs) if pairs is None else succs:
                    nxt = successor[1]
                    cid = -1
                    if classes is not None:
                        cid = graph.class_id(successor[0])
                        classes.append(cid)
                    fp = fingerprint(nxt) & FP_MASK
                    if fp in seen:
                        if graph is not None:
                            graph.edge(idx, index[fp], ordinal, cid)
                        if visitor is not None:
                            visitor.edge(idx, index[fp], successor)
                        continue
                    new = add(fp, idx, ordinal)
                    expand = discover(nxt, new, successor)
                    if graph is not None:
                        graph.edge(idx, new, ordinal, cid)
                    if visitor is not None:
                        visitor.edge(idx, new, successor)
                    if expand:
                        next_frontier.append(nxt)
                        if next_idx is not None:
                            next_idx.append(new)
                    elif next_idx is None:
                        next_idx = array("q", range(next_base, new))
                size = len(parent_of)
            transitions += len(succs)
            if classes is not None and pairs is not None:  # fairness needs every enabled class (por.py)
                classes = [graph.class_id(a) for a in reduce.enabled(state)]
            if classes:
                graph.enable(idx, classes)
            if not succs:
                tally.terminals += 1
                if graph is not None:
                    graph.terminals.append(idx)
                if check_deadlock and not (is_final and is_final(state)):
                    violated.append((deadlock, idx))
                    check_deadlock = False
            if n & 1023 == 0:
                now = time.perf_counter()
                stats.states, stats.transitions = len(parent_of), transitions
                if limits.max_states is not None and stats.states >= limits.max_states:
                    limit = f"max states {limits.max_states}"
                    break
                if limits.max_seconds is not None and now - started >= limits.max_seconds:
                    limit = f"max seconds {limits.max_seconds:g}"
                    break
                if progress is not None and now >= next_report:
                    stats.depth, stats.queue = depth, len(frontier) - n + len(next_frontier)
                    stats.seconds = now - started
                    progress(stats)
                    next_report = now + 0.5
        if limit is None:
            frontier, frontier_idx, base = next_frontier, next_idx, next_base
            gc.freeze()  # the states seen so far live long and hold no cycles: keep the collector off them
            if frontier:
                depth += 1
    stats.states, stats.transitions = len(parent_of), transitions
    stats.depth = depth
    stats.queue = 0
    complete = limit is None and not frontier
    result.complete = complete and not (stop_on_violation and violated)
    result.limit = limit
    for p, idx in violated:
        result.violations.append(Violation(p, replay(model, store.ordinals_to(idx))))
    for p, idx in warned:
        result.warnings.append(Violation(p, replay(model, store.ordinals_to(idx))))
    for p, idx in witnessed:
        result.witnesses[p.name] = replay(model, store.ordinals_to(idx))
    if graph is not None and result.complete:
        for p, ordinals, loop in graph.violations(store):
            result.violations.append(Violation(p, replay(model, ordinals, loop)))
    settled = {p.name: idx for p, idx in violated + warned + witnessed}
    result.coverage = summarize(
        props, tally, stats.states, settled, {v.property.name for v in result.violations + result.warnings},
        set(result.missing_required) if result.complete else set(), deadlock if getattr(model, "check_deadlock", True)
        else None, graph.falsified() if graph is not None else None)
    gc.unfreeze()
    if result.reduced:
        confirm(model, result, explore, limits, stop_on_violation=stop_on_violation,
                expand_violating=expand_violating)
    stats.seconds = time.perf_counter() - started
    return result
