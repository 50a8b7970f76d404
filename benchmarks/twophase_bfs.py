"""Explorer versus the simplest Python BFS over the same TwoPhase model, in one process.

    python benchmarks/twophase_bfs.py [N]

Prints distinct states per second for both and their ratio (explorer / plain).
The plain BFS keeps a dict of seen states and a deque: no fingerprints, no
parent links, no invariants.  Both use the same ``successors`` function.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acplab.model.engine import explore  # noqa: E402
from acplab.model.engine.twophase import TwoPhase  # noqa: E402


def plain_bfs(model) -> int:
    seen = {}
    queue = deque()
    for s in model.init_states():
        seen[s] = None
        queue.append(s)
    successors = model.successors
    while queue:
        for _, nxt in successors(queue.popleft()):
            if nxt not in seen:
                seen[nxt] = None
                queue.append(nxt)
    return len(seen)


def measure(n: int) -> dict:
    model = TwoPhase(n)
    t0 = time.perf_counter()
    plain_states = plain_bfs(model)
    plain_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = explore(model)
    explorer_s = time.perf_counter() - t0
    assert result.stats.states == plain_states, (result.stats.states, plain_states)
    return {
        "n": n,
        "states": plain_states,
        "plain_seconds": plain_s,
        "explorer_seconds": explorer_s,
        "plain_states_per_s": plain_states / plain_s,
        "explorer_states_per_s": plain_states / explorer_s,
        "ratio": plain_s / explorer_s,
    }


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    r = measure(n)
    print(f"TwoPhase N={r['n']}: {r['states']:,} states")
    print(f"  plain BFS : {r['plain_seconds']:.2f} s  {r['plain_states_per_s']:,.0f} states/s")
    print(f"  explorer  : {r['explorer_seconds']:.2f} s  {r['explorer_states_per_s']:,.0f} states/s")
    print(f"  ratio explorer/plain (throughput): {r['ratio']:.2f}")


if __name__ == "__main__":
    main()
