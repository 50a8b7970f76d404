"""Monitors of the prompt response and of message IDs: insertion is the acknowledgement (P, E, C1-C4).

Each class names the rules it checks; ``wire = True`` ones run on recorded
traffic too.  ``EveryPromptAnswered`` and ``AcceptedMessageReportedLive`` are
obligations (``eventually``): the explorer checks that every fair behaviour
discharges them; the trace checker, at the end of a capture.
"""

from __future__ import annotations

from .events import A2C, C2A
from .monitors_base import (
    Monitor,
    conn_name as _conn,
    entry_of,
    rename_conn,
    rename_conn_pairs,
    sent,
    sent_update,
    work_ended,
)


class SuccessOnlyAfterInsertion(Monitor):
    name = "SuccessOnlyAfterInsertion"
    rules = ("P3", "P7")
    description = "a session/prompt success is sent only once its user message was inserted"
    kinds = frozenset({"send"})

    def observe(self, m, e, before, after):
        if after is None or not sent(e, A2C, "prompt_result"):
            return m, None
        if entry_of(after, (*e.conn, e.msg.rid)) is None:
            return m, f"response #{e.msg.rid} on {_conn(e.conn)} succeeds, but its message was never inserted"
        return m, None


class SuccessCarriesInsertedId(Monitor):
    """P4/W1 on the response, U3 on the reports: one ID, the inserted one, everywhere.

    A response must carry a string ID equal to the one its submission was
    inserted under; a live ``user_message`` report must name an inserted
    user message (a report under any other ID belongs to no submission).
    """

    name = "SuccessCarriesInsertedId"
    rules = ("P4", "U3", "W1")
    description = "the success result and the live reports carry the ID the message was inserted under"
    kinds = frozenset({"send"})

    def observe(self, m, e, before, after):
        update = sent_update(e, "user_message", "user_message_chunk")
        if update is not None:
            if after is not None and not any(x.mid == update.message_id and x.role == "user"
                                             for x in after.agent.history):
                return m, f"{update.kind} on {_conn(e.conn)} reports {update.message_id}, " \
                          f"which is not the ID of any inserted message"
            return m, None
        if not sent(e, A2C, "prompt_result"):
            return m, None
        mid = e.msg.message_id
        if not isinstance(mid, str):
            return m, f"response #{e.msg.rid} on {_conn(e.conn)} has no messageId"
        entry = entry_of(after, (*e.conn, e.msg.rid)) if after is not None else None
        if entry is not None and entry.mid != mid:
            return m, f"response #{e.msg.rid} on {_conn(e.conn)} carries {mid} but the message was inserted as {entry.mid}"
        return m, None


class DistinctMessageIds(Monitor):
    name = "DistinctMessageIds"
    rules = ("P5",)
    description = "every accepted submission gets its own messageId, never reused"
    wire = True
    kinds = frozenset({"send"})
    initial = ()

    def observe(self, m, e, before, after):
        if not sent(e, A2C, "prompt_result") or e.msg.message_id is None:
            return m, None
        mid = e.msg.message_id
        if mid in m:
            return m, f"response #{e.msg.rid} on {_conn(e.conn)} returns {mid}, already returned for another submission"
        return tuple(sorted(m + (mid,))), None


class RejectedIdsNeverSurface(Monitor):
    """P16/P5: an ID assigned before insertion to a prompt that was then rejected or withdrawn
    names nothing: no user-message report uses it and no other message is inserted under it."""

    name = "RejectedIdsNeverSurface"
    rules = ("P16", "P5", "P7")
    description = "an ID assigned to a prompt that was then rejected never surfaces, nor names another message"
    kinds = frozenset({"reject", "insert", "send"})
    initial = ()  # IDs of submissions rejected or withdrawn before insertion

    def observe(self, m, e, before, after):
        if e.kind == "reject":
            req = next((r for r in before.agent.reqs if r.token == e.sub), None) if before is not None else None
            if req is not None and req.mid is not None and not req.answered:
                return tuple(sorted(m + (req.mid,))), None
            return m, None
        if e.kind == "insert":
            if e.mid in m:
                who = f"c{e.sub[0] + 1}'s prompt #{e.sub[2]}" if e.sub else "an imported message"
                return m, f"{e.mid} was assigned to a prompt that was rejected, and now names {who}"
            return m, None
        update = sent_update(e, "user_message", "user_message_chunk")
        if update is not None and update.message_id in m:
            return m, f"{update.kind} on {_conn(e.conn)} reports {update.message_id}, the ID of a rejected prompt"
        return m, None


class ResponseNotHeldForWorkEnd(Monitor):
    """P2/S1: judged on behaviour: a response to a prompt sent in the very step that ended the
    work that prompt's message started (or joined) was released by the end of the work."""

    name = "ResponseNotHeldForWorkEnd"
    rules = ("P2", "S1")
    description = "the prompt response does not wait for the end of the work (insertion is the acknowledgement)"
    kinds = frozenset({"send"})

    def observe(self, m, e, before, after):
        if e.kind != "send" or e.dir != A2C or not work_ended(before, after):
            return m, None
        if e.msg.kind not in ("prompt_result", "prompt_result_v1", "error_response"):
            return m, None
        mids = before.agent.work.mids
        for r in before.agent.reqs:
            if (r.client, r.epoch, r.rid) == (*e.conn, e.msg.rid) and r.mid in mids:
                return m, f"the response to prompt #{e.msg.rid} on {_conn(e.conn)} was sent by the step " \
                          f"that ended its work: it was held until the work ended"
        return m, None


class _ErrorMeansNotInserted(Monitor):
    kinds = frozenset({"send"})

    def matches(self, code: int) -> bool:
        raise NotImplementedError

    def observe(self, m, e, before, after):
        if after is None or not sent(e, A2C, "error_response") or not self.matches(e.msg.error.code):
            return m, None
        entry = entry_of(after, (*e.conn, e.msg.rid))
        if entry is not None:
            return m, (
                f"error {e.msg.error.code} answers #{e.msg.rid} on {_conn(e.conn)}, "
                f"but its message was inserted as {entry.mid}"
            )
        return m, None


class ErrorResponseMeansNotInserted(_ErrorMeansNotInserted):
    name = "ErrorResponseMeansNotInserted"
    rules = ("E1", "E2")
    description = "a JSON-RPC error on session/prompt means nothing was inserted; later failures are not errors"

    def matches(self, code):
        return code != -32800


class CancelRequestErrorOnlyBeforeInsertion(_ErrorMeansNotInserted):
    name = "CancelRequestErrorOnlyBeforeInsertion"
    rules = ("C1", "E1")
    description = "-32800 on session/prompt only before insertion; afterwards the request succeeds"

    def matches(self, code):
        return code == -32800


class CancelRequestMatchesSender(Monitor):
    """C3/P19: a ``$/cancel_request`` names an id its sender issued; judged on what the agent did
    when it processed one: no request of another connection may be cancelled or answered."""

    name = "CancelRequestMatchesSender"
    rules = ("C3", "P19")
    description = "$/cancel_request affects only the sender's own request with that id"
    kinds = frozenset({"deliver"})

    def observe(self, m, e, before, after):
        if e.dir != C2A or e.msg.kind != "cancel_request" or before is None:
            return m, None
        now = {r.token: r for r in after.agent.reqs}
        for r in before.agent.reqs:
            if (r.client, r.epoch) == e.conn:
                continue
            later = now.get(r.token)
            if later is None or later.answered != r.answered or later.cancel_asked != r.cancel_asked:
                return m, f"{_conn(e.conn)}'s $/cancel_request #{e.msg.rid} cancelled " \
                          f"{_conn((r.client, r.epoch))}'s prompt #{r.rid}"
        return m, None


class CancelWithdrawsHeldPrompts(Monitor):
    """C4: ``session/cancel`` covers prompts held (received, not inserted) when it is processed:
    they are answered -32800, never drained and run afterwards (X13)."""

    name = "CancelWithdrawsHeldPrompts"
    rules = ("C4", "P17")
    description = "a prompt held when session/cancel is processed is withdrawn, never inserted afterwards"
    kinds = frozenset({"cancel_seen", "insert"})
    initial = ()  # submissions that were held at a cancel and survived it

    def rename_clients(self, m, new_index):
        return tuple(sorted((new_index[s[0]],) + s[1:] for s in m))

    def observe(self, m, e, before, after):
        if e.kind == "cancel_seen":
            kept = {r.token for r in after.agent.reqs}
            held = [r.token for r in before.agent.reqs if not r.inserted and r.token in kept]
            return (tuple(sorted(set(m) | set(held))), None) if held else (m, None)
        if e.sub is not None and e.sub in m:
            return m, f"c{e.sub[0] + 1}'s prompt #{e.sub[2]} was held when session/cancel arrived " \
                      f"and was inserted afterwards as {e.mid}"
        return m, None


class EveryPromptAnswered(Monitor):
    """P2/E1: every prompt that reached the agent gets its answer: a success or a JSON-RPC error.

    An obligation: it opens when the prompt is sent and closes with its
    response, or when the connection (and so the request) is gone (E10).
    """

    name = "EveryPromptAnswered"
    rules = ("P2", "E1")
    description = "every session/prompt that reached the agent is answered: success or a JSON-RPC error"
    wire = True
    expectation = "eventually"
    kinds = frozenset({"send", "drop", "cut"})
    initial = ()  # (conn, rid) of prompts awaiting their response

    def rename_clients(self, m, new_index):
        return rename_conn_pairs(m, new_index)

    def observe(self, m, e, before, after):
        if e.kind == "cut":
            return tuple(k for k in m if k[0] != e.conn), None
        if e.kind == "drop":
            if e.dir == C2A and e.msg.kind == "prompt":
                return tuple(k for k in m if k != (e.conn, e.msg.rid)), None
            return m, None
        if e.dir == C2A:
            if e.msg.kind == "prompt" and not e.lost:
                return tuple(sorted(m + ((e.conn, e.msg.rid),))), None
            return m, None
        if e.msg.kind in ("prompt_result", "prompt_result_v1", "error_response", "generic_result"):
            return tuple(k for k in m if k != (e.conn, e.msg.rid)), None
        return m, None

    def at_rest(self, m, world):
        if m:
            conn, rid = m[0]
            return f"prompt #{rid} on {_conn(conn)} reached the agent and was never answered"
        return None


class AcceptedMessageReportedLive(Monitor):
    """U1: an obligation: once a success names a message on a connection, a live user-message
    report of it follows there (or came first), unless the connection is gone (E10)."""

    name = "AcceptedMessageReportedLive"
    rules = ("U1",)
    description = "every accepted message is reported live on the submitting connection under its ID"
    wire = True
    expectation = "eventually"
    kinds = frozenset({"send", "cut"})
    initial = ((), ())  # (responded (conn, mid) awaiting a report, reported (conn, mid))

    def owes(self, m) -> bool:
        return bool(m[0])

    def observe(self, m, e, before, after):
        awaiting, reported = m
        if e.kind == "cut":
            # E10: a closed connection can carry no report; its obligations end with it.
            return (tuple(k for k in awaiting if k[0] != e.conn), reported), None
        if sent(e, A2C, "prompt_result") and e.msg.message_id is not None and not e.lost:
            key = (e.conn, e.msg.message_id)
            if key not in reported:
                return (tuple(sorted(awaiting + (key,))), reported), None
            return m, None
        update = sent_update(e, "user_message", "user_message_chunk")
        if update is not None:
            key = (e.conn, update.message_id)
            if key in reported:
                return m, None
            return (tuple(k for k in awaiting if k != key), tuple(sorted(reported + (key,)))), None
        return m, None

    def rename_clients(self, m, new_index):
        return tuple(rename_conn_pairs(part, new_index) for part in m)

    def at_rest(self, m, world):
        if m[0]:
            conn, mid = m[0][0]
            return f"{mid} was accepted on {_conn(conn)} but never reported there with user_message"
        return None


__all__ = [
    "AcceptedMessageReportedLive", "CancelRequestErrorOnlyBeforeInsertion", "CancelRequestMatchesSender",
    "CancelWithdrawsHeldPrompts", "DistinctMessageIds", "ErrorResponseMeansNotInserted", "EveryPromptAnswered",
    "RejectedIdsNeverSurface", "ResponseNotHeldForWorkEnd", "SuccessCarriesInsertedId", "SuccessOnlyAfterInsertion",
    "rename_conn",
]
