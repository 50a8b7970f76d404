"""The liveness pass and the engine's refinements: weak fairness per class, []<> obligations,
warnings (SHOULDs), optional witnesses and a named deadlock property, on tiny graphs."""

import pytest

from acplab.model.engine import Property, always, eventually, explore, sometimes


class Graph:
    """A transition system given as an adjacency dict; actions are ``"s->t"``."""

    def __init__(self, edges, props=(), final=None, classes=None, deadlock=None):
        self.edges, self.props = edges, list(props)
        if final is not None:
            self.is_final = final
        if classes is not None:
            self.fairness_class = lambda action: classes.get(action)
        if deadlock is not None:
            self.deadlock_property = deadlock

    def init_states(self):
        return [0]

    def successors(self, s):
        return [(f"{s}->{t}", t) for t in self.edges.get(s, ())]

    def properties(self):
        return self.props

    def format_action(self, a):
        return a


def _lasso_ok(v):
    states = v.path.states()
    return v.path.loop_start is not None and states[-1] == states[v.path.loop_start]


SPIN = {0: [0, 1], 1: []}  # 0 may spin forever or move on to 1


def test_a_starved_enabled_exit_is_not_a_counterexample_under_weak_fairness():
    prop = eventually("reaches1", lambda s: s == 1, every_state=True)
    fair = Graph(SPIN, [prop], final=lambda s: True, classes={"0->0": "spin", "0->1": "exit"})
    assert explore(fair).verdict == "holds"


def test_without_fairness_classes_any_cycle_is_a_counterexample():
    prop = eventually("reaches1", lambda s: s == 1, every_state=True)
    [v] = explore(Graph(SPIN, [prop], final=lambda s: True)).violations
    assert _lasso_ok(v) and v.path.states() == [0, 0]


def test_actions_without_a_class_need_no_fairness():
    """A spin whose exit is a user's choice (class None) is a fair cycle."""
    prop = eventually("reaches1", lambda s: s == 1, every_state=True)
    model = Graph(SPIN, [prop], final=lambda s: True, classes={"0->0": "spin"})
    [v] = explore(model).violations
    assert _lasso_ok(v)


def test_weak_fairness_does_not_force_an_exit_that_is_only_sometimes_enabled():
    """The exit is enabled at 0 but not at 2: the cycle 0-2-0 is weakly fair (strong fairness is not covered)."""
    g = {0: [2, 1], 2: [0], 1: []}
    prop = eventually("reaches1", lambda s: s == 1, every_state=True)
    model = Graph(g, [prop], final=lambda s: True, classes={"0->2": "a", "2->0": "b", "0->1": "exit"})
    [v] = explore(model).violations
    assert _lasso_ok(v) and 1 not in v.path.states()


def test_the_lasso_takes_an_edge_of_every_class_that_stays_enabled():
    """In {0, 1}, 'go' is enabled everywhere the loop goes: the printed loop must take it."""
    g = {0: [0, 1], 1: [0, 1, 2], 2: []}
    cls = {"0->0": "spin", "0->1": "go", "1->0": "back", "1->1": "go", "1->2": None}
    prop = eventually("reaches2", lambda s: s == 2, every_state=True)
    [v] = explore(Graph(g, [prop], final=lambda s: True, classes=cls)).violations
    assert _lasso_ok(v)
    loop = [a for a, _ in v.path.steps[v.path.loop_start:]]
    taken = {cls[a] for a in loop}
    enabled_everywhere = {"spin", "go"} & {"back", "go"}
    assert enabled_everywhere <= taken


def test_every_state_obligations_fail_where_from_the_start_they_hold():
    g = {0: [1], 1: [2, 0], 2: []}
    start = eventually("reaches1", lambda s: s == 1)
    assert explore(Graph(g, [start], final=lambda s: True)).verdict == "holds"
    again = eventually("reaches1", lambda s: s == 1, every_state=True)
    [v] = explore(Graph(g, [again], final=lambda s: True)).violations
    assert v.path.last_state == 2 and v.path.loop_start is None


def test_the_shallowest_falsifying_terminal_is_reported():
    g = {0: [1, 2], 1: [3], 2: [4], 3: [], 4: [5], 5: []}
    prop = eventually("never", lambda s: False, every_state=True)
    [v] = explore(Graph(g, [prop], final=lambda s: True)).violations
    assert v.path.states() == [0, 1, 3]


def test_a_warning_is_reported_with_its_path_and_keeps_the_verdict_and_the_search_going():
    g = {0: [1], 1: [2], 2: []}
    props = [always("should", lambda s: s != 1, severity="warning"), always("must", lambda s: s != 2)]
    result = explore(Graph(g, props, final=lambda s: True))
    assert [w.property.name for w in result.warnings] == ["should"]
    assert result.warnings[0].path.last_state == 1
    assert [v.property.name for v in result.violations] == ["must"]  # found beyond the warning
    only = explore(Graph(g, props[:1], final=lambda s: True))
    assert only.verdict == "holds" and len(only.warnings) == 1


def test_severity_is_checked():
    with pytest.raises(ValueError, match="severity"):
        always("p", bool, severity="maybe")


def test_an_optional_witness_that_is_missing_does_not_change_the_verdict():
    g = {0: [1], 1: []}
    props = [sometimes("sees7", lambda s: s == 7, required=False)]
    result = explore(Graph(g, props, final=lambda s: True))
    assert (result.verdict, result.missing_optional, result.missing_required) == ("holds", ["sees7"], [])
    required = explore(Graph(g, [sometimes("sees7", lambda s: s == 7)], final=lambda s: True))
    assert required.verdict == "violated" and required.missing_required == ["sees7"]


def test_a_model_names_its_deadlock_property():
    stuck = Property("NoStuckState", "always", lambda s: True, ("S2",), "stuck")
    [v] = explore(Graph({0: [1], 1: []}, deadlock=stuck)).violations
    assert v.property.name == "NoStuckState" and v.property.rules == ("S2",)


# -- fair ends: a behaviour may stop where only unfair actions (a user's choice, a fault) are enabled --

WAIT = {0: [1], 1: []}  # 0 moves on to 1 only if someone chooses to


def test_a_behaviour_may_end_where_only_an_unfair_action_is_enabled():
    """The user never takes 0->1 (class None): the behaviour ending in 0 owes reaching 1 for ever."""
    prop = eventually("reaches1", lambda s: s == 1, every_state=True)
    [v] = explore(Graph(WAIT, [prop], final=lambda s: True, classes={})).violations
    assert v.property.name == "reaches1" and v.path.states() == [0] and v.path.loop_start is None


def test_a_fair_action_enabled_keeps_the_behaviour_going():
    prop = eventually("reaches1", lambda s: s == 1, every_state=True)
    assert explore(Graph(WAIT, [prop], final=lambda s: True, classes={"0->1": "go"})).verdict == "holds"


def test_without_fairness_classes_no_state_with_a_successor_is_an_end():
    prop = eventually("reaches1", lambda s: s == 1, every_state=True)
    assert explore(Graph(WAIT, [prop], final=lambda s: True)).verdict == "holds"


def test_a_fair_end_beside_a_fair_cycle_is_the_reported_counterexample():
    """0 can spin fairly or wait for a user's 0->1; the finite behaviour stopping in 0 is a counterexample too
    (the spin alone is fair: its only class is taken), and the finite one is reported first."""
    prop = eventually("reaches2", lambda s: s == 2, every_state=True)
    graph = {0: [1], 1: [2], 2: []}
    model = Graph(graph, [prop], final=lambda s: True, classes={"1->2": "go"})
    [v] = explore(model).violations
    assert v.path.states() == [0] and v.path.loop_start is None
