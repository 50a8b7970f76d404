"""One reading of the wire: renderers read captures through the trace checker's front end, and a written
counterexample encodes each of its messages once."""

from __future__ import annotations

import json

from acplab.model.acp.rule_monitor import Switches
from acplab.model.acp.wire_reading import message_of, read_records
from acplab.model.wire import PromptResult
from acplab.model.wire.capture import CaptureRecord


def _rec(seq, direction, msg, conn="c1"):
    return CaptureRecord(seq=seq, t=0.0, conn=conn, dir=direction, msg=msg)


def test_a_response_is_paired_per_connection_and_decoded_as_the_answer_to_its_request():
    prompt = {"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
              "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}}
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"messageId": "m1"}}
    records = [_rec(1, "client->agent", prompt), _rec(2, "agent->client", answer, conn="c2"),
               _rec(3, "agent->client", answer)]
    read = [o for _rec_, o in read_records(records, Switches())]
    assert [o.answers for o in read] == [None, None, "session/prompt"]  # c2 never asked: "res:?"
    assert "res:?" in read[1].keys
    assert message_of(read[2]) == PromptResult(1, "m1")


def test_a_counterexample_with_its_report_encodes_each_message_once(tmp_path, monkeypatch):
    from acplab.model import wire
    from acplab.model.acp import rules_in_model
    from acplab.model.app.cli import main

    encoded = []
    original = wire.encode
    monkeypatch.setattr(wire, "encode", lambda msg: encoded.append(msg) or original(msg))  # what renderers call
    monkeypatch.setattr(rules_in_model, "encode", original)  # the explorer's own reading is not counted here
    from acplab.model.render import runview

    monkeypatch.setattr(runview, "sequence_svg", lambda *a, **k: "")  # the picture encodes nothing; it costs seconds
    try:
        main(["check", "--spec", "early-success", "--out", str(tmp_path / "out"), "--html", "-q", "--workers", "1"])
    except SystemExit as done:
        assert done.code == 1
    [capture] = [p for p in (tmp_path / "out").rglob("*.jsonl") if not p.name.endswith(".events.jsonl")]
    behaviour = [r for r in map(json.loads, capture.read_text().splitlines()) if r["t"] > 0]  # past the preamble
    assert (tmp_path / "out" / "report.html").exists()
    assert behaviour and len(encoded) == len(behaviour)  # its files and its report page share one encoding
