"""The whole stack (TwoPhase's encoding plus the explorer) against a hand-written BFS with its own encoding.

    python benchmarks/twophase_whole.py [N] [--runs 5]

The hand-written BFS is what a user would write in an afternoon: flat tuples
``(rm, done, tmPrepared bits, Prepared bits, commit, abort)``, successors
inline, a set of seen states and a deque, no invariant checked.  The
explorer runs ``explore(TwoPhase(N))`` as is: fingerprints, parent links,
the TypeOK and Consistent invariants and the two witnesses on every state.
The two alternate ``--runs`` times in one process (A B A B ...) and the
ratio is taken pair by pair (hand-written seconds / explorer seconds,
higher is better; 1.0 means as fast); the median pair is reported.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acplab.model.engine import explore  # noqa: E402
from acplab.model.engine.twophase import TwoPhase  # noqa: E402

WORKING, PREPARED, COMMITTED, ABORTED = range(4)


def hand_written_bfs(n: int) -> int:
    """TwoPhase.tla's Next by hand over flat tuples; returns the number of distinct states."""
    init = ((WORKING,) * n, 0, 0, 0, 0, 0)
    everyone = (1 << n) - 1
    seen, queue = {init}, deque([init])
    while queue:
        rm, done, tp, mp, commit, abort = queue.popleft()
        out = []
        if not done:
            if tp == everyone:
                out.append((rm, 1, tp, mp, 1, abort))
            out.append((rm, 1, tp, mp, commit, 1))
        for i in range(n):
            bit = 1 << i
            if not done and mp & bit:
                out.append((rm, done, tp | bit, mp, commit, abort))
            if rm[i] == WORKING:
                out.append((rm[:i] + (PREPARED,) + rm[i + 1:], done, tp, mp | bit, commit, abort))
                out.append((rm[:i] + (ABORTED,) + rm[i + 1:], done, tp, mp, commit, abort))
            if commit:
                out.append((rm[:i] + (COMMITTED,) + rm[i + 1:], done, tp, mp, commit, abort))
            if abort:
                out.append((rm[:i] + (ABORTED,) + rm[i + 1:], done, tp, mp, commit, abort))
        for s in out:
            if s not in seen:
                seen.add(s)
                queue.append(s)
    return len(seen)


def measure(n: int = 7, runs: int = 5) -> dict:
    pairs = []
    for _ in range(runs):
        t0 = time.perf_counter()
        hand = hand_written_bfs(n)
        t1 = time.perf_counter()
        result = explore(TwoPhase(n))
        t2 = time.perf_counter()
        assert result.stats.states == hand and result.verdict == "holds", (hand, result.stats.states)
        pairs.append((t1 - t0, t2 - t1))
    ratios = [h / e for h, e in pairs]
    k = ratios.index(statistics.median_low(ratios))
    return {"n": n, "states": hand, "runs": runs, "hand_seconds": pairs[k][0], "explorer_seconds": pairs[k][1],
            "ratio": ratios[k], "ratios": ratios}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="?", type=int, default=7)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    r = measure(args.n, args.runs)
    print(f"TwoPhase N={r['n']}: {r['states']:,} states, median of {r['runs']} alternating pairs")
    print(f"  hand-written BFS, own encoding : {r['hand_seconds']:.2f} s")
    print(f"  explore(TwoPhase(N))           : {r['explorer_seconds']:.2f} s")
    print(f"  ratio (goal >= 0.7)            : {r['ratio']:.2f}   all pairs: "
          + " ".join(f"{x:.2f}" for x in r["ratios"]))


if __name__ == "__main__":
    main()
