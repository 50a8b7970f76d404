"""The breadth-first search: one engine, on this process or on several (states partitioned by fingerprint).

:func:`explore` is the only breadth-first search.  With ``workers=1`` it
runs in this process (no other interpreter); with more, the states are
shared out among forked worker processes by fingerprint, and the result
(verdict, state and transition counts, depth, each counterexample and
witness path, the order of the violations, the coverage counts) is the
same whatever the number of workers, because every run reproduces one
order: the level's states are numbered (ranked) in discovery order, a new
state's key is ``(parent rank, action ordinal)``, and a state found by
several workers is kept with the least key, its first discovery.
Decisions taken in discovery order (the first violator of each ``always``
property, which is not expanded; the first witness; the first deadlock)
are taken per level, by least rank.  What each expectation covers is in
:mod:`.search`.

A level is expanded in chunks of ranks (:mod:`.worker` says what a chunk
does); between levels the coordinator numbers the new states (its parent
links are one array per level, rank-indexed: 8 bytes a state), decides,
and may write a checkpoint (:mod:`.checkpoint`) that a killed run resumes
from.  Workers hold their level's states compactly (:mod:`.frontier`).

``max_states`` and ``max_seconds`` are checked between chunks (an
``incomplete`` run may count a few more states than the limit).
``eventually`` properties are checked after a complete run on the graph
the workers recorded (:mod:`.eventual_levels`); checkpoints keep those
records too.  A :class:`~.results.Visitor` sees every stored state and
every transition; it runs in this process, so a run with one has one
worker.  Worker processes are forked (the model is shared, not pickled)
and end with their parent (:mod:`.worker`); where ``fork`` is missing the
run has one worker, with a note.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import time
from array import array
from bisect import bisect_left
from collections.abc import Callable

from .checkpoint import Checkpoint
from .frontier import memory_budget
from .search_coverage import Tally, summarize
from .eventual_levels import EventualWorker, Liveness
from .hooks import hooks_of
from .path import replay
from .por import ample_of, confirm
from .properties import TransitionSystem, reject_duplicate_names
from .results import Limits, Result, Stats, Violation, Visitor
from .store import FP_MASK
from .worker import ORD_BITS, ORD_MASK, Visiting, Worker, peak_rss, serve, settle


class _Local:
    """The one worker, in this process."""

    def __init__(self, worker: Worker) -> None:
        self.worker, self.reply = worker, None

    def send(self, name: str, *args) -> None:
        self.reply = getattr(self.worker, name)(*args)

    def recv(self):
        return self.reply

    def stop(self) -> None:
        pass


class _Remote:
    """A worker process behind a pipe (calls are sent to all, then answers read from all).

    ``earlier`` are the workers forked before this one: the new process closes
    their pipes' coordinator ends, and its own, as it starts (:func:`.worker.bind_to_parent`).
    """

    def __init__(self, ctx, model, me: int, n: int, options: dict, kind: type, earlier=()) -> None:
        self.conn, child = ctx.Pipe()
        inherited = [peer.conn for peer in earlier] + [self.conn]
        self.process = ctx.Process(target=serve, args=(child, model, me, n, options, kind, inherited, os.getpid()),
                                   daemon=True)
        self.process.start()
        child.close()

    def send(self, name: str, *args) -> None:
        self.conn.send((name, args))

    def recv(self):
        status, value = self.conn.recv()
        if status == "error":
            raise RuntimeError(f"a search worker failed:\n{value}")
        if status == "oserror":
            raise OSError(*value)
        return value

    def stop(self) -> None:
        try:
            self.conn.send(("stop", ()))
        except OSError:
            pass
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()


def _call(peers, name: str, per_peer) -> list:
    """Send ``name`` to every peer with its own arguments, then collect the answers in order."""
    for peer, args in zip(peers, per_peer):
        peer.send(name, *args)
    return [peer.recv() for peer in peers]


def explore(
    model: TransitionSystem,
    limits: Limits = Limits(),
    progress: Callable[[Stats], None] | None = None,
    stop_on_violation: bool = False,
    expand_violating: bool = False,
    visitor: Visitor | None = None,
    por: bool = True,
    *,
    workers: int = 1,
    checkpoint: str | None = None,
    checkpoint_every: float = 60.0,
    identity: str = "",
    memory: int | None = None,
    in_memory: int | None = None,
    chunk: int = 1024,
) -> Result:
    """Explore every reachable state breadth-first and check the model's properties.

    Returns a :class:`~.results.Result`; its verdict is ``holds`` only when
    the whole reachable state space was explored and nothing was violated.
    ``stop_on_violation`` stops after the level of the first error (a
    warning does not stop): every state of that level was generated and
    judged, so each property violated there has its shortest counterexample,
    and the run is not ``complete`` (so never ``holds``; ``eventually``
    properties, which need the whole graph, and missing witnesses are not
    judged); with a ``checkpoint`` the stop writes a snapshot, which a run
    without the stop resumes to explore on (the stop is no part of a
    snapshot's options: both searches are the same up to it);
    ``expand_violating`` keeps exploring beyond violating states, so every
    property gets its own shortest counterexample even when another property
    is violated on the way (each property is still reported once).  ``por``
    uses the model's ``ample`` sets when it offers them (:mod:`.por`);
    ``visitor`` sees every stored state and transition (one worker, no
    reduction).  ``workers`` processes share the search (1: this process).

    ``checkpoint`` is a folder: a run resumes from the snapshot in it (if its
    ``identity``, a string naming the model and its bounds, matches) and
    writes a snapshot between levels at most every ``checkpoint_every``
    seconds.  A level's states stay live objects while a worker's resident
    memory is below its share of ``memory`` bytes (the search's budget; by
    default ``$ACPLAB_SEARCH_MEMORY`` or 256 MiB: :mod:`.frontier`); the rest
    are encoded on disk.  ``in_memory``, when given, also caps the live
    states of a level (shared out among the workers; tests make small
    searches spill with it).  ``chunk`` ranks are
    expanded per worker between exchanges: the successors of a chunk wait
    in memory for their owners' answers, so a small chunk keeps memory low
    (1,024 against 4,096: a quarter less peak memory, no slower).

    Examples
    --------
    >>> from acplab.model.engine.twophase import TwoPhase
    >>> explore(TwoPhase(3)).stats.states
    288
    >>> explore(TwoPhase(3), workers=2).stats.states
    288
    """
    started = time.perf_counter()
    props = list(model.properties())
    hooks = hooks_of(model)
    reject_duplicate_names(props + ([hooks.deadlock_property] if hooks.check_deadlock else []))
    notes = []
    if visitor is not None and workers > 1:
        workers = 1
        notes.append("a visitor watches the search in this process: one worker")
    if workers > 1 and "fork" not in multiprocessing.get_all_start_methods():
        workers = 1
        notes.append("this platform cannot fork: one worker")
    eventual = any(p.expectation == "eventually" for p in props)
    saver = None
    if checkpoint:
        options = {"properties": [(p.name, p.expectation) for p in props], "por": por,
                   "expand_violating": expand_violating}
        saver = Checkpoint(checkpoint, identity, workers, options, records=eventual)
    spill = str(saver.spill) if saver and eventual else None
    collector = gc.isenabled()
    gc.disable()  # young collections between levels instead (worker.settle); the workers fork with it off
    settle.restart()
    run = None
    try:
        run = _Run(model, props, limits, workers, stop_on_violation, expand_violating, por, (memory, in_memory),
                   chunk, spill, visitor)
        result = run.search(progress, saver, checkpoint_every)
        result.peak_bytes, result.worker_cpu = run.usage()
    finally:
        if run is not None:
            run.close()
        gc.unfreeze()
        if collector:
            gc.enable()
        if saver:
            saver.tidy()
    result.note = "; ".join(filter(None, [*notes, run.resumed])) or None
    if result.reduced:
        confirm(model, result, _unreduced(workers, memory, in_memory, chunk), limits,
                stop_on_violation=stop_on_violation, expand_violating=expand_violating)
    result.stats.seconds = time.perf_counter() - started
    return result


def _unreduced(workers: int, memory: int | None, in_memory: int | None, chunk: int):
    def again(model, limits, por, **options):
        return explore(model, limits, por=por, workers=workers, memory=memory, in_memory=in_memory, chunk=chunk,
                       **options)

    return again


class _Run:
    """The coordinator of one search: peers, the level loop, the decisions and the parent links."""

    def __init__(self, model, props, limits, workers, stop_on_violation, expand_violating, por, room, chunk,
                 spill=None, visitor=None):
        self.model, self.limits, self.n = model, limits, workers
        self.hooks = hooks = hooks_of(model)
        self.stop_on_violation, self.expand_violating = stop_on_violation, expand_violating
        self.props = props
        self.always = [p for p in props if p.expectation == "always"]
        self.warnings = {p.name for p in self.always if p.severity == "warning"}
        self.deadlock = hooks.deadlock_property  # what a stuck state violates
        self.sometimes = [p for p in props if p.expectation == "sometimes"]
        self.tally = Tally(model, props)
        self.liveness = Liveness(model, props) if any(p.expectation == "eventually" for p in props) else None
        self.ample = ample_of(hooks, por, self.liveness is not None, visitor)
        self.chunk = chunk
        self.resumed = None
        self.cpu_at_start = time.process_time()
        memory, in_memory = room  # the search's budget and cap, shared out among the workers
        options = {"in_memory": None if in_memory is None else max(1, in_memory // workers), "folder": None,
                   "por": por, "memory": memory_budget(memory) // workers}
        kind = Worker if self.liveness is None else EventualWorker
        if spill is not None:
            options["spill"] = spill  # the eventually records' edges: where a checkpoint can link them
        if visitor is not None:
            kind = type(f"Visiting{kind.__name__}", (Visiting, kind), {})
            options["visitor"] = visitor
        if workers == 1:
            self.peers = [_Local(kind(model, 0, 1, **options))]
        else:
            ctx = multiprocessing.get_context("fork")
            self.peers = []
            for i in range(workers):
                self.peers.append(_Remote(ctx, model, i, workers, options, kind, self.peers))
        # what the search has decided so far (all of it goes into a checkpoint)
        self.state = {
            "level": 0, "sizes": [], "links": [], "states": 0, "transitions": 0, "seconds": 0.0,
            "violations": [], "witnesses": {}, "always": list(range(len(self.always))),
            "sometimes": list(range(len(self.sometimes))), "skip": set(), "check_deadlock":
            hooks.check_deadlock, "reduced": False, "counts": ({}, {}, 0),
            "narrowed": -1,  # the first level the reduction chose successors in (-1: none), for por.confirm
        }

    def close(self) -> None:
        for peer in self.peers:
            peer.stop()

    def usage(self) -> tuple[int, list[float]]:
        """Peak resident bytes of this process plus the worker processes', and each worker's CPU seconds."""
        if self.n == 1:
            return peak_rss(), [time.process_time() - self.cpu_at_start]
        usage = _call(self.peers, "usage", [()] * self.n)
        return peak_rss() + sum(peak for peak, _ in usage), [cpu for _, cpu in usage]

    # -- level 0 ------------------------------------------------------------------

    def seed(self) -> None:
        """Number the initial states, decide on them, and hand them out."""
        fingerprint = self.hooks.fingerprint
        kept, fps = [], set()
        for ordinal, s in enumerate(self.model.init_states()):
            fp = fingerprint(s) & FP_MASK
            if fp not in fps:
                fps.add(fp)
                kept.append((ordinal, s, fp))
        st = self.state
        st["links"].append(array("q", [o for o, _, _ in kept]))
        st["sizes"].append(len(kept))
        st["states"] = len(kept)
        first: dict[int, int] = {}
        witness: dict[int, list[int]] = {}
        armers = self.tally.armers
        for r, (_, s, _) in enumerate(kept):
            self.tally.armers = [(name, arm) for name, arm in armers  # none after its first violator
                                 if not any(self.always[i].name == name for i in first)]
            self.tally.state(s)
            for i in st["always"]:
                if i not in first and not self.always[i].condition(s):
                    first[i] = r
            for i in st["sometimes"]:
                if self.sometimes[i].condition(s):
                    witness.setdefault(i, []).append(r)
        self.tally.armers = armers
        self.decide(0, [(first, witness)], lambda r: r, lambda r: (-1, kept[r][0]))
        n = self.n
        for i, peer in enumerate(self.peers):
            mine = [(r, o, s) for r, (o, s, _) in enumerate(kept) if r % n == i]
            peer.send("seed", mine, [fp for _, _, fp in kept if fp % n == i])
        for peer in self.peers:
            peer.recv()
        if self.liveness is not None:
            self.liveness.seeded(self.peers, [fp for _, _, fp in kept])

    def decide(self, level: int, found: list, rank_of, order_of) -> None:
        """First violators and first witnesses of a level, in a one-worker search's terms.

        ``found`` holds each worker's ``(first, witness)``: the least key of a
        violator per ``always`` index and the least keys of satisfiers per
        ``sometimes`` index; ``rank_of`` turns a key into a rank at this level
        and ``order_of`` a rank into its discovery position.
        """
        st = self.state
        first = {}
        for i in st["always"]:
            ranks = [rank_of(f[i]) for f, _ in found if i in f]
            if ranks:
                first[i] = min(ranks)
        # a warning's (a SHOULD's) first violator is still expanded, as in the one-worker search
        skip = set() if self.expand_violating else {r for i, r in first.items() if self.always[i].severity != "warning"}
        for i, r in sorted(first.items()):
            st["violations"].append((*order_of(r), i, self.always[i].name, level, r))
            st["always"].remove(i)
        for i in list(st["sometimes"]):
            ranks = sorted(rank_of(k) for _, w in found for k in w.get(i, ()))
            r = next((r for r in ranks if r not in skip), None)
            if r is not None:
                st["witnesses"][self.sometimes[i].name] = (level, r)
                st["sometimes"].remove(i)
        st["skip"] = skip
        if skip and len(skip) == st["sizes"][level]:  # nothing here is expanded: not a level of the search's depth
            st["hollow"] = level

    # -- the level loop -----------------------------------------------------------

    def search(self, progress, checkpoint, every) -> Result:
        st = self.state
        if checkpoint and checkpoint.load(self.peers, st):
            self.resumed = f"resumed from the checkpoint in {checkpoint.folder} at depth {st['level'] + 1}"
            if self.liveness is not None:
                self.liveness.archive = checkpoint.archive
            self.tally.add(st.get("counts", ({}, {}, 0)))
        else:
            self.seed()
            self.gather()
        started = time.perf_counter() - st["seconds"]
        last_save = time.perf_counter()
        limit = None
        while st["sizes"][st["level"]] and limit is None:
            if self.stop_on_violation and self.errors():
                if checkpoint:  # a run without the stop explores on from here
                    self.save(checkpoint, started)
                break
            if self.limits.max_depth is not None and st["level"] + 1 >= self.limits.max_depth:
                limit = f"max depth {self.limits.max_depth}"
                if checkpoint:  # between two levels: the run can go deeper from here later, whenever it saved last
                    self.save(checkpoint, started)
                break
            limit = self.expand_level(started, progress)
            self.gather()
            if limit is None and checkpoint and time.perf_counter() - last_save >= every:
                self.save(checkpoint, started)
                last_save = time.perf_counter()
        return self.result(limit, time.perf_counter() - started)

    def save(self, checkpoint, started: float) -> None:
        """A snapshot between two levels, with the seconds searched so far (a resumed run counts on from them)."""
        self.state["seconds"] = time.perf_counter() - started
        checkpoint.save(self.peers, self.state)

    def errors(self) -> bool:
        """Whether an error (not a warning) was found."""
        return any(name not in self.warnings for *_o, name, _l, _r in self.state["violations"])

    def gather(self) -> None:
        """Sum the workers' coverage counts into mine, and keep the total in the state (checkpoints)."""
        st = self.state
        level = st["level"]
        cutoffs = {name: st["links"][lvl][r] for *_o, _i, name, lvl, r in st["violations"] if lvl == level and level}
        for counts in _call(self.peers, "counts", [(cutoffs,)] * self.n):
            self.tally.add(counts)
        self.state["counts"] = (dict(self.tally.actions), dict(self.tally.armed), self.tally.terminals)

    def plan(self, i: int) -> dict:
        """What worker ``i`` needs to expand the current level."""
        st = self.state
        reduce = self.ample is not None and not st["sometimes"]
        st["reduced"] |= reduce
        return {"always": list(st["always"]), "sometimes": list(st["sometimes"]), "cap": len(st["always"]) + 1,
                "skip": st["skip"], "check_deadlock": st["check_deadlock"], "reduce": reduce,
                "start": sum(st["sizes"][:st["level"]])}

    def expand_level(self, started: float, progress) -> str | None:
        """Expand the current level chunk by chunk; number the next one and decide on it."""
        st, peers, n = self.state, self.peers, self.n
        level, size = st["level"], st["sizes"][st["level"]]
        _call(peers, "begin", [(self.plan(i),) for i in range(n)])
        gifts: list[list] = [[] for _ in range(n)]
        kept = [0] * n
        limit = None
        next_report = time.perf_counter() + 0.5
        for lo in range(0, size, self.chunk * n):
            hi = lo + self.chunk * n
            answers = _call(peers, "expand", [(hi, gifts[i]) for i in range(n)])
            st["transitions"] += sum(t for _, t in answers)
            flags = _call(peers, "resolve", [([q[j] for q, _ in answers],) for j in range(n)])
            won = [sum(f[i].count(1) for f in flags) for i in range(n)]
            plan = balance(kept, won)
            accepted = _call(peers, "accept", [([f[i] for f in flags], plan[i]) for i in range(n)])
            gifts = [[] for _ in range(n)]
            for i, (count, given) in enumerate(accepted):
                st["states"] += count
                for to, gift in given.items():
                    gifts[to].append(gift)
            kept = [k + w for k, w in zip(kept, won)]
            for i, moves in enumerate(plan):
                for to, count in moves.items():
                    kept[i] -= count
                    kept[to] += count
            now = time.perf_counter()
            limit = self.limit_hit(now - started)
            if progress is not None and (now >= next_report or limit):
                queue = size - min(hi, size) + st["states"] - sum(st["sizes"])
                progress(Stats(st["states"], st["transitions"], level + 1, queue, now - started))
                next_report = now + 0.5
            if limit:
                return limit
        self.number(level, _call(peers, "finish", [(gifts[i],) for i in range(n)]))
        settle()  # the states kept so far are long-lived and acyclic
        return None

    def number(self, level: int, finished: list) -> None:
        """Rank the next level's states across workers, record the parent links, decide."""
        st, n = self.state, self.n
        keys = [array("q") for _ in range(n)]
        for k, (raw, *_decisions) in zip(keys, finished):
            k.frombytes(raw)
        if st["narrowed"] < 0 and any(narrowed for *_, narrowed in finished):
            st["narrowed"] = level
        merged = array("q", sorted(key * n + i for i, k in enumerate(keys) for key in k))
        ranks = [array("q") for _ in range(n)]
        for r, tagged in enumerate(merged):
            ranks[tagged % n].append(r)
        links = array("q", (tagged // n for tagged in merged))
        _call(self.peers, "rank", [(r.tobytes(),) for r in ranks])
        deadlocks = [d for _k, _f, _w, d, _n in finished if d is not None]
        if deadlocks and st["check_deadlock"]:
            r = min(deadlocks)
            st["violations"].append((level, (r << ORD_BITS) | ORD_MASK, -1, self.deadlock.name, level, r))
            st["check_deadlock"] = False
        if self.liveness is not None:
            self.liveness.numbered(self.peers, links, sum(st["sizes"]))
        st["links"].append(links)
        st["sizes"].append(len(links))
        st["level"] = level + 1
        self.decide(level + 1, [(f, w) for _, f, w, *_ in finished], lambda k: bisect_left(links, k),
                    lambda r: (level, links[r]))

    def limit_hit(self, seconds: float) -> str | None:
        limits, states = self.limits, self.state["states"]
        if limits.max_states is not None and states >= limits.max_states:
            return f"max states {limits.max_states}"
        if limits.max_seconds is not None and seconds >= limits.max_seconds:
            return f"max seconds {limits.max_seconds:g}"
        return None

    # -- the result -----------------------------------------------------------------

    def ordinals(self, level: int, rank: int) -> list[int]:
        """The replay token of the state ``rank`` at ``level``, from the parent links."""
        links = self.state["links"]
        out = []
        while level > 0:
            key = links[level][rank]
            out.append(key & ORD_MASK)
            rank, level = key >> ORD_BITS, level - 1
        out.append(links[0][rank])
        out.reverse()
        return out

    def result(self, limit: str | None, seconds: float) -> Result:
        st = self.state
        level = st["level"]
        frontier = st["sizes"][level] if level < len(st["sizes"]) else 0
        depth = sum(1 for size in st["sizes"] if size)
        if depth and st.get("hollow") == max(i for i, size in enumerate(st["sizes"]) if size):
            depth -= 1
        stats = Stats(st["states"], st["transitions"], depth, 0, seconds)
        violated = self.errors()
        complete = limit is None and not frontier
        result = Result(complete and not (self.stop_on_violation and violated), stats, limit=limit)
        props = {p.name: p for p in self.always}
        props[self.deadlock.name] = self.deadlock
        for *_order, name, lvl, rank in sorted(st["violations"]):
            found = result.warnings if name in self.warnings else result.violations
            found.append(Violation(props[name], replay(self.model, self.ordinals(lvl, rank))))
        result.witnesses = {p.name: None for p in self.sometimes}
        result.optional = frozenset(p.name for p in self.sometimes if not p.required)
        for name, (lvl, rank) in st["witnesses"].items():
            result.witnesses[name] = replay(self.model, self.ordinals(lvl, rank))
        result.reduced = st["reduced"]
        result.exact_to = None if st["narrowed"] < 0 else st["narrowed"]
        starts = [0]
        for size in st["sizes"]:
            starts.append(starts[-1] + size)
        settled = {name: starts[lvl] + rank for *_o, _i, name, lvl, rank in st["violations"]}
        settled.update((name, starts[lvl] + rank) for name, (lvl, rank) in st["witnesses"].items())
        falsified = None
        if self.liveness is not None:
            falsified = self.liveness.falsified(self.peers)
            if result.complete:
                for p, ordinals, loop in self.liveness.violations(self.peers, st["states"], st["sizes"][0],
                                                                  self.ordinals, starts):
                    result.violations.append(Violation(p, replay(self.model, ordinals, loop)))
        deadlock = self.deadlock if self.hooks.check_deadlock else None
        result.coverage = summarize(self.props, self.tally, st["states"], settled,
                                    {v.property.name for v in result.violations + result.warnings},
                                    set(result.missing_required) if result.complete else set(), deadlock, falsified)
        return result


def balance(kept: list[int], won: list[int]) -> list[dict[int, int]]:
    """Who gives how many of this chunk's new states to whom, so that every worker keeps as many.

    >>> balance([10, 0], [4, 4])
    [{1: 4}, {}]
    >>> balance([5, 5, 5], [3, 0, 0])
    [{1: 1, 2: 1}, {}, {}]
    """
    n = len(kept)
    total = [k + w for k, w in zip(kept, won)]
    target = sum(total) // n
    plan: list[dict[int, int]] = [{} for _ in range(n)]
    spare = [min(w, t - target) if t > target else 0 for t, w in zip(total, won)]
    for i in sorted(range(n), key=total.__getitem__):
        need = target - total[i]
        for j in range(n):
            if need <= 0:
                break
            moved = min(need, spare[j])
            if moved > 0:
                plan[j][i] = plan[j].get(i, 0) + moved
                spare[j] -= moved
                need -= moved
                total[i] += moved
    return plan
