"""`acplab switches` and the refused combinations: the listing is derived from spec.py and the code."""

from __future__ import annotations

import inspect
import json

import pytest

from acplab.model.acp import specfile, switch_rules, switches
from acplab.model.acp.bridges import V1AgentBehindBridge
from acplab.model.acp.bridges_v2 import V2AgentBehindBridge
from acplab.model.acp.spec import RFD, SPECS, USER_SPECS

from cli_harness import run_cli


@pytest.fixture(autouse=True)
def _no_user_specs():
    yield
    USER_SPECS.clear()


def _file(tmp_path, text):
    path = tmp_path / "v.toml"
    path.write_text(text)
    return str(path)


def test_every_switch_is_documented_in_spec_py():
    docs = switches.field_docs()
    undocumented = [s for s in specfile.SWITCHES if len(docs.get(s, "")) < 10]
    assert undocumented == [], f"switches without a #: comment in spec.py: {undocumented}"


def test_every_switch_is_read_by_some_actor():
    unread = [r["name"] for r in switches.catalogue() if not r["read_by"]]
    assert unread == [], f"switches no actor's module reads: {unread}"


def test_every_module_reading_a_switch_is_an_actor_or_a_tool():
    assert switches.unassigned_modules() == []


def test_the_scan_finds_known_readers():
    assert switches.actors_reading("client_correlation") == ("client",)
    assert switches.actors_reading("proxy_id_offset") == ("network",)
    assert set(switches.actors_reading("respond_at")) == {"agent", "client"}


@pytest.mark.parametrize("param", switches.BRIDGE_PARAMETERS)
def test_declared_bridge_parameters_are_what_the_bridges_take(param):
    for model in (V1AgentBehindBridge, V2AgentBehindBridge):
        assert param in inspect.signature(model.__init__).parameters, model.__name__


def test_switches_json_lists_every_switch_with_values_default_and_meaning():
    code, out, err = run_cli("switches", "--json")
    assert code == 0, err
    data = json.loads(out)
    rows = {r["name"]: r for r in data["switches"]}
    assert list(rows) == list(specfile.SWITCHES)
    assert rows["respond_at"]["values"] == " | ".join(specfile.CHOICES["respond_at"])
    assert rows["echo"]["default"] is True and rows["echo"]["values"] == "true | false"
    assert "rejection-signal-needs-receipt" in rows["rejection_signal"]["combinations"]
    assert {c["name"] for c in data["combinations"]} == {c.name for c in switch_rules.COMBINATIONS}


def test_switches_text_names_each_switch_once_per_header():
    code, out, _ = run_cli("switches")
    assert code == 0
    headers = [line.split(":")[0] for line in out.splitlines() if line and not line.startswith(" ")]
    for name in specfile.SWITCHES:
        assert name in headers


def test_no_preset_uses_a_refused_combination():
    assert {n: [c.name for c in switch_rules.violated(s)] for n, s in SPECS.items() if switch_rules.violated(s)} == {}


#: per rule: switch values that have the combination (from rfd); a test checks the rule, and only it, refuses them
BROKEN = {
    "rejection-signal-needs-receipt": {"rejection_signal": True},
    "rejection-signal-needs-message-id": {"rejection_signal": True, "respond_at": "receipt", "response": "empty"},
    "stop-reason-needs-end-of-turn": {"response": "stop_reason"},
    "notification-has-no-result": {"respond_at": "never", "response": "empty"},
    "no-echo-no-echo-switches": {"echo": False, "report_id": "runtime"},
    "notification-rejection-needs-token": {"respond_at": "never", "rejection_signal": True},
    "duplicate-rule-needs-chosen-ids": {"duplicate_ids": "reject"},
}


def test_every_rule_has_a_case_and_a_sentence():
    assert set(BROKEN) == {c.name for c in switch_rules.COMBINATIONS}
    for c in switch_rules.COMBINATIONS:
        assert c.why.count(" ") > 8 and set(c.switches) <= set(specfile.SWITCHES), c.name


@pytest.mark.parametrize("rule", sorted(BROKEN))
def test_each_rule_refuses_its_combination(rule):
    spec = RFD._replace(**BROKEN[rule])
    assert [c.name for c in switch_rules.violated(spec)] == [rule]
    with pytest.raises(Exception) as err:
        switch_rules.refuse_invalid(spec, "here")
    assert rule in str(err.value) and "`acplab switches`" in str(err.value)


def test_a_valid_neighbour_passes():
    spec = RFD._replace(respond_at="receipt", rejection_signal=True)
    assert switch_rules.violated(spec) == [] and switch_rules.refuse_invalid(spec, "here") is spec


def test_the_half_ignored_spec_file_is_refused_in_one_line(tmp_path):
    text = 'name = "x"\n[switches]\nrespond_at = "receipt"\nresponse = "empty"\nrejection_signal = true\n'
    code, out, err = run_cli("check", "--spec-file", _file(tmp_path, text), "-q")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "rejection_signal=true" in err and "response='empty'" in err


def test_an_unknown_switch_names_the_closest_one(tmp_path):
    code, _, err = run_cli("check", "--spec-file", _file(tmp_path, 'name = "x"\n[switches]\nrejection_signl = true\n'),
                           "-q")
    assert code == 2 and "did you mean 'rejection_signal'?" in err and "`acplab switches`" in err
    assert len(err.strip().splitlines()) == 1 and "respond_at, response" not in err
