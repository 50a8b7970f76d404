"""The matrix's strongest builds, faults as columns, client strategies and the assumptions of each cell.

Each alternative's strongest build is checked on the smallest bounds that
show its mechanism at work (its naive build fails the same goal there);
faults and strategies are checked through their planning and their cells,
on synthetic runs where the exploration adds nothing.
"""

import sys

import pytest

from acplab.model.acp.bounds import Bounds
from acplab.model.acp.goals import GOALS
from acplab.model.acp.model import AcpModel
from acplab.model.acp.monitor_set import monitor_set
from acplab.model.acp.spec import RFD, SPECS, VARIANTS, Spec
from acplab.model.app import matrix as mx
from acplab.model.app import matrix_faults as mf
from acplab.model.engine import explore


def _goals_violated(spec: Spec, bounds: Bounds) -> set[str]:
    model = AcpModel(spec, bounds, monitors=monitor_set() + GOALS, symmetry=True, continue_after_violation=True)
    result = explore(model, expand_violating=True)
    assert result.complete
    return {v.property.name for v in result.violations}


#: (design, goal, bounds): the strongest build meets the goal where its naive build fails it
STRONGER = (
    ("v2-draft", "NoDuplicateMessages", Bounds(clients=1, prompts=1)),
    ("prompt-as-notification", "OutcomeKnown", Bounds(clients=1, prompts=1, failures=1)),
    ("failed-state", "StateAgrees", Bounds(clients=1, prompts=1, failures=1)),
    ("separate-error-update", "OutcomeKnown", Bounds(clients=1, prompts=1, failures=1, disconnects=1)),
    ("error-sibling-field", "OutcomeKnown", Bounds(clients=1, prompts=2, failures=1)),
)


@pytest.mark.parametrize("design,goal,bounds", STRONGER, ids=[s[0] for s in STRONGER])
def test_the_strongest_build_meets_the_goal_its_naive_build_fails(design, goal, bounds):
    assert goal in _goals_violated(SPECS[f"{design}-naive"], bounds)
    assert goal not in _goals_violated(SPECS[design], bounds)


def test_the_collision_rule_rejects_a_prompt_whose_chosen_id_is_taken():
    """(Two clients' colliding IDs are the multi-client scenario's, too big for a test: the full matrix shows
    NoMisattribution violated on the naive row there; here, the rule itself.)"""
    from acplab.model.acp import agent as ag
    from acplab.model.acp.state import SESSION, Agent, Entry
    from acplab.model.wire import Prompt

    taken = Agent()._replace(history=(Entry("k1", "user", ("yes",), True, "prompt", (0, 0, 1)),))
    again = Prompt(1, SESSION, ("yes",), "k1")
    after, out = ag._receive_prompt(taken, 1, 0, again, SPECS["client-chosen-id"])
    assert after == taken and [m.msg.kind for m in out if hasattr(m, "msg")] == ["error_response"]
    after, _ = ag._receive_prompt(taken, 1, 0, again, SPECS["client-chosen-id-naive"])
    assert len(after.reqs) == 1  # no collision rule: held, to be inserted under the taken ID


def test_a_token_binds_live_only_by_token_and_after_a_cut_under_response_live_token_after_cut():
    from acplab.model.acp import client as cl
    from acplab.model.acp.state import SESSION, Client
    from acplab.model.wire import Update, UserMessage

    report = Update(SESSION, UserMessage("m1", ("yes",), "p1"))
    for strategy, live_bound in (("token", True), ("token_after_cut", False)):
        spec = RFD._replace(client_correlation=strategy)
        client, _ = cl.submit(Client(), 0, ("yes",), spec, 1)
        live, _ = cl.receive(client, 0, report, spec)
        assert (live.subs[0].mid == "m1") is live_bound, strategy
        cut, _ = cl.reconnect(cl.disconnected(client), 0, True, spec)
        replayed, _ = cl.receive(cut, 0, report, spec)
        assert replayed.subs[0].mid == "m1", strategy  # after a cut the token binds under both


def test_every_alternative_lists_its_mechanisms_and_every_naive_row_says_so():
    from acplab.model.acp.mechanisms import MECHANISMS

    for name, spec in VARIANTS.items():
        if name.endswith("-naive"):
            assert name[: -len("-naive")] in VARIANTS and spec.description.startswith("naive build")
        elif name not in ("rfd-as-written", "v1"):
            assert MECHANISMS.get(name), f"{name}: list its mechanisms and where each comes from"


def test_the_rfd_own_generator_failing_is_a_column_on_rfd_too():
    """restart-resets-ids applies to every row whose agent mints IDs, rfd first; colliding client generators
    to every row with a client-minted identifier, and to no other."""
    planned = {name: mf.fault_runs(SPECS[name] if name != "rfd" else RFD, {}) for name in ["rfd", *VARIANTS]}
    assert not isinstance(planned["rfd"]["restart-resets-ids"], str)
    assert isinstance(planned["rfd"]["colliding-generators"], str)
    minted = {n for n, p in planned.items() if not isinstance(p["colliding-generators"], str)}
    assert minted == {"client-correlation-token", "client-correlation-token-naive", "client-chosen-id",
                      "client-chosen-id-naive", "prompt-as-notification"}
    faulted, base, scenario, _, _ = planned["rfd"]["restart-resets-ids"]
    assert base == RFD and faulted.ids_survive_restart is False and scenario == "agent-restart"
    # a bound fault: the baseline runs the same scenario without it, and the row's build keeps it (a token row)
    *_, with_fault, without = planned["client-correlation-token"]["colliding-generators"]
    assert with_fault == {"colliding_ids": True} and without == {}
    assert mx._bounds(SPECS["client-correlation-token"], "multi-client", with_fault).colliding_ids


def _run(*violations, complete=True):
    return {"complete": complete, "violations": [{"property": p, "length": n, "sentence": p, "files": []}
                                                 for p, n in violations]}


def test_a_fault_cell_lists_only_the_goals_the_fault_adds():
    goals = ["NoMisattribution", "OutcomeKnown"]
    base = _run(("OutcomeKnown", 4))
    # adds nothing, but the row fails the goal without the fault too: said, not hidden behind a ✓
    assert mf.fault_cell(goals, _run(("OutcomeKnown", 3)), base) == ("holds", {"already": ["OutcomeKnown"]})
    assert mf.fault_cell(goals, _run(), _run()) == ("holds", {})
    cell, detail = mf.fault_cell(goals, _run(("NoMisattribution", 9), ("NoMisattribution", 7)), base)
    assert cell == "violated" and detail["goals"]["NoMisattribution"]["length"] == 7
    assert mf.fault_cell(goals, _run(complete=False), base)[0] == "incomplete"


def test_strategies_are_ranked_by_the_goals_they_violate():
    cells = {"a": {"G1": "violated", "G2": "violated"}, "b": {"G1": "holds", "G2": "n/a"}, "c": {"G1": "violated"}}
    summary = mf.strategy_summary(cells, ["G1", "G2"])
    assert (summary["best"], summary["worst"]) == ("b", "a") and summary["violated"]["c"] == ["G1"]


def test_tied_strategies_are_named_and_faults_break_the_tie():
    cells = {"by-token": {"G": "holds"}, "after-cut": {"G": "holds"}, "by-response": {"G": "violated"}}
    tied = mf.strategy_summary(cells, ["G"])
    assert (tied["best"], tied["tied_best"], tied["worst"]) == ("by-token", ["after-cut"], "by-response")
    broken = mf.strategy_summary(cells, ["G"], {"by-token": ["NoMisattribution under colliding-generators"]})
    assert (broken["best"], broken["tied_best"]) == ("after-cut", [])


def test_a_row_differs_from_rfd_under_a_fault_only_where_both_have_the_obligation():
    faults = {"rfd": {"f": {"cell": "holds"}, "g": {"cell": "n/a", "reason": "x"}},
              "a": {"f": {"cell": "violated", "goals": {"OutcomeKnown": {}}}, "g": {"cell": "holds"}},
              "b": {"f": {"cell": "holds", "already": ["OutcomeKnown"]}, "g": {"cell": "violated", "goals": {"G": {}}}}}
    assert mf.fault_differences(faults) == {"a": ["f"]}


def test_a_row_whose_runs_are_rfd_s_names_the_switch_no_run_reads():
    rows = mx.matrix_rows(["rfd", "new-error-type", "v2-draft"], False)
    columns: dict = {}
    _, of_row = mx.plan(rows, None, None, False, None, columns)
    same = mf.identical_runs(rows, of_row)
    assert same["new-error-type"] == {"as": "rfd", "switches": ["error_type"]}
    assert "v2-draft" not in same
    assert set(columns["v2-draft"]["strategies"]) == {"keep-copy", "drop-copy-on-empty"}


def test_a_violated_cell_records_what_every_violating_run_assumes():
    runs = [dict(_run(("OutcomeKnown", 5)), scenario="a", bounds={"failures": 1, "clients": 2}, switches={"x": 1}),
            dict(_run(("OutcomeKnown", 7)), scenario="b", bounds={"failures": 1}, switches={"x": 1}),
            dict(_run(), scenario="c", bounds={}, switches={"x": 1})]
    cell, detail = mx._cell(mx.Row("v", "v2-draft"), "OutcomeKnown", runs, SPECS["v2-draft"])
    assert cell == "violated" and detail["assumes"] == {"bounds": {"failures": 1}, "switches": {"x": 1},
                                                        "scenarios": ["a", "b"]}
    from acplab.model.app.matrix_report import assumption_text

    assert assumption_text(detail) == "failures=1; switches x=1"


class _Reads:
    """Records which actor module reads which spec field (tools, such as the reduction, do not count)."""

    seen: set = set()


def _recording(spec: Spec) -> Spec:
    class Recorded(Spec):
        __slots__ = ()

        def __getattribute__(self, name):
            module = sys._getframe(1).f_globals.get("__name__", "")
            if ".acp." in module and not module.endswith(("reduction", "symmetry", "scenarios")):
                _Reads.seen.add(name)
            return tuple.__getattribute__(self, name)

    return Recorded(*spec)


def test_no_switch_the_run_key_masks_is_read_when_its_bounds_are_zero():
    """The run key (and the unread-switch list) rests on :data:`matrix._UNREAD`: checked by recording every
    field the actors read on a small run of a spec that sets every masked switch away from rfd's."""
    _Reads.seen = set()
    _goals_violated(_recording(SPECS["error-sibling-field-naive"]), Bounds(clients=1, prompts=2, contents=("yes",)))
    masked = {s for _zero, names in mx._UNREAD for s in names}
    assert _Reads.seen and not (masked & _Reads.seen), sorted(masked & _Reads.seen)


@pytest.mark.slow
def test_every_alternative_s_violated_goal_reproduces_with_its_named_assumptions():
    """From the published matrix (figures/matrix/matrix.json): each ✗ goal of an alternative's ACP row, explored
    again on its scenario with the bounds its cell names, is violated with the same shortest length (the two
    scenarios of two clients and two prompts are left to the figures regeneration: minutes, not seconds)."""
    import json
    from pathlib import Path

    matrix = json.loads((Path(__file__).resolve().parents[1] / "figures" / "matrix" / "matrix.json").read_text())
    overrides = dict(mx.MATRIX_RUNS)
    checked = 0
    for row in matrix["specs"]:
        if row == "rfd" or matrix["rows"][row]["model"] != "acp":
            continue
        for goal in matrix["goals"]:
            detail = matrix["details"][row].get(goal, {})
            if matrix["cells"][row][goal] != "violated" or detail["scenario"] in ("multi-client", "lost-response"):
                continue
            bounds = mx._bounds(SPECS[row], detail["scenario"], overrides[detail["scenario"]])
            assert all(getattr(bounds, k) == (tuple(v) if isinstance(v, list) else v)
                       for k, v in detail["assumes"]["bounds"].items()), (row, goal)
            model = AcpModel(SPECS[row], bounds, monitors=monitor_set() + GOALS, symmetry=True,
                             continue_after_violation=True)
            found = {v.property.name: len(v.path) for v in explore(model, expand_violating=True).violations}
            assert found.get(goal) == detail["trace_length"], (row, goal)
            checked += 1
    assert checked >= 8
