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
so it does not depend on the executor, the worker count or interruptions.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import tomllib
from pathlib import Path

from acplab.model.engine.executors import as_they_finish, open_executor
from acplab.model.errors import InputError
from .params import SimParams

RESULTS = "results.jsonl"
SUMMARY = "summary.json"


def load_config(path) -> dict:
    """Read and check a sweep config; one-line input errors."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from None
    try:
        if p.suffix.lower() == ".json":
            cfg = json.loads(text)
        else:
            cfg = tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as err:
        raise InputError(f"{path}: not valid {'JSON' if p.suffix.lower() == '.json' else 'TOML'}: "
                         f"{' '.join(str(err).split())}") from None
    return check_config(cfg, str(path))


def check_config(cfg, where: str = "config") -> dict:
    if not isinstance(cfg, dict):
        raise InputError(f"{where}: expected a table/object at the top level")
    unknown = set(cfg) - {"specs", "grid", "base", "sessions", "seed"}
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; known: specs, grid, base, sessions, seed")
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
    out = {"specs": list(specs), "grid": {k: list(v) for k, v in grid.items()}, "base": dict(base),
           "sessions": cfg.get("sessions", SimParams.sessions), "seed": cfg.get("seed", SimParams.seed)}
    for spec in specs:  # check every point's parameters up front
        for point in grid_points(out["grid"]):
            point_params(out, spec, point, where)
    return out


def grid_points(grid: dict) -> list[dict]:
    names = sorted(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def point_key(spec: str, point: dict) -> str:
    return json.dumps({"spec": spec, **point}, sort_keys=True, separators=(",", ":"))


def point_params(cfg: dict, spec: str, point: dict, where: str = "config") -> SimParams:
    values = dict(cfg["base"])
    values.update(point)
    values.update(spec=spec, sessions=cfg["sessions"], seed=cfg["seed"])
    return SimParams.from_mapping(values, where)


def points(cfg: dict) -> list[tuple[str, SimParams]]:
    """Every (key, params) of the sweep, sorted by key."""
    out = {}
    for spec in cfg["specs"]:
        for point in grid_points(cfg["grid"]):
            out[point_key(spec, point)] = point_params(cfg, spec, point)
    return sorted(out.items())


def run_point(key: str, params_json: dict) -> dict:
    """Worker: one grid point's simulation summary (no artefacts, no wall-clock)."""
    from .simulate import simulate

    params = SimParams.from_mapping(params_json)
    summary = simulate(params).to_json()
    return {"key": key, "point": json.loads(key), "result": summary}


def run_point_task(task: tuple[str, dict]) -> dict:
    """:func:`run_point` for one ``(key, params)`` task (executors map one-argument functions)."""
    return run_point(*task)


def read_results(path: Path) -> dict[str, dict]:
    """The finished points in ``results.jsonl``; a torn or bad line (an interrupted write) is dropped."""
    done: dict[str, dict] = {}
    if not path.exists():
        return done
    bad = False
    with open(path, "rb") as f:
        for raw in f:
            try:
                if not raw.endswith(b"\n"):
                    raise ValueError("torn line")
                row = json.loads(raw)
                key = row["key"]
            except (ValueError, KeyError, TypeError):
                bad = True
                continue
            done[key] = row
    if bad:  # rewrite without the damaged lines, atomically
        tmp = path.with_suffix(".jsonl.tmp")
        with open(tmp, "w") as f:
            for row in done.values():
                f.write(json.dumps(row, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    return done


def _append(path: Path, row: dict) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(row, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())


def run_sweep(cfg: dict, out, executor: str = "local", workers: int | None = None, plots: bool = False,
              quiet: bool = False, log=None) -> int:
    """Run the missing points, append each as it finishes, then write ``summary.json``. Returns 0."""
    log = log or (lambda text: None if quiet else print(text, file=sys.stderr))
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    results = folder / RESULTS
    todo_all = points(cfg)
    done = read_results(results)
    todo = [(k, p) for k, p in todo_all if k not in done]
    summary_path = folder / SUMMARY
    if not todo:
        if not summary_path.exists():
            write_summary(cfg, done, todo_all, summary_path)
        log(f"sweep already complete: {len(todo_all)} points in {results}; nothing to run")
        if plots:
            _plots(summary_path, folder)
        return 0
    if done:
        log(f"resuming: {len(todo_all) - len(todo)} of {len(todo_all)} points already in {results}")
    finished = 0
    with open_executor(executor, workers) as pool:
        try:
            for _, row in as_they_finish(pool, run_point_task, [(k, p.to_json()) for k, p in todo]):
                _append(results, row)
                done[row["key"]] = row
                finished += 1
                log(f"[{finished}/{len(todo)}] {row['key']}: {row['result']['verdict']}")
        except KeyboardInterrupt:
            log(f"interrupted: {finished} new point(s) saved in {results}; run the same command to resume")
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    write_summary(cfg, done, todo_all, summary_path)
    log(f"{len(todo_all)} points: {summary_path}")
    if plots:
        _plots(summary_path, folder)
    return 0


def write_summary(cfg: dict, done: dict, todo_all, path: Path) -> None:
    rows = [done[k] for k, _ in todo_all if k in done]
    summary = {"config": cfg, "points": rows}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary, sort_keys=True, indent=1) + "\n")
    os.replace(tmp, path)


def _plots(summary_path: Path, folder: Path) -> None:
    from .plots import plot_sweep

    rows = json.loads(summary_path.read_text())["points"]
    plot_sweep(rows, folder)
