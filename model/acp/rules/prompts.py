"""``session/prompt`` and its user message: P4, P5, P10, P11, P13, P14, P15, U1, U2, U10, U11, W1.

The agent answers a prompt at insertion with the inserted message's ID (P4,
W1), a distinct one per submission (P5), and reports the message live on the
submitting connection under that ID (U1), before or after the response (U2).
The client sends no message ID (P13, U11) and no empty prompt (P14).
"""

from __future__ import annotations

from ..rule_monitor import BOTH, EVENTUALLY, ONLY_V2, Monitor, conn_name, json_type, obligation, violation, warning
from .common import (BUSY, C2A, MESSAGE_KEYS, MESSAGE_UPDATES, USER_UPDATES, drop_conn, error_code, is_live, is_success, message_id,
                     stop_reason)


class PromptResultCarriesMessageId(Monitor):
    """P4, W1: a ``session/prompt`` success is ``{messageId: <string>}`` (``_meta`` allowed).

    A missing, ``null`` or non-string ID makes the response invalid.  An empty
    string is legal by the schema (no minLength) but warned about; unknown
    extra keys are warned about.  Under the ``v2-draft`` preset (D1) the
    result may be ``{}``.
    """

    name = "PromptResultCarriesMessageId"
    rules = ("P4", "W1")
    description = "a session/prompt success carries the inserted message's ID as a non-null string"
    keys = ("oddresult",)
    dialects = ONLY_V2

    def on(self, b, o):
        if not is_success(o.msg):
            return None
        r = o.msg["result"]
        where = f"response to session/prompt #{o.rid} on {conn_name(o.conn)}"
        if not isinstance(r, dict):
            return [violation(self.rules, f"{where}: the result is {json_type(r)}, not an object", o.stamp)]
        mid = r.get("messageId")
        if isinstance(mid, str):
            out = []
            if mid == "":
                out.append(warning(("P4",), f"{where}: messageId is the empty string", o.stamp))
            extra = sorted(k for k in r if k not in ("messageId", "_meta"))
            if extra:
                out.append(warning(("W1",), f"{where}: unknown result fields {', '.join(extra)}", o.stamp))
            return out
        if self.switches.dialect == "v2-draft" and "messageId" not in r:
            return None
        what = "missing" if "messageId" not in r else "null" if mid is None else json_type(mid)
        return [violation(self.rules, f"{where}: messageId is {what}; a success must carry the inserted "
                                      "message's ID as a string", o.stamp)]


class MessageIdsDistinct(Monitor):
    """P5: every accepted submission gets its own ``messageId``, never given to another.

    Two successes in one session with the same ID are a violation, on any
    connections (both responses were sent by the agent).  The same string in
    another session, or as an agent or thought message ID (U12), is legal.
    (A success returning an ID reported *before* its prompt was sent is
    :class:`AcceptedMessagesReportedLive`'s.)
    """

    name = "MessageIdsDistinct"
    rules = ("P5",)
    description = "every accepted submission gets its own messageId, never reused for another"
    keys = ("res:session/prompt:ok",)
    dialects = ONLY_V2
    fields = {"returned": dict}

    def on(self, b, o):
        result = o.msg["result"]
        mid = result.get("messageId") if result.__class__ is dict else None
        if mid.__class__ is not str or o.sid is None:
            return None
        key = (o.sid, mid)
        first = b.returned.get(key)
        if first is not None:
            return [violation(("P5",), f"response to #{o.rid} on {conn_name(o.conn)} returns {mid}, already "
                                       "returned for another submission", first, o.stamp)]
        b.returned[key] = o.stamp
        return None


class MessageIdsUniqueInSession(Monitor):
    """P5, U12 under the RFD's reading (``--id-scope session``): one message ID names one message of one type.

    The RFD: "IDs are unique within the session"; the schema's ``MessageId``
    (U12, the default reading) gives user, agent and thought messages
    separate ID spaces, so this monitor runs only with ``switches.id_scope``
    ``session``.  A user message ID returned by a prompt success, or any
    message update's ID, that another type of message already carried in the
    session is a violation.  It remembers every ID of the session.
    """

    name = "MessageIdsUniqueInSession"
    rules = ("P5", "U12")
    description = "a message ID names messages of one type only in its session (the RFD's reading)"
    keys = ("res:session/prompt:ok",) + MESSAGE_KEYS
    dialects = ONLY_V2
    fields = {"types": dict}

    @staticmethod
    def applies(switches) -> bool:
        return switches.id_scope == "session"

    def on(self, b, o):
        if o.shape == "response":
            result = o.msg["result"]
            mid, kind = (result.get("messageId") if result.__class__ is dict else None), "user"
        else:
            mid, kind = o.update.get("messageId"), MESSAGE_UPDATES[o.utype][0]
        if mid.__class__ is not str or o.sid is None or o.dir == C2A:
            return None
        first = b.types.setdefault((o.sid, mid), (kind, o.stamp))
        if first[0] != kind:
            return [violation(("P5", "U12"), f"{mid} on {conn_name(o.conn)} names a {kind} message, but it already "
                                             f"named a {first[0]} message in {o.sid} (IDs are unique within the "
                                             "session)", first[1], o.stamp)]
        return None


class AcceptedMessagesReportedLive(Monitor):
    """U1, U2 (and the P3 proxy): each success's message is reported live, under its ID, on the submitting connection.

    The report (``user_message`` or ``user_message_chunk``) may come before or
    after the response (U2), but not before the prompt was sent: a report
    that precedes its own request cannot report its insertion (U2, and P5: the
    ID was another message's); that check compares evidence stamps, so it
    runs on captures only.  A copy inside a replay window does not count (Q3:
    U1 is a live obligation).  The obligation is open until the report
    arrives; it ends with the connection (E10).  An early success on an ID
    minted before insertion (P3) typically leaves it open.  Fan-out to other
    connections is not required (Q2).
    """

    name = "AcceptedMessagesReportedLive"
    rules = ("U1", "U2", "P3", "P10")
    description = "every accepted message is reported live on the submitting connection under its ID"
    #: its one other finding compares evidence stamps: captures only (the explorer's path fixes the order)
    expectation = EVENTUALLY
    keys = ("res:session/prompt:ok",) + USER_UPDATES
    armed = {"close": ("awaiting", "reported")}
    dialects = ONLY_V2
    fields = {"awaiting": dict, "reported": dict}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.awaiting, o.conn)
            drop_conn(b.reported, o.conn)
            return None
        if o.shape == "response":
            result = o.msg["result"]
            mid = result.get("messageId") if result.__class__ is dict else None
            if mid.__class__ is str and o.sid is not None:
                key = (o.conn, o.sid, mid)
                seen = b.reported.pop(key, None)
                if seen is None:
                    b.awaiting[key] = o.stamp
                elif seen < o.req[1]:
                    return [violation(("U2", "P5"), f"response to #{o.rid} on {conn_name(o.conn)} returns {mid}, "
                                                    "which was reported there before that prompt was sent",
                                      seen, o.req[1], o.stamp)]
            return None
        mid = o.update.get("messageId")
        if mid.__class__ is not str or o.sid is None or not is_live(o):
            return None
        key = (o.conn, o.sid, mid)
        if b.awaiting.pop(key, None) is None:
            b.reported.setdefault(key, o.stamp)
        return None

    def end(self, b, complete, front=None):
        return [obligation(("U1", "P3"), f"{mid} was accepted on {conn_name(conn)} but never reported there with "
                                         "user_message (a success before insertion, P3, looks like this)", stamp)
                for (conn, _sid, mid), stamp in sorted(b.awaiting.items(), key=lambda kv: repr(kv[0]))]


class ClientsSendNoMessageIds(Monitor):
    """P13, U11, U15: the agent owns message IDs: no ``messageId``/``promptId`` on a prompt, no client updates."""

    name = "ClientsSendNoMessageIds"
    rules = ("P13", "U11", "U15")
    description = "clients send no message IDs: none on session/prompt, no session/update of their own"
    keys = ("client-ids", "client-update")
    dialects = BOTH

    def on(self, b, o):
        if o.dir != C2A:
            return None
        if o.method == "session/update":
            return [violation(("U11",), f"the client sends session/update on {conn_name(o.conn)}: "
                                        "only the agent reports messages", o.stamp)]
        if o.params is not None:
            named = [k for k in ("messageId", "promptId") if k in o.params]
            if named:
                rules = ("P13", "U15") if "promptId" in named else ("P13",)
                return [violation(rules, f"session/prompt #{o.rid} on {conn_name(o.conn)} carries "
                                              f"{' and '.join(named)}: the agent generates message IDs", o.stamp)]
        return None


class PromptRequestsWellFormed(Monitor):
    """W2, P14: a prompt is ``{sessionId, prompt: [block, ...]}`` with at least one block.

    An empty ``prompt`` is the client's violation (P14); the agent may reject
    it with ``-32602`` (another error code is warned about) or accept it.
    """

    name = "PromptRequestsWellFormed"
    rules = ("W2", "P14")
    description = "session/prompt carries a sessionId and a non-empty array of content blocks"
    keys = ("badprompt",)
    armed = {"res:session/prompt": ("empty",), "close": ("empty",)}
    dialects = BOTH
    fields = {"empty": dict}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.empty, o.conn)
            return None
        if o.shape == "response":
            stamp = b.empty.pop((o.conn, o.rid), None)
            if stamp is not None and "error" in o.msg and error_code(o.msg) != -32602:
                return [warning(("P14",), f"empty prompt #{o.rid} on {conn_name(o.conn)} rejected with "
                                          f"{error_code(o.msg)}, not -32602", stamp, o.stamp)]
            return None
        where = f"session/prompt #{o.rid} on {conn_name(o.conn)}"
        p = o.params
        if p is None:
            return [violation(("W2",), f"{where} has no params object", o.stamp)]
        problems = []
        if not isinstance(p.get("sessionId"), str):
            problems.append("no string sessionId")
        blocks = p.get("prompt")
        if not isinstance(blocks, list):
            problems.append(f"prompt is {json_type(blocks) if 'prompt' in p else 'missing'}, not an array")
        elif any(not isinstance(x, dict) or not isinstance(x.get("type"), str) for x in blocks):
            problems.append("a prompt block is not a content block")
        out = [violation(("W2",), f"{where}: {'; '.join(problems)}", o.stamp)] if problems else []
        if blocks == []:
            b.empty[(o.conn, o.rid)] = o.stamp
            out.append(violation(("P14",), f"{where} sends an empty prompt array", o.stamp))
        return out


class UnsupportedContentRejected(Monitor):
    """P15: a content type the agent did not advertise is rejected with ``-32602``.

    The front end compares the prompt's block types with the agent's
    ``initialize`` capabilities (v2 ``capabilities.session.prompt``, v1
    ``agentCapabilities.promptCapabilities``; text and resource links are
    baseline); without an ``initialize`` nothing is judged.  The client sending
    such a block is a warning (Q9; a violation with
    ``switches.strict_client_content``); the agent rejecting it with another
    code is a violation; accepting it is a warning (it may support more than
    it advertised).
    """

    name = "UnsupportedContentRejected"
    rules = ("P15",)
    description = "prompt content the agent did not advertise is rejected with -32602"
    keys = ("unadvertised",)
    armed = {"res:session/prompt": ("unsupported",), "close": ("unsupported",)}
    dialects = BOTH
    fields = {"unsupported": dict}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.unsupported, o.conn)
            return None
        if o.shape == "request":
            if not o.data:
                return None
            b.unsupported[(o.conn, o.rid)] = (o.data, o.stamp)
            make = violation if self.switches.strict_client_content else warning
            return [make(self.rules, f"session/prompt #{o.rid} on {conn_name(o.conn)} sends "
                                     f"{', '.join(sorted(o.data))} content the agent did not advertise", o.stamp)]
        got = b.unsupported.pop((o.conn, o.rid), None)
        if got is None:
            return None
        types, stamp = got
        if is_success(o.msg):
            return [warning(self.rules, f"#{o.rid} on {conn_name(o.conn)} with unadvertised "
                                        f"{', '.join(sorted(types))} content was accepted", stamp, o.stamp)]
        if error_code(o.msg) != -32602:
            return [violation(self.rules, f"#{o.rid} on {conn_name(o.conn)} with unsupported "
                                          f"{', '.join(sorted(types))} content was rejected with "
                                          f"{error_code(o.msg)}, not -32602", stamp, o.stamp)]
        return None


class PromptsAnswered(Monitor):
    """P2, E1 (v1: B6): every ``session/prompt`` that reached the agent is answered: a success or an error.

    An obligation at the end of the run, read from the front end's pending
    requests (so it costs nothing per message); it ends with its connection
    (E10).
    """

    name = "PromptsAnswered"
    rules = ("P2", "E1", "B6")
    description = "every session/prompt is answered: a success or a JSON-RPC error"
    dialects = BOTH
    expectation = EVENTUALLY
    reads_front = True

    def end(self, b, complete, front=None):
        if front is None:
            return None
        pending = [(conn, rid, stamp) for (conn, side, rid), (method, stamp, _sid, _x) in front.pending.items()
                   if method == "session/prompt" and side == "client"]
        return [obligation(("P2", "E1"), f"session/prompt #{rid} on {conn_name(conn)} was never answered", stamp)
                for conn, rid, stamp in sorted(pending, key=repr)]


class MessageIdsPresent(Monitor):
    """U10, R6, W4: every v2 message update and chunk carries a string ``messageId``; a chunk one block.

    Inside a replay window the same fault also breaks R6 (replayed messages
    carry their IDs).  v1 chunks may omit the ID (not judged on v1).
    """

    name = "MessageIdsPresent"
    rules = ("U10", "R6", "W4")
    description = "every v2 message update and chunk carries a non-null string messageId"
    keys = ("nomid", "badchunk")
    dialects = ONLY_V2

    def on(self, b, o):
        u = o.update
        out = []
        if message_id(u) is None:
            what = "no messageId" if "messageId" not in u else f"messageId {json_type(u['messageId'])}"
            rules = ("U10",) if is_live(o) else ("U10", "R6")
            out.append(violation(rules, f"{o.utype} on {conn_name(o.conn)} has {what}", o.stamp))
        if MESSAGE_UPDATES[o.utype][1]:
            block = u.get("content")
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                out.append(violation(("W4",), f"{o.utype} on {conn_name(o.conn)} carries "
                                              f"{json_type(block) if 'content' in u else 'no content'}, "
                                              "not one content block", o.stamp))
        return out


class LocalCommandsFollowLifecycle(Monitor):
    """P10, P11: a local command (``/name``) is answered and runs ``running`` ... ``idle``.

    A command answered while the connection shows ``idle``, with no work
    since it was sent, must be followed by ``running`` (or
    ``requires_action``), not by another ``idle`` (P11);
    its ending idle should say ``end_turn`` (``cancelled`` and ``error``
    accepted).  A command answered while work runs joins that work (S1).
    Commands are recognised by their slash (the rules name no marker), so
    findings that depend on it stay narrow: an idle right after the answer.
    """

    name = "LocalCommandsFollowLifecycle"
    rules = ("P10", "P11")
    description = "a locally handled command gets its ID and runs running ... idle end_turn"
    keys = ("command",)
    armed = {"res:session/prompt": ("commands",), "upd:state_update": ("commands", "expect", "running"),
             "close": ("commands", "expect", "running")}
    dialects = ONLY_V2
    fields = {"commands": dict, "expect": dict, "running": dict}

    def on(self, b, o):
        if o.kind == "close":
            for table in (b.commands, b.expect, b.running):
                drop_conn(table, o.conn)
            return None
        if o.shape == "request":
            b.commands[(o.conn, o.rid)] = (o.stamp, False)
            return None
        if o.shape == "response":
            asked = b.commands.pop((o.conn, o.rid), None)
            if asked is not None and is_success(o.msg) and o.sid is not None and o.fg in (None, "idle") \
                    and not asked[1]:
                b.expect[(o.conn, o.sid)] = (o.rid, o.stamp)
            return None
        if o.dir == C2A:
            return None
        key = (o.conn, o.sid)
        state = o.update.get("state")
        if state in BUSY:
            for k, (stamp, worked) in list(b.commands.items()):
                if k[0] == o.conn and not worked:
                    b.commands[k] = (stamp, True)
        waiting = b.expect.pop(key, None)
        if waiting is not None:
            if state in BUSY:
                b.running[key] = waiting
            elif state == "idle":
                return [violation(("P11",), f"command #{waiting[0]} on {conn_name(o.conn)} was answered while idle "
                                            "and the next state is idle again, with no running", waiting[1], o.stamp)]
            return None
        if o.ending and key in b.running:
            rid, stamp = b.running.pop(key)
            reason = stop_reason(o.update)
            if reason not in ("end_turn", "cancelled", "error"):
                return [warning(("P11",), f"command #{rid} on {conn_name(o.conn)} ends with stopReason "
                                          f"{reason!r}, not end_turn", stamp, o.stamp)]
        return None

    def end(self, b, complete, front=None):
        out = [obligation(("P11",), f"command #{rid} on {conn_name(conn)} was answered while idle and no "
                                    "running followed", stamp)
               for (conn, _sid), (rid, stamp) in sorted(b.expect.items(), key=lambda kv: repr(kv[0]))]
        out += [warning(("P10",), f"command #{rid} on {conn_name(conn)} was never answered", stamp)
                for (conn, rid), (stamp, _work) in sorted(b.commands.items(), key=lambda kv: repr(kv[0]))]
        return out
