"""The Informal Trace Format (ITF) of Apalache and Quint, for acplab's wire logs: values, traces, both ways.

ITF (Apalache ADR-015, "Informal Trace Format in JSON"; files end in
``.itf.json``) is a JSON object ``{"#meta", "vars", "states", ["params",
"loop"]}``; each state maps every name in ``vars`` to an ITF expression.
A JSON-RPC message becomes an expression as ADR-015 writes values:

* strings and booleans as themselves, lists as lists, objects as records;
* every integer as ``{"#bigint": "DIGITS"}`` (ADR-015: big and small
  integers *must* be written so);
* ``null`` as Quint's empty option, the variant ``{"tag": "None", "value":
  {"#tup": []}}``: ITF has no null, and no JSON object encodes to a
  ``#tup``, so reading it back is unambiguous;
* a float (none of the model's messages has one) as
  ``{"#unserializable": "REPR"}``: ITF has no floats; read back as the float.

Reading (:func:`json_value`) also takes what other writers emit: plain
JSON integers, ``#tup`` and ``#set`` as lists, a ``#map`` with string keys as
an object.  A record member starting with ``#`` cannot be written (ADR-015
reserves those names): :func:`itf_value` raises ``ValueError`` naming it.

acplab's traces (:data:`VARS`, written by ``check --itf``): state 0 is the
conversation's opening (the preamble that makes the wire log complete),
state N the Nth step of the run: ``step`` its number, ``action`` the step in
protocol words, ``wire`` the capture records it sent (``seq``, ``conn``,
``dir``, ``msg``; ``t`` in the state's ``#meta``, since ITF has no floats),
``internal`` the sidecar events it made (``after``, ``event`` and their
fields).  The trace's ``#meta`` has ``format``, ``format-description``,
``source``, ``description`` and an ``acplab`` object (``schema_version``,
``kind``, ``property``, ``rules``, ``internal``).  A lasso's ``loop`` is
the index of the first state of the part that repeats forever (ADR-015:
the last state's successor is ``states[loop]``; see :mod:`acplab.model.render.itf`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
#: the variables of every state of an acplab trace
VARS = ("step", "action", "wire", "internal")
#: the members of a wire record in a state (``t`` goes to the state's #meta)
RECORD_KEYS = ("seq", "conn", "dir", "msg")
NONE = {"tag": "None", "value": {"#tup": []}}


def itf_value(value: Any, where: str = "msg") -> Any:
    """The ITF expression of a JSON value (see the module's rules); ``where`` names it in errors."""
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if value is None:
        return {"tag": "None", "value": {"#tup": []}}  # == NONE, a fresh copy
    if isinstance(value, float):
        return {"#unserializable": repr(value)}
    if isinstance(value, list):
        return [itf_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        bad = next((k for k in value if k.startswith("#")), None)
        if bad is not None:
            raise ValueError(f"{where}: the member name {bad!r} starts with '#', which ITF reserves")
        return {k: itf_value(v, f"{where}.{k}") for k, v in value.items()}
    raise ValueError(f"{where}: {type(value).__name__} is not a JSON value")


def json_value(expr: Any, where: str = "msg") -> Any:
    """The JSON value of an ITF expression (the inverse of :func:`itf_value`); ``ValueError`` names a bad one."""
    if isinstance(expr, (bool, str)) or (isinstance(expr, int) and not isinstance(expr, bool)):
        return expr
    if isinstance(expr, list):
        return [json_value(v, f"{where}[{i}]") for i, v in enumerate(expr)]
    if not isinstance(expr, dict):
        raise ValueError(f"{where}: {_kind(expr)} is not an ITF expression")
    if expr == NONE:
        return None
    if len(expr) == 1:
        (key, inner), = expr.items()
        if key in _TAGGED:
            return _TAGGED[key](inner, where)
    bad = next((k for k in expr if k.startswith("#")), None)
    if bad is not None:
        raise ValueError(f"{where}: {bad!r} is not an ITF expression form here")
    return {k: json_value(v, f"{where}.{k}") for k, v in expr.items()}


def _bigint(text, where: str) -> int:
    if not isinstance(text, str) or not text.lstrip("-").isdigit() or not text.isascii():
        raise ValueError(f"{where}: #bigint must be a string of digits, got {_kind(text)}")
    return int(text)


def _items(inner, where: str) -> list:
    if not isinstance(inner, list):
        raise ValueError(f"{where}: expected a list, got {_kind(inner)}")
    return [json_value(v, f"{where}[{i}]") for i, v in enumerate(inner)]


def _map(inner, where: str) -> dict:
    pairs = _items(inner, where)
    if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
        raise ValueError(f"{where}: a #map read as a JSON object needs [string key, value] pairs")
    return {k: v for k, v in pairs}


def _float(text, where: str) -> float:
    try:
        number = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: #unserializable {_kind(text)} is not a number acplab wrote") from None
    if not math.isfinite(number):
        raise ValueError(f"{where}: #unserializable {text!r} is not a JSON number")
    return number


_TAGGED = {"#bigint": _bigint, "#tup": _items, "#set": _items, "#map": _map, "#unserializable": _float}


def _kind(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:40]}"


def itf_trace(meta: dict, states: Iterable[dict], loop: int | None = None) -> dict:
    """An ITF trace of acplab's :data:`VARS`: ``states`` are ``{step, action, wire, internal, t}`` in JSON terms.

    ``wire`` holds capture records (``t`` of the first one, if any, goes to
    the state's ``#meta``), ``internal`` sidecar triples ``(after, event, fields)``.
    """
    out_states = []
    for index, s in enumerate(states):
        state_meta: dict[str, Any] = {"index": index}
        times = {r["t"] for r in s["wire"] if r.get("t") is not None}
        if times:
            state_meta["t"] = min(times)
        out_states.append({
            "#meta": state_meta,
            "step": itf_value(s["step"], "step"),
            "action": s["action"],
            "wire": [itf_value({k: r[k] for k in RECORD_KEYS}, f"states[{index}].wire") for r in s["wire"]],
            "internal": [itf_value({"after": a, "event": e, **f}, f"states[{index}].internal")
                         for a, e, f in s["internal"]],
        })
    trace: dict[str, Any] = {"#meta": {"format": "ITF", "format-description": FORMAT_DESCRIPTION, **meta},
                             "vars": list(VARS), "states": out_states}
    if loop is not None:
        trace["loop"] = loop
    return trace


def wire_of(trace: dict, name: str) -> tuple[list[dict], list[tuple[int, str, dict]]]:
    """The capture records and sidecar triples of an acplab ITF trace; ``ValueError`` (one line) otherwise.

    ``name`` names the file in the message.  A record's ``t`` is its state's ``#meta.t`` when given.
    """
    if not isinstance(trace, dict) or not isinstance(trace.get("states"), list) or "vars" not in trace:
        raise ValueError(f"{name}: not an ITF trace (a JSON object with 'vars' and 'states')")
    missing = [v for v in ("wire",) if v not in trace["vars"]]
    if missing:
        shown = ", ".join(map(str, trace["vars"]))[:80] or "none"
        raise ValueError(f"{name}: an ITF trace, but not of wire messages: its vars are {shown}; acplab reads "
                         "traces with a 'wire' variable of capture records (as `acplab check --itf` writes)")
    records: list[dict] = []
    internal: list[tuple[int, str, dict]] = []
    for index, state in enumerate(trace["states"]):
        where = f"{name}: states[{index}]"
        if not isinstance(state, dict):
            raise ValueError(f"{where} is not a JSON object")
        found = state.get("#meta")
        meta = found if isinstance(found, dict) else {}
        for rec in _list(state, "wire", where):
            records.append(_record(rec, meta.get("t"), where))
        for ev in _list(state, "internal", where, required=False):
            internal.append(_event(ev, where))
    return records, internal


def _list(state: dict, var: str, where: str, required: bool = True) -> list:
    if var not in state:
        if required:
            raise ValueError(f"{where} has no '{var}'")
        return []
    value = json_value(state[var], f"{where}.{var}")
    if not isinstance(value, list):
        raise ValueError(f"{where}.{var} is not a list")
    return value


def _record(rec, t, where: str) -> dict:
    if not isinstance(rec, dict) or any(k not in rec for k in RECORD_KEYS):
        raise ValueError(f"{where}.wire: a record needs {', '.join(RECORD_KEYS)}")
    out = {"seq": rec["seq"]}
    if isinstance(t, (int, float)) and not isinstance(t, bool):
        out["t"] = float(t)
    return {**out, "conn": rec["conn"], "dir": rec["dir"], "msg": rec["msg"]}


def _event(ev, where: str) -> tuple[int, str, dict]:
    if not isinstance(ev, dict) or not isinstance(ev.get("after"), int) or not isinstance(ev.get("event"), str):
        raise ValueError(f"{where}.internal: an event needs 'after' (a seq) and 'event'")
    return ev["after"], ev["event"], {k: v for k, v in ev.items() if k not in ("after", "event")}


def capture_lines(records: Iterable[dict]) -> Iterator[bytes]:
    """Each record as one capture line (JSON, UTF-8, newline-terminated)."""
    for rec in records:
        yield (json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
