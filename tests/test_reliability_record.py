"""The recorder's reliability regressions: the relay never depends on parsing, the capture keeps the wire's bytes."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from acplab.model.trace import record as rec_mod
from acplab.model.trace.record import Recorder
from acplab.model.wire import jsontext
from acplab.model.wire.capture import (
    AGENT_TO_CLIENT, CLIENT_TO_AGENT, CaptureWriter, message_bytes, read_capture,
)
from cli_harness import contract

ROOT = Path(__file__).resolve().parents[1]

#: an agent that echoes every line back, and first sends a line 5,000 levels deep of its own
ECHO_AGENT = r'''
import sys
out = sys.stdout.buffer
out.write(b'{"a":' * 5000 + b'1' + b'}' * 5000 + b'\n')
for i in range(3000):
    out.write(b'{"jsonrpc":"2.0","method":"tick","params":{"i":%d}}\n' % i)
out.flush()
for line in sys.stdin.buffer:
    out.write(line)
    out.flush()
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
'''

ODD_LINES = [
    b'{"jsonrpc":"2.0","id":1E2,"method":"x"}',  # exponent spelling
    b'{"n":1e400,"m":-0,"big":' + b"9" * 5000 + b"}",  # huge numbers
    b'{"id":1,"id":2}',  # duplicate keys
    b'  {"spaced" :\t[ 1 , 2 ] }  ',  # insignificant whitespace
    b'{"crlf":true}\r',  # a CRLF framing
    b'{"s":"\\ud800 \\u2028 \xe2\x80\xa8 \xc3\xa9"}',  # escaped lone surrogate, raw U+2028
    b'{"x":NaN}',  # not JSON
    b"[1,2]",  # JSON, not an object
    b"\xff\xfe not UTF-8",
    b'{"a":' * 5000 + b"1" + b"}" * 5000,  # deep
    b"plain text with a \x1b[31m escape",
]


def proxy(out: Path, *extra: str, code: str = "0") -> list[str]:
    return [sys.executable, "-m", "acplab.model.app.cli", "trace", "record", "--out", str(out), *extra, "--",
            sys.executable, "-c", ECHO_AGENT, code]


def stored_bytes(line: bytes) -> bytes:
    """What the capture line says crossed the wire, exactly."""
    wire = message_bytes(line)
    if wire is not None and b',"msg":' in line:
        return wire
    obj = json.loads(line)
    return base64.b64decode(obj["raw_base64"]) if "raw_base64" in obj else obj["raw"].encode("utf-8")


def test_deep_lines_both_ways_neither_stop_nor_stall_the_relay_and_every_byte_is_kept(tmp_path):
    client = b"".join(line + b"\n" for line in ODD_LINES * 3) + b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i for i in range(3000))
    cap = tmp_path / "cap.jsonl"
    proc = subprocess.run(proxy(cap), input=client, capture_output=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    agent_first = b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"\n" + b"".join(
        b'{"jsonrpc":"2.0","method":"tick","params":{"i":%d}}\n' % i for i in range(3000))
    assert proc.stdout == agent_first + client  # relayed byte for byte, nothing lost after the deep lines
    lines = cap.read_bytes().split(b"\n")[:-1]
    c2a = [line for line in lines if b'"dir":"client->agent"' in line[:80]]
    a2c = [line for line in lines if b'"dir":"agent->client"' in line[:80]]
    assert [stored_bytes(line) for line in c2a] == client.split(b"\n")[:-1]
    assert [stored_bytes(line) for line in a2c] == proc.stdout.split(b"\n")[:-1]
    for line in lines:  # every capture line is strict JSON, whatever it holds
        assert jsontext.classify(line) == jsontext.OBJECT


def test_valid_json_is_embedded_verbatim_the_rest_marked_raw():
    buf = io.BytesIO()
    w = CaptureWriter(buf)
    kinds = [w.write_line("c1", CLIENT_TO_AGENT, line, t=1.5)[1] for line in ODD_LINES]
    assert kinds == ["object"] * 6 + ["not JSON", "not a JSON object", "not UTF-8", "object", "not JSON"]
    lines = buf.getvalue().split(b"\n")[:-1]
    assert lines[0] == b'{"seq":1,"t":1.5,"conn":"c1","dir":"client->agent","msg":{"jsonrpc":"2.0","id":1E2,"method":"x"}}'
    assert [stored_bytes(line) for line in lines] == ODD_LINES
    recs = list(read_capture(io.BytesIO(buf.getvalue())))
    assert recs[0].msg["id"] == 100.0 and recs[2].msg == {"id": 2}  # readers decide; the bytes are kept
    assert recs[1].msg["n"] == float("inf") and recs[1].msg["big"] == float("inf")
    assert recs[9].msg is None and "nested too deeply" in recs[9].raw


def test_a_failing_capture_stops_recording_never_relaying():
    class Full(io.RawIOBase):
        def writable(self):
            return True

        def write(self, b):
            raise OSError(28, "No space left on device")

    reported = []
    r = Recorder(CaptureWriter(io.BufferedWriter(Full(), 1)), on_failure=lambda err, n: reported.append((str(err), n)))
    for _ in range(3):
        r.commit(r.reserve(CLIENT_TO_AGENT, b'{"a":1}\n{"b":2}\n'))
    r.close()
    assert r.failed is not None and len(reported) == 1 and "No space" in reported[0][0]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_dev_full_is_one_line_and_the_child_s_exit_status(tmp_path):
    proc = subprocess.run(proxy(Path("/dev/full"), code="3"), input=b'{"id":1}\n', capture_output=True, timeout=60,
                          cwd=ROOT)
    assert proc.returncode == 3
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "cannot write the capture" in err and "No space left" in err
    assert proc.stdout.endswith(b'{"id":1}\n')


def test_an_over_long_line_is_relayed_whole_and_recorded_by_size(monkeypatch):
    monkeypatch.setattr(rec_mod, "MAX_LINE_BYTES", 5000)
    buf = io.BytesIO()
    r = Recorder(CaptureWriter(buf))
    long_line = b'{"blob":"' + b"x" * 20000 + b'"}'
    data = b'{"before":1}\n' + long_line + b'\n{"after":1}\n'
    for k in range(0, len(data), 777):
        r.commit(r.reserve(AGENT_TO_CLIENT, data[k:k + 777]))
    r.close()
    first, big, after = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert first["msg"] == {"before": 1} and after["msg"] == {"after": 1}
    assert big["bytes"] == len(long_line) and big["raw"] == long_line[:1024].decode() and "too long" in big["error"]


def test_append_continues_t_and_records_a_new_connection(tmp_path):
    cap = tmp_path / "cap.jsonl"
    pending = b'{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}\n'
    quiet_agent = [sys.executable, "-c", "import sys; sys.stdin.buffer.read()"]
    base = [sys.executable, "-m", "acplab.model.app.cli", "trace", "record", "--out", str(cap)]
    assert subprocess.run(base + ["--"] + quiet_agent, input=pending, timeout=60, cwd=ROOT).returncode == 0
    assert subprocess.run(base + ["--append", "--"] + quiet_agent, input=pending, timeout=60, cwd=ROOT).returncode == 0
    recs = list(read_capture(cap))
    assert [(r.seq, r.conn, r.close) for r in recs] == [(1, "c1", None), (2, "c1", "client"), (3, "c2", None),
                                                         (4, "c2", "client")]
    assert recs[2].t >= recs[0].t
    _, _, _, obj = contract("trace", "check", str(cap), "--json")
    assert "RequestIdsUniqueWhilePending" not in {v["property"] for v in obj["violations"]}
