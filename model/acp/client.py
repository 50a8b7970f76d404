"""An ACP v2 client (editor) on one session: submissions, reconciliation and the rendered feed.

The client keeps an optimistic copy of each pending prompt and links it to the
agent's message only through the prompt response's ``messageId``, whichever
of the response and the ``user_message`` arrives first (U2, P9).  Other
clients' messages, and its own before the response, render under their IDs
with the upsert and chunk rules (U4-U7).  A submission whose connection was
cut before the response is ambiguous and stays so (R11).  The
``client-matches-by-content`` and ``-by-order`` mutants guess instead.
"""

from __future__ import annotations

from . import events as ev
from .spec import Spec
from .state import SESSION, Client, Item, Sub, replace_at
from acplab.model.wire import NULL, CancelRequest, CancelSession, PermissionResult, Prompt, Resume


def _send(client_index: int, client: Client, msg) -> ev.Send:
    return ev.Send((client_index, client.epoch), ev.C2A, msg)


# -- actions ------------------------------------------------------------


def submit(client: Client, index: int, content: tuple[str, ...], spec: Spec) -> tuple[Client, list]:
    """Send a prompt and show it optimistically (provisional until the agent reports it)."""
    rid = client.next_rid
    sub = Sub(rid, client.epoch, content)
    item = Item(None, "user", content, sub=len(client.subs), provisional=True)
    client = client._replace(next_rid=rid + 1, subs=client.subs + (sub,), feed=client.feed + (item,))
    return client, [_send(index, client, Prompt(rid, SESSION, content, _prompt_id(spec, rid)))]


def _prompt_id(spec: Spec, rid: int) -> str | None:
    """A rejected alternative's client-side identifier: a correlation token or a chosen ID.

    Each client numbers its own, as it numbers JSON-RPC ids: nothing makes
    them unique across clients (the uniqueness requirement the RFD names).
    """
    if spec.client_correlation == "token":
        return f"p{rid}"
    if spec.message_ids == "client_chosen":
        return f"k{rid}"
    return None


def cancel_session(client: Client, index: int) -> tuple[Client, list]:
    return client, [_send(index, client, CancelSession(SESSION))]


def cancel_request(client: Client, index: int, sub_index: int) -> tuple[Client, list]:
    return client, [_send(index, client, CancelRequest(client.subs[sub_index].rid))]


def answer_permission(client: Client, index: int, rid: int, approve: bool) -> tuple[Client, list]:
    perms = tuple(p for p in client.perms if p[0] != rid)
    result = PermissionResult(rid, "selected", "allow") if approve else PermissionResult(rid, "cancelled")
    return client._replace(perms=perms), [_send(index, client, result)]


def reconnect(client: Client, index: int, replay: bool) -> tuple[Client, list]:
    """Open a new connection and ``session/resume``, with or without ``replayFrom: start`` (R1)."""
    rid = client.next_rid
    client = client._replace(
        epoch=client.epoch + 1, up=True, next_rid=rid + 1, resume_rid=rid, replay=replay, view="resuming"
    )
    return client, [ev.Connect((index, client.epoch)), _send(index, client, Resume(rid, SESSION, "start" if replay else None))]


def disconnected(client: Client) -> Client:
    """E10: the transport closed. Pending submissions become ambiguous (R11)."""
    subs = tuple(s._replace(status="ambiguous") if s.status == "pending" else s for s in client.subs)
    return client._replace(up=False, subs=subs, perms=(), resume_rid=None, view="partial", cut=True)


# -- receiving ------------------------------------------------------------


def receive(client: Client, index: int, msg, spec: Spec) -> tuple[Client, list]:
    """Apply one message delivered from the agent."""
    kind = msg.kind
    if kind == "update":
        return _apply_update(client, index, msg.update, spec)
    if kind == "prompt_result":
        return _prompt_result(client, index, msg)
    if kind == "prompt_result_v1":
        return _v1_result(client, msg), []
    if kind == "error_response":
        return _error_response(client, msg), []
    if kind == "resume_result":
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


def _prompt_result(client: Client, index: int, msg) -> tuple[Client, list]:
    """U2: link the response's ID to the submission; merge with a message already received."""
    i = _find_sub(client, msg.rid)
    if i is None or client.subs[i].status != "pending":
        return client, []
    mid = msg.message_id
    sub = client.subs[i]
    client = client._replace(subs=replace_at(client.subs, i, sub._replace(status="accepted", mid=mid)))
    if mid is None:
        return client, []  # the v2 draft's `{}`: nothing to link the optimistic copy with
    return _bind_feed(client, i, mid), [ev.Bind(index, (index, sub.epoch, sub.rid), mid, "response")]


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


def _error_response(client: Client, msg) -> Client:
    i = _find_sub(client, msg.rid)
    if i is None or client.subs[i].status != "pending":
        return client
    status = "cancelled" if msg.error.code == -32800 else "rejected"
    subs = replace_at(client.subs, i, client.subs[i]._replace(status=status))
    feed = client.feed
    opt = _optimistic(feed, i)
    if opt is not None:
        feed = feed[:opt] + feed[opt + 1 :]
    return client._replace(subs=subs, feed=feed)


def _apply_update(client: Client, index: int, update, spec: Spec) -> tuple[Client, list]:
    kind = update.kind
    if kind == "state_update":
        return _apply_state(client, update), []
    if kind in ("user_message", "agent_message"):
        role = "user" if kind == "user_message" else "agent"
        token = update.prompt_id if kind == "user_message" else None
        return _upsert(client, index, update.message_id, role, update.content, None, spec, token)
    if kind in ("user_message_chunk", "agent_message_chunk"):
        role = "user" if kind == "user_message_chunk" else "agent"
        return _upsert(client, index, update.message_id, role, None, update.block, spec)
    if kind == "unknown_update" and update.session_update == "error":
        return client._replace(last_stop="error"), []  # the separate-error-update alternative
    return client, []  # notices are advisory and may be ignored (N1)


KNOWN_STATES = ("idle", "running", "requires_action")


def _apply_state(client: Client, update) -> Client:
    """S15: an unknown state is shown as busy, never as idle; an ending idle tells how work ended."""
    if update.state not in KNOWN_STATES:
        return client._replace(fg="busy")
    if update.state == "idle" and update.stop_reason is not None:
        return client._replace(fg="idle", last_stop=update.stop_reason)
    return client._replace(fg=update.state)


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
    if role == "user" and spec.client_correlation != "message_id" and not any(s.mid == mid for s in client.subs):
        if at is None or spec.client_correlation in ("token", "jsonrpc_id"):
            client, out = _guess(client, index, mid, content if content is not None else (block,), spec, token)
            feed = client.feed
            at = _find_item(feed, mid)
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


def _guess(client: Client, index: int, mid, content, spec: Spec, token=None) -> tuple[Client, list]:
    """Bind an unknown message to a pending submission without the response.

    By content or by order it is a guess (breaks P9); by a client token or by
    the request id it is the mechanism of a rejected alternative.
    """
    how = spec.client_correlation
    for i, sub in enumerate(client.subs):
        if sub.status != "pending" and sub.status != "ambiguous":
            continue
        if how == "content" and sub.content != tuple(content):
            continue
        if how == "token" and (token is None or token != f"p{sub.rid}"):
            continue
        if how == "jsonrpc_id" and mid != f"r{sub.rid}":
            continue
        subs = replace_at(client.subs, i, sub._replace(status="accepted", mid=mid))
        client = _bind_feed(client._replace(subs=subs), i, mid)
        return client, [ev.Bind(index, (index, sub.epoch, sub.rid), mid, spec.client_correlation)]
    return client, []
