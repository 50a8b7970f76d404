"""Labels: the one place that turns abstract messages and events into protocol words.

Connections are named by :func:`acplab.model.wire.capture.conn_label` (``c1``,
``c1.2``); everything a trace, a diagram or a report prints about a message
or an event comes from here.
"""

from __future__ import annotations

import json
import re

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


def _texts(content) -> str:
    """Content blocks as the docs write them: ``"hi", "there"``."""
    return ", ".join(quoted(b) for b in content)


def _mid(message_id) -> str:
    return "(no messageId)" if message_id is None else str(message_id)


def describe_update(u, style: str = "trace") -> str:
    """A short label for a ``session/update``: its kind and the fields that matter.

    ``style`` "trace" is the compact text-trace form (``state_update idle (end_turn)``);
    "docs" is the inside of the docs' ``session/update (...)`` (``state_update: idle,
    stopReason: "end_turn"``): fields after a comma, stop reasons quoted, texts unbracketed.
    """
    docs = style == "docs"
    sep = ", " if docs else " "
    k = u.kind
    if k in ("user_message", "agent_message", "agent_thought"):
        if u.content is None:
            content = ""
        else:
            content = sep + ("[]" if u.content in ((), wire.NULL) else (_texts if docs else text_list)(u.content))
        return f"{k} {_mid(u.message_id)}{content}"
    if k.endswith("_chunk"):
        return f"{k} {_mid(u.message_id)}{sep}+{quoted(u.block)}"
    if k == "state_update":
        extra = (f", stopReason: {quoted(u.stop_reason)}" if docs else f" ({u.stop_reason})") if u.stop_reason else ""
        if getattr(u.error, "code", None) is not None:
            extra += f"{sep}error {u.error.code}"
        return f"state_update{':' if docs else ''} {u.state}{extra}"
    if k == "tool_call_update":
        return f"tool_call_update {u.tool_call_id} {'status: ' if docs else ''}{u.status}"
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


# -- the ACP docs' dialect, for diagrams ------------------------------------------------------------
# The docs' Mermaid diagrams (protocol/v2/draft: prompt-lifecycle, cancellation, session-setup) write
# ``session/prompt (id=1, "Analyze file X")``, ``response to id=1 ({})``, ``$/cancel_request (id=2)`` and
# ``session/update (state_update: idle, stopReason: "cancelled")``, and dash only responses.  Text
# traces keep the compact :func:`describe` (``session/prompt #1 ["hi"]``); diagrams use these.

def is_response(msg) -> bool:
    """A JSON-RPC response (the docs draw these, and only these, dashed): the codec's classification."""
    return wire.is_response(msg)


def docs_label(msg) -> str:
    """An abstract message as the ACP docs' diagrams write it.

    >>> from acplab.model.wire import Prompt
    >>> docs_label(Prompt(1, "s1", ("hi",)))
    'session/prompt (id=1, "hi")'
    """
    k = msg.kind
    if k == "prompt":
        return f"session/prompt (id={msg.rid}, {_texts(msg.content)})" if msg.content else f"session/prompt (id={msg.rid})"
    if k == "prompt_result":
        return f"response to id={msg.rid} " + (f"({{messageId: {quoted(msg.message_id)}}})" if msg.message_id else "({})")
    if k == "prompt_result_v1":
        return f"response to id={msg.rid} (stopReason: {quoted(msg.stop_reason)})"
    if k == "error_response":
        return f"response to id={msg.rid} (error {msg.error.code} {quoted(msg.error.message)})"
    if k == "resume":
        return f"session/resume (id={msg.rid}" + (", replayFrom: start)" if msg.replay_from == "start" else ")")
    if k in ("resume_result", "new_session_result", "close_result", "generic_result"):
        return f"response to id={msg.rid}"
    if k in ("new_session", "close"):
        return f"session/{'new' if k == 'new_session' else 'close'} (id={msg.rid})"
    if k == "generic_notification":
        return msg.method
    if k == "cancel_session":
        return "session/cancel (sessionId)"
    if k == "cancel_request":
        return f"$/cancel_request (id={msg.rid})"
    if k == "request_permission":
        return f"session/request_permission (id={msg.rid}, {msg.tool_call_id})"
    if k == "permission_result":
        return f"response to id={msg.rid} ({msg.outcome})"
    if k == "update":
        return f"session/update ({describe_update(msg.update, 'docs')})"
    return k


def docs_ids(text: str) -> str:
    """Request ids in an event's sentence as the docs write them: ``c1 #1`` -> ``c1 id=1``."""
    return re.sub(r"#(\w+)", r"id=\1", text)


def docs_event(e) -> str | None:
    """An internal event's note in a diagram: its trace sentence without ``[internal]``, ids as the docs write them."""
    text = describe_event(e)
    return None if text is None else docs_ids(text.replace("[internal] ", ""))
