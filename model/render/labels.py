"""Labels: the one place that turns abstract messages and events into protocol words.

Connections are named by :func:`acplab.model.wire.capture.conn_label` (``c1``,
``c1.2``); everything a trace, a diagram or a report prints about a message
or an event comes from here.
"""

from __future__ import annotations

import json

from acplab.model import wire
from acplab.model.acp.events import C2A
from acplab.model.wire.capture import conn_label


def describe(msg) -> str:
    """A short label for an abstract message: method or update kind plus the key fields."""
    k = msg.kind
    if k == "prompt":
        return f"session/prompt #{msg.rid} {text_list(msg.content)}"
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


def text_list(content) -> str:
    """Content blocks as the JSON list of their texts: ``["hi", "there"]``."""
    return json.dumps([str(b) for b in content], ensure_ascii=False)


def quoted(text) -> str:
    """One text as a JSON string: ``"hi"``."""
    return json.dumps(str(text), ensure_ascii=False)


def _mid(message_id) -> str:
    return "(no messageId)" if message_id is None else str(message_id)


def describe_update(u) -> str:
    """A short label for a ``session/update``: its kind and the fields that matter."""
    k = u.kind
    if k in ("user_message", "agent_message", "agent_thought"):
        content = "" if u.content is None else (" []" if u.content in ((), wire.NULL) else f" {text_list(u.content)}")
        return f"{k} {_mid(u.message_id)}{content}"
    if k.endswith("_chunk"):
        return f"{k} {_mid(u.message_id)} +{quoted(u.block)}"
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
        what = {"agent": "on the agent's own initiative", "hook": "(a hook, before insertion)"}.get(e.origin)
        return f"[internal] foreground work starts {what or 'for ' + ', '.join(e.mids)}"
    if k == "join":
        return f"[internal] {e.mid} joins the work in progress"
    if k == "assign_id":
        return f"[internal] ID {e.mid} assigned to {conn_label(e.sub[:2])} #{e.sub[2]} before insertion (no answer)"
    if k == "working":
        return "[internal] the runtime works on, reporting nothing"
    if k == "work_end":
        return f"[internal] foreground work ends: {e.reason}" + ("" if e.reported else " (no idle sent)")
    if k == "fail":
        return "[internal] the runtime fails" + (" while aborting" if getattr(e, "aborting", False) else
                                                 " after insertion" if e.after_insertion else "")
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
