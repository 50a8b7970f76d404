"""The published JSON Schemas (model/schemas, package data) accept what acplab really writes and reads,
every JSON output carries ``schema_version``, and ``trace check --junit/--sarif`` speak their formats
(SARIF validated by the OASIS 2.1.0 schema that tests/js pins, JUnit read back by an XML parser)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from acplab.model.app import ci_formats
from acplab.model.app.schemas import NAMES, SCHEMA_VERSION, schema
from cli_harness import run_cli

ROOT = Path(__file__).resolve().parents[1]
SDK = ROOT / "tests" / "fixtures" / "sdk"
SARIF_SCHEMA = ROOT / "tests" / "js" / "node_modules" / "@microsoft" / "jest-sarif" / "lib" / "schemas" / "sarif-2.1.0-rtm.5.json"


def validate(name: str, instance) -> None:
    """Raise jsonschema.ValidationError (with the path of the bad field) unless ``instance`` fits schema ``name``."""
    jsonschema.Draft202012Validator(schema(name)).validate(instance)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


@pytest.mark.smoke
@pytest.mark.parametrize("name", NAMES)
def test_every_schema_is_a_valid_draft_2020_12_schema(name):
    jsonschema.Draft202012Validator.check_schema(schema(name))


@pytest.mark.smoke
def test_check_json_fits_its_schema_and_is_versioned(tmp_path):
    code, out, err = run_cli("check", "--scenario", "report-order", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["schema_version"] == SCHEMA_VERSION and next(iter(data)) == "schema_version"
    validate("check", data)
    code, out, _ = run_cli("check", "--spec", "reused-id", "--json",
                           "--out", str(tmp_path / "o"))
    data = json.loads(out)
    assert code == 1 and data["violations"]
    validate("check", data)
    broken = dict(data, verdict="fine")
    with pytest.raises(jsonschema.ValidationError):
        validate("check", broken)


def test_an_error_object_fits_every_command_schema():
    code, out, _ = run_cli("check", "--clients", "0", "--json")
    assert code == 2
    data = json.loads(out)
    for name in ("check", "matrix", "simulate", "trace-check"):
        validate(name, data)


def test_simulate_json_fits_its_schema():
    code, out, err = run_cli("simulate", "--sessions", "3", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["schema_version"] == SCHEMA_VERSION
    validate("simulate", data)


def test_matrix_json_and_its_file_fit_their_schema(tmp_path, monkeypatch):
    from acplab.model.app import matrix as mx

    from acplab.model.app import matrix_faults

    monkeypatch.setattr(mx, "MATRIX_RUNS", (("report-order", {}),))
    monkeypatch.setattr(matrix_faults, "FAULTS", matrix_faults.FAULTS[2:3])  # one fault column: its shape, cheaply
    code, out, err = run_cli("matrix", "--spec", "v2-draft", "--json", "--out", str(tmp_path / "m"), "-q")
    data = json.loads(out)
    validate("matrix", data)
    (written,) = (tmp_path / "m").rglob("matrix.json")
    validate("matrix", json.loads(written.read_text()))
    assert json.loads(written.read_text())["schema_version"] == SCHEMA_VERSION


def _fixtures():
    return sorted((SDK / "v2").glob("*.jsonl")) + sorted((SDK / "v1").glob("*.jsonl"))


def test_trace_check_json_of_every_fixture_fits_its_schema():
    for path in _fixtures():
        code, out, err = run_cli("trace", "check", str(path), "--json")
        assert code in (0, 1), err
        data = json.loads(out)
        assert data["schema_version"] == SCHEMA_VERSION
        validate("trace-check", data)


@pytest.mark.smoke
def test_every_capture_record_fits_the_capture_schema():
    for path in _fixtures():
        for record in _jsonl(path):
            validate("capture", record)
    validate("capture", {"seq": 3, "t": 1.5, "conn": "c1", "dir": "agent->client", "raw": "x", "error": "not JSON"})
    # the connection-close record (optional: older captures have none)
    validate("capture", {"seq": 9, "conn": "c1", "close": {"reason": "eof"}})
    for bad in ({"seq": 1, "conn": "c1", "dir": "sideways", "msg": {}}, {"seq": 1, "dir": "client->agent", "msg": {}},
                {"seq": 1, "conn": "c1", "close": {}, "msg": {}}):
        with pytest.raises(jsonschema.ValidationError):
            validate("capture", bad)


def test_sidecar_events_fit_the_sidecar_schema(tmp_path):
    from acplab.model.trace.sidecar import write_sidecar

    path = tmp_path / "events.jsonl"
    write_sidecar([(4, "work_start", {"session": "sess_1"}),
                   (5, "insert", {"session": "sess_1", "messageId": "msg_u1", "conn": "c1", "request": 2,
                                  "retained": True}),
                   (9, "close", {"conn": "c1"})], path)
    for line in _jsonl(path):
        validate("sidecar", line)
    with pytest.raises(jsonschema.ValidationError):
        validate("sidecar", {"after": 1, "event": "teleport"})


def test_spec_files_and_sweep_configs_fit_their_schemas_and_the_schemas_follow_the_code():
    from acplab.model.acp.specfile import CHOICES, SWITCHES
    from acplab.simulations.params import SimParams

    switches = schema("spec-file")["properties"]["switches"]["properties"]
    assert sorted(switches) == sorted(SWITCHES)
    assert {k: tuple(v["enum"]) for k, v in switches.items() if "enum" in v} == CHOICES
    validate("spec-file", {"name": "ack-at-echo", "base": "rfd", "switches": {"respond_at": "receipt"},
                           "by_design": {"ResponsesFollowInsertion": "the success is a receipt"}})
    with pytest.raises(jsonschema.ValidationError):
        validate("spec-file", {"name": "x", "switches": {"respond_at": "whenever"}})
    base = schema("sweep")["properties"]["base"]["properties"]
    assert sorted(base) == sorted(set(SimParams.__dataclass_fields__) - {"spec", "sessions", "seed"})
    for path in sorted((ROOT / "examples").glob("*.toml")):
        validate("sweep", tomllib.loads(path.read_text()))
    with pytest.raises(jsonschema.ValidationError):
        validate("sweep", {"grid": {"drop": []}})


# -- JUnit and SARIF ------------------------------------------------------------


def _violated_fixture() -> Path:
    return SDK / "v2" / "neg_background_omitted.jsonl"


@pytest.mark.smoke
def test_trace_check_writes_junit_and_sarif_and_never_overwrites(tmp_path):
    junit, sarif = tmp_path / "r.xml", tmp_path / "r.sarif"
    code, out, err = run_cli("trace", "check", str(_violated_fixture()), "--json", "--junit", str(junit),
                             "--sarif", str(sarif))
    assert code == 1, err
    report = json.loads(out)
    suite = ET.parse(junit).getroot().find("testsuite")
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == sorted({v["property"] for v in report["violations"]})
    assert int(suite.get("failures")) == len(failed) and int(suite.get("tests")) == len(list(suite.iter("testcase")))
    assert f"line {report['violations'][0]['line']}" in failed[0].find("failure").text
    log = json.loads(sarif.read_text())
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results
            if r["level"] == "error"] == [(v["property"], v["line"]) for v in report["violations"]]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    # the capture's line really is the offending record
    lines = _violated_fixture().read_bytes().splitlines()
    v = report["violations"][0]
    assert json.loads(lines[v["line"] - 1])["seq"] == v["seq"][-1]
    # an existing file is refused before any work, on one line
    code, _, err = run_cli("trace", "check", str(_violated_fixture()), "--junit", str(junit))
    assert code == 2 and "exists" in err and err.count("\n") == 1


def test_sarif_fits_the_oasis_2_1_0_schema(tmp_path):
    if not SARIF_SCHEMA.exists():
        reason = "tests/js has no @microsoft/jest-sarif (its OASIS SARIF 2.1.0 schema): run `npm ci` in tests/js"
        if os.environ.get("ACPLAB_REQUIRE_NODE") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    official = json.loads(SARIF_SCHEMA.read_text())
    validator = jsonschema.validators.validator_for(official)(official)
    for path in (_violated_fixture(), SDK / "v2" / "neg_double_idle.jsonl", SDK / "v2" / "ok_tool_calls.jsonl"):
        code, out, _ = run_cli("trace", "check", str(path), "--json")
        log = ci_formats.sarif(json.loads(out))
        errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
        assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
