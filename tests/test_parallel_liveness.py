"""``eventually`` properties on several workers: the one-worker search's verdicts, lassos and counts.

The liveness pass runs on a graph the workers recorded (:mod:`acplab.model.engine.eventual_levels`); every
counterexample, shortest length, loop start, witness and state count must be the one a one-worker run reports.
"""

import random

import pytest

from acplab.model.acp.reduction import reduce
from acplab.model.app.checking import acp_model
from acplab.model.engine import always, eventually, explore, sometimes
from acplab.model.engine import eventual_levels

from test_liveness import Graph  # adjacency dict, actions "s->t", optional fairness classes


@pytest.fixture(autouse=True)
def spill_edges_early(monkeypatch):
    """Workers spill their edges to disk every few dozen: the spill file gets exercised too (forked workers inherit it)."""
    monkeypatch.setattr(eventual_levels, "SPILL", 40)


def signature(r):
    """Everything a run reports: paths as replay tokens with their loop starts, coverage included."""
    cov = r.coverage
    return (r.verdict, r.complete, r.stats.states, r.stats.transitions, r.stats.depth, r.limit,
            [(v.property.name, v.path.ordinals, v.path.loop_start) for v in r.violations],
            [(w.property.name, w.path.ordinals) for w in r.warnings],
            {k: None if p is None else p.ordinals for k, p in r.witnesses.items()}, r.missing_optional, r.reduced,
            r.confirmed,
            cov.actions, {name: (c.evaluated, c.armed, c.violated) for name, c in cov.properties.items()})


def same(make, workers=(2,), **options):
    one = explore(make(), **options)
    for n in workers:
        # small chunks and levels spilled early: exchanges, gifts, the disk and the id tables all get exercised
        many = explore(make(), workers=n, in_memory=5, chunk=7 if one.stats.states < 2000 else 97, **options)
        assert signature(many) == signature(one), n
    return one


SPIN = {0: [0, 1], 1: []}


@pytest.mark.parametrize("case", [
    # weak fairness: a starved exit enabled all along is no counterexample
    (SPIN, {"0->0": "spin", "0->1": "exit"}, 1, True, "holds"),
    (SPIN, None, 1, True, "violated"),  # no fairness classes: any cycle
    (SPIN, {"0->0": "spin"}, 1, True, "violated"),  # an exit without a class needs no fairness
    ({0: [2, 1], 2: [0], 1: []}, {"0->2": "a", "2->0": "b", "0->1": "exit"}, 1, True, "violated"),  # sometimes enabled
    ({0: [0, 1], 1: [0, 1, 2], 2: []}, {"0->0": "spin", "0->1": "go", "1->0": "back", "1->1": "go"}, 2, True,
     "violated"),  # the lasso takes every class that stays enabled
    ({0: [1], 1: [2, 0], 2: []}, None, 1, False, "holds"),  # <>P holds from the start
    ({0: [1], 1: [2, 0], 2: []}, None, 1, True, "violated"),  # []<>P fails at 2
])
def test_the_fairness_cases_of_test_liveness(case):
    edges, classes, target, every, verdict = case
    prop = eventually("reaches", lambda s: s == target, every_state=every)
    one = same(lambda: Graph(edges, [prop], final=lambda s: True, classes=classes))
    assert one.verdict == verdict


def test_the_shallowest_falsifying_terminal_and_warnings_beyond_violations():
    g = {0: [1, 2], 1: [3], 2: [4], 3: [], 4: [5], 5: []}
    one = same(lambda: Graph(g, [eventually("never", lambda s: False, every_state=True)], final=lambda s: True))
    assert one.violations[0].path.states() == [0, 1, 3]
    props = [always("should", lambda s: s != 1, severity="warning"), always("must", lambda s: s != 2),
             eventually("reaches5", lambda s: s == 5)]
    one = same(lambda: Graph({0: [1], 1: [2], 2: []}, props, final=lambda s: True))
    assert [w.property.name for w in one.warnings] == ["should"]
    assert [v.property.name for v in one.violations] == ["must"]  # 2 is not expanded: no stuck state there


def test_optional_witnesses_and_a_named_deadlock_property():
    from acplab.model.engine import Property

    stuck = Property("NoStuckState", "always", lambda s: True, ("S2",), "stuck")
    props = [sometimes("sees7", lambda s: s == 7, required=False), eventually("reaches2", lambda s: s == 2)]
    one = same(lambda: Graph({0: [1, 2], 1: [], 2: [0]}, props, deadlock=stuck))
    assert one.missing_optional == ["sees7"]
    assert [v.property.name for v in one.violations] == ["NoStuckState", "reaches2"]


class Random(Graph):
    """A random graph over ``n`` states with several initial states and fairness classes per action."""

    def __init__(self, seed, n=40):
        rnd = random.Random(seed)
        edges = {s: sorted(rnd.sample(range(n), rnd.choice([0, 1, 2, 2, 3]))) for s in range(n)}
        classes = {f"{s}->{t}": rnd.choice([None, "a", "b", "c", ("d", t % 3)]) for s, ts in edges.items() for t in ts}
        goal = set(rnd.sample(range(n), 4))
        props = [eventually("from_start", lambda s: s in goal), eventually("always_again", lambda s: s % 7 == 0,
                                                                           every_state=True),
                 eventually("odd", lambda s: s % 2 == 1, every_state=True), sometimes("sees3", lambda s: s == 3)]
        super().__init__(edges, props, final=lambda s: s % 5 == 0, classes=classes if seed % 4 else None)
        self.inits = sorted(rnd.sample(range(n), 3))

    def init_states(self):
        return self.inits


@pytest.mark.parametrize("seed", range(24))
def test_random_graphs_with_fairness_classes(seed):
    same(lambda: Random(seed), workers=(2, 3))


def _acp(spec, scenario, por):
    model, _ = acp_model(spec, scenario, symmetry=True)
    if por:
        reduce(model)
    return model


@pytest.mark.parametrize("spec,scenario,por", [
    ("rfd", "default", True), ("rfd", "multi-client", True), ("rfd", "agent-restart", True),
    ("rfd", "agent-restart", False), ("never-answers", "multi-client", True), ("never-answers", "multi-client", False),
    ("never-answers", "agent-restart", True), ("never-idles", "cancel-request-routing", True),
    ("never-idles", "cancel-request-routing", False), ("never-idles", "agent-restart", True),
    ("suppressed-echo", "lost-response", True), ("suppressed-echo", "lost-response", False),
    ("suppressed-echo", "failure-outcome", True),
])
def test_acp_checks_give_the_one_worker_result(spec, scenario, por):
    """Verdicts, shortest lengths, lassos (confirmed unreduced under POR), stuck states, witnesses and counts."""
    one = same(lambda: _acp(spec, scenario, por))
    if spec != "rfd":
        assert one.verdict == "violated"


def test_fair_ends_are_judged_the_same_on_the_level_engine():
    """A state where only unfair actions are enabled ends a behaviour (liveness.py), on any number of workers."""
    prop = eventually("reaches2", lambda s: s == 2, every_state=True)
    graph = {0: [1, 3], 1: [2], 2: [], 3: [3, 2]}
    same(lambda: Graph(graph, [prop], final=lambda s: True, classes={"1->2": "go", "3->3": "spin"}))
    [v] = explore(Graph(graph, [prop], final=lambda s: True, classes={"1->2": "go", "3->3": "spin"})).violations
    assert v.path.states() == [0] and v.path.loop_start is None
