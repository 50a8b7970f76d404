"""Runs of the v1 <-> v2 bridge models as the ACP model's runs are shown: a story, a wire log, Mermaid.

A bridge state holds four FIFO channels (client -> bridge, bridge -> agent,
agent -> bridge, bridge -> client) and a log; :func:`bridge_events` reads a
step's sends, its delivery and what the bridge withheld off the difference of
two states.  On the wire there are two connections, named as a capture names
them: ``client-bridge`` (the bridge plays the agent) and ``bridge-agent`` (the
bridge plays the client), so a counterexample's ``.jsonl`` reads like traffic
recorded on both sides of a real bridge.

The Mermaid diagram follows the ACP docs' conventions as the ACP model's
does (:mod:`.mermaid`): participants ``Client (v2)``, ``Bridge`` and
``Agent (v1)`` (or the reverse versions), responses dashed and requests and
notifications solid whichever way they go, messages as the docs write them
(``session/prompt (id=1, "hi")``), notes and long titles wrapped, never
clipped.  The text story keeps the trace style (``session/prompt #1``).
"""

from __future__ import annotations

from typing import NamedTuple

from acplab.model import wire
from acplab.model.acp.events import A2C, C2A

from .labels import describe, docs_label
from .mermaid import arrow, escape, headed, wrapped

#: channel -> (sender, receiver, connection, direction on that connection)
CHANNELS = {
    "c2b": ("client", "bridge", "client-bridge", C2A),
    "b2a": ("bridge", "agent", "bridge-agent", C2A),
    "a2b": ("agent", "bridge", "bridge-agent", A2C),
    "b2c": ("bridge", "client", "client-bridge", A2C),
}
IDS = {"client": "C", "bridge": "B", "agent": "A"}


class BridgeEvent(NamedTuple):
    """``kind`` is "deliver", "send" or "withhold" (the bridge kept a message from the client)."""

    kind: str
    channel: str | None
    msg: object


def versions(model) -> dict[str, str]:
    """Which ACP version each end speaks: the bridge joins a v2 client to a v1 agent, or the reverse."""
    v1_agent = "V1Agent" in type(model).__name__
    return {"client": "v2" if v1_agent else "v1", "agent": "v1" if v1_agent else "v2"}


def bridge_versions(model) -> dict[str, int]:
    """The protocol version spoken on each of the bridge's two connections (for the wire log's preamble)."""
    v = versions(model)
    return {"client-bridge": int(v["client"][1:]), "bridge-agent": int(v["agent"][1:])}


def bridge_events(before, action, after) -> list[BridgeEvent]:
    """What one step did: the delivery it made, the messages it put on channels, what was withheld."""
    out = [BridgeEvent("deliver", action.channel, getattr(before, action.channel)[0])] if action.channel else []
    for ch in CHANNELS:
        kept = getattr(before, ch)[1:] if action.channel == ch else getattr(before, ch)
        out += [BridgeEvent("send", ch, m) for m in getattr(after, ch)[len(kept):]]
    out += [BridgeEvent("withhold", None, m) for e, m in after.log[len(before.log):] if e == "bridge_dropped"]
    return out


def path_events(path) -> list[tuple[object, list[BridgeEvent]]]:
    """``(action, events)`` for every step of a bridge path."""
    states = path.states()
    return [(action, bridge_events(states[n], action, states[n + 1])) for n, (action, _s) in enumerate(path.steps)]


def describe_event(e: BridgeEvent, names: dict[str, str]) -> str:
    if e.kind == "withhold":
        return f"bridge withholds {describe(e.msg)} from the client"
    src, dst, _conn, _dir = CHANNELS[e.channel]
    if e.kind == "deliver":
        return f"{names[dst]} receives {describe(e.msg)}"
    return f"{names[src]} -> {names[dst]}  sends {describe(e.msg)}"


def party_names(model) -> dict[str, str]:
    v = versions(model)
    return {"client": f"client ({v['client']})", "bridge": "bridge", "agent": f"agent ({v['agent']})"}


def bridge_trace(model, steps, title: str, violation: str | None = None) -> str:
    """The numbered story of a bridge run, as :func:`.traces.step_trace` tells an ACP run."""
    names = party_names(model)
    lines = [title, ""]
    for n, (action, events) in enumerate(steps, 1):
        lines.append(f"{n:3d}. {model.format_action(action)}")
        lines += [f"       {describe_event(e, names)}" for e in events]
    if violation:
        lines += ["", f"violation: {violation}"]
    return "\n".join(lines) + "\n"


def bridge_records(steps) -> list[dict]:
    """Capture records (``t`` the step number) of every message put on a channel, both connections."""
    out = []
    for n, (_action, events) in enumerate(steps, 1):
        for e in events:
            if e.kind == "send":
                _src, _dst, conn, direction = CHANNELS[e.channel]
                out.append({"seq": len(out) + 1, "t": float(n), "conn": conn, "dir": direction,
                            "msg": wire.encode(e.msg)})
    return out


def docs_names(model) -> dict[str, str]:
    """The lifelines as the ACP docs name them, with the version each end speaks: ``Client (v2)``, ``Bridge``, ..."""
    v = versions(model)
    return {"client": f"Client ({v['client']})", "bridge": "Bridge", "agent": f"Agent ({v['agent']})"}


def bridge_mermaid(model, steps, title: str = "", violation: tuple[str, str] | None = None, rules=()) -> str:
    """A sequence diagram of client, bridge and agent: arrows at delivery, in-flight ones at their send.

    Responses are dashed, requests and notifications solid, in either direction (the ACP docs' convention).
    """
    names = docs_names(model)
    lines = headed(title, "C,A")
    if "sequenceDiagram" not in lines:
        lines.append("sequenceDiagram")
    at = lines.index("sequenceDiagram") + 1
    lines[at:at] = [f"    participant {IDS[p]} as {escape(names[p])}" for p in ("client", "bridge", "agent")]
    delivered = _delivered_sends(steps)
    for n, (_action, events) in enumerate(steps):
        for i, e in enumerate(events):
            if e.kind == "withhold":
                lines.append(f"    Note over B: {wrapped('withholds ' + docs_label(e.msg))}")
                continue
            src, dst, _conn, _direction = CHANNELS[e.channel]
            if e.kind == "deliver":
                lines.append(f"    {arrow(IDS[src], IDS[dst], e.msg)}: {escape(docs_label(e.msg))}")
            elif (n, i) not in delivered:
                lines.append(f"    {arrow(IDS[src], IDS[dst], e.msg, ')')}: "
                             f"{escape(docs_label(e.msg) + ' (in flight)')}")
    if violation is not None:
        name, sentence = violation
        rule_text = f" [{', '.join(rules)}]" if rules else ""
        lines += ["    rect rgb(255, 220, 220)", f"    Note over C,A: {wrapped(f'✗ {name}{rule_text}: {sentence}')}",
                  "    end"]
    return "\n".join(lines) + "\n"


def _delivered_sends(steps) -> set[tuple[int, int]]:
    """The sends (step, event index) a later delivery took off their channel (FIFO per channel)."""
    queues: dict[str, list] = {ch: [] for ch in CHANNELS}
    done = set()
    for n, (_action, events) in enumerate(steps):
        for i, e in enumerate(events):
            if e.kind == "send":
                queues[e.channel].append((n, i))
            elif e.kind == "deliver" and queues[e.channel]:
                done.add(queues[e.channel].pop(0))
    return done
