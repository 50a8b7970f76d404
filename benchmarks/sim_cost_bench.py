"""How honest is the simulator's cost guard?  Its estimate (:mod:`acplab.simulations.cost`) against measured sessions.

Each case runs ``--sessions`` sessions (default 1) of the default
parameters at the given clients x prompts, timed in CPU seconds of this
process (``time.process_time``: on a shared machine wall time follows the
load), and prints estimated / measured CPU seconds and the wire messages
(the model's ``k * c * P``).  The goal: every ratio in [1/3, 3].

    python benchmarks/sim_cost_bench.py [--sessions N] [--json FILE] [CxP[@DURATION_S] ...]

The default cases span the model's terms: few and many clients, few and
many prompts, a queue longer than the retry timeout (32 clients), and
prompts past what the simulated duration lets through (2 x 300; 32 x 1000
for 100 simulated seconds, a sixth of the brief's "absurd" request's
session).  Say the machine's load when you report the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from acplab.simulations.cost import prompts_through
from acplab.simulations.params import SimParams
from acplab.simulations.runtime import build_model, run_session

CASES = ("2x3", "2x30", "2x300", "8x3", "8x10", "16x3", "16x10", "32x1", "32x3", "32x1000@100")


def measure(clients: int, prompts: int, sessions: int, duration: float = 600.0) -> dict:
    p = SimParams(clients=clients, prompts=prompts, sessions=sessions, duration_s=duration).validate()
    model = build_model(p)
    began = time.process_time()
    messages = 0
    for k in range(sessions):
        messages += run_session(p, k, model).metrics.wire_messages
    cpu = time.process_time() - began
    estimate = p.estimated_seconds()
    return {"case": f"{clients}x{prompts}" + ("" if duration == 600.0 else f"@{duration:g}"), "sessions": sessions, "estimate_cpu_s": round(estimate, 3),
            "measured_cpu_s": round(cpu, 3), "ratio": round(estimate / cpu, 2), "messages": messages,
            "prompts_through": round(prompts_through(p)), "within_3x": 1 / 3 <= estimate / cpu <= 3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", default=list(CASES), help="CLIENTSxPROMPTS")
    ap.add_argument("--sessions", type=int, default=1)
    ap.add_argument("--json", dest="json_out", default=None)
    a = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    rows = []
    for case in a.cases:
        shape, _, duration = case.partition("@")
        clients, prompts = map(int, shape.split("x"))
        row = measure(clients, prompts, a.sessions, float(duration or 600.0))
        rows.append(row)
        print(f"{row['case']}: estimate {row['estimate_cpu_s']} s / measured {row['measured_cpu_s']} s = "
              f"{row['ratio']}x ({row['messages']:,} messages, {row['prompts_through']} prompts through)"
              + ("" if row["within_3x"] else "  NOT within 3x"), flush=True)
    absurd = SimParams(clients=32, prompts=1000, sessions=500).validate()
    print(f"simulate --clients 32 --prompts 1000 --sessions 500: estimated {absurd.estimated_seconds():,.0f} CPU s")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
