"""Every pair of the ACP model's bounds and switches on ``rfd``, at ``--clients 1..2 --prompts 1..2``.

    python benchmarks/pairwise.py [--clients 1 2] [--prompts 1 2] [--max-states 60000] [--max-seconds 20]
                                  [--only WORD ...] [--jsonl FILE]

Each pair turns two of :data:`SETTINGS` on together (a counted bound to 1, a
switch to yes, ``retain`` and ``ordered`` to no) on the default scenario's
plain bounds (nothing else on).  One line per run: the verdict (``holds``,
``violated`` with each violated property's first sentence, or ``incomplete``
when a limit was hit: never read as holding).  A violation is either a gap in
the RFD (then a finding spec, as ``echo-after-replay``, listed in
:data:`EXPLAINED`) or a modelling artefact, fixed.  Not part of the tests: a
grid is 595 runs per bounds (2 x 1: 785 CPU s at 60,000 states / 20 s).

Measured (benchmarks/PROFILE.md, "Pairwise grid"; ``--summary`` recounts from the JSONL):

====================  =====  ===================  ==========
bounds                hold   violated (finding)   incomplete
====================  =====  ===================  ==========
1 client x 1 prompt   560    35 (35)              0
2 clients x 1 prompt  557    33 (33)              5 (limit 1,000,000 states / 200 s: state explosion)
====================  =====  ===================  ==========
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from acplab.model.acp.model import AcpModel, Bounds  # noqa: E402
from acplab.model.acp.spec import RFD  # noqa: E402
from acplab.model.engine import Limits, explore  # noqa: E402

#: every bound or switch a pair may turn on, with the value it takes
SETTINGS = {
    "drops": 1, "disconnects": 1, "cancels": 1, "cancel_requests": 1, "failures": 1, "restarts": 1, "imports": 1,
    "own_work": 1, "forgets": 1, "chunks": True, "retain": False, "retain_commands": True, "tools": True,
    "permission": True, "output": True, "ordered": False, "busy_inserts": True, "hooks": True, "early_ids": True,
    "slow_work": True, "colliding_ids": True, "stop_reasons": True, "interleaved_resume": True, "retries": 1,
    "busy_imports": True, "busy_commands": True, "late_joiners": 1, "notices": 1, "background": True, "closes": 1,
    "tool_calls": 2, "native_ids": True, "mixed_shapes": True, "load_joiners": True, "background_overlap": True,
}


#: a setting whose violations a finding spec writes up: setting -> (finding, the properties it breaks)
EXPLAINED = {"ordered": ("reordering-transport", {"StateViewMatches", "FeedFollowsHistory"}),
             "drops": ("lossy-transport", {"RequiresActionResolves", "WorkEndsWithIdle", "NoStuckState",
                                           "CancelRequestsAnswered"})}


def pairs(only=None):
    """Every pair of settings, or those that include one of ``only`` (each pair once)."""
    names = sorted(SETTINGS)
    for a, b in itertools.combinations(names, 2):
        if not only or a in only or b in only:
            yield a, b


def run(a: str, b: str, clients: int, prompts: int, limits: Limits, stop: bool = True) -> dict:
    """One pair's run, as ``acplab check`` runs it: symmetry, partial-order reduction where sound, and (``stop``,
    check's default) a stop after the level of the first violation."""
    bounds = Bounds(clients=clients, prompts=prompts, **{a: SETTINGS[a], b: SETTINGS[b]})
    if bounds.background_overlap and not bounds.background:
        bounds = bounds._replace(background=True)  # what overlaps is background work
    if (bounds.permission or bounds.background or bounds.tool_calls > 1) and not bounds.tools:
        bounds = bounds._replace(tools=True)  # a permission is asked for a tool call, background work is one
    if bounds.load_joiners and not bounds.late_joiners:
        bounds = bounds._replace(late_joiners=1)  # a late joiner is who loads
    started, cpu = time.perf_counter(), time.process_time()
    result = explore(AcpModel(RFD, bounds, symmetry=True), limits, stop_on_violation=stop)
    return {"pair": [a, b], "clients": clients, "prompts": prompts, "verdict": result.verdict,
            "states": result.stats.states, "depth": result.stats.depth, "seconds": round(time.perf_counter() - started, 2),
            "cpu": round(time.process_time() - cpu, 2), "limit": result.limit,
            "violations": {v.property.name: [len(v.path), v.sentence] for v in result.violations}}


def summary(rows: list[dict]) -> str:
    """Per bounds, how many runs hold, are violated (split by the finding that explains them) or incomplete;
    a later row of the same pair and bounds (a rerun at a higher limit) replaces an earlier one."""
    last = {(r["clients"], r["prompts"], tuple(r["pair"])): r for r in rows}
    lines = []
    for c, p in sorted({(c, p) for c, p, _pair in last}):
        mine = [r for (rc, rp, _pair), r in last.items() if (rc, rp) == (c, p)]
        counts = {v: sum(r["verdict"] == v for r in mine) for v in ("holds", "violated", "incomplete")}
        explained = sum(r["verdict"] == "violated" and finding(r) is not None for r in mine)
        lines.append(f"c{c} p{p}: {len(mine)} runs: {counts['holds']} hold, {counts['violated']} violated "
                     f"({explained} by a finding), {counts['incomplete']} incomplete")
        for r in mine:
            if r["verdict"] == "incomplete" or r["verdict"] == "violated" and finding(r) is None:
                lines.append(f"  {'+'.join(r['pair'])}: {r['verdict']} at {r['states']:,} states, depth "
                             f"{r.get('depth', '?')} ({r.get('limit') or ', '.join(r['violations'])})")
    return "\n".join(lines)


def finding(row: dict) -> str | None:
    """The finding spec a violated run is an instance of, if every property it violates is that finding's."""
    for setting, (name, properties) in EXPLAINED.items():
        if setting in row["pair"] and row["violations"] and set(row["violations"]) <= properties:
            return name
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--prompts", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--max-states", type=int, default=60000)
    parser.add_argument("--max-seconds", type=float, default=20.0)
    parser.add_argument("--only", nargs="+", default=None, help="only the pairs that include one of these settings")
    parser.add_argument("--jsonl", default=None, help="append one JSON line per run to this file")
    parser.add_argument("--alone", action="store_true", help="each setting alone (with --only: that one), no pairs")
    parser.add_argument("--pairs", nargs="+", default=None, metavar="A+B", help="only these pairs")
    parser.add_argument("--continue", dest="stop", action="store_false",
                        help="explore on past the first violation (acplab check --continue)")
    parser.add_argument("--summary", nargs="+", default=None, metavar="JSONL",
                        help="run nothing: count the verdicts recorded in these files, per bounds")
    args = parser.parse_args()
    if args.summary:
        print(summary([json.loads(line) for name in args.summary for line in open(name) if line.strip()]))
        return
    unknown = [p for p in args.pairs or () if len(p.split("+")) != 2 or not set(p.split("+")) <= set(SETTINGS)]
    if unknown:
        print(f"pairwise.py: error: not a pair of settings: {', '.join(unknown)}", file=sys.stderr)
        sys.exit(2)
    limits = Limits(max_states=args.max_states, max_seconds=args.max_seconds)
    out = open(args.jsonl, "a") if args.jsonl else None
    for clients, prompts in itertools.product(args.clients, args.prompts):
        runs = [(a, a) for a in sorted(SETTINGS) if not args.only or a in args.only] if args.alone else pairs(args.only)
        if args.pairs:
            runs = [tuple(p.split("+")) for p in args.pairs]
        for a, b in runs:
            row = run(a, b, clients, prompts, limits, args.stop)
            said = "; ".join(f"{k} ({n} steps): {s}" for k, (n, s) in row["violations"].items())
            print(f"c{clients} p{prompts} {a}+{b}: {row['verdict']} {row['states']:,} states "
                  f"{row['seconds']} s {said}", flush=True)
            if out is not None:
                out.write(json.dumps(row) + "\n")
                out.flush()


if __name__ == "__main__":
    main()
