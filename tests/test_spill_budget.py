"""The search's memory budget (``engine/frontier.py``): where a level spills changes nothing but memory and time.

A level keeps its states live while the worker's resident memory is below
its share of the budget, then pickles the rest to a file; a budget of 0
spills every state, a huge one none.  The results must be the same.
"""

from __future__ import annotations

import pytest

from acplab.model.engine import Limits, explore
from acplab.model.engine.frontier import MEMORY_ENV, Level, Room, memory_budget, parse_memory
from acplab.model.engine.twophase import TwoPhase
from acplab.model.errors import InputError


def _summary(result) -> tuple:
    return (result.verdict, result.stats.states, result.stats.transitions, result.stats.depth,
            [(v.property.name, v.path.ordinals) for v in result.violations], dict(result.coverage.actions))


def test_a_level_past_its_room_spills_and_reads_back_in_order():
    states = [("s", k, frozenset({k})) for k in range(600)]
    full, roomy = Level(Room(0)), Level(Room(1 << 60))
    for k, s in enumerate(states):
        full.append(k, s)
        roomy.append(k, s)
    assert full.live == [] and full.spilled == 512  # two batches on disk, the rest pending
    assert len(roomy.live) == 600 and roomy.spill is None
    assert list(full.states()) == states == list(roomy.states())


def test_a_level_that_spilled_keeps_spilling():
    room = Room(1 << 60, cap=2)
    level = Level(room)
    for k in range(5):
        level.append(k, (k,))
    room.cap = None  # room again: the rest of this level still follows its spilled states
    level.append(5, (5,))
    assert level.live == [(0,), (1,)] and list(level.states()) == [(k,) for k in range(6)]


@pytest.mark.parametrize("workers", [1, 2])
def test_the_budget_changes_no_result(workers):
    live = explore(TwoPhase(4, broken=True), workers=workers, expand_violating=True, memory=1 << 60)
    spilled = explore(TwoPhase(4, broken=True), workers=workers, expand_violating=True, memory=0)
    assert live.violations and _summary(live) == _summary(spilled)


def test_the_budget_changes_no_result_on_the_acp_model():
    from acplab.model.app.checking import acp_model

    def run(memory):
        model, _ = acp_model("rfd", None, symmetry=True)
        return explore(model, Limits(max_states=1500), memory=memory)

    assert _summary(run(1 << 60)) == _summary(run(0))


def test_the_budget_comes_from_the_argument_then_the_environment(monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "1.5G")
    assert memory_budget() == 3 << 29 and memory_budget(1000) == 1000
    monkeypatch.setenv(MEMORY_ENV, "512m")
    assert memory_budget() == 512 << 20
    assert parse_memory("300000000") == 300_000_000


def test_a_bad_budget_is_one_line_naming_the_variable(monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "lots")
    with pytest.raises(InputError, match=f"^{MEMORY_ENV}='lots': give bytes"):
        explore(TwoPhase(2))
