"""The recorder owns its capture and its end: a lock against a second recorder, a grandchild's late output, a line
cut off by the end, the connection's close record; the sidecar's bad fields are one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from acplab.model.trace.check import check_capture
from acplab.model.wire.capture import read_capture

ROOT = Path(__file__).resolve().parents[2]
RECORD = [sys.executable, "-m", "acplab.model.app.cli", "trace", "record"]
CHECK = [sys.executable, "-m", "acplab.model.app.cli", "trace", "check"]


def _agent(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_second_recorder_of_the_same_file_is_refused_and_the_first_stays_whole(tmp_path):
    cap = tmp_path / "cap.jsonl"
    # the first recorder's agent writes one message, then waits for its stdin to close
    waits = _agent("import sys\nprint('{\"jsonrpc\":\"2.0\",\"method\":\"first\"}', flush=True)\n"
                   "sys.stdin.buffer.read()")
    first = subprocess.Popen(RECORD + ["--out", str(cap), "--"] + waits, stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    deadline = time.monotonic() + 30
    while (not cap.exists() or cap.stat().st_size == 0) and time.monotonic() < deadline:
        time.sleep(0.02)
    for extra in (["--force"], ["--append"], []):
        second = subprocess.run(RECORD + ["--out", str(cap)] + extra + ["--"] + waits, stdin=subprocess.DEVNULL,
                                capture_output=True, timeout=60, cwd=ROOT)
        assert second.returncode == 2 and second.stdout == b"", (extra, second)
        err = second.stderr.decode()
        assert err.count("\n") == 1 and "another recorder" in err, err
    first.stdin.close()
    assert first.wait(timeout=60) == 0
    recs = list(read_capture(cap))
    assert [r.seq for r in recs] == [1, 2]
    assert recs[0].msg["method"] == "first" and recs[1].close == "client"


def test_a_grandchild_s_late_output_is_relayed_and_recorded(tmp_path):
    cap = tmp_path / "cap.jsonl"
    late = tmp_path / "late.py"
    late.write_text("import time\ntime.sleep(3)\nprint('{\"jsonrpc\":\"2.0\",\"method\":\"late\"}', flush=True)\n")
    # the child exits at once; its grandchild keeps stdout open and writes 3 s later (more than the old 2 s)
    code = f"import subprocess, sys\nsubprocess.Popen([sys.executable, {str(late)!r}])"
    proc = subprocess.run(RECORD + ["--out", str(cap), "--"] + _agent(code), stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert b'"late"' in proc.stdout
    recs = list(read_capture(cap))
    assert recs[0].msg == {"jsonrpc": "2.0", "method": "late"} and recs[-1].close is not None


def test_a_line_cut_off_by_the_end_is_a_partial_line_not_a_message(tmp_path):
    cap = tmp_path / "cap.jsonl"
    proc = subprocess.run(RECORD + ["--out", str(cap), "--"] + _agent("import sys; sys.stdin.buffer.read()"),
                          input=b'{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s"',
                          capture_output=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0
    lines = [json.loads(x) for x in cap.read_bytes().splitlines()]
    assert lines[0]["partial"] is True and "msg" not in lines[0] and lines[0]["raw"].startswith('{"jsonrpc"')
    assert lines[-1]["close"]["by"] in ("client", "agent") and lines[-1]["close"]["exit"] == 0
    result = check_capture(cap)
    assert "PromptsAnswered" not in {v.property for v in result.violations}  # never judged as a prompt


def _capture(tmp_path, records) -> Path:
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


PROMPT = {"seq": 1, "conn": "c1", "dir": "client->agent",
          "msg": {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                  "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}}}


def test_a_close_record_ends_the_connection_s_obligations(tmp_path):
    open_end = check_capture(_capture(tmp_path, [PROMPT]), complete=True)
    assert "PromptsAnswered" in {v.property for v in open_end.violations}
    closed = check_capture(_capture(tmp_path, [PROMPT, {"seq": 2, "conn": "c1", "close": {"by": "agent"}}]),
                           complete=True)
    assert closed.verdict == "holds", [v.explanation for v in closed.violations]


def test_a_sidecar_holding_only_close_events_switches_no_internal_monitor_on(tmp_path):
    cap = _capture(tmp_path, [PROMPT])
    side = tmp_path / "e.jsonl"
    side.write_text('{"after": 1, "event": "close", "conn": "c1"}\n')
    result = check_capture(cap, internal=side, complete=True)
    assert result.verdict == "holds"
    assert {n for n, _r, _e in result.not_checkable} == {n for n, _r, _e in check_capture(cap).not_checkable}


def _one_line_exit_2(args) -> str:
    proc = subprocess.run(CHECK + args, capture_output=True, timeout=60, cwd=ROOT)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1 and "Traceback" not in err, (proc.returncode, err)
    return err


def test_sidecar_fields_of_the_wrong_type_are_one_line_and_exit_2(tmp_path):
    cap = _capture(tmp_path, [PROMPT])
    for bad in ('{"after": 1, "event": "insert", "session": 5, "messageId": "m1"}',
                '{"after": 1, "event": "insert", "session": "s1", "messageId": "m1", "retained": "yes"}',
                '{"after": 1, "event": "work_end", "session": "s1", "background": "t1"}',
                '{"after": 1, "event": "reject", "conn": "c1", "request": true}'):
        side = tmp_path / "e.jsonl"
        side.write_text(bad + "\n")
        err = _one_line_exit_2([str(cap), "--internal", str(side)])
        assert "e.jsonl:1" in err


def test_a_sidecar_event_past_the_end_of_the_capture_is_one_line_and_exit_2(tmp_path):
    cap = _capture(tmp_path, [PROMPT])
    side = tmp_path / "e.jsonl"
    side.write_text('{"after": 9, "event": "insert", "session": "s1", "messageId": "m1", "conn": "c1"}\n')
    err = _one_line_exit_2([str(cap), "--internal", str(side)])
    assert "past the end of the capture" in err
