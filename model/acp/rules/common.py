"""Small helpers the rule monitors share: message kinds, content keys, bounded tables."""

from __future__ import annotations

from ..wire_reading import A2C, BUSY, C2A, STANDARD_STATES, block_key, content_key  # noqa: F401 - re-exported

#: sessionUpdate -> (message type, is a chunk) for the six message updates (U4, U7, U10)
MESSAGE_UPDATES = {
    "user_message": ("user", False), "user_message_chunk": ("user", True),
    "agent_message": ("agent", False), "agent_message_chunk": ("agent", True),
    "agent_thought": ("thought", False), "agent_thought_chunk": ("thought", True),
}
USER_UPDATES = ("upd:user_message", "upd:user_message_chunk")
MESSAGE_KEYS = tuple("upd:" + k for k in MESSAGE_UPDATES)

#: tool call statuses after which nothing more happens (TC; the schema's ToolCallStatus)
FINAL_TOOL = ("completed", "failed", "cancelled")
KNOWN_STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error")
V1_STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled")


def message_id(update: dict):
    """The update's ``messageId`` if it is a string, else None."""
    mid = update.get("messageId")
    return mid if isinstance(mid, str) else None


def update_content_key(update: dict, chunk: bool) -> tuple | None:
    """The content a message update carries as block keys: a chunk's one block, or a whole update's list.

    None when a whole update carries no content array (a metadata-only patch, U6).
    """
    if chunk:
        return (block_key(update.get("content")),)
    content = update.get("content")
    return content_key(content) if isinstance(content, list) else None


def is_live(o) -> bool:
    """Outside a replay window (a resume without ``replayFrom`` replays nothing, so it is live too)."""
    return o.window is None or o.window[1] is None


def stop_reason(update: dict):
    """The idle's stop reason if it is a string, else None (W6: absent, null or malformed = not reported)."""
    reason = update.get("stopReason")
    return reason if isinstance(reason, str) else None


def is_error_idle(o) -> bool:
    return o.update.get("state") == "idle" and o.update.get("stopReason") == "error"


def error_code(msg: dict):
    err = msg.get("error")
    return err.get("code") if isinstance(err, dict) else None


def is_success(msg: dict) -> bool:
    return "result" in msg and "error" not in msg


def drop_conn(table, conn) -> None:
    """Forget every entry of a dict or set keyed by tuples that start with ``conn`` (E10)."""
    for k in [k for k in table if k[0] == conn]:
        if isinstance(table, dict):
            del table[k]
        else:
            table.discard(k)


def bound(table: dict, limit: int) -> None:
    """Keep a heuristic's table bounded: forget the oldest half when it outgrows ``limit``.

    Oldest by insertion order (a trace's dicts keep it); a thawed explorer book
    is small and never reaches the limit.
    """
    if len(table) > limit:
        for k in list(table)[: len(table) // 2]:
            del table[k]
