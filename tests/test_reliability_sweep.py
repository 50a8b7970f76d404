"""The sweep's reliability regressions: one configuration per folder, a lock, bounded grids, kill-anywhere resume, workers tied to the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from acplab.simulations import sweep as sw
from acplab.simulations.sweep import RESULTS, SUMMARY, check_config, grid_points, locked, run_sweep
from cli_harness import contract

TINY = {"specs": ["rfd", "client-matches-by-order"], "grid": {"drop": [0.0, 0.05]},
        "base": {"clients": 2, "prompts": 1, "disconnect_rate": 0.05}, "sessions": 2, "seed": 1}


def quiet(*_):
    pass


def write_config(path: Path, cfg: dict) -> str:
    path.write_text(json.dumps(cfg))
    return str(path)


def sweep_cli(config: str, out: Path, *extra: str):
    return contract("sweep", config, "--out", str(out), "--workers", "1", "--quiet", *extra)


@pytest.mark.parametrize("change", [{"seed": 2}, {"sessions": 3}, {"base": {"clients": 1, "prompts": 1}},
                                    {"grid": {"drop": [0.0, 0.01]}}, {"specs": ["rfd"]}])
def test_a_changed_configuration_refuses_unless_fresh(tmp_path, change):
    out = tmp_path / "out"
    code, *_ = sweep_cli(write_config(tmp_path / "a.json", TINY), out)
    assert code == 0
    before = (out / RESULTS).read_bytes()
    changed = write_config(tmp_path / "b.json", {**TINY, **change})
    code, _, err, _ = sweep_cli(changed, out)
    assert code == 2 and "different sweep configuration" in err and "--fresh" in err
    assert (out / RESULTS).read_bytes() == before  # nothing touched
    code, _, err, _ = sweep_cli(changed, out, "--fresh")
    assert code == 0, err
    fresh = tmp_path / "fresh"
    assert sweep_cli(changed, fresh)[0] == 0
    assert (out / SUMMARY).read_bytes() == (fresh / SUMMARY).read_bytes()


def test_the_same_configuration_spelled_differently_resumes(tmp_path):
    out = tmp_path / "out"
    assert sweep_cli(write_config(tmp_path / "a.json", TINY), out)[0] == 0
    spelled = dict(TINY, base={**TINY["base"], "retries": 1})  # retries=1 is the default: the same effective config
    code, _, err, _ = contract("sweep", write_config(tmp_path / "b.json", spelled), "--out", str(out), "--workers", "1")
    assert code == 0 and "nothing to run" in err


def test_one_sweep_per_folder_at_a_time(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with locked(out):
        code, _, err, _ = sweep_cli(write_config(tmp_path / "a.json", TINY), out)
    assert code == 2 and "another sweep" in err
    assert not (out / RESULTS).exists()


def test_a_folder_with_other_files_is_not_a_sweep_folder(tmp_path):
    out = tmp_path / "thesis"
    out.mkdir()
    (out / "summary.json").write_text("my own summary")
    code, _, err, _ = sweep_cli(write_config(tmp_path / "a.json", TINY), out)
    assert code == 2 and "holds no sweep results" in err
    assert (out / "summary.json").read_text() == "my own summary"


def test_a_corrupt_row_is_named_and_a_torn_last_line_dropped(tmp_path):
    out = tmp_path / "out"
    config = write_config(tmp_path / "a.json", TINY)
    assert sweep_cli(config, out)[0] == 0
    summary = (out / SUMMARY).read_bytes()
    lines = (out / RESULTS).read_bytes().splitlines(keepends=True)
    for bad in (b'{"key": 1}\n', b"[" * 100000 + b"\n", b"\xff\xfe\n", b'{"key":"x","point":{},"result":{}}\n'):
        (out / RESULTS).write_bytes(lines[0] + bad + b"".join(lines[1:]))
        code, _, err, _ = sweep_cli(config, out)
        assert code == 2 and f"{RESULTS}:2: not a result row" in err, err
    (out / RESULTS).write_bytes(b"".join(lines[:2]) + lines[2][:-10])  # killed while appending
    assert sweep_cli(config, out)[0] == 0
    assert (out / SUMMARY).read_bytes() == summary


def test_an_absurd_grid_is_refused_by_counting_never_built(tmp_path):
    cfg = {"specs": ["rfd"], "grid": {name: [0.1 * k for k in range(20)] for name in
                                      ("drop", "cancel", "replay", "reject", "fail", "think_s", "step_ms", "echo_ms",
                                       "insert_ms")}}
    tracemalloc.start()
    with pytest.raises(sw.InputError, match="512,000,000,000 points"):
        check_config(cfg)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 5_000_000  # bytes: nothing was enumerated
    points = grid_points(cfg["grid"])
    assert iter(points) is points  # a generator: combinations are made one at a time


@pytest.mark.parametrize("name, data, words", [
    ("bad.toml", b"\xff\xfe", "not UTF-8"),
    ("deep.json", b'{"specs":' + b"[" * 100000 + b"]" * 100000 + b"}", "nested too deeply"),
    ("deep.toml", b"a = " + b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    ("nan.json", b'{"base": {"think_s": NaN}}', "NaN is not JSON"),
    ("inf.toml", b"[base]\nthink_s = inf\n", "think_s must be a finite number"),
    ("big.json", b'{"sessions": 1' + b"0" * 5000 + b"}", "sessions"),
    ("bool.toml", b"[base]\nclients = true\n", "clients"),
    ("date.toml", b"[grid]\ndrop = [1979-05-27]\n", "drop"),
])
def test_bad_configs_are_one_line_exit_2(tmp_path, name, data, words):
    (tmp_path / name).write_bytes(data)
    code, _, err, _ = sweep_cli(str(tmp_path / name), tmp_path / "out")
    assert code == 2 and words in err, err


# -- killed at any moment, rerun: the same summary.json, byte for byte ---------------------------


class Killed(BaseException):
    pass


def test_killed_at_any_file_operation_then_rerun_gives_the_same_summary(tmp_path, monkeypatch):
    """Interrupt the sweep at its k-th write (append, fsync, replace) for every k; a rerun finishes identically."""
    cfg = check_config(TINY)
    reference = tmp_path / "reference"
    assert run_sweep(cfg, reference, workers=1, log=quiet) == 0
    expected = (reference / SUMMARY).read_bytes()
    real_fsync, real_replace = os.fsync, os.replace
    for k in range(1, 20):
        calls = {"n": 0}

        def tick(real):
            def op(*args):
                calls["n"] += 1
                if calls["n"] == k:
                    raise Killed()
                return real(*args)
            return op

        out = tmp_path / f"k{k}"
        monkeypatch.setattr(sw.os, "fsync", tick(real_fsync))
        monkeypatch.setattr(sw.os, "replace", tick(real_replace))
        try:
            run_sweep(cfg, out, workers=1, log=quiet)
            finished = True
        except Killed:
            finished = False
        monkeypatch.setattr(sw.os, "fsync", real_fsync)
        monkeypatch.setattr(sw.os, "replace", real_replace)
        assert run_sweep(cfg, out, workers=1, log=quiet) == 0
        assert (out / SUMMARY).read_bytes() == expected, k
        if finished:
            break
    assert k > 4  # every append and the summary were interrupted once


def test_torn_results_at_every_byte_then_rerun_gives_the_same_summary(tmp_path):
    cfg = check_config(TINY)
    reference = tmp_path / "reference"
    run_sweep(cfg, reference, workers=1, log=quiet)
    expected = (reference / SUMMARY).read_bytes()
    data = (reference / RESULTS).read_bytes()
    line_ends = [i + 1 for i, b in enumerate(data) if b == 10]
    cuts = sorted({0, *line_ends, *(e - 1 for e in line_ends), *(e - 100 for e in line_ends[1:]), len(data) // 2})
    for cut in cuts:
        out = tmp_path / f"cut{cut}"
        out.mkdir()
        (out / RESULTS).write_bytes(data[:cut])
        assert run_sweep(cfg, out, workers=1, log=quiet) == 0
        assert (out / SUMMARY).read_bytes() == expected, cut


# -- worker processes live no longer than the sweep -----------------------------------------------

LONG = {"specs": ["rfd"], "grid": {"drop": [0.0, 0.01, 0.02, 0.03]}, "sessions": 400, "seed": 1}


def _children(pid: int) -> set[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return {int(x) for x in out.split()}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (already exited, not yet reaped by init) is gone for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc and uses pgrep")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_sweep_leaves_no_worker_processes(tmp_path, sig):
    config = write_config(tmp_path / "long.json", LONG)
    proc = subprocess.Popen([sys.executable, "-m", "acplab.model.app.cli", "sweep", config, "--out",
                             str(tmp_path / "out"), "--workers", "2", "--quiet"], stderr=subprocess.PIPE)
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < deadline:
        workers |= _children(proc.pid)
        time.sleep(0.05)
    assert len(workers) >= 2
    proc.send_signal(sig)
    assert proc.wait(timeout=60) == -sig
    deadline = time.monotonic() + 30
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers)
