"""The rule monitors inside the explorer (through :class:`RuleMonitors`): they hold on every rfd scenario, each
mutant is caught by its own rule, symmetry keeps the verdicts, and evidence stamps never add explored states."""

from __future__ import annotations

import pytest

from acplab.model.acp.rules_in_model import RuleMonitors
from acplab.model.acp.killers import MUTANT_RULES
from acplab.model.acp.model import AcpModel
from acplab.model.acp.monitor_set import RENAMED, monitor_names
from acplab.model.acp.monitors import CLIENT_MONITORS
from acplab.model.acp.rules import make_monitors
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import FINDINGS, MUTANTS, RFD, SPECS
from acplab.model.acp.witnesses import WITNESSES
from acplab.model.engine import Limits, explore


def _model(spec, sc, monitors, symmetry=True):
    return AcpModel(spec, sc.bounds, [WITNESSES[w] for w in sc.witnesses], symmetry=symmetry, monitors=monitors)


# That the monitor set and the trace proxies it leaves out flag nothing on any rfd scenario is judged in one
# run per scenario with every witness: tests/test_model.py::test_scenario_holds_on_rfd_with_every_witness.


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_is_caught_by_its_own_rule(name):
    """One adapter per monitor citing a rule of the monitor the mutant breaks: one of them must report it (a
    violation, a warning for a SHOULD monitor, or an unmet ``eventually`` obligation for a hang)."""
    spec = SPECS[name]
    rules = set(MUTANT_RULES[name])
    sc = next(s for s in SCENARIOS.values() if name in s.catches)
    mine = [RuleMonitors([m], spec=spec, name="rule:" + m.name) for m in make_monitors() if rules & set(m.rules)]
    model = AcpModel(spec, sc.bounds, [], symmetry=True, monitors=tuple(mine))
    found = _rule_findings(explore(model, Limits(max_seconds=300), stop_on_violation=True))
    if not found:  # a hang: its unmet ``eventually`` needs the whole graph, which a stop (at a deadlock) cuts short
        found = _rule_findings(explore(model, Limits(max_seconds=300)))
    assert found, f"{name}: none of {[m.name for m in mine]} fired"
    cited = [set(v.sentence.split("[", 1)[1].split("]", 1)[0].split(", ")) for v in found]
    assert any(rules & c for c in cited), [v.sentence for v in found]


def _rule_findings(result) -> list:
    return [v for v in result.violations + result.warnings if v.property.name.startswith("rule:")]


def test_each_finding_names_the_monitor_that_judges_it():
    """echo-after-replay needs the client view (ViewMatchesHistory, a model monitor that stays); silent-runtime
    is on the wire (a prompt never answered), and so is lossy-transport (requires_action never resolved);
    reordering-transport happens after the agent's wire, so only the client view (StateViewMatches) sees it."""
    assert {name: spec.breaks for name, spec in FINDINGS.items()} == {
        "echo-after-replay": "ViewMatchesHistory", "silent-runtime": "PromptsAnswered",
        "reordering-transport": "StateViewMatches", "lossy-transport": "RequiresActionResolves"}


def test_symmetry_keeps_the_verdicts():
    sc = SCENARIOS["imported-message"]  # two clients
    plain = explore(_model(RFD, sc, (RuleMonitors(spec=RFD),), symmetry=False), Limits(max_seconds=120))
    reduced = explore(_model(RFD, sc, (RuleMonitors(spec=RFD),), symmetry=True), Limits(max_seconds=120))
    assert plain.verdict == reduced.verdict == "holds" and reduced.stats.states < plain.stats.states
    mutant = SPECS["replay-without-reset"]
    sc = SCENARIOS["streamed-replay"]
    for symmetry in (False, True):
        found = explore(_model(mutant, sc, (RuleMonitors(spec=mutant),), symmetry=symmetry), Limits(max_seconds=120))
        assert found.verdict == "violated"


@pytest.mark.parametrize("scenario", ["report-order", "replay-identity", "failure-outcome", "tool-failure"])
def test_the_front_end_and_stamps_add_no_explored_states(scenario):
    """Bookkeeping that only mirrors the model (pending requests, states, windows) and the evidence stamps
    (constant under the explorer) leave the state count as it is."""
    sc = SCENARIOS[scenario]
    base = explore(_model(RFD, sc, CLIENT_MONITORS), Limits(max_seconds=120)).stats.states
    stateless = [m for m in make_monitors() if not m.fields]
    adapted = explore(_model(RFD, sc, CLIENT_MONITORS + (RuleMonitors(stateless, spec=RFD),)),
                      Limits(max_seconds=120)).stats.states
    assert adapted == base


def test_the_renamed_monitors_are_gone_and_their_successors_are_properties():
    """A spec file or ``disable_monitors`` naming a model monitor of before the swap is told the new names."""
    names = set(monitor_names())
    assert not set(RENAMED) & names
    assert {n for news in RENAMED.values() for n in news} <= names
