"""What the goals cannot see: the simulated cost columns and the spec-surface column of the matrix."""

import pytest

from acplab.model.app import matrix_costs as mc
from acplab.model.app.matrix import Row
from acplab.model.app.matrix_columns import joined
from acplab.model.app.matrix_report import columns_markdown, columns_text
from acplab.model.app.matrix_surface import KINDS, SURFACE, surface_column, surface_of, surface_text
from acplab.model.acp.spec import SPECS, VARIANTS
from acplab.simulations.params import SimParams
from acplab.simulations.simulate import simulate


@pytest.fixture(scope="module")
def small():
    """One short simulation with cuts (a second of CPU at most): the cost columns' inputs."""
    params = SimParams(spec="rfd", clients=1, sessions=2, prompts=2, seed=3, step_ms=500.0, retry_timeout_s=1.0,
                       retries=1, disconnect_rate=0.5, replay=1.0, duration_s=30.0)
    return simulate(params)


def test_the_cost_columns_come_from_the_simulation(small):
    costs = mc.measure(small)
    assert set(mc.COSTS) <= set(costs)
    latencies = sorted(small.samples["response_ms"])
    assert costs["response_p50_ms"] <= costs["response_p95_ms"] <= latencies[-1] + 0.1
    assert costs["wire_messages_per_prompt"] > 1  # at least the prompt and its answer
    lost, unknown = mc.lost_responses(small.runs)
    assert costs["lost_responses"] == lost > 0 and 0 <= unknown <= lost  # seed 3 cuts three answers
    assert costs["ambiguous_per_lost_response"] == round(unknown / lost, 4)


def test_a_lost_response_is_one_that_never_reached_its_connection(small):
    """Every counted submission had no response; an answered one never counts."""
    for run in small.runs:
        answered = set(run.metrics.t_response)
        lost_here, _ = mc.lost_responses([run])
        assert lost_here <= len([t for t in run.metrics.order if t not in answered])


def test_every_variant_has_its_surface_with_the_sentence_it_comes_from():
    assert all(surface_of(name) is not None for name in [*VARIANTS, "rfd"])  # a naive row: its design's
    for name, items in SURFACE.items():
        for kind, what, source in items:
            assert kind in KINDS and what and ("RFD" in source), (name, what)
    column = surface_column(["rfd", "client-correlation-token", "client-correlation-token-naive", "mine"])
    assert surface_text(column["client-correlation-token"]) == "2 / 1 / 1"
    assert column["client-correlation-token-naive"] == column["client-correlation-token"]
    assert surface_text(column["mine"]) == "not on record"


def test_the_markdown_table_shows_every_cost_column(small):
    matrix = {"costs": {"rfd": mc.measure(small)}, "cost_params": mc.COST_PARAMS,
              "spec_surface": surface_column(["rfd"])}
    text = columns_markdown(matrix)
    assert "## Costs (simulated) and spec surface" in text and all(c in text for c in mc.COSTS)
    assert "| rfd |" in text and "2 / 5 / 0" in text
    assert columns_markdown({}) == ""


def test_the_costs_reach_the_terminal_the_report_and_the_review(small):
    """The cost and surface columns are one table (matrix_columns.joined) in every output, not only matrix.md."""
    matrix = {"costs": {"rfd": mc.measure(small)}, "cost_params": mc.COST_PARAMS,
              "spec_surface": surface_column(["rfd"])}
    table = joined(matrix)
    assert table.title == "Costs (simulated) and spec surface" and list(table.cells) == ["rfd"]
    assert len(table.fields) == len(mc.COSTS) + 1 and table.cells["rfd"]["spec surface:surface"] == "2 / 5 / 0"
    lines = columns_text(matrix)
    assert lines[0] == "Costs (simulated) and spec surface:" and lines[2].startswith("rfd ") and "2 / 5 / 0" in lines[2]
    assert any("response_p50_ms" in line for line in lines)


def test_the_bridge_rows_get_no_cost_run(monkeypatch):
    seen = []
    monkeypatch.setattr("acplab.model.engine.executors.run_all",
                        lambda fn, tasks, *a, **k: [seen.append(t.name) or {"spec": t.name} for t in tasks])
    out = mc.cost_columns([Row("rfd", "rfd"), Row("rfd@bridge-v1-agent", "rfd", "v1-agent")], "serial", 1)
    assert seen == ["rfd"] and set(out["costs"]) == {"rfd"} and SPECS["rfd"]


def test_the_published_review_carries_the_costs_section_when_the_matrix_has_costs(small):
    """The hook in matrix_report.markdown: the committed matrix plus cost columns renders the costs table."""
    import json
    from pathlib import Path

    from acplab.model.app.matrix_report import markdown

    matrix = json.loads((Path(__file__).resolve().parent.parent / "figures/matrix/matrix.json").read_text())
    for key in ("costs", "cost_params", "spec_surface"):  # the figures' matrix is run with costs: take them out
        matrix.pop(key, None)
    assert "## Costs (simulated)" not in markdown(matrix)
    matrix.update({"costs": {"rfd": mc.measure(small)}, "cost_params": mc.COST_PARAMS,
                   "spec_surface": surface_column(["rfd"])})
    assert "## Costs (simulated) and spec surface" in markdown(matrix)
