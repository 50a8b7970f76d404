"""`acplab trace check`: model counterexamples fed back, v1 SDK captures, hand-written v2 captures, bad input."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acplab.model.acp.killers import Claim, reproduce
from acplab.model.acp.model import AcpModel
from acplab.model.wire.capture import dump_capture
from acplab.model.app.checking import acp_model, complete_path
from acplab.model.errors import InputError
from acplab.model.engine import Limits, Path as ExplorePath, explore
from acplab.model.acp.monitors import ALL_MONITORS
from acplab.model.render.traces import wire_records
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import FINDINGS, MUTANTS
from acplab.model.trace.check import check_capture
from acplab.model.app.tracing import check_and_write

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
V2 = FIXTURES / "v2"
BY_NAME = {m.name: m for m in ALL_MONITORS}


def _capture(model, path, dest: Path) -> Path:
    dump_capture(wire_records(path.actions_with_effects()), dest)
    return dest


def _props(result):
    return {v.property for v in result.violations}


# --------------------------------------------------------------------------- model counterexamples


@pytest.mark.parametrize("name", sorted({**MUTANTS, **FINDINGS}))
def test_mutant_counterexample_is_flagged_when_wire_checkable(name, tmp_path):
    spec = {**MUTANTS, **FINDINGS}[name]
    scenarios = [s for s in SCENARIOS.values() if name in s.catches]
    assert scenarios, f"no scenario catches {name}"
    violation = None
    for sc in scenarios:  # the monitor alone, so that another rule breaking first cannot hide it
        model = AcpModel(spec, sc.bounds)
        violation = reproduce(Claim(spec.breaks, name, sc.name))
        if violation is not None:
            break
    assert violation is not None, f"{name}: the explorer did not find {spec.breaks}"
    capture = _capture(model, violation.path, tmp_path / f"{name}.jsonl")
    result = check_capture(capture)
    monitor = BY_NAME[spec.breaks]
    if monitor.wire and monitor.name not in _props(result):
        # The model may stop at an internal event (DistinctMessageIds fires at the insertion that
        # reuses an ID, before the second success is sent): let the run go on until the wire shows it.
        *head, (action, last) = violation.path.steps
        cut_short = ExplorePath(violation.path.initial, (*head, (action, last._replace(violation=None))),
                                violation.path.ordinals)
        capture = _capture(model, complete_path(model, cut_short), tmp_path / f"{name}-completed.jsonl")
        result = check_capture(capture)
    if monitor.wire:
        hits = [v for v in result.violations if v.property == monitor.name]
        assert hits, f"{name}: {monitor.name} not flagged; got {[v.explanation for v in result.violations]}"
        assert all(tuple(v.rules) == tuple(monitor.rules) and v.seq for v in hits)
    else:
        assert (monitor.name, tuple(monitor.rules)) in result.not_checkable
        assert result.to_json()["complete"] is True


@pytest.mark.parametrize("scenario", ["report-order", "identical-prompts", "replay-identity", "streamed-replay",
                                      "failure-after-insertion", "tool-failure", "local-command",
                                      "retained-command", "resume-while-running", "permission-cancel"])
def test_rfd_witness_paths_hold(scenario, tmp_path):
    model, _ = acp_model("rfd", scenario)
    result = explore(model, Limits(max_seconds=10))
    assert result.witnesses and all(p is not None for p in result.witnesses.values())
    for name, path in result.witnesses.items():
        capture = _capture(model, complete_path(model, path), tmp_path / f"{name}.jsonl")
        checked = check_capture(capture)
        assert checked.verdict == "holds", (scenario, name, [v.explanation for v in checked.violations])
        assert check_capture(capture, fast=False).verdict == "holds"


def test_streaming_monitors_agree_with_the_model_monitors(tmp_path):
    """The checker's streaming re-implementations flag exactly what the model's monitors flag."""
    files = sorted(V2.glob("*.jsonl")) + sorted(FIXTURES.glob("sdk_v1_*.jsonl"))
    for name in ("reused-id", "replay-without-reset"):
        spec = MUTANTS[name]
        sc = next(s for s in SCENARIOS.values() if name in s.catches)
        model = AcpModel(spec, sc.bounds)
        for v in explore(model, Limits(max_seconds=20), stop_on_violation=True).violations:
            files.append(_capture(model, v.path, tmp_path / f"{name}.jsonl"))
    for f in files:
        for spec in ("rfd", "v2-draft"):
            fast, generic = check_capture(f, spec), check_capture(f, spec, fast=False)
            assert _props(fast) == _props(generic), f
            assert [v.explanation for v in fast.violations if v.property != "AcceptedMessageReportedLive"] == \
                   [v.explanation for v in generic.violations if v.property != "AcceptedMessageReportedLive"], f


# --------------------------------------------------------------------------- v1 SDK captures


V1_FILES = sorted(FIXTURES.glob("sdk_v1_*.jsonl"))


@pytest.mark.parametrize("path", V1_FILES, ids=lambda p: p.stem)
def test_v1_sdk_captures_hold_as_v1(path):
    result = check_capture(path, "v1")
    assert result.verdict == "holds", [v.explanation for v in result.violations]
    assert result.messages > 0 and result.skipped == 2  # initialize and its response


@pytest.mark.parametrize("path", V1_FILES, ids=lambda p: p.stem)
def test_v1_end_of_turn_response_is_flagged_by_rfd(path):
    result = check_capture(path, "rfd")
    ends = [json.loads(line) for line in path.read_text().splitlines() if '"stopReason"' in line]
    flagged = [v for v in result.violations if v.property == "WireShape"]
    assert [v.seq for v in flagged] == [[e["seq"]] for e in ends]
    assert all(v.rules == ("P4", "W1") for v in flagged)
    assert result.exit_code == (1 if ends else 0)


def test_v1_monitors_catch_a_bad_stop_reason_and_a_missing_answer(tmp_path):
    lines = (FIXTURES / "sdk_v1_normal_turn.jsonl").read_text().splitlines()
    bad = lines[:-1] + [lines[-1].replace('"end_turn"', '"error"')]
    (tmp_path / "bad.jsonl").write_text("\n".join(bad) + "\n")
    (tmp_path / "open.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    assert _props(check_capture(tmp_path / "bad.jsonl", "v1")) == {"V1StopReasonClosedEnum"}
    found = {v.property: v for v in check_capture(tmp_path / "open.jsonl", "v1").violations}
    assert set(found) == {"V1EveryPromptAnsweredOnce", "EveryPromptAnswered"}  # the v1 and the general rule
    v = found["V1EveryPromptAnsweredOnce"]
    assert (v.property, v.rules, v.seq) == ("V1EveryPromptAnsweredOnce", ("W14", "B6"), [5])


# --------------------------------------------------------------------------- hand-written v2 captures


@pytest.mark.parametrize("path", sorted(V2.glob("ok_*.jsonl")), ids=lambda p: p.stem)
def test_conformant_v2_captures_hold(path):
    result = check_capture(path)
    assert result.verdict == "holds", [v.explanation for v in result.violations]
    assert result.exit_code == 0


@pytest.mark.parametrize("stem, prop, rules, seq", [
    ("bad_duplicate_message_id", "DistinctMessageIds", ("P5",), [7, 13]),
    ("bad_missing_message_id", "WireShape", ("P4", "W1"), [7]),
    ("bad_replay_without_reset", "ReplayResetsBeforeChunks", ("R7", "R8"), [10, 11]),
    ("bad_response_never_reported", "AcceptedMessageReportedLive", ("U1",), [7]),
    ("bad_idle_with_tool_in_progress", "ToolCallsTerminalBeforeIdle", ("E6", "S6", "C8"), [10, 11]),
])
def test_violating_v2_captures_are_flagged_at_the_right_seq(stem, prop, rules, seq, tmp_path):
    result = check_and_write(V2 / f"{stem}.jsonl", out=str(tmp_path / "out"))
    [v] = result.violations
    assert (v.property, v.rules, v.seq) == (prop, rules, seq)
    mmd, jsonl = map(Path, v.files)
    assert mmd.read_text().startswith("---") and "sequenceDiagram" in mmd.read_text()
    assert f"✗ {seq[-1]}:" in mmd.read_text()
    # the window is itself a capture that reads back
    assert [json.loads(x)["seq"] for x in jsonl.read_text().splitlines()][-1] >= seq[-1]


def test_v2_draft_accepts_an_empty_prompt_result():
    assert check_capture(V2 / "bad_missing_message_id.jsonl", "v2-draft").verdict == "holds"


def test_json_fields_and_not_checkable():
    data = check_capture(V2 / "bad_duplicate_message_id.jsonl").to_json()
    for key in ("spec", "verdict", "complete", "messages", "seconds", "violations", "not_checkable", "states",
                "transitions"):
        assert key in data
    [v] = data["violations"]
    assert set(v) >= {"property", "rules", "seq", "line", "explanation", "files"}
    internal = {m.name for m in ALL_MONITORS if not m.wire}
    assert {x["property"] for x in data["not_checkable"]} == internal
    assert {x["property"] for x in data["checked"]} >= {m.name for m in ALL_MONITORS if m.wire}


def test_unknown_spec_is_an_input_error():
    with pytest.raises(InputError, match="unknown trace spec 'v3'"):
        check_capture(V2 / "ok_identical_prompts.jsonl", "v3")


def test_out_never_overwrites(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = check_and_write(V2 / "bad_duplicate_message_id.jsonl", out=str(out))
    assert (out / "keep.txt").read_text() == "mine"
    assert result.out_dir and Path(result.out_dir) != out and Path(result.violations[0].files[0]).exists()


def test_labels_other_than_model_names_appear_in_sentences(tmp_path):
    text = (V2 / "bad_response_never_reported.jsonl").read_text().replace('"conn": "c1"', '"conn": "editor-A"')
    (tmp_path / "x.jsonl").write_text(text)
    [v] = check_capture(tmp_path / "x.jsonl").violations
    assert "accepted on editor-A" in v.explanation


def test_request_id_reuse_while_pending(tmp_path):
    lines = (V2 / "ok_response_before_user_message.jsonl").read_text().splitlines()
    dup = json.loads(lines[4])
    dup["seq"] = 100
    (tmp_path / "x.jsonl").write_text("\n".join(lines[:5] + [json.dumps(dup)]) + "\n")
    props = _props(check_capture(tmp_path / "x.jsonl"))
    assert "RequestIdsUniqueWhilePending" in props


# --------------------------------------------------------------------------- the command line


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "acplab.model.app.cli", "trace", "check", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


GOOD = (V2 / "ok_response_before_user_message.jsonl").read_text().splitlines()


def test_cli_holds_and_violated():
    code, out, err = run(V2 / "ok_two_connections.jsonl")
    assert code == 0 and out.startswith("holds:") and "not checkable from the wire:" in out
    code, out, _ = run(V2 / "bad_duplicate_message_id.jsonl", "--json")
    data = json.loads(out)
    assert code == 1 and data["verdict"] == "violated" and data["violations"][0]["seq"] == [7, 13]
    code, out, _ = run(FIXTURES / "sdk_v1_normal_turn.jsonl", "--spec", "v1")
    assert code == 0


@pytest.mark.parametrize("content, code, needle", [
    ("", 2, "empty capture"),
    ("\n\n  \n", 2, "empty capture"),
    ("this is not json\n" + "\n".join(GOOD), 2, ":1: not JSON"),
    ('{"hello": 1}\n', 2, ":1: missing 'seq'"),
    ("[1, 2]\n", 2, ":1: not a capture record"),
    ('{"seq": 1, "conn": "c1", "dir": "sideways", "msg": {}}\n', 2, ":1: unknown 'dir'"),
])
def test_cli_not_a_capture_is_one_line_exit_2(tmp_path, content, code, needle):
    f = tmp_path / "x.jsonl"
    f.write_text(content)
    got, out, err = run(f)
    assert got == code and needle in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("bad, needle", [
    ("not json at all", ":7: not JSON"),
    ('{"seq": 99, "conn": "c1", "msg": {}}', ":7: missing 'dir'"),
    ('{"conn": "c1", "dir": "client->agent", "msg": {}}', ":7: missing 'seq'"),
    ('{"seq": 2, "conn": "c1", "dir": "client->agent", "msg": {"jsonrpc": "2.0", "method": "x"}}', ":7: seq 2 out of order"),
    ('{"seq": 50, "conn": "c1", "dir": "upward", "msg": {}}', ":7: unknown 'dir'"),
])
def test_cli_bad_line_inside_a_capture_is_reported_and_checking_goes_on(tmp_path, bad, needle):
    lines = GOOD[:6] + [bad, ""] + GOOD[6:]
    f = tmp_path / "x.jsonl"
    f.write_text("\n".join(lines) + "\n")
    code, out, err = run(f, "--json")
    data = json.loads(out)
    assert code == 1 and "Traceback" not in err
    [v] = data["violations"]
    assert v["property"] == "CaptureFormat" and needle in v["explanation"] and v["line"] == 7
    assert data["messages"] == len(GOOD)


def test_cli_blank_lines_are_fine(tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text("\n\n".join(GOOD) + "\n\n\n")
    assert run(f)[0] == 0


def test_cli_unknown_spec_and_missing_file(tmp_path):
    code, _, err = run(V2 / "ok_two_connections.jsonl", "--spec", "v9")
    assert code == 2 and "unknown trace spec" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(tmp_path / "nope.jsonl")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_ten_megabyte_message(tmp_path):
    big = json.loads(GOOD[4])
    big["msg"]["params"]["prompt"][0]["text"] = "x" * (10 * 1024 * 1024)
    lines = GOOD[:4] + [json.dumps(big)] + GOOD[5:]
    f = tmp_path / "big.jsonl"
    f.write_text("\n".join(lines) + "\n")
    code, out, err = run(f)
    assert code == 0 and "Traceback" not in err and len(out) < 5000
    # a malformed 10 MB message: reported in one short line
    big["msg"]["params"]["prompt"] = [{"type": 1, "text": "x" * (10 * 1024 * 1024)}]
    f.write_text("\n".join(GOOD[:4] + [json.dumps(big)]) + "\n")
    code, out, err = run(f, "--out", tmp_path / "o")
    assert code == 1 and "WireShape [W2] at seq 5 (line 5)" in out and len(out) < 5000
