"""The rule monitors inside the explorer (through :class:`RuleMonitors`): they hold on every rfd scenario, each
mutant is caught by its own rule, symmetry keeps the verdicts, and evidence stamps never add explored states."""

from __future__ import annotations

import pytest

from acplab.model.acp.adapter import RuleMonitors
from acplab.model.acp.killers import MUTANT_RULES
from acplab.model.acp.model import AcpModel
from acplab.model.acp.monitor_set import PROXIES, RENAMED, monitor_names, monitor_set
from acplab.model.acp.monitors import CLIENT_MONITORS
from acplab.model.acp.rules import make_monitors
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import FINDINGS, MUTANTS, RFD, SPECS
from acplab.model.acp.witnesses import WITNESSES
from acplab.model.engine import Limits, explore

BIG = {"default", "multi-client", "cancellation", "lost-response", "agent-restart"}


def _model(spec, sc, monitors, symmetry=True):
    return AcpModel(spec, sc.bounds, [WITNESSES[w] for w in sc.witnesses], symmetry=symmetry, monitors=monitors)


@pytest.mark.parametrize("scenario", [pytest.param(n, marks=pytest.mark.slow) if n in BIG else n for n in SCENARIOS])
def test_rule_monitors_hold_on_every_rfd_scenario(scenario):
    """The monitor set, and the trace proxies the set leaves out, flag nothing the RFD's agent does."""
    sc = SCENARIOS[scenario]
    proxies = RuleMonitors([m for m in make_monitors() if m.name in PROXIES], spec=RFD, name="proxies")
    result = explore(_model(RFD, sc, monitor_set() + (proxies,)), Limits(max_seconds=600))
    assert result.verdict == "holds", [v.sentence for v in result.violations]
    assert result.witnesses and not result.missing_witnesses


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_is_caught_by_its_own_rule(name):
    """One adapter per monitor citing a rule of the monitor the mutant breaks: one of them must report it (a
    violation, a warning for a SHOULD monitor, or an unmet ``eventually`` obligation for a hang)."""
    spec = SPECS[name]
    rules = set(MUTANT_RULES[name])
    sc = next(s for s in SCENARIOS.values() if name in s.catches)
    mine = [RuleMonitors([m], spec=spec, name="rule:" + m.name) for m in make_monitors() if rules & set(m.rules)]
    result = explore(AcpModel(spec, sc.bounds, [], symmetry=True, monitors=tuple(mine)), Limits(max_seconds=300))
    found = [v for v in result.violations + result.warnings if v.property.name.startswith("rule:")]
    assert found, f"{name}: none of {[m.name for m in mine]} fired"
    cited = [set(v.sentence.split("[", 1)[1].split("]", 1)[0].split(", ")) for v in found]
    assert any(rules & c for c in cited), [v.sentence for v in found]


def test_a_finding_needs_the_client_view():
    assert set(FINDINGS) == {"echo-after-replay"}  # judged by ViewMatchesHistory, a model monitor that stays


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
