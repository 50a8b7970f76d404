"""Tool calls, terminals, background work and the output of ended work: S6, C8, E6, S11, G1-G6, C5, E9, C15.

A tool call (``tool_call_update``) or terminal (``terminal_update``) is
*final* once a tool call has status ``completed``, ``failed`` or
``cancelled``, or a terminal has an ``exitStatus`` object.  ``background`` on
a ``state_update`` is a complete snapshot of work that runs independently of
the foreground (G1): omitted or ``null`` means "not reported", ``[]`` means
nothing runs, a malformed list counts as not reported.
"""

from __future__ import annotations

from ..rule_monitor import Monitor, conn_name, obligation, violation, warning
from .common import C2A, FINAL_TOOL, bound, drop_conn, is_live, is_success, stop_reason

_ITEMS = ("upd:tool_call_update", "upd:terminal_update")
_TOOLS = ("tool_call_update", "terminal_update")
_MESSAGES = ("upd:agent_message", "upd:agent_message_chunk", "upd:agent_thought", "upd:agent_thought_chunk")
_MESSAGE_KINDS = {"agent_message": "agent", "agent_message_chunk": "agent", "agent_thought": "thought",
                  "agent_thought_chunk": "thought"}


def item_of(o):
    """``(kind, id, final, status)`` of a tool-call or terminal update, or None without a string id."""
    u = o.update
    if o.utype == "tool_call_update":
        tid = u.get("toolCallId")
        status = u.get("status")
        return ("tool_call", tid, status in FINAL_TOOL, status) if isinstance(tid, str) else None
    tid = u.get("terminalId")
    exit_status = u.get("exitStatus")
    status = "exited" if isinstance(exit_status, dict) else None
    if status and exit_status.get("exitCode") not in (0, None):
        status = "failed"
    return ("terminal", tid, status is not None, status) if isinstance(tid, str) else None


def background_of(update: dict):
    """The ``background`` list as a tuple of ``(kind, id)`` items; None when not reported (G1)."""
    raw = update.get("background")
    if not isinstance(raw, list):
        return None
    items = []
    for item in raw:
        kind = item.get("type") if isinstance(item, dict) else None
        if not isinstance(kind, str):
            return None
        if kind in ("tool_call", "terminal"):
            tid = item.get("toolCallId" if kind == "tool_call" else "terminalId")
            if not isinstance(tid, str):
                return None
            items.append((kind, tid))
        else:
            items.append(("other", kind))
    return tuple(items)


class ToolCallsSettleBeforeIdle(Monitor):
    """S6, C8, E6 (and the S11 tolerance): the idle that ends work comes after every update of that work.

    A tool call, terminal, agent message or thought first seen during a
    piece of work (the connection showed it busy), still unfinished at the
    idle that ends it and not listed in that idle's ``background``, may not
    be updated after that idle (before new work starts).  When the agent
    vouched for what runs on -- the idle listed ``background``, or the
    internal ``work_end`` event names its background work (the model's
    agent runs none) -- that is a violation (C8 if the idle was
    ``cancelled``); when it did not, the item may be unlisted detached work
    (G1) that goes on emitting (S11), so a warning.  At an ``error`` idle
    every such call should already be final (E6, SHOULD: a warning).
    Updates while idle of no ended work are background output and stay
    legal (S11); replayed updates are exempt.  A call still unfinished when
    the run ends is an obligation when the agent vouched (a warning
    otherwise); a message never is (messages have no final status).
    """

    name = "ToolCallsSettleBeforeIdle"
    rules = ("S6", "C8", "E6", "S11")
    description = "no update of ended work follows its idle; tool calls are final before an error idle"
    keys = _ITEMS + _MESSAGES + ("int:work_end", "int:work_start", "int:restart")
    armed = {"upd:state_update": ("open", "ended"), "close": ("open", "ended", "vouched")}
    #: ``open``: (conn, session, kind, id) -> (of the running work, stamp); ``ended``: the same key -> (idle stamp,
    #: vouched, stop reason, first stamp); ``vouched``: session -> the background the internal work_end named
    fields = {"open": dict, "ended": dict, "vouched": dict}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.open, o.conn)
            drop_conn(b.ended, o.conn)
            return None
        if o.kind == "internal":
            return self._internal(b, o)
        if o.dir == C2A or o.sid is None or not is_live(o):
            return None
        if o.utype == "state_update":
            return self._state(b, o)
        item = item_of(o) if o.utype in _TOOLS else _message_of(o)
        if item is None:
            return None
        kind, tid, final, status = item
        key = (o.conn, o.sid, kind, tid)
        out = None
        ended = b.ended.pop(key, None)
        if ended is not None:
            stamp, listed, reason, first = ended
            rules = ("S6", "C8") if reason == "cancelled" else ("S6",)
            make = violation if listed else warning
            why = _WHY[listed] if kind in ("tool_call", "terminal") or not listed else \
                _WHY[listed] + ", and a message is no background work"
            what = "updated" if kind in ("tool_call", "terminal") else "continued"
            out = [make(rules, f"{_noun(kind)} {tid} on {conn_name(o.conn)} is {what} ({status or 'patch'}) after "
                               f"the idle {reason!r} that ended its work ({why})", first, stamp, o.stamp)]
        if final:
            b.open.pop(key, None)
        elif key not in b.open and (kind in ("tool_call", "terminal") or o.fg not in (None, "idle")):
            b.open[key] = (o.fg not in (None, "idle"), o.stamp)
        return out

    def _internal(self, b, o):
        sid = o.data.get("session")
        if o.event == "restart":
            b.vouched.clear()
        elif o.event == "work_start":
            b.vouched.pop(sid, None)
        else:
            background = o.data.get("background")
            if isinstance(background, (list, tuple)):
                keep = frozenset(x for x in background if isinstance(x, str))
                b.vouched[sid] = keep
                for key, (stamp, listed, reason, first) in list(b.ended.items()):
                    if key[1] == sid and not listed and key[3] not in keep:
                        b.ended[key] = (stamp, "work_end", reason, first)
        return None

    def _state(self, b, o):
        if not o.ending:
            if o.update.get("state") not in ("idle", None):
                for k in [k for k in b.ended if k[0] == o.conn and k[1] == o.sid]:
                    del b.ended[k]
            return None
        listed = background_of(o.update)
        vouched = b.vouched.get(o.sid)
        reason = stop_reason(o.update)
        out = []
        for key, (current, stamp) in sorted(b.open.items(), key=lambda kv: repr(kv[0])):
            conn, sid, kind, tid = key
            if conn != o.conn or sid != o.sid:
                continue
            if kind not in ("tool_call", "terminal"):
                del b.open[key]  # a message of this work: judged from now on only as ended work
                if current:  # a background list vouches for what runs on: a message never is listed work
                    b.ended[key] = (o.stamp, _vouch(listed, vouched), reason, stamp)
                continue
            b.open[key] = (False, stamp)  # from now on it belongs to ended work, or to the background
            if not current or (listed and (kind, tid) in listed) or (vouched is not None and tid in vouched):
                continue
            b.ended[key] = (o.stamp, _vouch(listed, vouched), reason, stamp)
            if reason == "error":
                out.append(warning(("E6",), f"{kind} {tid} on {conn_name(o.conn)} is still unfinished at the error "
                                            "idle; failed work gives its calls a final status first", stamp, o.stamp))
        return out

    def end(self, b, complete, front=None):
        """Calls of ended work never finished: their final status could only come after the idle (S6)."""
        out = []
        for (conn, _sid, kind, tid), (stamp, listed, reason, first) in sorted(b.ended.items(), key=repr):
            if kind not in ("tool_call", "terminal"):
                continue
            text = f"{kind} {tid} on {conn_name(conn)} never got a final status; the idle {reason!r} ended its work"
            out.append(obligation(("S6",), text, first, stamp) if listed else warning(("S6",), text, first, stamp))
        return out


#: why an update after its idle is (or is not) proven to belong to ended work, by what vouched for the background
_WHY = {None: "its idle reported no background list", "list": "its idle listed the background without it",
        "work_end": "the agent's work_end event named the background without it"}


def _vouch(listed, vouched):
    """What vouched for the background at an ending idle: its ``background`` list, the internal event, or None."""
    return "list" if listed is not None else "work_end" if vouched is not None else None


def _message_of(o):
    """``(kind, id, final, status)`` of an agent message or thought update (never final), or None without an id."""
    mid = o.update.get("messageId")
    return (_MESSAGE_KINDS[o.utype], mid, False, None) if isinstance(mid, str) else None


def _noun(kind: str) -> str:
    return {"agent": "agent message", "thought": "thought"}.get(kind, kind)


class BackgroundSnapshotsConsistent(Monitor):
    """G1-G5, C5, E9: ``background`` lists are complete, announced, finalised and kept up.

    * G2: once a connection saw a non-empty list for a session, every later
      ``state_update`` there carries a list (a violation); after only ``[]``,
      or when another connection of the session saw a list, a warning (Q11).
    * G3: a listed tool call or terminal was announced (an update with its
      id) earlier in the session.  Finished work is remembered (a bounded
      table) only in sessions that report background, so a session without
      lists keeps no history.
    * G4: an item dropped from the previous list has its final status first.
    * G5: no item is listed twice.
    * C5: work listed at ``session/cancel`` keeps running: a listed item that
      is then ``cancelled`` (or a terminal that exits) before the cancelled
      idle is a warning (natural completion looks the same).
    * E9: a listed item failing while idle is no stop reason: an ``error``
      idle right after it, with no ``running`` between, is a violation (no
      foreground work ran that it could end), a warning when the
      connection's last ending was itself ``error`` (a snapshot repeating
      it).
    """

    name = "BackgroundSnapshotsConsistent"
    rules = ("G1", "G2", "G3", "G4", "G5", "C5", "E9")
    description = "background lists are complete snapshots of announced work, kept up once reported"
    keys = _ITEMS + ("bg",)
    armed = {"upd:state_update": ("lists", "sessions", "failing", "cancel"), "note:session/cancel": ("lists",),
             "res:session/close": ("lists",), "close": ("lists", "cancel", "failing")}
    #: ``ends``: (conn, session) -> the stop reason of its last ending idle, where background is reported (E9)
    fields = {"lists": dict, "sessions": dict, "open": set, "finals": dict, "cancel": dict, "failing": dict,
              "ends": dict}
    LIMIT = 4096

    def on(self, b, o):
        if o.kind == "close":
            for table in (b.lists, b.cancel, b.failing, b.ends):
                drop_conn(table, o.conn)
            return None
        if o.shape == "response":
            if is_success(o.msg):
                b.lists.pop((o.conn, o.sid), None)
            return None
        if o.method == "session/cancel":
            current = b.lists.get((o.conn, o.sid))
            if o.dir == C2A and current is not None and current[0]:
                b.cancel[(o.conn, o.sid)] = (current[0], o.stamp)
            return None
        if o.dir == C2A or o.sid is None:
            return None
        if o.utype == "state_update":
            return self._snapshot(b, o)
        return self._item(b, o)

    def _item(self, b, o):
        item = item_of(o)
        if item is None:
            return None
        kind, tid, final, status = item
        key = (o.sid, kind, tid)
        if not final:
            b.open.add(key)
        elif key in b.open:
            b.open.discard(key)
            if o.sid in b.sessions:  # finished work is remembered only where background lists matter
                b.finals[key] = o.stamp
                bound(b.finals, self.LIMIT)
        listed = b.lists.get((o.conn, o.sid))
        in_list = listed is not None and (kind, tid) in listed[0]
        cancel = b.cancel.get((o.conn, o.sid))
        out = None
        if cancel is not None and (kind, tid) in cancel[0] and status in ("cancelled", "exited", "failed"):
            out = [warning(("C5",), f"{kind} {tid}, listed as background at session/cancel, ends {status} before "
                                    f"the cancelled idle on {conn_name(o.conn)}: cancel leaves listed work running",
                           cancel[1], o.stamp)]
        if in_list and o.fg == "idle" and status == "failed":
            b.failing[(o.conn, o.sid)] = o.stamp
        return out

    def _snapshot(self, b, o):
        key = (o.conn, o.sid)
        u = o.update
        items = background_of(u)
        prev = b.lists.get(key)
        out = []
        failing = b.failing.pop(key, None)
        if failing is not None and o.fg == "idle" and u.get("state") == "idle" and u.get("stopReason") == "error":
            # no foreground work ran: only a snapshot repeating an earlier error idle has another reading
            make = warning if b.ends.get(key) == "error" else violation
            out.append(make(("E9",), f"a background item failed while idle and the next state_update on "
                                     f"{conn_name(o.conn)} is an error idle although no foreground work ran: "
                                     "background failures are no stop reason", failing, o.stamp))
        if o.ending:
            b.cancel.pop(key, None)
            if prev is not None or items is not None:
                b.ends[key] = stop_reason(u)
        if items is None:
            if "background" in u and u["background"] is not None:
                out.append(warning(("G1",), f"background on {conn_name(o.conn)} is malformed: read as not reported",
                                   o.stamp))
            if prev is not None:
                make = violation if prev[1] else warning
                out.append(make(("G2",), f"{u.get('state')!r} state_update on {conn_name(o.conn)} omits background "
                                         "after background work was reported", prev[2], o.stamp))
            elif o.sid in b.sessions:
                out.append(warning(("G2",), f"state_update on {conn_name(o.conn)} omits background, which the "
                                            f"session reported on another connection", b.sessions[o.sid], o.stamp))
            return out
        seen = set()
        for kind, tid in items:
            if (kind, tid) in seen:
                out.append(violation(("G5",), f"background on {conn_name(o.conn)} lists {kind} {tid} twice", o.stamp))
            seen.add((kind, tid))
            if kind != "other" and (o.sid, kind, tid) not in b.open and (o.sid, kind, tid) not in b.finals:
                out.append(violation(("G3",), f"background on {conn_name(o.conn)} lists {kind} {tid}, never "
                                              "announced by an update before", o.stamp))
        if prev is not None:
            for kind, tid in sorted(prev[0] - seen):
                if kind != "other" and (o.sid, kind, tid) in b.open:
                    out.append(violation(("G4",), f"background on {conn_name(o.conn)} drops {kind} {tid} before its "
                                                  "final status was reported", prev[2], o.stamp))
        b.lists[key] = (frozenset(seen), bool(seen) or (prev is not None and prev[1]), o.stamp)
        b.sessions.setdefault(o.sid, o.stamp)
        return out


class ToolCallCancelHonoured(Monitor):
    """C15: ``tool_call/cancel`` and ``terminal/cancel`` only for targets advertising ``capabilities.cancel``.

    The client may send one only while the target advertises it (patch
    semantics: absent keeps, ``null`` clears, an object replaces); the agent
    answers ``-32602`` for an unknown, final or non-cancellable target, and
    after a success confirms with a final status (an obligation).
    """

    name = "ToolCallCancelHonoured"
    rules = ("C15",)
    description = "tool_call/cancel and terminal/cancel target cancellable work and are confirmed by a final status"
    keys = ("caps", "req:tool_call/cancel", "req:terminal/cancel")
    armed = {"upd:tool_call_update": ("items", "confirm"), "upd:terminal_update": ("items", "confirm"),
             "res:tool_call/cancel": ("asked",), "res:terminal/cancel": ("asked",), "close": ("asked",)}
    fields = {"items": dict, "asked": dict, "confirm": dict}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.asked, o.conn)
            return None
        if o.shape == "request":
            return self._asked(b, o)
        if o.shape == "response":
            return self._answered(b, o)
        if o.dir == C2A or o.sid is None:
            return None
        item = item_of(o)
        if item is None:
            return None
        kind, tid, final, _status = item
        key = (o.sid, kind, tid)
        if final:
            b.items.pop(key, None)
            b.confirm.pop(key, None)
            return None
        if "capabilities" in o.update:
            caps = o.update["capabilities"]
            b.items[key] = isinstance(caps, dict) and caps.get("cancel") is not None
        return None

    def _asked(self, b, o):
        kind = "tool_call" if o.method == "tool_call/cancel" else "terminal"
        tid = o.params.get("toolCallId" if kind == "tool_call" else "terminalId") if o.params else None
        key = (o.sid, kind, tid)
        cancellable = b.items.get(key, False)
        b.asked[(o.conn, o.rid)] = (key, o.stamp, cancellable)
        if cancellable:
            return None
        return [violation(self.rules, f"the client sends {o.method} for {kind} {tid} on {conn_name(o.conn)}, which "
                                      "does not advertise capabilities.cancel", o.stamp)]

    def _answered(self, b, o):
        asked = b.asked.pop((o.conn, o.rid), None)
        if asked is None:
            return None
        key, stamp, cancellable = asked
        if not is_success(o.msg):
            return None
        if not cancellable:
            return [violation(self.rules, f"{o.answers} for {key[1]} {key[2]} on {conn_name(o.conn)} succeeds, but "
                                          "the target is unknown, final or not cancellable: -32602 expected",
                              stamp, o.stamp)]
        b.confirm[key] = o.stamp
        return None

    def end(self, b, complete, front=None):
        return [obligation(self.rules, f"the cancel of {kind} {tid} ({sid}) was accepted but never confirmed by a "
                                       "final status", stamp)
                for (sid, kind, tid), stamp in sorted(b.confirm.items(), key=lambda kv: repr(kv[0]))]
