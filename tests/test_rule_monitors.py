"""Every rule monitor can fail: one hand-built capture per rule it checks (model/acp/rules/cases.py), and conformant
traffic passes."""

import json

import pytest

from acplab.model.acp.rules import MONITOR_CLASSES, catalogue, monitors_of_rule, wire_checkable_musts
from acplab.model.trace.check import check_capture
from acplab.model.trace.sidecar import write_sidecar

from acplab.model.acp.rules.cases import CASES, SWITCHED, TWINS, S, records, start, turn


def _check(tmp_path, items, events=(), complete=False):
    path = tmp_path / "case.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records(items)))
    internal = None
    if events:
        internal = tmp_path / "events.jsonl"
        write_sidecar(events, internal)
    return check_capture(path, complete=complete, internal=internal)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_breaks_its_rule(name, tmp_path):
    monitor, rule, level, complete, items, events = CASES[name]
    result = _check(tmp_path, items, events, complete)
    found = result.violations if level == "violation" else result.warnings
    hits = [f for f in found if f.property == monitor and (rule is None or rule in f.rules)]
    assert hits, (name, [(f.property, f.rules, f.level, f.explanation) for f in result.violations + result.warnings])
    assert all(f.level == level for f in hits)
    assert not [w for w in result.warnings if w.property == "Unjudgeable"]


def test_every_monitor_has_a_case_that_makes_it_fail():
    covered = {case[0] for case in CASES.values()} | {case[0] for case in SWITCHED.values()}
    assert {cls.name for cls in MONITOR_CLASSES} - covered == set()


def test_every_wire_checkable_must_rule_has_a_monitor():
    rules = wire_checkable_musts()
    assert len(rules) == 57  # the literal count (the issue said 54; see the README), with U15 added
    assert [r for r in rules if not monitors_of_rule(r)] == []


def test_monitors_cite_only_catalogue_rules():
    known = set(catalogue())
    for cls in MONITOR_CLASSES:
        assert set(cls.rules) <= known, cls.name
        assert cls.name and cls.description and (cls.keys or cls.armed or "end" in vars(cls)), cls.name


def test_conformant_traffic_passes(tmp_path):
    result = _check(tmp_path, S + turn(2, "m1") + turn(3, "m2", "hi") + turn(4, "m3", "/status"), complete=True)
    assert result.verdict == "holds" and result.warnings == [], [w.explanation for w in result.warnings]
    v1 = _check(tmp_path, start(1) + [("c1", "client->agent", {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                                                                 "params": {"sessionId": "s1", "prompt": []}})])
    assert "P14" in {r for v in v1.violations for r in v.rules}  # the client half of P14 holds in v1 as well


from acplab.model.acp.rules.cases import SID, areq, chunk, note, prompt, req, res, state, tool, upd, user  # noqa: E402

CONFORMANT = {
    "prompt-joins-running-work": S + [prompt(2, "one"), state("running"), res(2, {"messageId": "m1"}), user("m1", "one"),
                                      prompt(3, "two"), res(3, {"messageId": "m2"}), user("m2", "two"),
                                      chunk("agent_message", "a1", "both"), state("idle", stopReason="end_turn")],
    "chunked-report-before-response": S + [prompt(2, "hi"), state("running"), chunk("user_message", "m1", "hi"),
                                           res(2, {"messageId": "m1"}), state("idle", stopReason="end_turn")],
    "client-answers-cancelled-early": S + [prompt(2), state("running"), res(2, {"messageId": "m1"}), user("m1"),
                                           tool("t1", "pending"), state("requires_action"),
                                           areq(0, "session/request_permission",
                                                {"sessionId": SID, "subject": {"type": "tool_call",
                                                                               "toolCall": {"toolCallId": "t1"}},
                                                 "options": [{"optionId": "allow", "kind": "allow_once"}]}),
                                           note("session/cancel", {"sessionId": SID}),
                                           res(0, {"outcome": {"outcome": "cancelled"}}, to_agent=True),
                                           tool("t1", "cancelled"), state("idle", stopReason="cancelled")],
    "close-idle-session": S + turn(2, "m1") + [req(3, "session/close", {"sessionId": SID}), res(3, {})],
    "resume-same-connection": S + turn(2, "m1") + [req(3, "session/resume", {"sessionId": SID, "cwd": "/w"}),
                                                   state("idle", stopReason="end_turn"), res(3, {})],
    "two-sessions": S + [req(5, "session/new", {"cwd": "/w", "mcpServers": []}), res(5, {"sessionId": "s2"}),
                         prompt(2), state("running"), res(2, {"messageId": "m1"}), user("m1"),
                         req(6, "session/prompt", {"sessionId": "s2", "prompt": [{"type": "text", "text": "x"}]}),
                         upd({"sessionUpdate": "state_update", "state": "running"}, sid="s2"),
                         res(6, {"messageId": "m1"}),
                         upd({"sessionUpdate": "user_message", "messageId": "m1",
                              "content": [{"type": "text", "text": "x"}]}, sid="s2"),
                         state("idle", stopReason="end_turn"),
                         upd({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}, sid="s2")],
    "background-tool-while-idle": S + turn(2, "m1") + [tool("t9", "in_progress"),
                                                       state("idle", background=[{"type": "tool_call",
                                                                                  "toolCallId": "t9"}]),
                                                       tool("t9", "completed"), state("idle", background=[])],
    "unknown-updates-and-methods": S + [upd({"sessionUpdate": "usage_update", "used": 5}),
                                        upd({"sessionUpdate": "available_commands_update", "availableCommands": []}),
                                        req(7, "session/set_mode", {"sessionId": SID, "modeId": "x"}), res(7, {}),
                                        areq(3, "fs/read_text_file", {"sessionId": SID, "path": "/w/a"}),
                                        res(3, {"content": "x"}, to_agent=True)],
}


@pytest.mark.parametrize("name", sorted(CONFORMANT))
def test_conformant_variants_raise_no_violation(name, tmp_path):
    result = _check(tmp_path, CONFORMANT[name], complete=True)
    assert result.violations == [], [(v.property, v.rules, v.explanation) for v in result.violations]





@pytest.mark.parametrize("name", sorted(TWINS))
def test_each_conformant_twin_holds(name, tmp_path):
    monitor, items, events = TWINS[name]
    result = _check(tmp_path, items, events)
    assert result.verdict == "holds", (name, [(f.property, f.rules, f.explanation) for f in result.violations])
    assert not [w for w in result.warnings if w.property == monitor], \
        (name, [(f.property, f.rules, f.explanation) for f in result.warnings])


def _switched(tmp_path, items, **changes):
    from acplab.model.acp.rule_monitor import Switches

    path = tmp_path / "case.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records(items)))
    return check_capture(path, switches=Switches()._replace(**changes))


def test_advertised_custom_states_are_declared_by_their_meta_key(tmp_path):
    from acplab.model.acp.rules.cases import RUN, req, res, state

    advertised = [req(0, "initialize", {"protocolVersion": 2, "clientCapabilities": {"_meta": {"acme.states":
                                                                                               ["_paused"]}}}),
                  res(0, {"protocolVersion": 2, "capabilities": {"session": {}}}),
                  req(1, "session/new", {"cwd": "/w", "mcpServers": []}), res(1, {"sessionId": "s1"})]
    items = advertised + RUN + [state("_paused"), state("idle", stopReason="end_turn")]
    assert "S15" in {r for v in _switched(tmp_path, items).violations for r in v.rules}  # no key named: S15
    assert _switched(tmp_path, items, states_key="acme.states").verdict == "holds"
    other = advertised + RUN + [state("_frozen")]
    assert "S15" in {r for v in _switched(tmp_path, other, states_key="acme.states").violations for r in v.rules}


def test_the_two_readings_are_switches_and_the_output_states_them(tmp_path):
    from acplab.model.acp.rules.cases import RUN, chunk, state

    shared = S + RUN + [chunk("agent_message", "m1", "x"), state("idle", stopReason="end_turn")]
    per_type = _switched(tmp_path, shared)
    assert per_type.verdict == "holds" and per_type.readings["message_id_scope"] == "type"
    session = _switched(tmp_path, shared, id_scope="session")
    assert [v.property for v in session.violations] == ["MessageIdsUniqueInSession"]
    odd = S + RUN + [state("idle", stopReason="timeout")]
    assert _switched(tmp_path, odd).verdict == "violated"
    lenient = _switched(tmp_path, odd, strict_stop_reasons=False)
    assert lenient.verdict == "holds" and lenient.readings["unknown_stop_reason"] == "warning"


@pytest.mark.parametrize("name", sorted(SWITCHED))
def test_each_switched_case_breaks_its_rule_under_its_reading_only(name, tmp_path):
    monitor, rule, level, items, changes = SWITCHED[name]
    assert monitor not in {v.property for v in _switched(tmp_path, items).violations}
    hits = [v for v in _switched(tmp_path, items, **changes).violations if v.property == monitor and rule in v.rules]
    assert hits and all(v.level == level for v in hits)
