"""Benchmark `acplab trace check`: generate a conformant capture of N messages, check it, report speed and memory.

    python benchmarks/tracecheck_bench.py [--messages 1000000] [--file /tmp/acplab-bench.jsonl]

Each turn is 10 messages (prompt, running, response, user_message, tool call
in_progress / completed, two agent chunks, idle, plus a session/cancel-free
repeat), with fresh request and message IDs; every 50 turns a second
connection reconnects and resumes with a chunked replay of its last message.
Prints messages/s and peak RSS (resource.getrusage, ru_maxrss).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from acplab.model.trace.check import check_capture  # noqa: E402

C, A = "client->agent", "agent->client"


def upd(u):
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": u}}


def turn(k: int, conn: str):
    rid, mid = k + 10, f"msg-{k}"
    text = {"type": "text", "text": f"prompt number {k}"}
    return [
        (conn, C, {"jsonrpc": "2.0", "id": rid, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": [text]}}),
        (conn, A, upd({"sessionUpdate": "state_update", "state": "running"})),
        (conn, A, {"jsonrpc": "2.0", "id": rid, "result": {"messageId": mid}}),
        (conn, A, upd({"sessionUpdate": "user_message", "messageId": mid, "content": [text]})),
        (conn, A, upd({"sessionUpdate": "tool_call_update", "toolCallId": f"t{k}", "status": "in_progress"})),
        (conn, A, upd({"sessionUpdate": "tool_call_update", "toolCallId": f"t{k}", "status": "completed"})),
        (conn, A, upd({"sessionUpdate": "agent_message_chunk", "messageId": f"a-{k}", "content": {"type": "text", "text": "ok "}})),
        (conn, A, upd({"sessionUpdate": "agent_message_chunk", "messageId": f"a-{k}", "content": {"type": "text", "text": "done"}})),
        (conn, A, upd({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})),
    ]


def replay(k: int, conn: str):
    mid = f"msg-{k}"
    return [
        (conn, C, {"jsonrpc": "2.0", "id": 1, "method": "session/resume",
                   "params": {"sessionId": "s1", "cwd": "/w", "replayFrom": {"type": "start"}}}),
        (conn, A, upd({"sessionUpdate": "user_message", "messageId": mid, "content": []})),
        (conn, A, upd({"sessionUpdate": "user_message_chunk", "messageId": mid, "content": {"type": "text", "text": "x"}})),
        (conn, A, upd({"sessionUpdate": "state_update", "state": "idle"})),
        (conn, A, {"jsonrpc": "2.0", "id": 1, "result": {}}),
    ]


def generate(path: str, n: int) -> int:
    seq = 0
    k = 0
    epoch = 0
    with open(path, "w") as f:
        def put(rows):
            nonlocal seq
            for conn, d, msg in rows:
                seq += 1
                f.write(json.dumps({"seq": seq, "t": seq * 0.5, "conn": conn, "dir": d, "msg": msg},
                                   separators=(",", ":")) + "\n")
        put([("c1", C, {"jsonrpc": "2.0", "id": 0, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}),
             ("c1", A, {"jsonrpc": "2.0", "id": 0, "result": {"sessionId": "s1"}})])
        while seq < n:
            k += 1
            put(turn(k, "c1"))
            if k % 50 == 0:
                epoch += 1
                put(replay(k, f"c2.{epoch}"))
    return seq


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--file", default="/tmp/acplab-tracecheck-bench.jsonl")
    args = ap.parse_args()
    t0 = time.perf_counter()
    n = generate(args.file, args.messages)
    gen = time.perf_counter() - t0
    size = os.path.getsize(args.file)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    result = check_capture(args.file)
    secs = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(f"capture: {n:,} messages, {size / 1e6:.0f} MB, generated in {gen:.1f} s")
    print(f"verdict: {result.verdict} ({len(result.violations)} violations)")
    print(f"checked in {secs:.1f} s: {n / secs:,.0f} messages/s")
    print(f"peak RSS: {rss / 1024:.0f} MiB (before checking: {rss_before / 1024:.0f} MiB)")


if __name__ == "__main__":
    main()
