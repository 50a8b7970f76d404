"""The capture reader's fast path (:func:`jsontext.canonical`) reads exactly what the strict reading reads.

On generated lines (compact and spaced encodings, repeated member names,
``NaN`` / ``Infinity``, numbers of any size, lone surrogates and other
escapes, non-UTF-8 bytes, deep nesting):

* whenever the fast path gives a value, the strict reading (the trace
  checker's, which notes repeated member names) gives the same value, of
  the same types, and notes no repeated name;
* whenever the strict reading refuses a line, notes a repeated name or
  recurses too deep, the fast path gives nothing;
* compact lines of ordinary values do take the fast path (else it is no
  fast path);
* the capture reader and ``acplab trace check`` give the same records,
  errors and results with the fast path as without it (it switched off by
  patching ``jsontext.canonical``), on generated captures and on every
  capture under tests/fixtures.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, strategies as st

from acplab.model.trace.check import TraceChecker, _Loads, check_capture, get_trace_spec
from acplab.model.wire import jsontext
from acplab.model.wire.capture import iter_capture_lenient, loads_strict
from cli_harness import fuzz_settings

FIXTURES = Path(__file__).parent / "fixtures"


def same(a, b) -> bool:
    """Equal values of equal types (``1``, ``1.0`` and ``True`` differ; floats by ``repr``), key order too.

    Iterative: the values may be nested deeper than Python recurses.
    """
    stack = [(a, b)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, dict):
            if list(a) != list(b):
                return False
            stack.extend((a[k], b[k]) for k in a)
        elif isinstance(a, list):
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b))
        elif repr(a) != repr(b) if isinstance(a, float) else a != b:
            return False
    return True


# -- lines ------------------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "id", "é", "\\u0061", "\\/", "\\ud800", "x y"])  # as written (JSON escapes)
NUMBERS = st.one_of(
    st.integers().map(str),
    st.integers(1, 5000).map(lambda n: "9" * n),  # past the 4,300-digit limit too
    st.sampled_from(["1E2", "1e400", "-1e400", "1e-400", "1.7976931348623157e308", "1.8e308", "-0", "-0.0", "0.5",
                     "1e+16", "1e16", "1e-07", "1e-7", "18446744073709551616", "5e-324", "123456.789", "1.0"]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
STRINGS = st.one_of(
    st.text(max_size=6).map(lambda s: json.dumps(s, ensure_ascii=False)),
    st.text(max_size=6).map(json.dumps),
    st.sampled_from(['"\\ud800"', '"\\udc00\\ud800"', '"\\ud83d\\ude00"', '"\\u00e9"', '"é"', '"\\/"', '"\\u001F"',
                     '"\\u001f"', '"\\u007f"', '"\x7f"', '"\\b\\f\\n\\r\\t"', '"\\""', '"\\\\"']),
)
LITERALS = st.sampled_from(["true", "false", "null", "NaN", "Infinity", "-Infinity"])


def _containers(inner):
    members = st.lists(st.tuples(KEYS, inner), max_size=4)  # few names: repeats are common
    return st.one_of(
        st.lists(inner, max_size=4).map(lambda xs: "[" + ",".join(xs) + "]"),
        members.map(lambda ms: "{" + ",".join(f'"{k}":{v}' for k, v in ms) + "}"),
    )


JSON_TEXT = st.recursive(st.one_of(NUMBERS, STRINGS, LITERALS), _containers, max_leaves=10)
ORDINARY = st.recursive(  # values compact encoders write the same way as msgspec (floats without an exponent)
    st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1), st.text(max_size=8),
              st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: "e" not in repr(f))),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=12)


@st.composite
def lines(draw) -> bytes:
    """A capture-line candidate: JSON text of any odd spelling, spaced, spliced with bytes, or deeply nested."""
    kind = draw(st.sampled_from(["text", "object", "spaced", "dumped", "deep", "spliced"]))
    if kind == "deep":
        depth = draw(st.integers(1, 1200))
        opener, closer = draw(st.sampled_from([('{"a":', "}"), ("[", "]")]))
        data = (opener * depth + "1" + closer * depth).encode()
    elif kind == "dumped":
        value = draw(ORDINARY)
        data = json.dumps({"seq": 1, "msg": value}, ensure_ascii=draw(st.booleans()),
                          separators=draw(st.sampled_from([(",", ":"), (", ", ": ")]))).encode()
    else:
        text = draw(JSON_TEXT)
        if kind == "object":
            text = '{"seq":1,"msg":' + text + "}"
        elif kind == "spaced":
            text = " " + text.replace(",", ", ").replace(":", " : ") + "\r"
        data = text.encode("utf-8", "surrogatepass")
        if kind == "spliced":
            cut = draw(st.integers(0, len(data)))
            data = data[:cut] + draw(st.binary(min_size=1, max_size=3)) + data[cut:]
    return data.replace(b"\n", b" ") + draw(st.sampled_from([b"", b"\n"]))


def strict(line: bytes):
    """The strict reading: ``("value", v)``, ``("repeated", names)`` or ``("refused", why)``."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return "refused", "not UTF-8"
    loads = _Loads()
    try:
        value = loads(text)
    except (ValueError, RecursionError) as err:
        return "refused", type(err).__name__
    repeated = loads.take()
    return ("repeated", repeated) if repeated else ("value", value)


@fuzz_settings(400)
@given(lines())
def test_the_fast_path_reads_what_the_strict_reading_reads(line):
    fast = jsontext.canonical(line)
    kind, got = strict(line)
    if kind != "value":
        assert fast is None, (kind, got)
    elif fast is not None:
        assert same(fast, got)
        assert same(fast, loads_strict(line))


@fuzz_settings(200)
@given(ORDINARY, st.booleans())
def test_compact_lines_of_ordinary_values_take_the_fast_path(value, newline):
    line = json.dumps({"seq": 1, "conn": "c1", "msg": value}, ensure_ascii=False, separators=(",", ":")).encode()
    fast = jsontext.canonical(line + b"\n" if newline else line)
    assert fast is not None and same(fast, json.loads(line))


@pytest.mark.parametrize("line", [b'{"a":1,"a":2}', b'{"a":{"b":1,"b":1}}', b'{"a":1,"\\u0061":1}', b'{"a":NaN}',
                                  b'{"a":Infinity}', b'{"a":1e400}', b'{"a":"\\ud800"}', b'{"a":"\xff"}',
                                  b'{"a":' + b"9" * 4400 + b"}", b'{"a": 1}', b'{"a":1}\r\n', b"[" * 401 + b"]" * 401])
def test_lines_the_strict_reading_must_see_are_not_taken(line):
    assert jsontext.canonical(line) is None


def test_the_depth_guard_is_far_below_the_strict_readings_limit():
    """MAX_BRACKETS levels read strictly from well inside the stack, so no line under the guard could recurse there."""
    depth = jsontext.MAX_BRACKETS
    assert depth * 2 < 1000
    line = (b'{"a":' * depth + b"1" + b"}" * depth)
    assert strict(line)[0] == "value" and jsontext.canonical(line) is not None


def test_near_the_strict_readings_depth_limit_the_fast_path_defers():
    """Where the two parsers' depth limits differ (by a few levels), the line is read strictly."""
    differ = 0
    for depth in range(jsontext.MAX_BRACKETS + 1, 1100):
        line = b'{"a":' * depth + b"1" + b"}" * depth
        assert jsontext.canonical(line) is None
        try:
            msgspec.json.decode(line)
            differ += strict(line)[0] == "refused"
        except RecursionError:
            pass
    assert differ > 0  # msgspec alone would read lines the strict reading finds too deep


# -- the reader and the checker, with and without the fast path ----------------------------

def _records(data: bytes, checker_loads: bool):
    """What the capture reader yields for ``data``: records as JSON, errors as text, with repeated names."""
    loads = _Loads() if checker_loads else None
    out = []
    for item in iter_capture_lenient(io.BytesIO(data), loads=loads):
        repeated = loads.take() if loads is not None else []
        out.append(str(item) if isinstance(item, Exception) else (item.to_json(), item.source, item.line, repeated))
    return out


def _agree(a, b) -> bool:
    return len(a) == len(b) and all(x == y if isinstance(x, str) else
                                    (same(x[0], y[0]) and x[1:] == y[1:]) for x, y in zip(a, b))


@fuzz_settings(150)
@given(st.lists(st.one_of(lines(), st.just(b"")), max_size=8), st.booleans(), st.data())
def test_the_reader_yields_the_same_with_and_without_the_fast_path(bodies, checker_loads, data):
    capture = b""
    for seq, body in enumerate(bodies, 1):
        body = body.rstrip(b"\n")
        if body and data.draw(st.booleans()):  # as a message of a record (the usual line), else the line itself
            body = (f'{{"seq":{seq},"t":{seq / 2},"conn":"c1","dir":"agent->client","msg":').encode() + body + b"}"
        capture += body + b"\n"
    fast = _records(capture, checker_loads)
    patch = pytest.MonkeyPatch()
    with patch.context() as m:
        m.setattr(jsontext, "canonical", lambda line: None)
        slow = _records(capture, checker_loads)
    assert _agree(fast, slow)


def _result(path):
    got = check_capture(path).to_json()
    got.pop("seconds")
    return got


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.jsonl")), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_trace_check_gives_the_same_result_without_the_fast_path(path, monkeypatch):
    try:
        fast = _result(path)
    except Exception as err:  # noqa: BLE001 - a fixture that is not a capture (a sidecar): the same refusal
        fast = f"{type(err).__name__}: {err}"
    monkeypatch.setattr(jsontext, "canonical", lambda line: None)
    try:
        slow = _result(path)
    except Exception as err:  # noqa: BLE001
        slow = f"{type(err).__name__}: {err}"
    assert fast == slow


def test_most_fixture_lines_take_the_fast_path():
    """The fixtures are what captures look like: most of their lines are canonical (else the path buys nothing)."""
    taken = total = 0
    for path in FIXTURES.rglob("*.jsonl"):
        for line in path.read_bytes().splitlines(keepends=True):
            total += 1
            taken += jsontext.canonical(line) is not None
    assert total > 100 and taken > total * 0.8, (taken, total)


def test_the_checker_reads_a_capture_line_with_a_repeat_as_before(tmp_path):
    """A canonical-looking record whose message repeats a member name still reaches the checker as repeated."""
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"seq":1,"conn":"c1","dir":"client->agent","msg":{"jsonrpc":"2.0","id":1,"id":2,'
                     b'"method":"initialize","params":{"protocolVersion":2}}}\n')
    spec = get_trace_spec("rfd")
    (item, repeated), = TraceChecker(spec, spec.switches, False, False).read(str(path))
    assert repeated == ["id"] and item.msg["id"] == 2
