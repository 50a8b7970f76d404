"""``eventually`` properties on the level-synchronous search (:mod:`.parallel`): records and the liveness pass.

The liveness pass (:mod:`.liveness`) needs the graph among states that
falsify an ``eventually`` condition, after a complete run.  Here each
worker records its share as it expands, and the coordinator assembles one
:class:`~.liveness.EventualGraph`, the same whatever the number of workers,
so the pass reports the same counterexamples on any number:

state ids
    a state's id is its discovery position in the one-worker search: the
    states of the levels before it, plus its rank in its level (the level
    engine ranks a level in that search's order).  An expanding worker
    knows its states' ranks; a successor is known only by its fingerprint
    until its owner (the worker owning ``fp % n``) learns its id: the owner
    keeps the key ``(parent rank, ordinal)`` of every state it discovers,
    and turns it into an id once the coordinator has ranked the level.
    Edges are recorded with the successor's fingerprint; after the run the
    coordinator gathers the owners' tables and translates.
what a worker records
    per state it expands (or skips as a first violator), which conditions
    it falsifies; per falsifying state it expands, its successors' edges
    and fairness classes, and the fairness classes of *every* enabled action
    where the state was reduced (``ample.enabled``: :mod:`.por`); its
    terminal states and fair ends (expanded falsifying states where no fair
    action is enabled: :mod:`.liveness`).
fairness classes
    the pass orders classes by their ids (the greedy lasso takes the least
    missing class first), which the one-worker search hands out in order of
    first use; each worker records where it first used each class (state
    id, position among the state's successors, then among its enabled
    actions), and the coordinator numbers the classes by the least of these.
edge order
    a worker expands its states in id order, so its edges come sorted by
    source, each source's edges in the one-worker search's order; merging
    the workers' lists by source gives that search's list.

checkpoints
    a snapshot (:mod:`.checkpoint`) holds each worker's records as they are
    between two levels (:meth:`EventualWorker.save`: everything above, its
    spill file linked, not copied).  A resumed run's workers start empty
    records; the saved ones (``Liveness.archive``) join theirs at the end.
    Nothing needs re-partitioning: ids are global, a fingerprint is in one
    id table only (its owner's ``seen`` keeps it from being found again),
    every saved edge's source precedes the resumed level's states, and
    fairness classes are renumbered across all records by first use.

Memory: per state 16 bytes in its owner's id table, per falsifying state
13 bytes (id, conditions, fairness set), held by the workers until the run
ends; per transition out of a falsifying state 24 bytes, on disk (each
worker's spill file).  After the run the workers let their search's memory
go and hand over; the coordinator builds the graph (about 6 bytes per state
and 24 per edge among falsifying states) as it streams the spill files.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from array import array
from collections.abc import Callable, Iterable
from bisect import bisect_left, bisect_right
from heapq import merge
from operator import itemgetter
from pathlib import Path
from typing import IO, Any

from .checkpoint import link, read_values, write_values
from .hooks import hooks_of
from .liveness import EventualGraph, intern_set
from .store import FP_MASK
from .worker import ORD_BITS, ORD_MASK, Worker


#: edges held in a worker's memory before they are appended to its spill file
SPILL = 1 << 16
#: an owner's id table is sorted in buckets by a fingerprint's top 4 bits (fingerprints have 60)
_BUCKETS, _BUCKET_SHIFT = 16, FP_MASK.bit_length() - 4


def _ints(data: bytes, code: str = "q") -> array:
    out = array(code)
    out.frombytes(data)
    return out


def _ask(peers, name: str, per_peer) -> list:
    """Send ``name`` to every peer with its own arguments, then collect the answers in order."""
    for peer, args in zip(peers, per_peer):
        peer.send(name, *args)
    return [peer.recv() for peer in peers]


class EventualWorker(Worker):
    """A :class:`~.worker.Worker` that also records what the liveness pass needs (module docstring).

    Life cycle: as a worker; ``own`` (initial states) and ``number_owned``
    (after each level is ranked) fill the owner's id table; after the run
    ``records`` hands over the records, the id table and the spill file.
    """

    def __init__(self, model, me: int, n: int, in_memory: int | None, folder: str | None, por: bool,
                 spill: str | None = None, memory: int | None = None) -> None:
        super().__init__(model, me, n, in_memory, folder, por, memory)
        self.spill_folder = spill if spill is not None else folder  # a checkpoint's: its snapshots link the file
        self.eventual = [p for p in model.properties() if p.expectation == "eventually"]
        if len(self.eventual) > 62:
            raise ValueError("the level engine records at most 62 eventually properties per state")
        self.falsifiers = [(1 << k, p.condition) for k, p in enumerate(self.eventual)]  # bit k: property k
        self.fairness = hooks_of(model).fairness_class
        # per falsifying state: its id, the conditions it falsifies (bit k: property k), its enabled classes' set
        self.marked, self.bits = array("q"), array("B" if len(self.eventual) <= 8 else "q")
        self.en_set = array("i")
        # edges out of falsifying states: source id, successor fingerprint, ordinal, local class id
        self.e_src, self.e_dst, self.e_ord, self.e_cls = array("q"), array("q"), array("i"), array("i")
        self.edge_file: IO[bytes] | None = None  # edges spilled to disk (at edge_path), in runs of these lengths
        self.edge_runs: list[int] = []
        self.edge_path: str | None = None
        self.edge_cleanup: weakref.finalize | None = None
        #: every enabled action of a reduced state (the reduction offers it when it keeps eventually: por.py)
        self.enabled_of: Callable[[Any], Iterable] | None = getattr(self.ample, "enabled", None)
        self.terminals = array("q")
        self.classes: dict = {}  # fairness class -> local id
        self.class_first: list[tuple[int, int]] = []  # local id -> (state id, position) of its first use
        self.set_ids: dict[frozenset, int] = {frozenset(): 0}
        self.sets: list[frozenset] = [frozenset()]
        self.t_fp, self.t_id = array("q"), array("q")  # the states I own: fingerprint, id
        self.p_fp, self.p_key = array("q"), array("q")  # discovered at the level being expanded: fp, key

    def _class(self, action, sid: int, pos: int) -> int:
        fairness = self.fairness
        c = fairness(action) if fairness is not None else None
        if c is None:
            return -1
        found = self.classes.get(c)
        if found is None:
            found = self.classes[c] = len(self.class_first)
            self.class_first.append((sid, pos))
        return found

    def _enable(self, class_ids: list) -> None:
        """The classes enabled in the state marked last."""
        self.en_set[-1] = intern_set(self.set_ids, self.sets, class_ids)

    def _mark(self, sid: int, state) -> int:
        bits = 0
        for bit, condition in self.falsifiers:
            if not condition(state):
                bits |= bit
        if bits:
            self.marked.append(sid)
            self.bits.append(bits)
            self.en_set.append(0)
        return bits

    def expand(self, hi: int, gifts: list) -> tuple:
        """:meth:`.worker.Worker.expand`; my hooks record each state's flags and the edges out of falsifying ones."""
        out = super().expand(hi, gifts)
        if len(self.e_src) >= SPILL:
            self._spill_edges()
        return out

    def _visit(self, rank: int, state) -> list | None:
        """Mark the conditions the state falsifies (a first violator too: marked, not expanded); collect the edges
        of a falsifying one."""
        return [] if self._mark(self.plan["start"] + rank, state) else None

    def _visited(self, rank: int, state, edges: list | None, pairs, count: int) -> None:
        """Record a terminal state, and a falsifying state's edges with their fairness classes."""
        sid = self.plan["start"] + rank
        if count == 0:
            self.terminals.append(sid)
        if edges is None:
            return
        fair = self.fairness is not None
        classes = [self._class(successor[0], sid, j) for j, (_, successor, _) in enumerate(edges)] if fair else None
        e_src, e_dst, e_ord, e_cls = self.e_src.append, self.e_dst.append, self.e_ord.append, self.e_cls.append
        for j, (ordinal, _, fp) in enumerate(edges):
            e_src(sid)
            e_dst(fp)
            e_ord(ordinal)
            e_cls(classes[j] if classes is not None else -1)
        if fair and pairs is not None and self.enabled_of is not None:  # fairness needs every enabled class (por.py)
            classes = [self._class(a, sid, count + j) for j, a in enumerate(self.enabled_of(state))]
        if classes:
            self._enable(classes)
            if self.en_set[-1] == 0:  # no fair action enabled: a fair end, a terminal for liveness (liveness.py)
                self.terminals.append(sid)

    def _spill_edges(self) -> None:
        """Append the edges held in memory to the spill file (the coordinator reads it once, after the run).

        The file is only ever appended to: a checkpoint links it and names the length that is its.
        """
        file, _path = self._edge_file()
        if not len(self.e_src):
            return
        self.edge_runs.append(len(self.e_src))
        for a in (self.e_src, self.e_dst, self.e_ord, self.e_cls):
            a.tofile(file)
            del a[:]

    def _edge_file(self) -> tuple[IO[bytes], str]:
        """My spill file of edges and its path, made on first use."""
        if self.edge_file is None or self.edge_path is None:
            fd, path = tempfile.mkstemp(dir=self.spill_folder, prefix="acplab-edges-")
            self.edge_file, self.edge_path = os.fdopen(fd, "wb"), path
            # removed with me unless handed over (a run cut short by a limit never reads it)
            self.edge_cleanup = weakref.finalize(self, _remove, path)
        return self.edge_file, self.edge_path

    # -- the owner's id table -------------------------------------------------------

    def owned(self, best: dict) -> None:
        for fp, (key, _sender, _i) in best.items():
            self.p_fp.append(fp)
            self.p_key.append(key)

    def own(self, fps: bytes, ids: bytes) -> None:
        """Initial states I own: their fingerprints and ids."""
        self.t_fp.extend(_ints(fps))
        self.t_id.extend(_ints(ids))

    def number_owned(self, links: bytes, start: int) -> None:
        """The level just ranked (its sorted keys ``links``, its first id ``start``): ids of the states I own."""
        keys = _ints(links)
        t_fp, t_id = self.t_fp, self.t_id
        for fp, key in zip(self.p_fp, self.p_key):
            t_fp.append(fp)
            t_id.append(start + bisect_left(keys, key))
        self.p_fp, self.p_key = array("q"), array("q")

    def falsified(self) -> list[int]:
        """Per ``eventually`` property, how many of my marked states falsify it."""
        return [sum(1 for b in self.bits if b >> k & 1) for k in range(len(self.eventual))]

    def _fields(self) -> dict:
        """What :meth:`Liveness.assemble` reads of my records, but the edges."""
        return {"marked": self.marked, "bits": self.bits, "en_set": self.en_set, "sets": self.sets,
                "classes": list(self.classes), "first": self.class_first, "terminals": self.terminals,
                "table": (self.t_fp, self.t_id)}

    def records(self) -> dict:
        """Everything recorded, handed over (see :meth:`Liveness.assemble`); the search's memory is let go first.

        The edges stay on disk: the coordinator reads my spill file (``edges``: its
        path and run lengths) and removes it.
        """
        self.seen = set()
        self.level.close()
        self.next.close()
        if len(self.e_src):
            self._spill_edges()
        if self.edge_file is not None:
            self.edge_file.close()
            if self.edge_cleanup is not None:
                self.edge_cleanup.detach()
        out = {**self._fields(), "edges": (self.edge_path, self.edge_runs)}
        # handed over: let my copies go
        self.marked, self.bits, self.en_set, self.terminals = array("q"), array("B"), array("i"), array("q")
        self.t_fp, self.t_id = array("q"), array("q")
        self.edge_file = self.edge_path = None
        return out

    def save(self, path: str) -> tuple[list[int], int]:
        """:meth:`.worker.Worker.save`, then my records beside it (:mod:`.checkpoint`): ``.records`` (data), and
        ``.edges`` a link to my spill file, synced.  Returns my falsified counts and the edge bytes that are the
        snapshot's (the file grows on after it)."""
        super().save(path)
        self._spill_edges()
        file, edges = self._edge_file()
        file.flush()
        os.fsync(file.fileno())
        length = file.tell()
        stem = path.removesuffix(".bin")
        link(Path(edges), Path(stem + ".edges"))
        write_values(stem + ".records", "records", {**self._fields(), "runs": list(self.edge_runs)})
        return self.falsified(), length


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _archived(stem: str) -> dict:
    """A record a worker saved in a checkpoint (:meth:`EventualWorker.save`), as :meth:`EventualWorker.records`
    hands one over: its edge file is read once and removed (the snapshot keeps its own link)."""
    rec = read_values(stem + ".records", "records")
    rec["edges"] = (stem + ".edges", rec.pop("runs"))
    return rec


def _sorted_table(tables: list) -> list[tuple[array, array]]:
    """The owners' id tables ``(fingerprints, ids)`` as one, sorted by fingerprint in 16 buckets by the top
    bits (each bucket sorted on its own: a sixteenth of the memory a whole sort takes).  Empties ``tables``."""
    split = [(array("q"), array("q")) for _ in range(_BUCKETS)]
    while tables:
        fps, ids = tables.pop()
        if len(ids) and max(ids) >> 32:
            raise ValueError("the liveness pass numbers states with 32 bits")
        for fp, i in zip(fps, ids):
            keys, values = split[fp >> _BUCKET_SHIFT]
            keys.append(fp)
            values.append(i)
    table = []
    for n, (keys, values) in enumerate(split):
        packed = sorted((fp << 32) | i for fp, i in zip(keys, values))  # one int each: sorts without a key list
        split[n] = (array("q"), array("q"))  # this bucket's memory let go
        table.append((array("q", (p >> 32 for p in packed)), array("q", (p & 0xFFFFFFFF for p in packed))))
    return table


def _edges(spilled, remap, table):
    """One worker's edges from its spill file, in order: ``(src, dst id, ordinal, coordinator class id)``."""
    path, runs = spilled
    if path is None:
        return
    try:
        with open(path, "rb") as f:
            for count in runs:
                src, fps, ords, cls = array("q"), array("q"), array("i"), array("i")
                for a in (src, fps, ords, cls):
                    a.fromfile(f, count)
                for s, fp, o, c in zip(src, fps, ords, cls):
                    keys, ids = table[fp >> _BUCKET_SHIFT]
                    yield s, ids[bisect_left(keys, fp)], o, remap[c] if c >= 0 else -1
    finally:
        _remove(path)


class Liveness:
    """The coordinator's side: the owners' id tables kept up to date, then the graph and its pass.

    Life cycle: ``seeded`` after level 0 is handed out, ``numbered`` after
    each level is ranked, then ``falsified`` and (after a complete run)
    ``violations``.
    """

    def __init__(self, model, props) -> None:
        self.model = model
        self.props = [p for p in props if p.expectation == "eventually"]
        self.fairness = hooks_of(model).fairness_class
        #: records saved by the workers of earlier runs, for a resumed run: (path stem, falsified counts, edge bytes)
        self.archive: list[tuple[str, list[int], int]] = []

    def seeded(self, peers, fps: list[int]) -> None:
        n = len(peers)
        per = [(array("q", [fp for fp in fps if fp % n == i]).tobytes(),
                array("q", [r for r, fp in enumerate(fps) if fp % n == i]).tobytes()) for i in range(n)]
        _ask(peers, "own", per)

    def numbered(self, peers, links: array, start: int) -> None:
        raw = links.tobytes()
        _ask(peers, "number_owned", [(raw, start)] * len(peers))

    def falsified(self, peers) -> dict[str, int]:
        """Per property, the states marked as falsifying its condition (all of them after a complete run)."""
        counts = _ask(peers, "falsified", [()] * len(peers)) + [c for _, c, _ in self.archive]
        return {p.name: sum(c[k] for c in counts) for k, p in enumerate(self.props)}

    def assemble(self, peers, states: int, inits: int) -> EventualGraph:
        """The :class:`~.liveness.EventualGraph` the one-worker search would have built."""
        records = _ask(peers, "records", [()] * len(peers)) + [_archived(stem) for stem, _, _ in self.archive]
        graph = EventualGraph(self.props, self.fairness)
        graph.sized(states)
        for rec in records:
            for sid, bits in zip(rec["marked"], rec["bits"]):
                graph.flag(sid, bits)
        first: dict = {}
        for rec in records:
            for c, where in zip(rec["classes"], rec["first"]):
                if c not in first or where < first[c]:
                    first[c] = where
        number = {c: i for i, c in enumerate(sorted(first, key=first.__getitem__))}
        for rec in records:
            rec["remap"] = remap = [number[c] for c in rec["classes"]]
            sets = [graph.set_id(remap[c] for c in s) for s in rec["sets"]]
            for sid, local in zip(rec["marked"], rec["en_set"]):
                if local:
                    graph.enabled[sid] = sets[local]
            rec["marked"] = rec["bits"] = rec["en_set"] = None
        graph.inits = list(range(inits))
        graph.terminals = sorted(t for rec in records for t in rec["terminals"])
        table = _sorted_table([rec.pop("table") for rec in records])
        # a worker's edges come in source order, and sources are the workers' own: merged, the one-process order
        graph.ord, graph.cls = array("i"), array("i")
        edge = graph.edge  # keeps those between falsifying states
        for src, dst, ordinal, cid in merge(*[_edges(rec["edges"], rec["remap"], table) for rec in records],
                                            key=itemgetter(0)):
            edge(src, dst, ordinal, cid)
        return graph

    def violations(self, peers, states: int, level0: int, ordinals, starts: list[int]):
        """``(property, ordinals, loop_start)`` per violated ``eventually`` property (a complete run)."""
        graph = self.assemble(peers, states, level0)
        return list(graph.violations(_Paths(ordinals, starts)))


class _Paths:
    """What :meth:`.liveness.EventualGraph.violations` reads of a store, from the level engine's parent links."""

    def __init__(self, ordinals, starts: list[int]) -> None:
        self._ordinals, self._starts = ordinals, starts
        self.ordinal = _Level0(ordinals)

    def ordinals_to(self, idx: int) -> list[int]:
        level = bisect_right(self._starts, idx) - 1
        return self._ordinals(level, idx - self._starts[level])


class _Level0:
    """``ordinal[i]`` of an initial state ``i``: its position in ``init_states()``."""

    def __init__(self, ordinals) -> None:
        self._ordinals = ordinals

    def __getitem__(self, idx: int) -> int:
        return self._ordinals(0, idx)[0]
