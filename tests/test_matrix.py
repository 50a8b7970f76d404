"""The variant matrix: rfd holds everywhere it applies; every alternative's cells are pinned.

The full matrix is computed once per test run, by the figures regeneration;
tests/test_figures.py pins it from ``matrix/matrix.json``.  This module
tests the pieces on single runs.
"""

from pathlib import Path

from acplab.model.app import matrix as mx

def test_a_violated_run_writes_counterexamples_and_the_markdown_links_them(tmp_path):
    run = mx.run_one(("ack-before-insertion", "report-order", {}, str(tmp_path), None))
    result = mx.assemble(["ack-before-insertion"], [run], 0.0)
    assert result["cells"]["ack-before-insertion"]["SuccessOnlyAfterInsertion"] == "violated"
    files = result["details"]["ack-before-insertion"]["SuccessOnlyAfterInsertion"]["files"]
    assert any(f.endswith(".mmd") for f in files) and all(Path(f).exists() for f in files)
    md = mx.markdown(result, str(tmp_path))
    assert "](ack-before-insertion/report-order/SuccessOnlyAfterInsertion.mmd)" in md
    assert "### `ack-before-insertion`" in md


def test_not_applicable_cells_carry_their_reason():
    run = mx.run_one(("new-error-type", "report-order", {}, None, None))
    result = mx.assemble(["new-error-type"], [run], 0.0)
    assert set(result["cells"]["new-error-type"].values()) == {"n/a"}
    assert "bridges" in result["details"]["new-error-type"]["ViewMatchesHistory"]["reason"]
    assert "not checked" in mx.markdown(result)
