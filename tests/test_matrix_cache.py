"""The matrix's effective models and its cache (model/app/matrix_cache.py), and its extra-column registry
(model/app/matrix_columns.py): one exploration per effective model, in a run and across runs; a stale or
damaged entry never used; the output the same with and without the cache."""

from pathlib import Path

import pytest

from acplab.model.acp.bounds import Bounds
from acplab.model.acp.goals import GOALS
from acplab.model.acp.model import AcpModel
from acplab.model.acp.monitor_set import monitor_set
from acplab.model.acp.spec import RFD, SPECS
from acplab.model.app import matrix as mx
from acplab.model.app import matrix_cache as mc
from acplab.model.app import matrix_columns as cols
from acplab.model.engine import explore

from cli_harness import run_cli


@pytest.fixture
def tiny(monkeypatch):
    """The matrix on one scenario, without the fault columns and the client strategies."""
    from acplab.model.app import matrix_faults

    monkeypatch.setattr(mx, "MATRIX_RUNS", (("report-order", {}), ("failure-outcome", {})))
    monkeypatch.setattr(matrix_faults, "FAULTS", ())
    monkeypatch.setattr(matrix_faults, "strategy_specs", lambda spec: {})


def _same(a: dict, b: dict) -> bool:
    drop = ("seconds", "runs", "explorations")
    return {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


def test_the_recording_spec_notes_what_the_actors_read_and_explores_the_same_graph():
    bounds = Bounds(clients=1, prompts=1, failures=1)
    recorded, reads = mc.recording(SPECS["v2-draft"])
    assert recorded == SPECS["v2-draft"] and not reads
    plain = explore(AcpModel(SPECS["v2-draft"], bounds, monitors=monitor_set() + GOALS, symmetry=True))
    seen = explore(AcpModel(recorded, bounds, monitors=monitor_set() + GOALS, symmetry=True))
    assert seen.stats.states == plain.stats.states
    assert "response" in reads and "name" not in reads and reads <= set(mc.BEHAVIOUR)
    assert "agent_initiated_work" not in reads  # own_work = 0: never read


def test_a_run_digest_changes_with_a_read_field_only():
    ctx = mc.context("report-order", Bounds(clients=1, prompts=1), False)
    reads = ["response", "respond_at"]
    unread = RFD._replace(name="x", description="y", agent_initiated_work=not RFD.agent_initiated_work)
    assert mc.run_digest(ctx, unread, reads) == mc.run_digest(ctx, RFD, reads)
    assert mc.run_digest(ctx, RFD._replace(response="empty"), reads) != mc.run_digest(ctx, RFD, reads)
    other = mc.context("report-order", Bounds(clients=2, prompts=1), False)
    assert mc.run_digest(other, RFD, reads) != mc.run_digest(ctx, RFD, reads)


def test_a_finished_run_withdraws_the_waiting_tasks_it_covers():
    """Serially: task 1 agrees with task 0 on every field 0 read, so it is not run; task 2 differs on one."""
    ctx = mc.context("report-order", Bounds(clients=1, prompts=1), False)
    specs = [RFD, RFD._replace(name="a", agent_initiated_work=True), RFD._replace(name="b", response="empty")]
    ran = []

    def run(task):
        ran.append(task)
        return {"complete": True, "reads": ["response"], "n": task}

    done = mc.explore_tasks([0, 1, 2], run, "serial", 1, None, lambda i, r, how: dict(r, how=how),
                            lambda i: (ctx, specs[i]), lambda i: None, lambda i, r: None)
    assert ran == [0, 2] and done["counts"] == {"explored": 2, "shared": 1, "cache": 0}
    assert [(r["n"], r["how"]) for r in done["results"]] == [(0, "explored"), (0, "shared"), (2, "explored")]


def test_a_second_matrix_takes_every_acp_run_from_the_cache_with_the_same_output(tiny, tmp_path):
    cache = str(tmp_path / "cache")
    first = mx.run_matrix(["v2-draft-naive"], str(tmp_path / "a"), 1, None, None, "serial", cache=cache)
    second = mx.run_matrix(["v2-draft-naive"], str(tmp_path / "b"), 1, None, None, "serial", cache=cache)
    acp = sum(1 for r in first["runs"] if r["scenario"] in ("report-order", "failure-outcome"))
    assert first["explorations"]["from_cache"] == 0 and first["explorations"]["cache"]["stored"] == acp
    assert second["explorations"]["from_cache"] == acp and second["explorations"]["cache"]["refused"] == 0
    a, b = (str(p) for p in (tmp_path / "a", tmp_path / "b"))
    files = first["details"]["v2-draft-naive"]["NoDuplicateMessages"]["files"]
    assert files and all(Path(f.replace(a, b)).read_bytes() == Path(f).read_bytes() for f in files)
    import json

    assert _same(json.loads(json.dumps(second).replace(b, a)), json.loads(json.dumps(first)))
    assert "from the cache" in mx.explorations_text(second)


def test_a_damaged_or_stale_entry_is_never_used(tiny, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = mx.run_matrix(["v2-draft"], None, 1, None, None, "serial", cache=str(cache))
    entry = sorted(cache.rglob("*.run"))[0]
    data = bytearray(entry.read_bytes())
    data[-1] ^= 0xFF  # one flipped byte: the checksum fails
    entry.write_bytes(bytes(data))
    again = mx.run_matrix(["v2-draft"], None, 1, None, None, "serial", cache=str(cache))
    assert again["explorations"]["cache"]["refused"] == 1 and again["explorations"]["explored"] >= 1
    assert _same(first, again)
    # another model code (an edit, an upgrade): no entry is of this context, every run is explored again
    from acplab.model.engine import checkpoint

    monkeypatch.setattr(checkpoint, "code_identity", lambda: {"acplab": "other", "model code": "x"})
    stale = mx.run_matrix(["v2-draft"], None, 1, None, None, "serial", cache=str(cache))
    assert stale["explorations"]["from_cache"] == 0 and _same(first, stale)


def test_a_folder_that_is_not_a_cache_is_refused_in_one_line(tmp_path):
    (tmp_path / "mine.txt").write_text("a user's file")
    code, _out, err = run_cli("matrix", "--spec", "v1", "--cache", tmp_path, "--out", tmp_path / "o", "-q")
    assert code == 2 and "is not a matrix cache folder" in err and "Traceback" not in err


def test_one_registry_for_extra_columns_reaches_every_output(tiny, monkeypatch):
    from acplab.model.app.matrix_report import markdown, table_text
    from acplab.model.app.pages import matrix_page

    column = cols.simple_column("runs-per-row", "runs the row has", lambda inputs: {
        r.name: len(inputs.of_row[r.name]) for r in inputs.rows})
    monkeypatch.setitem(cols.COLUMNS, column.name, column)
    result = mx.run_matrix(["v1"], None, 1, None, None, "serial", columns=("runs-per-row",))
    assert result["extra_columns"]["runs-per-row"]["cells"]["v1"] == 2
    assert "## Runs-per-row" in markdown(result) and "| v1 | 2 |" in markdown(result)
    assert "runs-per-row:" in table_text(result)
    page = matrix_page(result, "out", {"holds": "✓", "violated": "✗", "incomplete": "?", "n/a": "–", "by design": "⊘"})
    assert any(t["title"] == "Runs-per-row" and ["v1", "2"] in t["rows"] for t in page["tables"])
    with pytest.raises(Exception, match="unknown matrix column nope; known: costs"):
        cols.check_names(["nope"])


def test_a_spec_file_that_changes_only_unread_switches_is_served_from_the_cache(tiny, tmp_path):
    """The cache is keyed by the effective model: a designer's file that differs from v2-draft only in a switch no
    run of these scenarios reads (own work, with no own_work bound) explores nothing new."""
    from acplab.model.acp.spec import USER_SPECS
    from acplab.model.acp.specfile import load_and_register

    cache = str(tmp_path / "cache")
    first = mx.run_matrix(["v2-draft"], None, 1, None, None, "serial", cache=cache)
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\nbase = "v2-draft"\n[switches]\nagent_initiated_work = false\n')
    try:
        name = load_and_register(str(path))
        mine = mx.run_matrix([name], None, 1, None, None, "serial", cache=cache)
    finally:
        USER_SPECS.clear()
    assert mine["explorations"]["explored"] == 0 and mine["explorations"]["shared"] == 0
    assert mine["cells"]["mine"] == first["cells"]["v2-draft"]


def test_html_runs_do_not_use_the_cache_and_say_so(tiny, tmp_path):
    result = mx.run_matrix(["v1"], None, 1, None, None, "serial", html=True, cache=str(tmp_path / "c"))
    assert "cache" not in result["explorations"] and "not used with --html" in mx.explorations_text(result)


def test_runs_planned_apart_that_read_the_same_fields_are_named_as_one_model(tiny):
    """error-sibling-field's strongest build differs from rfd in error_shape, which a client reads only with the
    stray-error bug: on failure-outcome no step reads it, so that run is rfd's (and is explored once)."""
    result = mx.run_matrix(["error-sibling-field"], None, 1, None, None, "serial")
    found = {m["scenario"]: m for m in result["same_models"]["error-sibling-field"]}
    assert found["failure-outcome"]["as"] == "rfd" and found["failure-outcome"]["switches"] == ["error_shape"]
    assert result["explorations"]["shared"] >= 1
    from acplab.model.app.matrix_report import markdown

    assert "- `error-sibling-field` on failure-outcome" in markdown(result)
