"""Phase B prototypes, measured: what a cheaper state would buy (the model itself is not changed here).

    python benchmarks/phase_b.py [--states N]

1. The symmetry fingerprint without rebuilding the World: the permuted
   agent, clients, links and monitor bookkeeping are hashed as plain tuples.
   A NamedTuple hashes exactly like the plain tuple of its fields, so every
   fingerprint is the *same int* as ``acp/symmetry.py``'s (checked on every
   state below), and so are the state counts.
2. ``_replace`` against positional construction, on the hot path's types
   (see ``profile_acp.py`` for the per-call figures).

Each prototype is swapped into the model of the reduced check with one cut
(``--clients 2 --prompts 2 --disconnects 1``), explored on one process up to
``--states`` states, and timed against the model as it is (alternating, the
median of three pairs).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acplab.model.acp.monitors import Monitor  # noqa: E402
from acplab.model.acp.reduction import reduce  # noqa: E402
from acplab.model.app.checking import acp_model  # noqa: E402
from acplab.model.engine import Limits  # noqa: E402
from acplab.model.engine.parallel import explore_levels  # noqa: E402


def flat_canonical_hasher(model):
    """The symmetry fingerprint of ``acp/symmetry.py``, same ints, without building NamedTuples."""
    renaming = [(k, m) for k, m in enumerate(model.monitors) if type(m).rename_clients is not Monitor.rename_clients]
    n = model.bounds.clients
    identity = list(range(n))

    def fingerprint(w) -> int:
        clients, links, agent = w.clients, w.links, w.agent
        attached = agent.attached
        keys = [hash((clients[c], links[c], attached[c])) for c in identity]
        if n == 2:
            order = identity if keys[0] <= keys[1] else [1, 0]
        else:
            order = sorted(identity, key=keys.__getitem__)
        if order == identity:
            return hash(w)
        new = {old: i for i, old in enumerate(order)}
        history = tuple(e if e[5] is None else (*e[:5], (new[e[5][0]], *e[5][1:]), e[6]) for e in agent.history)
        reqs = tuple((new[r[0]], *r[1:10], tuple(sorted(new[c] for c in r[10]))) for r in agent.reqs)
        work = agent.work
        if work is not None and work[5] is not None:
            work = (*work[:5], new[work[5]], *work[6:])
        flat_agent = (history, agent[1], reqs, work, *agent[4:6], tuple(attached[c] for c in order), *agent[7:])
        mon = list(w.mon)
        for k, m in renaming:
            mon[k] = m.rename_clients(mon[k], new)
        return hash((flat_agent, tuple(clients[c] for c in order), tuple(links[c] for c in order), w.budget,
                     tuple(mon), w.violation))

    return fingerprint


def run(states: int, swap) -> tuple[float, int]:
    model, _ = acp_model("rfd", None, symmetry=True, disconnects=1)
    reduce(model)
    if swap is not None:
        model.fingerprint = swap(model)
    t0 = time.perf_counter()
    result = explore_levels(model, Limits(max_states=states), workers=1)
    return time.perf_counter() - t0, result.stats.states


def same_fingerprints(states: int) -> int:
    """Every state of a bounded run gets the same fingerprint from both (returns how many were compared)."""
    model, _ = acp_model("rfd", None, symmetry=True, disconnects=1)
    flat = flat_canonical_hasher(model)
    frontier, seen = model.init_states(), 0
    while frontier and seen < states:
        nxt = []
        for w in frontier:
            for _, s, _ in model.successors(w):
                assert flat(s) == model.fingerprint(s)
                seen += 1
                nxt.append(s)
        frontier = nxt[: states // 10]
    return seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=100_000)
    args = ap.parse_args()
    print(f"flat fingerprint equals the symmetry fingerprint on {same_fingerprints(20_000):,} states")
    pairs = []
    for _ in range(3):
        base, n1 = run(args.states, None)
        flat, n2 = run(args.states, flat_canonical_hasher)
        assert n1 == n2, (n1, n2)
        pairs.append((base, flat))
    base, flat = sorted(pairs, key=lambda p: p[0] / p[1])[1]
    print(f"reduced check with one cut, {n1:,} states, one process:")
    print(f"  symmetry fingerprint as is      : {base:.2f} s")
    print(f"  flat fingerprint (same ints)    : {flat:.2f} s   speed-up {base / flat:.2f}x "
          f"(pairs: {' '.join(f'{b / f:.2f}' for b, f in pairs)})")


if __name__ == "__main__":
    main()
