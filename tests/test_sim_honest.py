"""Simulations that do not mislead: valid intervals, unbiased metrics, v1 metrics, fault windows that open."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest

from acplab.simulations.params import SimParams
from acplab.simulations.simulate import simulate
from acplab.simulations.stats import summarize, t_quantile, wilson

ROOT = Path(__file__).resolve().parents[1]


def test_intervals_are_wilson_for_rates_t_for_means_none_for_one_sample():
    assert summarize([1.0]) == {"mean": 1.0, "ci": [None, None], "n": 1, "p50": 1.0, "p95": 1.0, "max": 1.0}
    lo, hi = summarize([0.0] * 50, "proportion")["ci"]
    assert lo == 0.0 and 0.07 < hi < 0.072  # 0 of 50 is not "exactly 0"
    lo, hi = summarize([0.0] * 297 + [1.0] * 3, "proportion")["ci"]
    assert 0 < lo < 0.01 < hi < 0.03  # the normal approximation went below 0 here
    assert wilson(50, 50)[1] == 1.0 and wilson(50, 50)[0] > 0.92
    lo, hi = summarize([10.0, 11.0, 12.0])["ci"]
    assert math.isclose(hi - 11.0, 4.3027 / math.sqrt(3), rel_tol=1e-4) and math.isclose(11.0 - lo, hi - 11.0, rel_tol=1e-4)
    assert summarize([0.0, 0.0, 3.0])["ci"][0] == 0.0  # a count's interval stops at 0
    assert t_quantile(1) == 12.7062 and abs(t_quantile(60) - 2.0003) < 1e-3


def test_metrics_come_from_all_runs_carried_on_or_from_completed_runs_only():
    base = dict(spec="client-matches-by-content", clients=2, sessions=40, seed=4)
    going = simulate(SimParams(**base)).to_json()
    ending = simulate(SimParams(on_violation="count", **base)).to_json()
    assert going["params"]["on_violation"] == "continue"
    assert going["metrics_from"] == {"runs": 40, "of": 40, "basis": "all 40 runs, each carried on past its violations"}
    assert ending["metrics_from"]["runs"] == 40 - ending["violations"]["runs"] < 40
    assert "reached rest without a violation" in ending["metrics_from"]["basis"]
    assert going["counts"]["submissions"] > ending["counts"]["submissions"]  # ended runs submit less
    assert going["metrics"]["response_ms"]["n"] > ending["metrics"]["response_ms"]["n"]


def test_v1_metrics_mean_something_for_v1():
    summary = simulate(SimParams(spec="v1", sessions=20, seed=2)).to_json()
    m = summary["metrics"]
    assert m["response_ms"]["n"] > 0 and m["response_ms"]["mean"] == m["work_end_ms"]["mean"]  # v1 answers at the end
    assert "live" in m["user_message_ms"]["n/a"] and m["misattributed_content"]["n/a"]
    # v1 holds the response, by design; the same steps' missing messageId (also by design) is counted first there:
    # per_monitor names each step's first violation, the coverage counts every property a step broke
    broken = summary["coverage"]["properties"]
    assert broken["ResponseNotHeldForWorkEnd"]["violated"] > 0
    assert summary["violations"]["per_monitor"]["PromptResultCarriesMessageId"] > 0
    assert "StateViewMatches" not in summary["violations"]["per_monitor"]  # not applicable to v1: not run
    assert "StateViewMatches" not in broken


def test_error_after_insertion_is_found_with_the_default_timings():
    summary = simulate(SimParams(spec="error-after-insertion", fail=0.2)).to_json()
    assert summary["verdict"] == "violated"
    assert summary["violations"]["per_monitor"]["ResponsesFollowInsertion"] > 0
    assert "(E1" in summary["violations"]["first"]["ResponsesFollowInsertion"]["sentence"]  # the error after insertion
    assert summary["coverage"]["windows"]["failure after insertion, before the response"]["runs"] > 0
    assert _windows(summary) == []


def _windows(summary) -> list[str]:
    """The coverage warnings about fault windows (the others name vacuous properties)."""
    from acplab.simulations.fault_windows import window_warning

    return [w for w in summary["coverage"]["warnings"] if window_warning(w)]


def test_a_window_never_opened_is_named():
    summary = simulate(SimParams(spec="error-after-insertion", fail=0.2, answer_ms=5.0, sessions=30)).to_json()
    assert summary["verdict"] == "holds"
    [warning] = _windows(summary)
    assert warning.startswith("failure after insertion, before the response: 0 of 30 runs (")
    quiet = simulate(SimParams(spec="cancel-request-32800-after-insertion", sessions=10)).to_json()
    assert _windows(quiet) == ["$/cancel_request for an inserted prompt: 0 of 10 runs "
                                             "(set cancel_request > 0)"]
    found = simulate(SimParams(spec="cancel-request-32800-after-insertion", sessions=10, cancel_request=0.5,
                               cancel_ms=40.0)).to_json()
    assert found["violations"]["per_monitor"].get("ResponsesFollowInsertion", 0) > 0
    assert "(C1" in found["violations"]["first"]["ResponsesFollowInsertion"]["sentence"]  # -32800 after insertion


def test_the_example_sweep_configs_load_and_the_figure_sweep_is_the_committed_one():
    from acplab.model.app.figures import FIGURE_SWEEP
    from acplab.simulations.sweep import check_config, load_config

    example = load_config(ROOT / "examples" / "sweep.toml")
    assert len(example["specs"]) * len(example["grid"]["drop"]) * len(example["grid"]["disconnect_rate"]) == 12
    figures = tomllib.loads((ROOT / "examples" / "figures-sweep.toml").read_text())
    assert check_config(figures) == check_config(dict(FIGURE_SWEEP))
    readme = (ROOT / "README.md").read_text()
    assert "examples/sweep.toml" in readme and "## Sweeps" in readme
