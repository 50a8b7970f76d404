"""Live judging for ``acplab test``: ``trace check``'s monitors fed each capture record as it is written.

The capture writer's file is a :class:`TeeFile`: every record line goes to
the capture file and, at once, through the capture reader into the same
checker ``trace check`` runs (the reader and checker of
:class:`acplab.model.trace.check.TraceChecker`, not a copy of their rules), so a
violation is known at the message that makes it, not after the run.  At
the run's end :meth:`LiveJudge.finish` settles the obligations and gives
the :class:`~acplab.model.trace.check.TraceResult` ``check_capture`` would
give for the same file (the same reader, the same monitors, the same order).

Choice (RFD silent; ``--stop-early``): a run stopped at its first
violation is judged as *incomplete* (``trace check`` without
``--complete``): obligations left open because the run was cut short are
not the agent's fault.
"""

from __future__ import annotations

import time
from collections import deque

from acplab.model.acp.rule_monitor import VIOLATION
from acplab.model.trace.check import TraceChecker, TraceResult, get_trace_spec


class _Lines:
    """An endless line source for the capture reader: each ``next`` takes the line pushed last."""

    name = "<live capture>"

    def __init__(self) -> None:
        self.queue: deque[bytes] = deque()

    def __iter__(self):
        return self

    def __next__(self) -> bytes:
        return self.queue.popleft()  # only called right after a push (one record per line)


class LiveJudge:
    """One run's checker; :meth:`feed` a record line, read :attr:`violations` as they come."""

    def __init__(self, name: str, spec: str = "rfd") -> None:
        self.tspec = get_trace_spec(spec)
        self.name = name
        self.started = time.perf_counter()
        self.checker = TraceChecker(self.tspec, self.tspec.switches._replace(forced=False), False, True)
        self.lines = _Lines()
        self.records = self.checker.read(self.lines)
        self.reported = 0  # how many of the checker's findings were looked at
        self.violations: list[tuple[str, tuple[str, ...], str, int]] = []  # (property, rules, text, message n)

    def feed(self, line: bytes) -> list[tuple[str, tuple[str, ...], str, int]]:
        """Judge one capture line (a record, with its newline); the violations it made."""
        self.lines.queue.append(line)
        self.checker.feed(*next(self.records))
        return self._new()

    def _new(self) -> list[tuple[str, tuple[str, ...], str, int]]:
        found = self.checker.found
        new = [(m.name, tuple(f.rules), f.text, n) for m, f, _line, n, _w in found[self.reported:]
               if f.level == VIOLATION]
        self.reported = len(found)
        self.violations += new
        return new

    def finish(self, complete: bool = True) -> TraceResult:
        """The obligations settled (``complete``: as ``trace check --complete``); the whole verdict."""
        self.checker.complete = complete
        self.checker.end()
        self._new()
        return self.checker.result(self.name, None, self.started)


class TeeFile:
    """A binary file for :class:`~acplab.model.wire.capture.CaptureWriter`: each line to disk and to a judge."""

    def __init__(self, path, on_line) -> None:
        self.file = open(path, "wb")
        self.on_line = on_line

    def write(self, data: bytes) -> int:
        self.file.write(data)
        self.on_line(data)
        return len(data)

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        self.file.close()
