"""States as data a reader can scan: flattened to ``path: value`` lines, and diffs between two states.

A state is any nesting of NamedTuples, tuples and frozensets over plain
values.  Values print as JSON (``"idle"``, ``null``, ``true``, ``["hi"]``),
wire messages as their protocol label (``session/prompt #1 ["hi"]``), never
as Python reprs.  Paths name NamedTuple fields, and tuple positions as
``[0]``; a caller may name the positions of some tuples instead (the ACP
model's clients ``c1``, ``c2`` and its monitors by name: :func:`world_names`).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from acplab.model import wire

from .labels import describe, describe_update

#: the top-level wire messages: each prints as its label
MESSAGES = (
    wire.NewSession, wire.Prompt, wire.Resume, wire.Close, wire.CancelSession, wire.CancelRequest,
    wire.PermissionResult, wire.RequestPermission, wire.NewSessionResult, wire.ResumeResult, wire.CloseResult,
    wire.PromptResult, wire.PromptResultV1, wire.ErrorResponse, wire.GenericResult, wire.GenericNotification,
    wire.Update,
)
#: session updates outside an ``Update`` envelope (the bridge models log them bare)
UPDATES = (
    wire.UserMessage, wire.AgentMessage, wire.AgentThought, wire.UserMessageChunk, wire.AgentMessageChunk,
    wire.AgentThoughtChunk, wire.StateUpdate, wire.ToolCallUpdate, wire.Notice, wire.UnknownUpdate,
)

Names = dict[str, Callable[[int], str]]


def display(value) -> str:
    """One value in words: JSON for data, the bare protocol label for a message.

    >>> display(("hi", None, True))
    '["hi", null, true]'
    """
    if isinstance(value, MESSAGES):
        return describe(value)
    if isinstance(value, UPDATES):
        return describe_update(value)
    if _record(value):
        return "{" + ", ".join(f"{k}: {display(v)}" for k, v in zip(value._fields, value)) + "}"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(display(v) for v in value) + "]"
    return json.dumps(plain(value), ensure_ascii=False)


def plain(value):
    """``value`` as JSON data (objects for NamedTuples, lists for tuples, labels for messages)."""
    if isinstance(value, MESSAGES):
        return describe(value)
    if isinstance(value, UPDATES):
        return describe_update(value)
    if isinstance(value, wire.ErrorObject):
        return {"code": value.code, "message": value.message}
    if value is wire.NULL:
        return None
    if hasattr(value, "_fields"):
        return {name: plain(v) for name, v in zip(value._fields, value)}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, (frozenset, set)):
        return sorted((plain(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def flatten(value, names: Names | None = None, prefix: str = "") -> dict[str, str]:
    """Every leaf of ``value`` as ``{path: display(leaf)}``; an empty tuple is a leaf ``[]``."""
    names = names or {}
    out: dict[str, str] = {}
    if isinstance(value, MESSAGES + UPDATES) or isinstance(value, wire.ErrorObject):
        out[prefix or "state"] = display(value)
    elif hasattr(value, "_fields"):
        for field, v in zip(value._fields, value):
            out.update(flatten(v, names, f"{prefix}.{field}" if prefix else field))
    elif isinstance(value, tuple) and value:
        label = names.get(prefix)
        for i, v in enumerate(value):
            out.update(flatten(v, names, f"{prefix}.{label(i)}" if label else f"{prefix}[{i}]"))
    else:
        out[prefix or "state"] = display(value)
    return out


def diff(before, after, names: Names | None = None, path: str = "") -> list[str]:
    """What changed from ``before`` to ``after``: one line per changed field, record or value.

    Records (NamedTuples) of one type are compared field by field, tuples of
    records position by position (an added record is one line with all its
    fields); anything else changes as a whole: ``agent.fg: "idle" → "running"``.
    """
    names = names or {}
    if before == after:
        return []
    if _record(before) and _record(after) and type(before) is type(after):
        return [line for field, old, new in zip(after._fields, before, after)
                for line in diff(old, new, names, f"{path}.{field}" if path else field)]
    label = names.get(path)
    if _plain_tuple(before) and _plain_tuple(after) and not label and not (_records(before) and _records(after)):
        if after[:len(before)] == before:
            return [f"{path}: + {display(v)}" for v in after[len(before):]]
        if before[len(before) - len(after):] == after:
            return [f"{path}: − {display(v)}" for v in before[:len(before) - len(after)]]
    if _plain_tuple(before) and _plain_tuple(after) and (label or _records(before) and _records(after)):
        lines = []
        for i in range(max(len(before), len(after))):
            where = f"{path}.{label(i)}" if label else f"{path}[{i}]"
            if i >= len(before):
                lines.append(f"{where}: added {display(after[i])}")
            elif i >= len(after):
                lines.append(f"{where}: removed (was {display(before[i])})")
            else:
                lines += diff(before[i], after[i], names, where)
        return lines
    return [f"{path or 'state'}: {display(before)} → {display(after)}"]


def _record(value) -> bool:
    return hasattr(value, "_fields") and not isinstance(value, MESSAGES + UPDATES + (wire.ErrorObject,))


def _plain_tuple(value) -> bool:
    return isinstance(value, tuple) and not hasattr(value, "_fields")


def _records(value) -> bool:
    """A tuple whose items are records (or tuples of them): compared position by position."""
    return isinstance(value, tuple) and not hasattr(value, "_fields") and all(
        _record(v) or _records(v) for v in value)


def world_names(model) -> Names:
    """Position names for the ACP model's world: clients and links by client, monitors by name."""
    monitors = [m.name for m in getattr(model, "monitors", ())]
    client = lambda i: f"c{i + 1}"  # noqa: E731
    return {"clients": client, "links": client, "agent.attached": client,
            "mon": lambda i: monitors[i] if i < len(monitors) else f"[{i}]"}
