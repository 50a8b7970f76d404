"""The command-line contract: JSON fields, exit codes, one-line errors, and the README's commands."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    proc = subprocess.run(
        [sys.executable, "-m", "acplab.model.app.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("rms, states", [(3, 288), (5, 8832)])
def test_twophase_json_reports_the_published_count(rms, states):
    code, out, err = run("check", "--model", "twophase", "--rms", str(rms), "--json")
    data = json.loads(out)
    assert code == 0, err
    assert (data["verdict"], data["complete"], data["states"]) == ("holds", True, states)
    for key in ("spec", "transitions", "seconds", "violations", "witnesses"):
        assert key in data


def test_broken_twophase_exits_1_and_writes_the_trace(tmp_path):
    out_dir = tmp_path / "cex"
    code, out, _ = run("check", "--model", "twophase", "--broken", "--json", "--out", str(out_dir))
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "violated"
    [v] = data["violations"]
    assert v["property"] == "Consistent" and v["trace_length"] == 3
    text = Path(v["files"][0]).read_text()
    assert "1. TMCommit" in text and "RMRcvCommitMsg(rm2)" in text


def test_existing_output_folder_is_never_overwritten(tmp_path):
    out_dir = tmp_path / "cex"
    out_dir.mkdir()
    (out_dir / "mine.txt").write_text("keep me")
    code, out, _ = run("check", "--model", "twophase", "--broken", "--json", "--out", str(out_dir))
    written = json.loads(out)["violations"][0]["files"][0]
    assert (out_dir / "mine.txt").read_text() == "keep me"
    assert not written.startswith(str(out_dir) + "/")


def test_state_limit_gives_incomplete_exit_3():
    code, out, _ = run("check", "--model", "twophase", "--rms", "5", "--max-states", "50", "--json")
    assert code == 3 and json.loads(out)["verdict"] == "incomplete"


@pytest.mark.parametrize(
    "args",
    [["check", "--model", "twophase", "--rms", "0"], ["check", "--rms", "many"], ["check", "--bogus"],
     ["check", "--model", "nope"], ["nosuchcommand"], ["check", "--max-seconds", "-1", "--model", "twophase"]],
)
def test_bad_usage_is_one_line_and_exit_2(args):
    code, out, err = run(*args)
    assert code == 2
    assert err.startswith("acplab: error: ") and err.count("\n") == 1
    assert "Traceback" not in err


def _fenced_commands(text):
    return re.findall(r"```sh\n(.*?)\n```", text, re.S)


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    commands = _fenced_commands(readme)
    assert len(commands) >= 2
    test_command = next(c for c in commands if "pytest" in c)
    assert test_command in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("model, spec, code", [
    ("bridge-v1-agent", "rfd", 0), ("bridge-v2-agent", "rfd", 0),
    ("bridge-v1-agent", "error_response_after_insertion", 1), ("bridge-v2-agent", "drop_error_object", 1),
])
def test_bridge_models_are_checkable_from_the_command_line(model, spec, code, tmp_path):
    rc, out, err = run("check", "--model", model, "--spec", spec, "--json", "--out", str(tmp_path / "o"))
    assert rc == code, err
    assert json.loads(out)["verdict"] == ("holds" if code == 0 else "violated")


def test_unknown_bridge_mutant_is_one_line_exit_2():
    code, _, err = run("check", "--model", "bridge-v1-agent", "--spec", "nope")
    assert code == 2 and err.count("\n") == 1 and "known: rfd" in err


def test_workers_and_reduction_change_nothing_but_the_counts_they_should(tmp_path):
    """--workers gives the same JSON whatever the count; --no-por explores more states, same verdict."""
    args = ("check", "--scenario", "identical-prompts", "--spec", "reused-id", "--json", "-q")
    keep = ("verdict", "complete", "states", "transitions", "depth", "violations", "witnesses", "reduced")
    outs = []
    for workers in ("1", "2"):
        code, out, err = run(*args, "--workers", workers, "--out", str(tmp_path / workers))
        assert code == 1, err
        data = json.loads(out)
        for v in data["violations"]:
            v.pop("files")
        outs.append({k: data[k] for k in keep})
    assert outs[0] == outs[1]
    code, out, _ = run(*args, "--workers", "2", "--no-por", "--out", str(tmp_path / "plain"))
    plain = json.loads(out)
    assert (code, plain["verdict"], plain["reduced"]) == (1, "violated", False)
    assert [v["trace_length"] for v in plain["violations"]] == [v["trace_length"] for v in outs[0]["violations"]]


def test_random_walks_never_claim_holds(tmp_path):
    code, out, err = run("check", "--scenario", "report-order", "--walk", "20", "--seed", "4", "--json")
    data = json.loads(out)
    assert (code, data["verdict"], data["search"]) == (3, "incomplete", "random walks"), err
    code, out, _ = run("check", "--model", "twophase", "--broken", "--walk", "200", "--json", "--out", str(tmp_path))
    assert (code, json.loads(out)["violations"][0]["property"]) == (1, "Consistent")
