"""Fuzz the capture surface: what the recorder stores, and what ``acplab trace check`` reads.

* :func:`jsontext.classify` (the C parser with a fallback) agrees with the
  iterative :func:`jsontext.scan` on JSON-like text of any shape;
* every line :meth:`CaptureWriter.write_line` writes is valid JSON (strict)
  and gives back the exact wire bytes, however the bytes were chunked on
  their way through the :class:`Recorder`;
* ``acplab trace check`` on arbitrary captures keeps the command-line contract.

Fast by default; ``ACPLAB_FUZZ=nightly`` runs 40x the examples (tests/cli_harness.py).
"""

from __future__ import annotations

import base64
import io
import json

import pytest
from hypothesis import given, strategies as st

from acplab.model.trace.record import Recorder
from acplab.model.wire import jsontext
from acplab.model.wire.capture import AGENT_TO_CLIENT, CLIENT_TO_AGENT, CaptureWriter, message_bytes
from cli_harness import contract, fuzz_settings


@pytest.fixture(autouse=True)
def _in_a_temporary_folder(tmp_path, monkeypatch):
    """Default output folders (acplab-out/) land here, not in the project."""
    monkeypatch.chdir(tmp_path)

# -- JSON-ish text -------------------------------------------------------------------------

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
)
NUMBER_TEXT = st.sampled_from(["1E2", "1e400", "-0", "0.5e-3", "9" * 5000, "-1e-400", "01", "1.", ".5", "-", "+1",
                               "NaN", "Infinity", "-Infinity", "0x10", "1e", "٣"])
TOKENS = st.one_of(st.sampled_from(list('{}[],:" \t\r') + ["true", "false", "null", "\\", '\\"', "\\u12", "\\ud800",
                                                          "\x00", "\x1f", "\ufeff", "\u2028", "é"]),
                   NUMBER_TEXT, st.text(max_size=4))


def _containers(inner):
    return st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4))


def json_values():
    return st.recursive(SCALARS, _containers, max_leaves=12)


@st.composite
def json_like_bytes(draw) -> bytes:
    """Valid JSON (in odd spellings), near-misses, deep nesting and plain garbage."""
    kind = draw(st.sampled_from(["valid", "tokens", "deep", "bytes", "spliced"]))
    if kind == "valid":
        value = draw(json_values())
        text = json.dumps(value, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 0, 2])))
        return text.encode("utf-8")
    if kind == "tokens":
        return "".join(draw(st.lists(TOKENS, max_size=30))).encode("utf-8", "surrogatepass")
    if kind == "deep":
        depth = draw(st.integers(1, 3000))
        opener = draw(st.sampled_from(['{"a":', "["]))
        closer = "}" if opener.startswith("{") else "]"
        tail = draw(st.sampled_from(["", closer, "1"]))
        return (opener * depth + "1" + closer * depth + tail).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=40))
    head = json.dumps(draw(json_values())).encode()
    cut = draw(st.integers(0, len(head)))
    return head[:cut] + draw(st.binary(max_size=4)) + head[cut:]


def no_newline(data: bytes) -> bytes:
    return data.replace(b"\n", b" ")


@fuzz_settings(200)
@given(json_like_bytes())
def test_classify_agrees_with_the_iterative_scanner(data):
    kind = jsontext.classify(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        assert kind == jsontext.NOT_UTF8
        return
    top = jsontext.scan(text)
    expected = jsontext.NOT_JSON if top is None else jsontext.OBJECT if top == "{" else jsontext.NOT_OBJECT
    assert kind == expected


def strict_valid(line: bytes) -> bool:
    return jsontext.scan(line.decode("utf-8")) == "{"


@fuzz_settings(80)
@given(st.lists(json_like_bytes().map(no_newline), min_size=1, max_size=6), st.data())
def test_recorded_lines_are_valid_json_and_give_back_the_wire_bytes(lines, data):
    buf = io.BytesIO()
    rec = Recorder(CaptureWriter(buf), clock=lambda: 0.0)
    wire = b"".join(line + b"\n" for line in lines)
    direction = data.draw(st.sampled_from([CLIENT_TO_AGENT, AGENT_TO_CLIENT]))
    pos = 0
    while pos < len(wire):  # any chunking of the stream
        step = data.draw(st.integers(1, max(1, len(wire) - pos)))
        rec.commit(rec.reserve(direction, wire[pos:pos + step]))
        pos += step
    rec.close()
    assert rec.failed is None
    recorded = buf.getvalue().split(b"\n")
    assert recorded[-1] == b""
    kept = [line for line in lines if line.strip()]  # blank lines are relayed, not recorded
    assert len(recorded) - 1 == len(kept)
    for line, wire_line in zip(recorded, kept):
        assert strict_valid(line)
        assert restored(line) == wire_line


def restored(line: bytes) -> bytes:
    """The wire bytes a capture line stands for."""
    header = json.loads(line[: line.find(b',"msg":')] + b"}") if b',"msg":' in line else json.loads(line)
    if "raw_base64" in header:
        return base64.b64decode(header["raw_base64"])
    if "raw" in header:
        return header["raw"].encode("utf-8")
    return message_bytes(line)


# -- trace check on arbitrary captures ---------------------------------------------------------

METHODS = st.sampled_from(["session/prompt", "session/update", "session/new", "session/resume", "session/cancel",
                           "session/close", "initialize", "x/\u001b[31m", "", "session/request_permission"])
IDS = st.one_of(st.integers(-3, 5), st.text(max_size=3), st.none(), st.booleans(), st.just(10 ** 30),
                st.floats(allow_nan=False, allow_infinity=False))


@st.composite
def messages(draw) -> bytes:
    msg = {"jsonrpc": draw(st.sampled_from(["2.0", "1.0", 2]))}
    if draw(st.booleans()):
        msg["id"] = draw(IDS)
    shape = draw(st.sampled_from(["request", "result", "error", "odd"]))
    if shape == "request":
        msg["method"] = draw(METHODS)
        msg["params"] = draw(st.one_of(json_values(), st.fixed_dictionaries(
            {"sessionId": st.sampled_from(["s1", "s2"]),
             "prompt": st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=6)}),
                                max_size=2)},
            optional={"messageId": st.text(max_size=4),
                      "update": st.fixed_dictionaries({"sessionUpdate": st.sampled_from(
                          ["user_message_chunk", "agent_message_chunk", "state_update", "user_message", "bogus"])},
                          optional={"state": st.sampled_from(["idle", "running", "requires_action", "x"]),
                                    "messageId": st.text(max_size=3), "stopReason": st.text(max_size=8)})})))
    elif shape == "result":
        msg["result"] = draw(st.one_of(json_values(), st.fixed_dictionaries(
            {}, optional={"messageId": st.text(max_size=3), "stopReason": st.sampled_from(["end_turn", "x"])})))
    elif shape == "error":
        msg["error"] = draw(st.one_of(json_values(), st.fixed_dictionaries({"code": st.integers(), "message": st.text()})))
    else:
        msg.update(draw(st.dictionaries(st.text(max_size=6), json_values(), max_size=3)))
    text = json.dumps(msg)
    if draw(st.integers(0, 9)) == 0:  # numbers only text can spell
        text = text.replace("}", ',"n":1e400}', 1)
    return text.encode()


@st.composite
def capture_lines(draw) -> bytes:
    seq = draw(st.integers(-1, 40))
    conn = draw(st.sampled_from(["c1", "c2", "c1.1", "c1.2", "c\n\u001b[2J", "\u202e", "x" * 50]))
    direction = draw(st.sampled_from([CLIENT_TO_AGENT, AGENT_TO_CLIENT, "sideways"]))
    kind = draw(st.sampled_from(["msg", "msg", "msg", "raw", "garbage", "deep", "badfield"]))
    head = json.dumps({"seq": seq, "t": draw(st.sampled_from([0.5, 1, "x"])), "conn": conn, "dir": direction})[:-1]
    if kind == "msg":
        return head.encode() + b', "msg": ' + draw(messages()) + b"}"
    if kind == "raw":
        return (head + ', "raw": ' + json.dumps(draw(st.text(max_size=10))) + ', "error": "not JSON"}').encode()
    if kind == "deep":
        depth = draw(st.integers(500, 5000))
        return head.encode() + b', "msg": ' + b'{"a":' * depth + b"1" + b"}" * depth + b"}"
    if kind == "badfield":
        return (head + ', "msg": ' + draw(st.sampled_from(["[]", "1", "NaN", '"x"', "{", "1e400"])) + "}").encode()
    return draw(st.binary(max_size=30)).replace(b"\n", b"")


@fuzz_settings(60)
@given(st.lists(capture_lines(), max_size=12), st.booleans(), st.sampled_from(["rfd", "v1", "v2-draft", "nope"]),
       st.booleans())
def test_trace_check_keeps_the_contract_on_any_capture(tmp_path_factory, lines, as_json, spec, with_out):
    folder = tmp_path_factory.mktemp("fuzz-trace")
    path = folder / "cap.jsonl"
    path.write_bytes(b"\n".join(sorted_by_seq(lines)) + b"\n")
    args = ["trace", "check", str(path), "--spec", spec] + (["--json"] if as_json else [])
    if with_out:
        args += ["--out", str(folder / "out")]
    code, out, err, obj = contract(*args)
    assert code in (0, 1, 2)
    if code != 2:
        assert "\u001b" not in out  # capture text is escaped for the terminal


def sorted_by_seq(lines: list[bytes]) -> list[bytes]:
    """Mostly in seq order (so checking goes past the first lines), as a recorder writes them."""
    def seq(line: bytes) -> int:
        try:
            return int(json.loads(line[: line.find(b', "')] + b"}")["seq"])
        except (ValueError, KeyError, TypeError):
            return 0
    return sorted(lines, key=seq)
