"""What each agent behaviour the RFD allows costs the default check, in states and seconds.

    python benchmarks/behaviours.py [--repeat 3] [--json FILE] [--disconnects 1]

Starts from the default scenario's bounds with every optional behaviour off
(two clients, two identical prompts), then turns each on alone, then the
default scenario as shipped.  Reports distinct states, transitions and the
best of ``--repeat`` runs in CPU seconds and wall-clock seconds (symmetry on,
as ``acplab check``).  CPU time is the figure to compare on a shared
machine; wall clock moves with the load.  Not part of the tests.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from acplab.model.acp.model import AcpModel  # noqa: E402
from acplab.model.acp.scenarios import DEFAULT  # noqa: E402
from acplab.model.acp.spec import RFD  # noqa: E402
from acplab.model.acp.witnesses import WITNESSES  # noqa: E402
from acplab.model.engine import explore  # noqa: E402

BASE = DEFAULT.bounds._replace(busy_inserts=False, hooks=False, early_ids=False, own_work=0, slow_work=False)
VARIANTS = {
    "none (base)": {},
    "busy_inserts": {"busy_inserts": True},
    "hooks": {"hooks": True},
    "early_ids": {"early_ids": True},
    "own_work=1": {"own_work": 1},
    "slow_work": {"slow_work": True},
    "forgets=1": {"forgets": 1},
    "late_joiners=1": {"late_joiners": 1},
    "interleaved_resume": {"interleaved_resume": True},
    "retries=1": {"retries": 1},
    "busy_imports+imports=1": {"busy_imports": True, "imports": 1},
    "busy_commands": {"busy_commands": True, "contents": ("hi", "/compact")},
    "notices=1": {"notices": 1},
    "stop_reasons": {"stop_reasons": True},
    "default scenario": dict(busy_inserts=True, hooks=True, early_ids=True),
}


def measure(changes: dict, repeat: int) -> dict:
    bounds = BASE._replace(**changes)
    witnesses = [WITNESSES[w] for w in DEFAULT.witnesses] if changes == VARIANTS["default scenario"] else []
    cpu = wall = None
    for _ in range(repeat):
        model = AcpModel(RFD, bounds, witnesses, symmetry=True)
        started, clock = time.perf_counter(), time.process_time()
        result = explore(model)
        w, c = time.perf_counter() - started, time.process_time() - clock
        cpu, wall = (c, w) if cpu is None else (min(cpu, c), min(wall, w))
    return {"verdict": result.verdict, "states": result.stats.states, "transitions": result.stats.transitions,
            "cpu_seconds": round(cpu, 2), "seconds": round(wall, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", default=None)
    parser.add_argument("--disconnects", type=int, default=0, help="on top of every variant (a resume to interleave)")
    args = parser.parse_args()
    global BASE
    BASE = BASE._replace(disconnects=args.disconnects)
    rows = {}
    for name, changes in VARIANTS.items():
        rows[name] = measure(changes, args.repeat)
        r = rows[name]
        print(f"{name:18s} {r['verdict']:8s} {r['states']:>9,} states {r['transitions']:>10,} transitions "
              f"{r['cpu_seconds']:7.2f} s CPU {r['seconds']:7.2f} s wall", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
