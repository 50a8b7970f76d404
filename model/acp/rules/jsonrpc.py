"""JSON-RPC framing: ids, pairing, error objects, cancel requests (W9, W11, P19, C2, C3).

These hold in both dialects: v1 and v2 share JSON-RPC 2.0.  Framing faults
below ACP itself (not an object, no ``jsonrpc: "2.0"``, both ``result`` and
``error``, repeated member names) cite no catalogue rule: they are JSON-RPC
2.0 and RFC 8259 matters, reported so a capture that is not well-formed never
passes as "holds".
"""

from __future__ import annotations

from ..rule_monitor import (BOTH, Monitor, conn_name, error_problem, is_id, is_int, json_type, obligation, short,
                       violation, warning)
from ..wire_reading import C2A

#: methods that are requests in ACP v1 or v2: sent without an id they cannot be answered (W11)
REQUEST_METHODS = frozenset({
    "initialize", "authenticate", "session/new", "session/load", "session/resume", "session/close",
    "session/prompt", "session/list", "session/set_mode", "session/set_model", "session/set_config_option",
    "session/request_permission", "fs/read_text_file", "fs/write_text_file", "terminal/create",
    "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release", "tool_call/cancel",
    "terminal/cancel", "elicitation/create", "auth/login", "auth/logout", "session/delete", "session/status",
})

INT64 = 2**63


def _side(direction: str) -> str:
    return "client" if direction == C2A else "agent"


class WellFormedJsonRpc(Monitor):
    """Every message is one JSON-RPC 2.0 object (JSON-RPC 2.0 sections 4-5; no catalogue rule).

    Also flags JSON objects with repeated member names (RFC 8259 section 4:
    receivers disagree on which value wins), when ``switches.strict_json``.
    The reader marks them in ``obs.problem``.
    """

    name = "WellFormedJsonRpc"
    rules = ()
    description = "every message is one well-formed JSON-RPC 2.0 object with unique member names"
    keys = ("problem",)
    dialects = BOTH

    def on(self, b, o):
        if o.problem is None:
            return None
        if o.problem.startswith("repeated member") and not self.switches.strict_json:
            return None
        return [violation((), f"{conn_name(o.conn)} {o.dir}: {o.problem}", o.stamp)]


class RequestsCarryValidIds(Monitor):
    """W11: a request's id is a string or an int64, never null; a request method needs an id.

    A ``session/prompt`` (or any other request method) sent as a notification
    can never be answered; the sender broke W11 ("never null", and absent is
    worse).
    """

    name = "RequestsCarryValidIds"
    rules = ("W11",)
    description = "requests carry a string or integer id; request methods are never sent as notifications"
    keys = ("badid",) + tuple(sorted("note:" + m for m in REQUEST_METHODS))
    dialects = BOTH

    def on(self, b, o):
        if o.shape == "notification" and o.method in REQUEST_METHODS:
            return [violation(self.rules, f"{o.method} sent without an id on {conn_name(o.conn)}: "
                                          "a request nobody can answer", o.stamp)]
        if o.shape == "request" and not _valid_id(o.rid):
            return [violation(self.rules, f"{o.method} request on {conn_name(o.conn)} has id "
                                          f"{short(repr(o.rid))} ({json_type(o.rid)}), not a string or int64", o.stamp)]
        return None


def _valid_id(rid) -> bool:
    return is_id(rid) and (not is_int(rid) or -INT64 <= rid < INT64)


class ResponsesMatchRequests(Monitor):
    """P19, W11: ids are not reused while pending; each response echoes a pending request's id exactly.

    Pairing is per connection and sender (the front end's): the same id on
    another connection or in the other direction is unrelated.  An error
    response with ``id: null`` (the request could not be read) answers nothing
    and is allowed.
    """

    name = "ResponsesMatchRequests"
    rules = ("P19", "W11")
    description = "no id is reused while pending; every response answers exactly one pending request"
    keys = ("dup", "res:?")
    dialects = BOTH

    def on(self, b, o):
        if o.shape == "request" and o.dup is not None:
            return [violation(("P19",), f"{_side(o.dir)} on {conn_name(o.conn)} reuses id {short(repr(o.rid))} "
                                        "while its earlier request with that id is pending", o.dup, o.stamp)]
        if o.shape != "response" or o.answers is not None:
            return None
        if o.rid is None and "error" in o.msg:
            return None
        if not is_id(o.rid):
            return [violation(("W11",), f"response on {conn_name(o.conn)} has id {short(repr(o.rid))} "
                                        f"({json_type(o.rid)}), not a string or integer", o.stamp)]
        return [violation(("W11", "P19"), f"response id {short(repr(o.rid))} on {conn_name(o.conn)} answers no "
                                          f"pending request of the {'agent' if o.dir == C2A else 'client'} "
                                          "(never sent, already answered, or an id of another type)", o.stamp)]


class ErrorObjectsWellFormed(Monitor):
    """W9: every JSON-RPC error object has an integer ``code`` and a string ``message``."""

    name = "ErrorObjectsWellFormed"
    rules = ("W9",)
    description = "every error response carries an error object with an integer code and a string message"
    keys = ("err",)
    dialects = BOTH

    def on(self, b, o):
        if o.shape != "response" or "error" not in o.msg:
            return None
        problem = error_problem(o.msg["error"])
        if problem is None:
            return None
        what = f"response to {o.answers}" if o.answers else "error response"
        return [violation(self.rules, f"{what} on {conn_name(o.conn)}: {problem}", o.stamp)]


class CancelRequestsAnswered(Monitor):
    """C2, C3: a ``$/cancel_request`` for a pending request still gets a valid answer.

    The cancel names an id its sender issued on that connection (C3); the
    front end matches it only against that sender's pending requests.  The
    request must still be answered: a result or ``-32800`` (C2).  Another
    error code is a warning (it may be an unrelated failure); no answer at all
    is an obligation at the end of the run.  A cancel for a request already
    answered (or never sent) is a no-op.  A ``requestId`` that is no JSON-RPC
    id violates W11.
    """

    name = "CancelRequestsAnswered"
    rules = ("C2", "C3", "W11")
    description = "a request cancelled with $/cancel_request is still answered: a result or -32800"
    keys = ("note:$/cancel_request",)
    armed = {"res": ("cancelled",), "close": ("cancelled",)}
    dialects = BOTH
    fields = {"cancelled": dict}  # (conn, sender, id) -> (stamp of the cancel, method)

    def on(self, b, o):
        if o.kind == "close":
            for k in [k for k in b.cancelled if k[0] == o.conn]:
                del b.cancelled[k]
            return None
        if o.shape == "response":
            if not b.cancelled or o.answers is None:
                return None
            cancel = b.cancelled.pop((o.conn, "agent" if o.dir == C2A else "client", o.rid), None)
            if cancel is not None and "error" in o.msg:
                code = o.msg["error"].get("code") if isinstance(o.msg["error"], dict) else None
                if code != -32800:
                    return [warning(("C2",), f"{o.answers} #{o.rid} on {conn_name(o.conn)} was cancelled and "
                                             f"answered with error {code}, not -32800", cancel[0], o.stamp)]
            return None
        rid = o.params.get("requestId") if o.params is not None else None
        if not is_id(rid):
            return [violation(("W11", "C3"), f"$/cancel_request on {conn_name(o.conn)} names "
                                             f"{short(repr(rid))}, not a request id", o.stamp)]
        if o.req is not None:
            b.cancelled[(o.conn, _side(o.dir), rid)] = (o.stamp, o.req[0])
        return None

    def end(self, b, complete, front=None):
        out = []
        for (conn, side, rid), (stamp, method) in sorted(b.cancelled.items(), key=lambda kv: repr(kv[0])):
            peer = "agent" if side == "client" else "client"
            out.append(obligation(("C2",), f"{method} #{rid} of the {side} on {conn_name(conn)} was cancelled "
                                           f"and the {peer} never answered it", stamp))
        return out
