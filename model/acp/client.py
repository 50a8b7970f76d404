"""An ACP v2 client (editor) on one session: submissions, reconciliation and the rendered feed.

The client keeps an optimistic copy of each pending prompt and links it to the
agent's message only through the prompt response's ``messageId``, whichever
of the response and the ``user_message`` arrives first (U2, P9).  Other
clients' messages, and its own before the response, render under their IDs
with the upsert and chunk rules (U4-U7).  A submission whose connection was
cut before the response is ambiguous and stays so (R11).  The
``client-matches-by-content`` and ``-by-order`` mutants guess instead.

The rejected alternatives get the client their proponents would write: it
binds by its own correlation token or chosen messageId (unique across
clients) wherever a report carries it, by its request id, or not at all (a
fire-and-forget prompt); a receipt is not taken for insertion when a
rejection signal may follow; a v1 error response leaves insertion unknown.
"""

from __future__ import annotations

import json

from . import client_strategies as cs
from . import events as ev
from .extension import retry_prompt_id
from .spec import Spec
from .state import SESSION, Client, Item, Sub, replace_at
from acplab.model.wire import NULL, CancelRequest, CancelSession, Close, Load, PermissionResult, Prompt, Resume


def _send(client_index: int, client: Client, msg) -> ev.Send:
    return ev.Send((client_index, client.epoch), ev.C2A, msg)


# -- actions ------------------------------------------------------------


def submit(client: Client, index: int, content: tuple[str, ...], spec: Spec, ordinal: int = 1,
           collide: bool = False, retry_of: int | None = None) -> tuple[Client, list]:
    """Send a prompt and show it optimistically (provisional until the agent reports it).

    ``ordinal`` numbers the submission among all clients' (1, 2, ...); a
    fire-and-forget prompt (``respond_at="never"``) awaits nothing: "sent".
    ``retry_of`` marks a retry after a timeout (the goals judge the user's one request, P12).
    """
    rid = client.next_rid
    pid = cs.prompt_id(spec, ordinal, rid, collide)
    if retry_of is not None and spec.extension:  # a spec file's client strategy picks a retry's identifier
        pid = retry_prompt_id(spec, client.subs[retry_of].pid, pid)
    sub = Sub(rid, client.epoch, content, "sent" if spec.respond_at == "never" else "pending", None, pid, retry_of)
    item = Item(None, "user", content, sub=len(client.subs), provisional=True)
    client = client._replace(next_rid=rid + 1, subs=client.subs + (sub,), feed=client.feed + (item,))
    return client, [_send(index, client, Prompt(rid, SESSION, content, pid))]


def cancel_session(client: Client, index: int) -> tuple[Client, list]:
    return client, [_send(index, client, CancelSession(SESSION))]


def cancel_request(client: Client, index: int, sub_index: int) -> tuple[Client, list]:
    return client, [_send(index, client, CancelRequest(client.subs[sub_index].rid))]


def answer_permission(client: Client, index: int, rid: int, approve: bool) -> tuple[Client, list]:
    perms = tuple(p for p in client.perms if p[0] != rid)
    result = PermissionResult(rid, "selected", "allow") if approve else PermissionResult(rid, "cancelled")
    return client._replace(perms=perms), [_send(index, client, result)]


def reconnect(client: Client, index: int, replay: bool, spec: Spec | None = None) -> tuple[Client, list]:
    """Open a new connection and ``session/resume``, with or without ``replayFrom: start`` (R1), or (``replay``
    "load") ``session/load``.

    A v1 client (no state updates) rebuilds its view from the replay, as v1's
    ``session/load`` is used: its local copies give way to the replayed history.
    """
    rid = client.next_rid
    load = replay == "load"  # a late joiner's session/load: the whole history, as a replay from start
    feed = () if replay and spec is not None and not spec.state_updates else client.feed
    client = client._replace(
        epoch=client.epoch + 1, up=True, next_rid=rid + 1, resume_rid=rid, replay=bool(replay), view="resuming",
        feed=feed, closed=False)
    msg = Load(rid, SESSION) if load else Resume(rid, SESSION, "start" if replay else None)
    return client, [ev.Connect((index, client.epoch)), _send(index, client, msg)]


def close_session(client: Client, index: int) -> tuple[Client, list]:
    """C14: ``session/close`` on this connection; the client follows the session there no more (its view
    ``closed``: nothing it shows is judged) and submits nothing more, but still hears its prompts' answers."""
    rid = client.next_rid
    client = client._replace(next_rid=rid + 1, closed=True, view="closed")
    return client, [_send(index, client, Close(rid, SESSION))]


def not_yet_joined() -> Client:
    """A late joiner before it connects: no connection yet (epoch -1); its first resume opens epoch 0 and asks
    for the live session as a reconnect would (the model's one way to attach: ``session/resume``)."""
    return Client(epoch=-1, up=False, view="partial", cut=True)


def disconnected(client: Client) -> Client:
    """E10: the transport closed. Pending submissions become ambiguous (R11), and so do received
    ones (two-phase: a rejection signal may have been lost with the connection) and sent notifications
    with a token (a rejection notification may have been lost)."""
    subs = tuple(s._replace(status="ambiguous") if s.status in ("pending", "received")
                 or (s.status == "sent" and s.pid is not None) else s for s in client.subs)
    return client._replace(up=False, subs=subs, perms=(), resume_rid=None, view="partial", cut=True)


# -- receiving ------------------------------------------------------------


def receive(client: Client, index: int, msg, spec: Spec) -> tuple[Client, list]:
    """Apply one message delivered from the agent."""
    kind = msg.kind
    if kind == "update":
        return _apply_update(client, index, msg.update, spec)
    if kind == "prompt_result":
        return _prompt_result(client, index, msg, spec)
    if kind == "prompt_result_v1":
        return _v1_result(client, msg), []
    if kind == "error_response":
        return _error_response(client, msg, spec), []
    if kind in ("resume_result", "load_result"):
        if msg.rid == client.resume_rid:
            client = client._replace(resume_rid=None, view=_view_after_resume(client))
        return client, []
    if kind == "request_permission":
        return client._replace(perms=client.perms + ((msg.rid, False),)), []
    if kind == "cancel_request":
        perms = tuple((rid, True) if rid == msg.rid else (rid, c) for rid, c in client.perms)
        return client._replace(perms=perms), []
    return client, []


def _view_after_resume(client: Client) -> str:
    """What the client can claim to know once its resume answered (nothing lost meanwhile)."""
    if client.view != "resuming":
        return "partial"
    return "replayed" if client.replay else "resumed"


def _find_sub(client: Client, rid) -> int | None:
    for i, sub in enumerate(client.subs):
        if sub.rid == rid and sub.epoch == client.epoch:
            return i
    return None


def _find_item(feed, mid) -> int | None:
    for i, item in enumerate(feed):
        if item.mid == mid:
            return i
    return None


def _optimistic(feed, sub_index) -> int | None:
    for i, item in enumerate(feed):
        if item.mid is None and item.sub == sub_index:
            return i
    return None


def _prompt_result(client: Client, index: int, msg, spec: Spec) -> tuple[Client, list]:
    """U2: link the response's ID to the submission; merge with a message already received.

    With a rejection signal to come (two-phase) the success is a receipt: the
    submission is "received" until its report or the signal.  A `{}` result
    leaves nothing to link with, except when the request id is the identity:
    then the client knows the ID (its own request id).
    """
    i = _find_sub(client, msg.rid)
    if i is None or client.subs[i].status != "pending":
        return client, []
    mid, how = msg.message_id, "response"
    sub = client.subs[i]
    if mid is None and spec.client_correlation == "jsonrpc_id":
        mid, how = f"r{sub.rid}", "jsonrpc_id"
    status = "accepted"
    if spec.rejection_signal and mid is not None:
        at = _find_item(client.feed, mid)
        status = "accepted" if at is not None and not client.feed[at].provisional else "received"
    client = client._replace(subs=replace_at(client.subs, i, sub._replace(status=status, mid=mid)))
    if mid is None:  # the v2 draft's `{}`: nothing to link the optimistic copy with
        return (_drop_copy(client, i) if cs.drops_copy_on_empty_result(spec) else client), []
    return _bind_feed(client, i, mid), [ev.Bind(index, (index, sub.epoch, sub.rid), mid, how)]


def _v1_result(client: Client, msg) -> Client:
    """v1: the response ends the turn; the local copy is the message (there is no ID)."""
    i = _find_sub(client, msg.rid)
    if i is None or client.subs[i].status != "pending":
        return client
    subs = replace_at(client.subs, i, client.subs[i]._replace(status="done"))
    return client._replace(subs=subs, last_stop=msg.stop_reason)


def _bind_feed(client: Client, sub_index: int, mid: str) -> Client:
    """Give the optimistic copy its ID, or drop it if the message is already shown."""
    feed = client.feed
    opt = _optimistic(feed, sub_index)
    if opt is None:
        return client
    if _find_item(feed, mid) is not None:
        feed = feed[:opt] + feed[opt + 1 :]
    else:
        feed = replace_at(feed, opt, feed[opt]._replace(mid=mid))
    return client._replace(feed=feed)


def _error_response(client: Client, msg, spec: Spec) -> Client:
    """E1: an error means not inserted.  In v1 it may come after insertion too: the turn
    failed and whether the message was inserted is unknown ("failed", X02)."""
    i = _find_sub(client, msg.rid)
    if i is None or client.subs[i].status != "pending":
        return client
    v1 = spec.response == "stop_reason" and msg.error.code != -32800
    status = "cancelled" if msg.error.code == -32800 else "failed" if v1 else "rejected"
    subs = replace_at(client.subs, i, client.subs[i]._replace(status=status))
    if v1:
        return client._replace(subs=subs, last_stop="error", last_error=_error_of(msg.error))
    return _drop_copy(client._replace(subs=subs), i)


def _drop_copy(client: Client, sub_index: int) -> Client:
    """Remove the local copy of a submission that was not inserted."""
    feed = client.feed
    for n, item in enumerate(feed):
        if item.sub == sub_index and item.provisional:
            return client._replace(feed=feed[:n] + feed[n + 1 :])
    return client


def _rejected_after_receipt(client: Client, update) -> Client:
    """The two-phase design's rejection signal: the received submission was not inserted."""
    try:
        body = dict(json.loads(update.raw_json))
    except (ValueError, AttributeError, TypeError):
        return client
    for i, sub in enumerate(client.subs):
        if cs.rejection_matches(sub, body):
            return _drop_copy(client._replace(subs=replace_at(client.subs, i, sub._replace(status="rejected"))), i)
    return client


def _apply_update(client: Client, index: int, update, spec: Spec) -> tuple[Client, list]:
    kind = update.kind
    if kind == "state_update":
        return _apply_state(client, update, spec), []
    if kind in ("user_message", "agent_message"):
        role = "user" if kind == "user_message" else "agent"
        token = update.prompt_id if kind == "user_message" else None
        return _upsert(client, index, update.message_id, role, update.content, None, spec, token)
    if kind in ("user_message_chunk", "agent_message_chunk"):
        role = "user" if kind == "user_message_chunk" else "agent"
        return _upsert(client, index, update.message_id, role, None, update.block, spec)
    if kind == "unknown_update" and update.session_update == "error":
        try:
            learned = _error_of(json.loads(update.raw_json).get("error"))
        except (ValueError, AttributeError):
            learned = ()
        return client._replace(last_stop="error", last_error=learned), []  # the separate-error-update alternative
    if kind == "unknown_update" and update.session_update == "prompt_rejected":
        return _rejected_after_receipt(client, update), []  # the two-phase alternative
    return client, []  # notices are advisory and may be ignored (N1)


KNOWN_STATES = ("idle", "running", "requires_action")


def _apply_state(client: Client, update, spec: Spec) -> Client:
    """S15: an unknown state is shown as busy, never as idle; an ending idle tells how work ended.

    A design's own states and a client that reads a stray ``error`` are
    :func:`.client_strategies.ending`'s.
    """
    designed = cs.ending(update, spec)
    if designed is not None:  # the error object learned with it, if the update carries one
        return client._replace(fg=designed[0], last_stop=designed[1], last_error=_error_of(update.error))
    if update.state not in KNOWN_STATES:
        return client._replace(fg="busy")
    if update.state == "idle" and update.stop_reason is not None:
        learned = _error_of(update.error) if update.stop_reason == "error" else ()
        if (update.stop_reason == "error" and not learned and client.last_stop == "error"
                and spec.failure_report == "error_update"):
            learned = client.last_error  # an idle saying error after a separate error update: the two signals agree
        return client._replace(fg="idle", last_stop=update.stop_reason, last_error=learned)
    return client._replace(fg=update.state)


def _error_of(error) -> tuple:
    """The (code, message) of an error object (a wire value or its JSON), () when there is none."""
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message")
    else:
        code, message = getattr(error, "code", None), getattr(error, "message", None)
    return (code, message) if isinstance(code, int) else ()


def _upsert(client: Client, index: int, mid, role, content, block, spec: Spec, token=None) -> tuple[Client, list]:
    """U4-U7: patch or append content keyed by messageId, in arrival order.

    ``content`` None leaves content alone (U6); NULL or () clears it; a tuple
    replaces it; a chunk appends ``block`` (U7).  A provisional optimistic copy
    is replaced by the agent's first report rather than appended to (P18), and
    moves to where that report places it: the response does not determine the
    message's position in the feed, the user-message update does (P1, U1).
    """
    feed = client.feed
    out: list = []
    at = _find_item(feed, mid)
    if role == "user" and _links_without_response(spec):
        mine = next((i for i, s in enumerate(client.subs) if s.mid == mid), None)
        if mine is None:
            client, out = _guess(client, index, mid, content if content is not None else (block,), spec, token,
                                 first=at is None)
            feed = client.feed
            at = _find_item(feed, mid)
        elif client.subs[mine].status in ("received", "ambiguous"):  # two-phase: the report confirms insertion
            client = client._replace(subs=replace_at(client.subs, mine, client.subs[mine]._replace(status="accepted")))
    if at is None:
        item = Item(mid, role, ())
        feed = feed + (item,)
        at = len(feed) - 1
    item = feed[at]
    if item.provisional:  # the agent's first report: its place in the conversation
        feed = feed[:at] + feed[at + 1 :] + (item,)
        at = len(feed) - 1
    if block is not None:
        new = (block,) if item.provisional else item.content + (block,)
        item = item._replace(content=new, provisional=False)
    elif content is NULL:
        item = item._replace(content=(), provisional=False)
    elif content is not None:
        item = item._replace(content=tuple(content), provisional=False)
    return client._replace(feed=replace_at(feed, at, item)), out


def _links_without_response(spec: Spec) -> bool:
    """Whether the client may link a report to its submission by something other than the response."""
    return spec.client_correlation != "message_id" or spec.message_ids == "client_chosen" or spec.rejection_signal


def _guess(client: Client, index: int, mid, content, spec: Spec, token=None, first: bool = True) -> tuple[Client, list]:
    """Bind a reported message to a submission whose message the client does not know yet.

    By content or by order it is a guess (breaks P9), tried on a message's
    first report only; by the client's own token or chosen messageId, or by its
    request id, it is the mechanism of a rejected alternative.  A submission
    qualifies while it names no message: pending, ambiguous, or accepted by a
    `{}` result (the client learns the ID from the report, whichever of the
    two came first).
    """
    how = cs.binding(spec)
    if how in ("message_id",) or (how in ("content", "order") and not first):
        return client, []
    for i, sub in enumerate(client.subs):
        if sub.mid is not None or sub.status not in ("pending", "ambiguous", "accepted", "sent"):
            continue
        if how == "content" and sub.content != tuple(content):
            continue
        if how in cs.TOKEN_STRATEGIES and not (token is not None and token == sub.pid
                                               and cs.token_may_bind(spec, sub.status)):
            continue
        if how == "own_id" and mid != sub.pid:
            continue
        if how == "jsonrpc_id" and mid != f"r{sub.rid}":
            continue
        subs = replace_at(client.subs, i, sub._replace(status="accepted", mid=mid))
        client = _bind_feed(client._replace(subs=subs), i, mid)
        return client, [ev.Bind(index, (index, sub.epoch, sub.rid), mid, how)]
    return client, []
