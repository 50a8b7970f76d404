"""``check --monitors rules``: the explorer judges with the trace checker's rule monitors (issue 12, item 1).

Each rule monitor is its own property, all fed by one front end; the model monitors that judge what clients
show stay.  The set must hold on the rfd scenarios, reach their witnesses, and catch every mutant with a
property citing a rule of the monitor the mutant breaks.
"""

from __future__ import annotations

import json

import pytest

from acplab.model.acp.adapter import KEPT_MODEL_MONITORS, PROXIES, rule_monitor_set
from acplab.model.acp.model import AcpModel
from acplab.model.acp.monitors import ALL_MONITORS
from acplab.model.acp.rules import make_monitors
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import MUTANTS, RFD, SPECS
from acplab.model.acp.witnesses import WITNESSES
from acplab.model.engine import Limits, explore

from test_cli import run

BIG = {"default", "multi-client", "cancellation", "lost-response", "agent-restart", "cancel-request-routing",
       "permission-reconnect"}
RULES_OF = {m.name: set(m.rules) for m in ALL_MONITORS}


def _explore(spec, sc):
    model = AcpModel(spec, sc.bounds, [WITNESSES[w] for w in sc.witnesses], symmetry=True,
                     monitors=rule_monitor_set(spec))
    return model, explore(model, Limits(max_seconds=300))


def test_every_rule_monitor_but_the_proxies_is_a_property_and_the_client_view_monitors_stay():
    model = AcpModel(RFD, SCENARIOS["report-order"].bounds, monitors=rule_monitor_set(RFD))
    names = {p.name for p in model.properties()}
    assert {m.name for m in make_monitors() if m.name not in PROXIES} <= names
    assert set(KEPT_MODEL_MONITORS) <= names and not set(PROXIES) & names


@pytest.mark.parametrize("scenario", sorted(set(SCENARIOS) - BIG))
def test_the_rule_monitors_hold_on_every_rfd_scenario(scenario):
    """The big scenarios are left to tests/test_adapter.py, which runs the same rule monitors on every one."""
    _model, result = _explore(RFD, SCENARIOS[scenario])
    assert result.verdict == "holds", [v.sentence for v in result.violations]
    assert not result.missing_witnesses


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_mutant_is_caught_by_a_property_citing_its_own_rule(name):
    spec = SPECS[name]
    sc = next(s for s in SCENARIOS.values() if name in s.catches)
    _model, result = _explore(spec, sc)
    own = RULES_OF[spec.breaks]
    hits = [v for v in result.violations + result.warnings if set(v.property.rules) & own]
    assert hits, (name, [(v.property.name, v.sentence) for v in result.violations + result.warnings])


def test_the_cli_runs_them_and_says_so():
    code, out, _ = run("check", "--monitors", "rules", "--spec", "reused-id", "--json", "-q")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "violated" and doc["monitors"] == "rules"
    assert "InsertedIdsDistinct" in {v["property"] for v in doc["violations"]}
    code, out, err = run("check", "--model", "twophase", "--monitors", "rules")
    assert code == 2 and "--monitors does not apply to --model twophase" in err


def test_the_simulator_runs_them_too(tmp_path):
    """``simulate --set monitors=rules``: faults of every kind on rfd raise nothing; a mutant is caught by its rule."""
    from acplab.simulations.params import SimParams
    from acplab.simulations.simulate import simulate

    faults = dict(drop=0.02, disconnect_rate=0.1, fail=0.1, cancel=0.2, cancel_request=0.1, reject=0.1,
                  restart_rate=0.05)
    clean = simulate(SimParams(spec="rfd", sessions=40, seed=5, monitors="rules", **faults)).to_json()
    assert clean["verdict"] == "holds" and clean["counts"]["replays"] > 0 and clean["counts"]["retries"] > 0
    bad = simulate(SimParams(spec="replay-without-reset", sessions=40, seed=5, disconnect_rate=0.1,
                             monitors="rules"), out=tmp_path / "out").to_json()
    assert bad["verdict"] == "violated" and "ReplayResetsBeforeChunks" in bad["violations"]["first"]
