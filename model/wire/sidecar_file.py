"""Writing a sidecar of internal events (the format: :mod:`acplab.model.trace.sidecar`), for every layer that
writes one beside a wire log."""

from __future__ import annotations

import json


def write_sidecar(events, path) -> int:
    """Write ``(after, event, fields)`` triples as a sidecar, one JSON object a line; return the count."""
    n = 0
    with open(str(path), "w", encoding="utf-8") as f:
        for after, event, fields in events:
            f.write(json.dumps({"after": after, "event": event, **fields}, separators=(",", ":")) + "\n")
            n += 1
    return n
