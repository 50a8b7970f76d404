"""The full variant matrix's wall time: every row, every goal and rule, on the shared executor.

    python benchmarks/matrix_bench.py [--workers 2] [--repeat 3] [--json benchmarks/matrix.json]

Runs ``acplab.model.app.matrix.run_matrix()`` (what ``acplab matrix`` and
``acplab figures`` run: rfd, the variants, the bridge rows) ``--repeat`` times
on ``--workers`` local processes, and reports the states, the runs (tasks
after merging identical models), the run count without merging, and the
wall seconds of each repeat with the median.  Goal: under 60 s on 2 cores.
On a shared machine the load of other jobs moves the figure by a factor of
up to two; the load average is recorded with it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "matrix.json"))
    args = ap.parse_args()

    from acplab.model.app import matrix as mx

    rows = mx.matrix_rows(mx.variant_names(), True)
    tasks, _ = mx.plan(rows, None, None, False)
    unmerged = sum(1 if r.bridge else len(mx.MATRIX_RUNS) for r in rows)
    walls, result = [], None
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = mx.run_matrix(None, None, args.workers, None, None, "local")
        walls.append(time.perf_counter() - started)
    out = {
        "python": platform.python_version(), "cpus": os.cpu_count(), "workers": args.workers,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "rows": len(rows), "goals": len(result["goals"]),
        "rules": len(result["properties"]) + len(result["bridge_properties"]),
        "runs": len(tasks), "runs_without_merging": unmerged, "states": result["states"],
        "seconds": [round(w, 1) for w in walls], "median_seconds": round(statistics.median(walls), 1),
    }
    print(f"matrix: {out['rows']} rows x {out['goals']} goals and {out['rules']} rules; {out['runs']} runs "
          f"({out['runs_without_merging']} without merging identical models), {out['states']:,} states")
    print(f"wall seconds on {args.workers} processes: {out['seconds']} (median {out['median_seconds']}); "
          f"load average {out['load_average']}")
    Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
