"""What a matrix run is a run *of* (its effective model), and the on-disk cache of runs by that identity.

**Effective model.**  A run of the ACP model reads only some of its spec's
switches: one read on a path the run never takes is never read.  Each run
records the behaviour fields its actors read (:func:`recording`: a field's
first read is noted, then the field goes straight back to the tuple's own
getter, so the record costs one call per field per run).  The model is a
function of what it reads, so a spec that agrees with a finished run on
every field that run read, in the same context (model code, scenario,
bounds, limits), reads the same fields and explores the same graph: it is
the same effective model (:func:`effective_spec`: the spec with every field
the run did not read set to rfd's, and no name or prose).  The digest of a
model, for a checkpoint as for this cache, is :func:`.checking.spec_digest`;
the code it runs on is :func:`acplab.model.engine.checkpoint.code_identity`
(acplab version, a digest of the model package's source files, the
fingerprint encoding), plus the source of a spec file's extension when the
run read it.

**Cache** (``acplab matrix --cache DIR``; only when asked, never a hidden
folder: the user names it, and may share it between runs and ``--out``
folders).  ``DIR/<context digest>/<effective digest>.run``: one data file
(:mod:`acplab.model.engine.datafile`: checksummed, never pickle, nothing in
it is code) per explored run, its header naming its whole context and the
fields the run read.  A task looks for an entry of its context whose read
fields it agrees with.  An entry whose header is not this context's, whose
checksum fails or whose file is not a data file is never used: it is
explored again and rewritten, and counted (``refused``).  Runs stopped by
``--max-seconds`` (their result depends on the machine's speed) and runs
for ``--html`` (their diagrams are drawn from live steps) are never cached;
the bridge runs are not either (six runs, a few seconds).  A counterexample
file from the cache is the one the first exploring row wrote, moved under
the current row's folder: its title names that first row.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from acplab.model.acp.spec import RFD, Spec
from acplab.model.acp.specfile import SWITCHES
from acplab.model.engine import datafile

#: the fields that change what the model does (a spec file's extension among them); the rest is prose
BEHAVIOUR: tuple[str, ...] = (*SWITCHES, "extension")
#: the name of the file that marks a folder as a matrix cache, and its text
MARK = ".acplab-matrix-cache"
MARK_TEXT = "acplab matrix cache: one data file per explored run (see acplab.model.app.matrix_cache)\n"


def recording(spec: Spec) -> tuple[Spec, set[str]]:
    """``spec`` as a value that notes each behaviour field the first time anything reads it, and the set it
    notes into.  The class is made per call, so each run has its own record."""
    reads: set[str] = set()

    class Recorded(Spec):
        __slots__ = ()

    def note(field: str, index: int):
        def read(self):
            reads.add(field)
            if field in Recorded.__dict__:
                delattr(Recorded, field)  # later reads: the tuple's own getter, no cost
            return tuple.__getitem__(self, index)
        return property(read)

    for index, field in enumerate(Spec._fields):
        if field in BEHAVIOUR:
            setattr(Recorded, field, note(field, index))
    return Recorded(*spec), reads


def effective_spec(spec: Spec, reads) -> Spec:
    """The model a run of ``spec`` that read ``reads`` explored: unread fields at rfd's values, no prose."""
    return RFD._replace(name="", description="", **{f: getattr(spec, f) for f in BEHAVIOUR if f in reads})


def context(scenario: str, bounds, files: bool) -> dict:
    """Everything a run depends on besides its spec: the code, the scenario, the bounds, whether it writes files
    (a run stopped by a limit is never kept, so the limit is not part of it)."""
    from acplab.model.engine.checkpoint import code_identity

    return {"code": code_identity(), "model": "acp", "scenario": scenario, "bounds": _plain(bounds._asdict()),
            "files": files, "symmetry": True, "continue_after_violation": True}


def run_digest(ctx: dict, spec: Spec, reads) -> str:
    """The identity of one explored run: its context and its effective model (and the extension's source)."""
    from .checking import spec_digest

    extra = _extension_digest(spec.extension) if "extension" in reads and spec.extension else ""
    text = json.dumps([ctx, spec_digest(effective_spec(spec, reads)), extra], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _extension_digest(ref: str) -> str:
    path = Path(ref.rsplit(":", 1)[0])
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def _plain(value):
    return json.loads(json.dumps(value))


class RunCache:
    """The runs of one cache folder (module docstring); ``hits`` and ``refused`` count this matrix's lookups."""

    def __init__(self, folder: str) -> None:
        from acplab.model.errors import InputError

        self.folder = Path(folder)
        self.hits = self.refused = self.stored = 0
        self._entries: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        if self.folder.exists() and (not self.folder.is_dir() or (any(self.folder.iterdir())
                                                                   and not (self.folder / MARK).is_file())):
            raise InputError(f"--cache {folder}: exists and is not a matrix cache folder (no {MARK} in it)")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / MARK).write_text(MARK_TEXT)
        except OSError as err:
            raise InputError(f"--cache {folder}: {err.strerror or err}") from None

    def _context_folder(self, ctx: dict) -> Path:
        return self.folder / hashlib.sha256(json.dumps(ctx, sort_keys=True).encode()).hexdigest()[:24]

    def _index(self, ctx: dict) -> list[tuple[str, tuple[str, ...]]]:
        """(digest, fields read) of every entry of ``ctx`` whose header is this context's; others refused."""
        folder = self._context_folder(ctx)
        key = folder.name
        if key not in self._entries:
            entries = []
            for path in sorted(folder.glob("*.run")) if folder.is_dir() else ():
                header = self._header(path, ctx)
                if header is not None:
                    entries.append((path.stem, tuple(header["reads"])))
            self._entries[key] = entries
        return self._entries[key]

    def _header(self, path: Path, ctx: dict) -> dict | None:
        try:
            header, _ = datafile.read_file(str(path))
        except datafile.Damaged:
            self.refused += 1
            return None
        if header.get("context") != _plain(ctx) or header.get("digest") != path.stem \
                or not isinstance(header.get("reads"), list):
            self.refused += 1
            return None
        return header

    def find(self, ctx: dict, spec: Spec) -> dict | None:
        """The cached run of ``spec`` in ``ctx`` (its exploration, as :func:`.matrix.run_one` returned it)."""
        for digest, reads in self._index(ctx):
            if run_digest(ctx, spec, reads) != digest:
                continue
            path = self._context_folder(ctx) / f"{digest}.run"
            try:
                header, payload = datafile.read_file(str(path))
                result = datafile.decode_value(payload)
            except datafile.Damaged:
                self.refused += 1
                continue
            if header.get("context") != _plain(ctx) or not isinstance(result, dict):
                self.refused += 1
                continue
            self.hits += 1
            return result
        return None

    def store(self, ctx: dict, spec: Spec, reads, result: dict) -> None:
        """Save one run's exploration (atomically: a file is whole or absent)."""
        digest = run_digest(ctx, spec, reads)
        folder = self._context_folder(ctx)
        folder.mkdir(exist_ok=True)
        tmp = folder / f".{digest}.{os.getpid()}.tmp"
        header = {"context": _plain(ctx), "digest": digest, "reads": sorted(reads)}
        try:
            tmp.unlink(missing_ok=True)
            datafile.write_file(str(tmp), header, datafile.encode_value(result))
            os.replace(tmp, folder / f"{digest}.run")
        finally:
            tmp.unlink(missing_ok=True)
        self._entries.setdefault(folder.name, []).append((digest, tuple(sorted(reads))))
        self.stored += 1

    def summary(self) -> dict:
        return {"folder": str(self.folder), "hits": self.hits, "stored": self.stored, "refused": self.refused}


# -- running a matrix's tasks: each effective model once, in this run and across runs ----------------------


def explore_tasks(tasks: list, run, executor: str, jobs: int, progress, arrived, share_key, lookup, save) -> dict:
    """``run(task)`` for every task not found (``lookup(i)``: a cached result or None) nor identical to a run
    of this matrix that already finished: when a run ends, every task still waiting whose spec agrees with it
    on the fields it read (``share_key(i)``: ``(context, spec)``, or None for a task that shares nothing) is
    withdrawn before it starts and given that run's result.  ``arrived(i, result, how)`` (how: explored,
    shared, cache) returns what to keep; ``save(i, result)`` is called on each explored run.  Returns the
    kept results and how many of each kind."""
    from concurrent.futures import as_completed

    from acplab.model.engine.executors import SerialExecutor, open_executor

    results: list = [None] * len(tasks)
    counts = {"explored": 0, "shared": 0, "cache": 0}
    keys = [share_key(i) for i in range(len(tasks))]
    futures: dict = {}

    def keep(i: int, result: dict, how: str) -> None:
        results[i] = arrived(i, result, how)
        counts[how] += 1
        if progress is not None:
            progress(sum(counts.values()), len(tasks))

    def finished(i: int, result: dict) -> None:
        save(i, result)
        keep(i, result, "explored")
        if keys[i] is None or not result.get("complete") or "reads" not in result:
            return
        ctx, spec = keys[i]
        mine = run_digest(ctx, spec, result["reads"])
        for j in waiting:
            if results[j] is None and keys[j] is not None and keys[j][0] == ctx \
                    and run_digest(ctx, keys[j][1], result["reads"]) == mine \
                    and (j not in futures or futures[j].cancel()):
                keep(j, result, "shared")

    waiting = []
    for i in range(len(tasks)):
        hit = lookup(i)
        if hit is None:
            waiting.append(i)
        else:
            keep(i, hit, "cache")
    with open_executor(executor, jobs) as pool:
        if isinstance(pool, SerialExecutor):  # one at a time: a task is run only if nothing before covered it
            for i in waiting:
                if results[i] is None:
                    finished(i, run(tasks[i]))
        else:
            futures.update({i: pool.submit(run, tasks[i]) for i in waiting})
            index = {f: i for i, f in futures.items()}
            for future in as_completed(index):
                if not future.cancelled() and results[index[future]] is None:
                    finished(index[future], future.result())
    return {"results": results, "counts": counts}


def portable(result: dict, out_dir: str | None, folder: str) -> dict:
    """A run's result as the cache keeps it: its files relative to the run's own folder (``folder``: the
    spec's name and the scenario, under ``out_dir``), the task's own assumptions left out."""
    root = f"{Path(out_dir or '.') / folder}{os.sep}"
    made = {rel[len(folder) + 1:]: data for rel, data in result.get("made", {}).items() if rel.startswith(folder + "/")}
    violations = [dict(v, files=[f[len(root):] for f in v["files"] if f.startswith(root)]) for v in result["violations"]]
    return {k: v for k, v in result.items() if k not in ("made", "bounds", "switches", "views", "raw")} | {
        "violations": violations, "made": made}


def rooted(entry: dict, out_dir: str | None, folder: str) -> dict:
    """A cached result for a run whose files go to ``folder`` under ``out_dir`` (:func:`portable` undone)."""
    root = Path(out_dir or ".") / folder
    return {**entry, "made": {f"{folder}/{rel}": data for rel, data in entry["made"].items()},
            "violations": [dict(v, files=[str(root / f) for f in v["files"]]) for v in entry["violations"]]}


class TaskHooks:
    """How :func:`.matrix.run_matrix`'s tasks meet :func:`.matrix_cache.explore_tasks`: which ACP runs are one model,
    the cache's lookups and saves, and each result brought home (its files written, its assumptions its own)."""

    def __init__(self, tasks: list, out_dir: str | None, store, bounds_of, assumed, write_home) -> None:
        """``bounds_of(spec, scenario, overrides)``, ``assumed(spec, bounds)`` and ``write_home(out_dir, made)``:
        the matrix's own (:mod:`.matrix`)."""
        self.tasks, self.out_dir, self.store = tasks, out_dir, store
        self.bounds_of, self.assumed, self.write_home = bounds_of, assumed, write_home
        self.keys = [None if t[0] != "acp" else (context(t[2], bounds_of(t[1], t[2], t[3]), bool(out_dir)), t[1])
                     for t in tasks]

    def _folder(self, i: int) -> str:
        return f"{self.tasks[i][1].name}/{self.tasks[i][2]}"

    def share_key(self, i: int):
        return self.keys[i]

    def lookup(self, i: int):
        found = self.store.find(*self.keys[i]) if self.store and self.keys[i] else None
        return None if found is None else rooted(found, self.out_dir, self._folder(i))

    def save(self, i: int, result: dict) -> None:
        if self.store and self.keys[i] and result["complete"]:
            self.store.store(*self.keys[i], result["reads"], portable(result, self.out_dir, self._folder(i)))

    def arrived(self, i: int, result: dict, how: str) -> dict:
        """Each run's files are written as it arrives (a shared run's were, by the run it shares)."""
        if how != "shared":
            self.write_home(self.out_dir, result.get("made", {}))
        kept = {k: v for k, v in result.items() if k != "made"}
        if how != "explored":
            _, spec, scenario, overrides = self.tasks[i][:4]
            kept.update(self.assumed(spec, self.bounds_of(spec, scenario, overrides)))
        return kept | {"source": how}


def same_models(rows: list, runs: list, of_row: dict, tasks: list, bounds_of) -> dict[str, list[dict]]:
    """Per ACP row, its runs that are another row's model though planned apart: the same effective model
    (:func:`run_digest` over the fields the run read), found whether the run was explored, shared or cached.
    Each: the scenario, the first such row (rfd first) and the switches that differ, which that run never reads."""
    first: dict[str, tuple[str, int]] = {}
    out: dict[str, list[dict]] = {}
    for row in (r for r in rows if not r.bridge):
        for i in of_row[row.name]:
            run, (_, spec, scenario, overrides) = runs[i], tasks[i][:4]
            if not run.get("complete") or "reads" not in run:
                continue
            digest = run_digest(context(scenario, bounds_of(spec, scenario, overrides), False), spec, run["reads"])
            other, j = first.setdefault(digest, (row.name, i))
            if j != i:
                theirs = tasks[j][1]
                out.setdefault(row.name, []).append({"scenario": scenario, "as": other, "switches": [
                    f for f in BEHAVIOUR if getattr(spec, f) != getattr(theirs, f)]})
    return out
