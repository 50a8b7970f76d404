"""Mermaid text: sequence diagrams of a path and state diagrams of a quotient graph.

Pure functions of a path (steps with their events) or of a projected graph;
the output is drop-in for the ACP docs, which use Mermaid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acplab.model.acp.events import A2C, C2A
from acplab.model import wire
from acplab.model.wire.capture import CaptureRecord, conn_label
from acplab.model.wire.pairing import MODELLED_REQUESTS, RequestTracker, usable_id

from .flow import in_flight
from .labels import describe, describe_event

if TYPE_CHECKING:
    from .stategraph import Quotient


def mermaid(steps, clients: int, title: str = "", violation: tuple[str, str] | None = None, rules=(),
            loop_start: int | None = None) -> str:
    """A Mermaid ``sequenceDiagram``: arrows at delivery, crosses for lost messages, notes for internals.

    ``loop_start`` (a lasso) puts the steps that repeat forever in a ``loop`` block.
    """
    lines = ["sequenceDiagram"]
    if title:
        lines.insert(0, f"---\ntitle: {_escape(title)}\n---")
    for c in range(clients):
        lines.append(f"    participant C{c + 1} as client c{c + 1}")
    lines.append("    participant A as agent (adapter + runtime)")
    for n, (_action, events) in enumerate(steps):
        if loop_start is not None and n == loop_start:
            lines.append("    loop repeats forever")
            span = f"step {n + 1} repeats" if n + 1 == len(steps) else f"steps {n + 1}-{len(steps)} repeat"
            lines.append(f"    Note over A: {span}")
        for e in events:
            line = _mermaid_event(e)
            if line:
                lines.append("    " + line)
    if loop_start is not None and loop_start < len(steps):
        lines.append("    end")
    for (conn, direction), msg in in_flight(steps):
        c = f"C{conn[0] + 1}"
        label = _escape(describe(msg)) + " (in flight)"
        lines.append(f"    {c}-)A: {label}" if direction == C2A else f"    A-){c}: {label}")
    if violation is not None:
        name, sentence = violation
        span = "C1,A" if clients else "A"
        lines.append("    rect rgb(255, 220, 220)")
        lines.append(f"    Note over {span}: ✗ {_escape(name)} [{_escape(', '.join(rules))}]: {_escape(sentence)}")
        lines.append("    end")
    return "\n".join(lines) + "\n"


def _mermaid_event(e) -> str | None:
    k = e.kind
    if k == "deliver":
        c = f"C{e.conn[0] + 1}"
        label = _escape(describe(e.msg))
        return f"{c}->>A: {label}" if e.dir == C2A else f"A-->>{c}: {label}"
    if k == "drop":
        c = f"C{e.conn[0] + 1}"
        label = _escape(describe(e.msg)) + " (dropped)"
        return f"{c}-xA: {label}" if e.dir == C2A else f"A--x{c}: {label}"
    if k == "send" and e.lost:
        c = f"C{e.conn[0] + 1}"
        return f"A--x{c}: {_escape(describe(e.msg))} (connection closed)" if e.dir == A2C else None
    if k == "cut":
        return f"Note over C{e.conn[0] + 1},A: connection {conn_label(e.conn)} cut"
    if k == "connect":
        return f"Note over C{e.conn[0] + 1},A: connection {conn_label(e.conn)} opened"
    if k in ("insert", "reject", "fail", "work_end", "execute", "restart") or (k == "replayed" and e.original != e.sent):
        return f"Note over A: {_escape(describe_event(e).replace('[internal] ', ''))}"
    if k == "bind":
        return f"Note over C{e.client + 1}: {_escape(describe_event(e).replace('[internal] ', ''))}"
    return None


def _escape(text: str) -> str:
    """Mermaid message text: hashes and semicolons as entity codes, no line breaks."""
    return text.translate(_MERMAID_ESCAPES)


_MERMAID_ESCAPES = str.maketrans({"#": "#35;", ";": "#59;", "\n": " "})


# -- state diagrams ------------------------------------------------------------


def _sid(name: str) -> str:
    return name.replace(" ", "_")


def mermaid_states(q: Quotient) -> str:
    """Mermaid ``stateDiagram-v2``: one transition line per projected edge, labels joined by commas."""
    lines = []
    if q.title:
        lines += ["---", f"title: {_escape_state_label(q.title)}", "---"]
    lines.append("stateDiagram-v2")
    for s in q.states:
        if _sid(s) != s:
            lines.append(f"    state \"{s}\" as {_sid(s)}")
    lines.append(f"    [*] --> {_sid(q.initial)}")
    for (a, b), labels in q.edges.items():
        lines.append(f"    {_sid(a)} --> {_sid(b)}: {_escape_state_label(', '.join(labels))}")
    for note in q.notes:
        lines.append(f"    note right of {_sid(q.initial)}: {_escape_state_label(note)}")
    return "\n".join(lines) + "\n"


def _escape_state_label(text: str) -> str:
    return text.replace(";", "#59;").replace("#", "#35;") if ";" in text or "#" in text else text


# -- windows of recorded traffic ------------------------------------------------------------


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _capture_label(rec: CaptureRecord, requests: RequestTracker, version: str = "v2") -> str:
    """A diagram label; ``requests`` pairs responses with the requests seen in the window."""
    if rec.msg is None:
        return "(not JSON)"
    try:
        method = rec.msg.get("method")
        rid = rec.msg.get("id")
        hashable = usable_id(rid)
        if isinstance(method, str) and hashable:
            requests.request(rec.conn, rec.dir, rid, method)
        response_to = None
        if method is None and hashable:
            response_to = requests.response(rec.conn, rec.dir, rid)
        if isinstance(method, str) and method not in MODELLED_REQUESTS and hashable:
            return f"{method} #{rid}"
        if response_to is not None and response_to not in MODELLED_REQUESTS:
            return f"{response_to} result #{rid}"
        text = describe(wire.decode(rec.msg, response_to=response_to, version=version))
    except Exception:  # noqa: BLE001 - a label only; the violation itself says what is wrong
        rid = rec.msg.get("id")
        text = f"response #{rid}" if "method" not in rec.msg else str(rec.msg.get("method"))
    return _clip(text, 80)


def capture_window(window, name: str, rules, seqs, explanation: str, version: str = "v2") -> str:
    """A Mermaid sequenceDiagram of capture records around a violation; the records at ``seqs`` are marked."""
    lines = ["---", f"title: {_escape(name)} [{_escape(', '.join(rules))}] at seq "
             f"{', '.join(map(str, seqs))}", "---", "sequenceDiagram"]
    ids: dict[str, str] = {}
    for rec in window:
        if rec.conn not in ids:
            ids[rec.conn] = f"C{len(ids) + 1}"
            lines.append(f"    participant {ids[rec.conn]} as client {_escape(_clip(rec.conn, 30))}")
    lines.append("    participant A as agent")
    offending = set(seqs)
    requests = RequestTracker()
    for rec in window:
        c = ids[rec.conn]
        mark = "✗ " if rec.seq in offending else ""
        label = _escape(f"{mark}{rec.seq}: {_capture_label(rec, requests, version)}")
        lines.append(f"    {c}->>A: {label}" if rec.dir == C2A else f"    A-->>{c}: {label}")
    span = f"{next(iter(ids.values()))},A" if ids else "A"
    lines += ["    rect rgb(255, 220, 220)",
              f"    Note over {span}: ✗ {_escape(name)}: {_escape(_clip(explanation, 200))}",
              "    end"]
    return "\n".join(lines) + "\n"
