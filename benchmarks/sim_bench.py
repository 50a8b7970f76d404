"""Simulator throughput: simulated wire messages per second, and the overhead over bare SimPy.

The baseline moves the same number of messages through the same number of
SimPy processes per session (one Store per channel, a sampled-latency timeout
before each put, a consumer per channel), with no model, monitors or metrics.
The ratio is (simulator wall time) / (baseline wall time); one run each.

    python benchmarks/sim_bench.py [--sessions N] [--clients N] [--floor] [--split]

``--floor`` also replays every run's actions through ``model.step`` alone (no
SimPy, no runtime): the part of the ratio that is the model's own step.

``--split`` says where the ratio comes from, each part against the same bare
loop: the simulator with no monitor at all (the runtime and the model's own
step), and ``model.step`` replayed alone with the monitors and without them.
The runs without monitors are not the same runs (nothing stops at a
violation), so that ratio is per message moved.
"""

from __future__ import annotations

import argparse
import random
import time

import simpy

from acplab.model.acp.model import AcpModel
from acplab.simulations.params import SimParams
from acplab.simulations.runtime import Session, build_model, run_seed


def simulator(p: SimParams, model=None):
    model = model or build_model(p)
    shape = []  # per session: (messages, channels, other processes)
    messages = 0
    steps = 0
    t0 = time.perf_counter()
    for k in range(p.sessions):
        s = Session(model, p, run_seed(p.seed, k), k, keep_steps=False)
        r = s.run()
        m = r.metrics.wire_messages
        messages += m
        steps += len(s.steps)
        inserts = len(r.metrics.inserted)
        lanes = 3 + 2 * p.clients + (p.clients if p.disconnect_rate else 0) + 2 * inserts
        shape.append((m, len(s.channels), lanes))
    return time.perf_counter() - t0, messages, steps, shape


def without_monitors(model):
    """The same model with no monitor (the runtime's and the model's own cost)."""
    return AcpModel(model.spec, model.bounds, monitors=[])


def model_only(p: SimParams, stepped=None) -> float:
    """Seconds to replay the runs' actions through ``model.step`` alone (the runs are recorded first).

    ``stepped``: replay through this model instead (the same spec and bounds; say, without monitors)."""
    model = build_model(p)
    runs = []
    for k in range(p.sessions):
        s = Session(model, p, run_seed(p.seed, k), k, keep_steps=True)
        s.run()
        runs.append([a for _, a, _ in s.steps])
    model = stepped or model
    t0 = time.perf_counter()
    for actions in runs:
        w = model.init_states()[0]
        for a in actions:
            w, _ = model.step(w, a)
            if w.violation is not None:
                w = w._replace(violation=None)  # as the runtime does with on_violation=continue
    return time.perf_counter() - t0


def bare(shape, seed: int = 0) -> float:
    rng = random.Random(seed)
    t0 = time.perf_counter()
    for messages, channels, lanes in shape:
        env = simpy.Environment()
        stores = [simpy.Store(env) for _ in range(max(channels, 1))]

        def consumer(store):
            while True:
                yield store.get()

        def producer(store, n):
            for _ in range(n):
                yield env.timeout(rng.expovariate(20.0))
                store.put(object())

        def idle_lane():
            yield env.timeout(1.0)

        per = [messages // len(stores)] * len(stores)
        per[0] += messages - sum(per)
        for store, n in zip(stores, per):
            env.process(consumer(store))
            env.process(producer(store, n))
        for _ in range(lanes):
            env.process(idle_lane())
        env.run()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--floor", action="store_true", help="also time model.step alone on the same runs")
    ap.add_argument("--split", action="store_true", help="also the ratio without monitors, and model.step alone "
                    "with and without them")
    args = ap.parse_args()
    p = SimParams(clients=args.clients, sessions=args.sessions, prompts=3, drop=0.02, disconnect_rate=0.05,
                  seed=1).validate()
    sim_s, messages, steps, shape = simulator(p)
    bare_s = bare(shape)
    print(f"sessions {p.sessions}, clients {p.clients}: {steps:,} model steps, {messages:,} wire messages")
    print(f"simulator: {sim_s:.2f} s  ->  {messages / sim_s:,.0f} wire messages/s, {steps / sim_s:,.0f} steps/s")
    print(f"bare SimPy (same messages, same process count): {bare_s:.3f} s  ->  {messages / bare_s:,.0f} messages/s")
    print(f"overhead ratio simulator / bare: {sim_s / bare_s:.1f}x")
    if args.floor and not args.split:
        step_s = model_only(p)
        print(f"model.step alone on the same runs: {step_s:.2f} s  ->  {step_s / bare_s:.1f}x bare")
    if args.split:
        for name, value in split(p, bare_s).items():
            print(f"{name}: {value:.1f}x")


def split(p: SimParams, bare_s: float) -> dict[str, float]:
    """Where the ratio comes from, beside the simulator's own (already measured against ``bare_s``, the bare
    loop moving its messages): each part over a bare loop moving the same messages (one run each)."""
    free_s, _, _, free_shape = simulator(p, without_monitors(build_model(p)))
    return {"simulator without monitors / bare (its own runs)": free_s / bare(free_shape),
            "model.step alone, monitors on / bare": model_only(p) / bare_s,
            "model.step alone, no monitors / bare": model_only(p, without_monitors(build_model(p))) / bare_s}

if __name__ == "__main__":
    main()
