"""The capture format: writer -> reader round trip, one-line errors with line numbers, streaming."""

import io
import json
import tracemalloc

import pytest

from acplab.model.wire.capture import (
    AGENT_TO_CLIENT,
    CLIENT_TO_AGENT,
    CaptureError,
    CaptureRecord,
    CaptureWriter,
    dump_capture,
    iter_capture_lenient,
    last_seq,
    read_capture,
)
from acplab.model.errors import InputError

REQ = {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}
RESP = {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}


def line(seq, dir=CLIENT_TO_AGENT, conn="c1", msg=None, **extra):
    obj = {"seq": seq, "t": float(seq), "conn": conn, "dir": dir, "msg": msg if msg is not None else {"id": seq}}
    obj.update(extra)
    return json.dumps(obj)


def write_lines(path, lines):
    path.write_text("".join(l + "\n" for l in lines), encoding="utf-8")
    return path


def test_round_trip(tmp_path):
    path = tmp_path / "c.jsonl"
    with CaptureWriter(path) as w:
        assert w.write("c1", CLIENT_TO_AGENT, msg=REQ, t=0.5) == 1
        assert w.write("c1", AGENT_TO_CLIENT, raw="oops \u00e9 not json", t=1.25) == 2
        assert w.write("c2", AGENT_TO_CLIENT, msg=RESP) == 3
        assert w.write_record(CaptureRecord(10, 7.0, "c1", CLIENT_TO_AGENT, {"x": "\u2603"})) == 10
    recs = list(read_capture(path))
    assert [r._replace(source=None) for r in recs] == [  # source: the line as read
        CaptureRecord(1, 0.5, "c1", CLIENT_TO_AGENT, REQ, None, 1),
        CaptureRecord(2, 1.25, "c1", AGENT_TO_CLIENT, None, "oops \u00e9 not json", 2),
        CaptureRecord(3, None, "c2", AGENT_TO_CLIENT, RESP, None, 3),
        CaptureRecord(10, 7.0, "c1", CLIENT_TO_AGENT, {"x": "\u2603"}, None, 4),
    ]
    text = path.read_text(encoding="utf-8")
    assert "\u2603" in text and ", " not in text.splitlines()[0]  # compact, not ASCII-escaped
    assert json.loads(text.splitlines()[1])["error"] == "not JSON"
    assert last_seq(path) == 10
    # dump_capture writes the same records; read back identical, byte for byte
    assert dump_capture(recs, tmp_path / "d.jsonl") == 4
    assert [r[:6] for r in read_capture(tmp_path / "d.jsonl")] == [r[:6] for r in recs]
    assert (tmp_path / "d.jsonl").read_bytes() == path.read_bytes()


def test_writer_on_open_files_and_append(tmp_path):
    buf = io.StringIO()
    w = CaptureWriter(buf)
    w.write("c1", CLIENT_TO_AGENT, msg=REQ)
    w.close()
    assert [r.msg for r in read_capture(io.StringIO(buf.getvalue()))] == [REQ]
    bbuf = io.BytesIO()
    CaptureWriter(bbuf, start_seq=5).write("c1", AGENT_TO_CLIENT, msg=RESP)
    [rec] = read_capture(io.BytesIO(bbuf.getvalue()))
    assert rec.seq == 5
    path = tmp_path / "a.jsonl"
    CaptureWriter(path).write("c1", CLIENT_TO_AGENT, msg=REQ)
    with CaptureWriter(path, append=True, start_seq=last_seq(path) + 1) as w:
        w.write("c1", AGENT_TO_CLIENT, msg=RESP)
    assert [r.seq for r in read_capture(path)] == [1, 2]
    with pytest.raises(ValueError):
        w2 = CaptureWriter(io.StringIO())
        w2.write("c1", "sideways", msg={})


def test_writer_flushes_every_record(tmp_path):
    path = tmp_path / "f.jsonl"
    w = CaptureWriter(path)
    w.write("c1", CLIENT_TO_AGENT, msg=REQ)
    assert len(path.read_text().splitlines()) == 1  # visible before close
    w.close()


def test_lone_surrogate_is_kept_escaped(tmp_path):
    path = tmp_path / "s.jsonl"
    msg = json.loads('{"text": "\\ud800"}')
    with CaptureWriter(path) as w:
        w.write("c1", CLIENT_TO_AGENT, msg=msg)
    [rec] = read_capture(path)
    assert rec.msg == msg


BAD = [
    ("not json {", "not JSON"),
    ("[1, 2]", "expected a JSON object, got an array"),
    ('"text"', "expected a JSON object, got a string"),
    (json.dumps({"conn": "c1", "dir": CLIENT_TO_AGENT, "msg": {}}), "missing 'seq'"),
    (json.dumps({"seq": "3", "conn": "c1", "dir": CLIENT_TO_AGENT, "msg": {}}), "'seq' must be an integer"),
    (json.dumps({"seq": 3.5, "conn": "c1", "dir": CLIENT_TO_AGENT, "msg": {}}), "'seq' must be an integer"),
    (json.dumps({"seq": True, "conn": "c1", "dir": CLIENT_TO_AGENT, "msg": {}}), "'seq' must be an integer"),
    (line(2), "seq 2 out of order"),  # the good line before it has seq 2
    (line(1), "seq 1 out of order"),
    (line(3, dir="client->server"), "unknown 'dir'"),
    (json.dumps({"seq": 3, "conn": "c1", "msg": {}}), "missing 'dir'"),
    (json.dumps({"seq": 3, "dir": CLIENT_TO_AGENT, "msg": {}}), "missing 'conn'"),
    (json.dumps({"seq": 3, "conn": 7, "dir": CLIENT_TO_AGENT, "msg": {}}), "'conn' must be a string"),
    (line(3, msg=[1]), "'msg' must be a JSON object, got an array"),
    (json.dumps({"seq": 3, "conn": "c1", "dir": CLIENT_TO_AGENT, "msg": "x"}), "'msg' must be a JSON object"),
    (json.dumps({"seq": 3, "conn": "c1", "dir": CLIENT_TO_AGENT}), "missing 'msg'"),
    (json.dumps({"seq": 3, "t": "soon", "conn": "c1", "dir": CLIENT_TO_AGENT, "msg": {}}), "'t' must be a number"),
]


@pytest.mark.parametrize("bad, problem", BAD)
def test_bad_line_is_one_line_input_error_with_line_number(tmp_path, bad, problem):
    # line 1 good, line 2 blank (skipped but counted), line 3 good, line 4 bad, line 5 good
    path = write_lines(tmp_path / "bad.jsonl", [line(1), "", line(2), bad, line(9)])
    got = []
    with pytest.raises(InputError) as info:
        for rec in read_capture(path):
            got.append(rec.seq)
    err = info.value
    assert isinstance(err, CaptureError) and err.line == 4
    text = str(err)
    assert text.startswith(f"{path}:4: ") and problem in text and "\n" not in text
    assert got == [1, 2]  # streaming: the good records before the bad line were yielded


def test_non_utf8_line(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_bytes(line(1).encode() + b"\n\xff\xfe\n")
    with pytest.raises(InputError, match=r":2: not UTF-8"):
        list(read_capture(path))


def test_lenient_reports_every_bad_line_and_goes_on(tmp_path):
    path = write_lines(tmp_path / "l.jsonl", [line(1), "garbage", line(3), line(2), line(4, dir="up"), line(5)])
    items = list(iter_capture_lenient(path))
    kinds = [(type(i).__name__, getattr(i, "seq", None) or i.line) for i in items]
    assert kinds == [("CaptureRecord", 1), ("CaptureError", 2), ("CaptureRecord", 3),
                     ("CaptureError", 4), ("CaptureError", 5), ("CaptureRecord", 5)]
    assert all(isinstance(i, InputError) for i in items if not isinstance(i, CaptureRecord))


def test_blank_lines_and_empty_file(tmp_path):
    assert list(read_capture(write_lines(tmp_path / "e.jsonl", []))) == []
    assert list(read_capture(write_lines(tmp_path / "w.jsonl", ["", "   ", "\t"]))) == []
    path = write_lines(tmp_path / "b.jsonl", ["", line(1), "  ", "", line(2), ""])
    assert [(r.seq, r.line) for r in read_capture(path)] == [(1, 2), (2, 5)]
    assert last_seq(tmp_path / "e.jsonl") == 0


def test_missing_file_is_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read capture"):
        list(read_capture(tmp_path / "nope.jsonl"))


def test_crlf_and_no_trailing_newline(tmp_path):
    path = tmp_path / "crlf.jsonl"
    path.write_bytes((line(1) + "\r\n" + line(2)).encode())
    assert [r.seq for r in read_capture(path)] == [1, 2]


def test_ten_megabyte_message(tmp_path):
    big = "x" * (10 * 1024 * 1024)
    path = tmp_path / "big.jsonl"
    with CaptureWriter(path) as w:
        w.write("c1", CLIENT_TO_AGENT, msg={"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"text": big}})
        w.write("c1", AGENT_TO_CLIENT, msg=RESP)
    recs = list(read_capture(path))
    assert len(recs[0].msg["params"]["text"]) == len(big) and recs[1].msg == RESP


@pytest.mark.slow  # writes and streams a large capture: about 10 s
def test_streaming_memory_stays_small(tmp_path):
    path = tmp_path / "long.jsonl"
    n = 200_000
    with open(path, "w", encoding="utf-8") as f:
        for i in range(1, n + 1):
            d = CLIENT_TO_AGENT if i % 2 else AGENT_TO_CLIENT
            f.write('{"seq":%d,"t":%d.5,"conn":"c1","dir":"%s","msg":{"jsonrpc":"2.0","id":%d,"method":"session/update"}}\n'
                    % (i, i, d, i))
    assert path.stat().st_size > 20 * 1024 * 1024
    tracemalloc.start()
    try:
        count = 0
        last = 0
        for rec in read_capture(path):
            count += 1
            last = rec.seq
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (count, last) == (n, n)
    assert peak < 20 * 1024 * 1024, f"peak {peak / 1e6:.1f} MB"


# --------------------------------------------------------------------------- recorded SDK fixtures

from pathlib import Path  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SDK_FIXTURES = sorted(FIXTURES.glob("sdk_v1_*.jsonl"))


@pytest.mark.parametrize("path", SDK_FIXTURES, ids=lambda p: p.stem)
def test_sdk_fixture_parses_and_has_a_prompt_and_its_response(path, schema_v1):
    """Traffic recorded by scripts/record_sdk.py through `acplab trace record` (official Python SDK, ACP v1)."""
    recs = list(read_capture(path))
    assert recs and all(r.msg is not None and r.conn == "c1" for r in recs)
    requests = {}
    for r in recs:
        if "method" in r.msg and "id" in r.msg:
            requests[r.msg["id"]] = r.msg["method"]
    prompts = [r for r in recs if r.dir == CLIENT_TO_AGENT and r.msg.get("method") == "session/prompt"]
    assert prompts
    for p in prompts:
        [resp] = [r for r in recs if r.dir == AGENT_TO_CLIENT and r.msg.get("id") == p.msg["id"] and "method" not in r.msg]
        assert resp.seq > p.seq and ("result" in resp.msg or "error" in resp.msg)
    for r in recs:
        schema_v1.validate(r.msg, response_to=requests.get(r.msg.get("id")) if "method" not in r.msg else None)


def test_sdk_fixtures_cover_the_three_scenarios():
    names = {p.stem for p in SDK_FIXTURES}
    assert {"sdk_v1_normal_turn", "sdk_v1_error_turn", "sdk_v1_identical_prompts"} <= names
    [err] = [r for r in read_capture(FIXTURES / "sdk_v1_error_turn.jsonl") if r.msg.get("error")]
    assert err.msg["error"]["code"] == -32603
    texts = [r.msg["params"]["prompt"][0]["text"] for r in read_capture(FIXTURES / "sdk_v1_identical_prompts.jsonl")
             if r.msg.get("method") == "session/prompt"]
    assert len(texts) == 2 and texts[0] == texts[1]
