"""The sidecar of internal events (``acplab trace check CAPTURE --internal EVENTS.jsonl``).

An instrumented adapter (or client) writes one JSON object per line, in the
order the events happened::

    {"after": 7, "event": "insert", "session": "sess_1", "messageId": "msg_u1",
     "conn": "c1", "request": 2, "retained": true}

``after`` is the seq of the last capture record before the event (0: before
the first); events with the same ``after`` keep their order.  ``event`` is
one of :data:`EVENTS` (their fields: :mod:`acplab.model.acp.rules.internal`);
``conn`` and ``request`` name a connection and a JSON-RPC id as the capture
does.  Reading is streaming: the checker merges events into the capture as
it goes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from acplab.model.errors import InputError
from acplab.model.wire.sidecar_file import write_sidecar  # noqa: F401 - the one writer, re-exported

#: the internal events the monitors understand (the model's vocabulary); ``close``: a connection ended
EVENTS = ("insert", "assign", "reject", "work_start", "work_end", "fail", "forget", "restart", "execute", "bind",
          "close")


def read_sidecar(path) -> Iterator[tuple[int, str, dict]]:
    """``(after, event, fields)`` per line; a bad line is an :class:`InputError` naming ``FILE:LINE``."""
    name = str(path)
    try:
        f = open(name, "rb")
    except OSError as err:
        raise InputError(f"{name}: cannot read internal events: {err.strerror or err}") from None
    last = 0
    with f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError) as err:
                raise InputError(f"{name}:{lineno}: not a JSON object ({str(err).splitlines()[0][:80]})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{name}:{lineno}: an internal event is a JSON object")
            after, event = obj.get("after"), obj.get("event")
            if not isinstance(after, int) or isinstance(after, bool) or after < last:
                raise InputError(f"{name}:{lineno}: 'after' must be a seq number, not decreasing (got {after!r})")
            if event not in EVENTS:
                raise InputError(f"{name}:{lineno}: unknown event {event!r}; known: {', '.join(EVENTS)}")
            last = after
            fields = {k: v for k, v in obj.items() if k not in ("after", "event")}
            problem = field_problem(fields)
            if problem is not None:
                raise InputError(f"{name}:{lineno}: {event}: {problem}")
            yield after, event, fields


#: the type of each field an event may carry (its meaning: :mod:`acplab.model.acp.rules.internal`)
FIELD_TYPES = {"session": str, "messageId": str, "conn": str, "request": (int, str), "retained": bool,
               "cancelled_by": str, "reason": str, "how": str, "after_insertion": bool, "aborting": bool,
               "background": list, "code": int}
_TYPE_NAMES = {str: "a string", bool: "true or false", int: "an integer", list: "a list", (int, str):
               "an integer or a string"}


def field_problem(fields: dict) -> str | None:
    """Why an event's fields are not of their types (``None`` and unknown fields are allowed), or None."""
    for key, value in fields.items():
        want = FIELD_TYPES.get(key)
        if want is None or value is None:
            continue
        is_bool = isinstance(value, bool)
        if not isinstance(value, want) or (is_bool and want is not bool):
            return f"'{key}' must be {_TYPE_NAMES[want]}, got {json.dumps(value)[:40]}"
        if key == "background" and not all(isinstance(x, str) for x in value):
            return "'background' must be a list of tool call and terminal ids (strings)"
    return None


def sidecar_kinds(path) -> set[str]:
    """The kinds of event a sidecar holds, reading (and validating) it whole: a bad line is an InputError."""
    return {event for _after, event, _fields in read_sidecar(path)}
