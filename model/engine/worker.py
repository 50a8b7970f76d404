"""One worker of the level-synchronous search (:mod:`.parallel`): a share of the states and of the fingerprints.

Worker ``me`` of ``n`` owns the fingerprints ``fp % n == me`` (it alone
decides whether such a state is new) and keeps the states it generated
and won (or was given), so states cross processes only to even out the
shares.  A level is expanded in chunks of global ranks; each chunk goes:

``expand``   successors of my states ranked below ``hi``, as queries
             ``(fingerprint, key)`` to each owner, where ``key = parent rank
             << ORD_BITS | ordinal`` is the position a one-process search
             would find the state at;
``resolve``  as owner: among all queries for a fingerprint not seen before,
             the least key wins (that one-process search's first discovery);
``accept``   keep the winners, check the properties on them, and give some
             away when my share is too large;
``finish``   the level's keys, so the coordinator can number (rank) them.

All methods are plain calls; :func:`serve` runs them in a process.
"""

from __future__ import annotations

import gc
import heapq
import os
import pickle
import resource
import time
import traceback
from array import array
from itertools import compress

from .coverage import Tally
from .frontier import Level, decode_batches, encode_batch
from .store import FP_MASK

ORD_BITS = 20
ORD_MASK = (1 << ORD_BITS) - 1


def _ints(data: bytes) -> array:
    out = array("q")
    out.frombytes(data)
    return out


class Worker:
    """A share of the search; see the module docstring for a chunk's life cycle."""

    def __init__(self, model, me: int, n: int, in_memory: int, folder: str | None, por: bool) -> None:
        props = list(model.properties())
        self.always = [p for p in props if p.expectation == "always"]
        self.sometimes = [p for p in props if p.expectation == "sometimes"]
        self.me, self.n = me, n
        self.fingerprint = getattr(model, "fingerprint", hash)
        self.successors = model.successors
        self.ample = getattr(model, "ample", None) if por else None
        self.is_final = getattr(model, "is_final", None)
        self.in_memory, self.folder = in_memory, folder
        self.seen: set[int] = set()
        self.level = Level(in_memory, folder)
        self.next = Level(in_memory, folder)
        self.held: list = []
        self.tally = Tally(model, props)
        #: per watched property, the keys of this level's states found armed; counted once the level's first
        #: violator is known (a one-process search stops counting a property at its first violating state)
        self.armed_at: dict[str, array] = {}

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
        self.witness: dict[int, list[int]] = {}
        self.deadlock: int | None = None
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
        self.pend = pend = [[] for _ in range(n)]
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
            count = 0
            for ordinal, successor in enumerate(successors(state)) if pairs is None else pairs:
                count += 1
                if kind_of is not None:  # per action; the coordinator folds them into kinds
                    act = successor[0]
                    acts[act] = acts.get(act, 0) + 1
                nxt = successor[1]
                fp = fingerprint(nxt) & FP_MASK
                if edges is not None:
                    edges.append((ordinal, successor[0], fp))
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
        ``(ordinal, action, fingerprint)`` in, or None."""
        return None

    def _visited(self, rank: int, state, edges: list | None, pairs, count: int) -> None:
        """A hook, after the ``count`` successors of an expanded state were queued (``edges`` filled;
        ``pairs`` the reduction's choice, or None)."""

    def resolve(self, incoming: list) -> list[bytes]:
        """As owner: flag, per sender, the queries that discover a new state (least key wins)."""
        seen, best = self.seen, {}
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
        won = []
        for owner, f in enumerate(flags):
            won.extend(zip(compress(self.keys[owner], f), compress(self.pend[owner], f)))
        if self.n > 1:
            won.sort(key=_first)
        if self.during is not None:  # whole successors: count what their steps armed, keep their states
            for key, successor in won:
                self._arm(key, successor[1], self.during(successor))
            won = [(key, successor[1]) for key, successor in won]
        self.pend = self.keys = None
        to = [w for w, count in gifts.items() for _ in range(count)]
        out = {w: (array("q"), []) for w in gifts}
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
        for name, arm in self.tally.armers:
            if name in during or arm(state):
                found = self.armed_at.get(name)
                if found is None:
                    found = self.armed_at[name] = array("q")
                found.append(key)

    def _discover(self, key: int, state) -> None:
        if self.tally.armers and self.during is None:
            self._arm(key, state)
        for i in self.plan["always"]:
            if i not in self.first and not self.always[i].condition(state):
                self.first[i] = key
        cap = self.plan["cap"]
        for i in self.plan["sometimes"]:
            found = self.witness.setdefault(i, [])
            if len(found) < cap and self.sometimes[i].condition(state):
                found.append(key)

    def _keep(self, gifts: list) -> None:
        """Append my last chunk's winners and the gifts of that chunk to the next level, in key order."""
        if gifts:
            given = [zip(_ints(k), decode_batches(b)) for k, b in gifts]
            merged = heapq.merge(self.held, *given, key=_first)
        else:
            merged = self.held
        append = self.next.append
        for key, state in merged:
            append(key, state)
        self.held = []

    def finish(self, gifts: list) -> tuple:
        """End of level: the next level's keys, first violators, witnesses and the first deadlock."""
        self._keep(gifts)
        return self.next.keys.tobytes(), self.first, self.witness, self.deadlock

    def rank(self, ranks: bytes) -> None:
        """Number the next level with global ranks and make it current."""
        self.level.close()
        self.level, self.next = self.next, Level(self.in_memory, self.folder)
        self.level.ranks = _ints(ranks)

    def counts(self, cutoffs: dict | None = None) -> tuple:
        """My coverage counts since the last call (:mod:`.coverage`), handed over and reset.

        ``cutoffs[name]``: the key of the level's first violator of ``name``; states armed
        after it are not counted, as in a one-process search.
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

    def save(self, path: str) -> None:
        """Write my fingerprints and my current level (a snapshot taken between levels)."""
        data = {"seen": array("q", self.seen).tobytes(), "keys": self.level.keys.tobytes(),
                "ranks": self.level.ranks.tobytes(), "states": self.level.encoded()}
        with open(path, "wb") as f:
            pickle.dump(data, f, pickle.HIGHEST_PROTOCOL)
            f.flush()
            os.fsync(f.fileno())

    def load(self, paths: list[str]) -> int:
        """Take my share of saved workers' files: the fingerprints I own, the levels of files ``k % n == me``."""
        parts = []
        for k, path in enumerate(paths):
            with open(path, "rb") as f:
                data = pickle.load(f)
            self.seen.update(fp for fp in _ints(data["seen"]) if fp % self.n == self.me)
            if k % self.n == self.me:
                parts.append(zip(_ints(data["ranks"]), _ints(data["keys"]), decode_batches(data["states"])))
        for rank, key, state in heapq.merge(*parts, key=_first):
            self.level.append(key, state)
            self.level.ranks.append(rank)
        return len(self.level)


def peak_rss() -> int:
    """This process's peak resident set size in bytes (Linux counts kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _first(item):
    return item[0]


def settle() -> None:
    """End of a level: one young collection, then freeze what survives (long-lived, acyclic states).

    The search runs with the automatic collector off (:func:`.parallel.explore_levels`): over a
    level it found nothing to free, yet cost a fifth of a worker's CPU (most of it full collections
    walking the level's live objects); this one pass per level still frees any cycle made in it.
    """
    gc.collect(0)
    gc.freeze()


def serve(conn, model, me: int, n: int, options: dict, kind: type = Worker) -> None:
    """A worker process (a ``kind``): run the coordinator's calls until it says stop or goes away."""
    gc.disable()  # as in the coordinator, which forked me: see settle()
    gc.freeze()
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
        except BaseException:  # noqa: BLE001 - reported to the coordinator, which raises it
            reply = ("error", traceback.format_exc())
        conn.send(reply)
        if name == "rank":
            settle()
