"""``acplab sweep``: a grid of simulations on a ``concurrent.futures`` executor, resumable.

CONFIG (TOML or JSON)::

    specs = ["rfd", "replay-without-reset"]
    sessions = 200
    seed = 1
    [base]            # any SimParams field (see simulations/params.py)
    clients = 2
    [grid]            # every combination of these values, for every spec
    drop = [0, 0.01, 0.05]
    clients = [1, 3]

Each point is ``spec`` x one grid combination, run with ``base`` + the grid
values, ``sessions`` sessions and the same ``seed`` (common random numbers
across points).  Its key is the canonical JSON of ``{"spec": ..., **grid
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
from .params import SimParams, _short, check_cost

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
#: the files a sweep writes in its folder (besides its plots); ``--fresh`` removes exactly these
OWN_FILES = (RESULTS, SUMMARY, RESULTS + ".tmp", "summary.json.tmp")
#: the largest grid (specs x combinations); each point is a whole simulation
MAX_POINTS = 10_000
#: part of every sweep hash: bump when a result's meaning changes for the same parameters
SWEEP_FORMAT = 1


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
        cfg = _loads_json(text) if kind == "JSON" else tomllib.loads(text)
    except (ValueError, RecursionError, MemoryError) as err:  # TOMLDecodeError is a ValueError
        reason = "nested too deeply" if isinstance(err, RecursionError) else " ".join(str(err).split())
        raise InputError(f"{path}: not valid {kind}: {reason[:200]}") from None
    return check_config(cfg, str(path))


def _loads_json(text: str):
    def no_constant(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=no_constant,
                      parse_int=lambda s: int(s) if len(s) <= 4000 else float(s))


def check_config(cfg, where: str = "config") -> dict:
    """The config with defaults filled in, every value checked; the grid is counted, never built."""
    if not isinstance(cfg, dict):
        raise InputError(f"{where}: expected a table/object at the top level")
    unknown = set(cfg) - {"specs", "grid", "base", "sessions", "seed"}
    if unknown:
        names = ", ".join(_short(k) for k in sorted(map(str, unknown))[:5])
        raise InputError(f"{where}: unknown key(s) {names}; known: specs, grid, base, sessions, seed")
    specs = cfg.get("specs", ["rfd"])
    if isinstance(specs, str):
        specs = [specs]
    if not isinstance(specs, list) or not specs or not all(isinstance(s, str) for s in specs):
        raise InputError(f"{where}: specs must be a non-empty list of spec names")
    grid = cfg.get("grid", {})
    if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
        raise InputError(f"{where}: grid must map parameter names to non-empty lists of values")
    if "spec" in grid or "sessions" in grid or "seed" in grid:
        raise InputError(f"{where}: put spec, sessions and seed at the top level, not in grid")
    base = cfg.get("base", {})
    if not isinstance(base, dict):
        raise InputError(f"{where}: base must be a table/object of parameters")
    size = len(specs) * math.prod(len(v) for v in grid.values())
    if size > MAX_POINTS:
        raise InputError(f"{where}: the sweep has {_count(size)} points (specs x grid combinations); "
                         f"the maximum is {MAX_POINTS:,}: split it or use fewer values")
    out = {"specs": list(specs), "grid": {k: list(v) for k, v in grid.items()}, "base": dict(base),
           "sessions": cfg.get("sessions", SimParams.sessions), "seed": cfg.get("seed", SimParams.seed)}
    for spec in specs:  # each value on its own: the checks are per parameter, so this covers every point
        point_params(out, spec, {}, where)
        for name, values in out["grid"].items():
            for value in values:
                point_params(out, spec, {name: value}, where)
    check_cost(sum(params.estimated_seconds() for _, params in iter_points(out)), f"{where}: the sweep")
    return out


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
    text = json.dumps({"format": SWEEP_FORMAT, "points": [[k, p.to_json()] for k, p in todo_all]},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def run_point(key: str, params_json: dict) -> dict:
    """Worker: one grid point's simulation summary (no artefacts, no wall-clock)."""
    from .simulate import simulate

    params = SimParams.from_mapping(params_json)
    summary = simulate(params).to_json()
    return {"key": key, "point": json.loads(key), "result": summary}


def run_point_task(task: tuple[str, dict]) -> dict:
    """:func:`run_point` for one ``(key, params)`` task (executors map one-argument functions)."""
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
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        for row in rows:
            f.write(json.dumps(row, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


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
    if entries and RESULTS not in entries and not fresh:
        raise InputError(f"--out {folder}: the folder is not empty and holds no sweep results ({RESULTS}); "
                         f"choose an empty or new folder")
    return folder


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
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Terminated()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def run_sweep(cfg: dict, out, executor: str = "local", workers: int | None = None, plots: bool = False,
              quiet: bool = False, log=None, fresh: bool = False) -> int:
    """Run the missing points, append each as it finishes, then write ``summary.json``. Returns 0.

    Everything that can be refused is refused before the first point runs.
    """
    log = log or (lambda text: None if quiet else print(text, file=sys.stderr))
    folder = prepare_folder(out, fresh)
    with locked(folder):
        return _run_locked(cfg, folder, executor, workers, plots, log, fresh)


def _run_locked(cfg, folder: Path, executor, workers, plots, log, fresh) -> int:
    results = folder / RESULTS
    summary_path = folder / SUMMARY
    todo_all = points(cfg)
    sweep = sweep_id(todo_all)
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
            for _, row in as_they_finish(pool, run_point_task, [(k, p.to_json()) for k, p in todo]):
                row["sweep"] = sweep
                _append(results, row)
                done[row["key"]] = row
                finished += 1
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
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(json.dumps(summary, sort_keys=True, indent=1) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _plots(summary_path: Path, folder: Path) -> None:
    from .plots import plot_sweep

    rows = json.loads(summary_path.read_text())["points"]
    plot_sweep(rows, folder)
