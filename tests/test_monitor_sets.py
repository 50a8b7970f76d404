"""One monitor set: the explorer and the simulator judge with the trace checker's rule monitors.

Each rule monitor is its own property, all fed by one front end; the model monitors that judge what clients
show stay, and nothing else does.  (The set holding on every rfd scenario: tests/test_adapter.py; every mutant
caught citing a rule it breaks: tests/test_properties.py.)
"""

from __future__ import annotations

import json

from acplab.model.acp.model import AcpModel
from acplab.model.acp.monitor_set import PROXIES
from acplab.model.acp.monitors import CLIENT_MONITORS
from acplab.model.acp.rules import make_monitors
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import RFD

from test_cli import run


def test_every_rule_monitor_but_the_proxies_is_a_property_and_only_the_client_view_monitors_stay():
    model = AcpModel(RFD, SCENARIOS["report-order"].bounds)
    names = [p.name for p in model.properties() if p.expectation != "sometimes"]
    rules = {m.name for m in make_monitors() if m.name not in PROXIES}
    assert set(names) == rules | {m.name for m in CLIENT_MONITORS}  # and the engine's NoStuckState
    assert len(names) == len(set(names))


def test_the_cli_checks_with_them_and_has_no_other_set():
    code, out, _ = run("check", "--spec", "reused-id", "--json", "-q")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "violated"
    assert "InsertedIdsDistinct" in {v["property"] for v in doc["violations"]}
    code, _out, err = run("check", "--monitors", "model")
    assert code == 2 and "--monitors" in err


def test_the_simulator_runs_them_too(tmp_path):
    """Faults of every kind on rfd raise nothing; a mutant is caught by its rule."""
    from acplab.simulations.params import SimParams
    from acplab.simulations.simulate import simulate

    faults = dict(drop=0.02, disconnect_rate=0.1, fail=0.1, cancel=0.2, cancel_request=0.1, reject=0.1,
                  restart_rate=0.05)
    clean = simulate(SimParams(spec="rfd", sessions=40, seed=5, **faults)).to_json()
    assert clean["verdict"] == "holds" and clean["counts"]["replays"] > 0 and clean["counts"]["retries"] > 0
    bad = simulate(SimParams(spec="replay-without-reset", sessions=40, seed=5, disconnect_rate=0.1),
                   out=tmp_path / "out").to_json()
    assert bad["verdict"] == "violated" and "ReplayResetsBeforeChunks" in bad["violations"]["first"]


def test_an_old_monitor_name_gets_its_successor_named():
    from acplab.model.errors import InputError
    from acplab.simulations.params import SimParams

    try:
        SimParams(disable_monitors=("EveryPromptAnswered",)).validate()
    except InputError as e:
        assert "EveryPromptAnswered was replaced by PromptsAnswered" in str(e)
    else:
        raise AssertionError("an unknown monitor name was accepted")
