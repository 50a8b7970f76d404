"""The liveness pass: ``eventually`` properties checked on the explored graph after a complete run.

The explorer records, per ``eventually`` property, which states falsify its
condition and the edges among such states.  Afterwards a behaviour that
never satisfies the condition is either a finite one (a terminal state
reached through falsifying states only) or an infinite one (a cycle among
them, reported as a lasso).  No fairness is assumed: a cycle the system
could leave is still a violation.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from .properties import Property, State
from .store import FingerprintStore


class EventualGraph:
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

    def violations(self, store: FingerprintStore):
        for k, p in enumerate(self.props):
            found = self._violation(self.false[k], store)
            if found is not None:
                yield (p, *found)

    def _violation(self, flags: bytearray, store: FingerprintStore):
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
