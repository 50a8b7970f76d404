"""Exploration results as the JSON object of the command-line contract, JSON on stdout, terminal-safe text."""

from __future__ import annotations

import errno
import json
import math
import re
import sys
import tempfile
from acplab.model.engine import Result, Stats
from .schemas import stamped

_printed = False

#: what a terminal may act on: C0/C1 controls (ESC starts ANSI sequences), DEL, line and paragraph
#: separators, and the bidirectional overrides that reorder what is shown
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: str) -> str:
    """``text`` with every control character escaped (``\\x1b``, ``\\n``...): one plain line, no ANSI.

    Examples
    --------
    >>> terminal_text("a\\nb\\x1b[31mred")
    'a\\\\nb\\\\x1b[31mred'
    """
    return _UNSAFE.sub(_escape_char, text)


def _escape_char(m: re.Match) -> str:
    c = m.group(0)
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if c in named:
        return named[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


#: what to do about an error that leaves no file writable
_WRITE_HINTS = {errno.EFBIG: "a file size limit (ulimit -f) was reached", errno.ENOSPC: "the disk is full",
                errno.EDQUOT: "the disk quota is used up"}


def os_error_text(err: OSError) -> str:
    """One line for an operating-system error: the file (or the worker) and the reason; for a write that ran
    out of room without naming its file (the search's spill files), where such files go and why it failed."""
    reason = err.strerror or str(err)
    if err.filename:
        return f"{err.filename}: {reason}"
    hint = _WRITE_HINTS.get(err.errno)
    if hint:
        return (f"{reason} while writing the search's temporary files (in {tempfile.gettempdir()} or the "
                f"--checkpoint folder): {hint}")
    return reason


def reset() -> None:
    """Forget that a JSON object was printed (one command run starts)."""
    global _printed
    _printed = False


def printed() -> bool:
    """Whether this command run already printed its JSON object."""
    return _printed


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


def coverage_json(result: Result, unused=()) -> dict:
    """The ``coverage`` object of ``check --json`` (definitions in :mod:`acplab.model.engine.search_coverage`).

    ``actions``: transitions per action kind; ``properties``: per property its
    ``expectation`` and the states it was ``evaluated`` on, ``armed`` on (null:
    the property has no notion of it) and ``violated`` (0 or 1); ``vacuous``:
    the properties evaluated but never armed nor violated; ``warnings``: a
    sentence for each of ``unused`` (what the bounds allow and no transition
    did), then one per vacuous property.
    """
    cov = result.coverage
    where = "" if result.complete else " (the search stopped early)"
    warnings = list(unused)
    for evaluated, names in _by_count(cov.vacuous, cov.properties).items():
        states = "state" if evaluated == 1 else "states"
        if len(names) == 1:
            warnings.append(f"{names[0]} was never armed in {evaluated:,} explored {states}{where}: it holds "
                            "vacuously (nothing it watches happened)")
        else:
            warnings.append(f"{', '.join(names)} were never armed in {evaluated:,} explored {states}{where}: "
                            f"these {len(names)} hold vacuously (nothing they watch happened)")
    return {"actions": dict(cov.actions), "properties": {n: c.json() for n, c in cov.properties.items()},
            "vacuous": cov.vacuous, "warnings": warnings}


def _by_count(names, properties) -> dict[int, list[str]]:
    """Vacuous properties grouped by the states they were evaluated on (one sentence per group)."""
    out: dict[int, list[str]] = {}
    for name in names:
        out.setdefault(properties[name].evaluated, []).append(name)
    return out


def print_json(obj) -> None:
    """One JSON object on stdout; non-finite floats become null (``Infinity`` is not JSON)."""
    global _printed
    _printed = True
    json.dump(_finite(stamped(obj)), sys.stdout, indent=2, sort_keys=False, allow_nan=False)
    sys.stdout.write("\n")
    sys.stdout.flush()


def _finite(obj):
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj
