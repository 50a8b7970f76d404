"""The liveness pass: ``eventually`` properties checked on the explored graph after a complete run.

The explorer records, per ``eventually`` property, which states falsify its
condition, the edges among falsifying states (with each edge's fairness
class) and, per falsifying state, the fairness classes enabled there (read
from *all* its successors).  Afterwards a behaviour that never satisfies the
condition is either a finite one (a terminal state reached through
falsifying states) or an infinite one: a cycle among falsifying states,
reported as a lasso.

Weak fairness, per class
------------------------
A model may name each action's fairness class (``fairness_class(action) ->
hashable | None``; None for actions that need no fairness, such as a user's
decision or a fault).  An infinite behaviour stays, from some point on,
inside one strongly connected component (SCC) of the falsifying subgraph.
It is weakly fair if every class that is enabled in every state it visits
from then on is also taken infinitely often.  So a nontrivial SCC holds a
fair counterexample exactly when every class enabled in *all* of its states
has an edge of that class that stays inside the SCC: a closed walk can then
visit every state of the SCC and take each such edge.  The lasso printed is
such a walk, kept short: it takes one edge of each class that would
otherwise stay enabled, and detours only where needed.

Which behaviours are quantified over
------------------------------------
Every weakly fair behaviour, finite or infinite.  A finite one may end in a
terminal state or in any *fair end*: an expanded state where no fair action
is enabled (every enabled action's class is None), even if unfair ones, such
as a user's choice or a fault, still are: nothing obliges them to happen, so
the behaviour that never takes them is examined.  A falsifying fair end is
recorded with the terminals (:meth:`EventualGraph.enable`), so obligations
are judged there as at a terminal.  A model that wants its deadlock property
(``NoStuckState``) judged at fair ends too makes some obligation owed in
every state that is not at rest (the ACP model does); the engine's own
deadlock check still sees terminal states only.  With POR, a reduced state's
enabled classes are those of every enabled action, so fair ends are exact.

Not covered: strong fairness (a class enabled infinitely often but not
continuously may still be starved); fairness per action *instance* (one
class covers, e.g., every delivery on one channel, not each message); and a
model without ``fairness_class`` gets no fairness at all (every cycle is a
counterexample).
"""

from __future__ import annotations

from array import array
from itertools import islice
from collections.abc import Callable, Sequence
from typing import Protocol

from .properties import Property, State


class Positions(Protocol):
    def __getitem__(self, idx: int, /) -> int: ...


class ParentLinks(Protocol):
    """What :meth:`EventualGraph.violations` reads of a search's store (a
    :class:`~.store.FingerprintStore`, or the level engine's parent links)."""

    @property
    def ordinal(self) -> Positions: ...  # ordinal[i]: initial state i's position in init_states()

    def ordinals_to(self, idx: int) -> list[int]: ...


class EventualGraph:
    """The edges among states that falsify an ``eventually`` condition, with fairness data."""

    def __init__(self, props: Sequence[Property], fairness: Callable | None = None) -> None:
        self.props = list(props)
        self.false = [bytearray() for _ in props]
        self.src, self.dst, self.ord, self.cls = array("q"), array("q"), array("l"), array("l")
        self.inits: list[int] = []
        self.terminals: list[int] = []
        self.fairness = fairness
        self._class_ids: dict = {}
        self._set_ids: dict[frozenset, int] = {frozenset(): 0}
        self._sets: list[frozenset] = [frozenset()]
        self.enabled = array("l")  # per state: id of its set of enabled fairness classes
        self._falsifying = bytearray()  # per state: falsifies at least one condition

    # -- recording, during the search ------------------------------------------------

    def mark(self, idx: int, state: State) -> bool:
        """Evaluate every condition on a new state; returns whether it falsifies any."""
        bad = 0
        for flags, p in zip(self.false, self.props):
            f = 0 if p.condition(state) else 1
            flags.append(f)
            bad |= f
        self._falsifying.append(bad)
        self.enabled.append(0)
        return bool(bad)

    def falsifying(self, idx: int) -> bool:
        return bool(self._falsifying[idx])

    def falsified(self) -> dict[str, int]:
        """Per property, the states that falsify its condition (an obligation open there)."""
        return {p.name: flags.count(1) for p, flags in zip(self.props, self.false)}

    def class_id(self, action) -> int:
        """The interned fairness class of ``action``; -1 when it needs no fairness."""
        if self.fairness is None:
            return -1
        c = self.fairness(action)
        if c is None:
            return -1
        found = self._class_ids.get(c)
        if found is None:
            found = self._class_ids[c] = len(self._class_ids)
        return found

    def enable(self, idx: int, class_ids) -> None:
        """Record the fairness classes enabled in (expanded, falsifying) state ``idx``, from all its
        successors; none of them fair: a behaviour may end there (a fair end, recorded as a terminal)."""
        self.enabled[idx] = found = self.set_id(class_ids)
        if found == 0 and self.fairness is not None:
            self.terminals.append(idx)

    def set_id(self, class_ids) -> int:
        """The interned set of the (non-negative) fairness class ids among ``class_ids``."""
        return intern_set(self._set_ids, self._sets, class_ids)

    # -- or assembled from records made elsewhere (:mod:`.eventual_levels`) -----------

    def sized(self, states: int) -> None:
        """Room for ``states`` states, none falsifying, no class enabled (then ``flag`` and ``enabled[idx]``)."""
        self.false = [bytearray(states) for _ in self.props]
        self._falsifying = bytearray(states)
        self.enabled = array("i", bytes(4 * states))

    def flag(self, idx: int, bits: int) -> None:
        """State ``idx`` falsifies the conditions of the properties whose bits are set (bit k: property k)."""
        for k, flags in enumerate(self.false):
            if bits >> k & 1:
                flags[idx] = 1
        self._falsifying[idx] = 1 if bits else 0

    def edge(self, src: int, dst: int, ordinal: int, class_id: int = -1) -> None:
        if self._falsifying[src] and self._falsifying[dst]:
            self.src.append(src)
            self.dst.append(dst)
            self.ord.append(ordinal)
            self.cls.append(class_id)

    # -- the post-pass ------------------------------------------------------------

    def violations(self, store: ParentLinks):
        """``(property, ordinals, loop_start)`` for each violated property, a shortest one each."""
        cyclic = self._may_have_cycles() and self._has_cycle()
        terminals = sorted(self.terminals)
        for k, p in enumerate(self.props):
            flags = self.false[k]
            if p.every_state:
                found = self._from_every_state(flags, terminals, store, cyclic)
            else:
                found = self._from_initial_states(flags, store, cyclic)
            if found is not None:
                yield (p, *found)

    def _may_have_cycles(self) -> bool:
        """Whether an edge goes back in discovery order: without one the graph is acyclic."""
        return any(d <= s for s, d in zip(self.src, self.dst))

    def _has_cycle(self) -> bool:
        """Whether the recorded edges (among states falsifying anything) close a cycle (Kahn).

        Over arrays indexed by state (ids are dense): a few bytes per state
        and per edge, where dicts of lists cost about ten times as much.
        Edges are recorded in the order their sources were expanded, so each
        state's out-edges are one slice of ``dst`` (else they are sorted first).
        """
        src, dst = self.src, self.dst
        if any(a > b for a, b in zip(src, islice(src, 1, None))):
            order = sorted(range(len(src)), key=src.__getitem__)
            src, dst = array("q", (src[i] for i in order)), array("q", (dst[i] for i in order))
        size = max(max(src), max(dst)) + 1
        indeg, first = array("i", bytes(4 * size)), array("q", bytes(8 * (size + 1)))
        for s, d in zip(src, dst):
            indeg[d] += 1
            first[s + 1] += 1
        nodes = 0
        for i in range(size):
            nodes += 1 if indeg[i] or first[i + 1] else 0
            first[i + 1] += first[i]
        ready = [n for n in range(size) if first[n + 1] > first[n] and not indeg[n]]
        seen = 0
        while ready:
            n = ready.pop()
            seen += 1
            for j in range(first[n], first[n + 1]):
                d = dst[j]
                indeg[d] -= 1
                if indeg[d] == 0:
                    ready.append(d)
        return seen < nodes

    def _adjacency(self, flags, keep=None) -> dict[int, list[tuple[int, int, int]]]:
        adj: dict[int, list[tuple[int, int, int]]] = {}
        for s, d, o, c in zip(self.src, self.dst, self.ord, self.cls):
            if flags[s] and flags[d] and (keep is None or (s in keep and d in keep)):
                adj.setdefault(s, []).append((d, o, c))
        return adj

    def _from_every_state(self, flags, terminals, store, cyclic):
        """``[]<>P``: any reachable falsifying terminal or fair cycle; prefixes are BFS-shortest."""
        for i in terminals:  # discovery order is breadth-first: the first is a shallowest one
            if flags[i]:
                return store.ordinals_to(i), None
        if not cyclic:
            return None
        adj = self._adjacency(flags)
        for scc in _fair_candidates(adj, self._sets, self.enabled):
            entry = min(scc)
            loop = self._loop(adj, scc, entry)
            if loop is not None:
                prefix = store.ordinals_to(entry)
                return prefix + loop, len(prefix) - 1
        return None

    def _from_initial_states(self, flags, store, cyclic):
        """``<>P``: a falsifying terminal or fair cycle reached through falsifying states only."""
        adj = self._adjacency(flags)
        parent: dict[int, tuple[int, int]] = {}
        order = []
        frontier = [i for i in self.inits if flags[i]]
        for i in frontier:
            parent[i] = (-1, store.ordinal[i])
        while frontier:
            order.extend(frontier)
            nxt = []
            for s in frontier:
                for d, o, _ in adj.get(s, ()):
                    if d not in parent:
                        parent[d] = (s, o)
                        nxt.append(d)
            frontier = nxt
        terminals = set(self.terminals)
        for i in order:
            if i in terminals:
                return _chain(parent, i), None
        if not cyclic:
            return None
        reach = set(parent)
        adj = {s: [e for e in edges if e[0] in reach] for s, edges in adj.items() if s in reach}
        rank = {i: n for n, i in enumerate(order)}
        for scc in sorted(_fair_candidates(adj, self._sets, self.enabled), key=lambda c: min(rank[i] for i in c)):
            entry = min(scc, key=rank.__getitem__)
            loop = self._loop(adj, scc, entry)
            if loop is not None:
                prefix = _chain(parent, entry)
                return prefix + loop, len(prefix) - 1
        return None

    def _loop(self, adj, scc: set[int], entry: int) -> list[int] | None:
        """Ordinals of a weakly fair closed walk from ``entry`` inside ``scc`` (None if there is none).

        Greedy: while some class is enabled in every state visited so far and
        not yet taken, walk (shortest) to an edge of that class or to a state
        where it is not enabled; then walk back to ``entry``.  Each detour
        shrinks the set of such classes, so this ends.
        """
        inside = {s: [e for e in adj.get(s, ()) if e[0] in scc] for s in scc}
        sets, enabled = self._sets, self.enabled
        walk: list[tuple[int, int, int]] = []  # edges taken: (dst, ordinal, class)
        always_on = sets[enabled[entry]]
        cur = entry
        while True:
            taken = {c for _, _, c in walk}
            missing = sorted(always_on - taken)
            if missing:
                c = missing[0]
                step = _path_to(inside, cur, lambda s, e, c=c: e[2] == c if e is not None
                                else c not in sets[enabled[s]])
            elif walk and cur == entry:
                return [o for _, o, _ in walk]
            else:
                step = _path_to(inside, cur, lambda s, e: e is not None and e[0] == entry)
            if step is None:  # pragma: no cover - the SCC was checked to be fair
                return None
            for e in step:
                always_on = always_on & sets[enabled[e[0]]]
            walk.extend(step)
            cur = walk[-1][0] if walk else entry


def intern_set(ids: dict, sets: list, class_ids) -> int:
    """The id of the set of non-negative ids among ``class_ids``: its position in ``sets``, appended if new.

    >>> ids, sets = {frozenset(): 0}, [frozenset()]
    >>> intern_set(ids, sets, [2, -1, 1]), intern_set(ids, sets, [1, 2]), intern_set(ids, sets, [-1])
    (1, 1, 0)
    """
    key = frozenset(c for c in class_ids if c >= 0)
    found = ids.get(key)
    if found is None:
        found = ids[key] = len(sets)
        sets.append(key)
    return found


def _chain(parent, idx) -> list[int]:
    chain = []
    while idx >= 0:
        idx, o = parent[idx][0], parent[idx][1]
        chain.append(o)
    chain.reverse()
    return chain


def _path_to(inside, start: int, goal) -> list[tuple[int, int, int]] | None:
    """Shortest edge list from ``start`` whose last edge satisfies ``goal(src, edge)``.

    ``goal(state, None)`` may also accept a state itself (then the path ends
    there, possibly empty).
    """
    if goal(start, None):
        return []
    back: dict[int, tuple[int, tuple[int, int, int]] | None] = {start: None}
    frontier = [start]
    while frontier:
        nxt = []
        for s in frontier:
            for e in inside.get(s, ()):
                if goal(s, e):
                    return _unwind(back, s) + [e]
                d = e[0]
                if d not in back:
                    back[d] = (s, e)
                    if goal(d, None):
                        return _unwind(back, d)
                    nxt.append(d)
        frontier = nxt
    return None


def _unwind(back, node) -> list[tuple[int, int, int]]:
    out = []
    while back[node] is not None:
        node, e = back[node]
        out.append(e)
    out.reverse()
    return out


def _fair_candidates(adj, sets, enabled) -> list[set[int]]:
    """Nontrivial SCCs of ``adj`` in which every always-enabled class has an inside edge."""
    found = []
    for scc in _sccs(adj):
        if len(scc) == 1:
            (s,) = scc
            if not any(d == s for d, _, _ in adj.get(s, ())):
                continue
        always_on = frozenset.intersection(*(sets[enabled[s]] for s in scc))
        inside = {c for s in scc for d, _, c in adj.get(s, ()) if d in scc}
        if always_on <= inside:
            found.append(scc)
    found.sort(key=min)
    return found


def _sccs(adj) -> list[set[int]]:
    """Strongly connected components (iterative Tarjan), over the nodes with edges."""
    nodes = set(adj)
    for edges in adj.values():
        nodes.update(d for d, _, _ in edges)
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[set[int]] = []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            edges = adj.get(node, ())
            recurse = False
            while i < len(edges):
                d = edges[i][0]
                i += 1
                if d not in index:
                    work.append((node, i))
                    work.append((d, 0))
                    recurse = True
                    break
                if d in on_stack:
                    low[node] = min(low[node], index[d])
            if recurse:
                continue
            if low[node] == index[node]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == node:
                        break
                out.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out
