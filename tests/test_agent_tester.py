"""``acplab test`` against tiny Python fake agents: verdicts, exit codes, shrinking, replay, live judging, two clients.

The fakes (tests/fixtures/tester/fake_agent.py) are modes of a small
synchronous ACP agent; the hostile ones must end in a verdict, never a hang
or a traceback.  Campaigns run in this process (``run_campaign``, what the
command calls); the command line itself is run only where its own part is
the point (exit codes, one-line errors, an interrupt, a replay by file).
The SDK-built agent's modes are in tests/test_agent_tester_sdk.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from itertools import islice
from pathlib import Path

import pytest

from acplab.model.tester.campaign import Campaign, Config, run_campaign
from acplab.model.tester.client import Options, ScheduleRun
from acplab.model.tester.schedule import Schedule, Step, load_schedule, save_schedule

from cli_harness import run_cli

ROOT = Path(__file__).resolve().parents[1]
ACPLAB = [sys.executable, "-m", "acplab.model.app.cli"]
FAKE = ROOT / "tests" / "fixtures" / "tester" / "fake_agent.py"
SECOND = "FAKE_CONN_FDS"  # how the fake agent is told its second connection's fds


def fake(mode: str) -> list[str]:
    return [sys.executable, str(FAKE), mode]


def campaign(tmp_path, mode: str, agent: list[str] | None = None, **config):
    """One in-process campaign against a fake agent (short settle and timeout: the fakes answer at once)."""
    config = {"settle": 0.1, "timeout": 2.0, "budget": 60.0, **config}
    return run_campaign(Config(agent or fake(mode), out=str(tmp_path / f"out-{time.monotonic_ns()}"), **config))


def own_fake(tmp_path, mode: str) -> tuple[list[str], str]:
    """A copy of the fake agent at a path only this test uses, and the pattern that finds its processes.

    Other xdist workers run the shared fake at the same time; a pattern on the shared path would
    find their agents and call them this test's orphans.
    """
    copy = tmp_path / "own_fake_agent.py"
    copy.write_text(FAKE.read_text())
    return [sys.executable, str(copy), mode], f"{copy} {mode}"


def processes_matching(pattern: str) -> str:
    """PIDs of the processes whose command line holds ``pattern`` (pgrep -f), one per line."""
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.strip()


def acplab_test(tmp_path, agent, *options):
    """``acplab test --json`` (in this process, as tests/cli_harness.py runs it): (exit code, the JSON, stderr)."""
    out = tmp_path / f"out-{time.monotonic_ns()}"
    code, stdout, stderr = run_cli("test", "--json", "--out", str(out), "--settle", "0.1", "--timeout", "2", *options,
                                   "--", *agent)
    assert "Traceback" not in stderr, stderr
    return code, json.loads(stdout), stderr


def play(tmp_path, schedule: Schedule, mode: str, **options) -> tuple:
    """One run of ``schedule`` (no campaign): its outcome and capture path."""
    capture = tmp_path / f"run-{time.monotonic_ns()}.jsonl"
    opts = Options(fake(mode), settle=0.1, timeout=2.0, **options)
    return ScheduleRun(schedule, opts, capture, capture.with_suffix(".stderr")).run(), capture


TWO_PROMPTS = Schedule("two", (Step("now", "prompt", ("yes",)), Step("idle", "prompt", ("yes",))))


def test_a_conforming_agent_holds(tmp_path):
    report = campaign(tmp_path, "ok", max_schedules=4)
    assert (report.exit_code, report.verdict, report.findings) == (0, "holds", [])
    assert report.runs == 4 and len(report.cases) == 4 and report.actions["prompt"] >= 4
    assert dict(report.dialects) == {"v2": 4}


def test_a_v1_agent_is_judged_by_the_v1_rules(tmp_path):
    report = campaign(tmp_path, "v1", max_schedules=2)
    assert dict(report.dialects) == {"v1": 2}
    assert report.exit_code == 0, [f.to_json() for f in report.findings]


def test_a_duplicate_message_id_is_found_shrunk_and_replayed(tmp_path):
    report = campaign(tmp_path, "dup_id", first=True, budget=90.0)
    assert report.exit_code == 1 and report.verdict == "violated"
    finding = report.findings[0].to_json()
    assert "P5" in finding["rules"] and finding["rule_texts"]["P5"].startswith("Every accepted submission")
    minimal = finding["minimal_schedule"]["steps"]
    assert [s["do"] for s in minimal] == ["prompt", "prompt"]  # two identical prompts, nothing else
    assert minimal[0]["text"] == minimal[1]["text"]
    assert finding["shrink_complete"]
    assert Path(finding["files"]["diagram"]).read_text().startswith("---")
    code, replay, err = acplab_test(tmp_path, fake("dup_id"), "--schedule", finding["files"]["schedule"], "--no-shrink",
                                    "--stop-early")
    assert code == 1 and replay["violations"][0]["property"] == finding["property"]
    assert replay["schedules"] == 1 and replay["stopped_early"] == 1
    assert "live: MessageIdsDistinct [P5] violated at message" in err  # reported as it happened


def test_junit_is_read_by_a_junit_parser(tmp_path):
    junitparser = pytest.importorskip("junitparser")
    from acplab.model.tester.output import write_html, write_junit

    report = campaign(tmp_path, "dup_id", max_schedules=4, shrink=False)
    xml = tmp_path / "report.xml"
    write_junit(report, xml)
    write_html(report, report.out_dir)
    suite = next(iter(junitparser.JUnitXml.fromfile(str(xml))))
    cases = list(suite)
    assert [c.name for c in cases] == [c.name for c in report.cases]
    failed = [c.name for c in cases if any(isinstance(r, junitparser.Failure) for r in c.result)]
    assert failed == [c.name for c in report.cases if c.failed] and failed
    assert suite.tests == 4 and suite.failures == len(failed)
    html = (Path(report.out_dir) / "report.html").read_text()
    assert "MessageIdsDistinct" in html and 'id="findings"' in html and "Content-Security-Policy" in html


def test_a_silent_agent_could_not_be_driven(tmp_path):
    report = campaign(tmp_path, "silent")
    assert report.exit_code == 3 and report.verdict == "not-driven"
    assert "did not answer initialize" in report.not_driven


def test_a_crashing_agent_shows_its_stderr_and_exits_3(tmp_path):
    code, report, _ = acplab_test(tmp_path, fake("crash"), "--budget", "30")
    assert code == 3 and "missing API key" in report["not_driven"]


def test_a_command_that_does_not_exist_is_not_driven(tmp_path):
    report = run_campaign(Config(["/nonexistent/agent"], out=str(tmp_path / "o"), budget=30.0))
    assert report.exit_code == 3 and "cannot start" in report.not_driven


def test_an_agent_sending_garbage_violates(tmp_path):
    report = campaign(tmp_path, "garbage", max_schedules=1, shrink=False, timeout=1.0)
    assert report.exit_code == 1 and report.findings
    assert any("not JSON" in n for n in report.notes)


def test_an_agent_exiting_mid_run_gets_a_verdict(tmp_path):
    """A verdict, not a hang: what it never answered (a prompt, a $/cancel_request of it) is open at the end of
    the capture (P2), unless a reconnect's connection c1.1 closed c1 first (E10); the note says it exited."""
    report = campaign(tmp_path, "exit_mid", max_schedules=4, shrink=False)
    assert report.verdict in ("holds", "violated") and report.runs == 4
    assert {f.property for f in report.findings} <= {"PromptsAnswered", "CancelRequestsAnswered"}
    assert any("exited" in n for n in report.notes), report.notes


def test_a_flooding_agent_gets_a_verdict(tmp_path):
    started = time.monotonic()
    report = campaign(tmp_path, "flood", max_schedules=1, shrink=False, max_messages=2000)
    assert time.monotonic() - started < 60
    assert report.verdict in ("holds", "violated") and any("flooded" in n for n in report.notes), report.notes


def test_every_child_is_ended(tmp_path):
    """The agent runs in its own process group; nothing of it outlives the run."""
    agent, pattern = own_fake(tmp_path, "ok")
    campaign(tmp_path, "ok", agent=agent, max_schedules=2)
    assert processes_matching(pattern) == ""


def test_bad_usage_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"steps": [{"after": "soon", "do": "prompt", "text": "x"}]}')
    code, _out, err = run_cli("test", "--schedule", str(bad), "--", "true")
    assert code == 2 and "after 'soon' is not one of" in err
    assert len(err.strip().splitlines()) == 1
    code, _out, err = run_cli("test")
    assert code == 2 and "missing COMMAND" in err


def test_an_interrupt_ends_the_agent_and_reports(tmp_path):
    """SIGTERM mid-run: the agent's process group is ended, the summary still printed, exit 130."""
    import signal

    out = tmp_path / "out"
    agent, pattern = own_fake(tmp_path, "ok")
    proc = subprocess.Popen([*ACPLAB, "test", "--json", "--out", str(out), "--budget", "600", "--", *agent],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not list(out.glob("runs/*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert json.loads(stdout)["interrupted"] is True
    assert processes_matching(pattern) == ""


def test_schedules_are_seeded_data_that_round_trip(tmp_path):
    from acplab.model.tester.schedule import random_schedule

    one, again, other = random_schedule(7), random_schedule(7), random_schedule(8)
    assert one == again and one != other
    assert one.steps[0].do in ("prompt", "permissions")
    save_schedule(one, tmp_path / "s.json")
    back = load_schedule(tmp_path / "s.json")
    assert back.steps == one.steps and back.seed == 7
    assert all(s.do != "prompt" or not s.image for k in range(200) for s in random_schedule(k).steps)
    assert any(s.image for k in range(200) for s in random_schedule(k, images=True).steps)
    two = Schedule("two", (Step("now", "prompt", ("a",)), Step("idle", "cancel", client=1)))
    save_schedule(two, tmp_path / "two.json")
    assert load_schedule(tmp_path / "two.json").steps == two.steps and two.clients == 2 and one.clients == 1


def test_shrink_candidates_are_smaller_or_earlier():
    from acplab.model.tester.schedule import schedule_size, shrink_candidates

    s = Schedule("x", (Step("now", "prompt", ("a", "b")), Step("idle", "prompt", ("c",)), Step("quiet", "cancel")))
    cands = list(shrink_candidates(s))
    assert cands and all(schedule_size(c) < schedule_size(s) for c in cands)
    assert Schedule("x", (Step("now", "prompt", ("a", "b", "c")), Step("quiet", "cancel"))).steps in \
        [c.steps for c in cands]  # two prompts merged
    assert Schedule("x", s.steps[:2] + (Step("idle", "cancel"),)).steps in [c.steps for c in cands]  # cancel earlier
    assert len(set(c.steps for c in cands)) == len(cands)


@pytest.mark.parametrize("text, problem", [
    ("[]", "an object with a list of steps"), ('{"steps": []}', "has no steps"),
    ('{"steps": [{"do": "jump"}]}', "do 'jump' is not one of"),
    ('{"steps": [{"do": "prompt"}]}', "needs text or an image"),
    ('{"steps": [{"do": "permissions", "answer": "maybe"}]}', "answer 'maybe'"),
    ('{"steps": [{"do": "cancel", "colour": 1}]}', "unknown field(s) colour"), ("{", "not a JSON schedule"),
    ('{"steps": [{"do": "cancel", "client": 2}]}', "client must be 0"),
])
def test_a_bad_schedule_is_one_clear_error(tmp_path, text, problem):
    from acplab.model.errors import InputError

    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(problem)):
        load_schedule(path)


@pytest.fixture(scope="module")
def witnesses():
    from acplab.model.tester.witness_schedules import witness_schedules

    return witness_schedules(seconds_per_scenario=2, only={"identical-prompts", "cancellation", "agent-restart",
                                                           "timeout-retry", "multi-client"})


def test_witness_runs_become_schedules(witnesses):
    """The model's witness runs, client actions only, each after the last message the agent sent before it."""
    schedules = {s.name: s for s in witnesses}
    identical = schedules["witness-identical-prompts-both_accepted_identical"]
    assert [(s.after, s.do, s.text) for s in identical.steps] == [("now", "prompt", ("yes",)),
                                                                  ("idle", "prompt", ("yes",))]
    retries = [sc for name, sc in schedules.items() if name.startswith("witness-timeout-retry-")]
    assert retries and all(sc.actions().count("prompt") == 2 for sc in retries)  # a retry is a prompt on the wire
    assert any(s.do == "reconnect" for sc in schedules.values() for s in sc.steps)
    assert any(s.do == "cancel" and s.after == "user_message" for sc in schedules.values() for s in sc.steps)
    assert all(sc.clients == 1 for sc in witnesses)  # multi-client was left out: one client asked for


def test_witness_schedules_run_first_then_random_ones(tmp_path, witnesses, monkeypatch):
    import acplab.model.tester.witness_schedules as ws

    mutant = Schedule("mutant-x", TWO_PROMPTS.steps, None, "mutant")
    monkeypatch.setattr(ws, "witness_schedules", lambda **kw: witnesses)
    monkeypatch.setattr(ws, "mutant_schedules", lambda seconds, clients: [mutant])
    config = Config(fake("ok"), out=str(tmp_path / "o"), witnesses=True, mutants=True)
    names = [s.name for s in islice(Campaign(config).schedules(), len(witnesses) + 3)]
    n = len(witnesses) + 1  # random seeds go on counting after the model's schedules
    assert names == ["mutant-x"] + [s.name for s in witnesses] + [f"random-{n}", f"random-{n + 1}"]
    report = campaign(tmp_path, "ok", schedule=witnesses[0])
    assert report.exit_code == 0 and report.cases[0].name == witnesses[0].name


# --------------------------------------------------------------------------- live judging


def test_live_judging_gives_trace_checks_verdict(tmp_path):
    """The run's live verdict is the one trace check --complete gives its capture afterwards."""
    from acplab.model.trace.check import check_capture

    for mode in ("ok", "dup_id"):
        outcome, capture = play(tmp_path, TWO_PROMPTS, mode)
        after = check_capture(capture, None, complete=True)
        live = outcome.result
        assert [(v.property, v.explanation, v.seq) for v in live.violations] == \
            [(v.property, v.explanation, v.seq) for v in after.violations]
        assert [w.property for w in live.warnings] == [w.property for w in after.warnings]
        assert bool(live.violations) == (mode == "dup_id")


def test_a_run_stops_at_its_first_violation_when_asked(tmp_path):
    seen = []
    steps = TWO_PROMPTS.steps + (Step("idle", "prompt", ("another",)),)
    outcome, _ = play(tmp_path, Schedule("three", steps), "dup_id", stop_on=frozenset("*"),
                      on_violation=lambda *found: seen.append(found))
    assert outcome.stopped == "MessageIdsDistinct" and seen[0][0] == "MessageIdsDistinct"
    assert outcome.steps_done == 2 and outcome.result.complete is False  # the third prompt never went out
    assert [v.property for v in outcome.result.violations] == ["MessageIdsDistinct"]


# --------------------------------------------------------------------------- captures and mutants as schedules


def _rec(seq, conn, direction, msg):
    return {"seq": seq, "conn": conn, "dir": direction, "msg": {"jsonrpc": "2.0", **msg}}


def test_a_capture_becomes_its_clients_schedule():
    from acplab.model.tester.capture_schedules import records_schedule

    c2a, a2c = "client->agent", "agent->client"
    upd = lambda u: {"method": "session/update", "params": {"sessionId": "s1", "update": u}}  # noqa: E731
    ask = lambda text: {"method": "session/prompt",  # noqa: E731
                        "params": {"prompt": [{"type": "text", "text": text}]}}
    records = [
        _rec(1, "c1", c2a, {"id": 0, "method": "initialize", "params": {}}),
        _rec(2, "c1", a2c, {"id": 0, "result": {"protocolVersion": 2}}),
        _rec(3, "c1", c2a, {"id": 1, "method": "session/new", "params": {}}),
        _rec(4, "c1", a2c, {"id": 1, "result": {"sessionId": "s1"}}),
        _rec(5, "c1", c2a, {"id": 2, **ask("a")}),
        _rec(6, "c1", a2c, upd({"sessionUpdate": "state_update", "state": "running"})),
        _rec(7, "c1", a2c, {"id": 9, "method": "session/request_permission",
                            "params": {"options": [{"optionId": "ok", "kind": "allow_once"}]}}),
        _rec(8, "c1", c2a, {"id": 9, "result": {"outcome": {"outcome": "selected", "optionId": "ok"}}}),
        _rec(9, "c1", c2a, {"method": "$/cancel_request", "params": {"requestId": 2}}),
        _rec(10, "c1", a2c, upd({"sessionUpdate": "user_message", "messageId": "m", "content": []})),
        _rec(11, "c1", c2a, {"method": "session/cancel", "params": {"sessionId": "s1"}}),
        _rec(12, "c1.1", c2a, {"id": 0, "method": "initialize", "params": {}}),
        _rec(13, "c1.1", c2a, {"id": 1, "method": "session/resume", "params": {"replayFrom": {"type": "start"}}}),
        _rec(14, "c1.1", c2a, {"id": 2, "method": "fs/read_text_file", "params": {}}),
        _rec(15, "c2", c2a, {"id": 5, **ask("b")}),
    ]
    schedule, left_out = records_schedule(records, "x")
    assert [(s.after, s.do, s.client) for s in schedule.steps] == [
        ("now", "permissions", 0), ("now", "prompt", 0), ("permission", "cancel_request", 0),
        ("user_message", "cancel", 0), ("now", "reconnect", 0), ("now", "prompt", 1)]
    assert schedule.steps[0].answer == "allow" and schedule.steps[2].target == 0 and schedule.steps[4].replay
    assert left_out == ["fs/read_text_file"] and schedule.clients == 2


def test_a_mutants_counterexample_drives_an_agent_with_its_bug(tmp_path):
    """reused-id's shortest counterexample (identical prompts) as a schedule: the fake with that bug fails P5."""
    from acplab.model.tester.witness_schedules import mutant_schedules

    (schedule,) = mutant_schedules(5.0, only={"reused-id"})
    assert schedule.name == "mutant-reused-id-InsertedIdsDistinct" and schedule.actions() == ("prompt", "prompt")
    assert campaign(tmp_path, "dup_id", schedule=schedule, shrink=False).findings[0].rules == ("P5",)
    assert campaign(tmp_path, "ok", schedule=schedule).exit_code == 0


def test_check_out_captures_replay_as_schedules(tmp_path):
    """A check --out capture file (here: the model's run written as check writes it) given to --schedule."""
    from acplab.model.acp.killers import Claim, reproduce
    from acplab.model.tester.witness_schedules import path_records
    from acplab.model.wire.capture import dump_capture

    found = reproduce(Claim("InsertedIdsDistinct", "reused-id", "identical-prompts"))
    capture = tmp_path / "InsertedIdsDistinct.jsonl"
    dump_capture(path_records(found.path.actions_with_effects()), capture)
    code, report, _ = acplab_test(tmp_path, fake("dup_id"), "--schedule", str(capture), "--no-shrink")
    assert code == 1 and report["cases"][0]["name"] == "capture-InsertedIdsDistinct"
    assert report["violations"][0]["rules"] == ["P5"]


# --------------------------------------------------------------------------- two clients


TWO_CLIENTS = Schedule("two-clients", (Step("now", "prompt", ("hi",)), Step("idle", "prompt", ("yes",), client=1)))


def test_each_step_waits_for_its_event_on_its_clients_connection(tmp_path):
    """Every trigger is an observed event of the acting client's connection (the response, idle, ...)."""
    steps = (Step("now", "prompt", ("a",)), Step("response", "prompt", ("b",)), Step("user_message", "cancel"),
             Step("now", "prompt", ("c",), client=1), Step("response", "cancel", client=1))
    outcome, _ = play(tmp_path, Schedule("events", steps), "ok", second=SECOND)
    assert outcome.opened == ["response", "user_message", "response"] and outcome.missed == []


def test_two_clients_share_one_agent_process(tmp_path):
    outcome, capture = play(tmp_path, TWO_CLIENTS, "ok", second=SECOND)
    records = [json.loads(line) for line in capture.read_text().splitlines()]
    assert {r["conn"] for r in records} == {"c1", "c2"}
    methods = [(r["conn"], r["msg"].get("method")) for r in records if r.get("dir") == "client->agent"]
    assert ("c2", "session/resume") in methods and ("c2", "session/prompt") in methods
    assert outcome.result.violations == []


def test_a_restart_ends_both_connections_and_both_clients_resume(tmp_path):
    steps = TWO_CLIENTS.steps + (Step("idle", "reconnect", replay=True, client=1), Step("idle", "prompt", ("ok",)))
    outcome, capture = play(tmp_path, Schedule("restart", steps), "ok", second=SECOND)
    records = [json.loads(line) for line in capture.read_text().splitlines()]
    resumed = [(r["conn"], "replayFrom" in r["msg"]["params"]) for r in records
               if r.get("dir") == "client->agent" and r["msg"].get("method") == "session/resume"]
    assert resumed == [("c2", False), ("c2.1", True), ("c1.1", False)]  # the restarting client first, with replay
    assert outcome.result.violations == [] and outcome.steps_done == 4


def test_a_cross_connection_rule_is_judged(tmp_path):
    """The second connection hears of the first client's message under another ID (U3, judged across both)."""
    report = campaign(tmp_path, "other_id", schedule=TWO_CLIENTS, second=SECOND, shrink=False)
    assert report.exit_code == 1 and "U3" in report.findings[0].rules


def test_a_two_client_schedule_needs_a_second_connection(tmp_path):
    report = campaign(tmp_path, "ok", schedule=TWO_CLIENTS)
    assert report.runs == 0 and any("no --second-connection" in n for n in report.notes)


def records_dir_of_client(records) -> str:
    """The ``dir`` value of what the client sent (the direction of ``initialize``)."""
    return next(r["dir"] for r in records if r["msg"].get("method") == "initialize")


def test_each_cancel_is_followed_by_an_order_probe_the_agent_answers(tmp_path):
    """The probe goes out right after session/cancel on the same connection and is answered (here -32601): the
    FIFO proof C4, C7 and C9 need; ``order_probe=False`` sends none."""
    cancel = Schedule("cancel", (Step("now", "prompt", ("a",)), Step("running", "cancel")))
    for probe in (True, False):
        _outcome, capture = play(tmp_path, cancel, "ok", order_probe=probe)
        records = [json.loads(line) for line in capture.read_text().splitlines()]
        msgs = [r["msg"] for r in records]
        sent = [r["msg"] for r in records if r["dir"] == records_dir_of_client(records)]
        at = next(i for i, m in enumerate(msgs) if m.get("method") == "session/cancel")
        probes = [m for m in msgs if m.get("method") == "_acplab/order_probe"]
        if not probe:
            assert probes == []
            continue
        # the client's next message after the cancel (the agent's may come in between on the wire)
        assert sent[sent.index(msgs[at]) + 1].get("method") == "_acplab/order_probe"
        assert any(m.get("id") == probes[0]["id"] and "error" in m and "method" not in m for m in msgs[at + 2:])
