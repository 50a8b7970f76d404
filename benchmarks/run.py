"""The explorer's benchmark suite, in one command (not part of the tests).

    python benchmarks/run.py [--quick] [--workers 2] [--json benchmarks/results.json]

(a) TwoPhase N=7 (296,448 states): explorer versus a plain Python BFS over the
    same model (benchmarks/twophase_bfs.py) and their throughput ratio;
(b) TwoPhase N=8: the explorer with RM symmetry versus Spin without symmetry
    on the equivalent Promela model (benchmarks/spin_twophase.py), after
    checking that the explorer's no-symmetry count equals Spin's
    "states, stored" (``--quick`` skips that 1.7M-state explorer run);
(c) the default ``acplab check`` (rfd, default scenario, symmetry), the whole
    scenario catalogue serially and on ``--workers`` processes, and
    ``acplab.model.app.matrix.run_matrix``;
(d) bytes per stored state in the explorer's fingerprint store for TwoPhase
    N=7 and the default ACP check.

Prints a compact table and writes the numbers as JSON.  Timings are wall
clock, one run each: on a busy machine they move by 10-20%.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import acplab.model.engine.search as E  # noqa: E402  (the module whose FingerprintStore the search uses)
from acplab.model.engine.twophase import TwoPhase  # noqa: E402

import spin_twophase  # noqa: E402
import twophase_bfs  # noqa: E402


class _Recording:
    """Swap ``model.explore._Store`` for a subclass that keeps the stores it builds."""

    def __init__(self) -> None:
        self.stores: list = []

    def __enter__(self):
        kept = self.stores
        self.original = original = E.FingerprintStore

        class Recording(original):
            __slots__ = ()

            def __init__(self, *args, **kwargs) -> None:
                super().__init__(*args, **kwargs)
                kept.append(self)

        E.FingerprintStore = Recording
        return self

    def __exit__(self, *exc) -> None:
        E.FingerprintStore = self.original

    def bytes_per_state(self) -> float:
        store = self.stores[-1]
        return store.nbytes() / len(store)


def _explore_timed(model):
    t0 = time.perf_counter()
    result = E.explore(model)
    return result, time.perf_counter() - t0


# (a) ---------------------------------------------------------------------------------------------------------------

def bench_twophase7() -> dict:
    with _Recording() as rec:
        row = twophase_bfs.measure(7)
    row["store_bytes_per_state"] = rec.bytes_per_state()
    row["store_kind"] = "dict" if rec.stores[-1].index is not None else "set"
    return row


# (b) ---------------------------------------------------------------------------------------------------------------

def bench_spin(quick: bool) -> dict:
    out: dict = {"n": 8}
    if not quick:
        result, seconds = _explore_timed(TwoPhase(8))
        out["explorer_plain_states"] = result.stats.states
        out["explorer_plain_seconds"] = seconds
    result, seconds = _explore_timed(TwoPhase(8, symmetry=True))
    out["explorer_symmetry_states"] = result.stats.states
    out["explorer_symmetry_seconds"] = seconds
    out["explorer_symmetry_verdict"] = result.verdict
    why = spin_twophase.ensure_spin()
    if why:
        out["spin_skipped"] = why
        return out
    try:
        spin = spin_twophase.run_spin(8)
    except Exception as e:  # a broken toolchain: report, do not stop the suite
        out["spin_skipped"] = f"spin run failed: {e}"
        return out
    spin.pop("pan_output")
    out["spin"] = spin
    out["ratio_explorer_sym_over_spin_total"] = seconds / spin["seconds"]
    out["ratio_explorer_sym_over_spin_run"] = seconds / spin["run_seconds"]
    if "explorer_plain_states" in out:
        out["counts_match"] = out["explorer_plain_states"] == spin["states_stored"]
    return out


# (c) ---------------------------------------------------------------------------------------------------------------

def check_scenario(name: str | None) -> dict:
    """One ``acplab check`` on rfd with symmetry (top level: picklable for the process pool)."""
    from acplab.model.app.checking import acp_model

    model, scenario = acp_model("rfd", name, symmetry=True)
    result, seconds = _explore_timed(model)
    return {"scenario": scenario.name, "states": result.stats.states, "verdict": result.verdict,
            "seconds": seconds}


def bench_acp(workers: int) -> dict:
    from acplab.model.acp.scenarios import SCENARIOS

    with _Recording() as rec:
        default = check_scenario(None)
    default["store_bytes_per_state"] = rec.bytes_per_state()
    names = list(SCENARIOS)
    t0 = time.perf_counter()
    serial = [check_scenario(n) for n in names]
    serial_wall = time.perf_counter() - t0
    # Longest first (from the serial run): the pool's makespan is then close to the best split.
    order = sorted(names, key=lambda n: -next(r["seconds"] for r in serial if r["scenario"] == n))
    t0 = time.perf_counter()
    with cf.ProcessPoolExecutor(max_workers=workers) as pool:
        parallel = list(pool.map(check_scenario, order))
    parallel_wall = time.perf_counter() - t0
    by_name = {r["scenario"]: r for r in parallel}
    mismatched = [r["scenario"] for r in serial
                  if (r["states"], r["verdict"]) != (by_name[r["scenario"]]["states"], by_name[r["scenario"]]["verdict"])]
    return {
        "default": default,
        "catalogue": serial,
        "catalogue_states": sum(r["states"] for r in serial),
        "serial_seconds": serial_wall,
        "parallel_workers": workers,
        "parallel_seconds": parallel_wall,
        "parallel_speedup": serial_wall / parallel_wall,
        "parallel_mismatches": mismatched,
        "cpus": os.cpu_count(),
    }


def bench_matrix() -> dict:
    """The full variant matrix (every variant, every matrix scenario) on the local executor."""
    from acplab.model.app.matrix import run_matrix

    t0 = time.perf_counter()
    value = run_matrix()
    return {"seconds": time.perf_counter() - t0, "cells": len(value["cells"]), "states": value["states"]}


# report ------------------------------------------------------------------------------------------------------------

def report(res: dict) -> None:
    a, b, c, m = res["twophase7"], res["twophase8_spin"], res["acp"], res["matrix"]
    w = 44
    print(f"{'benchmark':{w}} {'states':>11} {'seconds':>9}  note")
    print("-" * 90)
    print(f"{'(a) TwoPhase N=7 plain Python BFS':{w}} {a['states']:>11,} {a['plain_seconds']:9.2f}")
    print(f"{'(a) TwoPhase N=7 explorer':{w}} {a['states']:>11,} {a['explorer_seconds']:9.2f}"
          f"  throughput ratio explorer/plain {a['ratio']:.2f}")
    if "explorer_plain_states" in b:
        print(f"{'(b) TwoPhase N=8 explorer, no symmetry':{w}} {b['explorer_plain_states']:>11,}"
              f" {b['explorer_plain_seconds']:9.2f}")
    print(f"{'(b) TwoPhase N=8 explorer, symmetry':{w}} {b['explorer_symmetry_states']:>11,}"
          f" {b['explorer_symmetry_seconds']:9.2f}")
    if "spin" in b:
        s = b["spin"]
        print(f"{'(b) Spin N=8, no symmetry, -DNOREDUCE':{w}} {s['states_stored']:>11,} {s['seconds']:9.2f}"
              f"  compile {s['compile_seconds']:.2f} + pan {s['run_seconds']:.2f}")
        note = {True: "counts match", False: "COUNTS DIFFER", None: "count not checked (--quick)"}
        print(f"{'':{w}} {'':>11} {'':>9}  explorer(sym)/spin time {b['ratio_explorer_sym_over_spin_total']:.3f}"
              f" (pan only {b['ratio_explorer_sym_over_spin_run']:.3f}); {note[b.get('counts_match')]}")
    else:
        print(f"{'(b) Spin':{w}} {'':>11} {'':>9}  skipped: {b['spin_skipped']}")
    d = c["default"]
    print(f"{'(c) acplab check (rfd, default, symmetry)':{w}} {d['states']:>11,} {d['seconds']:9.2f}  {d['verdict']}")
    for r in c["catalogue"]:
        print(f"{'      ' + r['scenario']:{w}} {r['states']:>11,} {r['seconds']:9.2f}  {r['verdict']}")
    print(f"{'(c) catalogue, serial':{w}} {c['catalogue_states']:>11,} {c['serial_seconds']:9.2f}")
    extra = f"; MISMATCH {c['parallel_mismatches']}" if c["parallel_mismatches"] else ""
    print(f"{'(c) catalogue, ' + str(c['parallel_workers']) + ' processes':{w}} {c['catalogue_states']:>11,}"
          f" {c['parallel_seconds']:9.2f}  speedup {c['parallel_speedup']:.2f} on {c['cpus']} CPUs{extra}")
    if "skipped" in m:
        print(f"{'(c) matrix':{w}} {'':>11} {'':>9}  {m['skipped']}")
    else:
        print(f"{'(c) matrix run_matrix()':{w}} {m.get('cells', ''):>11} {m['seconds']:9.2f}")
    print(f"{'(d) store bytes/state, TwoPhase N=7':{w}} {a['states']:>11,} {'':>9}"
          f"  {a['store_bytes_per_state']:.1f} B ({a['store_kind']})")
    print(f"{'(d) store bytes/state, default ACP check':{w}} {d['states']:>11,} {'':>9}"
          f"  {d['store_bytes_per_state']:.1f} B")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the 1.7M-state no-symmetry TwoPhase N=8 run")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results.json"))
    args = ap.parse_args()
    started = time.perf_counter()
    res = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    print("(a) TwoPhase N=7 ...", file=sys.stderr, flush=True)
    res["twophase7"] = bench_twophase7()
    print("(b) TwoPhase N=8 and Spin ...", file=sys.stderr, flush=True)
    res["twophase8_spin"] = bench_spin(args.quick)
    print("(c) ACP checks ...", file=sys.stderr, flush=True)
    res["acp"] = bench_acp(args.workers)
    res["matrix"] = bench_matrix()
    res["total_seconds"] = time.perf_counter() - started
    report(res)
    Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {args.json} ({res['total_seconds']:.0f} s)")


if __name__ == "__main__":
    main()
