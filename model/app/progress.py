"""A progress line on stderr for long runs; silent when stderr is not a terminal."""

from __future__ import annotations

import sys

from acplab.model.engine import Stats


def progress_line(stats: Stats) -> str:
    """States, their rate, the frontier still to expand, the depth and the time so far, on one line.

    >>> progress_line(Stats(states=120_000, transitions=0, depth=14, queue=3_500, seconds=65.0))
    'states 120,000  1,846/s  frontier 3,500  depth 14  elapsed 1:05'
    """
    rate = stats.states / stats.seconds if stats.seconds else 0.0
    minutes, seconds = divmod(int(stats.seconds), 60)
    return (f"states {stats.states:,}  {rate:,.0f}/s  frontier {stats.queue:,}  depth {stats.depth}  "
            f"elapsed {minutes}:{seconds:02d}")


def explorer_progress(quiet: bool):
    """A callback for the explorer, or None when it should stay quiet."""
    if quiet or not sys.stderr.isatty():
        return None
    from rich.console import Console

    console = Console(stderr=True)

    def show(stats: Stats) -> None:
        console.print(progress_line(stats), end="\r", highlight=False, soft_wrap=True)

    return show
