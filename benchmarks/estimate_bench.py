"""How good is ``check --estimate``?  Its estimate against the measured check, case by case.

For each case: ``acplab check ARGS --estimate --json --max-seconds BUDGET``,
then the check itself on one worker (``--workers 1 --json --max-seconds
LIMIT``), one after the other (pairs alternated, one run each).  Printed per
case: estimated and measured states, their ratio; estimated CPU seconds on
one worker and the check's measured CPU seconds (the child's user+system
time, from ``getrusage``, interpreter start included), their ratio.  A check
stopped by LIMIT has only a lower bound: the line says whether the estimate
is at least the states it reached (``ok`` means ``estimate >= reached``).

    python benchmarks/estimate_bench.py [--budget 30] [--limit 900] [--json FILE] [CASE ...]

The goal (within 2x of the measured states and time) is met by a case when
both ratios lie in [0.5, 2].  Say the machine's load when you report them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

CASES = {
    "c2p2d1": ["--clients", "2", "--prompts", "2", "--disconnects", "1"],
    "c2p3": ["--clients", "2", "--prompts", "3"],
    "c3p2": ["--clients", "3", "--prompts", "2"],
    "c1p3": ["--clients", "1", "--prompts", "3"],
    #: the designer's bound: does not finish within the limit, so only a lower bound is compared
    "designer": ["--clients", "2", "--prompts", "2", "--drops", "1", "--disconnects", "1", "--set", "cancel_requests=1"],
}

#: a case's own --max-seconds (the designer's bound would otherwise take the whole --limit to learn a lower bound)
LIMITS = {"designer": 300.0}


def acplab(args: list[str]) -> tuple[dict, float, float]:
    """Run ``acplab ARGS``: (its JSON, CPU seconds of the child, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "acplab.model.app.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode == 2:
        raise SystemExit(f"acplab {' '.join(args)}: {done.stderr.strip()}")
    return json.loads(done.stdout), cpu, wall


def one_case(name: str, args: list[str], budget: float, limit: float) -> dict:
    estimate, est_cpu, _ = acplab(["check", *args, "--estimate", "--json", "--max-seconds", str(budget)])
    check, cpu, wall = acplab(["check", *args, "--json", "-q", "--workers", "1", "--max-seconds", str(limit)])
    row = {"case": name, "args": " ".join(args), "estimate_states": estimate["states"],
           "estimate_cpu_s": round(estimate["seconds"]["1"], 1), "estimate_pilot_cpu_s": round(est_cpu, 1),
           "estimate_growth": {d: g["factor"] for d, g in estimate["growth"].items()},
           "measured_states": check["states"], "measured_cpu_s": round(cpu, 1), "measured_wall_s": round(wall, 1),
           "complete": check["complete"], "estimate_memory_mb": estimate["memory_mb"],
           "measured_peak_rss_mb": check.get("peak_rss_mb"), "estimate_lower_bound": estimate["lower_bound"]}
    if check["complete"]:
        row["states_ratio"] = round(estimate["states"] / check["states"], 2)
        row["time_ratio"] = round(estimate["seconds"]["1"] / cpu, 2)
        row["within_2x"] = 0.5 <= row["states_ratio"] <= 2 and 0.5 <= row["time_ratio"] <= 2
    else:
        row["lower_bound_ok"] = estimate["states"] >= check["states"]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", default=list(CASES), help=f"of {', '.join(CASES)}")
    ap.add_argument("--budget", type=float, default=30.0, help="seconds the estimate's pilots may take")
    ap.add_argument("--limit", type=float, default=900.0, help="--max-seconds of the measured check")
    ap.add_argument("--json", dest="json_out", default=None, help="also write the rows to this file")
    a = ap.parse_args()
    rows = []
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    for name in a.cases:
        row = one_case(name, CASES[name], a.budget, LIMITS.get(name, a.limit))
        rows.append(row)
        if row["complete"]:
            print(f"{name}: states {row['estimate_states']:,} est / {row['measured_states']:,} measured = "
                  f"{row['states_ratio']}x; CPU {row['estimate_cpu_s']} s est / {row['measured_cpu_s']} s measured = "
                  f"{row['time_ratio']}x; {'within' if row['within_2x'] else 'NOT within'} 2x "
                  f"(pilots took {row['estimate_pilot_cpu_s']} s); memory {row['estimate_memory_mb']} MB est / "
                  f"{row['measured_peak_rss_mb']} MB peak RSS", flush=True)
        else:
            print(f"{name}: stopped at {row['measured_states']:,} states after {row['measured_cpu_s']} s CPU; "
                  f"estimate {row['estimate_states']:,} states, {row['estimate_cpu_s']} s: lower bound "
                  f"{'kept' if row['lower_bound_ok'] else 'BROKEN'}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
