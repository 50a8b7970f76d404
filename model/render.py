"""Counterexamples and scenario runs as text traces, wire logs and Mermaid diagrams.

All functions are pure functions of a path (a list of steps with their
events).  The wire log is the capture format of DESIGN.md, so any
counterexample can be fed back to ``acplab trace check``.
"""

from __future__ import annotations

from acplab.model import wire
from acplab.model.acp.events import A2C, C2A
from acplab.model.wire.capture import conn_label


def describe(msg) -> str:
    """A short label for an abstract message: method or update kind plus the key fields."""
    k = msg.kind
    if k == "prompt":
        return f"session/prompt #{msg.rid} {list(msg.content)}"
    if k == "prompt_result":
        return f"result #{msg.rid} {{messageId: {msg.message_id}}}" if msg.message_id else f"result #{msg.rid} {{}}"
    if k == "prompt_result_v1":
        return f"result #{msg.rid} {{stopReason: {msg.stop_reason}}}"
    if k == "error_response":
        return f"error #{msg.rid} ({msg.error.code})"
    if k == "resume":
        return f"session/resume #{msg.rid}" + (" replayFrom start" if msg.replay_from == "start" else "")
    if k == "resume_result":
        return f"resume result #{msg.rid}"
    if k == "cancel_session":
        return "session/cancel"
    if k == "cancel_request":
        return f"$/cancel_request #{msg.rid}"
    if k == "request_permission":
        return f"request_permission #{msg.rid} ({msg.tool_call_id})"
    if k == "permission_result":
        return f"permission #{msg.rid} {msg.outcome}"
    if k == "update":
        return describe_update(msg.update)
    return k


def describe_update(u) -> str:
    k = u.kind
    if k in ("user_message", "agent_message", "agent_thought"):
        content = "" if u.content is None else (" []" if u.content in ((), wire.NULL) else f" {list(u.content)}")
        return f"{k} {u.message_id}{content}"
    if k.endswith("_chunk"):
        return f"{k} {u.message_id} +{u.block!r}"
    if k == "state_update":
        extra = f" ({u.stop_reason})" if u.stop_reason else ""
        if getattr(u.error, "code", None) is not None:
            extra += f" error {u.error.code}"
        return f"state_update {u.state}{extra}"
    if k == "tool_call_update":
        return f"tool_call_update {u.tool_call_id} {u.status}"
    return k


def describe_event(e) -> str | None:
    """One trace line for an event, or None for events the trace leaves out."""
    k = e.kind
    if k == "send":
        who = conn_label(e.conn)
        lost = "  (lost: connection closed)" if e.lost else ""
        if e.dir == C2A:
            return f"{who} -> agent  sends {describe(e.msg)}{lost}"
        return f"agent -> {who}  sends {describe(e.msg)}{lost}"
    if k == "deliver":
        return f"{'agent' if e.dir == C2A else conn_label(e.conn)} receives {describe(e.msg)}"
    if k == "drop":
        return f"lost in the network: {describe(e.msg)} ({conn_label(e.conn)}, {e.dir})"
    if k == "cut":
        return f"connection {conn_label(e.conn)} closed; {len(e.lost)} message(s) in flight lost"
    if k == "connect":
        return f"connection {conn_label(e.conn)} opened"
    if k == "insert":
        who = f" from {conn_label(e.sub[:2])} #{e.sub[2]}" if e.sub else ""
        return f"[internal] {e.origin} inserted as {e.mid}{who}{'' if e.retained else ' (live-only)'}"
    if k == "reject":
        return f"[internal] prompt {conn_label(e.sub[:2])} #{e.sub[2]} rejected before insertion"
    if k == "work_start":
        return f"[internal] foreground work starts for {', '.join(e.mids)}"
    if k == "work_end":
        return f"[internal] foreground work ends: {e.reason}" + ("" if e.reported else " (no idle sent)")
    if k == "fail":
        return "[internal] the runtime fails" + (" after insertion" if e.after_insertion else "")
    if k == "cancel_seen":
        return "[internal] cancel processed" + (" while work was active" if e.active else " (nothing active)")
    if k == "bind":
        return f"[internal] c{e.client + 1} links its prompt #{e.sub[2]} to {e.mid} (by {e.how})"
    if k == "execute":
        return f"[internal] command {e.mid} executes"
    if k == "replayed":
        return None if e.original == e.sent else f"[internal] {e.original} replayed as {e.sent}"
    if k == "restart":
        return "[internal] agent restarts: live-only history and work lost"
    return None


def text_trace(model, steps, title: str, violation: str | None = None) -> str:
    """Numbered steps: the action, then what crossed the wire and happened inside."""
    lines = [title, ""]
    for n, (action, events) in enumerate(steps, 1):
        lines.append(f"{n:3d}. {model.format_action(action)}")
        for e in events:
            text = describe_event(e)
            if text:
                lines.append(f"       {text}")
    if violation:
        lines += ["", f"violation: {violation}"]
    return "\n".join(lines) + "\n"


def wire_records(steps) -> list[dict]:
    """The capture-format records of every message put on a live connection, in order."""
    out = []
    seq = 0
    for n, (_action, events) in enumerate(steps, 1):
        for e in events:
            if e.kind == "send" and not e.lost:
                seq += 1
                out.append({"seq": seq, "t": float(n), "conn": conn_label(e.conn), "dir": e.dir, "msg": wire.encode(e.msg)})
    return out


def mermaid(steps, clients: int, title: str = "", violation: tuple[str, str] | None = None, rules=()) -> str:
    """A Mermaid ``sequenceDiagram``: arrows at delivery, crosses for lost messages, notes for internals."""
    lines = ["sequenceDiagram"]
    if title:
        lines.insert(0, f"---\ntitle: {_escape(title)}\n---")
    for c in range(clients):
        lines.append(f"    participant C{c + 1} as client c{c + 1}")
    lines.append("    participant A as agent (adapter + runtime)")
    for _action, events in steps:
        for e in events:
            line = _mermaid_event(e)
            if line:
                lines.append("    " + line)
    for (conn, direction), msg in in_flight(steps):
        c = f"C{conn[0] + 1}"
        label = _escape(describe(msg)) + " (in flight)"
        lines.append(f"    {c}-)A: {label}" if direction == C2A else f"    A-){c}: {label}")
    if violation is not None:
        name, sentence = violation
        span = "C1,A" if clients else "A"
        lines.append("    rect rgb(255, 220, 220)")
        lines.append(f"    Note over {span}: ✗ {_escape(name)} [{_escape(', '.join(rules))}]: {_escape(sentence)}")
        lines.append("    end")
    return "\n".join(lines) + "\n"


def send_endings(steps) -> dict[tuple[int, int], tuple[int, str]]:
    """Pair each send on a live connection, keyed ``(step, event index)``, with what ends it.

    The value is the step and the kind ("deliver", "drop" or "cut") that took
    the message off its channel; channels are FIFO, so the n-th delivery on a
    channel ends its n-th send.  Sends still in flight at the end are absent.
    """
    queues: dict = {}
    done: dict = {}
    for n, (_action, events) in enumerate(steps):
        for i, e in enumerate(events):
            if e.kind == "send" and not e.lost:
                queues.setdefault((e.conn, e.dir), []).append((n, i))
            elif e.kind in ("deliver", "drop"):
                queue = queues.get((e.conn, e.dir))
                if queue:
                    done[queue.pop(0)] = (n, e.kind)
            elif e.kind == "cut":
                for key in [k for k in queues if k[0] == e.conn]:
                    for sent in queues.pop(key):
                        done[sent] = (n, "cut")
    return done


def in_flight(steps) -> list[tuple[tuple, object]]:
    """``((conn, dir), message)`` of the sends nothing ended, channel by channel in order of first use."""
    endings = send_endings(steps)
    pending: dict = {}
    for n, (_action, events) in enumerate(steps):
        for i, e in enumerate(events):
            if e.kind == "send" and not e.lost:
                queue = pending.setdefault((e.conn, e.dir), [])
                if (n, i) not in endings:
                    queue.append(e.msg)
    return [(channel, msg) for channel, queue in pending.items() for msg in queue]


def _mermaid_event(e) -> str | None:
    k = e.kind
    if k == "deliver":
        c = f"C{e.conn[0] + 1}"
        label = _escape(describe(e.msg))
        return f"{c}->>A: {label}" if e.dir == C2A else f"A-->>{c}: {label}"
    if k == "drop":
        c = f"C{e.conn[0] + 1}"
        label = _escape(describe(e.msg)) + " (dropped)"
        return f"{c}-xA: {label}" if e.dir == C2A else f"A--x{c}: {label}"
    if k == "send" and e.lost:
        c = f"C{e.conn[0] + 1}"
        return f"A--x{c}: {_escape(describe(e.msg))} (connection closed)" if e.dir == A2C else None
    if k == "cut":
        return f"Note over C{e.conn[0] + 1},A: connection {conn_label(e.conn)} cut"
    if k == "connect":
        return f"Note over C{e.conn[0] + 1},A: connection {conn_label(e.conn)} opened"
    if k in ("insert", "reject", "fail", "work_end", "execute", "restart") or (k == "replayed" and e.original != e.sent):
        return f"Note over A: {_escape(describe_event(e).replace('[internal] ', ''))}"
    if k == "bind":
        return f"Note over C{e.client + 1}: {_escape(describe_event(e).replace('[internal] ', ''))}"
    return None


def _escape(text: str) -> str:
    """Mermaid message text: hashes and semicolons as entity codes, no line breaks."""
    return text.translate(_MERMAID_ESCAPES)


_MERMAID_ESCAPES = str.maketrans({"#": "#35;", ";": "#59;", "\n": " "})
