"""Foreground state (``state_update``): S2, S3, S5, S9, S14, S15, S16, S17, W5-W8, W13, E3, E5.

The front end tells an idle that *ends* work (after ``running``,
``requires_action`` or a custom state) from a snapshot (after idle, or the
first state a connection sees): Q1, reading A.  ``session/update``s other than
``state_update`` never change the state (S11, N3): background output while
idle is no implicit ``running``.
"""

from __future__ import annotations

from ..rule_monitor import (EVENTUALLY, WARNING, Finding, Monitor, conn_name, error_problem, json_type, obligation,
                       violation, warning)
from .common import C2A, KNOWN_STOP_REASONS, STANDARD_STATES, drop_conn, is_live, is_success

_STATE = ("upd:state_update",)


class WorkEndsWithIdle(Monitor):
    """S2, S3: foreground work that was reported (``running``, ``requires_action``, a custom state) ends with ``idle``.

    An obligation per connection and session, open from the first busy state
    to the next idle (read from the front end's last state of each
    connection, at no cost per message); it ends with the connection (E10)
    or a successful ``session/close`` (whose own ordering C14 judges).  The unstable
    ``unknown`` state ends nothing (S16).
    """

    name = "WorkEndsWithIdle"
    rules = ("S2", "S3")
    description = "foreground work reported as running or requires_action is ended by an idle state_update"
    expectation = EVENTUALLY
    reads_front = True

    def end(self, b, complete, front=None):
        if front is None:
            return None
        busy = [(conn, sid, state, stamp) for (conn, sid), (state, stamp) in front.fg.items()
                if state not in ("idle", "unknown") and (conn, sid) not in front.closed]
        return [obligation(self.rules, f"{conn_name(conn)} reported {state!r} for {sid} and never idle after it",
                           stamp)
                for conn, sid, state, stamp in sorted(busy, key=repr)]


class StateUpdatesWellFormed(Monitor):
    """W5, S15, S16, S5, W6, W7, W8, E3, E5, W9: the shape of a ``state_update``.

    * W5: ``state`` is a string.
    * S15 (S16): the standard states (and ``unknown`` with the unstable
      schema) unless the client advertised a custom one
      (``switches.allowed_states``, or listed under the ``_meta`` key
      ``switches.states_key`` of its initialize; ACP defines no capability
      for it yet): a
      ``_`` extension breaks S15 always, an unprefixed value (reserved for
      ACP) under ``switches.strict_enums`` (Q10), else a warning.
    * S5: an idle that ends work names its stop reason, at the preset's level
      (``switches.idle_stop_reason``: SHOULD in the 2.4.0 schema, a warning
      for ``rfd``; MUST in the 2026-08 docs, a violation for ``v2-draft``).
      A snapshot idle needs none.
    * W6: a stop reason is known or a ``_`` extension (an unprefixed unknown
      one: as for states); a malformed one is read as not reported (warning).
    * W7, W8: ``error`` beside another stop reason, ``stopReason`` on a state
      other than idle: unknown fields (warnings: receivers ignore them).
    * E5, W9: the error object of an ``error`` idle, when it carries one, has
      an integer ``code`` and a string ``message`` (that it should carry one
      is :class:`ErrorIdleCarriesErrorObject`'s).
    """

    name = "StateUpdatesWellFormed"
    rules = ("W5", "S15", "S16", "S5", "W6", "W7", "W8", "E5", "W9")
    description = "state updates report standard states; an ending idle names a known stop reason and its error"
    keys = ("odd-state", "odd-stop", "stop:error", "stop:none")

    def on(self, b, o):
        if o.dir == C2A:
            return None
        u = o.update
        state = u.get("state")
        where = f"state_update on {conn_name(o.conn)}"
        if not isinstance(state, str):
            return [violation(("W5",), f"{where} has state {json_type(state) if 'state' in u else 'missing'}",
                              o.stamp)]
        out = []
        if state not in STANDARD_STATES:
            out += self._custom(state, where, o)
        if state != "idle":
            if u.get("stopReason") is not None:
                out.append(warning(("W8",), f"{state!r} {where} carries stopReason (it exists only on idle)",
                                   o.stamp))
            return out
        reason = u.get("stopReason")
        if reason is not None and not isinstance(reason, str):
            out.append(warning(("W6",), f"idle {where}: stopReason is {json_type(reason)}, read as not reported",
                               o.stamp))
        elif isinstance(reason, str) and reason not in KNOWN_STOP_REASONS and not reason.startswith("_"):
            make = violation if self.switches.strict_enums and self.switches.strict_stop_reasons else warning
            out.append(make(("W6",), f"idle {where}: stopReason {reason!r} is neither an ACP stop reason nor a "
                                     "_-prefixed extension", o.stamp))
        if o.ending and not isinstance(reason, str):
            out.append(Finding(self.switches.idle_stop_reason, ("S5",),
                               f"idle on {conn_name(o.conn)} ends {o.fg!r} work without a stopReason", (o.stamp,)))
        if "error" in u and reason != "error":
            out.append(warning(("W7",), f"idle {where}: error beside stopReason {reason!r} (an unknown field there)",
                               o.stamp))
        if reason == "error":
            err = u.get("error")
            if err is not None and error_problem(err) is not None:
                out.append(violation(("E5", "W9"), f"error idle on {conn_name(o.conn)}: {error_problem(err)}",
                                     o.stamp))
        return out

    def _custom(self, state: str, where: str, o):
        if o.advertised or state in self.switches.allowed_states or (state == "unknown" and self.switches.unstable):
            return []
        if state.startswith("_") or self.switches.strict_enums:
            return [violation(("S15",), f"{where} reports state {state!r}, which the client never advertised; the "
                                        "standard states must still be sent", o.stamp)]
        return [warning(("S15",), f"{where} reports unknown state {state!r}", o.stamp)]


class ErrorIdleCarriesErrorObject(Monitor):
    """E3, E5 (SHOULD): an idle with ``stopReason: "error"`` carries the JSON-RPC error object.

    A warning monitor: the RFD makes the field optional (omitted and ``null``
    mean "no details") and says the agent should include it.  Resume
    snapshots are judged too: the error lives in the idle snapshot (E13).
    """

    name = "ErrorIdleCarriesErrorObject"
    rules = ("E3", "E5")
    description = "an idle error carries the error object (SHOULD: a warning)"
    keys = ("stop:error",)
    level = WARNING

    def on(self, b, o):
        if o.dir == C2A or o.update.get("error") is not None:
            return None
        return [warning(self.rules, f"the idle error on {conn_name(o.conn)} carries no error object", o.stamp)]


class SnapshotsAreIdempotent(Monitor):
    """S14, W13: a repeated idle is a snapshot, not a second completion; a snapshot adds no usage.

    An idle after idle outside a resume window that carries a stop reason
    reads as a second ending without ``running`` (a warning: S14 lets a
    snapshot repeat the last reason).  With the unstable ``usage``, a snapshot
    whose usage differs from the last ending's claims usage without work (a
    violation of W13).
    """

    name = "SnapshotsAreIdempotent"
    rules = ("S14", "W13", "C7")
    description = "repeated idle snapshots are not new completions and add no usage"
    keys = ("idle-snapshot", "usage")
    armed = {"ending": ("usage",), "close": ("usage",)}
    fields = {"usage": dict}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.usage, o.conn)
            return None
        u = o.update
        if o.dir == C2A or u.get("state") != "idle":
            return None
        key = (o.conn, o.sid)
        if o.ending:
            if "usage" in u:
                b.usage[key] = (_hashable(u["usage"]), o.stamp)
            else:
                b.usage.pop(key, None)
            return None
        if o.fg != "idle":
            return None
        out = []
        if o.window is None and u.get("stopReason") is not None:
            rules = ("S14", "C7") if u.get("stopReason") == "cancelled" else ("S14",)
            out.append(warning(rules, f"idle after idle on {conn_name(o.conn)} carries stopReason "
                                      f"{u.get('stopReason')!r}: a repeated snapshot, not a new completion (a "
                                      "cancel while idle ends nothing)" if rules[-1] == "C7" else
                               f"idle after idle on {conn_name(o.conn)} carries stopReason "
                               f"{u.get('stopReason')!r}: a repeated snapshot, not a new completion", o.stamp))
        if "usage" in u:
            last = b.usage.get(key)
            if last is not None and last[0] != _hashable(u["usage"]):
                out.append(violation(("W13",), f"snapshot idle on {conn_name(o.conn)} carries usage different from "
                                               "the last ending's: usage without work", last[1], o.stamp))
        return out


def _hashable(value):
    """A JSON value as a hashable, order-independent value (for comparing usage objects)."""
    if isinstance(value, dict):
        return frozenset((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


class RequiresActionResolves(Monitor):
    """S9: after ``requires_action`` the agent reports ``running`` (progress resumed) or ``idle`` (work ended).

    Another ``requires_action``, a custom or the ``unknown`` state resolve
    nothing (S16).  An obligation at the end of the run.
    """

    name = "RequiresActionResolves"
    rules = ("S9",)
    description = "requires_action is always followed by running or idle"
    expectation = EVENTUALLY
    keys = ("state:requires_action",)
    armed = {"upd:state_update": ("blocked",), "res:session/close": ("blocked",), "close": ("blocked",)}
    fields = {"blocked": dict}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.blocked, o.conn)
            return None
        if o.shape == "response":
            if is_success(o.msg):
                b.blocked.pop((o.conn, o.sid), None)
            return None
        if o.dir == C2A:
            return None
        state = o.update.get("state")
        if state == "requires_action":
            b.blocked.setdefault((o.conn, o.sid), o.stamp)
        elif state in ("running", "idle"):
            b.blocked.pop((o.conn, o.sid), None)
        return None

    def end(self, b, complete, front=None):
        return [obligation(self.rules, f"requires_action on {conn_name(conn)} ({sid}) was never resolved "
                                       "by running or idle", stamp)
                for (conn, sid), stamp in sorted(b.blocked.items(), key=lambda kv: repr(kv[0]))]


class AgentWorkReportsRunning(Monitor):
    """S17, S2 (warnings): agent output while the connection shows idle looks like work without ``running``.

    Agent-initiated work needs no prompt but reports ``running`` first (S17).
    Whether a message can belong to background work is open (Q5), so this is
    a warning; replayed messages, and connections that have not seen a state
    yet, are exempt.  So is a whole-message update inside the connection's own
    replay window even for an ID it first saw live there: replay may restate a
    message as one full-content update (R13), which is no new output.
    """

    name = "AgentWorkReportsRunning"
    rules = ("S17", "S2", "S11")
    description = "agent output belongs to foreground work reported as running"
    keys = ("output@idle",)

    def on(self, b, o):
        if not is_live(o) or (o.resumed is not None and o.resumed[1] is not None and not o.utype.endswith("_chunk")):
            return None
        return [warning(("S17", "S2"), f"{o.utype} on {conn_name(o.conn)} while idle: work that produces output "
                                       "reports running first", o.stamp)]
