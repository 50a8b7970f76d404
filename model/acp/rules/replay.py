"""Resume and replay: S13, R1, R2, R3, R5, R6, R7, R8, U5, U7 and the R9 proxy (v2).

A *replay window* runs from a ``session/resume`` with ``replayFrom`` to its
response on that connection (the front end's).  Inside it the agent replays
retained history (R1), rebuilding chunked messages from an explicit reset
(R7), under the IDs they were returned with (R5), then sends the current
state (S13) and only then responds (R3).
"""

from __future__ import annotations

from ..rule_monitor import Monitor, conn_name, short, violation, warning
from .common import (A2C, BUSY, C2A, MESSAGE_KEYS, MESSAGE_UPDATES, USER_UPDATES, block_key, bound, drop_conn,
                     error_code, is_success, message_id)


def _replaying(o) -> bool:
    return o.window is not None and o.window[1] is not None


_USER_TYPES = ("user_message", "user_message_chunk")


def _first_report(b, o) -> bool:
    """Whether ``o`` is the session's first report of its user message (and remember it)."""
    mid = message_id(o.update)
    if o.dir != A2C or o.sid is None or mid.__class__ is not str or (o.sid, mid) in b.seen:
        return False
    b.seen.add((o.sid, mid))
    return True


class ResumeSendsStateSnapshot(Monitor):
    """S13, R3, R1, R2: a successful resume sends a state snapshot after any replay and before its response.

    * S13: at least one ``state_update`` for the session on that connection
      between the request and its success (even without ``replayFrom``);
    * R3: the last of them after the last replayed message (live updates may
      interleave, so a snapshot only before replayed messages is a warning);
    * R1: without ``replayFrom`` nothing is replayed: a whole ``user_message``
      (``content: []`` or full content) in that window is a violation, unless
      the front end found its ID live (another connection's new message) or
      it is the session's first report of that message (one inserted, or
      whose report was due, while the resume is served in steps, reported
      here before anywhere else: a first report re-sends nothing; a prompt
      success names a message but reports none);
    * R2: a malformed cursor, or one the agent does not support, is rejected
      with ``-32602``: a success for a malformed or unprefixed unknown cursor
      is a violation (a ``_`` extension may be supported: a warning).
    """

    name = "ResumeSendsStateSnapshot"
    rules = ("S13", "R3", "R1", "R2")
    description = "a resume replays only when asked, then sends a state snapshot, then responds"
    keys = ("req:session/resume", "res:session/resume") + USER_UPDATES
    armed = {"upd": ("windows",), "close": ("windows",)}
    #: seen: (sessionId, messageId) of every user message reported so far, on any connection (R1: first reports)
    fields = {"windows": dict, "seen": set}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.windows, o.conn)
            return None
        key = (o.conn, o.sid)
        if o.shape == "request":
            if o.dir == C2A and o.sid is not None:
                b.windows[key] = (None, None, False)
            return None
        if o.shape == "response":
            return self._answered(b, o, b.windows.pop(key, None))
        first = o.utype in _USER_TYPES and _first_report(b, o)
        if o.window is None or key not in b.windows or (o.utype != "state_update" and o.utype not in MESSAGE_UPDATES):
            return None
        state, last_msg, after = b.windows[key]
        if o.utype == "state_update":
            b.windows[key] = (o.stamp if state is None else state, last_msg, True)
            return None
        b.windows[key] = (state, o.stamp, False)
        content = o.update.get("content")
        if o.window[1] is None and o.utype == "user_message" and isinstance(content, list) and not first:
            what = "resets" if content == [] else "upserts the full content of"
            return [violation(("R1",), f"resume without replayFrom on {conn_name(o.conn)} {what} user message "
                                       f"{message_id(o.update)}, which the session's wire reported before the "
                                       "resume and no other connection made live since: that is "
                                       "replay nobody asked for (omitting replayFrom resumes without replay)",
                              o.window[2], o.stamp)]
        return None

    def _answered(self, b, o, seen):
        kind = o.window[1] if o.window is not None else None
        start = o.window[2] if o.window is not None else None
        where = f"session/resume #{o.rid} on {conn_name(o.conn)}"
        bad_cursor = kind is not None and kind != "start"
        if not is_success(o.msg):
            if bad_cursor and error_code(o.msg) != -32602:
                return [violation(("R2",), f"{where} with cursor {kind!r} is rejected with {error_code(o.msg)}, "
                                           "not -32602", start, o.stamp)]
            return None
        out = []
        if kind == "!malformed" or (bad_cursor and not kind.startswith("_") and self.switches.strict_enums):
            what = "a malformed replayFrom" if kind == "!malformed" else f"unsupported cursor {kind!r}"
            out.append(violation(("R2",), f"{where} with {what} succeeds; it must be rejected with -32602",
                                 start, o.stamp))
        elif bad_cursor:
            out.append(warning(("R2",), f"{where} accepts cursor {kind!r}", start, o.stamp))
        if seen is None:
            return out
        state, last_msg, after = seen
        if state is None:
            out.append(violation(("S13", "R3"), f"{where} is answered without a current-state state_update before "
                                                "the response", start, o.stamp))
        elif last_msg is not None and not after:
            out.append(warning(("R3",), f"{where}: the state snapshot precedes the last replayed message",
                               state, last_msg, o.stamp))
        return out


class ReplayResetsBeforeChunks(Monitor):
    """R7, R8, U5, U7: replay that rebuilds a message from chunks first resets it with ``content: []``.

    Inside a replay window, the first update of a message may not be a chunk:
    a whole-message update with ``content: []`` comes first (R7).  The
    alternative is one full-content update *instead of* chunks: chunks after
    it in the same replay append to the content it just set (the RFD's
    checklist: "verify that streamed replay does not duplicate retained
    content"), a violation unless a ``content: []`` reset comes between.  A
    metadata-only update (no ``content``, or ``null``) does not reset.  Only
    replay counts: an ID the front end found live inside the window (another
    client's new message) is judged as live.  This is unconditional in the
    seed, whatever the client holds: it is how the client learns to drop its
    copy.  The seed says it for user messages; PR2175 for agent messages and
    thoughts too (``switches.reset_all_types``, D12).  Chunks of a new ID
    while the connection shows work running inside its window (live work of
    another client overlapping the replay) have a live reading: they are
    judged when the window ends, as replay unless the ID was reported live on
    another connection of the session by then (its fan-out may come later
    there than here).  With no implicit
    client-side reset (R8) a later *live* user message chunk for a message
    the connection already got in full by replay duplicates content (U5,
    U7): a warning.
    """

    name = "ReplayResetsBeforeChunks"
    rules = ("R7", "R8", "U5", "U7")
    description = "chunked replay of a message starts with content []; a full-content replay is not re-streamed"
    keys = ("replay",)
    armed = {"upd:user_message_chunk": ("full", "undecided"), "res:session/resume": ("reset", "chunked", "whole"),
             "close": ("reset", "chunked", "full", "whole", "undecided"),
             **{k: ("undecided",) for k in MESSAGE_KEYS if k != "upd:user_message_chunk"}}
    #: undecided: (conn, sid, kind, messageId) -> (window stamp, chunk stamp) of chunks judged at the window's end
    fields = {"reset": set, "chunked": set, "full": dict, "whole": dict, "undecided": dict}

    def _decide(self, b, conn, sid=None):
        """The window of ``(conn, sid)`` (any session: the connection closed) ended: its undecided chunks were replay
        without a reset (R7)."""
        keys = [k for k in b.undecided if k[0] == conn and sid in (None, k[1])]
        return [self._no_reset(k, *b.undecided.pop(k)) for k in keys] or None

    @staticmethod
    def _no_reset(key, opened, stamp):
        conn, _sid, kind, mid = key
        return violation(("R7", "R8"), f"replay on {conn_name(conn)} streams {kind} message {mid} as chunks "
                                       "without a whole-message update (content []) first", opened, stamp)

    def on(self, b, o):
        if o.kind == "close":
            found = self._decide(b, o.conn) if b.undecided else None
            for table in (b.reset, b.chunked, b.full, b.whole, b.undecided):
                drop_conn(table, o.conn)
            return found
        if o.shape == "response":
            for table in (b.reset, b.chunked, b.whole):
                for k in [k for k in table if k[0] == o.conn and k[1] == o.sid]:
                    table.pop(k) if isinstance(table, dict) else table.discard(k)
            return self._decide(b, o.conn, o.sid) if b.undecided else None
        if o.utype not in MESSAGE_UPDATES:
            return None
        mid = message_id(o.update)
        if mid is None:
            return None
        kind, chunk = MESSAGE_UPDATES[o.utype]
        key = (o.conn, o.sid, kind, mid)
        if b.undecided and not _replaying(o):  # reported live here: the same ID's chunks elsewhere were live too
            for k in [k for k in b.undecided if k[1:] == key[1:] and k[0] != o.conn]:
                del b.undecided[k]
        if not _replaying(o):
            if chunk and kind == "user" and key in b.full:
                stamp = b.full.pop(key)
                return [warning(("U5", "U7"), f"live user_message_chunk for {mid} on {conn_name(o.conn)}, which "
                                              "replay already sent in full: the client appends it again",
                                stamp, o.stamp)]
            return None
        if not chunk:
            content = o.update.get("content")
            if content == []:
                b.reset.add(key)
                b.whole.pop(key, None)
            elif isinstance(content, list):
                b.whole[key] = o.stamp
                if kind == "user":
                    b.full[key] = o.stamp
            return None
        if kind == "user":
            b.full[key] = o.stamp  # the connection now holds the message's content from replay
        if kind != "user" and not self.switches.reset_all_types:
            return None
        whole = b.whole.pop(key, None)
        if whole is not None:
            b.chunked.add(key)
            return [violation(("R7",), f"replay on {conn_name(o.conn)} sends {kind} message {mid} in full and then "
                                       "streams it again as chunks: the client's copy holds the content twice "
                                       "(reset with content [] before chunks)", whole, o.stamp)]
        if key in b.reset or key in b.chunked:
            return None
        b.chunked.add(key)
        if o.fg in BUSY:  # live work overlaps the replay: decided when the window ends
            b.undecided[key] = (o.window[2], o.stamp)
            return None
        return [self._no_reset(key, o.window[2], o.stamp)]

    def end(self, b, complete, front=None):
        return [self._no_reset(k, *v) for k, v in sorted(b.undecided.items(), key=lambda kv: repr(kv[0]))] or None


class ReplayKeepsIds(Monitor):
    """R5, R6 (trace proxy): a replayed retained message carries the ID it was returned and reported under.

    Content-aware in both directions: a replayed ID that the session showed
    live must carry that message's content (its first block, allowing for
    chunking): other content under a retained ID is another message under it
    (renumbering after a retention trim), a violation.

    Retention is internal (R4: messages may be missing from replay), so the
    proxy compares positions among the user messages.  When replay
    (``replayFrom: start``) reports a user message under an ID the session
    never showed, with the same first content block as a live user message
    that this replay does not carry, and in that message's place (the same
    user message before it, or after it), that is the retained message under
    a new ID: a violation.  The same content elsewhere is a warning.  An ID
    covering two replayed entries (a second whole update after other user
    messages) is an R6 warning.  The session's recent history is bounded
    (:attr:`LIMIT` user messages); only user messages are followed, which
    keeps the cost per message low.
    """

    name = "ReplayKeepsIds"
    rules = ("R5", "R6")
    description = "a replayed retained message carries the ID it was inserted under"
    keys = USER_UPDATES + ("res:session/resume",)
    armed = {"close": ("entries",)}
    #: ``live``: (session, ID) -> (first block, previous user ID, next user ID) of the live user messages
    fields = {"live": dict, "by_content": dict, "last": dict, "entries": dict,
              "where": dict, "count": dict}
    LIMIT = 4096

    def on(self, b, o):
        if o.kind == "close":
            for table in (b.entries, b.where, b.count):
                drop_conn(table, o.conn)
            return None
        if o.shape == "response":
            return self._replayed(b, o)
        mid = o.update.get("messageId")
        if mid.__class__ is not str or o.dir == C2A or o.sid is None:
            return None
        kind, chunk = MESSAGE_UPDATES[o.utype]
        if o.window is not None and o.window[1] is not None:
            return self._entry(b, o, kind, mid, _first_block(o.update, chunk), chunk)
        live = b.live
        key = (o.sid, mid)
        if key in live:
            if live[key][0] is None:  # a metadata-only first update: the content comes now
                sig = _first_block(o.update, chunk)
                if sig is not None:
                    live[key] = (sig,) + live[key][1:]
                    b.by_content[(o.sid, sig)] = mid
            return None  # another chunk or update of a message already placed
        prev = b.last.get(o.sid)
        sig = _first_block(o.update, chunk)
        live[key] = (sig, prev, None)
        if sig is not None:
            b.by_content[(o.sid, sig)] = mid
        if prev is not None and (o.sid, prev) in live:
            live[(o.sid, prev)] = live[(o.sid, prev)][:2] + (mid,)
        b.last[o.sid] = mid
        if len(live) > self.LIMIT:
            bound(live, self.LIMIT // 2)
            bound(b.by_content, self.LIMIT // 2)
        return None

    def _entry(self, b, o, kind, mid, sig, chunk):
        ckey = (o.conn, o.sid)
        n = b.count.get(ckey, 0)
        at = b.where.get(ckey + (kind, mid))
        if at is not None:
            entry = b.entries[ckey + (at,)]
            if entry[2] is None and sig is not None:
                b.entries[ckey + (at,)] = entry[:2] + (sig,) + entry[3:]
            last = b.entries[ckey + (n - 1,)]
            whole = not chunk and isinstance(o.update.get("content"), list)
            if whole and at != n - 1 and last[0] == kind:
                return [warning(("R6",), f"replay on {conn_name(o.conn)} sends {kind} message {mid} again after "
                                         "other messages: one ID for two history entries?", o.stamp)]
            return None
        b.entries[ckey + (n,)] = (kind, mid, sig, (o.sid, mid) not in b.live, o.stamp)
        b.where[ckey + (kind, mid)] = n
        b.count[ckey] = n + 1
        return None

    def _replayed(self, b, o):
        ckey = (o.conn, o.sid)
        n = b.count.pop(ckey, 0)
        entries = [b.entries.pop(ckey + (i,)) for i in range(n)]
        for kind, mid, _s, _n, _t in entries:
            b.where.pop(ckey + (kind, mid), None)
        if not entries or o.window is None or o.window[1] != "start" or not is_success(o.msg):
            return None
        carried = {(kind, mid) for kind, mid, _s, _n, _t in entries}
        out = []
        for i, (kind, mid, sig, new, stamp) in enumerate(entries):
            if kind != "user" or sig is None:
                continue
            if not new:
                was = b.live.get((o.sid, mid))
                if was is not None and was[0] is not None and not _same_start(was[0], sig):
                    out.append(violation(("R5",), f"replay on {conn_name(o.conn)} reports {mid} with content "
                                                  f"{short(sig)!r}, but {mid} was reported live with "
                                                  f"{short(was[0])!r}: another message under a retained ID",
                                         stamp, o.stamp))
                continue
            old = b.by_content.get((o.sid, sig))
            if old is None or ("user", old) in carried or (o.sid, old) not in b.live:
                continue
            _sig, live_prev, live_next = b.live[(o.sid, old)]
            before = entries[i - 1][1] if i else None
            after = entries[i + 1][1] if i + 1 < len(entries) else None
            in_place = before == live_prev or (after is not None and after == live_next)
            make = violation if in_place else warning
            out.append(make(("R5",), f"replay on {conn_name(o.conn)} reports {mid}, a new ID, with the content of "
                                     f"{old}, which it does not carry" + (" and in its place" if in_place else ""),
                            stamp, o.stamp))
        for _kind, mid, sig, _n, _t in entries:
            b.live.setdefault((o.sid, mid), (sig, None, None))
        return out


def _same_start(live: str, replayed: str) -> bool:
    """The same first block, allowing for chunking: a live first chunk is a prefix of the replayed text, or the
    other way round."""
    return live == replayed or live.startswith(replayed) or replayed.startswith(live)


def _first_block(update: dict, chunk: bool):
    if chunk:
        return block_key(update.get("content"))
    content = update.get("content")
    return block_key(content[0]) if isinstance(content, list) and content else None


class ReplayedCommandsNotRerun(Monitor):
    """R9 (trace proxy, warnings): a replayed command is reported, never executed again.

    After a resume whose replay carried a user message that looks like a
    command (``/name``), new work (``running``) before any new prompt on that
    connection suggests the command ran again; armed from the replayed
    command on, so inside the window a change from a reported ``idle`` to
    ``running`` counts too (the window's first snapshot may be ``running``:
    the session's current state).  The command replayed to one connection
    runs for the whole session: ``running`` on *another* connection of the
    session that shows idle, before a new prompt on any connection, counts
    too.  Agent-initiated work looks the same, hence a warning; the
    ``execute`` event of the sidecar decides.
    """

    name = "ReplayedCommandsNotRerun"
    rules = ("R9",)
    description = "replay reports a retained command without running it again"
    keys = ("replay",)
    armed = {"res:session/resume": ("seen",), "upd:state_update": ("armed", "session"),
             "req:session/prompt": ("armed", "session"), "close": ("seen", "armed", "session")}
    fields = {"seen": dict, "armed": dict, "session": dict}  # session: sid -> (stamp, messageId, replay's conn)

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.seen, o.conn)
            drop_conn(b.armed, o.conn)
            for sid in [sid for sid, armed in b.session.items() if armed[2] == o.conn]:
                del b.session[sid]
            return None
        key = (o.conn, o.sid)
        if o.shape == "request":
            b.armed.pop(key, None)
            b.session.pop(o.sid, None)
            return None
        if o.shape == "response":
            seen = b.seen.pop(key, None)
            if seen is not None and is_success(o.msg):
                b.armed[key] = seen
            return None
        if o.utype == "state_update":
            armed = b.armed.get(key)
            busy = o.update.get("state") in BUSY
            elsewhere = b.session.get(o.sid) if busy and o.fg == "idle" else None
            if elsewhere is not None and elsewhere[2] != o.conn:
                del b.session[o.sid]
                return [warning(self.rules, f"work starts on {conn_name(o.conn)} right after {conn_name(elsewhere[2])}'s "
                                            f"replay of command {elsewhere[1]}, with no new prompt on any connection: "
                                            "was the command executed again?", elsewhere[0], o.stamp)]
            inside = o.window is not None
            if armed is None or (inside and not busy):
                return None  # inside the window a snapshot idle is no answer: keep watching
            del b.armed[key]
            if busy and (o.fg == "idle" or (o.fg is None and not inside)):
                b.seen.pop(key, None)
                return [warning(self.rules, f"work starts on {conn_name(o.conn)} right after replaying command "
                                            f"{armed[1]}, with no new prompt: was the command executed again?",
                                armed[0], o.stamp)]
            return None
        if o.utype in ("user_message", "user_message_chunk") and _replaying(o):
            sig = _first_block(o.update, o.utype == "user_message_chunk")
            if isinstance(sig, str) and sig.startswith("/") and len(sig) > 1:
                b.seen.setdefault(key, (o.stamp, message_id(o.update)))
                b.armed.setdefault(key, b.seen[key])  # armed inside the window too: a re-run may start there
                b.session.setdefault(o.sid, b.seen[key] + (o.conn,))
        return None
