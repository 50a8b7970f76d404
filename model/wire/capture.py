"""The capture format (DESIGN.md, "Capture format"): recorded JSON-RPC traffic as JSON Lines.

One record per line, in wire order::

    {"seq": 12, "t": 31.5, "conn": "c1", "dir": "client->agent", "msg": {...}}

``seq`` is an increasing integer, ``t`` milliseconds (optional), ``conn`` a
connection id, ``dir`` ``client->agent`` or ``agent->client``, ``msg`` the raw
JSON-RPC object.

A connection's end is a record of its own, with ``close`` in place of
``dir`` and ``msg``::

    {"seq": 40, "t": 812.0, "conn": "c1", "close": {"by": "agent"}}

``by`` says who ended it when that is known: ``agent`` (the agent's output
closed or the process exited), ``client`` (the client closed the agent's
input) or ``unknown``; other members of ``close`` (``exit``: the agent's
exit status) are information.  Nothing is recorded on that connection after
it.  Readers accept captures without close records (a connection then stays
open to the end).

Byte-faithful recording (:meth:`CaptureWriter.write_line`): when a wire line
is a JSON object text (strict RFC 8259, :mod:`.jsontext`) its bytes are
embedded verbatim as the value of ``msg``, so the capture line is valid JSON
and the wire bytes are exactly the bytes between ``"msg":`` and the line's
closing ``}`` (:func:`message_bytes`): ``1E2``, ``1e400``, duplicate keys,
whitespace and a ``\r`` before the newline all survive.  Any other line is
kept as ``{"seq", "t", "conn", "dir", "raw": "<the line as text>", "error":
"not JSON"}`` (or ``"not a JSON object"``); a line that is not UTF-8 as
``"raw_base64"`` with ``"error": "not UTF-8"``.  Captures are JSON Lines split
on ``\n`` only (a ``\r`` inside a line is JSON whitespace): read them in
binary, never with universal newlines.

Reading is streaming: one line at a time, so a capture of any length reads in
constant memory (apart from the longest line), and lines have no length limit.
A message nested deeper than Python's parser recurses (about 900 levels) is a
bad line (``CaptureError``), not a crash; integers over 4,000 digits are read
as floats, and ``NaN`` / ``Infinity`` are not JSON.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from typing import IO, NamedTuple, Union

from acplab.model.errors import InputError

from . import jsontext

CLIENT_TO_AGENT = "client->agent"
AGENT_TO_CLIENT = "agent->client"
DIRECTIONS = (CLIENT_TO_AGENT, AGENT_TO_CLIENT)
#: short names for the two directions, as the model's events use them
C2A, A2C = CLIENT_TO_AGENT, AGENT_TO_CLIENT

_MODEL_CONN = re.compile(r"^c([1-9]\d*)(?:\.(\d+))?$")


def conn_label(conn) -> str:
    """The capture's name of a connection: a capture's own string as it is, or ``c1`` / ``c1.2``.

    A model connection is ``(client index, epoch)``: client 0's first connection
    is ``c1``, its connection after the second reconnect ``c1.2``.  This is the
    one place that names connections; traces, diagrams and monitors use it.
    """
    if isinstance(conn, str):
        return conn
    client, epoch = conn
    return f"c{client + 1}" + (f".{epoch}" if epoch else "")


def parse_conn_label(label: str) -> tuple[int, int] | None:
    """The model connection a ``cN`` / ``cN.E`` label names, or None for any other label."""
    m = _MODEL_CONN.match(label)
    return (int(m.group(1)) - 1, int(m.group(2) or 0)) if m else None

NOT_JSON = "not JSON"
#: who ended a connection, in a close record
CLOSED_BY = ("agent", "client", "unknown")

PathOrFile = Union[str, os.PathLike, IO]


class CaptureRecord(NamedTuple):
    """One captured message. ``msg`` is None for a raw (unparseable) line, then ``raw`` holds its text."""

    seq: int
    t: float | None
    conn: str
    dir: str
    msg: dict | None
    raw: str | None = None
    line: int = 0  # 1-based line number in the capture file (0: not read from a file)
    source: bytes | None = None  # the capture line as read (bytes, with its newline if it had one): faithful copies
    close: str | None = None  # a close record: who ended the connection (CLOSED_BY); then dir is "" and msg None

    def to_json(self) -> dict:
        """The record as the JSON object written to a capture line."""
        out: dict = {"seq": self.seq}
        if self.t is not None:
            out["t"] = self.t
        out["conn"] = self.conn
        if self.close is not None:
            out["close"] = {"by": self.close}
            return out
        out["dir"] = self.dir
        if self.msg is not None:
            out["msg"] = self.msg
        else:
            out["raw"] = self.raw if self.raw is not None else ""
            out["error"] = NOT_JSON
        return out


class CaptureError(InputError):
    """A bad capture line. ``str(err)`` is ``FILE:LINE: what is wrong``."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(f"{source}:{line}: {problem}")
        self.source = source
        self.line = line
        self.problem = problem


# --------------------------------------------------------------------------- reading


def _open_lines(path_or_file: PathOrFile) -> tuple[str, Iterator[bytes | str], IO | None]:
    """(name for messages, line iterator, file to close or None)."""
    if isinstance(path_or_file, (str, os.PathLike)):
        name = os.fspath(path_or_file)
        try:
            f = open(name, "rb")  # binary: split on b"\n" only, decode each line ourselves
        except OSError as err:
            raise InputError(f"{name}: cannot read capture: {err.strerror or err}") from None
        return name, iter(f), f
    name = getattr(path_or_file, "name", None)
    name = name if isinstance(name, str) else "<capture>"
    return name, iter(path_or_file), None


def _check(obj, name: str, lineno: int, prev_seq: int | None, source: bytes | None = None,
           _new=tuple.__new__) -> CaptureRecord:
    """Validate one parsed line; raise CaptureError on the first problem."""
    # NOTE: the common well-formed record first, cheaply (the trace checker reads millions of them)
    seq = obj.get("seq") if obj.__class__ is dict else None
    if seq.__class__ is int and (prev_seq is None or seq > prev_seq):
        conn, direction, msg, t = obj.get("conn"), obj.get("dir"), obj.get("msg"), obj.get("t")
        if conn.__class__ is str and msg.__class__ is dict and direction in DIRECTIONS and \
                (t is None or t.__class__ is int or (t.__class__ is float and -1e308 < t < 1e308)):
            return _new(CaptureRecord, (seq, None if t is None else float(t), conn, direction, msg, None, lineno,
                                        source, None))
    if not isinstance(obj, dict):
        raise CaptureError(name, lineno, f"not a capture record: expected a JSON object, got {_json_type(obj)}")
    if "seq" not in obj:
        raise CaptureError(name, lineno, "missing 'seq'")
    seq = obj["seq"]
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise CaptureError(name, lineno, f"'seq' must be an integer, got {_short(seq)}")
    t = obj.get("t")
    if t is not None and (not isinstance(t, (int, float)) or isinstance(t, bool)):
        raise CaptureError(name, lineno, f"'t' must be a number of milliseconds, got {_short(t)}")
    if t is not None and not math.isfinite(t):
        raise CaptureError(name, lineno, f"'t' must be a finite number of milliseconds, got {t}")
    if "conn" not in obj:
        raise CaptureError(name, lineno, "missing 'conn'")
    conn = obj["conn"]
    if not isinstance(conn, str):
        raise CaptureError(name, lineno, f"'conn' must be a string, got {_short(conn)}")
    if "close" in obj:
        return _close_record(obj, name, lineno, prev_seq, seq, t, conn, source)
    if "dir" not in obj:
        raise CaptureError(name, lineno, f"missing 'dir' (one of {', '.join(DIRECTIONS)})")
    direction = obj["dir"]
    if direction not in DIRECTIONS:
        raise CaptureError(name, lineno, f"unknown 'dir' {_short(direction)} (expected one of {', '.join(DIRECTIONS)})")
    raw = None
    if "msg" in obj:
        msg = obj["msg"]
        if not isinstance(msg, dict):
            raise CaptureError(name, lineno, f"'msg' must be a JSON object, got {_json_type(msg)}")
    elif "raw" in obj:
        msg = None
        raw = obj["raw"]
        if not isinstance(raw, str):
            raise CaptureError(name, lineno, f"'raw' must be a string, got {_json_type(raw)}")
    elif "raw_base64" in obj:
        msg = None
        try:
            raw = base64.b64decode(obj["raw_base64"], validate=True).decode("utf-8", errors="replace")
        except (TypeError, ValueError):
            raise CaptureError(name, lineno, "'raw_base64' must be a base64 string") from None
    else:
        raise CaptureError(name, lineno, "missing 'msg' (or 'raw' for a line that was not JSON)")
    if prev_seq is not None and seq <= prev_seq:
        raise CaptureError(name, lineno, f"seq {seq} out of order: not greater than the previous seq {prev_seq}")
    return CaptureRecord(seq, None if t is None else float(t), conn, direction, msg, raw, lineno, source)


def _close_record(obj: dict, name: str, lineno: int, prev_seq, seq: int, t, conn: str, source) -> CaptureRecord:
    """A connection's end: ``{"seq", "t", "conn", "close": {"by": "agent" | "client" | "unknown"}}``."""
    close = obj["close"]
    if not isinstance(close, dict) or close.get("by", "unknown") not in CLOSED_BY:
        raise CaptureError(name, lineno, f"'close' must be an object with 'by' one of {', '.join(CLOSED_BY)}, got "
                                         f"{_short(close)}")
    if "msg" in obj or "raw" in obj:
        raise CaptureError(name, lineno, "a close record carries no 'msg' or 'raw'")
    if prev_seq is not None and seq <= prev_seq:
        raise CaptureError(name, lineno, f"seq {seq} out of order: not greater than the previous seq {prev_seq}")
    return CaptureRecord(seq, None if t is None else float(t), conn, "", None, None, lineno, source,
                         close.get("by", "unknown"))


_BLANK = object()  # what _parse_strict returns for a blank line


def _parse_strict(line: bytes | str, loads, name: str, lineno: int):
    """A line that is not canonical (:func:`jsontext.canonical`): its value by ``loads``, ``_BLANK``, or the problem."""
    if isinstance(line, bytes):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as err:
            return CaptureError(name, lineno, f"not UTF-8 text (byte {err.start + 1})")
    else:
        text = line
    if not text.strip():
        return _BLANK
    try:
        return loads(text)
    except RecursionError as err:
        obj = _too_deep(text)  # a good record whose message is too deep to read: keep the record
        return CaptureError(name, lineno, f"not JSON ({_json_reason(err)})") if obj is None else obj
    except (ValueError, MemoryError) as err:
        return CaptureError(name, lineno, f"not JSON ({_json_reason(err)})")


def _iter(path_or_file: PathOrFile, lenient: bool, loads=None) -> Iterator[CaptureRecord | CaptureError]:
    loads = loads or loads_strict
    name, lines, to_close = _open_lines(path_or_file)
    prev_seq: int | None = None
    canonical = jsontext.canonical
    try:
        for lineno, line in enumerate(lines, 1):
            # NOTE: most lines are canonical (one msgspec decode, checked by re-encoding); the rest are read strictly
            obj = canonical(line) if line.__class__ is bytes else None
            if obj is None:
                obj = _parse_strict(line, loads, name, lineno)
                if obj is _BLANK:
                    continue
                if obj.__class__ is CaptureError:
                    if not lenient:
                        raise obj
                    yield obj
                    continue
            try:
                rec = _check(obj, name, lineno, prev_seq, line if isinstance(line, bytes) else None)
            except CaptureError as problem:
                if not lenient:
                    raise
                yield problem
                continue
            prev_seq = rec.seq
            yield rec
    finally:
        if to_close is not None:
            to_close.close()


def read_capture(path_or_file: PathOrFile) -> Iterator[CaptureRecord]:
    """Stream the records of a capture file (a path, or an open text or binary file).

    Raises :class:`CaptureError` (an ``InputError``) with ``FILE:LINE: problem``
    at the first bad line. Blank lines are skipped; an empty file yields nothing.
    """
    for item in _iter(path_or_file, lenient=False):
        yield item  # type: ignore[misc]  # never an error in strict mode


def iter_capture_lenient(path_or_file: PathOrFile, loads=None) -> Iterator[CaptureRecord | CaptureError]:
    """Like :func:`read_capture`, but yields a :class:`CaptureError` for each bad line and goes on.

    A record whose seq is not greater than the last good record's seq is reported
    and skipped; later records are compared with the last good one.  ``loads``
    parses one line (default :func:`loads_strict`; the trace checker's also
    notes repeated member names); a ``ValueError`` from it makes the line a
    bad line, a ``RecursionError`` keeps the record with its message as raw.
    """
    return _iter(path_or_file, lenient=True, loads=loads)


def capture_tail(path: str | os.PathLike) -> tuple[int, float, set[str], set[str]]:
    """``(last seq, last t, connection labels, labels without a close record)`` of a capture (0, 0.0, {}, {} if
    empty). Validates the whole file."""
    seq, t, conns, closed = 0, 0.0, set(), set()
    for rec in read_capture(path):
        seq = rec.seq
        t = rec.t if rec.t is not None else t
        conns.add(rec.conn)
        if rec.close is not None:
            closed.add(rec.conn)
    return seq, t, conns, conns - closed


def last_seq(path: str | os.PathLike) -> int:
    """The last seq of a capture file (0 if it has no records). Validates the whole file."""
    last = 0
    for rec in read_capture(path):
        last = rec.seq
    return last


def _int_or_float(digits: str):
    """JSON integers; beyond Python's 4,300-digit conversion limit, a float (so reading never fails)."""
    return int(digits) if len(digits) <= 4000 else float(digits)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)  # built once: json.loads with options builds one per call
_DECODER_ANY_INT = json.JSONDecoder(parse_constant=_no_constant, parse_int=_int_or_float)


def loads_strict(text: str | bytes):
    """``json.loads`` that refuses NaN/Infinity and reads any integer; may raise ValueError or RecursionError."""
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")
    try:
        return _DECODER.decode(text)
    except ValueError:  # perhaps an integer past Python's digit limit: read those as floats (slower, rare)
        return _DECODER_ANY_INT.decode(text)


def _too_deep(text: str) -> dict | None:
    """A record whose ``msg`` is a JSON object too deeply nested to read: the header, ``raw`` saying so."""
    i = text.find(',"msg":')
    if i < 0 or not text.rstrip().endswith("}"):
        return None
    body = text.rstrip()[i + 7:-1]
    if jsontext.scan(body) != "{":
        return None
    try:
        header = loads_strict(text[:i] + "}")
    except (ValueError, RecursionError):
        return None
    if not isinstance(header, dict):
        return None
    header["raw"] = f"(a JSON object nested too deeply to read, {len(body.encode('utf-8')):,} bytes)"
    return header


def message_bytes(line: bytes) -> bytes | None:
    """The wire bytes of a ``msg`` record as written by :meth:`CaptureWriter.write_line`, else None.

    The bytes between the first ``,"msg":`` (it cannot occur inside the
    header's strings, where quotes are escaped) and the closing ``}``.
    """
    line = line.rstrip(b"\n")
    i = line.find(b',"msg":')
    if i < 0 or not line.endswith(b"}"):
        return None
    return line[i + 7:-1]


# --------------------------------------------------------------------------- writing


def encode_record(obj: dict) -> bytes:
    """One capture line (compact JSON, UTF-8, not ASCII-escaped) with its newline.

    Raises ValueError for a non-finite float (``Infinity`` is not JSON).
    """
    try:
        return (json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates (from "\ud800" escapes): keep them escaped
        return (json.dumps(obj, ensure_ascii=True, separators=(",", ":"), allow_nan=False) + "\n").encode("ascii")


class CaptureWriter:
    """Appends records to a capture, one flushed line per record.

    ``target`` is a path (opened for writing, or appending when ``append``) or an
    open file (text or binary; not closed by :meth:`close`). Seq numbers are
    assigned in order starting at ``start_seq``. Usable as a context manager.
    """

    def __init__(self, target: PathOrFile, *, append: bool = False, start_seq: int = 1) -> None:
        self._own = isinstance(target, (str, os.PathLike))
        if self._own:
            self._f: IO = open(os.fspath(target), "ab" if append else "wb")
        else:
            self._f = target  # type: ignore[assignment]
        self._text = isinstance(self._f, io.TextIOBase)
        self.file = self._f  # the file written (a caller that passed its own closes it)
        self.next_seq = start_seq
        self.closed = False

    def _emit(self, obj: dict) -> None:
        self._emit_bytes(encode_record(obj))

    def _emit_bytes(self, data: bytes) -> None:
        if self._text:
            self._f.write(data.decode("utf-8"))
        else:
            self._f.write(data)
        self._f.flush()

    def write(self, conn: str, dir: str, msg: dict | None = None, raw: str | None = None,
              t: float | None = None, *, error: str = NOT_JSON) -> int:
        """Append one record and return its seq. Give ``msg`` (a dict) or ``raw`` (the line text)."""
        if (msg is None) == (raw is None):
            raise ValueError("give exactly one of msg and raw")
        if msg is not None and not isinstance(msg, dict):
            raise ValueError("msg must be a dict")
        obj = self._header(conn, dir, t)
        seq = obj["seq"]
        if msg is not None:
            obj["msg"] = msg
        else:
            obj["raw"] = raw
            obj["error"] = error
        self._emit(obj)
        self.next_seq = seq + 1
        return seq

    def _header(self, conn: str, dir: str, t: float | None) -> dict:
        if dir not in DIRECTIONS:
            raise ValueError(f"unknown dir {dir!r}")
        obj: dict = {"seq": self.next_seq}
        if t is not None:
            obj["t"] = round(float(t), 3)
        obj["conn"] = conn
        obj["dir"] = dir
        return obj

    def write_line(self, conn: str, dir: str, data: bytes, t: float | None = None) -> tuple[int, str]:
        """Append one wire line (bytes, without its newline), byte-faithfully; return ``(seq, kind)``.

        ``kind`` is :data:`jsontext.OBJECT` when ``data`` went in verbatim as
        ``msg``, else why it was kept as ``raw`` / ``raw_base64``.
        """
        header = self._header(conn, dir, t)
        kind = jsontext.classify(data)
        if kind == jsontext.OBJECT:
            head = json.dumps(header, ensure_ascii=False, separators=(",", ":"))[:-1]
            self._emit_bytes(head.encode("utf-8") + b',"msg":' + data + b"}\n")
        elif kind == jsontext.NOT_UTF8:
            header.update(raw_base64=base64.b64encode(data).decode("ascii"), error=kind)
            self._emit(header)
        else:
            header.update(raw=data.decode("utf-8"), error=kind)
            self._emit(header)
        seq = self.next_seq
        self.next_seq = seq + 1
        return seq, kind

    def write_close(self, conn: str, by: str = "unknown", t: float | None = None, **extra) -> int:
        """Append a close record: ``conn`` ended, ``by`` one of :data:`CLOSED_BY` (``extra``: e.g. ``exit``)."""
        if by not in CLOSED_BY:
            raise ValueError(f"unknown closer {by!r}")
        obj: dict = {"seq": self.next_seq}
        if t is not None:
            obj["t"] = round(float(t), 3)
        obj["conn"] = conn
        obj["close"] = {"by": by, **extra}
        self._emit(obj)
        seq = self.next_seq
        self.next_seq = seq + 1
        return seq

    def write_partial(self, conn: str, dir: str, data: bytes, t: float | None = None) -> int:
        """Append a line cut off without its newline (the stream ended): ``raw`` text, marked ``partial``."""
        header = self._header(conn, dir, t)
        header.update(raw=data.decode("utf-8", errors="replace"), error="partial line: the stream ended before its "
                                                                         "newline", partial=True)
        self._emit(header)
        seq = self.next_seq
        self.next_seq = seq + 1
        return seq

    def write_oversize(self, conn: str, dir: str, head: bytes, size: int, t: float | None = None) -> int:
        """Append a line too long to keep: its first bytes as ``raw`` and its length in ``bytes``."""
        header = self._header(conn, dir, t)
        text = head.decode("utf-8", errors="replace")
        header.update(raw=text, bytes=size, error=f"line too long ({size:,} bytes): only its first {len(head):,} kept")
        self._emit(header)
        seq = self.next_seq
        self.next_seq = seq + 1
        return seq

    def write_record(self, rec: CaptureRecord) -> int:
        """Append a record, keeping its seq if it is in order (else renumbering). Returns the seq written."""
        obj = rec.to_json()
        seq = rec.seq if isinstance(rec.seq, int) and rec.seq >= self.next_seq else self.next_seq
        obj["seq"] = seq
        self._emit(obj)
        self.next_seq = seq + 1
        return seq

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self._own:
                self._f.close()
            else:
                self._f.flush()

    def __enter__(self) -> "CaptureWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def dump_capture(records: Iterable[CaptureRecord | dict], path: str | os.PathLike) -> int:
    """Write records (CaptureRecord or capture-shaped dicts) to a new file at ``path``; return the count.

    Dicts are written as given (their seq must increase); CaptureRecords keep their seq when in order.
    """
    n = 0
    with open(os.fspath(path), "wb") as f:
        prev = None
        for rec in records:
            obj = rec.to_json() if isinstance(rec, CaptureRecord) else dict(rec)
            seq = obj.get("seq")
            renumbered = not isinstance(seq, int) or (prev is not None and seq <= prev)
            if renumbered:
                seq = (prev or 0) + 1
                obj = {"seq": seq, **{k: v for k, v in obj.items() if k != "seq"}}
            prev = seq
            f.write(_faithful_line(rec, obj) if isinstance(rec, CaptureRecord) and rec.source else encode_record(obj))
            n += 1
    return n


def _faithful_line(rec: CaptureRecord, obj: dict) -> bytes:
    """A record read from a capture, written back with its own bytes (only the header redone if renumbered)."""
    if obj["seq"] == rec.seq:
        return rec.source.rstrip(b"\n") + b"\n"
    wire_bytes = message_bytes(rec.source) if rec.msg is not None else None
    if wire_bytes is None:
        return encode_record(obj)
    header = {k: v for k, v in obj.items() if k != "msg"}
    return json.dumps(header, ensure_ascii=False, separators=(",", ":"))[:-1].encode("utf-8") + \
        b',"msg":' + wire_bytes + b"}\n"


# --------------------------------------------------------------------------- helpers


def _json_type(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"


def _short(v) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _json_reason(err: BaseException) -> str:
    if isinstance(err, RecursionError):
        return "nested too deeply to read: more than about 900 levels"
    if isinstance(err, MemoryError):
        return "too large to read into memory"
    msg = getattr(err, "msg", None)
    col = getattr(err, "colno", None)
    if msg and col:
        return f"{msg} at column {col}"
    return str(err).splitlines()[0]


__all__ = [
    "AGENT_TO_CLIENT", "CLIENT_TO_AGENT", "CLOSED_BY", "DIRECTIONS", "NOT_JSON", "CaptureError", "CaptureRecord",
    "CaptureWriter", "capture_tail", "dump_capture", "encode_record", "iter_capture_lenient", "last_seq", "loads_strict",
    "message_bytes", "read_capture",
]
