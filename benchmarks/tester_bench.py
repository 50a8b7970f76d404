"""Benchmarks of ``acplab test`` (the goals of its issue; measured here, never in timed tests).

    python benchmarks/tester_bench.py [--part roundtrips|bugs|conformant|mutants|all] [--budget 60] [--schedules N]
                                      [--modes a,b] [--json FILE]

* roundtrips: client-agent round trips per second against a trivial agent
  (a synchronous Python agent: each prompt answered at once); one schedule of
  ``--prompts`` prompts, each sent after the previous response; the agent's
  start-up is left out (timed from the first prompt on).
* bugs: each client-provokable buggy mode of the SDK agent
  (scripts/sdk_corpus/ts-v2/agent.mjs) under ``acplab test --first`` with
  ``--budget`` seconds: found or not, the rule, the seconds to the finding
  (shrinking included), the minimal schedule's length.
* conformant: each ``ok_*`` mode over ``--schedules`` seeded schedules:
  the properties violated and the schedules that violate (the goal: 0).
* mutants: each buggy mode of :data:`MUTANT_OF` against its mutant's
  counterexample as a schedule (``acplab test --mutants`` translates them),
  ``--repeat 3``: how many of the runs fail, with which rules; each
  conformant mode of the same turns against the same schedules (0 expected).

Needs Node and ``npm ci`` in scripts/sdk_corpus/ts-v2 for the last two.
Report the machine's load beside the figures (2 shared cores: node's start-up
dominates a run's time under load).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AGENT = ROOT / "scripts" / "sdk_corpus" / "ts-v2" / "agent.mjs"
ACPLAB = [sys.executable, "-m", "acplab.model.app.cli"]
#: buggy modes no conforming client provokes: the client itself must send an empty prompt (P14)
NOT_CLIENT_PROVOKABLE = {"neg_client_empty_prompt", "neg_empty_prompt_accepted"}
#: buggy modes whose bug needs an image the agent never advertised
NEEDS_UNADVERTISED = {"neg_user_message_for_rejected_prompt"}

TRIVIAL_AGENT = r'''
import json, sys
n = 0
for line in sys.stdin:
    m = json.loads(line)
    rid, method = m.get("id"), m.get("method")
    if rid is None or method is None:
        continue
    if method == "initialize":
        r = {"protocolVersion": 2, "capabilities": {"session": {}}}
    elif method == "session/new":
        r = {"sessionId": "s1"}
    elif method == "session/prompt":
        n += 1
        updates = ({"sessionUpdate": "state_update", "state": "running"}, None,
                   {"sessionUpdate": "user_message", "messageId": f"u{n}", "content": m["params"]["prompt"]},
                   {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
        for u in updates:
            out = ({"jsonrpc": "2.0", "id": rid, "result": {"messageId": f"u{n}"}} if u is None else
                   {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": u}})
            sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
        continue
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": r}) + "\n")
    sys.stdout.flush()
'''


#: buggy SDK mode -> the mutant with the same bug (the mode's counterexample is that mutant's)
MUTANT_OF = {
    "neg_duplicate_message_id": "reused-id", "neg_cancel_request_32800_after_insertion":
    "cancel-request-32800-after-insertion", "neg_held_prompt_inserted_then_cancelled":
    "cancel-request-32800-after-insertion", "neg_error_idle_after_cancel": "abort-fails-as-error",
    "neg_held_prompt_run_after_cancel": "held-prompt-runs-after-cancel", "neg_replay_new_ids": "replay-new-ids",
    "neg_replay_chunks_without_reset": "replay-without-reset", "neg_user_message_never_reported": "suppressed-echo",
    "neg_running_never_idle": "never-idles", "neg_error_after_user_message": "error-after-insertion",
    "neg_tool_update_after_idle": "tool-status-after-idle", "neg_tool_cancelled_after_idle": "tool-status-after-idle",
    "neg_custom_stop_reason_without_prefix": "custom-stop-unprefixed",
    "neg_retry_merged_after_restart": "restart-resets-ids", "neg_resume_without_state_snapshot": "replay-unasked",
}


def mutants(only: list[str] | None) -> list[dict]:
    from acplab.model.tester.schedule import save_schedule
    from acplab.model.tester.witness_schedules import mutant_schedules

    rows = []
    pairs = [(m, MUTANT_OF[m]) for m in only or MUTANT_OF] + [
        ("ok_response_before_user_message", "reused-id"), ("ok_cancel_active_work", "abort-fails-as-error"),
        ("ok_held_prompts_fifo", "held-prompt-runs-after-cancel"), ("ok_resume_replay_start", "replay-new-ids")]
    with tempfile.TemporaryDirectory() as tmp:
        for mode, mutant in pairs:
            for schedule in mutant_schedules(10.0, only={mutant}):
                path = Path(tmp) / f"{schedule.name}.json"
                save_schedule(schedule, path)
                report, seconds = acplab_test(mode, "--schedule", str(path), "--repeat", "3", "--no-shrink")
                case = report["cases"][0]
                rows.append({"mode": mode, "schedule": schedule.name, "failed": case["failed"], "runs": case["runs"],
                             "rules": sorted({r for v in report["violations"] for r in v["rules"]}),
                             "seconds": round(seconds, 1)})
                print(json.dumps(rows[-1]), flush=True)
    return rows


def modes(prefix: str) -> list[str]:
    text = AGENT.read_text()
    return [m for m in re.findall(r"^B\.(\w+) =", text, re.M) if m.startswith(prefix)]


def round_trips(prompts: int) -> dict:
    from acplab.model.tester.client import Options, ScheduleRun
    from acplab.model.tester.schedule import Schedule, Step

    with tempfile.TemporaryDirectory() as tmp:
        agent = Path(tmp) / "trivial.py"
        agent.write_text(TRIVIAL_AGENT)
        steps = (Step("now", "prompt", ("yes",)),) + tuple(Step("response", "prompt", ("yes",))
                                                          for _ in range(prompts - 1))
        run = ScheduleRun(Schedule("bench", steps), Options([sys.executable, str(agent)], settle=0.05),
                          Path(tmp) / "c.jsonl", Path(tmp) / "e.txt")
        started = {}
        original = run.perform

        def perform(step):
            started.setdefault("t", time.monotonic())
            original(step)
        run.perform = perform
        outcome = run.run()
        seconds = time.monotonic() - started["t"] - 0.05  # less the final settle
        return {"prompts": prompts, "round_trips": outcome.round_trips, "seconds": round(seconds, 3),
                "per_second": round(outcome.round_trips / seconds, 1)}


def acplab_test(mode: str, *options: str, timeout: float = 900) -> tuple[dict, float]:
    env = dict(os.environ, ACP_CORPUS_STATE=str(Path(tempfile.gettempdir()) / f"acplab-bench-{mode}.json"))
    with tempfile.TemporaryDirectory() as out:
        started = time.monotonic()
        done = subprocess.run([*ACPLAB, "test", "--json", "--out", str(Path(out) / "o"), *options, "--",
                               "node", str(AGENT), mode], capture_output=True, text=True, env=env, timeout=timeout)
        return json.loads(done.stdout), time.monotonic() - started


def bugs(budget: float, only: list[str] | None) -> list[dict]:
    rows = []
    for mode in only or [m for m in modes("neg_") if m not in NOT_CLIENT_PROVOKABLE]:
        extra = ("--unadvertised-content",) if mode in NEEDS_UNADVERTISED else ()
        report, seconds = acplab_test(mode, "--first", "--budget", str(budget), *extra)
        f = report["violations"][0] if report["violations"] else None
        rows.append({"mode": mode, "found": f is not None, "property": f and f["property"],
                     "rules": f and f["rules"], "minimal_steps": f and f["trace_length"],
                     "shrink_complete": f and f["shrink_complete"], "runs": report["runs"],
                     "seconds": round(seconds, 1)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def conformant(schedules: int, only: list[str] | None) -> list[dict]:
    rows = []
    for mode in only or modes("ok_"):
        report, seconds = acplab_test(mode, "--schedules", str(schedules), "--budget", "100000", "--no-shrink")
        failing = violating_schedules(report)
        rows.append({"mode": mode, "schedules": report["schedules"], "runs": report["runs"],
                     "violations": [v["property"] for v in report["violations"]],
                     "violating_schedules": len(failing), "failing": failing, "seconds": round(seconds, 1)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def violating_schedules(report: dict) -> dict[str, list[str]]:
    """schedule name -> the properties its runs violated."""
    return {case["name"]: case["properties"] for case in report["cases"] if case["failed"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", default="all", choices=["roundtrips", "bugs", "conformant", "mutants", "all"])
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--schedules", type=int, default=200)
    ap.add_argument("--prompts", type=int, default=500)
    ap.add_argument("--modes", default=None)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    only = a.modes.split(",") if a.modes else None
    out = {"load_before": os.getloadavg()}
    if a.part in ("roundtrips", "all"):
        out["round_trips"] = round_trips(a.prompts)
        print(json.dumps(out["round_trips"]), flush=True)
    if a.part in ("bugs", "all"):
        out["bugs"] = bugs(a.budget, only)
    if a.part in ("conformant", "all"):
        out["conformant"] = conformant(a.schedules, only)
    if a.part in ("mutants", "all"):
        out["mutants"] = mutants(only)
    out["load_after"] = os.getloadavg()
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
