"""Mermaid text: sequence diagrams of a path and state diagrams of a quotient graph.

Pure functions of a path (steps with their events) or of a projected graph;
the output is drop-in for the ACP docs, which use Mermaid, and every file is
checked by Mermaid 11's own parser in the tests (``tests/js``).

Sequence diagrams follow the docs' own conventions (protocol/v2/draft:
prompt-lifecycle, cancellation, session-setup): participants ``Client`` (or
``Client c1``, ``Client c2`` when there are several) and ``Agent``; requests
and notifications are solid arrows and responses dashed, in either direction;
messages are written as the docs write them (:func:`labels.docs_label`:
``session/prompt (id=1, "hi")``, ``response to id=1 ({})``); long notes wrap
with ``<br/>`` (as the docs' notes do) instead of being clipped, and a title
too long for one line keeps its first clause and repeats in full as the
diagram's first note.

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
import textwrap
from typing import TYPE_CHECKING

from acplab.model.acp.events import A2C, C2A
from acplab.model.acp.rule_monitor import Switches, is_id
from acplab.model.acp.wire_reading import message_of, read_records
from acplab.model.wire.capture import CaptureRecord, conn_label
from acplab.model.wire.codec import MODELLED_REQUESTS

from .flow import send_endings
from .labels import docs_event, docs_label, is_response

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


#: characters per line of a wrapped note (the docs' notes are short lines joined by <br/>)
NOTE_WIDTH = 60
#: a title longer than this keeps its first clause; the full text becomes the first note
TITLE_WIDTH = 70


def wrapped(text: str, width: int = NOTE_WIDTH) -> str:
    """Note text escaped for Mermaid and wrapped with ``<br/>`` at ``width`` characters (never clipped).

    >>> wrapped("a b c", 3)
    'a b<br/>c'
    """
    lines = textwrap.wrap(" ".join(str(text).split()), width, break_long_words=True, break_on_hyphens=False)
    out = "<br/>".join(escape(line) for line in lines) or escape(text)
    return out.replace(":", "#58;") if "style" in out or "classDef" in out else out  # one Mermaid line: see escape


def headed(title: str, span: str) -> list[str]:
    """The front matter for ``title`` and, when it is too long for one line, a first note holding all of it."""
    if not title:
        return []
    text = " ".join(str(title).split())
    if len(text) <= TITLE_WIDTH:
        return front_matter(text)
    head = text.split(":", 1)[0]
    head = head if len(head) <= TITLE_WIDTH else textwrap.shorten(head, TITLE_WIDTH, placeholder=" …")
    return front_matter(head) + ["sequenceDiagram", f"    Note over {span}: {wrapped(text)}"]


def participants(clients: int) -> list[str]:
    """The lifelines, named as the docs name them: ``Client`` (``Client c1``, ... when several) and ``Agent``."""
    names = ["Client"] if clients == 1 else [f"Client c{c + 1}" for c in range(clients)]
    return [f"    participant C{c + 1} as {name}" for c, name in enumerate(names)] + ["    participant A as Agent"]


def arrow(sender: str, receiver: str, msg, head: str = ">>") -> str:
    """``sender->>receiver`` for a request or notification, ``sender-->>receiver`` for a response (as the docs draw them)."""
    return f"{sender}{'--' if is_response(msg) else '-'}{head}{receiver}"


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
    span = "C1,A" if clients else "A"
    lines = headed(title, span)
    if "sequenceDiagram" not in lines:
        lines.append("sequenceDiagram")
    lines[lines.index("sequenceDiagram") + 1:lines.index("sequenceDiagram") + 1] = participants(clients)
    ended = send_endings(steps)
    for n, (_action, events) in enumerate(steps):
        if loop_start is not None and n == loop_start:
            lines.append("    loop repeats forever")
            repeat = f"step {n + 1} repeats" if n + 1 == len(steps) else f"steps {n + 1}-{len(steps)} repeat"
            lines.append(f"    Note over A: {escape(repeat)}")
        for i, e in enumerate(events):
            line = _in_flight(e) if e.kind == "send" and not e.lost and (n, i) not in ended else _mermaid_event(e)
            if line:
                lines.append("    " + line)
    if loop_start is not None and loop_start < len(steps):
        lines.append("    end")
    if violation is not None:
        name, sentence = violation
        rule_text = f" [{', '.join(rules)}]" if rules else ""
        lines.append("    rect rgb(255, 220, 220)")
        lines.append(f"    Note over {span}: {wrapped(f'✗ {name}{rule_text}: {sentence}')}")
        lines.append("    end")
    return "\n".join(lines) + "\n"


def _ends(e) -> tuple[str, str]:
    c = f"C{e.conn[0] + 1}"
    return (c, "A") if e.dir == C2A else ("A", c)


def _in_flight(e) -> str:
    return f"{arrow(*_ends(e), e.msg, ')')}: {escape(docs_label(e.msg) + ' (in flight)')}"


def _mermaid_event(e) -> str | None:
    k = e.kind
    if k == "deliver":
        return f"{arrow(*_ends(e), e.msg)}: {escape(docs_label(e.msg))}"
    if k == "drop":
        return f"{arrow(*_ends(e), e.msg, 'x')}: {escape(docs_label(e.msg) + ' (dropped)')}"
    if k == "send" and e.lost:
        label = escape(docs_label(e.msg) + " (connection closed)")
        return f"{arrow(*_ends(e), e.msg, 'x')}: {label}" if e.dir == A2C else None
    if k == "cut":
        return f"Note over C{e.conn[0] + 1},A: {escape(f'connection {conn_label(e.conn)} cut')}"
    if k == "connect":
        return f"Note over C{e.conn[0] + 1},A: {escape(f'connection {conn_label(e.conn)} opened')}"
    if k in ("insert", "reject", "fail", "work_end", "execute", "restart") or (k == "replayed" and e.original != e.sent):
        return f"Note over A: {wrapped(docs_event(e) or k)}"
    if k == "bind":
        return f"Note over C{e.client + 1}: {wrapped(docs_event(e) or k)}"
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


def _capture_label(rec: CaptureRecord, o, version: str = "v2") -> str:
    """A diagram label in the docs' words for ``rec``, read as ``o`` (:func:`~acplab.model.acp.wire_reading.read_records`:
    a response knows the method of the request it answers, among those in the window)."""
    if rec.msg is None:
        return "(not JSON)"
    try:
        rid = rec.msg.get("id")
        if o.shape == "request" and o.method not in MODELLED_REQUESTS and is_id(rid):
            return f"{o.method} (id={rid})"
        if o.answers is not None and o.answers not in MODELLED_REQUESTS:
            return f"response to id={rid} ({o.answers})"
        text = docs_label(message_of(o, version))
    except Exception:  # noqa: BLE001 - a label only; the violation itself says what is wrong
        rid = rec.msg.get("id") if isinstance(rec.msg, dict) else None
        text = f"response to id={rid}" if "method" not in rec.msg else str(rec.msg.get("method"))
    return text


def _is_response_record(rec: CaptureRecord) -> bool:
    """A JSON-RPC response: no method, with an id (or an error)."""
    return isinstance(rec.msg, dict) and "method" not in rec.msg and ("id" in rec.msg or "error" in rec.msg)


def capture_window(window, name: str, rules, seqs, explanation: str, version: str = "v2") -> str:
    """A Mermaid sequenceDiagram of capture records around a violation; the records at ``seqs`` are marked."""
    ids: dict[str, str] = {}
    for rec in window:
        ids.setdefault(rec.conn, f"C{len(ids) + 1}")
    span = f"{next(iter(ids.values()))},A" if ids else "A"
    lines = headed(f"{name} [{', '.join(rules)}] at seq {', '.join(map(str, seqs))}", span)
    if "sequenceDiagram" not in lines:
        lines.append("sequenceDiagram")
    at = lines.index("sequenceDiagram") + 1
    lines[at:at] = [f"    participant {c} as Client {wrapped(conn, 30)}" for conn, c in ids.items()] + [
        "    participant A as Agent"]
    offending = set(seqs)
    for rec, o in read_records(window, Switches(dialect=version, forced=True)):
        if rec.close is not None:
            continue
        c = ids[rec.conn]
        mark = "✗ " if rec.seq in offending else ""
        label = wrapped(f"{mark}{rec.seq}: {_capture_label(rec, o, version)}", 100)
        dash = "--" if _is_response_record(rec) else "-"
        lines.append(f"    {c}{dash}>>A: {label}" if rec.dir == C2A else f"    A{dash}>>{c}: {label}")
    lines += ["    rect rgb(255, 220, 220)",
              f"    Note over {span}: {wrapped(f'✗ {name}: ' + explanation)}",
              "    end"]
    return "\n".join(lines) + "\n"
