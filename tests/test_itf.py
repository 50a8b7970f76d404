"""ITF traces (the Informal Trace Format of Apalache and Quint): ``check --itf`` writes them, ``trace check`` reads.

No JSON Schema for ITF is published by Apalache or Quint (ADR-015 says so);
``model/schemas/itf.schema.json`` transcribes ADR-015's grammar (``$defs/trace``)
and adds acplab's variables.  The tests validate real output against it, show
the grammar takes the ADR's other forms (sets, maps, tuples, variants), and
round-trip: the ITF's records and events are exactly the ``.jsonl`` and its
sidecar, and ``trace check`` judges both alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from acplab.model.app.schemas import schema
from acplab.model.wire.itf import NONE, itf_value, json_value, wire_of
from cli_harness import run_cli


def _validator(ref: str | None = None):
    """The published schema, or one of its definitions (``trace``: ADR-015's grammar alone)."""
    whole = schema("itf")
    target = whole if ref is None else {"$schema": whole["$schema"], "$defs": whole["$defs"], "$ref": f"#/$defs/{ref}"}
    return jsonschema.Draft202012Validator(target)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def acp_run(tmp_path_factory):
    """A violated check and a witness, with --itf (0.3 s of search at these bounds)."""
    out = tmp_path_factory.mktemp("itf") / "o"
    code, stdout, err = run_cli("check", "--spec", "reused-id", "--clients", "1", "--prompts", "2", "--workers", "1",
                                "--witness", "echo_before_response", "--out", out, "--itf", "--json")
    assert code == 1, err
    return out, json.loads(stdout)


def test_check_itf_writes_a_valid_trace_per_run_listed_in_the_json(acp_run):
    out, data = acp_run
    listed = data["violations"][0]["files"] + data["witnesses"]["files"]["echo_before_response"]
    traces = sorted(p for p in listed if p.endswith(".itf.json"))
    assert [Path(p).name for p in traces] == ["InsertedIdsDistinct.itf.json", "witness-echo_before_response.itf.json"]
    for path in traces:
        trace = json.loads(Path(path).read_text())
        _validator().validate(trace)
        assert trace["#meta"]["format"] == "ITF" and trace["vars"] == ["step", "action", "wire", "internal"]
        assert [s["#meta"]["index"] for s in trace["states"]] == list(range(len(trace["states"])))
    bad = json.loads(Path(traces[0]).read_text())
    bad["states"][0]["wire"][0]["seq"] = 7  # a plain integer: ADR-015 (2023) wants every integer as #bigint
    with pytest.raises(jsonschema.ValidationError):
        _validator().validate(bad)


@pytest.mark.parametrize("name", ["InsertedIdsDistinct", "witness-echo_before_response"])
def test_the_itf_holds_exactly_the_wire_log_and_its_sidecar(acp_run, name):
    out, _data = acp_run
    trace = json.loads((out / f"{name}.itf.json").read_text())
    records, events = wire_of(trace, name)
    assert records == _jsonl(out / f"{name}.jsonl")
    assert [{"after": a, "event": e, **f} for a, e, f in events] == _jsonl(out / f"{name}.events.jsonl")
    assert len(trace["states"]) == 1 + int(trace["#meta"]["description"].split(" in ")[1].split()[0])


def test_trace_check_judges_the_itf_as_the_jsonl(acp_run):
    out, _data = acp_run

    def judged(path):
        code, stdout, err = run_cli("trace", "check", path, "--json")
        data = json.loads(stdout)
        jsonschema.Draft202012Validator(schema("trace-check")).validate(data)
        return code, data["verdict"], data["messages"], [(v["property"], v["seq"], v["line"]) for v in
                                                          data["violations"]], len(data["warnings"])

    itf, jsonl = judged(out / "InsertedIdsDistinct.itf.json"), judged(out / "InsertedIdsDistinct.jsonl")
    assert itf[3] == [(p, seq, None) for p, seq, _line in jsonl[3]]  # the same findings; an ITF has no lines
    assert itf[:3] + itf[4:] == jsonl[:3] + jsonl[4:] and itf[0] == 1 and itf[3][0][0] == "InsertedIdsDistinct"
    assert judged(out / "witness-echo_before_response.itf.json")[:2] == (0, "holds")


def test_the_itf_of_a_counterexample_is_flagged_with_its_own_rule_without_the_jsonl(acp_run, tmp_path):
    out, _data = acp_run
    alone = tmp_path / "alone.itf.json"
    alone.write_bytes((out / "InsertedIdsDistinct.itf.json").read_bytes())
    code, stdout, _ = run_cli("trace", "check", alone, "--json")
    data = json.loads(stdout)
    assert code == 1 and [v["rules"] for v in data["violations"]] == [["P5"]]
    assert data["internal"] == f"{alone} (its internal events)"


@pytest.mark.parametrize("value", [
    None, True, 0, -3, 2**70, 1.5, "#not-a-key", [], {}, [None, [1, {"a": None}]], {"tag": "None", "value": {}},
    {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn", "_meta": None}},
])
def test_values_round_trip(value):
    expr = itf_value(value)
    _validator("expr").validate(expr)
    assert json_value(expr) == value and type(json_value(expr)) is type(value)


def test_itf_has_no_null_so_null_is_quints_empty_option_and_hash_names_are_refused():
    assert itf_value(None) == NONE == {"tag": "None", "value": {"#tup": []}}
    with pytest.raises(ValueError, match=r"msg\.params: the member name '#x'"):
        itf_value({"params": {"#x": 1}})


def test_the_grammar_takes_the_forms_other_tools_write():
    """A trace in every form ADR-015 names (written here, from the ADR's text)."""
    other = {"#meta": {"source": "Bank.qnt"}, "vars": ["balances", "pending", "last"], "loop": 0, "states": [
        {"#meta": {"index": 0}, "balances": {"#map": [["alice", {"#bigint": "-10"}]]},
         "pending": {"#set": [{"#tup": ["alice", 3]}]}, "last": {"tag": "Some", "value": {"#unserializable": "Int"}}}]}
    _validator("trace").validate(other)
    with pytest.raises(jsonschema.ValidationError):
        _validator("trace").validate({**other, "states": [{"#oops": 1}]})


@pytest.mark.parametrize("content, says", [
    ('{"vars": ["x"], "states": [{"x": {"#bigint": "1"}}]}', "not of wire messages: its vars are x"),
    ("[1, 2]", "not an ITF trace (a JSON object with 'vars' and 'states')"),
    ('{"seq": 1', "not an ITF trace: not JSON"),
    ('{"vars": ["wire"], "states": [{"wire": [{"seq": {"#bigint": "1"}}]}]}', "states[0].wire: a record needs"),
    ('{"vars": ["wire"], "states": [{"wire": []}]}', "empty ITF trace"),
])
def test_an_itf_that_is_not_ours_is_one_line_and_exit_2(tmp_path, content, says):
    path = tmp_path / "other.itf.json"
    path.write_text(content)
    code, _out, err = run_cli("trace", "check", path)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_itf_is_refused_upfront_for_twophase_which_has_no_wire():
    code, _out, err = run_cli("check", "--model", "twophase", "--itf")
    assert code == 2 and "--itf does not apply to --model twophase" in err


def test_a_bridge_run_as_itf_is_judged_as_its_jsonl(tmp_path):
    code, stdout, err = run_cli("check", "--model", "bridge-v1-agent", "--spec", "early_ack", "--workers", "1",
                                "--out", tmp_path / "b", "--itf", "--json")
    assert code == 1, err
    files = json.loads(stdout)["violations"][0]["files"]
    itf = next(Path(p) for p in files if p.endswith(".itf.json"))
    trace = json.loads(itf.read_text())
    _validator().validate(trace)
    assert trace["#meta"]["acplab"]["internal"] is False
    assert wire_of(trace, "b")[0] == _jsonl(itf.with_name(itf.name.replace(".itf.json", ".jsonl")))
    verdicts = []
    for path in (itf, itf.with_name(itf.name.replace(".itf.json", ".jsonl"))):
        data = json.loads(run_cli("trace", "check", path, "--json")[1])
        verdicts.append((data["verdict"], data["internal"], [w["property"] for w in data["warnings"]]))
    assert verdicts[0] == verdicts[1]


def test_a_lasso_loops_from_the_state_after_the_one_its_last_step_returns_to(tmp_path):
    """ADR-015: states[loop:] repeat and the last state's successor is states[loop]; a lasso's last state is
    state ``loop_start`` again, so ``loop`` is ``loop_start + 1`` (never-idles without fairness: a lasso)."""
    from acplab.model.acp.model import AcpModel
    from acplab.model.acp.scenarios import SCENARIOS
    from acplab.model.acp.spec import SPECS
    from acplab.model.engine import explore
    from acplab.model.render.artefacts import write_behaviour

    model = AcpModel(SPECS["never-idles"], SCENARIOS["report-order"].bounds)
    model.fairness_class = None
    path = next(v for v in explore(model).violations if v.property.name == "WorkEndsWithIdle").path
    assert path.loop_start is not None and path.states()[-1] == path.states()[path.loop_start]
    about = {"schema_version": 1, "kind": "counterexample", "property": "WorkEndsWithIdle", "rules": ["S2"]}
    write_behaviour(tmp_path / "lasso", model, path.actions_with_effects(), "lasso", ("WorkEndsWithIdle", "x"),
                    ("S2",), loop_start=path.loop_start, itf=about)
    trace = json.loads((tmp_path / "lasso.itf.json").read_text())
    _validator().validate(trace)
    assert trace["loop"] == path.loop_start + 1 < len(trace["states"]) == len(path) + 1
