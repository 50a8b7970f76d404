"""The one reading of the wire: one JSON-RPC message in, one annotated observation out (the front end).

Every driver passes each message through :class:`Frontend` before any monitor
sees it (DESIGN.md, "One model, three drivers").  It classifies the JSON once
(:func:`classify`) and keeps the bookkeeping every monitor would otherwise
repeat:

* request/response pairing per connection and sender (P19: ids are chosen per
  sender and direction): a response learns the method, seq and session of
  the request it answers;
* the dialect of each connection, from the ``initialize`` response's
  ``protocolVersion`` (1: v1, 2: v2) unless ``--spec`` forces one;
* the foreground state of each ``(connection, session)`` from its
  ``state_update`` notifications, so an idle is known to *end* work (after
  ``running``, ``requires_action`` or a custom state) or to be a snapshot
  (S5, S14: the transition is inferred from the previous state, Q1);
* resume windows: from a ``session/resume`` request to its response (R1, R3,
  S13), and v1 ``session/load`` likewise;
* the end of a connection (E10: its obligations end with it).

Dispatch keys (what a monitor's ``keys`` and ``armed`` name), so each
message reaches only the monitors that can learn from it:

* every message: ``msg``; ``problem`` (a framing fault, ``obs.problem``),
  ``invalid`` (not a JSON-RPC message); ``bridge`` once connections of both
  dialects were seen;
* requests: ``req``, ``req:METHOD``, ``dup`` (an id reused while pending),
  ``unadvertised`` (prompt content the agent did not advertise);
* responses: ``res``, ``res:METHOD`` and ``res:METHOD:ok`` / ``:err`` (by
  the method of the request answered), ``res:?`` (answers no pending
  request), ``err`` (any error response);
* notifications: ``note``, ``note:METHOD``, ``client-update`` (a
  ``session/update`` from a client);
* agent updates: ``upd``, ``upd:KIND``; for ``state_update``
  ``state:running`` / ``state:idle`` / ``state:requires_action``,
  ``state:?`` (another string), ``state:!`` (no string), ``ending`` (an idle
  that ends work), ``idle-snapshot``, ``bg`` (carries ``background``),
  ``usage``; for messages ``nomid`` (no string ``messageId``) and
  ``badchunk`` (a chunk without one content block); ``caps`` (a tool call or
  terminal update with ``capabilities``); ``replay`` (inside a replay window)
  and ``output@idle`` (an agent message or thought while the connection shows
  idle);
* ``close`` (a connection ended) and ``int:EVENT`` (an internal event).

For a ``$/cancel_request``, ``obs.req`` is the pending request it names (or
None); for ``session/close`` and ``session/cancel``, ``obs.data`` lists the
session's pending prompts.
"""

from __future__ import annotations

import json
import zlib

from acplab.model.wire import codec

from .dispatch import Dispatch  # noqa: F401 - re-exported: the drivers import it with the front end
from .rule_monitor import V1, V2, Book, Obs, Switches, is_id, new_book
from .wire_reading_caps import CONTENT_CAPS, _prompt_caps, _unadvertised, advertised_states  # noqa: F401 - re-exported

C2A = "client->agent"
A2C = "agent->client"

STANDARD_STATES = ("running", "idle", "requires_action")
BUSY = ("running", "requires_action")


def block_key(block) -> str:
    """A content block as a short comparable key: the text itself, else type and a checksum."""
    if isinstance(block, dict):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            return block["text"]
        try:
            text = json.dumps(block, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            text = repr(type(block))
        return f"[{kind if isinstance(kind, str) else '?'}:{zlib.crc32(text.encode('utf-8', 'replace')):08x}]"
    return f"[{type(block).__name__}]"


def content_key(blocks) -> tuple:
    """A prompt's or message's content (a list of blocks) as a tuple of block keys; () if not a list."""
    if not isinstance(blocks, list):
        return ()
    return tuple(block_key(b) for b in blocks)


INT64 = 2**63
KNOWN_STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error")
_CHUNKS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")
_OUTPUT = ("agent_message_chunk", "agent_message", "agent_thought_chunk", "agent_thought")


def _prompt_keys(params) -> list[str]:
    """Features of a ``session/prompt`` request: ``badprompt`` (not ``{sessionId, prompt: [block, ...]}``,
    or empty), ``client-ids`` (a messageId or promptId), ``command`` (a ``/name`` command)."""
    if params is None:
        return ["badprompt"]
    keys = []
    blocks = params.get("prompt")
    if not isinstance(params.get("sessionId"), str) or not isinstance(blocks, list) or not blocks or \
            any(not isinstance(x, dict) or not isinstance(x.get("type"), str) for x in blocks):
        keys.append("badprompt")
    if "messageId" in params or "promptId" in params:
        keys.append("client-ids")
    if isinstance(blocks, list) and blocks and isinstance(blocks[0], dict) and blocks[0].get("type") == "text":
        text = blocks[0].get("text")
        if isinstance(text, str) and len(text) > 1 and text[0] == "/":
            keys.append("command")
    return keys


def _odd_prompt_result(result) -> bool:
    """A v2 prompt success that is not exactly ``{messageId: "<non-empty>"}`` (``_meta`` allowed)."""
    if not isinstance(result, dict):
        return True
    mid = result.get("messageId")
    return not isinstance(mid, str) or not mid or len(result) > 2 or (len(result) == 2 and "_meta" not in result)
_MESSAGES = ("user_message", "agent_message", "agent_thought") + _CHUNKS


_UPDATE_BASE: dict = {}


def _update_keys(update: dict, utype: str | None) -> tuple:
    """The static keys of a ``session/update``: by kind, state, and the shape faults monitors look for."""
    base = _UPDATE_BASE.get(utype)
    if base is None:
        base = _UPDATE_BASE[utype] = ("msg", "note", "note:session/update", "upd", "upd:" + (utype or "?"))
    if utype in _MESSAGES:
        extra = ()
        if update.get("messageId").__class__ is not str:
            extra = ("nomid",)
        if utype in _CHUNKS:
            block = update.get("content")
            if block.__class__ is not dict or block.get("type").__class__ is not str:
                extra += ("badchunk",)
        return base + extra if extra else base
    if utype == "state_update":
        state = update.get("state")
        keys = ["state:" + (state if state in STANDARD_STATES else "?" if isinstance(state, str) else "!")]
        if state not in STANDARD_STATES:
            keys.append("odd-state")
        reason = update.get("stopReason")
        if state == "idle":
            if reason == "error":
                keys.append("stop:error")
            elif reason is not None and (not isinstance(reason, str) or
                                         (reason not in KNOWN_STOP_REASONS and not reason.startswith("_"))):
                keys.append("odd-stop")
            if "error" in update and reason != "error":
                keys.append("odd-stop")
        elif reason is not None:
            keys.append("odd-stop")
        if "background" in update:
            keys.append("bg")
        if "usage" in update:
            keys.append("usage")
        return base + tuple(keys)
    if utype in ("tool_call_update", "terminal_update") and "capabilities" in update:
        return base + ("caps",)
    return base


def classify(o: Obs) -> Obs:
    """Fill the static fields of a message observation from ``o.msg`` (its JSON object), and its static keys."""
    msg = o.msg
    if msg.__class__ is not dict:
        o.shape = "invalid"
        o.problem = "not a JSON object"
        o.keys = ("msg", "invalid", "problem")
        return o
    method = msg.get("method")
    params = msg.get("params")
    if method == "session/update" and params.__class__ is dict and "id" not in msg:
        # the common case, first: an agent's session/update
        o.method = method
        o.shape = "notification"
        o.params = params
        sid = params.get("sessionId")
        o.sid = sid if sid.__class__ is str else None
        update = params.get("update")
        if update.__class__ is dict:
            o.update = update
            utype = update.get("sessionUpdate")
            o.utype = utype = utype if utype.__class__ is str else None
            keys = _update_keys(update, utype)
        else:
            keys = ("msg", "note", "note:session/update", "upd", "upd:?")
        if o.dir == C2A:
            keys += ("client-update",)
        if msg.get("jsonrpc") != "2.0":
            o.problem = 'no "jsonrpc": "2.0"'
            keys += ("problem",)
        o.keys = keys
        return o
    if msg.get("jsonrpc") != "2.0":
        o.problem = 'no "jsonrpc": "2.0"'
    if "method" in msg:
        if not isinstance(method, str):
            o.shape = "invalid"
            o.problem = "its method is not a string"
            o.keys = ("msg", "invalid", "problem")
            return o
        o.method = method
        o.params = params if isinstance(params, dict) else None
        if o.params is not None:
            sid = o.params.get("sessionId")
            o.sid = sid if isinstance(sid, str) else None
        if "id" in msg:
            o.shape = "request"
            o.rid = msg["id"]
            keys = ["msg", "req", "req:" + method]
            if not is_id(o.rid) or (isinstance(o.rid, int) and not -INT64 <= o.rid < INT64):
                keys.append("badid")
            if method == "session/prompt":
                keys += _prompt_keys(o.params)
        else:
            o.shape = "notification"
            keys = ["msg", "note", "note:" + method]
            if method == "session/update":
                keys += ["upd", "upd:?"] + (["client-update"] if o.dir == C2A else [])
        if o.problem is not None:
            keys.append("problem")
        o.keys = tuple(keys)
        return o
    if "result" in msg or "error" in msg:
        o.shape = "response"
        o.rid = msg.get("id")
        if "result" in msg and "error" in msg:
            o.problem = "it has both result and error"
        o.keys = ("msg", "res", "err") if "error" in msg else ("msg", "res")
        if o.problem is not None:
            o.keys += ("problem",)
        return o
    o.shape = "invalid"
    o.problem = "it has neither method, result nor error"
    o.keys = ("msg", "invalid", "problem")
    return o


#: the front end's bookkeeping (see :mod:`.rule_monitor`, "Book")
FIELDS = {
    "pending": dict,   # (conn, side, id) -> (method, stamp, sessionId, extra)
    "dialect": dict,   # conn -> "v1" | "v2" (from initialize)
    "fg": dict,        # (conn, sessionId) -> (the last state reported, stamp of the change to it)
    "window": dict,    # (conn, sessionId) -> (resume id, replay kind, stamp)
    "closed": set,     # (conn, sessionId) after a successful session/close
    "caps": dict,      # conn -> the advertised prompt content types (beyond text and resource_link)
    "gone": set,       # connections that have ended (E10)
    "mixed": False,    # connections of both dialects seen: a bridge's two legs
    "fresh": dict,     # (conn, sessionId, messageId) -> live? (decided once in that connection's open resume window)
    "states": dict,    # conn -> the custom states its client advertised (``switches.states_key``)
}


def _side(direction: str) -> str:
    return "client" if direction == C2A else "agent"


def _other(side: str) -> str:
    return "agent" if side == "client" else "client"


def _extra(o: Obs):
    """What monitors need later of a request, kept with it until its response."""
    p = o.params
    m = o.method
    if p is None:
        return None
    if m == "session/prompt":
        return content_key(p.get("prompt"))
    if m in ("session/resume", "session/load"):
        rf = p.get("replayFrom") if m == "session/resume" else "load"
        if rf is None:
            return None
        if isinstance(rf, dict) and isinstance(rf.get("type"), str):
            return rf["type"]
        return rf if rf == "load" else "!malformed"
    if m in ("tool_call/cancel", "terminal/cancel"):
        target = p.get("toolCallId" if m == "tool_call/cancel" else "terminalId")
        return target if isinstance(target, str) else None
    if m == "initialize":
        return p.get("protocolVersion") if is_id(p.get("protocolVersion")) else None
    return None


class Frontend:
    """Annotates observations; its bookkeeping is a :class:`Book` with :data:`FIELDS`."""

    fields = FIELDS

    def __init__(self, switches: Switches) -> None:
        self.switches = switches
        self.default = V1 if switches.dialect == V1 else V2

    def feed(self, b: Book, o: Obs) -> Obs:
        """Annotate ``o`` (already classified) and update the book; add the keys that depend on the past."""
        if o.kind == "close":
            self._close(b, o.conn)
            o.keys = ("close",)
            return o
        if o.kind != "msg":
            o.stale = o.conn is not None and o.conn in b.gone
            return o
        conn = o.conn
        o.dialect = b.dialect.get(conn, self.default) if b.dialect else self.default
        shape = o.shape
        extra = []
        if o.update is not None and o.dir == A2C and o.sid is not None:
            # the common case first: an agent's session/update
            key = (conn, o.sid)
            fg = b.fg.get(key)
            fg = o.fg = fg[0] if fg is not None else None
            if fg == "idle" and o.utype in _OUTPUT:
                extra.append("output@idle")
            if o.utype == "state_update":
                self._state(b, o, key, extra)
            if b.window:
                window = b.window.get(key)
                if window is not None:
                    o.resumed = window
                    window = self._in_window(b, o, key, window)
                elif o.utype in _MESSAGES:
                    _announce(b, o.conn, o.sid, o.update.get("messageId"))
                if window is not None:
                    o.window = window
                    if window[1] is not None:
                        extra.append("replay")
            if b.mixed:
                extra.append("bridge")
            if extra:
                o.keys = o.keys + tuple(extra)
            return o
        if shape == "request":
            self._request(b, o, extra)
        elif shape == "response":
            self._response(b, o, extra)
        elif o.method == "$/cancel_request" and o.params is not None:
            rid = o.params.get("requestId")
            o.req = b.pending.get((conn, _side(o.dir), rid)) if is_id(rid) else None
        elif o.method == "session/cancel" and o.sid is not None:
            o.data = self._prompts_of(b, o.sid)
        if o.sid is not None:  # (an agent's session/update with a session took the path above)
            fg = b.fg.get((conn, o.sid))
            o.fg = fg[0] if fg is not None else None
        if b.mixed:
            extra.append("bridge")
        if extra:
            o.keys = o.keys + tuple(extra)
        return o

    # -- requests and responses ------------------------------------------------------------

    def _request(self, b: Book, o: Obs, keys: list) -> None:
        rid = o.rid
        if not is_id(rid):
            return
        key = (o.conn, _side(o.dir), rid)
        earlier = b.pending.get(key)
        if earlier is not None:
            o.dup = earlier[1]
            keys.append("dup")
        b.pending[key] = (o.method, o.stamp, o.sid, _extra(o))
        if o.method == "session/prompt" and o.params is not None and o.conn in b.caps:
            o.data = _unadvertised(o.params.get("prompt"), b.caps[o.conn])
            if o.data:
                keys.append("unadvertised")
        elif o.method in ("session/resume", "session/load") and o.sid is not None and o.dir == C2A:
            b.window[(o.conn, o.sid)] = (rid, b.pending[key][3], o.stamp)
            _forget_window(b, o.conn, o.sid)
        elif o.method == "initialize" and self.switches.states_key and o.dir == C2A:
            b.states[o.conn] = advertised_states(o.params, self.switches.states_key)
        elif o.method == "session/close" and o.sid is not None:
            o.data = self._prompts_of(b, o.sid)

    @staticmethod
    def _prompts_of(b: Book, sid) -> tuple:
        """The session's prompts pending at the agent, as ``(conn, id)`` (for close and cancel, C4, C14)."""
        return tuple(sorted(((c, rid) for (c, side, rid), (method, _s, s, _x) in b.pending.items()
                             if method == "session/prompt" and s == sid and side == "client"), key=repr))

    def _response(self, b: Book, o: Obs, keys: list) -> None:
        rid = o.rid
        req = b.pending.pop((o.conn, _other(_side(o.dir)), rid), None) if is_id(rid) else None
        if req is None:
            keys.append("res:?")
            return
        method, _stamp, sid, extra = req
        o.answers = method
        o.req = req
        o.sid = sid
        ok = "result" in o.msg and "error" not in o.msg
        keys += ("res:" + method, "res:" + method + (":ok" if ok else ":err"))
        if ok and method == "session/prompt" and _odd_prompt_result(o.msg["result"]):
            keys.append("oddresult")
        if method in ("session/resume", "session/load") and sid is not None:
            o.window = b.window.pop((o.conn, sid), None)
            _forget_window(b, o.conn, sid)
        elif ok and method == "session/prompt" and b.window and sid is not None and \
                isinstance(o.msg["result"], dict):
            _announce(b, o.conn, sid, o.msg["result"].get("messageId"))
        elif method == "session/close" and sid is not None and (ok or _is_not_found(o.msg)):
            b.closed.add((o.conn, sid))
        elif method == "initialize" and ok and isinstance(o.msg.get("result"), dict):
            self._initialized(b, o)

    def _initialized(self, b: Book, o: Obs) -> None:
        result = o.msg["result"]
        version = result.get("protocolVersion")
        if not self.switches.forced and version in (1, 2):
            b.dialect[o.conn] = V1 if version == 1 else V2
            o.dialect = b.dialect[o.conn]
            b.mixed = len(set(b.dialect.values())) > 1
        b.caps[o.conn] = _prompt_caps(result)

    # -- foreground state ------------------------------------------------------------

    def _state(self, b: Book, o: Obs, key, keys: list) -> None:
        state = o.update.get("state")
        if not isinstance(state, str):
            return
        if state == "idle":
            o.ending = o.fg is not None and o.fg != "idle"
            keys.append("ending" if o.ending else "idle-snapshot")
            if o.ending and not isinstance(o.update.get("stopReason"), str):
                keys.append("stop:none")
        if state != o.fg:
            b.fg[key] = (state, o.stamp)
        if b.states and state not in STANDARD_STATES and state in b.states.get(o.conn, ()):
            o.advertised = True

    # -- replay windows ------------------------------------------------------------

    def _in_window(self, b: Book, o: Obs, key, window):
        """The window a message update inside ``key``'s resume window belongs to, or None when it is live.

        Live (R7 asks for the reset only "when replay reconstructs a user
        message"): an ID first returned by a prompt success or reported
        outside a window on another connection of the session after the
        window opened, or a user message that matches the content of a prompt
        pending on another connection (its fan-out may come first).  Decided
        once per ID and window.
        """
        mid = o.update.get("messageId") if o.utype in _MESSAGES else None
        if mid.__class__ is not str:
            return window
        live = b.fresh.get(key + (mid,))
        if live is None:
            live = b.fresh[key + (mid,)] = o.utype in _USER and self._foreign_prompt(b, o)
        return None if live else window

    @staticmethod
    def _foreign_prompt(b: Book, o: Obs) -> bool:
        """A prompt of the session pending on another connection has this user message's content."""
        content = o.update.get("content")
        got = (block_key(content),) if o.utype == "user_message_chunk" else content_key(content)
        if not got:
            return False
        for (conn, side, _rid), (method, _stamp, sid, prompt) in b.pending.items():
            if method == "session/prompt" and sid == o.sid and conn != o.conn and side == "client" and prompt and \
                    (prompt == got or (o.utype == "user_message_chunk" and prompt[0] == got[0])):
                return True
        return False

    def _close(self, b: Book, conn) -> None:
        for table in (b.pending, b.fg, b.window, b.fresh):
            for k in [k for k in table if k[0] == conn]:
                del table[k]
        for k in [k for k in b.closed if k[0] == conn]:
            b.closed.discard(k)
        b.dialect.pop(conn, None)
        b.caps.pop(conn, None)
        b.states.pop(conn, None)
        b.gone.add(conn)


_USER = ("user_message", "user_message_chunk")


def _announce(b: Book, conn, sid, mid) -> None:
    """``mid`` is live in ``sid``: in every open window of another connection that has not placed it yet."""
    if mid.__class__ is not str:
        return
    for wconn, wsid in b.window:
        if wsid == sid and wconn != conn:
            b.fresh.setdefault((wconn, wsid, mid), True)


def _forget_window(b: Book, conn, sid) -> None:
    """Drop what a resume window of ``(conn, sid)`` decided about its IDs (it ended, or a new one opens)."""
    if b.fresh:
        for k in [k for k in b.fresh if k[0] == conn and k[1] == sid]:
            del b.fresh[k]


def _is_not_found(msg: dict) -> bool:
    err = msg.get("error")
    return isinstance(err, dict) and err.get("code") == -32002


def internal_obs(event: str, data: dict, stamp=None) -> Obs:
    """An internal event as an observation (the sidecar's and the model's vocabulary)."""
    o = Obs("internal", conn=data.get("conn"), stamp=stamp)
    o.event = event
    o.data = data
    o.sid = data.get("session")
    o.keys = ("int:" + event,)
    return o


def close_obs(conn, stamp=None) -> Obs:
    return Obs("close", conn=conn, stamp=stamp)


# --------------------------------------------------------------------------- the reading, for renderers


def read_records(records, switches: Switches | None = None):
    """``(record, observation)`` per capture record: classified, paired with its request and given its
    dialect by one :class:`Frontend`, as the trace checker reads them (a diagram labels what it judged)."""
    front = Frontend(switches if switches is not None else Switches())
    book = new_book(FIELDS)
    for rec in records:
        if rec.close is not None:
            yield rec, front.feed(book, close_obs(rec.conn, rec.seq))
            continue
        o = Obs("msg", rec.conn, rec.dir, rec.seq, rec.msg)
        if rec.msg is not None:
            front.feed(book, classify(o))
        yield rec, o


def message_of(o: Obs, version: str = "v2"):
    """The abstract message (:mod:`acplab.model.wire.values`) a read message stands for, decoded with the
    method of the request it answers (``o.answers``); ``version`` "v2-draft" or "v2" for a v2 connection."""
    return codec.decode(o.msg, response_to=o.answers, version="v1" if o.dialect == V1 else version)
