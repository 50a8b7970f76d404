"""The generic explorer, validated on TwoPhase against published counts and on tiny graphs."""

from itertools import permutations

import pytest

from acplab.model.engine import Limits, always, eventually, explore, sometimes
from acplab.model.engine.twophase import TwoPhase, view


@pytest.mark.parametrize("n, states, depth", [(1, 12, 5), (3, 288, 11), (5, 8832, 17)])
def test_twophase_matches_published_state_counts(n, states, depth):
    result = explore(TwoPhase(n))
    assert (result.verdict, result.stats.states, result.stats.depth) == ("holds", states, depth)
    assert result.missing_witnesses == []


def test_broken_twophase_shortest_counterexample_is_pinned():
    model = TwoPhase(3, broken=True)
    result = explore(model)
    assert result.verdict == "violated"
    [violation] = result.violations
    assert violation.property.name == "Consistent"
    labels = [model.format_action(a) for a, _ in violation.path.steps]
    assert labels == ["TMCommit", "RMChooseToAbort(rm1)", "RMRcvCommitMsg(rm2)"]
    assert violation.path.last_state[0] == ("aborted", "committed", "working")


def _orbits(n):
    """Brute force: states of TwoPhase(n) up to permutation of the RMs."""
    model = TwoPhase(n)
    seen, todo = set(model.init_states()), list(model.init_states())
    while todo:
        for _, nxt in model.successors(todo.pop()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    def canon(state):
        s = view(state)
        return min(
            (tuple(s.rm[i] for i in p), tuple(s.tm_prepared >> i & 1 for i in p), tuple(s.msg_prepared >> i & 1 for i in p))
            for p in permutations(range(n))
        ) + (s.tm, s.msg_commit, s.msg_abort)
    return len({canon(s) for s in seen})


@pytest.mark.parametrize("n", [3, 4])
def test_twophase_symmetry_counts_one_state_per_orbit(n):
    result = explore(TwoPhase(n, symmetry=True))
    assert result.stats.states == _orbits(n)
    assert result.verdict == "holds"


def test_symmetry_keeps_the_broken_verdict_and_trace_length():
    plain = explore(TwoPhase(4, broken=True))
    reduced = explore(TwoPhase(4, broken=True, symmetry=True))
    assert reduced.stats.states < plain.stats.states
    assert [len(v.path) for v in reduced.violations] == [len(v.path) for v in plain.violations]


class Graph:
    """A transition system given as an adjacency dict over small ints."""

    def __init__(self, edges, props=(), inits=(0,), final=None):
        self.edges, self.props, self.inits = edges, list(props), list(inits)
        if final is not None:
            self.is_final = final

    def init_states(self):
        return self.inits

    def successors(self, s):
        return [(f"{s}->{t}", t) for t in self.edges.get(s, ())]

    def properties(self):
        return self.props

    def format_action(self, a):
        return a


def test_limits_make_the_verdict_incomplete_never_holds():
    result = explore(TwoPhase(5), Limits(max_states=100))
    assert (result.complete, result.verdict) == (False, "incomplete")
    assert result.limit == "max states 100"


def test_deadlock_is_reported_unless_the_state_is_final():
    g = {0: [1], 1: [2]}
    result = explore(Graph(g))
    assert [v.property.name for v in result.violations] == ["deadlock"]
    assert len(result.violations[0].path) == 2
    assert explore(Graph(g, final=lambda s: s == 2)).verdict == "holds"


def test_eventually_finds_a_terminal_state_that_never_satisfies_it():
    g = {0: [1, 2], 1: [3], 2: [], 3: []}
    prop = eventually("reaches3", lambda s: s == 3)
    model = Graph(g, [prop], final=lambda s: True)
    [v] = explore(model).violations
    assert v.path.last_state == 2 and v.path.loop_start is None


def test_eventually_finds_a_cycle_as_a_lasso():
    g = {0: [1], 1: [2, 4], 2: [3], 3: [1], 4: []}
    prop = eventually("reaches4", lambda s: s == 4)
    [v] = explore(Graph(g, [prop], final=lambda s: True)).violations
    states = v.path.states()
    assert states[-1] == states[v.path.loop_start] and 4 not in states


def test_eventually_holds_when_every_path_passes_through_it():
    g = {0: [1], 1: [2, 0], 2: []}
    prop = eventually("reaches2-or-1", lambda s: s == 1)
    assert explore(Graph(g, [prop], final=lambda s: True)).verdict == "holds"


def test_missing_witness_is_reported_and_found_witness_has_a_path():
    g = {0: [1], 1: []}
    props = [sometimes("sees1", lambda s: s == 1), sometimes("sees7", lambda s: s == 7)]
    result = explore(Graph(g, props, final=lambda s: True))
    assert result.missing_witnesses == ["sees7"]
    assert result.witnesses["sees1"].last_state == 1


def test_duplicate_property_names_are_rejected_with_a_hint():
    props = [always("p", bool), always("p", bool)]
    with pytest.raises(ValueError, match="unique name"):
        explore(Graph({0: []}, props))


def test_the_hooks_protocol_declares_exactly_the_hooks_the_engine_reads():
    from acplab.model.engine.hooks import HOOKS, Model, hooks_of

    declared = {n for n in vars(Model) if not n.startswith("_")} | set(Model.__annotations__)
    assert declared == set(HOOKS)
    hooks = hooks_of(TwoPhase(3))
    assert hooks.check_deadlock is False and hooks.action_kind is not None and hooks.ample is None
