"""Every property can fail: each has a killer that is re-checked here; liveness under weak fairness;
lassos told as stories; stuck states named; honest verdicts on user-chosen bounds."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acplab.model.acp import client as cl
from acplab.model.acp.killers import (KILLERS, MUTANT_RULES, Claim, capture_killers, claims, property_names, reproduce,
                                      shorter_exists)
from acplab.model.acp.model import AcpModel
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import MUTANTS, RFD, SPECS
from acplab.model.acp.state import Client
from acplab.model.app.checking import acp_model, property_rows
from acplab.model.engine import explore
from acplab.model.render.mermaid import mermaid
from acplab.model.render.traces import step_trace
from acplab.model.wire import PromptResult, Update, AgentMessageChunk, UserMessage

ROOT = Path(__file__).resolve().parents[1]


def test_every_property_has_a_killer_and_every_claim_names_real_things():
    """A model mutant, or (for a rule monitor no model behaviour reaches) a capture case that trace check flags
    (re-checked in tests/test_rule_monitors.py)."""
    assert set(KILLERS) | set(capture_killers()) >= set(property_names())
    assert set(KILLERS) <= set(property_names())
    for name, pairs in KILLERS.items():
        assert pairs, f"{name} has no killer"
        for spec, scenario in pairs:
            assert spec in SPECS and scenario in SCENARIOS, (name, spec, scenario)


def test_every_mutant_is_claimed_as_a_killer_of_the_property_it_breaks():
    claimed = {(c.property, c.spec) for c in claims()}
    for name, spec in MUTANTS.items():
        assert (spec.breaks, name) in claimed, name


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_is_caught_citing_a_rule_it_breaks(name):
    """The catching monitor checks several rules; its finding names one the mutant breaks (MUTANT_RULES)."""
    claim = next(c for c in claims() if c.spec == name and c.property == SPECS[name].breaks)
    v = reproduce(claim)
    cited = v.sentence.rsplit("(", 1)[-1].rstrip(")").split(", ")
    assert set(cited) & set(MUTANT_RULES[name]), (name, v.sentence)


@pytest.mark.parametrize("claim", claims(), ids=lambda c: f"{c.property}-{c.spec}-{c.scenario}")
def test_each_killer_claim_reproduces_with_a_shortest_counterexample(claim):
    first = reproduce(claim)
    assert first is not None, claim
    again = reproduce(claim)
    assert again.path.ordinals == first.path.ordinals and again.sentence == first.sentence  # reproducible
    if first.property.expectation == "always":
        assert not shorter_exists(claim, len(first.path))


def test_properties_listing_has_the_contract_fields():
    rows = property_rows()
    assert [r["name"] for r in rows] == property_names()
    for r in rows:
        assert set(r) >= {"name", "expectation", "rules", "wire", "killed_by"}
        assert r["expectation"] in ("always", "eventually") and r["killed_by"]
        assert r["rules"] or r["name"] == "WellFormedJsonRpc"  # JSON-RPC 2.0 framing: no catalogue rule
    by_name = {r["name"]: r for r in rows}
    assert by_name["PromptsAnswered"]["expectation"] == "eventually"
    assert {"capture": "no-jsonrpc-member", "rule": None} in by_name["WellFormedJsonRpc"]["killed_by"]
    assert by_name["ErrorIdleCarriesErrorObject"]["level"] == "warning"


# -- liveness on the ACP model ------------------------------------------------------------


def test_weak_fairness_keeps_silent_work_from_being_a_counterexample():
    """slow-work lets the runtime work silently for ever; only an unfair scheduler never finishes it."""
    sc = SCENARIOS["slow-work"]
    fair = AcpModel(RFD, sc.bounds, symmetry=True)
    assert explore(fair).verdict == "holds"
    unfair = AcpModel(RFD, sc.bounds, symmetry=True)
    unfair.fairness_class = None  # no fairness at all: every cycle counts, and no state with a step ends a behaviour
    violations = explore(unfair).violations
    assert violations and all(v.path.loop_start is not None for v in violations)
    assert "WorkEndsWithIdle" in {v.property.name for v in violations}
    nothing_fair = AcpModel(RFD, sc.bounds, symmetry=True)
    nothing_fair.fairness_class = lambda action: None  # every action unfair: a behaviour may stop anywhere
    stopped = explore(nothing_fair).violations
    assert stopped and all(v.path.loop_start is None for v in stopped)


def test_work_that_never_ends_is_a_finite_behaviour_where_only_silent_work_is_left():
    """Silent work is not fair: the behaviour may stop where nothing else is enabled, and owes its idle there."""
    v = reproduce(Claim("WorkEndsWithIdle", "never-idles", "report-order"))
    assert v.path.loop_start is None
    model = AcpModel(SPECS["never-idles"], SCENARIOS["report-order"].bounds)
    assert [a.name for a in model.actions(v.path.last_state)] == ["keep_working"]


def test_work_that_never_ends_is_a_lasso_told_as_a_story():
    """Without fairness classes every cycle counts (and no state with a step ends a behaviour): a lasso."""
    model = AcpModel(SPECS["never-idles"], SCENARIOS["report-order"].bounds)
    model.fairness_class = None
    v = next(v for v in explore(model).violations if v.property.name == "WorkEndsWithIdle")
    path = v.path
    states = path.states()
    assert path.loop_start is not None and states[-1] == states[path.loop_start]
    steps = path.actions_with_effects()
    text = step_trace(model, steps, "never-idles", v.sentence, path.loop_start)
    assert f"from here step {len(steps)} repeats forever" in text  # one silent step, again and again
    assert "agent keeps working" in text
    diagram = mermaid(steps, 1, "never-idles", (v.property.name, v.sentence), v.property.rules, path.loop_start)
    assert "    loop repeats forever" in diagram and diagram.count("\n    end") >= 2


def test_a_stuck_state_is_named_and_says_what_is_owed():
    v = reproduce(Claim("NoStuckState", "never-answers", "report-order"))
    assert v.property.rules and "c1's prompt #1" in v.sentence and "not answered" in v.sentence


# -- placement ------------------------------------------------------------


def test_the_client_moves_its_copy_to_where_the_report_places_it():
    """The response binds the optimistic copy; the report, not the response, gives its position (P1)."""
    client, _ = cl.submit(Client(), 0, ("hi",), RFD)
    client, _ = cl.receive(client, 0, PromptResult(1, "m1"), RFD)
    client, _ = cl.receive(client, 0, Update("s1", AgentMessageChunk("a0", "x")), RFD)
    assert [i.mid for i in client.feed] == ["m1", "a0"]  # still the local copy, where the user typed it
    client, _ = cl.receive(client, 0, Update("s1", UserMessage("m1", ("hi",))), RFD)
    assert [(i.mid, i.provisional) for i in client.feed] == [("a0", False), ("m1", False)]


# -- honest verdicts on user bounds ------------------------------------------------------------


def test_with_user_bounds_an_unreachable_witness_is_a_warning_not_a_violation():
    model, _ = acp_model("rfd", "multi-client", True, clients=1)
    result = explore(model)
    assert result.verdict == "holds"
    assert sorted(result.missing_optional) == ["other_client_renders", "two_clients_submitted"]
    own, _ = acp_model("rfd", "multi-client", True, clients=2)  # the scenario's own value: still required
    assert own.witnesses_required


def _cli(*args):
    proc = subprocess.run([sys.executable, "-m", "acplab.model.app.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def test_cli_reports_missing_witnesses_of_user_bounds_as_warnings(tmp_path):
    code, out, err = _cli("check", "--scenario", "multi-client", "--clients", "1", "--json", "--out", str(tmp_path / "o"))
    data = json.loads(out)
    assert code == 0, err
    assert data["verdict"] == "holds" and data["violations"] == []
    names = {w["property"] for w in data["warnings"]}
    assert names == {"other_client_renders", "two_clients_submitted"}


def test_cli_reports_a_should_as_a_warning_with_its_files_and_exit_0(tmp_path):
    code, out, err = _cli("check", "--spec", "error-without-details", "--scenario", "failure-after-insertion",
                          "--json", "--out", str(tmp_path / "o"))
    data = json.loads(out)
    assert code == 0, err
    [w] = data["warnings"]
    assert w["property"] == "ErrorIdleCarriesErrorObject" and w["rules"] == ["E3", "E5"]
    assert "no error object" in w["sentence"] and any(f.endswith(".mmd") for f in w["files"])


def test_cli_properties_json_has_a_killer_for_every_property():
    code, out, err = _cli("properties", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert {r["name"] for r in rows} == set(property_names())
    assert all(r["killed_by"] for r in rows)


# -- symmetry ------------------------------------------------------------


class _Keep:
    """A visitor that keeps every explored state."""

    def __init__(self):
        self.states = []

    def state(self, idx, state):
        self.states.append(state)

    def edge(self, src, dst, successor):
        pass


@pytest.mark.parametrize("scenario", ["placement", "agent-initiated-work"])
def test_every_monitor_renames_its_bookkeeping_consistently(scenario):
    """Swapping the two clients twice gives the bookkeeping back; swapping once keeps it hashable."""
    model = AcpModel(RFD, SCENARIOS[scenario].bounds)
    keep = _Keep()
    explore(model, visitor=keep)
    swap = {0: 1, 1: 0}
    seen = 0
    for w in keep.states:
        for m, value in zip(model.monitors, w.mon):
            if not value:
                continue
            once = m.rename_clients(value, swap)
            hash(once)
            assert m.rename_clients(once, swap) == value, (m.name, value)
            seen += 1
    assert seen > 100
