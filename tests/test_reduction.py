"""Partial-order reduction keeps every verdict, witness and shortest counterexample length (acp/reduction.py).

Each scenario is run with and without reduction, on rfd and on every mutant and
finding, and the outcomes (verdict, each violated property with its
counterexample length, each witness with its length) must be equal; the
``eventually`` obligations are part of every run.  The diamond test checks the
argument's local conditions on every reachable state the rule reduces.
"""

import pytest

from acplab.model.acp.model import AcpModel, quiescent
from acplab.model.acp.monitor_set import monitor_set
from acplab.model.acp.monitors import CLIENT_MONITORS
from acplab.model.acp.reduction import REVIEWED, reduce, source_digest, why_not
from acplab.model.acp.scenarios import DEFAULT, SCENARIOS
from acplab.model.acp.spec import FINDINGS, MUTANTS, RFD, SPECS
from acplab.model.acp.witnesses import WITNESSES
from acplab.model.engine import explore
from acplab.model.engine.search import Visitor

#: scenarios whose unreduced runs take several seconds each
BIG = {"default", "multi-client", "cancellation", "lost-response"}


def _model(spec, scenario, por, **kw):
    model = AcpModel(spec, scenario.bounds, [WITNESSES[w] for w in scenario.witnesses], symmetry=True, **kw)
    if por:
        reason = reduce(model)
        assert reason is None or (isinstance(reason, str) and reason and not hasattr(model, "ample"))
    return model


def _outcome(result):
    return (
        result.verdict,
        sorted((v.property.name, len(v.path)) for v in result.violations),
        sorted((v.property.name, len(v.path)) for v in result.warnings),
        {name: None if path is None else len(path) for name, path in result.witnesses.items()},
    )


def _compare(spec, scenario, **options):
    plain = explore(_model(spec, scenario, False), **options)
    reduced = explore(_model(spec, scenario, True), **options)
    assert _outcome(reduced) == _outcome(plain), spec.name
    assert reduced.stats.states <= plain.stats.states
    return plain, reduced


#: scenarios of about 40,000 states: every other mutant on them would cost about 4 minutes of one worker (the
#: suite's critical path under --dist loadfile), so they run on rfd and the mutants they catch only
HEAVY = frozenset({"cancel-request-routing", "permission-reconnect"})


def _cases(every_mutant: bool):
    for name in sorted(SCENARIOS):
        specs = [RFD.name, *sorted(set(MUTANTS) | set(FINDINGS))] if every_mutant and name not in BIG | HEAVY \
            else [RFD.name, *SCENARIOS[name].catches]
        for spec in specs:
            slow = every_mutant or name in BIG
            yield pytest.param(spec, name, marks=pytest.mark.slow) if slow else (spec, name)


@pytest.mark.parametrize("spec, scenario", list(_cases(False)))
def test_reduction_keeps_verdicts_witnesses_and_shortest_lengths(spec, scenario):
    """Each scenario on rfd and on the mutants it catches: every property, with and without reduction."""
    _compare(SPECS[spec], SCENARIOS[scenario])


@pytest.mark.slow
@pytest.mark.parametrize("spec, scenario", [c for c in _cases(True) if c.values[0] not in
                                            (RFD.name, *SCENARIOS[c.values[1]].catches)])
def test_reduction_keeps_every_mutant_on_every_scenario(spec, scenario):
    _compare(SPECS[spec], SCENARIOS[scenario])


def test_reduction_keeps_the_first_violations_when_stopping():
    sc = SCENARIOS["identical-prompts"]
    for mutant in sc.catches:
        _compare(SPECS[mutant], sc, stop_on_violation=True)


def test_reduction_keeps_per_property_verdicts_past_violations():
    """The matrix's mode: monitors go on past violations, so every property gets its own counterexample."""
    sc = SCENARIOS["identical-prompts"]
    for mutant in sc.catches:
        plain = explore(_model(SPECS[mutant], sc, False, continue_after_violation=True), expand_violating=True)
        reduced = explore(_model(SPECS[mutant], sc, True, continue_after_violation=True), expand_violating=True)
        assert _outcome(reduced) == _outcome(plain), mutant


def test_the_default_check_is_reduced_and_counterexamples_are_confirmed():
    reduced = explore(_model(RFD, DEFAULT, True))
    assert reduced.reduced and reduced.verdict == "holds"
    assert reduced.stats.states < 53_926 // 4
    mutant = explore(_model(SPECS["reused-id"], SCENARIOS["multi-client"], True))
    assert mutant.reduced and mutant.confirmed is not None and mutant.violations


def test_the_argument_covers_this_model_and_refuses_others():
    assert source_digest() == REVIEWED, "acp/ changed: re-read acp/reduction.py's argument, then update REVIEWED"
    model = _model(RFD, DEFAULT, False)
    assert why_not(model) is None
    unordered = AcpModel(RFD, DEFAULT.bounds._replace(ordered=False))
    assert "unordered" in why_not(unordered)

    class Stranger(type(CLIENT_MONITORS[0])):
        name = "Stranger"

    odd = AcpModel(RFD, DEFAULT.bounds, monitors=monitor_set() + (Stranger(),))
    assert "Stranger" in why_not(odd)
    assert reduce(odd) is not None and not hasattr(odd, "ample")


@pytest.mark.slow
def test_reduction_keeps_per_property_verdicts_past_violations_with_two_clients():
    sc = SCENARIOS["multi-client"]
    for mutant in ("client-matches-by-content", "reused-id"):
        plain = explore(_model(SPECS[mutant], sc, False, continue_after_violation=True), expand_violating=True)
        reduced = explore(_model(SPECS[mutant], sc, True, continue_after_violation=True), expand_violating=True)
        assert _outcome(reduced) == _outcome(plain), mutant
        assert reduced.stats.states <= plain.stats.states


def test_a_model_the_argument_does_not_cover_is_searched_unreduced_with_a_reason():
    model = AcpModel(RFD, DEFAULT.bounds, [WITNESSES[w] for w in DEFAULT.witnesses], symmetry=True)
    reason = why_not(model)
    assert reason is None or reduce(model) == reason
    unordered = AcpModel(RFD, DEFAULT.bounds._replace(ordered=False))
    assert "unordered" in why_not(unordered)


class _States(Visitor):
    def __init__(self):
        self.states = []

    def state(self, idx, state):
        self.states.append(state)


def _diamonds(model):
    """Check C1 and C2 locally on every reachable state the rule reduces: the delivery ``d`` and every
    other enabled action ``a`` commute (the same states and events either way), ``d`` stays enabled
    after ``a``, and ``d`` changes no obligation, no fairness class and no verdict."""
    seen = _States()
    explore(model, visitor=seen)
    reduce(model)
    fair = model.fairness_class
    props = [p for p in model.properties() if p.expectation != "sometimes"]
    reduced = 0
    for w in seen.states:
        pairs = model.ample(w)
        if pairs is None:
            continue
        reduced += 1
        ordinal, (d, wd, devs) = pairs[0]
        assert not quiescent(wd)
        assert [p.condition(wd) for p in props] == [p.condition(w) for p in props]
        assert {fair(x) for x in model.actions(wd)} == {fair(x) for x in model.actions(w)}
        for a in model.actions(w):
            if a == d:
                continue
            wa, aevs = model.step(w, a)
            assert a in model.actions(wd), (d, a)
            wda, daevs = model.step(wd, a)
            if wa.violation is not None:  # a behaviour ends there: the same verdict after d
                assert (wda.violation, wda.more, daevs) == (wa.violation, wa.more, aevs), (d, a)
                continue
            assert d in model.actions(wa), (d, a)
            wad, adevs = model.step(wa, d)
            assert wad == wda and adevs == devs and daevs == aevs, (d, a)
    return reduced


@pytest.mark.parametrize("spec, scenario", [pytest.param("rfd", "default", marks=pytest.mark.slow), ("rfd", "multi-client"),
                                            ("client-matches-by-content", "multi-client"),
                                            ("reused-id", "multi-client"), ("rfd", "placement")])
def test_every_reduced_delivery_commutes_with_every_other_enabled_step(spec, scenario):
    sc = SCENARIOS[scenario]
    model = AcpModel(SPECS[spec], sc.bounds, [WITNESSES[w] for w in sc.witnesses])
    assert _diamonds(model) > 0 or spec != "rfd"


def test_a_reduced_lasso_is_replaced_by_the_unreduced_one():
    """A lasso's length is the liveness pass's pick on the graph it gets: por.confirm re-runs unreduced."""
    plain, reduced = _compare(SPECS["never-idles"], DEFAULT)
    assert reduced.reduced and reduced.confirmed == plain.stats.states
    assert any(v.path.loop_start is not None for v in reduced.violations)
    assert reduced.stats.states < plain.stats.states
