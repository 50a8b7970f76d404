"""Breadth-first explicit-state explorer over a small transition-system interface.

The engine knows nothing about ACP.  A model offers:

``init_states()``
    the initial states, in a fixed order;
``successors(state)``
    ``(action, next_state)`` pairs in a deterministic order (paths are stored
    as ordinals into this sequence and rebuilt by replaying it);
``properties()``
    a sequence of :class:`Property`;
``format_action(action)``
    a one-line label for traces.

Optional attributes: ``fingerprint(state) -> int`` (defaults to ``hash``; a
model with symmetry reduction returns the hash of a canonical form),
``check_deadlock`` (default ``True``) and ``is_final(state)`` (a terminal state
that is not a deadlock).

What each expectation covers
----------------------------
``always``
    checked on every reachable state when it is first discovered; the first
    (hence shortest, by breadth-first order) violating state is reported.
    A violating state is not expanded further, so a second property whose only
    violations lie beyond the first one's violating states is reported only
    through paths that avoid them.
``sometimes``
    a witness: some reachable state satisfies the condition.  A missing
    witness is reported as missing; it never turns a verdict into ``holds``
    silently, because the caller decides what a missing witness means.
``eventually``
    every maximal behaviour reaches a state satisfying the condition.  After a
    complete exploration the explorer keeps the subgraph of states where the
    condition is false and that are reachable from an initial state through
    such states only; it reports a violation if that subgraph contains a
    terminal state (a finite behaviour that never satisfies it) or a cycle (an
    infinite one; the counterexample is a lasso).  Not covered: fairness (a
    cycle the system could leave is still a violation) and incomplete runs
    (an ``eventually`` property is never reported as holding when a limit
    was hit).

States are stored as 60-bit fingerprints (the model's 64-bit hash masked to
60 bits, which keeps each one a 32-byte int), not as values: two distinct
states with equal fingerprints would be merged.  The chance is about
n**2 / 2**61 for n states (about 4e-8 for a million states).
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Expectation = Literal["always", "sometimes", "eventually"]
State = Any
Action = Any


@dataclass(frozen=True)
class Property:
    """A named claim about a model: an expectation and a pure predicate on states."""

    name: str
    expectation: Expectation
    condition: Callable[[State], bool]
    rules: tuple[str, ...] = ()
    description: str = ""


def always(name: str, condition, rules=(), description="") -> Property:
    return Property(name, "always", condition, tuple(rules), description)


def sometimes(name: str, condition, rules=(), description="") -> Property:
    return Property(name, "sometimes", condition, tuple(rules), description)


def eventually(name: str, condition, rules=(), description="") -> Property:
    return Property(name, "eventually", condition, tuple(rules), description)


DEADLOCK = Property("deadlock", "always", lambda s: True, (), "a non-final state with no successor")


class TransitionSystem(Protocol):
    def init_states(self) -> Iterable[State]: ...
    def successors(self, state: State) -> Iterable[tuple[Action, State]]: ...
    def properties(self) -> Sequence[Property]: ...
    def format_action(self, action: Action) -> str: ...


@dataclass(frozen=True)
class Path:
    """A behaviour: the initial state, then ``(action, state)`` steps.

    ``loop_start`` is set for a lasso: the step index the last state returns to.
    """

    initial: State
    steps: tuple[tuple[Action, State], ...]
    ordinals: tuple[int, ...]
    loop_start: int | None = None

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def last_state(self) -> State:
        return self.steps[-1][1] if self.steps else self.initial

    def states(self) -> list[State]:
        return [self.initial] + [s for _, s in self.steps]


@dataclass(frozen=True)
class Violation:
    property: Property
    path: Path


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

    @property
    def verdict(self) -> str:
        if self.violations:
            return "violated"
        return "holds" if self.complete else "incomplete"

    @property
    def missing_witnesses(self) -> list[str]:
        return [name for name, path in self.witnesses.items() if path is None]


@dataclass(frozen=True)
class Limits:
    max_states: int | None = None
    max_seconds: float | None = None
    max_depth: int | None = None


def _replay(model: TransitionSystem, ordinals: Sequence[int], loop_start=None) -> Path:
    """Rebuild a path from its ordinals: the first picks the initial state."""
    inits = list(model.init_states())
    state = inits[ordinals[0]]
    initial, steps = state, []
    for ordinal in ordinals[1:]:
        for i, (action, nxt) in enumerate(model.successors(state)):
            if i == ordinal:
                steps.append((action, nxt))
                state = nxt
                break
        else:  # pragma: no cover - a nondeterministic model
            raise RuntimeError("successors() is not deterministic: a stored path cannot be replayed")
    return Path(initial, tuple(steps), tuple(ordinals), loop_start)


#: Fingerprints are kept to 60 bits: a non-negative int below 2**60 is a
#: two-digit CPython int (32 bytes), one of 61..64 bits takes 36.
_FP_MASK = (1 << 60) - 1


class _Store:
    """Fingerprints of seen states with parent links (index and action ordinal).

    A state is identified by its index in discovery order; ``parent[idx]`` is
    the index of the state it was discovered from (-1 for an initial state) and
    ``ordinal[idx]`` the position of the discovering action in ``successors()``
    (of the initial state in ``init_states()``).

    Fingerprints are masked to 60 bits (:data:`_FP_MASK`).  By default they
    are kept in a ``set``: dedup is all the breadth-first search needs, and a
    set of small ints costs about 60 bytes a state against about 100 for a
    ``dict`` fingerprint -> index.  With ``track_index`` (``eventually``
    properties: their post-pass needs the index of an already seen successor)
    ``index`` is that dict and ``seen`` is the same object.
    """

    __slots__ = ("seen", "index", "parent", "ordinal")

    def __init__(self, track_index: bool = False) -> None:
        self.index: dict[int, int] | None = {} if track_index else None
        self.seen: set[int] | dict[int, int] = self.index if track_index else set()
        self.parent = array("q")
        self.ordinal = array("i")

    @staticmethod
    def key(fp: int) -> int:
        """The stored form of a fingerprint."""
        return fp & _FP_MASK

    def __len__(self) -> int:
        return len(self.parent)

    def __contains__(self, fp: int) -> bool:
        return fp & _FP_MASK in self.seen

    def find(self, fp: int) -> int | None:
        """The index of a seen fingerprint, or None (needs ``track_index``)."""
        if self.index is None:
            raise TypeError("this store keeps no index: build it with track_index=True")
        return self.index.get(fp & _FP_MASK)

    def add(self, fp: int, parent: int, ordinal: int) -> int:
        """Record a new state; returns its index.  ``fp`` may be unmasked."""
        idx = len(self.parent)
        if self.index is None:
            self.seen.add(fp & _FP_MASK)
        else:
            self.index[fp & _FP_MASK] = idx
        self.parent.append(parent)
        self.ordinal.append(ordinal)
        return idx

    def ordinals_to(self, idx: int) -> list[int]:
        """The ordinals from an initial state to ``idx``: what :func:`_replay` takes."""
        chain = []
        while idx >= 0:
            chain.append(self.ordinal[idx])
            idx = self.parent[idx]
        chain.reverse()
        return chain

    def nbytes(self) -> int:
        """Bytes held by the store: containers, the int objects they own, the arrays.

        Ints that CPython caches (-5..256) are shared, not owned, and not counted.
        """
        from sys import getsizeof

        total = getsizeof(self.seen) + getsizeof(self.parent) + getsizeof(self.ordinal)
        total += sum(map(getsizeof, self.seen))
        if self.index is not None:
            total += sum(getsizeof(v) for v in self.index.values() if v > 256)
        return total


def explore(
    model: TransitionSystem,
    limits: Limits = Limits(),
    progress: Callable[[Stats], None] | None = None,
    stop_on_violation: bool = False,
    expand_violating: bool = False,
) -> Result:
    """Explore every reachable state breadth-first and check the model's properties.

    Returns a :class:`Result`; its verdict is ``holds`` only when the whole
    reachable state space was explored and nothing was violated.
    ``expand_violating`` keeps exploring beyond violating states, so every
    property gets its own shortest counterexample even when another property
    is violated on the way (each property is still reported once).

    Examples
    --------
    >>> from acplab.model.twophase import TwoPhase
    >>> explore(TwoPhase(3)).stats.states
    288
    """
    started = time.perf_counter()
    fingerprint = getattr(model, "fingerprint", hash)
    check_deadlock = getattr(model, "check_deadlock", True)
    is_final = getattr(model, "is_final", None)
    props = list(model.properties())
    _reject_duplicate_names(props)
    active_always = [p for p in props if p.expectation == "always"]
    active_sometimes = [p for p in props if p.expectation == "sometimes"]
    eventual = [p for p in props if p.expectation == "eventually"]
    successors = model.successors

    stats = Stats()
    result = Result(complete=False, stats=stats)
    result.witnesses = {p.name: None for p in active_sometimes}
    graph = _EventualGraph(eventual) if eventual else None
    violated: list[tuple[Property, int]] = []
    witnessed: list[tuple[Property, int]] = []

    def discover(state, idx) -> bool:
        """Check a newly found state; return whether it may be expanded."""
        if graph is not None:
            graph.mark(idx, state)
        bad = [p for p in active_always if not p.condition(state)]
        if bad:
            for p in bad:
                active_always.remove(p)
                violated.append((p, idx))
            if not expand_violating:
                return False
        if active_sometimes:
            for p in [p for p in active_sometimes if p.condition(state)]:
                active_sometimes.remove(p)
                witnessed.append((p, idx))
        return True

    store = _Store(track_index=graph is not None)
    seen, index, add = store.seen, store.index, store.add
    parent_of = store.parent
    frontier = []
    for ordinal, state in enumerate(model.init_states()):
        fp = fingerprint(state) & _FP_MASK
        if fp in seen:
            continue
        idx = add(fp, -1, ordinal)
        if graph is not None:
            graph.inits.append(idx)
        if discover(state, idx):
            frontier.append((state, idx))
    limit = None
    next_report = started + 0.25
    depth = 1 if frontier else 0
    while frontier and limit is None:
        if stop_on_violation and violated:
            break
        if limits.max_depth is not None and depth >= limits.max_depth:
            limit = f"max depth {limits.max_depth}"
            break
        next_frontier = []
        for n, (state, idx) in enumerate(frontier):
            count = 0
            for ordinal, (_action, nxt) in enumerate(successors(state)):
                count += 1
                fp = fingerprint(nxt) & _FP_MASK
                if fp in seen:
                    if graph is not None:
                        graph.edge(idx, index[fp], ordinal)
                    continue
                new = add(fp, idx, ordinal)
                expand = discover(nxt, new)
                if graph is not None:
                    graph.edge(idx, new, ordinal)
                if expand:
                    next_frontier.append((nxt, new))
            stats.transitions += count
            if count == 0:
                if graph is not None:
                    graph.terminals.append(idx)
                if check_deadlock and not (is_final and is_final(state)):
                    violated.append((DEADLOCK, idx))
                    check_deadlock = False
            if n & 1023 == 0:
                now = time.perf_counter()
                stats.states = len(parent_of)
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
            frontier = next_frontier
            if frontier:
                depth += 1
    stats.states = len(parent_of)
    stats.depth = depth
    stats.queue = 0
    complete = limit is None and not frontier
    result.complete = complete and not (stop_on_violation and violated)
    result.limit = limit
    for p, idx in violated:
        result.violations.append(Violation(p, _replay(model, store.ordinals_to(idx))))
    for p, idx in witnessed:
        result.witnesses[p.name] = _replay(model, store.ordinals_to(idx))
    if graph is not None and result.complete:
        for p, ordinals, loop in graph.violations(store):
            result.violations.append(Violation(p, _replay(model, ordinals, loop)))
    stats.seconds = time.perf_counter() - started
    return result


def _reject_duplicate_names(props: Sequence[Property]) -> None:
    seen = set()
    for p in props:
        if p.name in seen:
            raise ValueError(f"two properties are named {p.name!r}: give each a unique name")
        seen.add(p.name)


class _EventualGraph:
    """The edges among states that falsify an ``eventually`` condition (post-pass search)."""

    def __init__(self, props: Sequence[Property]) -> None:
        self.props = list(props)
        self.false = [bytearray() for _ in props]
        self.src, self.dst, self.ord = array("q"), array("q"), array("l")
        self.inits: list[int] = []
        self.terminals: list[int] = []

    def mark(self, idx: int, state: State) -> None:
        for flags, p in zip(self.false, self.props):
            flags.append(0 if p.condition(state) else 1)

    def edge(self, src: int, dst: int, ordinal: int) -> None:
        for flags in self.false:
            if flags[src] and flags[dst]:
                self.src.append(src)
                self.dst.append(dst)
                self.ord.append(ordinal)
                return

    def violations(self, store: _Store):
        for k, p in enumerate(self.props):
            found = self._violation(self.false[k], store)
            if found is not None:
                yield (p, *found)

    def _violation(self, flags: bytearray, store: _Store):
        adj: dict[int, list[tuple[int, int]]] = {}
        for s, d, o in zip(self.src, self.dst, self.ord):
            if flags[s] and flags[d]:
                adj.setdefault(s, []).append((d, o))
        parent: dict[int, tuple[int, int]] = {}
        order = []
        frontier = [i for i in self.inits if flags[i]]
        for i in frontier:
            parent[i] = (-1, store.ordinal[i])
        while frontier:
            order.extend(frontier)
            nxt = []
            for s in frontier:
                for d, o in adj.get(s, ()):
                    if d not in parent:
                        parent[d] = (s, o)
                        nxt.append(d)
            frontier = nxt
        reach = set(parent)
        terminals = set(self.terminals)
        for i in order:
            if i in terminals:
                return self._chain(parent, i), None
        cycle_node = _find_cycle(reach, adj)
        if cycle_node is None:
            return None
        return self._lasso(parent, adj, reach, cycle_node)

    @staticmethod
    def _chain(parent, idx) -> list[int]:
        chain = []
        while idx >= 0:
            idx, o = parent[idx][0], parent[idx][1]
            chain.append(o)
        chain.reverse()
        return chain

    def _lasso(self, parent, adj, reach, start):
        """Prefix to ``start`` then a shortest cycle back to it."""
        back: dict[int, tuple[int, int]] = {}
        frontier = [start]
        while frontier:
            nxt = []
            for s in frontier:
                for d, o in adj.get(s, ()):
                    if d == start:
                        prefix = self._chain(parent, start)
                        loop = []
                        node, ordinal = s, o
                        while True:
                            loop.append(ordinal)
                            if node == start:
                                break
                            node, ordinal = back[node]
                        loop.reverse()
                        return prefix + loop, len(prefix) - 1
                    if d in reach and d not in back:
                        back[d] = (s, o)
                        nxt.append(d)
            frontier = nxt
        return None


def _find_cycle(nodes: set[int], adj) -> int | None:
    """A node that lies on a cycle of the induced subgraph, or None (Kahn's algorithm)."""
    indeg = dict.fromkeys(nodes, 0)
    for s in nodes:
        for d, _ in adj.get(s, ()):
            if d in indeg:
                indeg[d] += 1
    queue = [n for n, k in indeg.items() if k == 0]
    while queue:
        s = queue.pop()
        for d, _ in adj.get(s, ()):
            if d in indeg:
                indeg[d] -= 1
                if indeg[d] == 0:
                    queue.append(d)
    left = {n for n, k in indeg.items() if k > 0}
    if not left:
        return None
    # Walk forward inside the leftover set until a node repeats: it is on a cycle.
    node, seen = min(left), set()
    while node not in seen:
        seen.add(node)
        node = next(d for d, _ in adj.get(node, ()) if d in left)
    return node
