"""``acplab trace record``: a byte-for-byte transparent stdio proxy that captures each message."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from acplab.model.wire.capture import AGENT_TO_CLIENT, CLIENT_TO_AGENT, read_capture

ROOT = Path(__file__).resolve().parents[1]

# A scripted fake agent. Reads newline-delimited messages from stdin (binary) and
# answers deterministically, so its output can be compared with and without the proxy.
# argv: [received-copy-file | -] [exit-code]
FAKE_AGENT = r'''
import json, os, signal, sys, time
out = sys.stdout.buffer
copy = open(sys.argv[1], "wb") if len(sys.argv) > 1 and sys.argv[1] != "-" else None
code = int(sys.argv[2]) if len(sys.argv) > 2 else 0
marker = os.environ.get("FAKE_AGENT_MARKER")

def on_term(signum, frame):
    with open(marker, "w") as f:
        f.write("got SIGTERM")
    os._exit(7)

if marker:
    signal.signal(signal.SIGTERM, on_term)

def send(obj):
    out.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
    out.flush()

for line in sys.stdin.buffer:
    if copy:
        copy.write(line)
    try:
        msg = json.loads(line)
    except ValueError:
        out.write(b"agent: that was not JSON\n")
        out.flush()
        continue
    method = msg.get("method")
    if method == "ping":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"pong": msg["id"]}})
    elif method == "session/prompt":
        sid = msg["params"]["sessionId"]
        for i in range(2):
            send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid,
                  "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "chunk %d \u00e9" % i}}}})
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"stopReason": "end_turn"}})
    elif method == "big":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"blob": "y" * msg["params"]["size"],
              "got": len(msg["params"].get("blob", ""))}})
    elif method == "split":  # one response written in pieces with pauses
        data = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"split": True, "pad": "z" * 1000}}).encode() + b"\n"
        for k in range(0, len(data), 300):
            out.write(data[k:k + 300]); out.flush(); time.sleep(0.02)
    elif method == "wait":
        send({"jsonrpc": "2.0", "method": "ready"})
    elif method == "die":
        out.flush(); os.kill(os.getpid(), signal.SIGKILL)
    elif "id" in msg:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
if copy:
    copy.close()
out.write(b'{"jsonrpc":"2.0","method":"bye"}')  # trailing partial line (no newline) at exit
out.flush()
sys.exit(code)
'''


@pytest.fixture
def agent(tmp_path):
    path = tmp_path / "fake_agent.py"
    path.write_text(FAKE_AGENT)
    return str(path)


def proxy_cmd(out, *agent_argv, extra=()):
    return [sys.executable, "-m", "acplab.model.app.cli", "trace", "record", "--out", str(out), *extra, "--",
            sys.executable, *agent_argv]


def run_session(cmd, chunks, timeout=60):
    """Feed ``chunks`` (bytes, or a float = sleep seconds) to ``cmd``'s stdin; return (rc, stdout, stderr)."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    results = {}

    def reader(name, stream):
        results[name] = stream.read()

    threads = [threading.Thread(target=reader, args=(n, s)) for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for t in threads:
        t.start()
    try:
        for c in chunks:
            if isinstance(c, float):
                time.sleep(c)
            else:
                proc.stdin.write(c)
                proc.stdin.flush()
        proc.stdin.close()
        rc = proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    for t in threads:
        t.join(timeout)
    return rc, results["out"], results["err"]


def j(obj):
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def big_session():
    """Client traffic: thousands of messages, a 5 MB request, a non-JSON line, a split write, no final newline."""
    chunks = []
    msgs = []  # the client's messages as lines (bytes, without newline)
    n = 0

    def add(obj_or_line, pieces=1):
        nonlocal n
        data = obj_or_line if isinstance(obj_or_line, bytes) else j(obj_or_line)
        msgs.append(data.rstrip(b"\n"))
        if pieces == 1:
            chunks.append(data)
        else:
            step = len(data) // pieces + 1
            for k in range(0, len(data), step):
                chunks.append(data[k:k + step])
                chunks.append(0.02)

    add({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    batch = []
    for i in range(1, 3001):
        if i % 500 == 0:  # prompts: two updates and a response each
            add({"jsonrpc": "2.0", "id": i, "method": "session/prompt",
                 "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "h\u00e9llo \u2603 %d" % i}]}})
        elif i == 1234:
            add(b"this line is not JSON \xff\n")
        elif i == 1501:
            add({"jsonrpc": "2.0", "id": i, "method": "big", "params": {"size": 5 * 1024 * 1024,
                                                                       "blob": "x" * (5 * 1024 * 1024)}}, pieces=7)
        elif i == 2001:
            add({"jsonrpc": "2.0", "id": i, "method": "split"})
        elif i == 2501:
            add({"jsonrpc": "2.0", "id": i, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": []}},
                pieces=4)
        else:
            add({"jsonrpc": "2.0", "id": i, "method": "ping"})
    add({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})
    # group the small messages into larger writes, like a busy editor; keep sleeps and split pieces apart
    merged, cur = [], b""
    for c in chunks:
        if isinstance(c, bytes) and len(c) < 4096:
            cur += c
            if len(cur) > 60_000:
                merged.append(cur)
                cur = b""
        else:
            if cur:
                merged.append(cur)
                cur = b""
            merged.append(c)
    if cur:
        merged.append(cur)
    last = merged[-1]
    assert last.endswith(b"\n")
    merged[-1] = last[:-1]  # the final message has no newline: a trailing partial line at EOF
    return merged, msgs


def expected_record(line: bytes):
    try:
        obj = json.loads(line)
    except ValueError:
        return ("raw", line.decode("utf-8", errors="replace"))
    return ("msg", obj)


def test_transparent_both_ways_and_captures_every_message(tmp_path, agent):
    chunks, client_msgs = big_session()
    sent = b"".join(c for c in chunks if isinstance(c, bytes))

    # the agent alone: its output for this input is the reference
    direct = subprocess.run([sys.executable, agent], input=sent, capture_output=True, timeout=60)
    assert direct.returncode == 0, direct.stderr

    cap = tmp_path / "cap.jsonl"
    received = tmp_path / "received.bin"
    t0 = time.monotonic()
    rc, out, err = run_session(proxy_cmd(cap, agent, str(received)), chunks)
    elapsed = time.monotonic() - t0
    assert rc == 0, err
    assert err == b""
    # (a) byte for byte, both ways
    assert received.read_bytes() == sent
    assert hashlib.sha256(out).hexdigest() == hashlib.sha256(direct.stdout).hexdigest()
    assert len(out) > 5 * 1024 * 1024 and len(sent) > 5 * 1024 * 1024
    print(f"relayed {(len(sent) + len(out)) / 1e6:.1f} MB in {elapsed:.2f} s (incl. startup and sleeps)")

    # (b) one record per message, in order, with the right direction
    recs = list(read_capture(cap))
    assert [r.seq for r in recs] == list(range(1, len(recs) + 1))
    assert {r.conn for r in recs} == {"c1"}
    ts = [r.t for r in recs]
    assert all(t is not None for t in ts)
    c2a = [r for r in recs if r.dir == CLIENT_TO_AGENT]
    a2c = [r for r in recs if r.dir == AGENT_TO_CLIENT]
    agent_lines = out.split(b"\n")
    assert agent_lines[-1] == b'{"jsonrpc":"2.0","method":"bye"}'  # partial at EOF
    assert len(c2a) == len(client_msgs) and len(a2c) == len(agent_lines)
    # each direction's last line has no newline: cut off by the end, it is a partial line, never a message
    for rec, line in zip(c2a[:-1] + a2c[:-1], client_msgs[:-1] + agent_lines[:-1]):
        kind, value = expected_record(line)
        assert (("msg", rec.msg) if rec.msg is not None else ("raw", rec.raw)) == (kind, value)
    for rec, line in ((c2a[-1], client_msgs[-1]), (a2c[-1], agent_lines[-1])):
        assert rec.msg is None and rec.raw == line.decode()
    partial = [json.loads(line) for line in cap.read_bytes().splitlines() if b'"partial":true' in line]
    assert [p["dir"] for p in partial] == [CLIENT_TO_AGENT, AGENT_TO_CLIENT] or \
        sorted(p["dir"] for p in partial) == sorted([CLIENT_TO_AGENT, AGENT_TO_CLIENT])
    raws = [r for r in recs if r.msg is None and r.close is None]
    assert [r.dir for r in raws] == [CLIENT_TO_AGENT, AGENT_TO_CLIENT, CLIENT_TO_AGENT, AGENT_TO_CLIENT] or \
        len(raws) == 4
    assert recs[-1].close in ("agent", "client")  # the connection's close record ends the capture
    # the big request and its response each are one record
    [big_req] = [r for r in c2a if r.msg and r.msg.get("method") == "big"]
    [big_resp] = [r for r in a2c if r.msg and r.msg.get("id") == big_req.msg["id"]]
    assert len(big_req.msg["params"]["blob"]) == 5 * 1024 * 1024 and big_resp.msg["result"]["got"] == 5 * 1024 * 1024
    # causality: every response is recorded after its request
    req_seq = {r.msg["id"]: r.seq for r in c2a if r.msg is not None and "id" in r.msg}
    for r in a2c:
        if r.msg is not None and "id" in r.msg:
            assert r.seq > req_seq[r.msg["id"]]
    assert a2c[-1].raw == '{"jsonrpc":"2.0","method":"bye"}'
    assert "session/cancel" in c2a[-1].raw
    # the split writes arrived as one record each way
    assert any(r.msg and r.msg.get("result", {}).get("split") for r in a2c)
    assert sum(1 for r in c2a if r.msg and r.msg.get("id") == 2501) == 1


def test_exit_status_passes_through(tmp_path, agent):
    rc, out, err = run_session(proxy_cmd(tmp_path / "c.jsonl", agent, "-", "3"), [j({"jsonrpc": "2.0", "id": 1, "method": "ping"})])
    assert rc == 3, err
    assert out.startswith(b'{"jsonrpc":"2.0","id":1,"result":{"pong":1}}\n')
    recs = list(read_capture(tmp_path / "c.jsonl"))
    assert [r.dir for r in recs] == [CLIENT_TO_AGENT, AGENT_TO_CLIENT, AGENT_TO_CLIENT, ""]
    assert recs[-1].close in ("agent", "client")  # the connection's close record


def test_child_killed_by_signal_gives_128_plus_n(tmp_path, agent):
    rc, _, err = run_session(proxy_cmd(tmp_path / "c.jsonl", agent), [j({"jsonrpc": "2.0", "method": "die"})])
    assert rc == 128 + signal.SIGKILL, err


def one_line_error(err: bytes) -> str:
    text = err.decode()
    assert text.count("\n") == 1 and text.startswith("acplab: error: "), text
    return text


def test_existing_capture_is_not_overwritten(tmp_path, agent):
    cap = tmp_path / "c.jsonl"
    cap.write_text('{"seq":1,"conn":"c1","dir":"client->agent","msg":{}}\n')
    before = cap.read_bytes()
    rc, out, err = run_session(proxy_cmd(cap, agent), [j({"jsonrpc": "2.0", "id": 1, "method": "ping"})])
    assert rc == 2 and out == b""
    assert "--append" in one_line_error(err)
    assert cap.read_bytes() == before
    # --append continues the seq numbers; --force starts again
    rc, _, err = run_session(proxy_cmd(cap, agent, extra=["--append"]), [j({"jsonrpc": "2.0", "id": 1, "method": "ping"})])
    assert rc == 0, err
    recs = list(read_capture(cap))
    assert [r.seq for r in recs] == list(range(1, len(recs) + 1))
    assert [(r.conn, r.close) for r in recs[:2]] == [("c1", None), ("c1", "unknown")]  # c1 had no close record
    assert {r.conn for r in recs[2:]} == {"c2"} and recs[-1].close in ("agent", "client")
    rc, _, err = run_session(proxy_cmd(cap, agent, extra=["--force"]), [])
    assert rc == 0, err
    assert [(r.seq, r.dir) for r in read_capture(cap)] == [(1, AGENT_TO_CLIENT), (2, "")]


def test_empty_existing_file_is_fine_and_usage_errors_exit_2(tmp_path, agent):
    cap = tmp_path / "c.jsonl"
    cap.write_text("")
    rc, _, err = run_session(proxy_cmd(cap, agent), [])
    assert rc == 0, err
    base = [sys.executable, "-m", "acplab.model.app.cli", "trace", "record"]
    for cmd in (base + ["--out", str(tmp_path / "x.jsonl")],
                base + ["--out", str(tmp_path / "x.jsonl"), "--", str(tmp_path / "no-such-agent")],
                base + ["--", sys.executable, agent]):
        rc, out, err = run_session(cmd, [])
        assert rc == 2 and out == b""
        one_line_error(err)
    assert not (tmp_path / "x.jsonl").exists()


def test_sigterm_is_forwarded_to_the_child(tmp_path, agent):
    marker = tmp_path / "marker"
    cap = tmp_path / "c.jsonl"
    proc = subprocess.Popen(proxy_cmd(cap, agent), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env={**os.environ, "FAKE_AGENT_MARKER": str(marker)})
    try:
        proc.stdin.write(j({"jsonrpc": "2.0", "method": "wait"}))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline()) == {"jsonrpc": "2.0", "method": "ready"}
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
    assert marker.read_text() == "got SIGTERM"
    assert rc == 7  # the child's own exit status
    assert [r.msg.get("method") for r in read_capture(cap) if r.close is None] == ["wait", "ready"]
