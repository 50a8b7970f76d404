"""The scale goals, each figure beside its goal, in one command (not part of the tests).

    python benchmarks/run.py [--quick] [--json benchmarks/results.json]
    python benchmarks/run.py --eventually   # only the checks below, on 1 and 2 workers: their key in results.json

Every ACP figure is a whole ``acplab check ... --json`` process, timed from
outside (start-up included), one run each; the states, the search's own
seconds and the peak memory (the sum over the processes that searched) come
from its JSON.  ``--quick`` leaves out the longest checks (three prompts,
failure-outcome with two clients, the million-state memory run and the
500k-state check on 1 and 2 workers; the speed-up is then taken on the
reduced check with one cut, 158k states).  The machine's load average is recorded before and after: the
reference machine is shared, so timings move by 20-40% between runs.

Goals, on the 2-core machine:

* ``--clients 2 --prompts 2 --disconnects 1`` complete in under 60 s;
* ``--clients 2 --prompts 3`` complete in under 120 s;
* ``--scenario failure-outcome --clients 2 --prompts 2`` complete;
* the default check under 4 s;
* peak RSS under 300 B per explored state at 1M states;
* ``--workers 2`` at least 1.6x faster than 1 worker on a 500k-state check;
* TwoPhase N=7, whole stack against a hand-written BFS: ratio at least 0.7;
* simulator at most 3x bare SimPy (with the split of that ratio: the simulator
  without monitors, and ``model.step`` alone with and without them).

``--eventually`` (every core for checks with ``eventually``
properties, which are all ACP checks): ``--clients 2 --prompts 3`` and
``--clients 2 --prompts 2 --disconnects 1`` on 1 and 2 workers, alternating,
each with its wall time, the workers' CPU seconds and peak RSS per state
(goals: under 300 B/state; 2 workers at least 1.6x faster than 1).  It
replaces only the ``eventually_on_workers`` key of the JSON file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import sim_bench  # noqa: E402
import twophase_whole  # noqa: E402

BIG = ["--clients", "2", "--prompts", "2", "--disconnects", "1"]
#: the memory figure is taken at a million states: three prompts, unreduced, stopped there (it has 5M+ states)
MILLION = ["--clients", "2", "--prompts", "3", "--no-por", "--max-states", "1000000"]
#: the workers' speed-up is taken on a complete check of about 500k states (unreduced, one cut: 468k)
HALF_MILLION = [*BIG, "--no-por"]


def check(*args: str) -> dict:
    """One ``acplab check --json -q`` process: its JSON plus the wall time around it."""
    cmd = [sys.executable, "-m", "acplab.model.app.cli", "check", "--json", "-q", *args]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1, 3):
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    out = json.loads(proc.stdout)
    keep = ("verdict", "complete", "states", "transitions", "depth", "seconds", "workers", "reduced",
            "peak_rss_mb", "worker_cpu_seconds", "note")
    row = {k: out[k] for k in keep if k in out}
    row.update(args=" ".join(args), wall_seconds=round(wall, 2))
    if "peak_rss_mb" in out:
        row["bytes_per_state"] = round(out["peak_rss_mb"] * 2**20 / max(out["states"], 1), 1)
    print(f"  {row['args'] or '(default)'}: {row['verdict']}, {row['states']:,} states, {wall:.1f} s",
          file=sys.stderr, flush=True)
    return row


def measure(quick: bool) -> dict:
    res: dict = {"python": platform.python_version(), "cpus": os.cpu_count(), "load_before": os.getloadavg()}
    res["default"] = check()
    res["disconnects"] = {w: check(*BIG, "--workers", w) for w in ("1", "2")}
    if not quick:
        res["prompts3"] = check("--clients", "2", "--prompts", "3")
        res["failure_outcome"] = check("--scenario", "failure-outcome", "--clients", "2", "--prompts", "2")
        res["memory"] = {w: check(*MILLION, "--workers", w) for w in ("1", "2")}
        res["half_million"] = {w: check(*HALF_MILLION, "--workers", w) for w in ("1", "2")}
    print("  TwoPhase N=7 ...", file=sys.stderr, flush=True)
    res["twophase7"] = twophase_whole.measure(7, runs=5)
    print("  simulator ...", file=sys.stderr, flush=True)
    res["simulator"] = simulator()
    res["load_after"] = os.getloadavg()
    return res


EVENTUALLY = {"prompts3": ["--clients", "2", "--prompts", "3"], "disconnects": BIG}


def measure_eventually(rounds: int) -> dict:
    """The two checks on 1 and 2 workers, ``rounds`` times, alternating (the load moves between runs)."""
    res: dict = {"load_before": os.getloadavg(), "runs": {name: {"1": [], "2": []} for name in EVENTUALLY}}
    for _ in range(rounds):
        for name, args in EVENTUALLY.items():
            for w in ("1", "2"):
                row = check(*args, "--workers", w)
                row["load"] = os.getloadavg()
                res["runs"][name][w].append(row)
    res["load_after"] = os.getloadavg()
    return res


def eventually_goals(res: dict) -> list[tuple[str, str, str, bool]]:
    rows = []
    for name, by in res["runs"].items():
        one, two = by["1"], by["2"]
        for w, runs in by.items():
            for r in runs:
                cpu = " + ".join(f"{c:.1f}" for c in r["worker_cpu_seconds"])
                rows.append((f"{name}, {w} worker(s): peak RSS per state",
                             f"{r['bytes_per_state']:.0f} B ({r['peak_rss_mb']:.0f} MB, {r['states']:,} states, "
                             f"{r['wall_seconds']:.1f} s, CPU {cpu} s, load {r['load'][0]:.1f})", "< 300 B",
                             r["bytes_per_state"] < 300))
        wall = min(r["wall_seconds"] for r in one) / min(r["wall_seconds"] for r in two)
        cpu = min(r["worker_cpu_seconds"][0] for r in one) / min(max(r["worker_cpu_seconds"]) for r in two)
        rows.append((f"{name}: --workers 2 vs 1, wall (best of each)", f"{wall:.2f}x", ">= 1.6x", wall >= 1.6))
        rows.append((f"{name}: the same by CPU (1 worker / busiest of 2)", f"{cpu:.2f}x", ">= 1.6x", cpu >= 1.6))
    return rows


def simulator() -> dict:
    from acplab.simulations.params import SimParams

    p = SimParams(clients=3, sessions=300, prompts=3, drop=0.02, disconnect_rate=0.05, seed=1).validate()
    sim_s, messages, steps, shape = sim_bench.simulator(p)
    bare_s = sim_bench.bare(shape)
    return {"sessions": p.sessions, "messages": messages, "seconds": sim_s, "bare_seconds": bare_s,
            "ratio": sim_s / bare_s, "split": sim_bench.split(p, bare_s)}


def goals(res: dict) -> list[tuple[str, str, str, bool | None]]:
    """``(figure, measured, goal, met)`` rows; met is None where the run was skipped."""
    rows = []
    d2, d1 = res["disconnects"]["2"], res["disconnects"]["1"]
    rows.append(("--disconnects 1 (2 clients, 2 prompts), complete", f"{d2['wall_seconds']:.1f} s, "
                 f"{d2['states']:,} states, {d2['verdict']}", "< 60 s", d2["complete"] and d2["wall_seconds"] < 60))
    if "prompts3" in res:
        p = res["prompts3"]
        rows.append(("--clients 2 --prompts 3, complete", f"{p['wall_seconds']:.1f} s, {p['states']:,} states, "
                     f"{p['verdict']}", "< 120 s", p["complete"] and p["wall_seconds"] < 120))
        f = res["failure_outcome"]
        rows.append(("failure-outcome --clients 2 --prompts 2", f"{f['verdict']}, {f['states']:,} states, "
                     f"{f['wall_seconds']:.1f} s", "complete", f["complete"]))
    d = res["default"]
    rows.append(("default check (process wall)", f"{d['wall_seconds']:.2f} s ({d['seconds']:.2f} s searching), "
                 f"{d['states']:,} states", "< 4 s", d["wall_seconds"] < 4))
    if "memory" in res:
        for w, m in res["memory"].items():
            rows.append((f"peak RSS per state at 1M states, {w} worker(s)", f"{m['bytes_per_state']:.0f} B "
                         f"({m['peak_rss_mb']:.0f} MB, {m['states']:,} states)", "< 300 B",
                         m["bytes_per_state"] < 300))
    h1, h2 = (res["half_million"]["1"], res["half_million"]["2"]) if "half_million" in res else (d1, d2)
    speed = h1["wall_seconds"] / h2["wall_seconds"]
    cpu = h1["worker_cpu_seconds"][0] / max(h2["worker_cpu_seconds"])
    res["workers_speedup"], res["workers_cpu_speedup"] = speed, cpu
    rows.append((f"--workers 2 vs 1 on {h1['states']:,} states ({h1['args'].replace(' --workers 1', '')}), wall",
                 f"{speed:.2f}x ({h1['wall_seconds']:.1f} s -> {h2['wall_seconds']:.1f} s)", ">= 1.6x", speed >= 1.6))
    rows.append(("  the same by CPU: 1 worker / busiest of 2", f"{cpu:.2f}x (CPU s {h1['worker_cpu_seconds'][0]:.1f} "
                 f"-> {' + '.join(f'{c:.1f}' for c in h2['worker_cpu_seconds'])})", ">= 1.6x", cpu >= 1.6))
    t = res["twophase7"]
    rows.append(("TwoPhase N=7 whole stack / hand-written BFS", f"{t['ratio']:.2f} (median of {t['runs']} pairs)",
                 ">= 0.7", t["ratio"] >= 0.7))
    s = res["simulator"]
    rows.append(("simulator / bare SimPy", f"{s['ratio']:.1f}x", "<= 3x", s["ratio"] <= 3))
    for name, value in s.get("split", {}).items():
        rows.append((f"  {name}", f"{value:.1f}x", "", None))
    return rows


def report(res: dict, rows=None) -> None:
    rows = goals(res) if rows is None else rows
    w = max(len(r[0]) for r in rows)
    m = max(len(r[1]) for r in rows)
    print(f"{'figure':{w}}  {'measured':{m}}  {'goal':8}  met")
    print("-" * (w + m + 18))
    for name, measured, goal, met in rows:
        print(f"{name:{w}}  {measured:{m}}  {goal:8}  {'' if met is None else 'yes' if met else 'NO'}")
    print(f"load average before {res['load_before'][0]:.1f}, after {res['load_after'][0]:.1f} "
          f"on {res['cpus']} CPUs; one run each")
    res["goals"] = [{"figure": n, "measured": x, "goal": g, "met": None if ok is None else bool(ok)}
                    for n, x, g, ok in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the longest checks (see above)")
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results.json"))
    ap.add_argument("--eventually", type=int, nargs="?", const=1, metavar="ROUNDS",
                    help="only the eventually checks on 1 and 2 workers (ROUNDS alternating rounds, default 1)")
    args = ap.parse_args()
    started = time.perf_counter()
    if args.eventually:
        res = measure_eventually(args.eventually)
        report({"load_before": res["load_before"], "load_after": res["load_after"], "cpus": os.cpu_count()},
               eventually_goals(res))
        res["goals"] = [{"figure": n, "measured": x, "goal": g, "met": bool(ok)} for n, x, g, ok in
                        eventually_goals(res)]
        path = Path(args.json)
        whole = json.loads(path.read_text()) if path.exists() else {}
        whole["eventually_on_workers"] = res
        path.write_text(json.dumps(whole, indent=2) + "\n")
        print(f"wrote {args.json} (eventually_on_workers, {time.perf_counter() - started:.0f} s)")
        return
    res = measure(args.quick)
    report(res)
    res["total_seconds"] = time.perf_counter() - started
    Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {args.json} ({res['total_seconds']:.0f} s)")


if __name__ == "__main__":
    main()
