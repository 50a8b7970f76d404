"""Exploration results as the JSON object of the command-line contract, and JSON on stdout."""

from __future__ import annotations

import json
import sys
from acplab.model.engine import Result, Stats


def result_json(result: Result, **extra) -> dict:
    """The JSON object of the command-line contract (DESIGN.md)."""
    stats: Stats = result.stats
    out = dict(extra)
    out.update(
        verdict=result.verdict,
        complete=result.complete,
        states=stats.states,
        transitions=stats.transitions,
        depth=stats.depth,
        seconds=round(stats.seconds, 3),
        limit=result.limit,
    )
    return out


def print_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
