"""Random walks find violations beyond exhaustive bounds and never claim that a property holds."""

from acplab.model.acp.model import AcpModel
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import RFD, SPECS
from acplab.model.engine import explore
from acplab.model.engine.twophase import TwoPhase
from acplab.model.engine.walk import random_walks


def test_walks_find_the_broken_commit_and_report_a_replayable_shortest_walk():
    model = TwoPhase(4, broken=True)
    result = random_walks(model, 300, seed=5)
    [v] = result.violations
    assert (result.verdict, v.property.name) == ("violated", "Consistent")
    assert not v.property.condition(v.path.last_state)
    shortest = len(explore(TwoPhase(4, broken=True)).violations[0].path)
    assert len(v.path) >= shortest


def test_a_walk_without_violation_is_incomplete_never_holds():
    model = AcpModel(RFD, SCENARIOS["report-order"].bounds)
    result = random_walks(model, 50, seed=1)
    assert (result.verdict, result.complete, result.violations) == ("incomplete", False, [])
    assert "random walks" in result.limit


def test_walks_are_reproducible_from_the_seed_and_never_revisit_a_state():
    sc = SCENARIOS["multi-client"]

    def run(seed):
        r = random_walks(AcpModel(SPECS["reused-id"], sc.bounds, symmetry=True), 200, seed=seed, depth=60)
        return [(v.property.name, v.path.ordinals) for v in r.violations], (r.stats.states, r.stats.transitions)

    assert run(3) == run(3)
    found, _ = run(3)
    assert found, "a walk found no violation of reused-id"
    name, token = found[0]
    model = AcpModel(SPECS["reused-id"], sc.bounds, symmetry=True)
    from acplab.model.engine import replay

    states = replay(model, token).states()
    assert len({model.fingerprint(s) for s in states}) == len(states)
    assert states[-1].violation[0] == name


def test_a_stuck_walk_is_reported_under_the_models_own_deadlock_property():
    from acplab.model.engine.properties import Property

    class Line:
        """0 -> 1 -> 2, and 2 is stuck; the model names what that violates."""

        deadlock_property = Property("NoStuckLine", "always", lambda s: True, ("X1",), "stuck")

        def init_states(self):
            return [0]

        def successors(self, s):
            return [("step", s + 1)] if s < 2 else []

        def properties(self):
            return []

        def format_action(self, a):
            return a

    result = random_walks(Line(), 3, seed=0)
    assert [(v.property.name, len(v.path)) for v in result.violations] == [("NoStuckLine", 2)]
    assert explore(Line()).violations[0].property.name == "NoStuckLine"  # as the exhaustive search names it
