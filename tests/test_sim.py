"""The SimPy simulator: reproducibility, live monitors, metric sanity, resumable sweeps."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acplab.model.acp.killers import MUTANT_RULES
from acplab.model.acp.spec import SPECS
from acplab.simulations.params import SimParams
from acplab.simulations.runtime import Session, build_model, run_seed
from acplab.simulations.simulate import simulate
from acplab.simulations.sweep import RESULTS, SUMMARY, check_config, run_sweep

ROOT = Path(__file__).resolve().parents[1]


def _json(result) -> str:
    return json.dumps(result.to_json(), sort_keys=True)


def test_same_seed_same_json_and_other_seed_differs():
    p = SimParams(clients=3, sessions=20, prompts=2, drop=0.05, disconnect_rate=0.1, fail=0.05, cancel=0.1, seed=7)
    a, b = _json(simulate(p)), _json(simulate(p))
    assert a == b
    assert _json(simulate(p.with_(seed=8))) != a


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "acplab.model.app.cli", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_cli_json_is_reproducible(tmp_path):
    args = ["simulate", "--clients", "2", "--sessions", "10", "--drop", "0.05", "--disconnect-rate", "0.1",
            "--seed", "3", "--json"]
    one, two = _cli(*args, cwd=tmp_path), _cli(*args, cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert one.stdout == two.stdout
    data = json.loads(one.stdout)
    assert data["verdict"] == "holds" and data["runs"] == 10
    assert data["metrics"]["response_ms"]["n"] > 0 and len(data["metrics"]["response_ms"]["ci"]) == 2
    assert data["violations"]["count"] == 0


def test_cli_bad_input_is_one_line_exit_2(tmp_path):
    for args in (["simulate", "--drop", "2"], ["simulate", "--spec", "nope"], ["simulate", "--set", "nokey=1"],
                 ["simulate", "--set", "fail"]):
        r = _cli(*args, cwd=tmp_path)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.startswith("acplab: error: ") and r.stderr.count("\n") == 1


@pytest.mark.slow  # about 19 s
def test_rfd_holds_under_drops_disconnects_and_failures():
    p = SimParams(clients=3, sessions=300, prompts=3, drop=0.02, disconnect_rate=0.05, fail=0.05, reject=0.02,
                  cancel=0.1, seed=1)
    result = simulate(p)
    summary = result.to_json()
    assert summary["violations"]["count"] == 0, summary["violations"]
    assert summary["runs"] == 300 and summary["runs_at_rest"] == 300
    counts = summary["counts"]
    assert counts["retries"] > 0 and counts["replays"] > 0  # the faults did happen
    assert summary["metrics"]["ambiguous_rate"]["mean"] > 0
    assert summary["metrics"]["misattributed_message_id"]["mean"] == 0


MUTANT_RUNS = {
    "replay-without-reset": dict(disconnect_rate=0.1),
    "error-after-insertion": dict(fail=0.3, step_ms=50.0, answer_ms=30.0),
    "client-matches-by-content": dict(),
}


@pytest.mark.slow  # 12-13 s each
@pytest.mark.parametrize("spec", sorted(MUTANT_RUNS))
def test_mutants_are_caught_live_with_artefacts(spec, tmp_path):
    p = SimParams(spec=spec, clients=3, sessions=150, prompts=3, drop=0.02, seed=2, **MUTANT_RUNS[spec])
    result = simulate(p, out=tmp_path / "out")
    summary = result.to_json()
    breaks = SPECS[spec].breaks
    assert summary["verdict"] == "violated"
    assert summary["violations"]["per_monitor"].get(breaks, 0) > 0, summary["violations"]
    files = summary["violations"]["files"][breaks]
    assert [Path(f).suffix for f in files] == [".txt", ".jsonl", ".mmd"]
    for f in files:
        assert Path(f).stat().st_size > 0
    assert breaks in Path(files[0]).read_text()
    # the finding cites at least one of the rules the mutant breaks (a rule monitor checks several)
    first = summary["violations"]["first"][breaks]["sentence"]
    cited = re.search(r"\(([A-Z]+[0-9]+(?:, [A-Z]+[0-9]+)*)\)$", first)
    assert cited and set(cited.group(1).split(", ")) & set(MUTANT_RULES[spec]), first
    assert Path(files[2]).read_text().lstrip().startswith(("sequenceDiagram", "---"))
    records = [json.loads(line) for line in Path(files[1]).read_text().splitlines()]
    assert records and all({"seq", "t", "conn", "dir", "msg"} <= set(r) for r in records)
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))


def test_stop_ends_the_simulation_at_the_first_violation():
    p = SimParams(spec="client-matches-by-content", clients=2, sessions=50, on_violation="stop", seed=4)
    summary = simulate(p).to_json()
    assert summary["violations"]["runs"] == 1 and summary["stopped_early"]
    first = summary["violations"]["first"]["ClientsLinkByResponse"]
    assert summary["runs"] == first["run"] + 1
    assert "by content" in first["sentence"] and "(P9" in first["sentence"]


def test_continue_measures_replay_duplicates():
    base = dict(clients=2, sessions=60, prompts=3, disconnect_rate=0.1, replay=1.0, seed=5, on_violation="continue")
    broken = simulate(SimParams(spec="replay-without-reset", **base)).to_json()
    fine = simulate(SimParams(spec="rfd", **base)).to_json()
    assert broken["violations"]["per_monitor"]["ReplayResetsBeforeChunks"] > 1
    assert broken["metrics"]["replay_divergent_items"]["mean"] > 0
    assert fine["metrics"]["replay_divergent_items"]["mean"] == 0
    assert fine["violations"]["count"] == 0


def _sessions(p: SimParams, n: int):
    model = build_model(p)
    return [Session(model, p, run_seed(p.seed, k), k).run() for k in range(n)]


def test_metric_sanity_without_faults():
    p = SimParams(clients=3, prompts=3, drop=0.0, disconnect_rate=0.0, seed=9)
    for run in _sessions(p, 40):
        m = run.metrics
        assert run.at_rest and not run.violations
        samples = m.samples()
        assert samples["ambiguous_rate"] and not any(samples["ambiguous_rate"])
        assert not m.retries
        assert m.wire_bytes > 0 and m.wire_messages > 0
        assert set(m.t_end) == set(m.subs)  # every prompt's work ended and was seen
        for token, t_end in m.t_end.items():
            assert m.subs[token] <= m.t_user[token] <= t_end
            assert m.subs[token] <= m.t_response[token]


def test_receipt_before_work_end_with_faults():
    p = SimParams(clients=3, prompts=3, drop=0.05, disconnect_rate=0.1, fail=0.1, seed=11)
    checked = 0
    for run in _sessions(p, 60):
        m = run.metrics
        for token, t_end in m.t_end.items():
            if token in m.t_user:
                assert m.t_user[token] <= t_end
                checked += 1
    assert checked > 100


def test_fifo_channels_never_overtake():
    p = SimParams(clients=2, prompts=3, latency_sigma=1.5, seed=12)
    for run in _sessions(p, 20):
        sent: dict = {}
        for _t, _action, events in run.steps:
            for e in events:
                if e.kind == "send" and not e.lost:
                    sent.setdefault((e.conn, e.dir), []).append(e.msg)
                elif e.kind in ("deliver", "drop"):
                    assert sent[(e.conn, e.dir)].pop(0) == e.msg


# -- sweeps ------------------------------------------------------------

SWEEP = {"specs": ["rfd", "client-matches-by-order"], "grid": {"drop": [0.0, 0.05], "clients": [1, 2]},
         "base": {"prompts": 2, "disconnect_rate": 0.05}, "sessions": 8, "seed": 1}


def test_sweep_resumes_after_interruption_and_matches_an_uninterrupted_run(tmp_path):
    cfg = check_config(SWEEP)
    logs: list[str] = []
    whole = tmp_path / "whole"
    assert run_sweep(cfg, whole, workers=2, log=logs.append) == 0
    lines = (whole / RESULTS).read_text().splitlines()
    assert len(lines) == 8

    # interrupted: three finished lines and a torn fourth, no summary
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / RESULTS).write_text("\n".join(lines[:3]) + "\n" + lines[3][: len(lines[3]) // 2])
    logs.clear()
    assert run_sweep(cfg, cut, workers=2, log=logs.append) == 0
    assert any("resuming: 3 of 8" in line for line in logs)
    assert (cut / SUMMARY).read_bytes() == (whole / SUMMARY).read_bytes()
    assert len((cut / RESULTS).read_text().splitlines()) == 8

    # a finished sweep runs nothing
    before = (cut / RESULTS).read_bytes()
    logs.clear()
    assert run_sweep(cfg, cut, workers=2, log=logs.append) == 0
    assert any("nothing to run" in line for line in logs)
    assert (cut / RESULTS).read_bytes() == before


@pytest.mark.slow  # about 25 s: a real sweep killed and resumed
def test_sweep_cli_killed_midway_resumes(tmp_path):
    cfg = dict(SWEEP, sessions=30, grid={"drop": [0.0, 0.02, 0.05], "clients": [1, 2, 3]})
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(cfg))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "acplab.model.app.cli", "sweep", str(config), "--out", str(out), "--workers", "1", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    results = out / RESULTS
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and len(results.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    proc.terminate()
    proc.wait(timeout=30)
    finished = set(json.loads(x)["key"] for x in results.read_text().splitlines() if x.endswith("}"))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in results.read_text().splitlines()]
    assert len(rows) == 18 and len({row["key"] for row in rows}) == 18
    assert finished <= {row["key"] for row in rows}
    fresh = tmp_path / "fresh"
    assert run_sweep(check_config(cfg), fresh, workers=2, log=lambda s: None) == 0
    assert (fresh / SUMMARY).read_bytes() == (out / SUMMARY).read_bytes()
    again = subprocess.run(cmd[:-1], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "nothing to run" in again.stderr


def test_sweep_bad_config_is_input_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('specs = ["rfd"]\n[grid]\ndrop = [2]\n')
    r = _cli("sweep", str(bad), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "drop" in r.stderr
    r = _cli("sweep", str(bad), "--executor", "dask://", "--out", str(tmp_path / "o"))
    assert r.returncode == 2


def test_plots_are_deterministic(tmp_path):
    pytest.importorskip("matplotlib")
    from acplab.simulations.plots import plot_simulation, plot_sweep

    p = SimParams(clients=2, sessions=5, drop=0.05, seed=1)
    a = plot_simulation(simulate(p), tmp_path / "a")
    b = plot_simulation(simulate(p), tmp_path / "b")
    for x, y in zip(a, b):
        assert Path(x).read_bytes() == Path(y).read_bytes()
    cfg = check_config(dict(SWEEP, sessions=3))
    run_sweep(cfg, tmp_path / "s", workers=1, log=lambda s: None)
    rows = json.loads((tmp_path / "s" / SUMMARY).read_text())["points"]
    files = plot_sweep(rows, tmp_path / "s")
    assert len(files) == 8 and all(Path(f).stat().st_size > 0 for f in files)
    svg = Path(files[0]).read_text()
    assert "<dc:date>" not in svg


def test_a_latency_plot_without_samples_says_so_instead_of_warning(tmp_path):
    """No prompt submitted, no latency: the CDF plot states it (matplotlib warned of an empty legend)."""
    pytest.importorskip("matplotlib")
    import warnings

    from acplab.simulations.plots import LABELS, plot_simulation

    result = simulate(SimParams(clients=1, sessions=1, prompts=0, seed=1))
    assert not any(result.samples[name] for name in LABELS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        files = plot_simulation(result, tmp_path)
    assert any("no latency samples" in Path(f).read_text() for f in files if f.endswith(".svg"))
