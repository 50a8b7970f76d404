"""``acplab trace check``: the rule monitors over recorded traffic (DESIGN.md, "Trace checker").

The capture (DESIGN.md, "Capture format") is read as a stream.  Each record's
``msg`` is classified and annotated once by the observer's front end
(:mod:`acplab.model.acp.wire_reading`) and handed to the monitors that asked for
it (:mod:`acplab.model.acp.rules`): the same classes the explorer and the
simulator run.  With ``internal`` (a sidecar, :mod:`.sidecar`) the monitors
that need agent- or client-internal events run too; without it they are
listed as not checkable from the wire, with the events that would feed them.

Verdicts
--------
* a *violation* is proven by the traffic (exit 1); a *warning* is a
  heuristic, a SHOULD or a smell (listed, exit 0);
* an obligation still open when the capture ends (an unanswered prompt,
  ``running`` with no ``idle``) is a violation when the capture is declared
  ``complete`` (recorded until the agent was at rest) and a warning
  otherwise;
* the dialect of each connection comes from its ``initialize`` response
  (protocolVersion 1: v1, 2: v2); without one it is the spec's (``rfd``:
  v2); an explicit ``spec`` forces it for every connection.

Decisions
---------
* Bad capture lines: an empty file, or a first line that is not a capture
  record, is not a capture (``InputError``, exit 2).  A bad line later (also
  one nested too deeply to parse) is a ``CaptureFormat`` violation with
  ``FILE:LINE`` and checking goes on.
* Connection labels ``cN.E`` (the model's) close the earlier ``cN.E'``
  (a reconnect follows a cut); other labels stay open until the end.
* At most :data:`MAX_PER_PROPERTY` findings per property and level are
  listed; the rest are counted in ``suppressed``.

Memory and speed
----------------
Every monitor keeps one mutable book for the whole capture (flat dicts and
sets mutated in place; see :mod:`acplab.model.acp.rule_monitor`), keyed by
connection and forgotten when a connection ends.  What grows is what the
rules must remember: the message IDs returned (P5) and seen (the insertion
proxy); heuristics keep bounded tables.  No monitor is copied for speed:
the front end tags each message with dispatch keys (its kind, and the
faults and moments monitors look for), so a message reaches only the
monitors that can learn from it: about 1.2 calls per message on the
benchmark's traffic, plus the *armed* ones, called only while their book
holds something to watch for (their liveness is cached per arm and
refreshed after each call of the monitor).  The collector is paused while
checking: the books hold no reference cycles.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections import deque
from dataclasses import dataclass, field

from acplab.model.acp.rule_monitor import (V1, VIOLATION, WARNING, Obs, Switches, conn_name, new_book, settle,
                                           violation, warning)
from acplab.model.acp.wire_reading import Dispatch, Frontend, classify, close_obs, internal_obs
from acplab.model.acp.rules import make_monitors
from acplab.model.engine.verdicts import exit_code
from acplab.model.errors import InputError
from acplab.model.wire.capture import CaptureError, CaptureRecord, iter_capture_lenient, parse_conn_label

from .itf import is_itf, itf_as_capture
from .schema import SchemaCheck
from .sidecar import read_sidecar, sidecar_kinds

WINDOW = 20
MAX_PER_PROPERTY = 10


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class TraceSpec:
    name: str
    version: str  # the codec's dialect name, for diagrams
    description: str
    switches: Switches


TRACE_SPECS: dict[str, TraceSpec] = {
    "rfd": TraceSpec("rfd", "v2", "ACP v2 as the RFD has it, with the 2.4.0 schema", Switches()),
    "v2-draft": TraceSpec("v2-draft", "v2-draft", "the v2 docs of 2026-08: prompt success may be {} (D1), an ending "
                          "idle MUST name its stop reason (S5)",
                          Switches(dialect="v2-draft", idle_stop_reason=VIOLATION)),
    "v1": TraceSpec("v1", "v1", "ACP v1: the prompt response ends the turn with stopReason (W14)",
                    Switches(dialect=V1)),
}


def get_trace_spec(name: str) -> TraceSpec:
    try:
        return TRACE_SPECS[name]
    except KeyError:
        raise InputError(f"unknown trace spec {name!r}; known: {', '.join(TRACE_SPECS)}") from None


# --------------------------------------------------------------------------- results


@dataclass
class TraceViolation:
    """One finding as reported (a violation or a warning, see ``level``)."""

    property: str
    rules: tuple[str, ...]
    description: str
    seq: list[int]
    line: int | None
    explanation: str
    trace_length: int = 0
    files: list[str] = field(default_factory=list)
    level: str = VIOLATION

    def to_json(self) -> dict:
        return {"property": self.property, "level": self.level, "rules": list(self.rules),
                "description": self.description, "seq": list(self.seq), "line": self.line,
                "explanation": self.explanation, "trace_length": self.trace_length, "files": list(self.files)}


@dataclass
class TraceResult:
    spec: str
    path: str
    complete: bool = False
    messages: int = 0
    seconds: float = 0.0
    violations: list[TraceViolation] = field(default_factory=list)
    warnings: list[TraceViolation] = field(default_factory=list)
    checked: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    not_checkable: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    suppressed: dict[str, int] = field(default_factory=dict)
    dialects: dict[str, str] = field(default_factory=dict)
    dialect_source: str = "default"
    internal: str | None = None
    #: the sidecar was found beside the capture (``X.events.jsonl``), not given
    internal_beside: bool = False
    #: the readings where the RFD and the schema differ, as this run took them (see :func:`readings`)
    readings: dict = field(default_factory=dict)
    out_dir: str | None = None
    #: per violation (in order), the capture records up to it (for diagrams)
    windows: list[tuple] = field(default_factory=list, repr=False)

    @property
    def verdict(self) -> str:
        return "violated" if self.violations else "holds"

    @property
    def exit_code(self) -> int:
        return exit_code(self.verdict)

    @property
    def dialect(self) -> str:
        """One word for the dialect used: the connections' if they agree, else ``mixed``."""
        values = set(self.dialects.values()) or {get_trace_spec(self.spec).switches.dialect}
        return values.pop() if len(values) == 1 else "mixed"

    def rules_checked(self) -> list[str]:
        return sorted({r for _n, rules in self.checked for r in rules})

    def to_json(self) -> dict:
        return {
            "spec": self.spec, "file": self.path, "verdict": self.verdict, "complete": self.complete,
            "dialect": {"used": self.dialect, "source": self.dialect_source, "connections": dict(self.dialects)},
            "messages": self.messages, "states": self.messages, "transitions": self.messages,
            "seconds": round(self.seconds, 3),
            "violations": [v.to_json() for v in self.violations],
            "warnings": [v.to_json() for v in self.warnings],
            "suppressed": dict(self.suppressed),
            "checked": [{"property": n, "rules": list(r)} for n, r in self.checked],
            "not_checkable": [{"property": n, "rules": list(r), "needs": list(e)} for n, r, e in self.not_checkable],
            "internal": self.internal, "internal_beside": self.internal_beside, "readings": dict(self.readings),
            "witnesses": {"found": [], "missing": []},
            "out": self.out_dir,
        }


# --------------------------------------------------------------------------- reading


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


class _Loads:
    """``json.loads`` that notes repeated member names (RFC 8259 section 4) and refuses NaN and Infinity.

    A line nested too deeply raises ``RecursionError``, which the capture
    reader turns into a record whose message is kept as raw.

    It calls the C scanner directly (what ``JSONDecoder.decode`` does, without
    two Python frames per line) with a pairs hook that builds each object and
    compares its size with the number of members read.
    """

    def __init__(self) -> None:
        self.repeated: list[str] = []
        repeated = self.repeated

        def pairs(items, dict=dict, len=len):
            d = dict(items)
            if len(d) != len(items):
                seen = set()
                repeated.extend(k for k, _v in items if k in seen or seen.add(k))
            return d

        self._scan = json.JSONDecoder(object_pairs_hook=pairs, parse_constant=_no_constant).scan_once

    def take(self) -> list[str]:
        """The repeated names noted since the last call (for the line just read)."""
        if not self.repeated:
            return self.repeated
        out = list(self.repeated)
        self.repeated.clear()
        return out

    def __call__(self, text: str, _ws=json.decoder.WHITESPACE.match):
        start = 0 if text[:1] == "{" else _ws(text, 0).end()
        try:
            obj, end = self._scan(text, start)
        except StopIteration as err:
            raise json.JSONDecodeError("Expecting value", text, err.value) from None
        if end != len(text) and text[end:] != "\n":  # a record line ends at its newline; else only whitespace
            end = _ws(text, end).end()
            if end != len(text):
                raise json.JSONDecodeError("Extra data", text, end)
        return obj


# --------------------------------------------------------------------------- the checker


class TraceChecker:
    """The checker of one capture, fed one record at a time: :func:`check_capture` and ``acplab test``'s live judge.

    :meth:`read` reads capture lines (a path, a file or any iterable of
    lines) with the checker's own JSON reading (:class:`_Loads`), yielding
    each record with the repeated member names of its line; :meth:`feed`
    judges it (a bad line is a ``CaptureFormat`` violation); :meth:`internal`
    feeds a sidecar event; :meth:`end` settles the obligations (``complete``:
    as ``--complete``) and :meth:`result` gives the verdict.  ``found`` holds
    ``(monitor, finding, line, n, window)`` as they come.
    """

    def __init__(self, spec: TraceSpec, switches: Switches, internal: bool, complete: bool, schema=None) -> None:
        self.spec = spec
        self.loads = _Loads()
        self.schema = schema
        self.switches = switches
        self.complete = complete
        self.frontend = Frontend(switches)
        self.fbook = new_book(self.frontend.fields)
        self.dialects_seen: dict = {}  # each connection's dialect, kept past its close
        self.held_closes: list = []  # close records no message has followed yet
        self.monitors = make_monitors(switches, internal_events=internal)
        self.books = [new_book(m.fields) for m in self.monitors]
        self.dispatch = Dispatch(self.monitors)
        self.route, self.arms_of, self.front = self.dispatch.route, self.dispatch.arms_of, self.frontend.feed
        self.ons = [m.on for m in self.monitors]
        #: per arm (see Dispatch), a test of its monitor's book (does it have something to watch for?), and its result
        self.checks: list = []
        self.live: set[int] = set()
        #: per monitor, None or one function that refreshes the liveness of all its arms (:func:`_refresher`)
        self.refresh: list = [None] * len(self.monitors)
        self.window: deque[CaptureRecord] = deque(maxlen=WINDOW)
        self.found: list[tuple] = []  # (monitor, finding, line, n, window)
        self.counts: dict[tuple[str, str], int] = {}
        self.epochs: dict[int, list[tuple[str, int]]] = {}  # model client -> (label, epoch) seen
        self.labels: set[str] = set()
        self.messages = 0
        self.line = None

    # -- the public feed ------------------------------------------------------------

    def read(self, source):
        """``(record or CaptureError, repeated member names)`` for each line of ``source``, read as it is pulled."""
        take, noted = self.loads.take, self.loads.repeated
        for item in iter_capture_lenient(source, loads=self.loads):
            yield item, take() if noted else noted  # (noted: the names repeated on the line just read, if any)

    def feed(self, item, repeated: list[str]) -> None:
        """Judge one item of :meth:`read`: a record, or a bad line."""
        if isinstance(item, CaptureError):
            self.bad_line(item)
        else:
            self.record(item, repeated)

    def result(self, name: str, internal=None, started: float | None = None) -> TraceResult:
        """The verdict so far (call :meth:`end` first for the obligations); ``started``: a ``perf_counter``."""
        return _result(self, self.spec, name, internal, started if started is not None else time.perf_counter())

    # -- observations ------------------------------------------------------------

    def run(self, o: Obs) -> None:
        self.front(self.fbook, o)
        always, armed, arms = self.route(o.keys, o.dialect)
        live = self.live
        if armed:
            if len(self.checks) < len(self.dispatch.arms):
                self._new_arms()
            if live and not arms.isdisjoint(live):  # (three messages in four have none of their arms live)
                always = always + [i for i, arm in armed if arm in live]
        if not always:
            return
        ons, books, refresh = self.ons, self.books, self.refresh
        for i in always:  # NOTE: the monitor call is inlined here: it runs a few million times per capture
            b = books[i]
            try:
                found = ons[i](b, o)
            except Exception as err:  # a monitor's fault (or a value nested too deeply) must not cost the verdict
                found = self._failed(self.monitors[i], err, o)
            if refresh[i] is not None:
                refresh[i](b.__dict__, live.add, live.discard)
            if found:
                for f in found:
                    self._report(self.monitors[i], f)

    def _new_arms(self) -> None:
        """Arms the dispatcher made for a new combination of keys: their tests, and their liveness now."""
        for arm in range(len(self.checks), len(self.dispatch.arms)):
            i, fields = self.dispatch.arms[arm]
            self.checks.append(_any_of(fields))
            if self.checks[arm](self.books[i].__dict__):
                self.live.add(arm)
            self.refresh[i] = _refresher([(a, self.dispatch.arms[a][1]) for a in self.arms_of[i]])

    def _failed(self, m, err: Exception, o: Obs) -> None:
        if isinstance(err, RecursionError):
            self._report(m, _problem("a value nested too deeply to judge", o))
        else:
            self._report(_FAILED, warning((), f"{m.name} could not judge this message: {type(err).__name__}: {err}",
                                          o.stamp))
        return None

    def record(self, rec: CaptureRecord, repeated: list[str]) -> None:
        if rec.close is not None:  # a close record: held until a message follows it (see _release_closes)
            self.held_closes.append(rec)
            return
        if self.held_closes:
            self._release_closes(self.held_closes)
        self.messages += 1
        self.line = rec.line
        self.window.append(rec)
        if rec.conn not in self.labels:
            self._connection(rec.conn, rec.seq)
        o = Obs("msg", rec.conn, rec.dir, rec.seq, rec.msg)
        if rec.msg is not None and not repeated:
            classify(o)
            self.run(o)
            if self.schema is not None:
                self._validate(o)
            return
        if rec.msg is None:
            o.shape = "invalid"
            o.problem = f"not a JSON object: {(rec.raw or '')[:60]!r}"
            o.keys = ("msg", "invalid", "problem")
        else:
            classify(o)
            if repeated:
                problem = f"repeated member name(s) {', '.join(sorted(set(repeated))[:3])}: readers disagree " \
                          "on which value counts"
                if o.problem is None:
                    o.keys += ("problem",)
                o.problem = problem if o.problem is None else f"{o.problem}; {problem}"
        self.run(o)

    def _validate(self, o: Obs) -> None:
        """--schema: the message against its dialect's official schema (a response: its request's method)."""
        problem = self.schema.problem(o.msg, o.dialect, o.answers)
        if problem is not None:
            self._report(_SCHEMA, violation((), f"{o.method or o.answers or o.shape} on {conn_name(o.conn)}: "
                                                f"{problem}", o.stamp))

    def internal(self, after: int, event: str, data: dict) -> None:
        if event == "close":
            self._close(data.get("conn"), after)
        else:
            self.run(internal_obs(event, data, after))

    def _release_closes(self, closes) -> None:
        """Close records: the connection ended (E10; the RFD: "the connection is lost: detected by the Client"), so
        its obligations end with it.  Choice (the RFD is silent): the closes at the very end of the capture that
        the *client* made are the end of that connection's recording, not a loss: :meth:`end` judges its
        obligations as at the end of a capture without close records (with ``--complete``, the agent was at rest
        when the client left).  A close by the agent (it exited) or of unknown origin ends them, as does any
        close that more traffic follows."""
        for rec in closes:
            self.line = rec.line
            if rec.conn not in self.labels:
                self._connection(rec.conn, rec.seq)
            self._close(rec.conn, rec.seq)
        self.held_closes = []

    def _close(self, conn, seq) -> None:
        """End a connection; its dialect stays reported (the front end forgets it)."""
        self.dialects_seen.update(self.fbook.dialect)
        self.run(close_obs(conn, seq))

    def _connection(self, label: str, seq: int) -> None:
        """A first record on ``cN.E`` closes the earlier ``cN.E'`` (the model reconnects after a cut)."""
        if label in self.labels:
            return
        self.labels.add(label)
        parsed = parse_conn_label(label)
        if parsed is None:
            return
        client, epoch = parsed
        kept = []
        for old, old_epoch in self.epochs.get(client, []):
            if old_epoch < epoch:
                self._close(old, seq)
            else:
                kept.append((old, old_epoch))
        self.epochs[client] = kept + [(label, epoch)]

    # -- findings ------------------------------------------------------------

    def _report(self, m, f) -> None:
        key = (m.name, f.level)
        n = self.counts.get(key, 0) + 1
        self.counts[key] = n
        if n <= MAX_PER_PROPERTY:
            self.found.append((m, f, self.line, self.messages, tuple(self.window) if f.level == VIOLATION else ()))

    def bad_line(self, err: CaptureError) -> None:
        self.found.append((_FORMAT, _problem(str(err), None), err.line, self.messages, ()))

    def end(self) -> None:
        self._release_closes([rec for rec in self.held_closes if rec.close != "client"])
        self.line = None
        for m, b in zip(self.monitors, self.books):
            for f in m.end(b, self.complete, self.fbook) or ():
                self._report(m, settle(f, self.complete))


def _any_of(fields):
    """``book.__dict__ -> bool``: whether any of ``fields`` (``(name, position)`` pairs) is non-empty.

    Made as one expression (``bool(d["a"] or d["b"])``): it runs after every call of an armed monitor.
    """
    test = " or ".join(f"d[{name!r}]" for name, _pos in fields)
    return eval(f"lambda d: bool({test})")  # noqa: S307 - the names are the monitors' own field names


def _refresher(arms):
    """``(book.__dict__, add, discard) -> None``: each of ``arms`` (``(arm, fields)``) live (``add(arm)``) when one of
    its fields is non-empty, else not (``discard(arm)``); one call after each call of the monitor, made as one
    expression like :func:`_any_of`."""
    parts = ", ".join(f"(add if ({' or '.join(f'd[{name!r}]' for name, _pos in fields)}) else discard)({arm})"
                      for arm, fields in arms)
    return eval(f"lambda d, add, discard: ({parts},)")  # noqa: S307 - the monitors' own field names, arm numbers


class _Format:
    name = "CaptureFormat"
    description = "every line of the capture is a capture record in seq order"


class _Failed:
    name = "Unjudgeable"
    description = "every message can be judged by every monitor"


class _SchemaConformance:
    name = "SchemaConformance"
    description = "every message validates against the official ACP schema given with --schema"


_SCHEMA = _SchemaConformance()
_FORMAT = _Format()
_FAILED = _Failed()


def _problem(text: str, o: Obs | None):
    return violation((), text, o.stamp if o is not None else None)


def check_capture(path, spec: str | None = None, *, complete: bool = False, internal=None,
                  switches: Switches | None = None, schema: str | None = None) -> TraceResult:
    """Check the capture at ``path``; ``spec`` None detects each connection's dialect from ``initialize``.

    ``internal`` names a sidecar of internal events; ``switches`` overrides
    the spec's choices (see :class:`~acplab.model.acp.rule_monitor.Switches`).
    ``result.windows`` holds the records before each violation.  A path
    ending in ``.itf.json`` is an ITF trace of wire records (:mod:`.itf`).
    """
    if is_itf(path):
        with itf_as_capture(path, internal) as (capture, events):
            result = check_capture(capture, spec, complete=complete, internal=events, switches=switches,
                                   schema=schema)
        if events is not None and internal is None:
            result.internal = f"{path} (its internal events)"
        for finding in result.violations + result.warnings:
            finding.line = None  # a line of the records rebuilt from the trace, not of the ITF file: seq says where
        return result
    was_collecting = gc.isenabled()
    gc.disable()  # the books hold no reference cycles; a collector walking a million entries costs a third of the time
    try:
        return _check(path, spec, complete, internal, switches, schema)
    finally:
        if was_collecting:
            gc.enable()


def readings(sw: Switches) -> dict:
    """The two places where the RFD and the 2.4.0 schema read differently, as ``sw`` takes them (the output says so).

    * message-ID scope (P5, U12): ``type`` (the schema's ``MessageId``: unique
      among messages of one type) or ``session`` (the RFD: "IDs are unique
      within the session");
    * unprefixed unknown stop reasons (W6): ``violation`` (the schema reserves
      them for ACP) or ``warning`` (the RFD: a client handles an unknown stop
      reason as a generic stop).
    """
    return {"message_id_scope": sw.id_scope,
            "unknown_stop_reason": VIOLATION if sw.strict_enums and sw.strict_stop_reasons else WARNING}


def _check(path, spec, complete, internal, switches, schema=None) -> TraceResult:
    tspec = get_trace_spec(spec or "rfd")
    sw = switches if switches is not None else tspec.switches
    sw = sw._replace(forced=spec is not None)
    started = time.perf_counter()
    name = str(path) if isinstance(path, (str, os.PathLike)) else str(getattr(path, "name", "<capture>"))
    kinds = sidecar_kinds(internal) if internal is not None else set()
    # a sidecar of close events alone feeds the wire monitors only: the internal ones would find nothing to stand on;
    # an empty one says that no internal event happened (a model's behaviour that inserts nothing)
    checker = TraceChecker(tspec, sw, internal is not None and (not kinds or bool(kinds - {"close"})), complete,
                       SchemaCheck(schema) if schema is not None else None)
    events = read_sidecar(internal) if internal is not None else iter(())
    pending = next(events, None)
    last_seq = 0
    seen_record = False
    record = checker.record
    for item, repeated in checker.read(path):
        if isinstance(item, CaptureError):
            if not seen_record:
                raise InputError(f"{item} (not a capture: the first record must be "
                                 '{"seq", "conn", "dir", "msg"})') from None
            checker.bad_line(item)
            continue
        seen_record = True
        last_seq = item.seq
        while pending is not None and pending[0] < last_seq:
            checker.internal(*pending)
            pending = next(events, None)
        record(item, repeated)  # (what feed does for a record)
    if not seen_record:
        raise InputError(f"{name}: empty capture: no records")
    while pending is not None:
        if pending[0] > last_seq:
            raise InputError(f"{internal}: an internal event ({pending[1]}) follows seq {pending[0]}, past the end "
                             f"of the capture (its last seq is {last_seq})")
        checker.internal(*pending)
        pending = next(events, None)
    checker.end()
    return checker.result(name, internal, started)


def _result(checker: TraceChecker, tspec: TraceSpec, name: str, internal, started: float) -> TraceResult:
    result = TraceResult(spec=tspec.name, path=name, complete=checker.complete, messages=checker.messages,
                         internal=None if internal is None else str(internal))
    result.readings = readings(checker.switches)
    result.checked = [(m.name, tuple(m.rules)) for m in checker.monitors]
    run = {m.name for m in checker.monitors}
    result.not_checkable = [(m.name, tuple(m.rules), tuple(m.events)) for m in make_monitors(checker.switches)
                            if m.name not in run]
    result.suppressed = {f"{n} ({level})": k - MAX_PER_PROPERTY for (n, level), k in checker.counts.items()
                         if k > MAX_PER_PROPERTY}
    dialects = {**checker.dialects_seen, **checker.fbook.dialect}
    result.dialects = {conn_name(c): d for c, d in dialects.items()}
    result.dialect_source = "--spec" if checker.switches.forced else "initialize" if dialects else "default"
    for m, f, line, n, window in checker.found:
        item = TraceViolation(m.name, f.rules, m.description, sorted(set(f.stamps)), line, f.text, n, level=f.level)
        if f.level == WARNING:
            result.warnings.append(item)
        else:
            result.violations.append(item)
            result.windows.append(window)
    result.seconds = time.perf_counter() - started
    return result
