"""Where a model behaviour's violation becomes visible on the wire.

A counterexample's violation may be internal (an insertion, an ID assigned
in advance): the model sees it at a step that puts nothing on the wire.
:func:`wire_visibility` judges the behaviour's wire log *alone* (no internal
events, not declared complete: a prefix of a run) with the trace checker and
names the first finding there, preferring one that shares a rule with the
model's violation.  The text trace then says at which step the wire shows
it, or that the wire log alone never does.
"""

from __future__ import annotations

import io
import json

from .check import check_capture


def wire_visibility(records: list[dict], rules=()) -> tuple[int, str, tuple[str, ...]] | None:
    """``(capture line, property, rules)`` of the first violation ``trace check`` finds in ``records`` judged
    without internal events (one sharing a rule in ``rules`` if there is one), or None when the wire log alone
    shows none."""
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    found = [v for v in check_capture(io.StringIO(text)).violations if v.line is not None]
    if not found:
        return None
    related = [v for v in found if set(v.rules) & set(rules)]
    first = min(related or found, key=lambda v: v.line)
    return first.line, first.property, tuple(first.rules)


__all__ = ["wire_visibility"]
