"""How fast is the first counterexample?  ``check`` (stops at the first violation) against ``--continue``.

For every mutant of :data:`acplab.model.acp.spec.MUTANTS`, on the first
scenario :data:`acplab.model.acp.killers.KILLERS` names for it (else the
default), three whole ``acplab check --json -q --workers 1`` processes, one
after the other (CPU seconds: the child's user+system time, interpreter
start included, from ``getrusage``; see :func:`estimate_bench.acplab`):

``first``     the default: stops after the depth ``d`` of its first violation;
``continue``  ``--continue --max-seconds LIMIT``: every violated property (a
              run stopped by LIMIT gives a lower bound, marked ``>=``);
``reach``     ``--no-por --continue --max-depth d+1``: the unreduced search just
              reaching depth ``d``, the least a breadth-first search does to
              know the shortest counterexample (the goal: ``first`` under 2x it).

Then the designer's case of issue 27, ``client-matches-by-order --scenario
lost-response --clients 3`` (goal: under 30 s), first alone, and with
``--continue`` too unless ``--quick``.

    python benchmarks/first_violation.py [--limit 60] [--quick] [--json FILE] [SPEC ...]

Say the machine's load (printed before and after) when you report the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from estimate_bench import acplab  # noqa: E402  (one way to time a check process)

DESIGNER = ["--spec", "client-matches-by-order", "--scenario", "lost-response", "--clients", "3"]


def mutant_cases() -> dict[str, list[str]]:
    """Each mutant with the first scenario that kills it (``acplab properties``' killed_by), judged by rules and
    goals when what it kills there is a goal."""
    from acplab.model.acp.goals import GOALS
    from acplab.model.acp.killers import KILLERS
    from acplab.model.acp.spec import MUTANTS

    goals = {g.name for g in GOALS}
    where: dict[str, list[str]] = {}
    for prop, pairs in KILLERS.items():
        for spec, scenario in pairs:
            where.setdefault(spec, ["--scenario", scenario] + (["--properties", "all"] if prop in goals else []))
    return {name: ["--spec", name, *where.get(name, ["--scenario", "default"])] for name in MUTANTS}


def first_length(summary: dict) -> int | None:
    lengths = [v["trace_length"] for v in summary["violations"] if v["trace_length"] is not None]
    return min(lengths) if lengths else None


def one_case(name: str, args: list[str], limit: float, whole: bool = True) -> dict:
    common = [*args, "--json", "-q", "--workers", "1"]
    first, cpu, _ = acplab(["check", *common])
    row = {"case": name, "args": " ".join(args), "verdict": first["verdict"], "first_cpu_s": round(cpu, 2),
           "first_states": first["states"], "depth": first_length(first),
           "stopped": first.get("stopped_at_first_violation", False)}
    if whole:
        rest, cpu_on, _ = acplab(["check", *common, "--continue", "--max-seconds", str(limit)])
        row.update(continue_cpu_s=round(cpu_on, 2), continue_states=rest["states"],
                   continue_complete=not rest.get("limit"),
                   continue_violated=len([v for v in rest["violations"] if v["trace_length"] is not None]),
                   ratio=round(cpu_on / cpu, 1) if cpu else None)
    if row["depth"] is not None and name != "designer":
        _, cpu_reach, _ = acplab(["check", *common, "--no-por", "--continue", "--max-depth", str(row["depth"] + 1)])
        row.update(reach_cpu_s=round(cpu_reach, 2), over_reach=round(cpu / cpu_reach, 2) if cpu_reach else None)
    return row


def show(row: dict) -> None:
    line = f"{row['case']:<40} {row['verdict']:<9} d={row['depth']!s:<3} first {row['first_cpu_s']:7.2f} s"
    if "continue_cpu_s" in row:
        bound = "" if row["continue_complete"] else ">="
        line += f"  continue {bound}{row['continue_cpu_s']:7.2f} s ({bound}{row['ratio']}x, " \
                f"{row['continue_violated']} violated)"
    if "reach_cpu_s" in row:
        line += f"  reach {row['reach_cpu_s']:6.2f} s (first/reach {row['over_reach']})"
    print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", help="mutants to measure (default: every one)")
    ap.add_argument("--limit", type=float, default=60.0, help="--max-seconds of each --continue run")
    ap.add_argument("--quick", action="store_true", help="the designer's case without its --continue run")
    ap.add_argument("--json", dest="json_out", help="write the rows to this file")
    a = ap.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
    cases = mutant_cases()
    rows = []
    for name in a.specs or cases:
        rows.append(one_case(name, cases[name], a.limit))
        show(rows[-1])
    rows.append(one_case("designer", DESIGNER, 900.0, whole=not a.quick))
    show(rows[-1])
    timed = [r for r in rows if "ratio" in r and r["case"] != "designer" and r["ratio"]]
    if timed:
        total_first = sum(r["first_cpu_s"] for r in timed)
        total_on = sum(r["continue_cpu_s"] for r in timed)
        print(f"all mutants: first {total_first:.1f} s, continue {total_on:.1f} s ({total_on / total_first:.1f}x)")
    over = [r["over_reach"] for r in rows if r.get("over_reach")]
    if over:
        print(f"first/reach: at most {max(over)}, {sum(x < 2 for x in over)} of {len(over)} under 2x")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
