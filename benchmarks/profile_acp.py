"""Where the ACP model spends its time per state, and a NamedTuple micro-benchmark.

    python benchmarks/profile_acp.py [--top 30]

1. cProfile of the reduced check with one cut (``--clients 2 --prompts 2
   --disconnects 1``, one process, the first ``--states`` states): own time
   grouped (model steps, monitors, symmetry fingerprint, NamedTuple
   construction, engine), then the top functions.
2. ``_replace`` versus direct construction for the model's NamedTuples
   (``World``, ``Link``, ``Agent``, ``Client``, ``Budget``): nanoseconds per
   call, with ``timeit`` (best of 5).
3. Hashing a ``World``: what the explorer pays per successor for a fingerprint.

Findings are written up in benchmarks/PROFILE.md.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acplab.model.app.checking import acp_model  # noqa: E402


#: where a function's time is counted: the first group whose marker is in its file:function name
GROUPS = (
    ("fingerprint (symmetry)", ("symmetry.py", "rename_clients", "monitors.py:144", "monitors.py:267",
                                "monitors.py:306", "monitors.py:386")),
    ("monitors", ("monitors.py", "_monitor")),
    ("NamedTuple _replace/_make", ("_replace", "_make", "__new__")),
    ("engine", ("engine/",)),
    ("model steps", ("acp/",)),
)


def profile(top: int, states: int) -> None:
    """cProfile of the reduced check with one cut (one process, ``states`` states), grouped."""
    from acplab.model.acp.reduction import reduce
    from acplab.model.engine import Limits
    from acplab.model.engine import explore

    def model():
        m, _ = acp_model("rfd", None, symmetry=True, disconnects=1)
        reduce(m)
        return m

    t0 = time.perf_counter()
    plain = explore(model(), Limits(max_states=states))
    base = time.perf_counter() - t0
    prof = cProfile.Profile()
    prof.enable()
    result = explore(model(), Limits(max_states=states))
    prof.disable()
    print(f"reduced check with one cut: {result.stats.states:,} states, {result.stats.transitions:,} transitions, "
          f"{base:.2f} s unprofiled ({result.stats.states / base:,.0f} states/s, "
          f"{1e6 * base / result.stats.states:.0f} us/state)")
    assert plain.stats.states == result.stats.states
    stats = pstats.Stats(prof)
    total = sum(v[2] for v in stats.stats.values())
    own: dict[str, float] = {}
    for (file, line, name), (_cc, _nc, tt, _ct, _callers) in stats.stats.items():
        where = f"{file}:{line}:{name}"
        group = next((g for g, marks in GROUPS if any(m in where for m in marks)), "other (SimPy-free builtins)")
        own[group] = own.get(group, 0.0) + tt
    print("own time by group:")
    for group, t in sorted(own.items(), key=lambda kv: -kv[1]):
        print(f"  {group:34} {t:6.2f} s  {100 * t / total:4.0f} %")
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).strip_dirs().sort_stats(key).print_stats(top)
        print(f"--- by {key} ---")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:12000])


def micro() -> None:
    from acplab.model.acp.state import Agent, Budget, Client, Link, World
    from acplab.model.acp.symmetry import canonical_hasher

    model, _ = acp_model("rfd", None, symmetry=True)
    w = model.init_states()[0]
    # a mid-run state: a few steps in
    for _ in range(6):
        succ = model.successors(w)
        w = succ[-1][1] if succ else w
    link = w.links[0]
    agent, client, budget = w.agent, w.clients[0], w.budget
    ns = {"w": w, "link": link, "agent": agent, "client": client, "budget": budget, "World": World, "Link": Link,
          "Agent": Agent, "Client": Client, "Budget": Budget, "tnew": tuple.__new__, "links": w.links}
    cases = [
        ("World._replace(links=...)", "w._replace(links=links)"),
        ("World(*w[:1], links, *w[3:]) positional", "World(w[0], w[1], links, w[3], w[4], w[5])"),
        ("tuple.__new__(World, (...))", "tnew(World, (w[0], w[1], links, w[3], w[4], w[5]))"),
        ("Link._replace(to_agent=())", "link._replace(to_agent=())"),
        ("Link(epoch, up, (), to_client) positional", "Link(link[0], link[1], (), link[3])"),
        ("tuple.__new__(Link, (...))", "tnew(Link, (link[0], link[1], (), link[3]))"),
        ("Agent._replace(next_id=2)", "agent._replace(next_id=2)"),
        ("Agent(*fields) positional", "Agent(agent[0], agent[1], agent[2], agent[3], 2, *agent[5:])"),
        ("Budget._replace(prompts=1)", "budget._replace(prompts=1)"),
        ("Budget(1, *budget[1:])", "Budget(1, *budget[1:])"),
        ("Client._replace(view='partial')", "client._replace(view='partial')"),
        ("Client(... positional)", "Client(client[0], client[1], 'partial', *client[3:])"),
        ("hash(World) (no cache: tuples rehash)", "hash(w)"),
    ]
    print(f"{'operation':48} {'ns/call':>8}")
    for label, stmt in cases:
        timer = timeit.Timer(stmt, globals=ns)
        n, _ = timer.autorange()
        best = min(timer.repeat(5, n)) / n
        print(f"{label:48} {best * 1e9:8.0f}")
    fp = canonical_hasher(model.monitors)
    timer = timeit.Timer("fp(w)", globals={"fp": fp, "w": w})
    n, _ = timer.autorange()
    print(f"{'canonical_fingerprint(World) (memo warm)':48} {min(timer.repeat(5, n)) / n * 1e9:8.0f}")
    from acplab.model.engine.fingerprint import Fingerprinter

    timer = timeit.Timer("Fingerprinter()(w)", globals={"Fingerprinter": Fingerprinter, "w": w})
    n, _ = timer.autorange()
    print(f"{'structural fingerprint(World), memo cold':48} {min(timer.repeat(5, n)) / n * 1e9:8.0f}")
    print(f"fields: World {len(World._fields)}, Agent {len(Agent._fields)}, Client {len(Client._fields)}, "
          f"Link {len(Link._fields)}, Budget {len(Budget._fields)}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--states", type=int, default=100_000)
    ap.add_argument("--skip-profile", action="store_true")
    args = ap.parse_args()
    if not args.skip_profile:
        profile(args.top, args.states)
    micro()


if __name__ == "__main__":
    main()
