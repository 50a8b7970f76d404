"""``acplab trace record``: a transparent stdio proxy that captures ACP traffic.

An editor launches ``acplab trace record --out FILE.jsonl -- AGENT [ARGS...]`` in
place of the agent. The proxy starts the agent as a child process and relays
bytes unchanged: our stdin to the child's stdin, the child's stdout to our
stdout (the child's stderr is our stderr, inherited). One thread per direction
reads raw file descriptors with ``os.read`` and writes with ``os.write`` (so
nothing is buffered in between). A copy of each newline-delimited message is
appended to the capture (DESIGN.md, "Capture format"), one flushed line per
record, ``conn`` "c1", ``t`` in milliseconds since the proxy started.

Byte-faithful both ways: the relay never parses what it relays, and the
capture keeps each line's exact bytes (a JSON object text verbatim as
``msg``, anything else as ``raw``; :meth:`CaptureWriter.write_line`).  Blank
lines are relayed but not recorded.  A line over :data:`MAX_LINE_BYTES` is
relayed in full and recorded by its size and first bytes.  If the capture
cannot be written (disk full, ``/dev/full``), one line on stderr says so,
the relay goes on, and the exit status is still the child's.

Order: a message gets its place in the capture *before* its last byte is
relayed, so a reply can never be recorded ahead of the message that caused
it. Lines over 64 KB are checked as JSON after the relay, off the hot path;
records are written (and flushed) right after each relayed chunk.

The child's exit status is ours (killed by signal N: 128+N). SIGINT, SIGTERM
and SIGHUP sent to the proxy are forwarded to the child (which runs in its own
process group, so a terminal's Ctrl-C reaches it once, through us).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections import deque

from acplab.model.wire.capture import AGENT_TO_CLIENT, CLIENT_TO_AGENT, CaptureWriter, capture_tail
from acplab.model.errors import InputError

READ_SIZE = 1 << 18
EAGER_BYTES = 1 << 16  # lines up to this size are classified before relaying, longer ones after
#: a longer line is relayed in full but recorded by its size and first bytes only (the recorder holds at most
#: this much of one line per direction; checking it as JSON may briefly need several times as much)
MAX_LINE_BYTES = 64 << 20
HEAD_BYTES = 1024  # what an over-long line keeps
FORWARDED_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
DRAIN_IDLE_SECONDS = 2.0  # after the child exits: stop waiting for its stdout after this long without data


class _Slot:
    """A line's place in the capture, reserved before it is relayed; ``ready`` once it may be written."""

    __slots__ = ("dir", "t", "data", "size", "ready")

    def __init__(self, direction: str, data: bytes, size: int | None = None) -> None:
        self.dir = direction
        self.t = 0.0
        self.data = data
        self.size = size  # set for an over-long line: its full length (``data`` is its head)
        self.ready = False


class Recorder:
    """Splits each direction's bytes into lines and writes them to the capture in wire order.

    Thread-safe: the two relay threads call :meth:`reserve` (before relaying a
    chunk) and :meth:`commit` (after), each for its own direction.  Nothing
    here parses a line for the relay's sake: a line's bytes go into the capture
    as they are (:meth:`CaptureWriter.write_line`), and any failure to write
    the capture stops the recording, never the relay (``failed``, reported once
    through ``on_failure``).
    """

    def __init__(self, writer: CaptureWriter, conn: str = "c1", clock=time.monotonic, t_offset: float = 0.0,
                 on_failure=None) -> None:
        self.writer = writer
        self.conn = conn
        self._clock = clock
        self._t0 = clock()
        self._t_offset = t_offset
        self._lock = threading.Lock()
        self._queue: deque[_Slot] = deque()
        self._partial = {CLIENT_TO_AGENT: bytearray(), AGENT_TO_CLIENT: bytearray()}
        self._overflow = {CLIENT_TO_AGENT: 0, AGENT_TO_CLIENT: 0}  # bytes of an over-long line beyond the head
        self.closed = False
        self.records = 0
        self.failed: BaseException | None = None  # the capture could not be written (disk full, ...)
        self._on_failure = on_failure

    def _now(self) -> float:
        return self._t_offset + (self._clock() - self._t0) * 1000.0

    def _take(self, direction: str, piece: bytes, end: bool) -> _Slot | None:
        """Add ``piece`` to the direction's current line; at ``end`` (a newline) the line's slot."""
        buf = self._partial[direction]
        over = self._overflow[direction]
        if over:
            over += len(piece)
        elif len(buf) + len(piece) > MAX_LINE_BYTES:
            total = len(buf) + len(piece)
            if len(buf) < HEAD_BYTES:
                buf += piece[: HEAD_BYTES - len(buf)]
            del buf[HEAD_BYTES:]
            over = total - len(buf)
        else:
            buf += piece
        self._overflow[direction] = over
        if not end:
            return None
        data = bytes(buf)
        buf.clear()
        self._overflow[direction] = 0
        if over:
            return _Slot(direction, data, size=len(data) + over)
        return _Slot(direction, data) if data.strip() else None

    def reserve(self, direction: str, data: bytes) -> list[_Slot]:
        """Take capture places for the complete lines in ``data`` (call before relaying it)."""
        slots = []
        start = 0
        while True:
            i = data.find(b"\n", start)
            slot = self._take(direction, data[start:] if i < 0 else data[start:i], i >= 0)
            if i < 0:
                break
            if slot is not None:
                slots.append(slot)
            start = i + 1
        if not slots:
            return []
        for slot in slots:  # small lines are ready at once, so a stalled relay holds up no record
            if len(slot.data) <= EAGER_BYTES:
                slot.ready = True
        with self._lock:
            if self.closed:
                return []
            t = self._now()
            for slot in slots:
                slot.t = t
            self._queue.extend(slots)
            return slots

    def end(self, direction: str) -> list[_Slot]:
        """The direction reached EOF: a trailing partial line becomes a message."""
        slot = self._take(direction, b"", True)
        if slot is None:
            return []
        with self._lock:
            if self.closed:
                return []
            slot.t = self._now()
            self._queue.append(slot)
            return [slot]

    def commit(self, slots: list[_Slot]) -> None:
        """The reserved lines were relayed: write out every record that is next in line."""
        if not slots:
            return
        for slot in slots:
            slot.ready = True
        with self._lock:
            self._flush_ready()

    def _flush_ready(self) -> None:
        q = self._queue
        while q and q[0].ready and not self.closed:
            slot = q.popleft()
            if self.failed is not None:
                continue
            try:
                if slot.size is None:
                    self.writer.write_line(self.conn, slot.dir, slot.data, t=slot.t)
                else:
                    self.writer.write_oversize(self.conn, slot.dir, slot.data, slot.size, t=slot.t)
                self.records += 1
            except Exception as err:  # noqa: BLE001 - never let the capture stop the relay
                self._fail(err)

    def _fail(self, err: BaseException) -> None:
        if self.failed is None:
            self.failed = err
            if self._on_failure is not None:
                self._on_failure(err, self.records)

    def close(self) -> None:
        """Record what is still buffered or in flight, then close the capture."""
        for direction in (CLIENT_TO_AGENT, AGENT_TO_CLIENT):
            self.commit(self.end(direction))
        with self._lock:
            if self.closed:
                return
            for slot in self._queue:
                slot.ready = True
            self._flush_ready()
            self.closed = True
            try:
                self.writer.close()
            except Exception as err:  # noqa: BLE001 - a failed last flush is a write failure like any other
                self._fail(err)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class _Pump(threading.Thread):
    """Relays one direction: read ``src`` fd, reserve capture places, write ``dst`` fd, commit."""

    def __init__(self, name: str, src: int, dst: int | None, direction: str, recorder: Recorder,
                 dst_close=None) -> None:
        super().__init__(name=name, daemon=True)
        self.src, self.dst, self.direction = src, dst, direction
        self.recorder = recorder
        self.dst_close = dst_close  # called at EOF of src (and when dst breaks)
        self.in_read = False
        self.last_data = time.monotonic()
        self.bytes = 0

    def run(self) -> None:
        rec = self.recorder
        try:
            while True:
                self.in_read = True
                try:
                    data = os.read(self.src, READ_SIZE)
                except OSError:
                    data = b""
                self.in_read = False
                self.last_data = time.monotonic()
                if not data:
                    break
                self.bytes += len(data)
                slots = self._record(rec.reserve, self.direction, data)
                if self.dst is not None:
                    try:
                        _write_all(self.dst, data)
                    except OSError:  # the reader is gone: keep draining and recording
                        self._close_dst()
                self._record(rec.commit, slots)
            self._record(lambda: rec.commit(rec.end(self.direction)))
        finally:
            self.in_read = False
            self._close_dst()

    def _record(self, step, *args):
        """A recorder call that cannot stop the relay: a failure ends the recording, not the pump."""
        try:
            return step(*args)
        except Exception as err:  # noqa: BLE001
            self.recorder._fail(err)
            return []

    def _close_dst(self) -> None:
        self.dst = None
        if self.dst_close is not None:
            close, self.dst_close = self.dst_close, None
            try:
                close()
            except OSError:
                pass


def check_out_path(out: str, *, append: bool, force: bool) -> tuple[int, float, str]:
    """Refuse to clobber a non-empty capture. Returns ``(first seq, first t, conn label)`` for this run.

    ``--append`` continues the capture's seq and ``t``, and records this run as
    the next connection (``c2`` after ``c1``): a new proxy is a new connection,
    so its request ids must not be paired with the earlier run's (P19).
    """
    if append and force:
        raise InputError("--append and --force cannot be used together")
    if os.path.isdir(out):
        raise InputError(f"--out {out}: is a directory")
    try:
        size = os.path.getsize(out)
    except OSError:
        size = 0
    if size == 0 or force:
        return 1, 0.0, "c1"
    if not append:
        raise InputError(f"--out {out} exists and is not empty; use --append to add to it or --force to overwrite it")
    try:
        seq, t, conns = capture_tail(out)
    except InputError as err:
        raise InputError(f"cannot append to {out}: {err}") from None
    return seq + 1, t, next_conn_label(conns)


def next_conn_label(conns) -> str:
    """``c(N+1)`` for the highest client N among the ``cN`` / ``cN.E`` labels (``c1`` if none)."""
    from acplab.model.wire.capture import parse_conn_label

    clients = [c[0] for c in map(parse_conn_label, conns) if c is not None]
    return f"c{max(clients, default=-1) + 2}"


def _ends_with_newline(path: str) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def exit_status(returncode: int) -> int:
    """A child's exit status as a shell reports it: killed by signal N -> 128+N."""
    return 128 - returncode if returncode < 0 else returncode


def record(command: list[str], out: str, *, append: bool = False, force: bool = False, conn: str = "c1",
           stdin_fd: int = 0, stdout_fd: int = 1) -> int:
    """Run ``command`` as a child, relay stdio through us, capture to ``out``. Returns the exit status."""
    if not command:
        raise InputError("missing COMMAND: usage: acplab trace record --out FILE.jsonl -- COMMAND [ARGS...]")
    out = os.fspath(out)
    start_seq, t_offset, label = check_out_path(out, append=append, force=force)
    conn = conn if start_seq == 1 else label
    appending = append and start_seq > 1
    try:
        if appending and not _ends_with_newline(out):
            with open(out, "ab") as f:
                f.write(b"\n")
        writer = CaptureWriter(out, append=appending, start_seq=start_seq)
    except OSError as err:
        raise InputError(f"--out {out}: cannot write: {err.strerror or err}") from None

    try:
        child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, bufsize=0,
            process_group=0 if os.name == "posix" else None,
        )
    except (OSError, ValueError) as err:
        writer.close()
        if not appending and os.path.getsize(out) == 0:
            os.unlink(out)
        reason = getattr(err, "strerror", None) or str(err)
        raise InputError(f"cannot start {command[0]!r}: {reason}") from None

    def report(err: BaseException, records: int) -> None:  # one line, once; the relay goes on
        reason = getattr(err, "strerror", None) or str(err)
        line = f"acplab: error: --out {out}: cannot write the capture ({reason}) after {records} record(s); " \
               f"relaying goes on, recording stopped\n"
        try:
            os.write(2, " ".join(line.split()).encode("utf-8", "replace") + b"\n")
        except OSError:
            pass

    recorder = Recorder(writer, conn=conn, t_offset=t_offset, on_failure=report)
    old_handlers = {}

    def forward(signum, frame):
        try:
            child.send_signal(signum)
        except OSError:
            pass

    if threading.current_thread() is threading.main_thread():
        for sig in FORWARDED_SIGNALS:
            try:
                old_handlers[sig] = signal.signal(sig, forward)
            except (OSError, ValueError):
                pass

    to_agent = _Pump("client->agent", stdin_fd, child.stdin.fileno(), CLIENT_TO_AGENT, recorder,
                     dst_close=child.stdin.close)
    to_client = _Pump("agent->client", child.stdout.fileno(), stdout_fd, AGENT_TO_CLIENT, recorder)
    to_agent.start()
    to_client.start()
    try:
        returncode = child.wait()
        # Drain the child's stdout; give up only if it stays silent (a grandchild may hold it open).
        while to_client.is_alive():
            to_client.join(0.1)
            if to_client.in_read and time.monotonic() - to_client.last_data > DRAIN_IDLE_SECONDS:
                break
    finally:
        for sig, handler in old_handlers.items():
            try:
                signal.signal(sig, handler)
            except (OSError, ValueError):
                pass
        recorder.close()
    return exit_status(returncode)


__all__ = ["Recorder", "check_out_path", "exit_status", "record"]
