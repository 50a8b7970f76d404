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

Ownership of the capture: ``--out F`` is opened without truncating and
locked (``flock``, exclusive, not waiting) before anything is checked or
written, so a second recorder of the same file is refused with one line and
the first one's records stay whole.

The end: after the child exits, the relay goes on while any process (a
grandchild) still holds the child's stdout open, up to
:data:`LINGER_SECONDS`; then the capture gets a close record for the
connection (``by``: ``client`` when our stdin ended first, else ``agent``;
``exit``: the child's exit status).  A line cut off by the end (no newline)
is recorded as ``raw`` with ``"partial": true``, never as a message.
``--append`` first closes the previous connections that have no close
record (``by: unknown``).
"""

from __future__ import annotations

import fcntl
import os
import signal
import stat
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
#: after the child exits: how long the relay waits for every holder of its stdout (a grandchild) to close it
LINGER_SECONDS = 10.0


class _Slot:
    """A line's place in the capture, reserved before it is relayed; ``ready`` once it may be written."""

    __slots__ = ("conn", "dir", "t", "data", "size", "ready", "partial")

    def __init__(self, conn: str, direction: str, data: bytes, size: int | None = None, partial: bool = False) -> None:
        self.conn = conn
        self.dir = direction
        self.t = 0.0
        self.data = data
        self.size = size  # set for an over-long line: its full length (``data`` is its head)
        self.ready = False
        self.partial = partial  # cut off by the end of the stream: no newline


class Recorder:
    """Splits each direction's bytes into lines and writes them to the capture in wire order.

    Thread-safe: the relay threads call :meth:`reserve` (before relaying a
    chunk) and :meth:`commit` (after), each for its own connection and
    direction (``conn`` is the first connection; :meth:`add_conn` adds more,
    all sharing one queue, so records of every connection are in wire order).  Nothing
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
        self._partial: dict[tuple[str, str], bytearray] = {}
        self._overflow: dict[tuple[str, str], int] = {}  # bytes of an over-long line beyond the head
        self.conns: list[str] = []
        self.add_conn(conn)
        self.closed = False
        self.records = 0
        self.failed: BaseException | None = None  # the capture could not be written (disk full, ...)
        self._on_failure = on_failure

    def add_conn(self, conn: str) -> None:
        """Record another connection (its lines get their own buffers, its end its own close record)."""
        self.conns.append(conn)
        for direction in (CLIENT_TO_AGENT, AGENT_TO_CLIENT):
            self._partial[conn, direction] = bytearray()
            self._overflow[conn, direction] = 0

    def _now(self) -> float:
        return self._t_offset + (self._clock() - self._t0) * 1000.0

    def _take(self, key: tuple[str, str], piece: bytes, end: bool) -> _Slot | None:
        """Add ``piece`` to the (connection, direction)'s current line; at ``end`` (a newline) the line's slot."""
        buf = self._partial[key]
        over = self._overflow[key]
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
        self._overflow[key] = over
        if not end:
            return None
        data = bytes(buf)
        buf.clear()
        self._overflow[key] = 0
        if over:
            return _Slot(*key, data, size=len(data) + over)
        return _Slot(*key, data) if data.strip() else None

    def reserve(self, direction: str, data: bytes, conn: str | None = None) -> list[_Slot]:
        """Take capture places for the complete lines in ``data`` (call before relaying it)."""
        key = (conn or self.conn, direction)
        slots = []
        start = 0
        while True:
            i = data.find(b"\n", start)
            slot = self._take(key, data[start:] if i < 0 else data[start:i], i >= 0)
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

    def end(self, direction: str, conn: str | None = None) -> list[_Slot]:
        """The direction reached EOF: a trailing line without its newline is recorded as a partial line."""
        slot = self._take((conn or self.conn, direction), b"", True)
        if slot is None:
            return []
        slot.partial = slot.size is None
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
                if slot.partial:
                    self.writer.write_partial(slot.conn, slot.dir, slot.data, t=slot.t)
                elif slot.size is None:
                    self.writer.write_line(slot.conn, slot.dir, slot.data, t=slot.t)
                else:
                    self.writer.write_oversize(slot.conn, slot.dir, slot.data, slot.size, t=slot.t)
                self.records += 1
            except Exception as err:  # noqa: BLE001 - never let the capture stop the relay
                self._fail(err)

    def _fail(self, err: BaseException) -> None:
        if self.failed is None:
            self.failed = err
            if self._on_failure is not None:
                self._on_failure(err, self.records)

    def close(self, by: str | dict[str, str] | None = None, **extra) -> None:
        """Record what is still buffered or in flight, then (``by`` given) each connection's close record, then close
        the capture.  ``by`` is one closer for every connection or a closer per connection."""
        for conn, direction in list(self._partial):
            self.commit(self.end(direction, conn))
        closers = by if isinstance(by, dict) else {conn: by for conn in self.conns} if by is not None else {}
        with self._lock:
            if self.closed:
                return
            for slot in self._queue:
                slot.ready = True
            self._flush_ready()
            for conn, closer in closers.items():
                if self.failed is None:
                    try:
                        self.writer.write_close(conn, closer, t=self._now(), **extra)
                    except Exception as err:  # noqa: BLE001 - a failed write stops the recording, never the relay
                        self._fail(err)
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
                 dst_close=None, conn: str | None = None) -> None:
        super().__init__(name=name, daemon=True)
        self.src, self.dst, self.direction, self.conn = src, dst, direction, conn
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
                slots = self._record(rec.reserve, self.direction, data, self.conn)
                if self.dst is not None:
                    try:
                        _write_all(self.dst, data)
                    except OSError:  # the reader is gone: keep draining and recording
                        self._close_dst()
                self._record(rec.commit, slots)
            self._record(lambda: rec.commit(rec.end(self.direction, self.conn)))
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


def check_out_path(out: str, *, append: bool, force: bool) -> tuple[int, float, str, list[str]]:
    """Refuse to clobber a non-empty capture. Returns ``(first seq, first t, conn label, open labels)`` for this run.

    ``--append`` continues the capture's seq and ``t``, and records this run as
    the next connection (``c2`` after ``c1``): a new proxy is a new connection,
    so its request ids must not be paired with the earlier run's (P19).  The
    earlier connections that have no close record are listed (``open
    labels``): this run closes them first.
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
        return 1, 0.0, "c1", []
    if not append:
        raise InputError(f"--out {out} exists and is not empty; use --append to add to it or --force to overwrite it")
    try:
        seq, t, conns, still_open = capture_tail(out)
    except InputError as err:
        raise InputError(f"cannot append to {out}: {err}") from None
    return seq + 1, t, next_conn_label(conns), sorted(still_open)


def lock_out(out: str) -> int:
    """Open ``out`` for writing without truncating it and lock it (exclusive, not waiting); return the descriptor.

    A second recorder of the same file is refused here, before it reads,
    truncates or writes anything.
    """
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    except OSError as err:
        raise InputError(f"--out {out}: cannot write: {err.strerror or err}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise InputError(f"--out {out}: another recorder is writing it (the file is locked)") from None
    return fd


def next_conn_label(conns) -> str:
    """``c(N+1)`` for the highest client N among the ``cN`` / ``cN.E`` labels (``c1`` if none)."""
    from acplab.model.wire.capture import parse_conn_label

    clients = [c[0] for c in map(parse_conn_label, conns) if c is not None]
    return f"c{max(clients, default=-1) + 2}"


def _ends_with_newline(path: str) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def _close_quietly(f) -> None:
    try:
        f.close()
    except OSError:
        pass


def exit_status(returncode: int) -> int:
    """A child's exit status as a shell reports it: killed by signal N -> 128+N."""
    return 128 - returncode if returncode < 0 else returncode


#: the child's ends of the extra connections' pipes are first moved at or above this descriptor, so that placing
#: them at the numbers the child expects can never overwrite one another
_PIPE_FLOOR = 64


def parse_conn_fds(text: str) -> tuple[int, int]:
    """``IN,OUT`` (two descriptor numbers, 3 to 63, different) for ``--conn-fds``; one clear line otherwise."""
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise InputError(f"--conn-fds {text!r}: expected IN,OUT (two file descriptor numbers, e.g. 3,4)")
    fin, fout = (int(p) for p in parts)
    if fin == fout or not all(3 <= fd < _PIPE_FLOOR for fd in (fin, fout)):
        raise InputError(f"--conn-fds {text!r}: IN and OUT must differ and lie in 3..{_PIPE_FLOOR - 1}")
    for fd in (fin, fout):
        try:
            os.fstat(fd)
        except OSError:
            raise InputError(f"--conn-fds {text!r}: descriptor {fd} is not open in this process") from None
    return fin, fout


def _extra_conn_pipes(fd_conns):
    """For each ``(IN, OUT)``: ``(proxy writes, child reads, child writes, proxy reads)`` descriptors, all
    close-on-exec and at or above :data:`_PIPE_FLOOR`."""
    def high(fd):
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _PIPE_FLOOR)
        os.close(fd)
        return moved

    ends = []
    for _ in fd_conns:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        ends.append((high(to_child_w), high(to_child_r), high(from_child_w), high(from_child_r)))
    return ends


def record(command: list[str], out: str, *, append: bool = False, force: bool = False, conn: str = "c1",
           stdin_fd: int = 0, stdout_fd: int = 1, fd_conns: tuple[tuple[int, int], ...] = ()) -> int:
    """Run ``command`` as a child, relay stdio through us, capture to ``out``. Returns the exit status.

    ``fd_conns``: more connections to the same child, one per ``(IN, OUT)``: what we read on our
    descriptor IN reaches the child on its descriptor IN, what the child writes on its OUT is written
    on our OUT; each is recorded as the next connection label (``c2``, ``c3``, ...), with its own
    close record.  One agent process serving several clients is recorded this way.
    """
    if not command:
        raise InputError("missing COMMAND: usage: acplab trace record --out FILE.jsonl -- COMMAND [ARGS...]")
    out = os.fspath(out)
    created = not os.path.exists(out)
    fd = lock_out(out) if not os.path.isdir(out) else None
    try:
        start_seq, t_offset, label, still_open = check_out_path(out, append=append, force=force)
    except InputError:
        if fd is not None:
            os.close(fd)
        if created and os.path.isfile(out) and os.path.getsize(out) == 0:
            os.unlink(out)
        raise
    conn = conn if start_seq == 1 else label
    appending = append and start_seq > 1
    try:
        if not appending:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.ftruncate(fd, 0)
        elif not _ends_with_newline(out):
            os.write(fd, b"\n")
        writer = CaptureWriter(os.fdopen(fd, "ab"), start_seq=start_seq)
    except OSError as err:
        os.close(fd)
        raise InputError(f"--out {out}: cannot write: {err.strerror or err}") from None
    for old in still_open:  # the earlier connections ended when their proxy did
        writer.write_close(old, "unknown", t=t_offset)

    pipes = _extra_conn_pipes(fd_conns)

    def place_extra_fds():  # in the child, before exec: its ends at the numbers it was told
        for (fin, fout), (_w, child_r, child_w, _r) in zip(fd_conns, pipes):
            os.dup2(child_r, fin)
            os.dup2(child_w, fout)

    try:
        child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, bufsize=0,
            process_group=0 if os.name == "posix" else None,
            pass_fds=tuple(fd for pair in fd_conns for fd in pair),
            preexec_fn=place_extra_fds if fd_conns else None,
        )
    except (OSError, ValueError) as err:
        for fds in pipes:
            for fd in fds:
                os.close(fd)
        writer.close()
        _close_quietly(writer.file)
        if created and os.path.getsize(out) == 0:
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

    pumps = {conn: (_Pump("client->agent", stdin_fd, child.stdin.fileno(), CLIENT_TO_AGENT, recorder,
                          dst_close=child.stdin.close),
                    _Pump("agent->client", child.stdout.fileno(), stdout_fd, AGENT_TO_CLIENT, recorder))}
    for (fin, fout), (proxy_w, child_r, child_w, proxy_r) in zip(fd_conns, pipes):
        os.close(child_r)
        os.close(child_w)
        extra = next_conn_label(recorder.conns)
        recorder.add_conn(extra)
        pumps[extra] = (_Pump(f"{extra} client->agent", fin, proxy_w, CLIENT_TO_AGENT, recorder,
                              dst_close=lambda fd=proxy_w: os.close(fd), conn=extra),
                        _Pump(f"{extra} agent->client", proxy_r, fout, AGENT_TO_CLIENT, recorder, conn=extra))
    for pair in pumps.values():
        for pump in pair:
            pump.start()
    returncode = None
    try:
        returncode = child.wait()
        # a connection whose client side had ended before the child exited was closed by its client
        closers = {c: "agent" if to_agent.is_alive() else "client" for c, (to_agent, _) in pumps.items()}
        # Relay the child's output while anyone holds it open (a grandchild), up to LINGER_SECONDS.
        deadline = time.monotonic() + LINGER_SECONDS
        for _, to_client in pumps.values():
            while to_client.is_alive() and time.monotonic() < deadline:
                to_client.join(0.1)
    finally:
        for sig, handler in old_handlers.items():
            try:
                signal.signal(sig, handler)
            except (OSError, ValueError):
                pass
        if returncode is None:
            recorder.close()
        else:
            recorder.close(closers, exit=exit_status(returncode))
        _close_quietly(writer.file)  # releases the lock; a failed last flush was already reported
    return exit_status(returncode)


__all__ = ["Recorder", "check_out_path", "exit_status", "parse_conn_fds", "record"]
