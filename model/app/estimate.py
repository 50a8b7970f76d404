"""`acplab check --estimate`: will this check finish?  Measure small bounds, fit the growth, extrapolate.

The model (a choice: the RFD says nothing of cost).  The states of an ACP
check grow roughly by a constant factor per added unit of each count bound
(clients, prompts, drops, disconnects and the ``--set`` counts), so the
logarithm of the states is fitted linearly per dimension:

    ln S(x) = ln S(a) + sum_d  b_d * (x_d - a_d)

where ``a`` is the *anchor*, the largest pilot that completed, and ``b_d``
the slope along ``d`` measured nearest the asked bounds: between the two
largest complete pilots that differ in ``d`` alone (the factor per prompt
grows with the prompts, the factor per client shrinks, so the local slope
beats a least-squares line through every point).  A pilot stopped by the
budget only bounds its slope from below: when that bound is the larger the
factor is reported as "at least".  Time is states times the anchor's seconds per state, which is
allowed to grow along ``d`` as measured between the same two pilots (clamped
to [1, 2] per unit: per-state cost grows with the size of a state); memory is
the resident size before the pilots plus bytes per state measured on the
anchor.  No pilot along a dimension: its factor is :data:`ASSUMED_GROWTH`
and the output says "assumed".

The pilots (:func:`climb`) start at ``clients <= 2, prompts <= 1`` and every
fault at 0, take one step along each dimension from there, then step one
dimension at a time from the largest complete pilot towards the asked
bounds, the cheapest predicted first, each with the budget that is left as
its time limit, until the budget is spent or the asked bounds are
reached (then the estimate is the measurement).  They run on one worker and
are timed in CPU seconds (on this shared machine wall time varies with the
load, CPU time much less), so the expected time is CPU seconds on one
worker, the wall time of an unloaded core; a run on ``W`` workers is
assumed :func:`speedup` times faster.

:func:`guard` is the check's up-front cost guard: the same model with the
calibrated low-end factors of :data:`CALIBRATED` and no pilot, so it costs
nothing and refuses only what is surely absurd.
"""

from __future__ import annotations

import math
import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: the count bounds the fit extrapolates along
DIMENSIONS = ("clients", "prompts", "drops", "disconnects", "cancels", "cancel_requests", "failures", "restarts",
              "imports", "own_work")
#: the smallest value of each dimension (0 where not listed) and where the pilots start (capped at the asked value)
FLOOR = {"clients": 1}
START = {"clients": 2, "prompts": 1}
#: factor per unit for a dimension no pilot measured (measured on the default scenario: clients x2-3, prompts x30-36,
#: a disconnect x28 at 2 clients, 1 prompt)
ASSUMED_GROWTH = {"clients": 3.0, "prompts": 40.0}
ASSUMED_FAULT_GROWTH = 30.0
#: a doubling of the workers makes a run this much faster (measured on this 2-core machine: 2 workers 1.58x one
#: worker by wall, benchmarks/results.json); beyond 2 workers this is an assumption, not a measurement
DOUBLING_SPEEDUP = 1.58
#: bytes per state when the anchor is too small to measure it (benchmarks: 221-480 B/state)
DEFAULT_BYTES_PER_STATE = 500.0
#: seconds (wall) the pilots may take when --max-seconds is not given
DEFAULT_BUDGET = 30.0
#: the budgets the output answers "would it finish within?" for, in seconds
HORIZONS = (("a minute", 60.0), ("ten minutes", 600.0), ("an hour", 3600.0))
#: the worker counts those answers are given for besides this machine's cores
CLUSTER_WORKERS = 16
#: the guard's model: the default scenario at 2 clients, 1 prompt (127 states), the low end of the measured factors,
#: and 100 us per state (faster than any measured run), so its estimate is low and it refuses only the absurd
CALIBRATED = {"anchor": {"clients": 2, "prompts": 1}, "states": 127.0, "seconds_per_state": 100e-6,
              "growth": {"clients": 2.0, "prompts": 30.0}, "fault_growth": 5.0}
#: more CPU time than this for a check without --max-seconds/--max-states is refused (one week)
GUARD_SECONDS = 7 * 24 * 3600.0


@dataclass(frozen=True)
class Pilot:
    """One measured run at smaller bounds (``seconds``: CPU seconds of the one worker)."""

    counts: tuple  # ((dimension, value), ...) over DIMENSIONS
    states: int
    seconds: float
    complete: bool
    peak_bytes: int = 0

    @property
    def at(self) -> dict:
        return dict(self.counts)


@dataclass(frozen=True)
class Fit:
    """The fitted model: an anchor, a factor per unit of each dimension, time and memory per state."""

    anchor: Pilot
    growth: dict  # dimension -> factor per unit
    how: dict  # dimension -> "measured" | "at least" | "assumed"
    cost_growth: dict  # dimension -> factor per unit of the seconds per state
    seconds_per_state: float
    bytes_per_state: float
    base_bytes: float
    floor_states: int = 0  # the most states any pilot at or below the asked bounds reached

    def states(self, counts: dict) -> float:
        """Expected states at ``counts``: the anchor times each factor per unit of difference."""
        at = self.anchor.at
        log = math.log(max(1, self.anchor.states))
        log += sum(math.log(self.growth[d]) * (counts.get(d, 0) - at.get(d, 0)) for d in self.growth)
        return math.exp(min(log, 700.0))

    def seconds(self, counts: dict) -> float:
        """Expected seconds on one worker."""
        at = self.anchor.at
        per = self.seconds_per_state * math.prod(self.cost_growth[d] ** (counts.get(d, 0) - at.get(d, 0))
                                                 for d in self.cost_growth)
        return self.states(counts) * per

    def memory(self, counts: dict) -> float:
        return self.base_bytes + self.states(counts) * self.bytes_per_state


def speedup(workers: int) -> float:
    """How much faster ``workers`` run than one: :data:`DOUBLING_SPEEDUP` per doubling (1 for one worker)."""
    return DOUBLING_SPEEDUP ** math.log2(max(1, workers))


def key(counts: dict) -> tuple:
    return tuple((d, counts.get(d, 0)) for d in DIMENSIONS)


def start_point(asked: dict) -> dict:
    """Where the pilots start: clients <= 2, prompts <= 1, no fault (each capped at the asked value)."""
    return {d: min(asked.get(d, 0), START.get(d, FLOOR.get(d, 0))) for d in DIMENSIONS}


def local_slope(pilots: list[Pilot], d: str):
    """(slope, how, cost slope) along ``d``, or None when no two pilots differ in ``d`` alone.

    The slope is the one between the two largest complete pilots that differ
    in ``d`` alone ("measured").  A larger pilot that hit its limit bounds the
    slope from below: it raises a smaller measured slope ("at least"), and
    with nothing measured it is the slope when above the assumed one.
    """
    best, lower = None, None
    for hi in pilots:
        for lo in pilots:
            if not lo.complete or lo.at[d] >= hi.at[d]:
                continue
            if any(lo.at[e] != hi.at[e] for e in DIMENSIONS if e != d):
                continue
            units = hi.at[d] - lo.at[d]
            slope = math.log(max(1, hi.states) / max(1, lo.states)) / units
            if not hi.complete:
                lower = slope if lower is None else max(lower, slope)
                continue
            cost = 0.0
            if lo.seconds > 0.3 and hi.seconds > 0.3:
                per = (hi.seconds / hi.states) / (lo.seconds / lo.states)
                cost = min(math.log(2.0), max(0.0, math.log(per) / units))
            rank = (hi.states, lo.states)
            if best is None or rank > best[0]:
                best = (rank, slope, cost)
    if best is None and lower is None:
        return None
    if best is None:
        assumed = math.log(ASSUMED_GROWTH.get(d, ASSUMED_FAULT_GROWTH))
        return max(lower, assumed), "at least", 0.0
    _, slope, cost = best
    if lower is not None and lower > slope:
        return lower, "at least", cost
    return slope, "measured", cost


def fit(pilots: list[Pilot], asked: dict, base_bytes: float = 0.0) -> Fit:
    """The model of the module docstring from ``pilots`` (at least one complete)."""
    done = [p for p in pilots if p.complete]
    anchor = max(done, key=lambda p: (p.states, p.seconds))
    growth, how, cost = {}, {}, {}
    for d in DIMENSIONS:
        found = local_slope(pilots, d)
        if found is None:
            growth[d] = ASSUMED_GROWTH.get(d, ASSUMED_FAULT_GROWTH)
            how[d], cost[d] = "assumed", 1.0
        else:
            slope, how[d], c = found
            growth[d], cost[d] = math.exp(slope), math.exp(c)
    # a budget-stopped pilot inside the asked bounds: never expect fewer states than it reached
    inside = [p.states for p in pilots if all(p.at[d] <= asked.get(d, 0) for d in DIMENSIONS)]
    per_state = anchor.seconds / max(1, anchor.states)
    per_byte = DEFAULT_BYTES_PER_STATE
    if anchor.states >= 5000 and anchor.peak_bytes > base_bytes:
        per_byte = (anchor.peak_bytes - base_bytes) / anchor.states
    return Fit(anchor, growth, how, cost, per_state, per_byte, base_bytes, max(inside, default=0))


def expected(f: Fit, counts: dict) -> float:
    """Expected states, never fewer than a pilot within ``counts`` reached."""
    return max(f.states(counts), float(f.floor_states))


def climb(asked: dict, measure: Callable[[dict, float], Pilot], budget: float,
          clock: Callable[[], float] = time.monotonic) -> list[Pilot]:
    """The pilots: from :func:`start_point` one cheapest step at a time towards ``asked`` within ``budget`` seconds.

    ``measure(counts, max_seconds)`` runs one pilot.  Every dimension first
    gets one step from the start (the cheapest place to learn its factor),
    cheapest predicted first; then, from the largest complete pilot, the
    cheapest step predicted to fit in what is left.  A pilot that hits its
    limit ends the climb along its dimension.
    """
    began = clock()
    start = start_point(asked)
    pilots = [measure(start, budget)]
    if not pilots[0].complete:
        return pilots
    first = [d for d in DIMENSIONS if start[d] < asked.get(d, 0)]
    model = fit(pilots, asked)
    for d in sorted(first, key=lambda d: (model.seconds({**start, d: start[d] + 1}), DIMENSIONS.index(d))):
        left = budget - (clock() - began)
        if left <= 0:
            return pilots
        pilots.append(measure({**start, d: start[d] + 1}, left))
    stuck: set[str] = set()
    while True:
        current = max((p for p in pilots if p.complete), key=lambda p: (p.states, p.seconds)).at
        left = budget - (clock() - began)
        options = [d for d in DIMENSIONS if current[d] < asked.get(d, 0) and d not in stuck]
        model = fit(pilots, asked)
        steps = {d: model.seconds({**current, d: current[d] + 1}) for d in options}
        fitting = [d for d in options if steps[d] <= left]
        if left <= 0 or not fitting:
            return pilots
        d = min(fitting, key=lambda d: (steps[d], DIMENSIONS.index(d)))
        pilot = measure({**current, d: current[d] + 1}, left)
        pilots.append(pilot)
        if not pilot.complete:
            stuck.add(d)


def largest_within(f: Fit, asked: dict, d: str, seconds: float, most: int) -> int | None:
    """The largest value of ``d`` (the other bounds as asked) expected to finish within ``seconds``; None: not even
    the smallest."""
    best = None
    for v in range(FLOOR.get(d, 0), most + 1):
        if f.seconds({**asked, d: v}) > seconds:
            break
        best = v
    return best


@dataclass
class Estimate:
    """What ``check --estimate`` reports."""

    asked: dict
    fit: Fit
    pilots: list
    budget: float
    spent: float
    cores: int
    maxima: dict = field(default_factory=dict)

    def workers(self) -> list[int]:
        return sorted({1, self.cores, CLUSTER_WORKERS})

    def json(self) -> dict:
        f, asked = self.fit, self.asked
        active = [d for d in DIMENSIONS if asked.get(d, 0) > FLOOR.get(d, 0) or d in ("clients", "prompts")]
        states = expected(f, asked)
        seconds = f.seconds(asked) * states / max(1.0, f.states(asked))  # a stopped pilot's floor costs time too
        exact = f.anchor.at == {d: asked.get(d, 0) for d in DIMENSIONS}
        # a factor measured only from below, applied upwards, makes the whole estimate a lower bound
        floor = any(f.how[d] == "at least" and asked.get(d, 0) > f.anchor.at[d] for d in DIMENSIONS)
        finish = {}
        for label, limit in HORIZONS:
            finish[label] = {str(w): {d: largest_within(f, asked, d, limit * speedup(w), self.maxima.get(d, 16))
                                      for d in active} for w in self.workers()}
        return {
            "verdict": "estimate", "bounds": {d: asked.get(d, 0) for d in active}, "measured": exact,
            "lower_bound": floor,
            "states": round(states), "seconds": {str(w): seconds / speedup(w) for w in self.workers()},
            "memory_mb": round(f.memory(asked) / 2**20, 1), "bytes_per_state": round(f.bytes_per_state),
            "growth": {d: {"factor": round(f.growth[d], 2), "how": f.how[d]} for d in active},
            "anchor": {"bounds": {d: f.anchor.at[d] for d in active}, "states": f.anchor.states,
                       "seconds": round(f.anchor.seconds, 3)},
            "pilots": [{"bounds": {d: p.at[d] for d in active}, "states": p.states, "seconds": round(p.seconds, 3),
                        "complete": p.complete} for p in self.pilots],
            "budget_seconds": self.budget, "pilot_seconds": round(self.spent, 2),
            "finishes_within": finish,
            "model": "ln states linear per dimension from the pilots nearest the asked bounds; times in CPU seconds "
                     f"of one worker (wall on an idle core); {DOUBLING_SPEEDUP}x per doubling of workers",
        }


def duration(seconds: float) -> str:
    """``95 s``, ``12 min``, ``3.1 h``, ``4.0 days``, ``2.3 years``."""
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.1f} s"


def text(out: dict) -> list[str]:
    """The estimate as lines for a terminal."""
    bounds = " ".join(f"{d}={v}" for d, v in out["bounds"].items())
    lines = [f"estimate for {bounds} ({'measured: the pilots reached it' if out['measured'] else 'extrapolated'})"]
    for p in out["pilots"]:
        where = " ".join(f"{d}={v}" for d, v in p["bounds"].items())
        lines.append(f"  pilot {where}: {p['states']:,} states in {p['seconds']:.2f} s"
                     + ("" if p["complete"] else " (stopped by the budget: a lower bound)"))
    lines.append("  growth per unit: " + ", ".join(
        f"{d} x{g['factor']:g}" + ("" if g["how"] == "measured" else f" ({g['how']})") for d, g in out["growth"].items()))
    times = ", ".join(f"{duration(s)} on {w} worker{'s' * (w != '1')}" for w, s in out["seconds"].items())
    lines.append(f"  expected: {'at least ' if out['lower_bound'] else ''}about {out['states']:,} states, {times}, {out['memory_mb']:,} MB "
                 f"({out['bytes_per_state']} B/state)")
    for label, per_workers in out["finishes_within"].items():
        parts = []
        for w, dims in per_workers.items():
            shown = ", ".join(f"{d}<={v}" if v is not None else f"no {d}" for d, v in dims.items())
            parts.append(f"{w} worker{'s' * (w != '1')}: {shown}")
        lines.append(f"  within {label} (each bound alone, the others as asked): " + "; ".join(parts))
    lines.append(f"  model: {out['model']}; pilots {out['pilot_seconds']} s of a {out['budget_seconds']:g} s budget")
    return lines


def rss_now() -> float:
    """This process's resident bytes now (Linux /proc), else its peak so far."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0


def guard_estimate(counts: dict) -> tuple[float, float]:
    """(states, CPU seconds) of the calibrated low-end model of :data:`CALIBRATED`: no pilot, instant."""
    anchor, growth = CALIBRATED["anchor"], CALIBRATED["growth"]
    log = math.log(CALIBRATED["states"])
    for d in DIMENSIONS:
        log += math.log(growth.get(d, CALIBRATED["fault_growth"])) * (counts.get(d, 0) - anchor.get(d, 0))
    states = math.exp(min(log, 700.0))
    return states, states * CALIBRATED["seconds_per_state"]


# -- the ACP check ------------------------------------------------------------


def asked_counts(spec: str, scenario: str | None, bounds: dict, symmetry: bool) -> dict:
    """The count bounds of the check as asked: the scenario's, with the overrides."""
    from .checking import acp_model

    model, _ = acp_model(spec, scenario, symmetry, **bounds)
    return {d: getattr(model.bounds, d) for d in DIMENSIONS}


def acp_pilot(spec: str, scenario: str | None, bounds: dict, symmetry: bool, search) -> Callable:
    """``measure(counts, max_seconds) -> Pilot``: the same check (spec, scenario, switches, reduction) on one worker."""
    from acplab.model.engine import Limits

    from .checking import Search, acp_target

    pilot_search = Search(workers=1, por=search.por, max_depth=search.max_depth, stop=False)  # the whole search

    def measure(counts: dict, max_seconds: float) -> Pilot:
        target = acp_target(spec, scenario, {**bounds, **counts}, symmetry)
        if target.prepare is not None:
            target.prepare(pilot_search)
        began = time.process_time()  # one worker runs in this process: its CPU time, steadier than wall on a busy host
        result = pilot_search.run(target.model, Limits(None, max(0.1, max_seconds)), None, target.identity)
        return Pilot(key(counts), result.stats.states, time.process_time() - began, result.complete,
                     result.peak_bytes or 0)

    return measure


def run_estimate(spec: str, scenario: str | None, bounds: dict, symmetry: bool, search, limits, opts) -> int:
    """``check --estimate``: climb within ``limits.max_seconds`` (default 30), fit, print; exit 0 (an estimate has
    no verdict).  Options of a check that an estimate would silently ignore are refused."""
    import click

    from acplab.model.errors import InputError

    from .checking import BOUND_MAXIMA
    from .report import print_json

    ignored = [name for name, given in (("--walk", search.walk), ("--checkpoint", search.checkpoint),
                                        ("--max-states", limits.max_states), ("--out", opts.out),
                                        ("--html", opts.html), ("--witness/--witnesses", opts.witnesses)) if given]
    if ignored:
        raise InputError(f"--estimate times an exhaustive check and runs none: {ignored[0]} does not apply")
    asked = asked_counts(spec, scenario, bounds, symmetry)
    budget = limits.max_seconds or DEFAULT_BUDGET
    base = rss_now()
    began = time.monotonic()
    pilots = climb(asked, acp_pilot(spec, scenario, bounds, symmetry, search), budget)
    spent = time.monotonic() - began
    if not any(p.complete for p in pilots):
        raise_too_small(pilots[0], budget)
    out = Estimate(asked, fit(pilots, asked, base), pilots, budget, spent, os.cpu_count() or 1,
                   {**BOUND_MAXIMA, "own_work": 16}).json()
    if opts.as_json:
        print_json(out)
    else:
        for line in text(out):
            click.echo(line)
    return 0


def raise_too_small(first: Pilot, budget: float) -> None:
    from acplab.model.errors import InputError

    where = " ".join(f"{d}={v}" for d, v in first.counts if v)
    raise InputError(f"--estimate: the smallest pilot ({where}) did not finish within the {budget:g} s budget "
                     f"({first.states:,} states so far); give a larger --max-seconds")


def guard(counts: dict, limited: bool, what: str = "check") -> None:
    """Refuse, before any work, bounds the calibrated model puts past :data:`GUARD_SECONDS` without a limit.

    A choice: refuse (exit 2), not warn, since a run without ``--max-seconds``,
    ``--max-states`` or ``--max-depth`` would only end by being killed; any
    limit lets the user run it anyway.  The estimate is deliberately low (see
    :data:`CALIBRATED`), so only the absurd is refused.
    """
    from acplab.model.errors import InputError

    if limited:
        return
    states, seconds = guard_estimate(counts)
    if seconds > GUARD_SECONDS:
        raise InputError(f"{what}: these bounds are estimated at more than {states:.1e} states, at least "
                         f"{duration(seconds)} of CPU time (over the limit of {duration(GUARD_SECONDS)}); lower them, "
                         f"or give --max-seconds, --max-states or --max-depth to run anyway (`check --estimate` measures)")
