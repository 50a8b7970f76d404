"""The agent under test as a child process: newline-delimited JSON-RPC over its stdio.

The child runs in its own process group (``start_new_session``), so ending a
run ends everything the agent started (:meth:`AgentProcess.end`: close its
stdin, wait a grace period, then SIGTERM and SIGKILL to the group).  Its
stderr goes to a file in the output folder (kept for the report: exit 3
quotes its tail).  One reader thread splits stdout into lines and queues
them; a line longer than ``max_line`` is queued by its head and size (a
flooding agent cannot exhaust memory on one line).

A second connection (``second``: the name of an environment variable) is a
pair of pipes the agent inherits, named to it as ``IN,OUT`` file
descriptors in that variable (the SDK agent's ``ACP_CORPUS_CONN_FDS``);
its lines are queued with ``conn`` 1.  Choice: the agent is told through
its environment, as an editor hands an agent its stdio; nothing in ACP
names how a second client reaches a running agent.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time

MAX_LINE = 4 << 20
HEAD = 1024


class Line:
    """One line the agent wrote: its bytes (without the newline), or its head when ``size`` is set (over-long)."""

    __slots__ = ("t", "data", "size", "conn")

    def __init__(self, t: float, data: bytes, size: int | None = None, conn: int = 0) -> None:
        self.t, self.data, self.size, self.conn = t, data, size, conn


class AgentNotStarted(Exception):
    """The command could not be started at all (not found, not executable)."""


class AgentProcess:
    """A running agent; ``lines`` yields :class:`Line` objects and finally ``None`` (stdout closed)."""

    def __init__(self, command: list[str], stderr_path, env: dict | None = None, cwd=None,
                 max_line: int = MAX_LINE, second: str | None = None) -> None:
        self.max_line = max_line
        self._stderr = open(stderr_path, "ab")
        self.second = None  # (to the agent, from the agent): the second connection's pipe ends, kept here
        pass_fds: tuple[int, ...] = ()
        if second is not None:  # a second connection: two pipes, the agent's ends named in env[second] as "IN,OUT"
            to_r, to_w = os.pipe()
            from_r, from_w = os.pipe()
            pass_fds = (to_r, from_w)
            env = {**(env if env is not None else os.environ), second: f"{to_r},{from_w}"}
        try:
            self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                         start_new_session=True, env=env, cwd=cwd, bufsize=0, pass_fds=pass_fds)
        except OSError as err:
            self._stderr.close()
            if second is not None:
                os.close(to_w)
                os.close(from_r)
            raise AgentNotStarted(f"cannot start {command[0]!r}: {err.strerror or err}") from None
        finally:
            for fd in pass_fds:  # the agent's ends: its own now (or nobody's)
                os.close(fd)
        if second is not None:
            self.second = (os.fdopen(to_w, "wb", buffering=0), os.fdopen(from_r, "rb", buffering=0))
        self.lines: queue.Queue[Line | None] = queue.Queue()
        self.t0 = time.monotonic()
        self._readers = [threading.Thread(target=self._read, args=(self.proc.stdout, 0), name="agent-stdout",
                                          daemon=True)]
        if self.second is not None:
            self._readers.append(threading.Thread(target=self._read, args=(self.second[1], 1), name="agent-conn2",
                                                  daemon=True))
        for reader in self._readers:
            reader.start()

    def _read(self, out, conn: int) -> None:
        """Queue each line of ``out`` (connection ``conn``); stdout's end queues None (the second's: nothing)."""
        head, size = b"", 0
        try:
            while True:
                chunk = out.readline(self.max_line)
                if not chunk:
                    break
                if size or (len(chunk) == self.max_line and not chunk.endswith(b"\n")):
                    head, size = (head or chunk[:HEAD]), size + len(chunk)
                    if chunk.endswith(b"\n"):
                        self.lines.put(Line(time.monotonic(), head, size, conn))
                        head, size = b"", 0
                    continue
                data = chunk[:-1] if chunk.endswith(b"\n") else chunk
                if data.strip():
                    self.lines.put(Line(time.monotonic(), data, None, conn))
        except (OSError, ValueError):
            pass
        finally:
            if size:
                self.lines.put(Line(time.monotonic(), head, size, conn))
            if conn == 0:
                self.lines.put(None)

    def send(self, data: bytes, conn: int = 0) -> bool:
        """Write one line on connection ``conn``; False when the agent's end is closed (it exited)."""
        pipe = self.proc.stdin if conn == 0 or self.second is None else self.second[0]
        try:
            pipe.write(data + b"\n")
            pipe.flush()
            return True
        except (OSError, ValueError):
            return False

    def alive(self) -> bool:
        return self.proc.poll() is None

    def end(self, grace: float = 1.0) -> int | None:
        """Close the agent's stdin (as an editor does), then end its process group; returns its exit status."""
        for pipe in (self.proc.stdin,) + ((self.second[0],) if self.second else ()):
            try:
                pipe.close()
            except (OSError, ValueError):
                pass
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGTERM)
            try:
                self.proc.wait(0.5)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.proc.wait()
        self._signal_group(signal.SIGKILL)  # whatever the agent left running in its group
        for reader in self._readers:
            reader.join(1.0)
        if self.second is not None:
            self.second[1].close()
        self._stderr.close()
        return self.proc.returncode

    def _signal_group(self, sig) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError, OSError):
            pass
