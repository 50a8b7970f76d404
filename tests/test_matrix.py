"""The variant matrix: goals first, the RFD's rules second, by-design cells, known limitations, no_difference.

The full matrix is computed once per test run, by the figures regeneration;
tests/test_figures.py pins it from ``matrix/matrix.json`` and checks the
claims it makes about itself.  This module tests the pieces on small runs.
"""

import json
from pathlib import Path

from acplab.model.acp.goals import GOAL_NAMES, KNOWN_LIMITATIONS
from acplab.model.acp.spec import SPECS
from acplab.model.app import matrix as mx
from acplab.model.app.matrix_claims import CLAIMS, Claim, verdict
from acplab.model.app.matrix_report import markdown, table_text

from cli_harness import run_cli

import pytest


@pytest.fixture(autouse=True)
def _forget_spec_files():
    """Spec files register for the process: each test starts and ends without any."""
    from acplab.model.acp.spec import USER_SPECS

    USER_SPECS.clear()
    yield
    USER_SPECS.clear()


def _small(monkeypatch, *scenarios):
    """The matrix on ``scenarios`` only, without the fault columns (tests/test_matrix_columns.py has those)."""
    from acplab.model.app import matrix_faults

    monkeypatch.setattr(mx, "MATRIX_RUNS", tuple((s, {}) for s in scenarios))
    monkeypatch.setattr(matrix_faults, "FAULTS", ())


def test_a_violated_run_writes_counterexamples_and_the_markdown_links_them(tmp_path, monkeypatch):
    _small(monkeypatch, "report-order")
    result = mx.run_matrix(["v2-draft-naive"], str(tmp_path), 1, None, None, "serial")
    assert result["specs"] == ["rfd", "v2-draft-naive"]  # rfd is always the baseline
    assert result["cells"]["v2-draft-naive"]["NoDuplicateMessages"] == "violated"
    files = result["details"]["v2-draft-naive"]["NoDuplicateMessages"]["files"]
    assert any(f.endswith(".mmd") for f in files) and all(Path(f).exists() for f in files)
    md = markdown(result, str(tmp_path))
    assert "](v2-draft-naive/report-order/NoDuplicateMessages.mmd)" in md
    assert md.index("## Goals") < md.index("## The RFD's rules") < md.index("### `v2-draft-naive`")


def test_a_cell_the_variant_breaks_by_definition_is_by_design_never_a_finding(monkeypatch):
    _small(monkeypatch, "report-order")
    result = mx.run_matrix(["v2-draft", "ack-before-insertion", "prompt-as-notification"], None, 1, None, None,
                           "serial")
    for name, rule in (("v2-draft", "PromptResultCarriesMessageId"), ("ack-before-insertion", "ResponsesFollowInsertion"),
                       ("prompt-as-notification", "PromptsAnswered")):
        assert result["cells"][name][rule] == "by design", (name, rule)
        assert result["details"][name][rule]["confirmed"]  # the declaration is true: the model breaks it
        assert rule not in result["verdicts"][name]["rule_findings"]
    assert "⊘" in table_text(result)


def test_the_json_has_goals_cells_known_limitations_and_no_difference(monkeypatch):
    _small(monkeypatch, "streamed-replay")
    result = mx.run_matrix(["new-error-type", "client-correlation-token"], None, 2, None, None, "local")
    assert result["goals"] == list(GOAL_NAMES)
    assert set(result["known_limitations"]) == set(KNOWN_LIMITATIONS)
    assert all(set(GOAL_NAMES) <= set(row) for row in result["cells"].values())
    # the RFD's declared limitation, and the token's credit for it
    assert result["cells"]["rfd"]["LostResponseRecoverable"] == "violated"
    assert result["details"]["rfd"]["LostResponseRecoverable"]["known_limitation"]
    assert result["cells"]["client-correlation-token"]["LostResponseRecoverable"] == "holds"
    assert result["verdicts"]["client-correlation-token"]["better"] == ["LostResponseRecoverable"]
    # new-error-type differs only on its bridge rows; rfd's bridge rows are its baseline
    assert "new-error-type@bridge-v2-agent" in result["specs"] and "rfd@bridge-v2-agent" in result["specs"]
    assert result["cells"]["new-error-type@bridge-v2-agent"]["OutcomeKnown"] == "violated"
    assert result["cells"]["rfd@bridge-v2-agent"]["OutcomeKnown"] == "holds"
    assert "new-error-type" not in result["no_difference"]
    assert mx.rfd_exit_code(result) == 0  # a declared limitation is not a failure of the rfd row


def test_a_variant_the_goals_cannot_tell_from_rfd_is_listed_with_its_reason(monkeypatch):
    _small(monkeypatch, "report-order")
    result = mx.run_matrix(["ack-before-insertion", "error-sibling-field-naive"], None, 1, None, None, "serial")
    assert result["no_difference"]["ack-before-insertion"] == SPECS["ack-before-insertion"].no_difference
    # with no failure there is no stale error to forget: the goals cannot see it, and the default reason says so
    assert result["no_difference"]["error-sibling-field-naive"] == mx.NO_DIFFERENCE_DEFAULT


def test_identical_models_are_explored_once():
    rows = mx.matrix_rows(["rfd", "new-error-type", "client-correlation-token"], False)
    tasks, of_row = mx.plan(rows, None, None, False)
    assert of_row["rfd"] == of_row["new-error-type"]  # the ACP model does not read the error type
    assert len(set(of_row["rfd"])) == len(mx.MATRIX_RUNS)
    assert not set(of_row["rfd"]) & set(of_row["client-correlation-token"])
    # colliding generators matter only to variants with client identifiers: on rfd the bound is dropped
    assert mx._bounds(SPECS["rfd"], "multi-client", {"colliding_ids": True}).colliding_ids is False


def test_verdicts_follow_the_predictions_and_say_when_the_model_cannot_speak():
    claim = Claim("x", ("NoHang",), ("LostResponseRecoverable",))
    assert verdict(claim, {"NoHang"}, {"LostResponseRecoverable"}, {"LostResponseRecoverable"})[0] == "confirmed"
    assert verdict(claim, set(), set(), {"LostResponseRecoverable"})[0] == "refuted"
    assert verdict(claim, {"NoHang"}, set(), {"LostResponseRecoverable"})[0] == "partly confirmed"
    # a failure rfd shares is no evidence for the claim
    assert verdict(Claim("x", ("NoHang",)), {"NoHang"}, set(), {"NoHang"})[0] == "refuted"
    assert verdict(Claim("x"), set(), set(), set())[0] == "cannot speak to it"
    assert verdict(None, set(), set(), set())[0] == "no claim"


def test_every_variant_has_a_claim_and_every_claim_names_real_goals():
    from acplab.model.acp.mechanisms import design_of

    for name in mx.variant_names()[1:]:
        assert design_of(name) in CLAIMS, name
    for claim in CLAIMS.values():
        assert set(claim.fails) | set(claim.gains) <= set(GOAL_NAMES)


def test_matrix_cli_json_and_a_spec_file_row(tmp_path, monkeypatch):
    _small(monkeypatch, "report-order", "failure-after-insertion")
    spec = tmp_path / "early.toml"
    spec.write_text('name = "my-early-ack"\n[switches]\nrespond_at = "receipt"\n')
    code, out, err = run_cli("matrix", "--spec-file", str(spec), "--json", "--out", str(tmp_path / "m"), "-q",
                             "--max-seconds", "120")
    data = json.loads(out)
    assert code == 0, err
    assert data["specs"] == ["rfd", "my-early-ack"]
    assert data["cells"]["my-early-ack"]["ResponsesFollowInsertion"] == "violated"  # caught by the right rule
    assert data["cells"]["my-early-ack"]["OutcomeKnown"] == "violated"
    assert data["verdicts"]["my-early-ack"]["verdict"] == "no claim"


def test_runs_merged_as_identical_explore_the_same_model():
    """Where a variant's key equals rfd's (its differing switches unread within the bounds), exploring
    the variant itself finds the same states and the same violations as exploring rfd."""
    from acplab.model.acp.goals import GOALS
    from acplab.model.acp.model import AcpModel
    from acplab.model.acp.monitor_set import monitor_set
    from acplab.model.acp.spec import RFD
    from acplab.model.engine import explore

    def outcome(spec, bounds):
        model = AcpModel(spec, bounds, monitors=monitor_set() + GOALS, symmetry=True, continue_after_violation=True)
        r = explore(model, expand_violating=True)
        return r.stats.states, sorted((v.property.name, len(v.path)) for v in r.violations)

    merged = 0
    for scenario in ("report-order", "cancellation", "tool-failure"):
        for name in mx.variant_names()[1:]:
            spec = SPECS[name]
            bounds = mx._bounds(spec, scenario, dict(mx.MATRIX_RUNS)[scenario])
            if mx._acp_key(spec, bounds) == mx._acp_key(RFD, bounds):
                merged += 1
                assert outcome(spec, bounds) == outcome(RFD, bounds), (name, scenario)
    assert merged >= 10


def test_the_rules_table_has_every_monitor_the_model_reaches_once():
    """Its columns: every client-view monitor and every rule monitor a model mutant breaks; the rest run too
    and a violation of one is listed under ``unlisted``."""
    from acplab.model.acp.killers import KILLERS
    from acplab.model.acp.monitor_set import monitor_names
    from acplab.model.acp.monitors import CLIENT_MONITORS

    assert len(mx.PROPERTIES) == len(set(mx.PROPERTIES)) and set(mx.PROPERTIES) <= set(monitor_names())
    reached = {p for p, pairs in KILLERS.items() if p in monitor_names()}
    assert reached | {m.name for m in CLIENT_MONITORS} == set(mx.PROPERTIES)


def test_a_violation_of_an_unlisted_rule_monitor_is_reported_and_fails_rfd():
    rows = [mx.Row("rfd", "rfd")]
    runs = [{"scenario": "report-order", "complete": True, "states": 1, "seconds": 0.0, "rules": [],
             "violations": [{"property": "WellFormedJsonRpc", "length": 3, "files": [], "sentence": "x"}]}]
    matrix = mx.assemble(rows, runs, {"rfd": [0]}, 0.0)
    assert matrix["unlisted"] == {"rfd": ["WellFormedJsonRpc"]} and mx.rfd_exit_code(matrix) == 1
