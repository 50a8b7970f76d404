"""Outputs acplab writes are its own, whole, and fail as one line.

* ``sweep --fresh --out DIR`` refuses a folder that is not a sweep's (a user's ``summary.json`` survives);
* a file size limit (``ulimit -f``) during ``check --out`` is one line naming the file, exit 2, and leaves
  no torn file and no temporary file; a search worker hitting it says so in one line too;
* every file is written through one atomic writer: a failure mid-write keeps the old file;
* SIGTERM early in a sweep (workers just forked) prints no worker traceback;
* ``matrix.md`` carries no raw HTML, link or table break from a spec file's text.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acplab.model.app.matrix_report import markdown
from acplab.model.render.atomic import write_atomic
from cli_harness import check_contract, contract

ROOT = Path(__file__).resolve().parents[2]
ACPLAB = [sys.executable, "-m", "acplab.model.app.cli"]


def test_sweep_fresh_refuses_a_folder_that_is_not_a_sweeps(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "summary.json").write_text('{"my": "numbers"}')
    config = tmp_path / "s.toml"
    config.write_text('specs = ["rfd"]\nsessions = 1\n[base]\nclients = 1\nprompts = 1\n')
    code, _, err, _ = contract("sweep", str(config), "--out", str(folder), "--fresh", "--workers", "1", "-q")
    assert code == 2 and "holds no sweep results" in err
    assert (folder / "summary.json").read_text() == '{"my": "numbers"}'
    # a sweep's own folder is still started over by --fresh
    assert contract("sweep", str(config), "--out", str(tmp_path / "s"), "--workers", "1", "-q")[0] == 0
    assert contract("sweep", str(config), "--out", str(tmp_path / "s"), "--fresh", "--workers", "1", "-q")[0] == 0


def test_sweep_fresh_refuses_results_next_to_a_users_summary(tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "results.jsonl").write_text("")
    (folder / "summary.json").write_text('{"my": "numbers"}')
    config = tmp_path / "s.toml"
    config.write_text('specs = ["rfd"]\nsessions = 1\n')
    code, _, err, _ = contract("sweep", str(config), "--out", str(folder), "--fresh", "--workers", "1", "-q")
    assert code == 2 and (folder / "summary.json").read_text() == '{"my": "numbers"}'


def _limited(kbytes: int):
    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (kbytes * 1024, kbytes * 1024))
    return preexec


def _run(args, cwd, preexec=None, timeout=300):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run(ACPLAB + [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          preexec_fn=preexec, timeout=timeout)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_file_size_limit_during_check_out_is_one_line_and_no_torn_file(tmp_path, workers):
    args = ["check", "--spec", "reused-id", "--html", "--workers", workers]
    whole = _run(args + ["--out", "whole"], tmp_path)
    assert whole.returncode == 1, whole.stderr
    cut = _run(args + ["--out", "cut"], tmp_path, _limited(2))
    check_contract(cut.returncode, cut.stdout, cut.stderr, False)
    assert cut.returncode == 2 and "File too large" in cut.stderr, cut.stderr
    line = cut.stderr.strip().splitlines()[-1]
    assert "Traceback" not in cut.stderr and line.startswith("acplab: error: ")
    assert any(where in line for where in ("cut", "search worker", "temporary files"))  # which file, or whose
    expected, got = _files(tmp_path / "whole"), _files(tmp_path / "cut") if (tmp_path / "cut").exists() else {}
    assert not [n for n in got if "acplab-tmp" in n]
    assert {n: b for n, b in got.items() if expected.get(n) != b} == {}  # every file left is whole


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "report.html"
    target.write_text("old report")
    os.chmod(target, 0o640)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))  # Python ignores SIGXFSZ: writes fail with EFBIG
    try:
        with pytest.raises(OSError) as err:
            write_atomic(target, "x" * 100_000)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert err.value.filename == str(target) and "too large" in str(err.value)
    assert target.read_text() == "old report" and sorted(os.listdir(tmp_path)) == ["report.html"]
    write_atomic(target, "new report")
    assert target.read_text() == "new report" and (os.stat(target).st_mode & 0o777) == 0o640


SWEEP = 'specs = ["rfd"]\nsessions = 150\n[grid]\ndrop = [0.0, 0.01, 0.02, 0.03]\n'


@pytest.mark.parametrize("after", [0.05, 0.3])
def test_sigterm_early_in_a_sweep_prints_no_worker_traceback(tmp_path, after):
    """The whole process group gets SIGTERM (as from a terminal or a job runner) right as workers start."""
    (tmp_path / "s.toml").write_text(SWEEP)
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.Popen(ACPLAB + ["sweep", "s.toml", "--out", "out", "--workers", "2"], cwd=tmp_path, env=env,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    first = proc.stderr.readline()  # "N point(s) to run": the executor is open, workers are being forked
    time.sleep(after)
    os.killpg(proc.pid, signal.SIGTERM)
    rest = proc.stderr.read()
    proc.wait(60)
    err = first + rest
    assert "Traceback" not in err and "Terminated" not in err, err[-3000:]
    assert proc.returncode == -signal.SIGTERM
    assert len(err.strip().splitlines()) <= 3, err  # the plan, at most a point, and "interrupted: ..."


def test_matrix_markdown_carries_no_html_or_link_from_a_spec_files_text():
    matrix = json.loads((ROOT / "figures" / "matrix" / "matrix.json").read_text())
    evil = "<img src=x onerror=alert(1)> [click](javascript:alert(1)) | cell\n# heading"
    name = next(n for n in matrix["verdicts"] if n != "rfd")
    matrix["verdicts"][name]["claim"] = evil
    matrix["no_difference"][name] = evil
    row = next(r for r in matrix["specs"] if matrix["rows"][r]["spec"] == name)
    matrix["cells"][row]["NoDuplicateMessages" if "NoDuplicateMessages" in matrix["cells"][row] else
                         next(iter(matrix["cells"][row]))] = "by design"
    for prop in matrix["cells"][row]:
        if matrix["cells"][row][prop] == "by design":
            matrix["details"][row].setdefault(prop, {})["reason"] = evil
    text = markdown(matrix)
    assert "<img" not in text and "[click](javascript:" not in text and "\n# heading" not in text
    assert text.count("&lt;img src=x onerror=alert(1)&gt;") >= 2
