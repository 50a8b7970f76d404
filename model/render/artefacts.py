"""Files for a behaviour: a numbered text trace, its wire log (capture JSONL) and a Mermaid diagram.

One writer for ``check`` (counterexamples), ``simulate`` (violating runs) and
``figures``; output folders are fresh, never an existing non-empty one.
"""

from __future__ import annotations

from pathlib import Path as FsPath

from acplab.model.wire.capture import dump_capture

from .bridgeview import bridge_mermaid, bridge_records, bridge_trace, path_events
from .mermaid import mermaid
from .traces import step_trace, wire_records

#: what :func:`write_behaviour` can write, by file suffix
KINDS = ("txt", "jsonl", "mmd")


def fresh_out_dir(base: str | None, stem: str) -> FsPath:
    """A new folder for artefacts: ``base`` itself if given and empty, else a numbered one.

    Never overwrites: an existing non-empty ``base`` gets a numbered sibling.
    """
    root = FsPath(base) if base else FsPath("acplab-out") / stem
    if not root.exists() or (root.is_dir() and not any(root.iterdir())):
        root.mkdir(parents=True, exist_ok=True)
        return root
    for n in range(2, 10_000):
        candidate = root.with_name(f"{root.name}-{n}")
        if not candidate.exists():
            candidate.mkdir(parents=True)
            return candidate
    raise RuntimeError(f"no free output folder next to {root}")


def write_behaviour(base: FsPath, model, steps, title: str, violation: tuple[str, str] | None = None,
                    rules=(), times_ms=None, kinds=KINDS, loop_start: int | None = None) -> list[str]:
    """Write ``base``.txt / .jsonl / .mmd (those in ``kinds``) for ``steps`` (``[(action, events)]``).

    ``violation`` is ``(property name, sentence)``; ``times_ms`` gives each
    step's time for the wire log (default: the step number); ``loop_start``
    marks a lasso's repeating part in the trace and the diagram.
    """
    parts = {
        "txt": lambda: step_trace(model, steps, title, violation[1] if violation else None, loop_start),
        "jsonl": lambda: wire_records(steps, times_ms),
        "mmd": lambda: mermaid(steps, model.bounds.clients, title, violation, rules, loop_start),
    }
    return write_parts(base, {k: parts[k] for k in KINDS if k in kinds})


def write_bridge_behaviour(base: FsPath, model, path, title: str, violation: tuple[str, str] | None = None,
                           rules=()) -> list[str]:
    """The same three files for a run of a v1 <-> v2 bridge model."""
    steps = path_events(path)
    return write_parts(base, {
        "txt": lambda: bridge_trace(model, steps, title, violation[1] if violation else None),
        "jsonl": lambda: bridge_records(steps),
        "mmd": lambda: bridge_mermaid(model, steps, title, violation, rules),
    })


def write_parts(base: FsPath, parts: dict) -> list[str]:
    """``base.<suffix>`` for each ``suffix -> make()``: text, or capture records for ``jsonl``."""
    written = []
    for suffix, make in parts.items():
        path = base.with_suffix(f".{suffix}")
        content = make()
        if suffix == "jsonl":
            dump_capture(content, path)
        else:
            path.write_text(content, encoding="utf-8")
        written.append(str(path))
    return written
