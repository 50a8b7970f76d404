"""One worker of the level-synchronous search (:mod:`.parallel`): a share of the states and of the fingerprints.

Worker ``me`` of ``n`` owns the fingerprints ``fp % n == me`` (it alone
decides whether such a state is new) and keeps the states it generated
and won (or was given), so states cross processes only to even out the
shares.  A level is expanded in chunks of global ranks; each chunk goes:

``expand``   successors of my states ranked below ``hi``, as queries
             ``(fingerprint, key)`` to each owner, where ``key = parent rank
             << ORD_BITS | ordinal`` is the position a one-worker search
             would find the state at;
``resolve``  as owner: among all queries for a fingerprint not seen before,
             the least key wins (that one-worker search's first discovery);
``accept``   keep the winners, check the properties on them, and give some
             away when my share is too large;
``finish``   the level's keys, so the coordinator can number (rank) them.

All methods are plain calls; :func:`serve` runs them in a process.
"""

from __future__ import annotations

import gc
import os
import heapq
import resource
import signal
import sys
import time
import traceback
from array import array
# Counter.update's C loop; private, so typeshed does not list it
from collections import _count_elements as count_elements  # type: ignore[attr-defined]
from collections.abc import Iterable
from itertools import compress
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from . import datafile
from .checkpoint import read_values, write_values
from .search_coverage import Tally
from .frontier import Level, Room, decode_batches, encode_batch, memory_budget
from .hooks import hooks_of
from .store import FP_MASK

ORD_BITS = 20
ORD_MASK = (1 << ORD_BITS) - 1


def _ints(data: bytes) -> array:
    out = array("q")
    out.frombytes(data)
    return out


class Worker:
    """A share of the search; see the module docstring for a chunk's life cycle."""

    def __init__(self, model, me: int, n: int, in_memory: int | None, folder: str | None, por: bool,
                 memory: int | None = None) -> None:
        props = list(model.properties())
        self.always = [p for p in props if p.expectation == "always"]
        self.sometimes = [p for p in props if p.expectation == "sometimes"]
        self.me, self.n = me, n
        hooks = hooks_of(model)
        self.fingerprint = hooks.fingerprint
        self.successors = model.successors
        self.ample = hooks.ample if por else None
        self.is_final = hooks.is_final
        self.folder = folder
        self.room = Room(memory_budget(memory), in_memory)  # my two levels keep states live while it says so
        self.seen: set[int] = set()
        self.level = Level(self.room, folder)
        self.next = Level(self.room, folder)
        self.held: list = []
        self.tally = Tally(model, props)
        #: per watched property, the keys of this level's states found armed; counted once the level's first
        #: violator is known (a one-worker search stops counting a property at its first violating state)
        self.armed_at: dict[str, array] = {}
        #: a chunk's pending queries per owner (``expand`` to ``accept``): successors, and their keys
        self.pend: list[list] = []
        self.keys: list[array] = []

    # -- a level --------------------------------------------------------------------

    def seed(self, states: list, fps: list) -> None:
        """Level 0: ``(rank, ordinal, state)`` triples to keep, fingerprints to own."""
        self.seen.update(fps)
        for rank, ordinal, state in states:
            self.level.append(ordinal, state)
            self.level.ranks.append(rank)

    def begin(self, plan: dict) -> int:
        """Start expanding the current level under ``plan`` (what ``_Run.plan`` in :mod:`.parallel` decided)."""
        self.plan = plan
        self.reduce = self.ample if plan["reduce"] else None
        self.todo = zip(self.level.ranks, self.level.states())
        self.peek = next(self.todo, None)
        self.first: dict[int, int] = {}
        self.witness: dict[int, list[int]] = {i: [] for i in plan["sometimes"]}
        # what _discover checks on each new state: the always conditions not yet violated at this level, the
        # sometimes conditions with fewer than ``cap`` satisfiers (pairs dropped once settled: no lookups per state)
        self.checks = [(i, self.always[i].condition) for i in plan["always"]]
        self.looks = [(self.sometimes[i].condition, self.witness[i]) for i in plan["sometimes"]]
        self.deadlock: int | None = None
        self.narrowed = False  # whether the reduction answered for some state of this level (:func:`.por.confirm`)
        self.tally.watch([self.always[i] for i in plan["always"]])
        # the model's armed_during reads the discovering step: pending queries then keep whole successors
        self.during = self.tally.during if self.tally.armers and self.tally.during is not None else None
        return len(self.level)

    def expand(self, hi: int, gifts: list) -> tuple:
        """Successors of my states ranked below ``hi`` as queries per owner: ``(fps, keys)`` bytes.

        Per state, :meth:`_visit` and :meth:`_visited` let a subclass record more (:mod:`.eventual_levels`).
        """
        self._keep(gifts)
        n, me, seen = self.n, self.me, self.seen
        fingerprint, successors, reduce = self.fingerprint, self.successors, self.reduce
        skip, deadlocks = self.plan["skip"], self.plan["check_deadlock"]
        visit, visited = self._visit, self._visited
        whole = self.during is not None
        fps = [array("q") for _ in range(n)]
        keys = [array("q") for _ in range(n)]
        pend: list[list] = [[] for _ in range(n)]
        self.pend = pend
        transitions = 0
        kind_of, acts = self.tally.kind, self.tally.actions
        while self.peek is not None and self.peek[0] < hi:
            rank, state = self.peek
            self.peek = next(self.todo, None)
            edges = visit(rank, state)
            if rank in skip:
                continue
            base = rank << ORD_BITS
            pairs = reduce(state) if reduce is not None else None
            if pairs is None:
                succs = successors(state)
            else:
                succs = pairs
                self.narrowed = True
            if type(succs) is not list:
                succs = list(succs)
            count = len(succs)
            if kind_of is not None:  # per action, in C (Counter's loop); the coordinator folds them into kinds
                count_elements(acts, map(_first, succs) if pairs is None else map(_first, map(_second, pairs)))
            for ordinal, successor in enumerate(succs) if pairs is None else succs:
                nxt = successor[1]
                fp = fingerprint(nxt) & FP_MASK
                if edges is not None:
                    edges.append((ordinal, successor, fp))
                owner = fp % n
                if owner == me and fp in seen:
                    continue
                fps[owner].append(fp)
                keys[owner].append(base | ordinal)
                pend[owner].append(successor if whole else nxt)
            transitions += count
            if count > ORD_MASK:
                raise ValueError(f"a state with {count:,} successors: keys hold ordinals below {ORD_MASK + 1:,}")
            visited(rank, state, edges, pairs, count)
            if count == 0:
                self.tally.terminals += 1
            if count == 0 and deadlocks and self.deadlock is None and not (self.is_final and self.is_final(state)):
                self.deadlock = rank
        self.keys = keys
        return [(f.tobytes(), k.tobytes()) for f, k in zip(fps, keys)], transitions

    def _visit(self, rank: int, state) -> list | None:
        """A hook, before the state ranked ``rank`` is expanded or skipped: a list to collect its successors'
        ``(ordinal, successor, fingerprint)`` in, or None."""
        return None

    def _visited(self, rank: int, state, edges: list | None, pairs, count: int) -> None:
        """A hook, after the ``count`` successors of an expanded state were queued (``edges`` filled;
        ``pairs`` the reduction's choice, or None)."""

    def resolve(self, incoming: list) -> list[bytes]:
        """As owner: flag, per sender, the queries that discover a new state (least key wins)."""
        seen = self.seen
        best: dict[int, tuple[int, int, int]] = {}  # fp -> (key, sender, index)
        flags = []
        for sender, (fps, keys) in enumerate(incoming):
            fps, keys = _ints(fps), _ints(keys)
            flags.append(bytearray(len(fps)))
            for i, fp in enumerate(fps):
                if fp in seen:
                    continue
                held = best.get(fp)
                if held is None or keys[i] < held[0]:
                    best[fp] = (keys[i], sender, i)
        for _key, sender, i in best.values():
            flags[sender][i] = 1
        seen.update(best)
        self.owned(best)
        return [bytes(f) for f in flags]

    def owned(self, best: dict) -> None:
        """The states this chunk discovered that I own, ``{fp: (key, sender, index)}``: a hook (``eventually``)."""

    def accept(self, flags: list[bytes], gifts: dict[int, int]) -> tuple[int, dict]:
        """Keep the queries the owners flagged, check them, and give ``gifts[worker]`` of them away.

        Returns how many were won and the gifts as ``{worker: (keys, batch)}``; the given
        states are spread evenly over the chunk, so every worker keeps its share of each
        rank range.
        """
        won: list[tuple[int, Any]] = []  # (key, successor or state)
        for owner, f in enumerate(flags):
            won.extend(zip(compress(self.keys[owner], f), compress(self.pend[owner], f)))
        if self.n > 1:
            won.sort(key=_first)
        if self.during is not None:  # whole successors: count what their steps armed, keep their states
            for key, successor in won:
                self._arm(key, successor[1], self.during(successor))
            won = [(key, successor[1]) for key, successor in won]
        self.pend, self.keys = [], []
        to = [w for w, count in gifts.items() for _ in range(count)]
        if not to:  # nothing to give (always so on one worker): keep them all
            discover = self._discover
            for key, state in won:
                discover(key, state)
            self.held.extend(won)
            return len(won), {}
        out: dict[int, tuple[array, list]] = {w: (array("q"), []) for w in gifts}
        step, credit, given = len(to) / len(won) if won else 0.0, 0.0, 0
        for key, state in won:
            self._discover(key, state)
            credit += step
            if credit >= 1.0 - 1e-9 and given < len(to):
                credit -= 1.0
                keys, states = out[to[given]]
                keys.append(key)
                states.append(state)
                given += 1
            else:
                self.held.append((key, state))
        return len(won), {w: (k.tobytes(), encode_batch(st)) for w, (k, st) in out.items() if st}

    def _arm(self, key: int, state, during=()) -> None:
        armed_at = self.armed_at
        for name, arm in self.tally.armers:
            if name in during or arm(state):
                found = armed_at.get(name)
                if found is None:
                    found = armed_at[name] = array("q")
                found.append(key)

    def _discover(self, key: int, state) -> None:
        if self.tally.armers and self.during is None:
            self._arm(key, state)
        first = self.first
        for i, condition in self.checks:
            if not condition(state):
                first[i] = key
        if len(first) > len(self.plan["always"]) - len(self.checks):  # a first violator: no longer checked
            self.checks = [(i, c) for i, c in self.checks if i not in first]
        full = False
        for condition, found in self.looks:
            if condition(state):
                found.append(key)
                full = full or len(found) >= self.plan["cap"]
        if full:
            self.looks = [(c, found) for c, found in self.looks if len(found) < self.plan["cap"]]

    def _keep(self, gifts: list) -> None:
        """Append my last chunk's winners and the gifts of that chunk to the next level, in key order."""
        if gifts:
            given = [zip(_ints(k), decode_batches(b)) for k, b in gifts]
            merged: Iterable = heapq.merge(self.held, *given, key=_first)
        else:
            merged = self.held
        append = self.next.append
        for key, state in merged:
            append(key, state)
        self.held = []

    def finish(self, gifts: list) -> tuple:
        """End of level: the next level's keys, first violators, witnesses, the first deadlock, and whether the
        reduction chose the successors of some state."""
        self._keep(gifts)
        return self.next.keys.tobytes(), self.first, self.witness, self.deadlock, self.narrowed

    def rank(self, ranks: bytes) -> None:
        """Number the next level with global ranks and make it current."""
        self.level.close()
        self.level, self.next = self.next, Level(self.room, self.folder)
        self.level.ranks = _ints(ranks)

    def counts(self, cutoffs: dict | None = None) -> tuple:
        """My coverage counts since the last call (:mod:`.search_coverage`), handed over and reset.

        ``cutoffs[name]``: the key of the level's first violator of ``name``; states armed
        after it are not counted, as in a one-worker search.
        """
        cutoffs = cutoffs or {}
        for name, keys in self.armed_at.items():
            cut = cutoffs.get(name)
            self.tally.armed[name] += len(keys) if cut is None else sum(1 for k in keys if k <= cut)
        self.armed_at = {}
        return self.tally.take()

    def usage(self) -> tuple[int, float]:
        """This process's peak resident bytes and CPU seconds so far."""
        return peak_rss(), time.process_time()

    # -- checkpoints ----------------------------------------------------------------

    def save(self, path: str) -> tuple[list[int], int] | None:
        """Write my fingerprints and my current level (a snapshot taken between levels); a subclass may return
        what the coordinator keeps of its part (:mod:`.eventual_levels`)."""
        data = {"seen": array("q", self.seen).tobytes(), "keys": self.level.keys.tobytes(),
                "ranks": self.level.ranks.tobytes(), "states": datafile.encode(self.level.states())}
        write_values(path, "worker", data)  # data, not pickle: it is read back from disk (.checkpoint)
        return None

    def load(self, paths: list[str]) -> int:
        """Take my share of saved workers' files: the fingerprints I own, the levels of files ``k % n == me``."""
        parts = []
        for k, path in enumerate(paths):
            data = read_values(path, "worker")
            self.seen.update(fp for fp in _ints(data["seen"]) if fp % self.n == self.me)
            if k % self.n == self.me:
                parts.append(zip(_ints(data["ranks"]), _ints(data["keys"]), datafile.decode(data["states"])))
        for rank, key, state in heapq.merge(*parts, key=_first):
            self.level.append(key, state)
            self.level.ranks.append(rank)
        return len(self.level)


if TYPE_CHECKING:
    _MixedInto = Worker  # Visiting is a mixin: typed as the Worker it comes before
else:
    _MixedInto = object


class Visiting(_MixedInto):
    """A worker that shows a :class:`~.results.Visitor` every state it stores and every transition it finds.

    Mixed in before :class:`Worker` (or a subclass) in a run with one worker,
    in the caller's process: state ids are then discovery positions, counted
    as the states are won (in key order, which is discovery order).  A
    chunk's edges are shown once its new states have ids, after the states.
    """

    def __init__(self, *args, visitor, **options) -> None:
        super().__init__(*args, **options)
        self.visitor = visitor
        self.ids: dict[int, int] = {}  # fingerprint -> id
        self.won_ids: dict[int, int] = {}  # this chunk's winners: key -> id
        self.edges: list = []  # (source id, [(ordinal, successor, fingerprint)])
        self.mine = False

    def seed(self, states: list, fps: list) -> None:
        super().seed(states, fps)
        for (rank, _ordinal, state), fp in zip(states, fps):
            self.ids[fp] = rank
            self.visitor.state(rank, state)

    def _visit(self, rank: int, state) -> list:
        own = super()._visit(rank, state)
        self.mine = own is not None
        return [] if own is None else own

    def _visited(self, rank: int, state, edges, pairs, count: int) -> None:
        super()._visited(rank, state, edges if self.mine else None, pairs, count)
        self.edges.append((self.plan["start"] + rank, edges))

    def owned(self, best: dict) -> None:
        super().owned(best)
        first = len(self.ids)
        for n, (key, fp) in enumerate(sorted((key, fp) for fp, (key, _s, _i) in best.items())):
            self.ids[fp] = self.won_ids[key] = first + n

    def _discover(self, key: int, state) -> None:
        self.visitor.state(self.won_ids[key], state)
        super()._discover(key, state)

    def accept(self, flags: list[bytes], gifts: dict[int, int]) -> tuple[int, dict]:
        out = super().accept(flags, gifts)
        ids, edge = self.ids, self.visitor.edge
        for src, edges in self.edges:
            for _ordinal, successor, fp in edges:
                edge(src, ids[fp], successor)
        self.edges, self.won_ids = [], {}
        return out


def peak_rss() -> int:
    """This process's peak resident set size in bytes (Linux counts kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


_first, _second = itemgetter(0), itemgetter(1)


class _Settle:
    """End of a level: a young collection when one is due, then freeze what survives (long-lived, acyclic states).

    The search runs with the automatic collector off (:func:`.parallel.explore`): over a
    level it found nothing to free, yet cost a fifth of a worker's CPU (most of it full collections
    walking the level's live objects).  A young collection walks every object the level made: on
    ``--clients 2 --prompts 3`` it freed nothing in 36 levels and cost 7 % of the search.  So while
    the collections find nothing they are taken at levels 1, 2, 4, 8, ... of this process; one that
    frees a cycle brings them back to every level.  The choice: a cycle made in a level between two
    collections is frozen, not freed (the model's states are tuples: acyclic).
    """

    def __init__(self) -> None:
        self.wait, self.gap = 0, 1

    def __call__(self) -> None:
        if self.wait:
            self.wait -= 1
        else:
            self.gap = 1 if gc.collect(0) else 2 * self.gap
            self.wait = self.gap - 1
        gc.freeze()

    def restart(self) -> None:
        """A new search: collect at its first level again."""
        self.wait, self.gap = 0, 1


settle = _Settle()


def serve(conn, model, me: int, n: int, options: dict, kind: type = Worker, inherited=(), parent: int = 0) -> None:
    """A worker process (a ``kind``): run the coordinator's calls until it says stop or goes away.

    First it ties itself to its parent (:func:`bind_to_parent`: ``inherited`` are the coordinator's
    ends of the pipes, its own and those of the workers forked before it; ``parent`` the coordinator's pid).
    """
    bind_to_parent(inherited, parent)
    gc.disable()  # as in the coordinator, which forked me: see settle()
    gc.freeze()
    settle.restart()
    worker = kind(model, me, n, **options)
    while True:
        try:
            name, args = conn.recv()
        except (EOFError, OSError):
            return
        if name == "stop":
            return
        try:
            reply = ("ok", getattr(worker, name)(*args))
        except OSError as err:  # a full disk, ulimit -f: the coordinator raises it again, as one line
            reply = ("oserror", (err.errno, err.strerror, err.filename or f"search worker {me}"))
        except BaseException:  # noqa: BLE001 - reported to the coordinator, which raises it
            reply = ("error", traceback.format_exc())
        conn.send(reply)
        if name == "rank":
            settle()


#: Linux's prctl option that sends a signal to this process when its parent ends (``linux/prctl.h``)
PR_SET_PDEATHSIG = 1


def bind_to_parent(inherited, parent: int) -> None:
    """End with the coordinator, whatever ends it, and hold none of its files.

    Three things, each enough where it applies: the kernel sends this process
    SIGKILL when its parent ends (Linux ``prctl(PR_SET_PDEATHSIG)``; if the
    parent ended already, exit now); the coordinator's ends of the pipes
    inherited by the fork are closed here, so the coordinator's going closes
    my pipe and my next read sees end-of-file (every platform); and standard
    input, output and error become ``/dev/null``, so a caller reading the
    coordinator's output (``acplab check | tee log``) sees its end when the
    coordinator ends.  A worker reports through its pipe, never on a stream.
    """
    for conn in inherited:
        conn.close()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no C library to ask: the pipe's end-of-file remains
            pass
    if parent and os.getppid() != parent:  # the coordinator ended before the death signal was armed
        os._exit(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
