"""``acplab sweep``: a grid of simulations on a ``concurrent.futures`` executor, resumable.

CONFIG (TOML or JSON)::

    specs = ["rfd", "replay-without-reset"]
    spec_files = ["mine.toml"]   # variants as files (acplab matrix --spec-file), relative to CONFIG
    sessions = 200
    seed = 1
    [base]            # any SimParams field (see simulations/params.py)
    clients = 2
    [grid]            # every combination of these values, for every spec
    drop = [0, 0.01, 0.05]
    clients = [1, 3]

Each point is ``spec`` x one grid combination, run with ``base`` + the grid
values, ``sessions`` sessions and the same ``seed`` (common random numbers
across points); a point's verdict leaves out the rules its spec breaks by
design, as the matrix does (:mod:`.sweep_specs`).  Its key is the canonical JSON of ``{"spec": ..., **grid
values}``.  Finished points are appended to ``OUT/results.jsonl`` (one line
each, flushed and fsynced) in completion order; a restarted sweep drops a
torn last line, skips the keys already there and runs the rest; a finished
sweep runs nothing.  ``OUT/summary.json`` lists every point sorted by key,
so it does not depend on the executor, the worker count or interruptions:
a sweep killed at any moment and run again gives a byte-identical summary.

Reliability:

* **One configuration per folder.**  Every row carries ``sweep``, a hash of
  the full effective configuration (every point's complete parameters, see
  :func:`sweep_id`).  A rerun whose configuration differs (another ``seed``,
  ``sessions``, ``base``, grid or spec list) refuses with one line, unless
  ``fresh`` (``--fresh``) discards the old results first.
* **One sweep per folder at a time**: the folder is locked (``flock`` on the
  folder itself; POSIX only) for the whole run.
* **Bounded before any work**: at most :data:`MAX_POINTS` points (counted, not
  built: a grid is enumerated lazily) and at most
  :data:`~.params.MAX_CPU_SECONDS` of estimated CPU time; every grid value is
  checked on its own, so a bad value is reported before anything runs.
* **Only a sweep's folder**: a non-empty ``--out`` must hold a sweep's
  ``results.jsonl`` (:func:`is_sweep_folder`), with ``--fresh`` too, so
  ``--fresh`` never removes a user's ``summary.json``.  Files are written
  atomically (``artefacts.replacing``).
* A damaged complete line in ``results.jsonl`` is not guessed around: one
  line names the file and line (exit 2).  Only a torn *last* line (an
  interrupted append) is dropped.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import signal
import sys
import threading
import tomllib
from pathlib import Path

from acplab.model.engine.executors import as_they_finish, open_executor
from acplab.model.errors import InputError
from .params import SimParams, _short, check_cost, no_underflow
from .sweep_specs import apply_by_design, load_spec_files, register_in_worker, spec_definitions

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
#: the files a sweep writes in its folder (besides its plots); ``--fresh`` removes exactly these
OWN_FILES = (RESULTS, SUMMARY, RESULTS + ".tmp", "summary.json.tmp")
#: the largest grid (specs x combinations); each point is a whole simulation
MAX_POINTS = 10_000
#: part of every sweep hash: bump when a result's meaning changes for the same parameters
SWEEP_FORMAT = 2  # 2: a point's verdict leaves out its spec's by-design rules (listed under by_design)


def load_config(path) -> dict:
    """Read and check a sweep config; one-line input errors."""
    p = Path(path)
    kind = "JSON" if p.suffix.lower() == ".json" else "TOML"
    try:
        data = p.read_bytes()
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not UTF-8 text (byte {err.start + 1})") from None
    try:
        cfg = _loads_json(text) if kind == "JSON" else tomllib.loads(text, parse_float=no_underflow)
    except (ValueError, RecursionError, MemoryError) as err:  # TOMLDecodeError is a ValueError
        reason = "nested too deeply" if isinstance(err, RecursionError) else " ".join(str(err).split())
        raise InputError(f"{path}: not valid {kind}: {reason[:200]}") from None
    return check_config(cfg, str(path))


def _loads_json(text: str):
    def no_constant(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=no_constant, parse_float=no_underflow,
                      parse_int=lambda s: int(s) if len(s) <= 4000 else float(s))


def check_config(cfg, where: str = "config") -> dict:
    """The config with defaults filled in, every value checked; the grid is counted, never built."""
    if not isinstance(cfg, dict):
        raise InputError(f"{where}: expected a table/object at the top level")
    unknown = set(cfg) - {"specs", "spec_files", "grid", "base", "sessions", "seed"}
    if unknown:
        names = ", ".join(_short(k) for k in sorted(map(str, unknown))[:5])
        raise InputError(f"{where}: unknown key(s) {names}; known: specs, spec_files, grid, base, sessions, seed")
    spec_files = load_spec_files(cfg, where)
    specs = cfg.get("specs", [] if spec_files else ["rfd"])
    if isinstance(specs, str):
        specs = [specs]
    if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
        raise InputError(f"{where}: specs must be a list of spec names")
    specs = specs + [n for n in spec_files.values() if n not in specs]
    if not specs:
        raise InputError(f"{where}: specs must be a non-empty list of spec names (or give spec_files)")
    grid = cfg.get("grid", {})
    if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
        raise InputError(f"{where}: grid must map parameter names to non-empty lists of values")
    if "spec" in grid or "sessions" in grid or "seed" in grid:
        raise InputError(f"{where}: put spec, sessions and seed at the top level, not in grid")
    base = cfg.get("base", {})
    if not isinstance(base, dict):
        raise InputError(f"{where}: base must be a table/object of parameters")
    ignored = _ignored_keys(base, grid)
    if ignored:
        raise InputError(f"{where}: {ignored}")
    size = len(specs) * math.prod(len(v) for v in grid.values())
    if size > MAX_POINTS:
        raise InputError(f"{where}: the sweep has {_count(size)} points (specs x grid combinations); "
                         f"the maximum is {MAX_POINTS:,}: split it or use fewer values")
    out = {"specs": list(specs), "grid": {k: list(v) for k, v in grid.items()}, "base": dict(base),
           "sessions": cfg.get("sessions", SimParams.sessions), "seed": cfg.get("seed", SimParams.seed)}
    if spec_files:
        out["spec_files"] = list(spec_files)
    for spec in specs:  # each value on its own: the checks are per parameter, so this covers every point
        point_params(out, spec, {}, where)
        for name, values in out["grid"].items():
            for value in values:
                point_params(out, spec, {name: value}, where)
    check_cost(sum(params.estimated_seconds() for _, params in iter_points(out)), f"{where}: the sweep")
    return out


def _ignored_keys(base: dict, grid: dict) -> str | None:
    """Why a key of ``base`` would be silently ignored (None: none is).

    ``spec``, ``sessions`` and ``seed`` are set from the top level for every point, and a grid parameter
    overrides ``base`` at every point.  In TOML a top-level key written after ``[base]`` lands in base: the
    usual way to get here.
    """
    names = {str(k).replace("-", "_") for k in base}
    top = sorted(names & {"spec", "specs", "sessions", "seed"})
    if top:
        return (f"base.{top[0]} would be ignored: put spec(s), sessions and seed at the top level (in TOML, "
                f"before any [table])")
    both = sorted(names & {str(k).replace("-", "_") for k in grid})
    if both:
        return f"{both[0]} is in both base and grid: the grid's values would override base's; keep one"
    return None


def _count(n: int) -> str:
    return f"{n:,}" if n < 10 ** 30 else f"about 10^{len(str(n)) - 1}"


def grid_points(grid: dict):
    """Every combination of the grid's values, lazily, in a fixed order (names sorted)."""
    names = sorted(grid)
    return (dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names)))


def point_key(spec: str, point: dict) -> str:
    return json.dumps({"spec": spec, **point}, sort_keys=True, separators=(",", ":"))


def point_params(cfg: dict, spec: str, point: dict, where: str = "config") -> SimParams:
    values = dict(cfg["base"])
    values.update(point)
    values.update(spec=spec, sessions=cfg["sessions"], seed=cfg["seed"])
    return SimParams.from_mapping(values, where)


def iter_points(cfg: dict):
    """``(key, params)`` for every point, lazily, in config order (duplicates included)."""
    for spec in cfg["specs"]:
        for point in grid_points(cfg["grid"]):
            yield point_key(spec, point), point_params(cfg, spec, point)


def points(cfg: dict) -> list[tuple[str, SimParams]]:
    """Every (key, params) of the sweep, sorted by key (at most :data:`MAX_POINTS`)."""
    return sorted(dict(iter_points(cfg)).items())


def sweep_id(todo_all: list[tuple[str, SimParams]]) -> str:
    """The hash of a sweep's full effective configuration: every point's key and complete parameters."""
    config = {"format": SWEEP_FORMAT, "points": [[k, p.to_json()] for k, p in todo_all]}
    defined = spec_definitions(p.spec for _, p in todo_all)
    if defined:  # a spec file's switches: an edited file is another sweep
        config["spec_files"] = defined
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def run_point(key: str, params_json: dict, spec_files: tuple = ()) -> dict:
    """Worker: one grid point's simulation summary (no artefacts, no wall-clock), its spec's by-design
    rules out of the verdict (:func:`.sweep_specs.apply_by_design`)."""
    from acplab.model.acp.spec import get_spec

    from .simulate import simulate

    register_in_worker(spec_files)
    params = SimParams.from_mapping(params_json)
    result = simulate(params)
    summary = apply_by_design(result.to_json(), result.runs, get_spec(params.spec))
    return {"key": key, "point": json.loads(key), "result": summary}


def run_point_task(task: tuple) -> dict:
    """:func:`run_point` for one ``(key, params[, spec files])`` task (executors map one-argument functions)."""
    return run_point(*task)


def _row_problem(row, sweep: str | None) -> str | None:
    """Why ``row`` is not a result row of this sweep (None: it is)."""
    if not isinstance(row, dict):
        return "not a JSON object"
    if not isinstance(row.get("key"), str) or not isinstance(row.get("point"), dict):
        return "no 'key' and 'point'"
    result = row.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("verdict"), str):
        return "no 'result' with a 'verdict'"
    if sweep is not None and row.get("sweep") != sweep:
        return "different configuration"
    return None


def read_results(path: Path, sweep: str | None = None) -> dict[str, dict]:
    """The finished points in ``results.jsonl`` (first row per key).

    A torn last line (an interrupted append: no newline) is dropped and the
    file rewritten atomically without it.  Any other bad line is an
    :class:`InputError` naming the line; a row of another configuration
    (``sweep`` differs) is one too, telling how to start over.
    """
    done: dict[str, dict] = {}
    if not path.exists():
        return done
    torn = False
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                torn = True
                break
            if not raw.strip():
                continue
            try:
                row = _loads_json(raw.decode("utf-8"))
            except (ValueError, RecursionError, MemoryError):
                row = None
            problem = _row_problem(row, sweep) if row is not None else "not JSON"
            if problem == "different configuration":
                raise InputError(f"{path.parent}: holds the results of a different sweep configuration "
                                 f"({path}:{lineno}); rerun with --fresh to discard them, or choose another --out")
            if problem is not None:
                raise InputError(f"{path}:{lineno}: not a result row ({problem}); remove the line, "
                                 f"or rerun with --fresh to discard every result")
            done.setdefault(row["key"], row)
    if torn:
        _rewrite(path, done.values())
    return done


def _rewrite(path: Path, rows) -> None:
    """Replace ``path`` with ``rows``, atomically."""
    from acplab.model.render.atomic import write_atomic

    write_atomic(path, "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))


def _append(path: Path, row: dict) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(row, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())


def prepare_folder(out, fresh: bool = False) -> Path:
    """Check and create the sweep folder before any work: a folder, writable, a sweep's or empty."""
    from acplab.model.render.artefacts import check_out_dir

    folder = Path(out)
    check_out_dir(str(folder))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"--out {folder}: cannot create the folder: {err.strerror or err}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"--out {folder}: the folder is not writable")
    entries = {p.name for p in folder.iterdir()}
    if entries and not is_sweep_folder(folder):
        raise InputError(f"--out {folder}: the folder is not empty and holds no sweep results ({RESULTS}); "
                         f"choose an empty or new folder" + (" (--fresh discards only a sweep's own results)"
                                                             if fresh else ""))
    return folder


def is_sweep_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a sweep's results: ``results.jsonl`` whose first complete line is a row of a
    sweep (or none yet), and no ``summary.json`` but a sweep's.  Only such a folder's files are ever removed.
    """
    try:
        with open(folder / RESULTS, "rb") as f:
            first = f.readline(1 << 20)
    except OSError:
        return False
    if first.endswith(b"\n") and not _is_row(first):
        return False
    try:
        summary = json.loads((folder / SUMMARY).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return True
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(summary, dict) and {"config", "points", "sweep"} <= set(summary)


def _is_row(raw: bytes) -> bool:
    try:
        row = _loads_json(raw.decode("utf-8"))
    except (ValueError, RecursionError, MemoryError):
        return False
    return _row_problem(row, None) is None and "sweep" in row


@contextlib.contextmanager
def locked(folder: Path):
    """Hold an exclusive lock on ``folder`` (a second sweep there fails at once); no-op without flock."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise InputError(f"--out {folder}: another sweep is running in this folder") from None
        yield
    finally:
        os.close(fd)


class Terminated(BaseException):
    """SIGTERM during a sweep: unwinds like Ctrl-C, so workers are stopped and saved points kept."""


@contextlib.contextmanager
def _sigterm_unwinds():
    """SIGTERM raises :class:`Terminated` in this process; a worker forked meanwhile (which inherits the
    handlers) dies of SIGTERM or SIGINT quietly instead, so an interrupted sweep prints no worker tracebacks."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()

    def handler(signum, frame):
        if os.getpid() != owner:
            _die_quietly(signum)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated()

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def _die_quietly(signum: int) -> None:
    """End this (worker) process by ``signum``'s default action, without unwinding through Python."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)


def run_sweep(cfg: dict, out, executor: str = "local", workers: int | None = None, plots: bool = False,
              quiet: bool = False, log=None, fresh: bool = False, progress=None) -> int:
    """Run the missing points, append each as it finishes, then write ``summary.json``. Returns 0.

    Everything that can be refused is refused before the first point runs.  ``progress(done, total)``
    after each point replaces the per-point log line.
    """
    log = log or (lambda text: None if quiet else print(text, file=sys.stderr))
    folder = prepare_folder(out, fresh)
    with locked(folder):
        return _run_locked(cfg, folder, executor, workers, plots, log, fresh, progress)


def _run_locked(cfg, folder: Path, executor, workers, plots, log, fresh, progress=None) -> int:
    results = folder / RESULTS
    summary_path = folder / SUMMARY
    todo_all = points(cfg)
    sweep = sweep_id(todo_all)
    for leftover in folder.glob(".*.acplab-tmp-*"):  # an atomic write cut off by a kill
        if leftover.name.startswith((f".{RESULTS}.", f".{SUMMARY}.")):
            leftover.unlink(missing_ok=True)
    if fresh:
        for name in OWN_FILES:
            (folder / name).unlink(missing_ok=True)
    done = read_results(results, sweep)
    todo = [(k, p) for k, p in todo_all if k not in done]
    if not todo:
        write_summary(cfg, done, todo_all, summary_path, sweep)
        log(f"sweep already complete: {len(todo_all)} points in {results}; nothing to run")
        if plots:
            _plots(summary_path, folder)
        return 0
    estimate = sum(p.estimated_seconds() for _, p in todo)
    finished = 0
    try:
        with _sigterm_unwinds(), open_executor(executor, workers) as pool:
            if done:  # logged once the executor is there: a refused executor is the only line
                log(f"resuming: {len(todo_all) - len(todo)} of {len(todo_all)} points already in {results}")
            log(f"{len(todo)} point(s) to run, at most about {estimate / 60:.1f} CPU-minutes")
            files = tuple(cfg.get("spec_files", ()))
            for _, row in as_they_finish(pool, run_point_task, [(k, p.to_json(), files) for k, p in todo]):
                row["sweep"] = sweep
                _append(results, row)
                done[row["key"]] = row
                finished += 1
                if progress is not None:
                    progress(finished, len(todo))
                else:
                    log(f"[{finished}/{len(todo)}] {row['key']}: {row['result']['verdict']}")
    except (KeyboardInterrupt, Terminated) as stop:
        log(f"interrupted: {finished} new point(s) saved in {results}; run the same command to resume")
        if isinstance(stop, Terminated):  # die of SIGTERM, as the sender expects, now that workers are gone
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
        raise
    write_summary(cfg, done, todo_all, summary_path, sweep)
    log(f"{len(todo_all)} points: {summary_path}")
    if plots:
        _plots(summary_path, folder)
    return 0


def write_summary(cfg: dict, done: dict, todo_all, path: Path, sweep: str | None = None) -> None:
    """``summary.json``: the config, the sweep hash and every point sorted by key (atomic replace)."""
    rows = [{k: v for k, v in done[key].items() if k != "sweep"} for key, _ in todo_all if key in done]
    summary = {"config": cfg, "points": rows, "sweep": sweep}
    from acplab.model.render.atomic import write_atomic

    write_atomic(path, json.dumps(summary, sort_keys=True, indent=1) + "\n")


def _plots(summary_path: Path, folder: Path) -> None:
    from .plots import plot_sweep

    rows = json.loads(summary_path.read_text())["points"]
    plot_sweep(rows, folder)
