"""Bad-input regressions on the command line: exit 2 on one line (and one JSON object), checked before work.

Each case once gave a traceback, exit 1 after a whole run, or a quiet wrong
answer (each test names the case); each now stops with one line, before any work.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from acplab.model.render import artefacts
from acplab.model.render.artefacts import fresh_out_dir
from cli_harness import contract, run_cli


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def one_error(*args: str) -> tuple[str, dict | None]:
    """Run, expect exit 2 with one stderr line; return that line and the JSON object (under --json)."""
    code, out, err, obj = contract(*args)
    assert code == 2, (code, out[-300:], err)
    return err, obj


@pytest.fixture
def blocked(tmp_path) -> str:
    """An output path that cannot be a folder: it goes through a file (root ignores permissions)."""
    (tmp_path / "file").write_text("keep")
    return str(tmp_path / "file" / "out")


def test_unwritable_out_is_refused_before_any_work(blocked, tmp_path, monkeypatch):
    def no_work(*a, **k):
        raise AssertionError("work started before --out was checked")

    from acplab.model.app import checking, figures

    monkeypatch.setattr(checking.Search, "run", no_work)
    monkeypatch.setattr(figures, "generate", no_work)
    capture = tmp_path / "c.jsonl"
    capture.write_text('{"seq":1,"conn":"c1","dir":"client->agent","msg":{"jsonrpc":"2.0","method":"x"}}\n')
    config = tmp_path / "s.json"
    config.write_text('{"sessions": 1}')
    for args in (["check", "--json"], ["trace", "check", str(capture), "--json"], ["simulate", "--sessions", "1", "--json"],
                 ["sweep", str(config)], ["figures"], ["matrix", "--json"], ["check", "--model", "twophase", "--json"]):
        err, obj = one_error(*args, "--out", blocked)
        assert "file" in err and "not a folder" in err, err
        if obj is not None:
            assert obj["verdict"] == "error"
    assert (tmp_path / "file").read_text() == "keep"


@pytest.mark.parametrize("args, words", [
    (["check", "--clients", "99999999999999999999"], "--clients"),
    (["check", "--clients", "10000"], "1..8"),
    (["check", "--max-seconds", "nan"], "--max-seconds"),
    (["check", "--max-seconds", "inf"], "--max-seconds"),
    (["check", "--max-states", "0"], "--max-states"),
    (["simulate", "--disconnect-rate", "inf"], "--disconnect-rate"),
    (["simulate", "--latency", "inf"], "--latency"),
    (["simulate", "--latency", "nan"], "--latency"),
    (["simulate", "--set", "think_s=inf"], "think_s"),
    (["simulate", "--set", "think_s=nan"], "think_s"),
    (["simulate", "--set", "clients=1e400"], "clients"),
    (["simulate", "--sessions", "100000", "--clients", "32", "--prompts", "1000"], "CPU time"),
    (["simulate", "--clients", "33"], "at most 32"),
    (["simulate", "--set", "answer_ms=5e-324"], "answer_ms"),  # found by the nightly fuzz: a mean of 0 s
    (["simulate", "--disconnect-rate", "5e-324"], "disconnect_rate"),
    (["simulate", "--disconnect-rate", "1e9"], "CPU time"),
    (["matrix", "--max-seconds", "nan"], "--max-seconds"),
    (["trace", "check", "no-such-capture.jsonl"], "no-such-capture"),
])
def test_bad_values_are_one_line_exit_2_and_one_json_object(args, words):
    err, obj = one_error(*args, "--json")
    assert words in err
    assert obj["verdict"] == "error" and words in obj["error"]
    err_plain, obj = one_error(*args)
    assert obj is None and err_plain == err


def test_json_error_object_for_usage_errors_too():
    for args in (["check", "--bogus", "--json"], ["check", "--json", "--spec", "nope"], ["trace", "check", "--json"],
                 ["specs", "--json", "--nope"], ["simulate", "--json", "--on-violation", "x"]):
        _, obj = one_error(*args)
        assert set(obj) >= {"verdict", "error"}


def test_deep_json_gets_a_verdict_in_trace_check(tmp_path):
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    good = '{"seq":1,"conn":"c1","dir":"client->agent","msg":{"jsonrpc":"2.0","id":1,"method":"session/prompt",' \
           '"params":{"sessionId":"s","prompt":[]}}}'
    path = tmp_path / "deep.jsonl"
    path.write_text(good + "\n" + f'{{"seq":2,"conn":"c1","dir":"client->agent","msg":{deep}}}\n' + deep + "\n")
    code, out, err, obj = contract("trace", "check", str(path), "--json")
    assert code == 1 and obj["verdict"] == "violated"
    assert {v["property"] for v in obj["violations"]} >= {"WellFormedJsonRpc", "CaptureFormat"}
    first = tmp_path / "first.jsonl"
    first.write_text(deep + "\n")
    err, obj = one_error("trace", "check", str(first), "--json")
    assert "nested too deeply" in err and obj["verdict"] == "error"


def test_capture_text_is_escaped_for_the_terminal(tmp_path):
    path = tmp_path / "evil.jsonl"
    path.write_text(json.dumps({"seq": 1, "conn": "c1\n\u001b[2J\u202e", "dir": "client->agent",
                                "raw": "\u001b]0;pwned\u0007\nfake: holds", "error": "not JSON"}) + "\n")
    code, out, err = run_cli("trace", "check", str(path))
    assert code == 1
    assert "\u001b" not in out and "\u202e" not in out and "\u0007" not in out
    assert "\\x1b" in out
    violation_lines = [line for line in out.splitlines() if "WellFormedJsonRpc" in line]
    assert len(violation_lines) == 1 and "fake: holds" in violation_lines[0]  # the raw newline stayed inside


def test_an_error_message_with_a_newline_stays_one_line(tmp_path):
    err, _ = one_error("sweep", str(tmp_path / "a\nb\u001b[31m.toml"))
    assert err.count("\n") == 1 and "\u001b" not in err


# -- fresh_out_dir: atomic ---------------------------------------------------------------------


def _claim(base: str) -> str:
    folder = fresh_out_dir(base, "race")
    (folder / "mine.txt").write_text(str(folder))
    return str(folder)


def test_racing_runs_never_share_a_folder(tmp_path):
    base = str(tmp_path / "out")
    with ProcessPoolExecutor(4) as pool:
        folders = list(pool.map(_claim, [base] * 12))
    assert len(set(folders)) == 12
    for f in folders:
        assert Path(f, "mine.txt").read_text() == f


def test_an_empty_folder_claimed_by_another_process_is_not_taken(tmp_path):
    import fcntl
    import os

    base = tmp_path / "empty"
    base.mkdir()
    fd = os.open(base, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as another run holding it
    try:
        with ProcessPoolExecutor(1) as pool:
            got = pool.submit(_claim, str(base)).result()
    finally:
        os.close(fd)
    assert got == str(tmp_path / "empty-2")
    assert fresh_out_dir(str(base), "x") == base  # free again and still empty
    assert artefacts._CLAIMED
