"""The one progress display of every long command (``check``, ``simulate``, ``matrix``, ``sweep``, ``figures``).

On a terminal it is a rich progress bar on stderr that disappears when the
command ends; when stderr is not a terminal (a CI log, a file) it is one
plain line every :data:`PLAIN_EVERY` seconds, so a long run in a log shows
it is alive, and a short one prints nothing.  ``-q`` (and ``--json``) turn it
off; stdout never changes.

What a line shows: for the explorer the states, states per second, the
frontier still to expand, the depth and the time so far (a breadth-first
search cannot know how many states remain, so no estimate); for counted
work (runs, points, variants' runs, figure parts) done of total, the rate,
the time so far and, once something is done, the time left at the rate so
far.  The plain interval is a choice (the RFD is silent): 10 s, or
``ACPLAB_PROGRESS_SECONDS``.
"""

from __future__ import annotations

import os
import sys
import time

from acplab.model.engine import Stats

#: seconds between two plain lines when stderr is not a terminal (ACPLAB_PROGRESS_SECONDS overrides)
PLAIN_EVERY = 10.0


def clock(seconds: float) -> str:
    """``65.0`` -> ``'1:05'``; an hour or more -> ``'1:01:05'``."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def progress_line(stats: Stats) -> str:
    """States, their rate, the frontier still to expand, the depth and the time so far, on one line.

    >>> progress_line(Stats(states=120_000, transitions=0, depth=14, queue=3_500, seconds=65.0))
    'states 120,000  1,846/s  frontier 3,500  depth 14  elapsed 1:05'
    """
    rate = stats.states / stats.seconds if stats.seconds else 0.0
    return (f"states {stats.states:,}  {rate:,.0f}/s  frontier {stats.queue:,}  depth {stats.depth}  "
            f"elapsed {clock(stats.seconds)}")


def count_line(unit: str, done: int, total: int | None, seconds: float, now_doing: str = "") -> str:
    """Counted work: done of total, the rate, elapsed, and the time left at the rate so far once one is done.

    >>> count_line("runs", 40, 100, 20.0)
    '40/100 runs  2.0/s  elapsed 0:20  about 0:30 left'
    >>> count_line("parts", 2, 5, 90.0)
    '2/5 parts  45 s each  elapsed 1:30  about 2:15 left'
    >>> count_line("parts", 0, 5, 3.0, "scenarios")
    '0/5 parts  elapsed 0:03  (scenarios)'
    """
    parts = [f"{done:,}/{total:,} {unit}" if total is not None else f"{done:,} {unit}"]
    if done and seconds:  # a rate, or the time per item when that reads better (figure parts take minutes)
        parts.append(f"{done / seconds:,.1f}/s" if done >= seconds else f"{seconds / done:,.0f} s each")
    parts.append(f"elapsed {clock(seconds)}")
    if done and total is not None and done < total and seconds:
        parts.append(f"about {clock(seconds / done * (total - done))} left")
    if now_doing:
        parts.append(f"({now_doing})")
    return "  ".join(parts)


def plain_every() -> float:
    """The plain interval: :data:`PLAIN_EVERY`, or ``ACPLAB_PROGRESS_SECONDS`` when that is a positive number."""
    try:
        value = float(os.environ.get("ACPLAB_PROGRESS_SECONDS", ""))
    except ValueError:
        return PLAIN_EVERY
    return value if value > 0 else PLAIN_EVERY


class Progress:
    """The display of one command; a context manager.  ``what`` names the command (``check``, ``figures``).

    Feed it with :meth:`stats` (the explorer's callback) or :meth:`count`
    (done of total, e.g. the simulator's and the executors' callbacks), or
    :meth:`part` (the next named part of a fixed number of parts).
    """

    def __init__(self, what: str, unit: str = "", total: int | None = None, *, quiet: bool = False, stream=None,
                 terminal: bool | None = None, every: float | None = None, now=time.monotonic):
        self.what, self.unit, self.total = what, unit, total
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.terminal = (self.stream.isatty() if terminal is None else terminal) and not quiet
        self.every = plain_every() if every is None else every
        self.now = now
        self.started = now()
        self.next_plain = self.started + self.every
        self.done = 0
        self.doing = ""
        self._bar = self._task = None

    def __enter__(self) -> Progress:
        if self.terminal:
            from rich.console import Console
            from rich.progress import BarColumn, Progress as Bar, TextColumn

            self._bar = Bar(TextColumn(f"{self.what}"), BarColumn(), TextColumn("{task.fields[line]}"),
                            console=Console(file=self.stream, stderr=self.stream is sys.stderr), transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.what, total=self.total, line="")
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None

    def _show(self, line: str, completed: float | None = None, total: float | None = None) -> None:
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.update(self._task, line=line, completed=completed, total=total)
            return
        if self.terminal:  # used without `with`: nothing to draw on
            return
        now = self.now()
        if now >= self.next_plain:
            self.next_plain = now + self.every
            print(f"{self.what}: {line}", file=self.stream, flush=True)

    def stats(self, stats: Stats) -> None:
        """The explorer's callback: states, rate, frontier, depth, elapsed."""
        self._show(progress_line(stats))

    def count(self, done: int, total: int | None = None) -> None:
        """Counted work: ``done`` of ``total`` (or of the total given at the start)."""
        self.done = done
        if total is not None:
            self.total = total
        self._show(count_line(self.unit, done, self.total, self.now() - self.started, self.doing), done, self.total)

    def part(self, name: str) -> None:
        """Starting the next part, ``name``, of :attr:`total` parts (the one before it is done)."""
        if self.doing:
            self.done += 1
        self.doing = name
        self.count(self.done)
