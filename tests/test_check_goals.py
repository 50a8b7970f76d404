"""`acplab check --goals` / `--properties`: the matrix's goals at any bounds, scenario and spec."""

from __future__ import annotations

import json

import pytest

from cli_harness import run_cli

#: v1's OutcomeKnown ✗ (4 steps) in figures/matrix/matrix.md: a failure reported as an error response
V1_FAILURE = ("--spec", "v1", "--scenario", "failure-after-insertion", "--workers", "1", "--json")


def _run(tmp_path, *args):
    code, out, err = run_cli("check", *V1_FAILURE, "--out", str(tmp_path / "out"), *args)
    return code, json.loads(out), err


def _violated(summary) -> set[str]:
    return {v["property"] for v in summary["violations"]}


def test_goals_find_what_the_matrix_finds_for_v1(tmp_path):
    code, summary, _ = _run(tmp_path, "--goals")
    assert code == 1 and summary["properties"] == "goals"
    assert "OutcomeKnown" in _violated(summary)
    assert "ResponsesFollowInsertion" not in _violated(summary)  # a rule: not judged


def test_rules_alone_do_not_judge_goals(tmp_path):
    _, summary, _ = _run(tmp_path)
    assert summary["properties"] == "rules"
    assert "OutcomeKnown" not in _violated(summary) and "ResponsesFollowInsertion" in _violated(summary)


def test_all_judges_both(tmp_path):
    _, summary, _ = _run(tmp_path, "--properties", "all")
    assert {"OutcomeKnown", "ResponsesFollowInsertion"} <= _violated(summary)


def test_rfd_meets_the_goals_here(tmp_path):
    code, out, err = run_cli("check", "--spec", "rfd", "--scenario", "failure-after-insertion", "--goals",
                             "--workers", "1", "--json", "--out", str(tmp_path / "out"))
    summary = json.loads(out)
    assert code == 0, err
    assert summary["verdict"] == "holds" and summary["violations"] == []


def test_goals_at_other_bounds(tmp_path):
    code, out, _ = run_cli("check", "--spec", "v1", "--scenario", "failure-after-insertion", "--clients", "2",
                           "--goals", "--workers", "1", "--json", "--out", str(tmp_path / "out"))
    summary = json.loads(out)
    assert summary["bounds"]["clients"] == 2 and "OutcomeKnown" in _violated(summary)


def test_goals_and_another_property_set_is_one_line_exit_2():
    code, _, err = run_cli("check", "--goals", "--properties", "all", "-q")
    assert code == 2 and "disagree" in err and len(err.strip().splitlines()) == 1


def test_goals_do_not_apply_to_twophase():
    code, _, err = run_cli("check", "--model", "twophase", "--goals", "-q")
    assert code == 2 and "--goals does not apply to --model twophase" in err


@pytest.mark.slow  # a matrix of every ACP row: about 13 s
def test_matrix_clients_applies_to_every_acp_row(tmp_path, monkeypatch):
    """client-correlation-token-naive's NoMisattribution ✗ (figures/matrix) needs two clients' colliding tokens.
    (The fault columns, tests/test_matrix_columns.py's, are left out: this is about the bounds.)"""
    from acplab.model.app import matrix_faults

    monkeypatch.setattr(matrix_faults, "FAULTS", ())
    code, out, err = run_cli("matrix", "--spec", "client-correlation-token-naive", "--clients", "1", "--jobs", "1",
                             "--json", "--out", str(tmp_path / "mx"))
    result = json.loads(out)
    assert code == 0, err
    assert result["bounds_overrides"] == {"clients": 1}
    assert result["cells"]["client-correlation-token-naive"]["NoMisattribution"] == "holds"
    assert result["cells"]["rfd"]["NoMisattribution"] == "holds"


def test_matrix_unknown_bound_is_one_line_exit_2(tmp_path):
    code, out, err = run_cli("matrix", "--set", "clientz=2", "--out", str(tmp_path / "mx"))
    assert code == 2 and "unknown bound 'clientz'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "mx").exists()


def test_matrix_bounds_reach_every_acp_task_over_the_scenario_changes():
    from acplab.model.app import matrix as mx

    rows = mx.matrix_rows(["rfd", "v1"], full=False)
    tasks, _ = mx.plan(rows, None, None, False, {"clients": 1, "prompts": 1})
    acp = [t for t in tasks if t[0] == "acp"]
    assert acp and all(t[3]["clients"] == 1 and t[3]["prompts"] == 1 for t in acp)
    default, _ = mx.plan(rows, None, None, False)
    assert any(t[3].get("prompts") == 2 for t in default if t[0] == "acp")  # failure-after-insertion's own change


def test_a_goal_the_spec_declares_not_applicable_says_so_and_still_counts(tmp_path):
    code, summary, _ = _run(tmp_path, "--goals")
    rows = {v["property"]: v for v in summary["violations"]}
    assert rows["ViewsConverge"]["declared"].startswith("not applicable: v1 reports no user message live")
    assert "declared" not in rows["OutcomeKnown"] and code == 1
