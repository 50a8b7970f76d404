"""Benchmark `acplab trace check`: generate a conformant capture of N messages, check it, report speed and memory.

    python benchmarks/tracecheck_bench.py [--messages 1000000] [--file /tmp/acplab-bench.jsonl]
                                          [--baseline OTHER_PYTHON] [--rounds 3] [--spaced]

Each turn is 9 messages (prompt, running, response, user_message, tool call
in_progress / completed, two agent chunks, idle), with fresh request and
message IDs; every 50 turns a second connection reconnects and resumes with a
chunked replay of its last message.  Lines are compact (as the recorder writes
them: the capture reader's fast path), or with ``--spaced`` as Python's
default ``json.dumps`` writes them (its strict path).  Each check runs in a fresh process
(`--run FILE`), which prints messages/s, its wall and CPU seconds and its peak
RSS (ru_maxrss).  With
``--baseline``, another interpreter (one with an older acplab installed)
checks the same file in alternating rounds, so the ratio of the two is
measured under the same load; the best round of each counts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

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
        # the replayed message carries its live content (R5 compares it with what the ID carried live)
        (conn, A, upd({"sessionUpdate": "user_message_chunk", "messageId": mid,
                       "content": {"type": "text", "text": f"prompt number {k}"}})),
        (conn, A, upd({"sessionUpdate": "state_update", "state": "idle"})),
        (conn, A, {"jsonrpc": "2.0", "id": 1, "result": {}}),
    ]


def generate(path: str, n: int, spaced: bool = False) -> int:
    seq = 0
    k = 0
    epoch = 0
    with open(path, "w") as f:
        def put(rows):
            nonlocal seq
            for conn, d, msg in rows:
                seq += 1
                f.write(json.dumps({"seq": seq, "t": seq * 0.5, "conn": conn, "dir": d, "msg": msg},
                                   separators=(", ", ": ") if spaced else (",", ":")) + "\n")
        put([("c1", C, {"jsonrpc": "2.0", "id": 0, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}),
             ("c1", A, {"jsonrpc": "2.0", "id": 0, "result": {"sessionId": "s1"}})])
        while seq < n:
            k += 1
            put(turn(k, "c1"))
            if k % 50 == 0:
                epoch += 1
                put(replay(k, f"c2.{epoch}"))
    return seq


def run_once(path: str) -> None:
    """Check ``path`` in this process; print one JSON line: messages/s, peak RSS, verdict."""
    import resource

    from acplab.model.trace.check import check_capture

    t0, c0 = time.perf_counter(), time.process_time()
    result = check_capture(path)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"rate": result.messages / secs, "seconds": secs, "cpu": cpu, "verdict": result.verdict,
                      "violations": len(result.violations), "warnings": len(getattr(result, "warnings", [])),
                      "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def measure(python: str, path: str) -> dict:
    out = subprocess.run([python, os.path.abspath(__file__), "--run", path], capture_output=True, text=True,
                         cwd="/", check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--file", default="/tmp/acplab-tracecheck-bench.jsonl")
    ap.add_argument("--baseline", default=None, help="another Python with acplab installed (e.g. an older checkout)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--spaced", action="store_true", help="write the capture as Python's default json.dumps does "
                    "(the capture reader's strict path: such lines are not canonical)")
    ap.add_argument("--run", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        run_once(args.run)
        return
    t0 = time.perf_counter()
    n = generate(args.file, args.messages, args.spaced)
    print(f"capture: {n:,} messages, {os.path.getsize(args.file) / 1e6:.0f} MB, generated in "
          f"{time.perf_counter() - t0:.1f} s")
    best: dict[str, dict] = {}
    contenders = [("this", sys.executable)] + ([("baseline", args.baseline)] if args.baseline else [])
    for _ in range(args.rounds):
        for name, python in contenders:
            got = measure(python, args.file)
            if name not in best or got["rate"] > best[name]["rate"]:
                best[name] = got
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for name, got in best.items():
        print(f"{name:8s}: {got['verdict']} ({got['violations']} violations, {got['warnings']} warnings), "
              f"{got['rate']:,.0f} messages/s ({got['seconds']:.1f} s wall, {got['cpu']:.1f} s CPU), "
              f"peak RSS {got['rss_mib']:.0f} MiB")
    if "baseline" in best:
        print(f"ratio this/baseline: {best['this']['rate'] / best['baseline']['rate']:.2f} (speed), "
              f"{best['baseline']['cpu'] / best['this']['cpu']:.2f} (CPU time, baseline/this), "
              f"{best['this']['rss_mib'] / best['baseline']['rss_mib']:.2f} (peak RSS)")


if __name__ == "__main__":
    main()
