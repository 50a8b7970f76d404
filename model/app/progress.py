"""A progress line on stderr for long runs; silent when stderr is not a terminal."""

from __future__ import annotations

import sys

from acplab.model.engine import Stats


def explorer_progress(quiet: bool):
    """A callback for :func:`model.explore.explore`, or None when it should stay quiet."""
    if quiet or not sys.stderr.isatty():
        return None
    from rich.console import Console

    console = Console(stderr=True)

    def show(stats: Stats) -> None:
        rate = stats.states / stats.seconds if stats.seconds else 0.0
        console.print(
            f"states {stats.states:,}  {rate:,.0f}/s  queue {stats.queue:,}  depth {stats.depth}",
            end="\r", highlight=False, soft_wrap=True,
        )

    return show
