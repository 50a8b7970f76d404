"""A sweep on a real Dask cluster: a scheduler and worker processes on localhost, started by the test.

``acplab sweep --executor dask://HOST:PORT`` must give results identical, byte
for byte, to the local executor's: the summary does not depend on where the
points ran.
"""

import contextlib
import io
import json

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


def test_dask_cluster_gives_the_local_executor_s_results(tmp_path):
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps(CONFIG))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1", scheduler_port=0) as cluster:
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
