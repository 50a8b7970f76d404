"""Simulation output that explains itself: every metric's meaning, unit and question in --json and in
the table's legend, counterfactuals named as such, plots split by every grid axis with the base
parameters in their captions, and no two labels of a figure overlapping (text bounding boxes)."""

from __future__ import annotations

import itertools
import json

import pytest

from acplab.simulations.metrics import METRICS
from acplab.simulations.params import SimParams
from acplab.simulations.simulate import simulate
from cli_harness import run_cli


@pytest.fixture(scope="module")
def rows():
    """Sweep rows as summary.json has them: 2 specs x drop 3 values x disconnect_rate 2 values (one cheap
    simulation per spec, so the figures' layout is tested on a grid as large as the committed one)."""
    out = []
    for spec in ("rfd", "replay-without-reset"):
        result = simulate(SimParams(spec=spec, clients=2, sessions=2, seed=3)).to_json()
        for drop, cut in itertools.product((0.0, 0.02, 0.05), (0.02, 0.1)):
            point = {"spec": spec, "drop": drop, "disconnect_rate": cut}
            params = dict(result["params"], drop=drop, disconnect_rate=cut)
            out.append({"key": json.dumps(point, sort_keys=True), "point": point,
                        "result": dict(result, params=params)})
    return out


def _texts(fig):
    """Every text the figure draws, with its bounding box on the canvas (tick labels only of ticks in view)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ticks, drawn = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                ticks.update((id(tick.label1), id(tick.label2)))
                if lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:
                    drawn += [label for label in (tick.label1, tick.label2) if label.get_visible()]
    texts = drawn + [t for t in fig.findobj(Text) if id(t) not in ticks and t.get_visible()]
    return [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_text().strip()]


def test_no_two_labels_of_a_sweep_figure_overlap(rows):
    from acplab.simulations.plots import sweep_figures
    import matplotlib.pyplot as plt

    for stem, fig in sweep_figures(rows):
        texts = _texts(fig)
        clashes = [(a, b) for (a, ba), (b, bb) in itertools.combinations(texts, 2) if ba.overlaps(bb)]
        fig_box = fig.bbox
        outside = [t for t, box in texts if box.x0 < fig_box.x0 - 1 or box.x1 > fig_box.x1 + 1
                   or box.y0 < fig_box.y0 - 1 or box.y1 > fig_box.y1 + 1]
        plt.close(fig)
        assert not clashes, f"{stem}: overlapping labels {clashes[:3]}"
        assert not outside, f"{stem}: labels outside the figure {outside[:3]}"


def test_plots_are_split_by_every_grid_axis_and_say_their_base(rows):
    from acplab.simulations.plots import sweep_figures, varying_axes
    import matplotlib.pyplot as plt

    assert varying_axes(rows) == ["disconnect_rate", "drop"]
    figures = dict(sweep_figures(rows))
    latency = figures["latency-cdf"]
    titles = sorted(ax.get_title() for ax in latency.axes)
    assert len(titles) == 2 * 6 and "rfd: disconnect_rate=0.1, drop=0.05" in titles  # every spec x grid point
    for stem, fig in figures.items():
        caption = fig._supxlabel.get_text()
        assert "base: clients=2, prompts=3, sessions=2, seed=3" in caption.replace("\n", " "), stem
        plt.close(fig)
    legend = [t.get_text() for ax in figures["misattribution"].axes for t in ax.get_legend().get_texts()]
    assert any("if matched by content (counterfactual)" in t for t in legend)


def test_json_and_the_table_explain_every_metric():
    code, out, err = run_cli("simulate", "--sessions", "2", "--json")
    assert code == 0, err
    metrics = json.loads(out)["metrics"]
    for name, row in metrics.items():
        assert row["meaning"] and row["measured_in"] and row["question"].endswith("?"), name
        assert row["counterfactual"] is (name in ("misattributed_content", "misattributed_order"))
    assert "if clients matched by content" in metrics["misattributed_content"]["meaning"]
    code, text, _ = run_cli("simulate", "--sessions", "2", "-q")
    assert "misattributed_content *" in text and "counterfactual, not a finding" in text and "--explain" in text
    code, text, _ = run_cli("simulate", "--sessions", "2", "-q", "--explain")
    for name, metric in METRICS.items():
        assert f"{name} [{metric.measured_in}]: {metric.meaning}. {metric.question}" in text
