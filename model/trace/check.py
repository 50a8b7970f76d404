"""``acplab trace check``: run the wire-checkable monitors over a recorded capture.

Reads a capture (DESIGN.md, "Capture format") as a stream, decodes every
``msg`` with :func:`model.wire.decode` and feeds each message, as a
:class:`model.events.Send` event, to every ``wire = True`` monitor of
:data:`model.monitors.ALL_MONITORS` (plus the trace-only monitors of the chosen
spec).  At the end of the capture the monitors' ``at_rest`` checks run: a
capture is taken to be a whole recording, so an obligation still open at the
end (a response never reported with ``user_message``) is a violation.

API
---
``check_capture(path, spec="rfd") -> TraceResult``;
``TraceResult.to_json()`` is the ``--json`` object; ``TRACE_SPECS`` names the
specs (``rfd``, ``v2-draft``, ``v1``).  Raises :class:`model.errors.InputError`
(one line, exit 2) for an unknown spec, an unreadable or empty file, or a file
whose first record is not a capture record.

Memory
------
Constant in the length of the capture apart from what the rules themselves
must remember: P5 (distinct messageIds) and U1 (each accepted message reported)
need every messageId seen (one dict entry per prompt success / user message).
The rest is per-connection (pending JSON-RPC requests, open tool calls, replay
windows) plus a ring buffer of the last :data:`WINDOW` records for diagrams.
The model's monitors keep sorted tuples (hashable, for the explorer), which
makes each step O(n); so for the four wire monitors the checker runs streaming
re-implementations with the same name, rules and sentences (:data:`_FAST`),
held equal to the originals by a differential test.  Any other wire monitor
is run unchanged (``fast=False`` runs all of them unchanged).

Decisions
---------
* Messages the decoder rejects are violations of ``WireShape`` (rules from the
  error text, e.g. ``P4, W1``; else ``W``). A recorder's ``raw`` (not JSON)
  line is one too.
* Requests with methods outside the modelled lifecycle (``initialize``,
  ``authenticate``, ``fs/*``, v1 ``session/load``...) and their responses are
  counted and passed over (``skipped``), not reported.
* Bad capture lines: if the file is empty or its first non-blank line is not
  a capture record, the file is not a capture: ``InputError`` (exit 2). A bad
  line later in an otherwise good capture (truncated last line, seq out of
  order, unknown dir) is a ``CaptureFormat`` violation with ``FILE:LINE`` and
  checking goes on (exit 1).
* Connection labels ``cN`` / ``cN.E`` (the model's, see ``wire.capture.conn_label``)
  map to the model's ``(client, epoch)`` tuples; the first record on ``cN.E``
  is taken as the close (``Cut``) of that client's earlier connections, as in
  the model, where a reconnect follows a cut. Other labels get synthetic
  tuples and sentences are rewritten back to the capture's labels.
* ``states`` and ``transitions`` in the JSON are both the message count.
* At most :data:`MAX_PER_PROPERTY` violations per property are listed; the
  rest are counted in ``suppressed``.
"""

from __future__ import annotations

import re
import time
from collections import deque
from dataclasses import dataclass, field

from acplab.model import wire
from acplab.model.wire.capture import CaptureError, CaptureRecord, conn_label as _conn, iter_capture_lenient, parse_conn_label
from acplab.model.wire.pairing import MODELLED_REQUESTS, RequestTracker, usable_id
from acplab.model.errors import InputError
from acplab.model.acp.events import Send
from acplab.model.engine.verdicts import exit_code
from acplab.model.acp.monitors import ALL_MONITORS

from .runners import _FAST, RequestIdsUniqueWhilePending, V1EveryPromptAnsweredOnce, V1StopReasonClosedEnum, _Generic

WINDOW = 20
MAX_PER_PROPERTY = 10
LABEL_CHARS = 120



# --------------------------------------------------------------------------- results


@dataclass
class TraceViolation:
    property: str
    rules: tuple[str, ...]
    description: str
    seq: list[int]
    line: int | None
    explanation: str
    trace_length: int = 0
    files: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "property": self.property, "rules": list(self.rules), "description": self.description,
            "seq": list(self.seq), "line": self.line, "explanation": self.explanation,
            "trace_length": self.trace_length, "files": list(self.files),
        }


@dataclass
class TraceResult:
    spec: str
    path: str
    messages: int = 0
    skipped: int = 0
    seconds: float = 0.0
    violations: list[TraceViolation] = field(default_factory=list)
    checked: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    not_checkable: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    suppressed: dict[str, int] = field(default_factory=dict)
    out_dir: str | None = None
    #: per violation, the last capture records up to it (for diagrams)
    windows: list[tuple] = field(default_factory=list, repr=False)

    @property
    def verdict(self) -> str:
        return "violated" if self.violations else "holds"

    @property
    def exit_code(self) -> int:
        return exit_code(self.verdict)

    def to_json(self) -> dict:
        return {
            "spec": self.spec, "file": self.path, "verdict": self.verdict, "complete": True,
            "messages": self.messages, "skipped": self.skipped,
            "states": self.messages, "transitions": self.messages,
            "seconds": round(self.seconds, 3),
            "violations": [v.to_json() for v in self.violations],
            "suppressed": dict(self.suppressed),
            "checked": [{"property": n, "rules": list(r)} for n, r in self.checked],
            "not_checkable": [{"property": n, "rules": list(r)} for n, r in self.not_checkable],
            "witnesses": {"found": [], "missing": []},
            "out": self.out_dir,
        }


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class TraceSpec:
    name: str
    version: str  # wire.decode version
    description: str
    extra: tuple[type, ...] = ()


TRACE_SPECS: dict[str, TraceSpec] = {
    "rfd": TraceSpec("rfd", "v2", "ACP v2 as the RFD has it: success carries messageId (P4/W1)"),
    "v2-draft": TraceSpec("v2-draft", "v2-draft", "the v2 draft: prompt success may be {} (no messageId, D1)"),
    "v1": TraceSpec("v1", "v1", "ACP v1: the prompt response ends the turn with stopReason (W14)",
                    (V1EveryPromptAnsweredOnce, V1StopReasonClosedEnum)),
}


def get_trace_spec(name: str) -> TraceSpec:
    try:
        return TRACE_SPECS[name]
    except KeyError:
        raise InputError(f"unknown trace spec {name!r}; known: {', '.join(TRACE_SPECS)}") from None


# --------------------------------------------------------------------------- the checker

_RULE_TAG = re.compile(r"\(([A-Z]\d+(?:/[A-Z]\d+)*)\)")
_SYNTHETIC = 1_000_000
_SYNTH_TEXT = re.compile(r"\bc(\d{7,})\b")


def _short(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _wire_rules(text: str) -> tuple[str, ...]:
    m = _RULE_TAG.search(text)
    return tuple(m.group(1).split("/")) if m else ("W",)


class _Checker:
    def __init__(self, spec: TraceSpec, fast: bool, source: str) -> None:
        self.spec = spec
        self.source = source
        self.runners = []
        for m in ALL_MONITORS:
            if m.wire:
                cls = _FAST.get(type(m).__name__) if fast else None
                self.runners.append(cls(m) if cls is not None else _Generic(m))
        self.runners += [cls() for cls in spec.extra]
        self.p19 = RequestIdsUniqueWhilePending()
        self.labels: dict[str, tuple[int, int]] = {}
        self.synthetic: dict[str, str] = {}  # rendered synthetic name -> capture label
        self.epochs: dict[int, list[tuple[int, int]]] = {}  # client -> model conns seen
        self.requests = RequestTracker()  # keyed by the capture's own connection labels
        self.window: deque[CaptureRecord] = deque(maxlen=WINDOW)
        self.found: list[tuple] = []  # (property, rules, description, sentence, seqs, line, n, window)
        self.counts: dict[str, int] = {}
        self.messages = 0
        self.skipped = 0
        self.last_seq = 0

    # -- connections ------------------------------------------------------------

    def conn_of(self, label: str):
        c = self.labels.get(label)
        if c is not None:
            return c
        c = parse_conn_label(label)
        if c is None or c in self.labels.values():
            c = (_SYNTHETIC + len(self.synthetic), 0)
            self.synthetic[_conn(c)] = label
        else:
            # cN.E supersedes the client's earlier connections (the model reconnects after a cut)
            kept = []
            for old in self.epochs.get(c[0], []):
                if old[1] < c[1]:
                    for r in self.runners:
                        r.on_cut(old)
                else:
                    kept.append(old)
            self.epochs[c[0]] = kept + [c]
        self.labels[label] = c
        return c

    def text(self, sentence: str) -> str:
        if self.synthetic:
            sentence = _SYNTH_TEXT.sub(lambda m: self.synthetic.get(m.group(0), m.group(0)), sentence)
        return _short(sentence, 400)

    # -- reporting ------------------------------------------------------------

    def report(self, name, rules, description, sentence, seqs, rec: CaptureRecord | None, line=None):
        n = self.counts.get(name, 0) + 1
        self.counts[name] = n
        if n > MAX_PER_PROPERTY:
            return
        line = rec.line if rec is not None else line
        seqs = sorted(set(s for s in seqs if s is not None))
        if not seqs and line is None:  # a bad capture line has no seq of its own
            seqs = [rec.seq] if rec is not None else [self.last_seq]
        self.found.append((name, tuple(rules), description, self.text(sentence), seqs, line,
                           self.messages, tuple(self.window)))

    # -- one record ------------------------------------------------------------

    def feed(self, rec: CaptureRecord) -> None:
        self.messages += 1
        self.last_seq = rec.seq
        self.window.append(rec)
        conn = self.conn_of(rec.conn)
        msg = rec.msg
        if msg is None:
            self.report("WireShape", ("W",), "every message on the wire is one JSON-RPC object",
                        f"{rec.conn} {rec.dir}: a line that is not a JSON object: {_short(rec.raw or '', 60)!r}",
                        [rec.seq], rec)
            return
        method = msg.get("method")
        response_to = None
        if "method" in msg and "id" in msg and isinstance(method, str):
            rid = msg["id"]
            if usable_id(rid):
                earlier = self.requests.request(rec.conn, rec.dir, rid, method)
                if earlier is not None:
                    self.report(self.p19.name, self.p19.rules, self.p19.description,
                                f"{rec.dir.split('->')[0]} on {rec.conn} reuses id {_short(repr(rid), 40)} "
                                f"while its {earlier} request with that id is pending", [rec.seq], rec)
            if method not in MODELLED_REQUESTS:
                self.skipped += 1
                return
        elif "method" not in msg:
            rid = msg.get("id")
            if usable_id(rid):
                response_to = self.requests.response(rec.conn, rec.dir, rid)
                if response_to is not None and response_to not in MODELLED_REQUESTS:
                    self.skipped += 1
                    return
        try:
            value = wire.decode(msg, response_to=response_to, version=self.spec.version)
        except wire.WireError as err:
            text = str(err)
            self.report("WireShape", _wire_rules(text), "every message has the shape the schema requires",
                        f"{rec.conn} {rec.dir}: {_short(text, 300)}", [rec.seq], rec)
            if response_to is not None and "id" in msg:
                # A malformed response still answers its request: judged once, as WireShape.
                value = wire.GenericResult(msg["id"], wire.canonical_json(msg.get("result")))
                for r in self.runners:
                    r.on_send(Send(conn, rec.dir, value), rec)
            return
        except RecursionError:
            self.report("WireShape", ("W",), "every message has the shape the schema requires",
                        f"{rec.conn} {rec.dir}: message nested too deeply to decode", [rec.seq], rec)
            return
        e = Send(conn, rec.dir, value)
        for r in self.runners:
            for sentence, seqs in r.on_send(e, rec):
                self.report(r.name, r.rules, r.description, sentence, seqs or [rec.seq], rec)

    def bad_line(self, err: CaptureError) -> None:
        self.report("CaptureFormat", (), "every line of the capture is a capture record in seq order",
                    str(err), [], None, line=err.line)

    def end(self) -> None:
        for r in self.runners:
            for sentence, seqs in r.at_end():
                self.report(r.name, r.rules, r.description, sentence, seqs or [self.last_seq], None)


def check_capture(path, spec: str = "rfd", *, fast: bool = True) -> TraceResult:
    """Check the capture at ``path`` against ``spec``; ``result.windows`` holds the records around each violation."""
    tspec = get_trace_spec(spec)
    started = time.perf_counter()
    name = str(path)
    checker = _Checker(tspec, fast, name)
    seen_record = False
    for item in iter_capture_lenient(path):
        if isinstance(item, CaptureError):
            if not seen_record:
                raise InputError(f"{item} (not a capture: the first record must be "
                                 '{"seq", "conn", "dir", "msg"})') from None
            checker.bad_line(item)
            continue
        seen_record = True
        try:
            checker.feed(item)
        except RecursionError:  # a message nested deeper than decoding recurses: a verdict, not a crash
            checker.report("WireShape", ("W",), "every message has the shape the schema requires",
                           f"{item.conn} {item.dir}: message nested too deeply to decode", [item.seq], item)
    if not seen_record:
        raise InputError(f"{name}: empty capture: no records")
    checker.end()
    result = TraceResult(spec=tspec.name, path=name, messages=checker.messages, skipped=checker.skipped)
    result.checked = [(r.name, tuple(r.rules)) for r in checker.runners] + [(checker.p19.name, checker.p19.rules)]
    result.not_checkable = [(m.name, tuple(m.rules)) for m in ALL_MONITORS if not m.wire]
    result.suppressed = {k: n - MAX_PER_PROPERTY for k, n in checker.counts.items() if n > MAX_PER_PROPERTY}
    for prop, rules, desc, sentence, seqs, line, n, window in checker.found:
        result.violations.append(TraceViolation(prop, rules, desc, seqs, line, sentence, n))
    result.seconds = time.perf_counter() - started
    result.windows = [item[7] for item in checker.found]
    return result


