"""The simulator's cost guard: a measured model, super-linear in clients x prompts, capped by the duration."""

from __future__ import annotations

import pytest

from acplab.model.errors import InputError
from acplab.simulations.cost import prompts_through, session_seconds, timed_out_share
from acplab.simulations.params import MAX_CPU_SECONDS, SimParams, check_cost
from cli_harness import contract


def cost(**kw) -> float:
    return session_seconds(SimParams(**kw).validate())


def test_more_prompts_cost_more_than_proportionally():
    assert cost(clients=2, prompts=100) > 3 * cost(clients=2, prompts=50) / 2
    assert cost(clients=16, prompts=3) > 8 * 2 * cost(clients=2, prompts=3)  # clients: c messages per prompt, books


def test_the_duration_caps_the_prompts_a_session_gets_through():
    assert prompts_through(SimParams(clients=2, prompts=1000).validate()) < 2 * 300
    assert cost(clients=2, prompts=500) == cost(clients=2, prompts=1000)
    assert cost(clients=2, prompts=1000, duration_s=1200.0) > cost(clients=2, prompts=1000)


def test_a_queue_longer_than_the_retry_timeout_brings_resubmissions():
    assert timed_out_share(10.0, 30.0) == 0.0 and timed_out_share(60.0, 30.0) == 1.0
    crowded = SimParams(clients=32, prompts=3).validate()
    assert prompts_through(crowded) > 32 * 3


def test_the_measured_32_clients_3_prompts_session_is_within_3x():
    """Measured: one session of 32 clients x 3 prompts took 77 CPU s (the linear guard said 3 s)."""
    assert 77.0 / 3 <= cost(clients=32, prompts=3) <= 77.0 * 3


def test_check_cost_refuses_with_the_estimate():
    with pytest.raises(InputError, match=r"estimated at about [\d.,]+ days of CPU time"):
        check_cost(SimParams(clients=32, prompts=1000, sessions=500).validate().estimated_seconds(), "simulate")
    check_cost(MAX_CPU_SECONDS, "simulate")


def test_simulate_refuses_before_any_work_in_one_line():
    code, out, err, obj = contract("simulate", "--clients", "32", "--prompts", "1000", "--sessions", "500", "--json")
    assert code == 2 and "CPU time" in obj["error"] and "days" in obj["error"]
