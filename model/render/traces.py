"""Text traces of a behaviour, and its wire log.

Two kinds of numbered trace, for two kinds of model:

* :func:`step_trace` (ACP): per step the action, then what crossed the wire
  and what happened inside, in protocol words (:mod:`.labels`);
* :func:`state_diff_trace` (any model, e.g. TwoPhase and the bridges): per
  step the action, then only the state fields it changed.

:func:`wire_records` is the capture-format log of a path (DESIGN.md), so any
counterexample can be fed back to ``acplab trace check``.
"""

from __future__ import annotations

from acplab.model import wire
from acplab.model.wire.capture import conn_label

from .labels import describe_event
from .statediff import diff, display


def step_trace(model, steps, title: str, violation: str | None = None, loop_start: int | None = None,
               visible: str | None = None) -> str:
    """Numbered steps: the action, then what crossed the wire and happened inside.

    ``loop_start`` (a lasso: the state the last step returns to, 0 being the
    initial state) marks where the part that repeats forever begins;
    ``visible`` says where the wire log alone shows the violation.
    """
    lines = [title, ""]
    for n, (action, events) in enumerate(steps, 1):
        if loop_start is not None and n == loop_start + 1:
            span = f"step {n} repeats" if n == len(steps) else f"steps {n}-{len(steps)} repeat"
            lines.append(f"     -- from here {span} forever --")
        lines.append(f"{n:3d}. {model.format_action(action)}")
        for e in events:
            text = describe_event(e)
            if text:
                lines.append(f"       {text}")
    if loop_start is not None:
        lines.append(f"     -- back to the state after step {loop_start}, for ever --")
    if violation:
        lines += ["", f"violation: {violation}"]
    if visible:
        lines.append(visible)
    return "\n".join(lines) + "\n"


def wire_steps(steps) -> list[int]:
    """The step number of each record :func:`wire_records` writes, in order."""
    return [n for n, (_action, events) in enumerate(steps, 1) for e in events if e.kind == "send" and not e.lost]


def wire_records(steps, times_ms=None) -> list[dict]:
    """The capture-format records of every message put on a live connection, in order.

    ``t`` is the step number, or ``times_ms[n]`` for step ``n`` when given (a simulated run's clock).
    """
    out = []
    seq = 0
    for n, (_action, events) in enumerate(steps, 1):
        t = float(n) if times_ms is None else round(times_ms[n - 1], 3)
        for e in events:
            if e.kind == "send" and not e.lost:
                seq += 1
                out.append({"seq": seq, "t": t, "conn": conn_label(e.conn), "dir": e.dir, "msg": wire.encode(e.msg)})
    return out


def state_changes(before, after, names=None) -> list[str]:
    """What a step changed, one line per field (see :func:`.statediff.diff`)."""
    return diff(before, after, names)


def state_diff_trace(model, path, title: str) -> str:
    """A numbered trace: per step, the action and only what it changed."""
    lines = [title, "", f"0. initial state: {display(path.initial)}"]
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
