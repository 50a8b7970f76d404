"""Mermaid text: sequence diagrams of a path and state diagrams of a quotient graph.

Pure functions of a path (steps with their events) or of a projected graph;
the output is drop-in for the ACP docs, which use Mermaid, and every file is
checked by Mermaid 11's own parser in the tests (``tests/js``).

Text goes through the one :func:`escape` (and titles through
:func:`front_matter`), which follow what Mermaid 11 does with raw text:

* a title is a YAML double-quoted string (JSON escaping), never entity-coded;
* in labels ``#`` starts a comment and ``;`` ends a statement, so both become
  the numeric entities ``#35;`` and ``#59;``; ``%`` (``%%{`` is a directive
  anywhere on a line), ``<`` and ``>`` (``<br>`` is a line break) become
  ``#37;``, ``#60;``, ``#62;``; a newline becomes a space;
* on a line holding ``style`` or ``classDef`` Mermaid drops the line's last
  ``;``, so there ``:`` becomes ``#58;`` as well.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from acplab.model.acp.events import A2C, C2A
from acplab.model import wire
from acplab.model.wire.capture import CaptureRecord, conn_label
from acplab.model.wire.pairing import MODELLED_REQUESTS, RequestTracker, usable_id

from .flow import send_endings
from .labels import describe, describe_event

if TYPE_CHECKING:
    from .stategraph import Quotient

_ESCAPES = str.maketrans({"#": "#35;", ";": "#59;", "%": "#37;", "<": "#60;", ">": "#62;", "\n": " ", "\r": " "})
#: Mermaid's own keywords, which cannot name a participant or a state
KEYWORDS = frozenset({"end", "loop", "alt", "opt", "par", "and", "else", "rect", "box", "note", "critical",
                      "option", "break", "create", "destroy", "activate", "deactivate", "participant", "actor",
                      "state", "title", "autonumber", "links", "link", "properties", "details"})


def escape(text: str) -> str:
    """Label text (messages, notes, aliases, state labels) as Mermaid 11 shows it unchanged.

    >>> escape("session/prompt #1; 50%")
    'session/prompt #35;1#59; 50#37;'
    """
    out = str(text).translate(_ESCAPES)
    if "style" in out or "classDef" in out:
        out = out.replace(":", "#58;")
    return out


def front_matter(title: str) -> list[str]:
    """The ``---`` block naming the diagram: the title as a YAML double-quoted (JSON) string."""
    return ["---", f"title: {json.dumps(' '.join(str(title).split()), ensure_ascii=False)}", "---"]


def node_id(name: str) -> str:
    """A participant or state ID: letters, digits and ``_`` only, never a keyword."""
    out = "".join(ch if ch.isascii() and (ch.isalnum() or ch == "_") else "_" for ch in name) or "_"
    return out + "_" if out.lower() in KEYWORDS else out


def mermaid(steps, clients: int, title: str = "", violation: tuple[str, str] | None = None, rules=(),
            loop_start: int | None = None) -> str:
    """A Mermaid ``sequenceDiagram``: arrows at delivery, crosses for lost messages, notes for internals.

    A message that is still in flight when the path ends is drawn at the step
    that sent it, as an open arrow marked "(in flight)".  ``loop_start`` (a
    lasso) puts the steps that repeat forever in a ``loop`` block.
    """
    lines = front_matter(title) if title else []
    lines.append("sequenceDiagram")
    for c in range(clients):
        lines.append(f"    participant C{c + 1} as client c{c + 1}")
    lines.append("    participant A as agent (adapter + runtime)")
    ended = send_endings(steps)
    for n, (_action, events) in enumerate(steps):
        if loop_start is not None and n == loop_start:
            lines.append("    loop repeats forever")
            span = f"step {n + 1} repeats" if n + 1 == len(steps) else f"steps {n + 1}-{len(steps)} repeat"
            lines.append(f"    Note over A: {escape(span)}")
        for i, e in enumerate(events):
            line = _in_flight(e) if e.kind == "send" and not e.lost and (n, i) not in ended else _mermaid_event(e)
            if line:
                lines.append("    " + line)
    if loop_start is not None and loop_start < len(steps):
        lines.append("    end")
    if violation is not None:
        name, sentence = violation
        span = "C1,A" if clients else "A"
        rule_text = f" [{', '.join(rules)}]" if rules else ""
        lines.append("    rect rgb(255, 220, 220)")
        lines.append(f"    Note over {span}: {escape(f'✗ {name}{rule_text}: {sentence}')}")
        lines.append("    end")
    return "\n".join(lines) + "\n"


def _in_flight(e) -> str:
    c = f"C{e.conn[0] + 1}"
    label = escape(describe(e.msg) + " (in flight)")
    return f"{c}-)A: {label}" if e.dir == C2A else f"A-){c}: {label}"


def _mermaid_event(e) -> str | None:
    k = e.kind
    if k == "deliver":
        c = f"C{e.conn[0] + 1}"
        label = escape(describe(e.msg))
        return f"{c}->>A: {label}" if e.dir == C2A else f"A-->>{c}: {label}"
    if k == "drop":
        c = f"C{e.conn[0] + 1}"
        label = escape(describe(e.msg) + " (dropped)")
        return f"{c}-xA: {label}" if e.dir == C2A else f"A--x{c}: {label}"
    if k == "send" and e.lost:
        c = f"C{e.conn[0] + 1}"
        return f"A--x{c}: {escape(describe(e.msg) + ' (connection closed)')}" if e.dir == A2C else None
    if k == "cut":
        return f"Note over C{e.conn[0] + 1},A: {escape(f'connection {conn_label(e.conn)} cut')}"
    if k == "connect":
        return f"Note over C{e.conn[0] + 1},A: {escape(f'connection {conn_label(e.conn)} opened')}"
    if k in ("insert", "reject", "fail", "work_end", "execute", "restart") or (k == "replayed" and e.original != e.sent):
        return f"Note over A: {escape(describe_event(e).replace('[internal] ', ''))}"
    if k == "bind":
        return f"Note over C{e.client + 1}: {escape(describe_event(e).replace('[internal] ', ''))}"
    return None


# -- state diagrams ------------------------------------------------------------


def mermaid_states(q: Quotient) -> str:
    """Mermaid ``stateDiagram-v2``: one transition line per projected edge, labels joined by commas."""
    lines = front_matter(q.title) if q.title else []
    lines.append("stateDiagram-v2")
    for s in q.states:
        if node_id(s) != s:
            lines.append(f"    state \"{_state_text(s)}\" as {node_id(s)}")
    lines.append(f"    [*] --> {node_id(q.initial)}")
    for (a, b), labels in q.edges.items():
        lines.append(f"    {node_id(a)} --> {node_id(b)}: {escape(', '.join(labels))}")
    for note in q.notes:
        lines.append(f"    note right of {node_id(q.initial)}: {_state_text(note)}")
    return "\n".join(lines) + "\n"


def _state_text(text: str) -> str:
    """A state's description or a note: there a ``:`` or a ``"`` would end the text early."""
    return escape(text).replace(":", "#58;").replace('"', "#34;")


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
    lines = front_matter(f"{name} [{', '.join(rules)}] at seq {', '.join(map(str, seqs))}") + ["sequenceDiagram"]
    ids: dict[str, str] = {}
    for rec in window:
        if rec.conn not in ids:
            ids[rec.conn] = f"C{len(ids) + 1}"
            lines.append(f"    participant {ids[rec.conn]} as client {escape(_clip(rec.conn, 30))}")
    lines.append("    participant A as agent")
    offending = set(seqs)
    requests = RequestTracker()
    for rec in window:
        c = ids[rec.conn]
        mark = "✗ " if rec.seq in offending else ""
        label = escape(f"{mark}{rec.seq}: {_capture_label(rec, requests, version)}")
        lines.append(f"    {c}->>A: {label}" if rec.dir == C2A else f"    A-->>{c}: {label}")
    span = f"{next(iter(ids.values()))},A" if ids else "A"
    lines += ["    rect rgb(255, 220, 220)",
              f"    Note over {span}: {escape(f'✗ {name}: ' + _clip(explanation, 200))}",
              "    end"]
    return "\n".join(lines) + "\n"
