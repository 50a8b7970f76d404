"""Request/response pairing: which request a JSON-RPC response answers, per connection and direction.

JSON-RPC ids are chosen by each sender, per connection (P19): a response is
matched to the pending request with the same id that the *other* side sent on
the same connection.  This is the one copy of that bookkeeping; the trace
checker and the diagram labels both use it.
"""

from __future__ import annotations

from .capture import A2C, C2A

#: request methods the codec models; others (initialize, fs/*, session/load...) are passed over
MODELLED_REQUESTS = frozenset({
    "session/new", "session/prompt", "session/resume", "session/close", "session/request_permission",
})


def usable_id(rid) -> bool:
    """A JSON-RPC id the pairing can key on: an int (not a bool) or a string (W11)."""
    return isinstance(rid, (int, str)) and not isinstance(rid, bool)


def other_direction(direction: str) -> str:
    return C2A if direction == A2C else A2C


class RequestTracker:
    """Pending requests keyed by ``(conn, sender direction)`` then id; each maps to its method."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        self.pending: dict[tuple, dict] = {}

    def request(self, conn, direction: str, rid, method: str) -> str | None:
        """Record a request; return the method of a request with the same id still pending (P19), if any."""
        pending = self.pending.setdefault((conn, direction), {})
        earlier = pending.get(rid)
        pending[rid] = method
        return earlier

    def response(self, conn, direction: str, rid) -> str | None:
        """The method of the request this response (sent in ``direction``) answers; forgets it."""
        pending = self.pending.get((conn, other_direction(direction)))
        return pending.pop(rid, None) if pending else None
