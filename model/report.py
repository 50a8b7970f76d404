"""Turning exploration results into text, JSON and files (model-independent parts)."""

from __future__ import annotations

import json
import sys
from pathlib import Path as FsPath

from acplab.model.engine import Path, Result, Stats


def state_changes(before, after) -> list[str]:
    """``field: old -> new`` for each field of a NamedTuple state that changed."""
    fields = getattr(after, "_fields", None)
    if fields is None or type(before) is not type(after):
        return [f"state: {after!r}"]
    return [_change(name, old, new) for name, old, new in zip(fields, before, after) if old != new]


def _change(name: str, old, new) -> str:
    """``name: old -> new``, or only what was appended when a tuple grew at its end."""
    if isinstance(old, tuple) and isinstance(new, tuple) and len(new) > len(old) and new[: len(old)] == old:
        return f"{name}: + {', '.join(repr(x) for x in new[len(old):])}"
    return f"{name}: {old!r} -> {new!r}"


def text_trace(model, path: Path, title: str) -> str:
    """A numbered trace: per step, the action and only what it changed."""
    lines = [title, "", f"0. initial state: {path.initial!r}"]
    prev = path.initial
    for n, (action, state) in enumerate(path.steps, 1):
        lines.append(f"{n}. {model.format_action(action)}")
        describe = getattr(model, "describe_step", None)
        changes = describe(prev, action, state) if describe else state_changes(prev, state)
        lines.extend(f"     {c}" for c in changes)
        prev = state
    if path.loop_start is not None:
        lines.append(f"   (loops back to the state after step {path.loop_start})")
    return "\n".join(lines) + "\n"


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


def exit_code(verdict: str) -> int:
    return {"holds": 0, "violated": 1, "incomplete": 3}[verdict]


def print_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
