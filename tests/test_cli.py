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


def test_first_line_names_the_spec_and_the_bounds():
    code, out, _ = run("check", "--scenario", "report-order", "-q")
    assert code == 0
    assert out.splitlines()[0] == ("check spec rfd, scenario report-order: bounds clients=1 prompts=1 contents=hi; "
                                   "symmetry on")
    code, out, _ = run("check", "--model", "twophase", "--rms", "2")
    assert out.splitlines()[0] == "check model twophase, spec twophase: 2 resource managers; symmetry off"


def test_set_reaches_every_bound_a_scenario_sets():
    code, out, err = run("check", "--scenario", "report-order", "--set", "failures=1", "--set", "chunks=yes",
                         "--set", "contents=hi,yes", "--prompts", "1", "--json")
    data = json.loads(out)
    assert code == 0, err
    bounds = data["bounds"]
    assert (bounds["failures"], bounds["chunks"], bounds["contents"], bounds["prompts"]) == (1, True, ["hi", "yes"], 1)
    from acplab.model.acp.model import Bounds
    from acplab.model.acp.scenarios import SCENARIOS

    settable = set(Bounds._fields)
    assert {k for s in SCENARIOS.values() for k, v in s.bounds._asdict().items()
            if v != Bounds._field_defaults[k]} <= settable


@pytest.mark.parametrize("args, words", [
    (["--set", "nope=1"], "unknown bound 'nope'"), (["--set", "clients=0"], "at least 1"),
    (["--set", "chunks=maybe"], "yes or no"), (["--clients", "1", "--set", "clients=2"], "given twice"),
    (["--set", "failures"], "KEY=VALUE"),
])
def test_bad_settings_are_one_line_errors(args, words):
    code, _, err = run("check", *args)
    assert code == 2 and err.count("\n") == 1 and words in err


@pytest.mark.parametrize("model, option", [
    ("bridge-v1-agent", ["--scenario", "default"]), ("bridge-v2-agent", ["--clients", "2"]),
    ("bridge-v1-agent", ["--no-symmetry"]), ("bridge-v1-agent", ["--set", "failures=1"]),
    ("twophase", ["--spec", "v1"]), ("twophase", ["--drops", "1"]), ("acp", ["--rms", "3"]), ("acp", ["--broken"]),
])
def test_an_option_the_model_ignores_is_an_error(model, option):
    code, _, err = run("check", "--model", model, *option)
    assert code == 2 and err.count("\n") == 1
    assert f"{option[0]} does not apply to --model {model}" in err.replace("--symmetry/", "")


def test_quiet_is_on_every_command():
    from acplab.model.app.cli import QUIET_HELP, cli

    def commands(group, prefix=""):
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):
                yield from commands(cmd, f"{prefix}{name} ")
            else:
                yield f"{prefix}{name}", cmd

    found = dict(commands(cli))
    assert len(found) >= 9
    for name, cmd in found.items():
        quiet = [p for p in cmd.params if p.name == "quiet"]
        assert quiet and "-q" in quiet[0].opts and quiet[0].help == QUIET_HELP, name


def test_bridge_mutants_are_listed_by_specs():
    code, out, _ = run("specs", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["early_ack"]["model"] == "bridge-v1-agent" and rows["early_ack"]["rules"] == ["B7", "P3", "P7"]
    assert rows["drop_error_object"]["model"] == "bridge-v2-agent" and rows["rfd"]["model"] == "acp"
    from acplab.model.acp.bridges import MUTANTS

    assert {n for ms in MUTANTS.values() for n in ms} <= set(rows)


def test_bridge_counterexamples_get_the_acp_artefacts(tmp_path):
    from acplab.model.wire.capture import read_capture

    code, out, err = run("check", "--model", "bridge-v2-agent", "--spec", "drop_error_object", "--out",
                         str(tmp_path / "o"), "--json")
    assert code == 1, err
    [v] = [v for v in json.loads(out)["violations"] if v["property"] == "B3_IdleErrorBecomesV1ErrorResponse"]
    assert [Path(f).suffix for f in v["files"]] == [".txt", ".jsonl", ".mmd"]
    txt = Path(v["files"][0]).read_text()
    assert "bridge -> client (v1)  sends error #7 (-32603)" in txt and "BState(" not in txt
    records = list(read_capture(v["files"][1]))
    assert {r.conn for r in records} == {"client-bridge", "bridge-agent"}


def test_witness_runs_are_written_like_counterexamples(tmp_path):
    code, out, err = run("check", "--scenario", "report-order", "--witnesses", "--out", str(tmp_path / "w"), "--json")
    data = json.loads(out)
    assert code == 0, err
    files = data["witnesses"]["files"]
    assert set(files) == {"echo_before_response", "response_before_echo"}
    for paths in files.values():
        assert [Path(f).suffix for f in paths] == [".txt", ".jsonl", ".mmd"]
    assert "witness echo_before_response" in Path(files["echo_before_response"][0]).read_text()
    code, _, err = run("check", "--scenario", "report-order", "--witness", "nope")
    assert code == 2 and "unknown witness nope" in err


def test_rules_json_lists_every_rule_with_its_monitors_and_mutants():
    code, out, err = run("rules", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 131  # P20 and U15, the RFD statements that had no rule
    for row in rows:
        assert {"id", "text", "strength", "checkable", "monitors", "mutants", "rfd"} <= set(row)
    by_id = {r["id"]: r for r in rows}
    musts = [r for r in rows if "MUST" in r["strength"] and r["checkable"] in ("yes", "yes*")]
    assert len(musts) == 57  # with U15 and all(r["monitors"] for r in musts)
    assert set(by_id["P5"]["mutants"]) == {"reused-id", "restart-resets-ids", "id-leaked-after-rejection",
                                           "native-ids-collide"}
    assert "MessageIdsDistinct" in by_id["P5"]["monitors"]


def test_rules_one_id_and_an_unknown_one():
    code, out, _ = run("rules", "R7")
    assert code == 0 and out.startswith("R7 ") and "ReplayResetsBeforeChunks" in out and "replay-without-reset" in out
    code, out, err = run("rules", "Z9")
    assert code == 2 and "unknown rule 'Z9'" in err and len(err.strip().splitlines()) == 1


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
