"""A sweep and a matrix on a real Dask cluster: a scheduler and worker processes on localhost, started by the test.

``acplab sweep --executor dask://HOST:PORT`` must give results identical, byte
for byte, to the local executor's: the summary does not depend on where the
points ran.  ``acplab matrix --executor dask://`` must write every
counterexample on the client, identical to a local run's, wherever the
workers run.
"""

import contextlib
import io
import json
import os
import re

import pytest

from acplab.model.app.cli import main
from acplab.simulations.sweep import RESULTS, SUMMARY

distributed = pytest.importorskip("distributed")

CONFIG = {"specs": ["rfd", "client-matches-by-order"], "grid": {"drop": [0.0, 0.05]},
          "base": {"clients": 2, "prompts": 2, "disconnect_rate": 0.05}, "sessions": 6, "seed": 3}


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
            code = 0
        except SystemExit as done:
            code = done.code
    return code, out.getvalue(), err.getvalue()


def rows(folder):
    return sorted((folder / RESULTS).read_text().splitlines())


@pytest.fixture(scope="module")
def cluster():
    """One scheduler and two worker processes on localhost for the module (starting them is most of its cost)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1", scheduler_port=0) as running:
        yield running


def test_dask_cluster_gives_the_local_executor_s_results(tmp_path, cluster):
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(CONFIG))
    address = cluster.scheduler_address.removeprefix("tcp://")
    code, _, err = cli("sweep", str(config), "--out", str(tmp_path / "dask"), "--executor", f"dask://{address}",
                       "--quiet")
    assert code == 0, err
    workers = cluster.scheduler_info["workers"]
    assert len(workers) == 2
    code, _, err = cli("sweep", str(config), "--out", str(tmp_path / "local"), "--workers", "2", "--quiet")
    assert code == 0, err
    assert (tmp_path / "dask" / SUMMARY).read_bytes() == (tmp_path / "local" / SUMMARY).read_bytes()
    assert rows(tmp_path / "dask") == rows(tmp_path / "local")
    assert len(json.loads((tmp_path / "dask" / SUMMARY).read_text())["points"]) == 4


@pytest.mark.slow  # the client tries for its 10 s timeout
def test_unreachable_scheduler_is_one_line_exit_2(tmp_path):
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(dict(CONFIG, sessions=1)))
    code, out, err = cli("sweep", str(config), "--out", str(tmp_path / "o"), "--executor", "dask://127.0.0.1:1")
    assert code == 2 and err.count("\n") == 1 and "Dask scheduler" in err


def _tree(folder):
    """Every file under ``folder`` by relative path, the run's timings (seconds, states/s) taken out."""
    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name == "matrix.json":
            data = json.dumps(_untimed(json.loads(data)), sort_keys=True).encode()
        elif path.name in ("matrix.md", "report.html"):
            data = re.sub(rb"[0-9][0-9.,]* s\b", b"T s", data)
        out[path.relative_to(folder).as_posix()] = data
    return out


def _untimed(value):
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


#: a variant with an ACP counterexample on report-order, one with bridge counterexamples (and rfd, the baseline)
ROWS = ("--spec", "v2-draft-naive", "--spec", "new-error-type")  # the naive draft keeps its duplicate copy


@pytest.mark.slow  # two small matrices with --html: about 6 s of CPU beyond the cluster's start
def test_a_matrix_on_dask_brings_its_counterexamples_home(tmp_path, monkeypatch, cluster):
    """Workers in another working directory, a relative --out: every file the client links is on the client.

    Each worker writes into a scratch folder of its own and ships the bytes back; before, a worker wrote
    ``--out``'s relative path under its own working directory and the client's links pointed at nothing.
    """
    from acplab.model.app import matrix as mx

    monkeypatch.setattr(mx, "MATRIX_RUNS", (("report-order", {}),))  # the tasks are planned on the client
    (tmp_path / "workers").mkdir()
    (tmp_path / "dask").mkdir()
    (tmp_path / "local").mkdir()
    with distributed.Client(cluster) as client:
        before = client.run(os.getcwd)
        client.run(os.chdir, str(tmp_path / "workers"))
        try:
            assert set(client.run(os.getcwd).values()) == {str(tmp_path / "workers")}
            monkeypatch.chdir(tmp_path / "dask")
            address = cluster.scheduler_address.removeprefix("tcp://")
            code, out, err = cli("matrix", *ROWS, "--out", "m", "--executor", f"dask://{address}", "--json", "--html",
                                 "--quiet")
        finally:
            for worker, cwd in before.items():
                client.run(os.chdir, cwd, workers=[worker])
    assert code in (0, 1), err
    monkeypatch.chdir(tmp_path / "local")
    code_local, out_local, err = cli("matrix", *ROWS, "--out", "m", "--executor", "serial", "--json", "--html",
                                     "--quiet")
    assert code_local == code, err
    assert not any((tmp_path / "workers").rglob("*")), "a worker wrote into its own working directory"
    linked = [f for cell in json.loads(out)["details"].values() for d in cell.values() for f in d.get("files", [])]
    assert linked and all((tmp_path / "dask" / f).is_file() for f in linked)
    dask_files, local_files = _tree(tmp_path / "dask" / "m"), _tree(tmp_path / "local" / "m")
    assert sorted(dask_files) == sorted(local_files)
    assert any(name.endswith(".events.jsonl") for name in dask_files)  # unlisted files come home too
    assert any(name.startswith("v2-draft-naive/") for name in dask_files)  # an ACP run's counterexample
    assert any(name.startswith("new-error-type/bridge-") for name in dask_files)  # and a bridge run's
    assert b"v2-draft-naive/report-order/NoDuplicateMessages.jsonl" in dask_files["report.html"]  # the report links them
    for name in dask_files:
        assert dask_files[name] == local_files[name], name
