"""``acplab trace record``: a transparent stdio proxy that captures ACP traffic.

An editor launches ``acplab trace record --out FILE.jsonl -- AGENT [ARGS...]`` in
place of the agent. The proxy starts the agent as a child process and relays
bytes unchanged: our stdin to the child's stdin, the child's stdout to our
stdout (the child's stderr is our stderr, inherited). One thread per direction
reads raw file descriptors with ``os.read`` and writes with ``os.write`` (so
nothing is buffered in between). A copy of each newline-delimited message is
appended to the capture (DESIGN.md, "Capture format"), one flushed line per
record, ``conn`` "c1", ``t`` in milliseconds since the proxy started.

Order: a message gets its place in the capture *before* its last byte is
relayed, so a reply can never be recorded ahead of the message that caused
it. Long messages (over 64 KB) are parsed after the relay, off the hot path;
records are written (and flushed) right after each relayed chunk.

The child's exit status is ours (killed by signal N: 128+N). SIGINT, SIGTERM
and SIGHUP sent to the proxy are forwarded to the child (which runs in its own
process group, so a terminal's Ctrl-C reaches it once, through us).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections import deque

from acplab.model.wire.capture import AGENT_TO_CLIENT, CLIENT_TO_AGENT, NOT_JSON, CaptureWriter, last_seq
from acplab.model.errors import InputError

READ_SIZE = 1 << 18
EAGER_PARSE_BYTES = 1 << 16  # lines up to this size are parsed before relaying, longer ones after
FORWARDED_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
DRAIN_IDLE_SECONDS = 2.0  # after the child exits: stop waiting for its stdout after this long without data


class _Slot:
    """A message's place in the capture, reserved before it is relayed, filled after."""

    __slots__ = ("dir", "t", "data", "obj", "raw", "error", "ready")

    def __init__(self, direction: str, t: float, data: bytes) -> None:
        self.dir = direction
        self.t = t
        self.data = data
        self.obj = None
        self.raw = None
        self.error = NOT_JSON
        self.ready = False

    def parse(self) -> None:
        if self.ready:
            return
        data = self.data
        try:
            obj = json.loads(data.decode("utf-8"))
        except ValueError:  # includes UnicodeDecodeError
            obj = None
        if isinstance(obj, dict):
            self.obj = obj
        else:
            text = data.decode("utf-8", errors="replace")
            self.raw = text[:-1] if text.endswith("\r") else text
            self.error = NOT_JSON if obj is None else "not a JSON object"
        self.data = b""
        self.ready = True


class Recorder:
    """Splits each direction's bytes into lines and writes them to the capture in wire order.

    Thread-safe: the two relay threads call :meth:`reserve` (before relaying a
    chunk) and :meth:`commit` (after), each for its own direction.
    """

    def __init__(self, writer: CaptureWriter, conn: str = "c1", clock=time.monotonic) -> None:
        self.writer = writer
        self.conn = conn
        self._clock = clock
        self._t0 = clock()
        self._lock = threading.Lock()
        self._queue: deque[_Slot] = deque()
        self._partial = {CLIENT_TO_AGENT: bytearray(), AGENT_TO_CLIENT: bytearray()}
        self.closed = False
        self.records = 0
        self.failed: BaseException | None = None  # the capture could not be written (disk full, ...)

    def _now(self) -> float:
        return (self._clock() - self._t0) * 1000.0

    def reserve(self, direction: str, data: bytes) -> list[_Slot]:
        """Take capture places for the complete lines in ``data`` (call before relaying it)."""
        buf = self._partial[direction]
        lines = []
        start = 0
        while True:
            i = data.find(b"\n", start)
            if i < 0:
                buf += data[start:]
                break
            if buf:
                line = bytes(buf) + data[start:i]
                buf.clear()
            else:
                line = data[start:i]
            if line.strip():
                lines.append(line)
            start = i + 1
        if not lines:
            return []
        slots = [_Slot(direction, 0.0, line) for line in lines]
        for slot in slots:  # small messages: parse now (microseconds), so a stalled relay holds up no record
            if len(slot.data) <= EAGER_PARSE_BYTES:
                slot.parse()
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
        buf = self._partial[direction]
        if not buf.strip():
            buf.clear()
            return []
        line = bytes(buf)
        buf.clear()
        with self._lock:
            if self.closed:
                return []
            slot = _Slot(direction, self._now(), line)
            self._queue.append(slot)
            return [slot]

    def commit(self, slots: list[_Slot]) -> None:
        """Parse the reserved messages and write out every record that is next in line."""
        if not slots:
            return
        for slot in slots:
            slot.parse()
        with self._lock:
            self._flush_ready()

    def _flush_ready(self) -> None:
        q = self._queue
        while q and q[0].ready and not self.closed:
            slot = q.popleft()
            if self.failed is not None:
                continue
            try:
                if slot.obj is not None:
                    self.writer.write(self.conn, slot.dir, msg=slot.obj, t=slot.t)
                else:
                    self.writer.write(self.conn, slot.dir, raw=slot.raw, t=slot.t, error=slot.error)
                self.records += 1
            except (OSError, ValueError) as err:  # never let the capture stop the relay
                self.failed = err

    def close(self) -> None:
        """Record what is still buffered or in flight, then close the capture."""
        for direction in (CLIENT_TO_AGENT, AGENT_TO_CLIENT):
            self.commit(self.end(direction))
        with self._lock:
            if self.closed:
                return
            for slot in self._queue:
                slot.parse()
            self._flush_ready()
            self.closed = True
            self.writer.close()


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
                slots = rec.reserve(self.direction, data)
                if self.dst is not None:
                    try:
                        _write_all(self.dst, data)
                    except OSError:  # the reader is gone: keep draining and recording
                        self._close_dst()
                rec.commit(slots)
            rec.commit(rec.end(self.direction))
        finally:
            self.in_read = False
            self._close_dst()

    def _close_dst(self) -> None:
        self.dst = None
        if self.dst_close is not None:
            close, self.dst_close = self.dst_close, None
            try:
                close()
            except OSError:
                pass


def check_out_path(out: str, *, append: bool, force: bool) -> int:
    """Refuse to clobber a non-empty capture. Returns the seq to start from."""
    if append and force:
        raise InputError("--append and --force cannot be used together")
    if os.path.isdir(out):
        raise InputError(f"--out {out}: is a directory")
    try:
        size = os.path.getsize(out)
    except OSError:
        size = 0
    if size == 0:
        return 1
    if force:
        return 1
    if not append:
        raise InputError(f"--out {out} exists and is not empty; use --append to add to it or --force to overwrite it")
    try:
        return last_seq(out) + 1
    except InputError as err:
        raise InputError(f"cannot append to {out}: {err}") from None


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
    start_seq = check_out_path(out, append=append, force=force)
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

    recorder = Recorder(writer, conn=conn)
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
