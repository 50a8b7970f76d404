"""Liveness that a pending user choice cannot hide (model/acp/fairness.py) and the hook withdrawn by $/cancel_request.

A behaviour may end wherever no fair action is enabled; the model relies on every such state that is not at rest
owing some obligation (so ``NoStuckState``'s meaning is judged there through the obligations): checked here on
every reachable state of small scenarios.
"""

import pytest

from acplab.model.acp.fairness import fairness_class
from acplab.model.acp.model import AcpModel, Bounds
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import SPECS, RFD
from acplab.model.acp.witnesses import WITNESSES
from acplab.model.engine import explore


def _reachable(model, limit=20000):
    seen, frontier = set(), list(model.init_states())
    while frontier and len(seen) < limit:
        w = frontier.pop()
        if w in seen:
            continue
        seen.add(w)
        frontier += [s[1] for s in model.successors(w)]
    return seen


@pytest.mark.parametrize("spec, scenario", [("rfd", "hooks-and-cancels"), ("hook-left-running", "hooks-and-cancels"),
                                            ("ends-only-on-cancel", "hooks-and-cancels"), ("rfd", "permission-cancel"),
                                            ("rfd", "failure-outcome")])
def test_every_fair_end_not_at_rest_owes_an_obligation(spec, scenario):
    model = AcpModel(SPECS[spec], SCENARIOS[scenario].bounds)
    obligations = [p for p in model.properties() if p.expectation == "eventually"]
    ends = 0
    for w in _reachable(model):
        if model.is_final(w) or any(fairness_class(a) is not None for a in model.actions(w)):
            continue
        ends += 1
        assert any(not p.condition(w) for p in obligations), w  # stuck, and nothing owed
    assert ends or spec == "rfd"


def test_user_choices_and_faults_are_unfair_and_system_steps_fair():
    from acplab.model.acp.events import Action

    assert fairness_class(Action("client", "cancel", (0,))) is None
    assert fairness_class(Action("client", "submit", (0, "hi"))) is None
    assert fairness_class(Action("client", "reconnect", (0, True))) is None
    assert fairness_class(Action("net", "cut", (0,))) is None
    assert fairness_class(Action("agent", "fail", ())) is None
    assert fairness_class(Action("agent", "finish", ())) == ("agent", "finish")
    assert fairness_class(Action("net", "deliver_to_agent", (1,))) == ("deliver_to_agent", 1)
    assert fairness_class(Action("client", "answer_permission", (0, 1, True))) == ("client", "answer_permission", 0)


def _check(spec, bounds, witnesses=()):
    model = AcpModel(spec, bounds, [WITNESSES[n] for n in witnesses])
    model.witnesses_required = False
    return explore(model)


def test_the_withdrawn_hook_ends_cancelled_and_the_mutant_is_caught_even_when_a_cancel_is_left():
    bounds = Bounds(clients=1, prompts=1, hooks=True, cancel_requests=1)
    assert _check(RFD, bounds).verdict == "holds"
    for cancels in (0, 1):
        result = _check(SPECS["hook-left-running"], bounds._replace(cancels=cancels))
        assert "WorkEndsWithIdle" in {v.property.name for v in result.violations}, cancels


def test_work_that_ends_only_on_cancel_is_caught_with_a_cancel_available():
    result = _check(SPECS["ends-only-on-cancel"], Bounds(clients=1, prompts=1, cancels=1))
    assert [v.property.name for v in result.violations] == ["WorkEndsWithIdle"]
    assert result.violations[0].path.loop_start is None  # a finite behaviour: the user never cancels


@pytest.mark.parametrize("bound, value, witness", [
    ("cancel_requests", 0, "hook_withdrawn_by_cancel_request"), ("early_ids", False, "hook_withdrawn_by_cancel_request"),
    ("hooks", False, "hook_withdrawn_by_cancel_request"), ("cancels", 0, "hook_cancelled_by_session_cancel"),
    ("hooks", False, "hook_cancelled_by_session_cancel"), ("early_ids", False, "id_assigned_before_insertion"),
])
def test_each_witness_of_hooks_and_cancels_needs_its_bound(bound, value, witness):
    sc = SCENARIOS["hooks-and-cancels"]
    assert _check(RFD, sc.bounds, [witness]).witnesses[witness] is not None
    assert _check(RFD, sc.bounds._replace(**{bound: value}), [witness]).witnesses[witness] is None


# -- forgetting under a retention policy (R4) --


def test_a_forget_is_needed_for_the_forgotten_message_witness():
    sc = SCENARIOS["retention-forget"]
    assert _check(RFD, sc.bounds, ["forgotten_not_replayed"]).witnesses["forgotten_not_replayed"] is not None
    without = _check(RFD, sc.bounds._replace(forgets=0), ["forgotten_not_replayed"])
    assert without.witnesses["forgotten_not_replayed"] is None


def test_no_forget_budget_leaves_the_state_space_unchanged():
    from acplab.model.acp.state import Budget

    bounds = SCENARIOS["replay-identity"].bounds
    assert bounds.forgets == 0 and Budget().forgets == 0
    assert not any(a.name == "forget" for w in _reachable(AcpModel(RFD, bounds)) for a in AcpModel(RFD, bounds).actions(w))


def _first_violated(spec, scenario, only=None):
    from acplab.model.acp.monitor_set import monitor_set

    model = AcpModel(spec, SCENARIOS[scenario].bounds, monitors=monitor_set(only=only), symmetry=True)
    result = explore(model, stop_on_violation=True)
    assert result.complete or result.violations
    return [v.property.name for v in result.violations]


def test_the_renumbering_mutant_is_killed_by_r5s_rule_monitor_where_a_user_message_moves():
    """When the trim moves a user message onto the forgotten one's ID, RetainedMessagesReplayed (R5) sees it
    first; with one prompt (retention-forget) only an agent message moves and the client view sees it."""
    spec = SPECS["replay-renumbered-after-forget"]
    assert _first_violated(spec, "retention-trim") == ["RetainedMessagesReplayed"]
    assert _first_violated(spec, "retention-forget") == ["ViewMatchesHistory"]


def test_r5s_rule_monitor_misses_the_renumbering_when_only_an_agent_message_moves():
    """RetainedMessagesReplayed follows user messages only (insert events name no agent output)."""
    assert _first_violated(SPECS["replay-renumbered-after-forget"], "retention-forget",
                           only={"RetainedMessagesReplayed"}) == []
