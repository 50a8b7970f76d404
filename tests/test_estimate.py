"""``check --estimate``: the log-linear fit, the pilots' climb, the output's structure, one real small check,
and the check's up-front cost guard."""

from __future__ import annotations

import json
import math

import pytest

from acplab.model.app import estimate as est
from acplab.model.errors import InputError
from cli_harness import contract


def synthetic(factors: dict, base: float = 100.0, per_state: float = 1e-3, budget_states: float | None = None):
    """A fake ``measure``: states = base * prod factor**value exactly; stops (incomplete) past ``budget_states``."""
    calls = []

    def measure(counts: dict, max_seconds: float) -> est.Pilot:
        states = base * math.prod(factors.get(d, 1.0) ** counts.get(d, 0) for d in est.DIMENSIONS)
        calls.append(dict(counts))
        if budget_states is not None and states > budget_states:
            return est.Pilot(est.key(counts), int(budget_states), budget_states * per_state, False)
        return est.Pilot(est.key(counts), round(states), states * per_state, True)

    return measure, calls


class Clock:
    """A clock that advances by the seconds the fake pilots report."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_multiplicative_growth_is_recovered_and_extrapolated():
    measure, calls = synthetic({"clients": 3.0, "prompts": 30.0, "disconnects": 7.0})
    asked = {**dict.fromkeys(est.DIMENSIONS, 0), "clients": 4, "prompts": 3, "disconnects": 1}
    pilots = est.climb(asked, measure, budget=10.0)
    f = est.fit(pilots, asked)
    assert calls[0]["clients"] == 2 and calls[0]["prompts"] == 1 and calls[0]["disconnects"] == 0
    for d, g in (("clients", 3.0), ("prompts", 30.0), ("disconnects", 7.0)):
        assert f.growth[d] == pytest.approx(g, rel=1e-2) and f.how[d] == "measured"
    target = 100.0 * 3 ** 4 * 30 ** 3 * 7
    assert est.expected(f, asked) == pytest.approx(target, rel=1e-2)
    assert f.seconds(asked) == pytest.approx(target * 1e-3, rel=1e-2)


def test_the_climb_stops_at_the_budget_and_a_stopped_pilot_is_only_a_lower_bound():
    measure, calls = synthetic({"prompts": 40.0, "clients": 2.0}, base=1.0, per_state=1e-5, budget_states=10_000)
    asked = {**dict.fromkeys(est.DIMENSIONS, 0), "clients": 2, "prompts": 4}
    pilots = est.climb(asked, measure, budget=100.0)
    assert [p.complete for p in pilots] == [True, True, False]  # 160, 6,400, then 256,000 stopped at 10,000
    f = est.fit(pilots, asked)
    assert f.how["prompts"] == "measured" and f.growth["prompts"] == pytest.approx(40.0)
    assert f.how["clients"] == "assumed"
    assert est.expected(f, asked) == pytest.approx(4 * 40 ** 4)


def test_a_step_predicted_past_the_budget_is_not_taken():
    clock = Clock()

    def measure(counts, max_seconds):
        states = 10 * 100 ** counts["prompts"]
        clock.now += states * 1e-3
        return est.Pilot(est.key(counts), states, states * 1e-3, True)

    asked = {**dict.fromkeys(est.DIMENSIONS, 0), "clients": 2, "prompts": 5}
    pilots = est.climb(asked, measure, budget=200.0, clock=clock)
    # prompts 1 (1 s) and 2 (100 s, its factor still unknown) are measured; prompts 3 is predicted at 10,000 s
    assert [p.at["prompts"] for p in pilots] == [1, 2]


def test_speedup_and_the_horizons():
    assert est.speedup(1) == 1.0 and est.speedup(2) == pytest.approx(est.DOUBLING_SPEEDUP)
    assert est.speedup(16) == pytest.approx(est.DOUBLING_SPEEDUP ** 4)
    measure, _ = synthetic({"prompts": 10.0}, base=1.0, per_state=1.0)
    asked = {**dict.fromkeys(est.DIMENSIONS, 0), "clients": 2, "prompts": 3}
    f = est.fit(est.climb(asked, measure, budget=1e9), asked)
    # 10**p seconds: 10 and 100 fit within a minute... no: 10 s (p=1) only; 100 s (p=2) within ten minutes
    assert est.largest_within(f, asked, "prompts", 60, 16) == 1
    assert est.largest_within(f, asked, "prompts", 600, 16) == 2
    assert est.largest_within(f, asked, "prompts", 1e-3, 16) is None  # not even prompts 0 (1 s)


def test_the_guard_refuses_the_absurd_and_only_without_a_limit():
    counts = {**dict.fromkeys(est.DIMENSIONS, 0), "clients": 8, "prompts": 16}
    with pytest.raises(InputError, match="estimated at more than"):
        est.guard(counts, limited=False)
    est.guard(counts, limited=True)
    est.guard({**counts, "clients": 2, "prompts": 3}, limited=False)  # a real check: not refused


def test_check_refuses_absurd_bounds_with_the_estimate_in_one_line():
    code, out, err, obj = contract("check", "--clients", "8", "--prompts", "16", "--json")
    assert code == 2 and "estimated at more than" in obj["error"] and "--max-seconds" in obj["error"]


def test_estimate_on_a_real_small_check_agrees_with_the_measured_states():
    """Pilots at 1 client 1 prompt, 2 clients 1 prompt and 1 client 2 prompts predict 2 clients 2 prompts
    within 2x of a real check's count (states, never seconds: no timed test)."""
    measure = est.acp_pilot("rfd", None, {}, True, est_search())
    zero = dict.fromkeys(est.DIMENSIONS, 0)
    pilots = [measure({**zero, "clients": c, "prompts": p}, 60.0) for c, p in ((1, 1), (2, 1), (1, 2))]
    assert all(p.complete for p in pilots)
    asked = {**zero, "clients": 2, "prompts": 2}
    f = est.fit(pilots, asked)
    assert f.how["clients"] == f.how["prompts"] == "measured"
    code, out, err, real = contract("check", "--clients", "2", "--prompts", "2", "--json", "--workers", "1")
    assert real["complete"]
    assert real["states"] / 2 <= est.expected(f, asked) <= real["states"] * 2, (est.expected(f, asked), real["states"])


def est_search():
    from acplab.model.app.checking import Search

    return Search(workers=1)


def test_estimate_json_structure_from_the_command_line():
    code, out, err, obj = contract("check", "--clients", "1", "--prompts", "2", "--estimate", "--max-seconds", "20",
                                   "--json")
    assert code == 0 and obj["verdict"] == "estimate" and obj["measured"] is True
    assert set(obj) >= {"states", "seconds", "memory_mb", "growth", "pilots", "finishes_within", "model"}
    assert set(obj["finishes_within"]) == {"a minute", "ten minutes", "an hour"}
    assert obj["growth"]["prompts"]["how"] == "measured" and obj["growth"]["clients"]["how"] == "assumed"
    assert [p["bounds"] for p in obj["pilots"]] == [{"clients": 1, "prompts": 1}, {"clients": 1, "prompts": 2}]
    assert obj["states"] == obj["pilots"][-1]["states"]


def test_estimate_text_and_bad_uses():
    code, out, err, _ = contract("check", "--clients", "1", "--prompts", "1", "--estimate", "--max-seconds", "5")
    assert code == 0 and out.startswith("estimate for clients=1 prompts=1 (measured")
    assert "within a minute" in out and "B/state" in out
    code, out, err, _ = contract("check", "--estimate", "--walk", "3")
    assert code == 2 and "--walk does not apply" in err
    code, out, err, _ = contract("check", "--estimate", "--max-states", "10")
    assert code == 2 and "--max-states does not apply" in err
    code, out, err, _ = contract("check", "--model", "twophase", "--estimate")
    assert code == 2 and "--estimate" in err


def test_the_json_is_json():
    measure, _ = synthetic({"prompts": 10.0})
    asked = {**dict.fromkeys(est.DIMENSIONS, 0), "clients": 2, "prompts": 2}
    pilots = est.climb(asked, measure, budget=1e9)
    out = est.Estimate(asked, est.fit(pilots, asked), pilots, 30.0, 1.0, 2).json()
    assert json.loads(json.dumps(out))["measured"] is True
    assert est.text(out)[0].startswith("estimate for clients=2 prompts=2")
