"""Monitors of foreground work and how it ends: running ... idle, stop reasons, failures (S, E, C7-C9).

Judged on what was sent: an ending idle is the ``state_update`` the step that
ended the work put on each attached connection, not the agent's own account.
``RunningEndsInIdle`` is an obligation (``eventually``).  A SHOULD (E5: the
idle error carries the error object) is a warning, not a violation.
"""

from __future__ import annotations

from .monitors_base import (
    TERMINAL_TOOL,
    Monitor,
    attached_conns,
    conn_name as _conn,
    rename_conn,
    rename_conn_pairs,
    sent_update,
    work_ended,
)


class WorkEndsWithOneIdle(Monitor):
    """S2/S3/S5: the step that ends foreground work sends each attached connection exactly one
    idle, and it names a stop reason.  (That work ends at all is :class:`RunningEndsInIdle`.)"""

    name = "WorkEndsWithOneIdle"
    rules = ("S2", "S5", "S3")
    description = "foreground work that ends sends exactly one idle with a stop reason to each attached client"
    kinds = frozenset({"work_start", "work_end", "send", "restart"})
    initial = False  # True while work runs; during its ending step, the state updates that step sent

    def rename_clients(self, m, new_index):
        if isinstance(m, tuple):
            return ("ending", tuple(sorted((rename_conn(c, new_index), st, r) for c, st, r in m[1])))
        return m

    def observe(self, m, e, before, after):
        if e.kind == "restart":
            return False, None  # E10: the process exited; no update can report it
        if e.kind == "work_start":
            if m:
                return True, "work started while earlier work had not ended"
            return True, None
        if e.kind == "send":
            update = sent_update(e, "state_update")
            if update is None or e.lost or not work_ended(before, after):
                return m, None
            sent = m[1] if isinstance(m, tuple) else ()
            return ("ending", sent + ((e.conn, update.state, update.stop_reason),)), None
        sent = m[1] if isinstance(m, tuple) else ()
        for conn in attached_conns(after):
            here = [(st, r) for c, st, r in sent if c == conn]
            idles = [r for st, r in here if st == "idle"]
            if not idles:
                other = f": it reported {here[0][0]!r} instead" if here else ""
                return False, f"work ended ({e.reason}) without an idle state_update to {_conn(conn)}{other}"
            if len(idles) > 1:
                return False, f"work ended ({e.reason}) with {len(idles)} idles to {_conn(conn)}"
            if idles[0] is None:
                return False, f"work ended ({e.reason}) with an idle to {_conn(conn)} that names no stop reason"
        return False, None


class RunningEndsInIdle(Monitor):
    """S2/S3/S9: an obligation per connection: after ``running`` or ``requires_action`` an
    ``idle`` follows there (a connection that closes owes nothing more, E10)."""

    name = "RunningEndsInIdle"
    rules = ("S2", "S3", "S9")
    description = "every running or requires_action a client is told is eventually followed by idle"
    wire = True
    expectation = "eventually"
    kinds = frozenset({"send", "cut"})
    initial = ()  # connections told the agent is busy, with no idle since

    def rename_clients(self, m, new_index):
        return tuple(sorted(rename_conn(c, new_index) for c in m))

    def observe(self, m, e, before, after):
        if e.kind == "cut":
            return tuple(c for c in m if c != e.conn), None
        update = sent_update(e, "state_update")
        if update is None or e.lost:
            return m, None
        if update.state in ("running", "requires_action"):
            return (m if e.conn in m else tuple(sorted(m + (e.conn,)))), None
        if update.state == "idle":
            return tuple(c for c in m if c != e.conn), None
        return m, None

    def at_rest(self, m, world):
        if m:
            return f"{_conn(m[0])} was told the agent is busy and never got an idle"
        return None


class CancelledWorkEndsCancelled(Monitor):
    name = "CancelledWorkEndsCancelled"
    rules = ("C7", "C9")
    description = "work stopped by session/cancel ends with stopReason cancelled, even if aborting fails"
    kinds = frozenset({"cancel_seen", "work_end", "restart"})
    initial = False

    def observe(self, m, e, before, after):
        if e.kind == "restart":
            return False, None
        if e.kind == "cancel_seen":
            return (m or e.active), None
        if m and e.reason != "cancelled":
            return False, f"work cancelled while active ended with {e.reason}"
        return False, None


class FailureEndsWithErrorIdle(Monitor):
    """E3 (MUST): a failure after insertion that ends the work is reported by an idle whose stop
    reason is ``error``.  The error object is a SHOULD: :class:`ErrorIdleCarriesErrorObject`.
    An error raised while aborting cancelled work is C9's, not E3's."""

    name = "FailureEndsWithErrorIdle"
    rules = ("E3", "E4")
    description = "a failure after insertion ends the work with an idle whose stopReason is error"
    kinds = frozenset({"fail", "send", "work_end", "restart"})
    initial = False  # a failure after insertion awaits its idle

    def observe(self, m, e, before, after):
        if e.kind == "restart":
            return False, None
        if e.kind == "fail":
            return e.after_insertion and not e.aborting, None
        if e.kind == "work_end":
            if m and e.reason != "error":
                return False, f"work failed after insertion but ended as {e.reason}"
            return False, None
        update = sent_update(e, "state_update")
        if not m or update is None or update.state != "idle":
            return m, None
        if update.stop_reason != "error":
            return False, f"work failed after insertion but idle reports {update.stop_reason!r}"
        return m, None


class ErrorIdleCarriesErrorObject(Monitor):
    """E3/E5 (SHOULD): an idle with stopReason ``error`` includes the JSON-RPC error object.

    A warning, not a violation: the RFD makes the field optional.  (Checkable
    on the wire; not marked ``wire`` until the trace checker knows warnings.)
    """

    name = "ErrorIdleCarriesErrorObject"
    rules = ("E3", "E5")
    description = "an idle error carries the error object (SHOULD: a warning)"
    level = "warning"
    kinds = frozenset({"send"})

    def observe(self, m, e, before, after):
        update = sent_update(e, "state_update")
        if update is None or update.state != "idle" or update.stop_reason != "error":
            return m, None
        if getattr(update.error, "code", None) is None:
            return m, f"the idle error on {_conn(e.conn)} carries no error object"
        return m, None


class ToolCallsTerminalBeforeIdle(Monitor):
    """E6/S6/C8: a tool call left unfinished at the ending idle can only be finished after it
    (breaking S6, a MUST) or never, unless it is background work: so this is an error."""

    name = "ToolCallsTerminalBeforeIdle"
    rules = ("E6", "S6", "C8")
    description = "before the idle that ends work, its tool calls reached a terminal status"
    wire = True
    kinds = frozenset({"send"})
    initial = ()  # open (conn, toolCallId)

    def rename_clients(self, m, new_index):
        return rename_conn_pairs(m, new_index)

    def observe(self, m, e, before, after):
        update = sent_update(e, "tool_call_update", "state_update")
        if update is None:
            return m, None
        if update.kind == "tool_call_update":
            key = (e.conn, update.tool_call_id)
            opened = update.status not in TERMINAL_TOOL
            m = tuple(sorted(k for k in m if k != key) + ([key] if opened else []))
            return m, None
        if update.state == "idle" and update.stop_reason is not None:
            still = [t for c, t in m if c == e.conn]
            if still:
                return m, f"idle {update.stop_reason} on {_conn(e.conn)} while tool call {still[0]} is unfinished"
        return m, None


class StateViewMatches(Monitor):
    name = "StateViewMatches"
    rules = ("S13", "S2")
    description = "at rest a connected client that lost nothing shows the agent's foreground state"

    def at_rest(self, m, world):
        for c, client in enumerate(world.clients):
            if client.up and client.view in ("live", "replayed", "resumed") and client.fg != world.agent.fg:
                return f"client c{c + 1} shows {client.fg!r} but the agent is {world.agent.fg!r}"
        return None


class OutcomeVisible(Monitor):
    """E3/E13/N2/S15: at rest a client knows how the last foreground work ended.

    A client that saw everything live must know any outcome.  A client that
    resumed learns the state from the resume snapshot, where a plain idle is
    allowed (S14): it must know the outcome only when the work failed, since
    the error lives in the idle snapshot that resume carries (E13).
    """

    name = "OutcomeVisible"
    rules = ("E3", "E13", "N2", "S15")
    description = "at rest a client that lost nothing knows how the last foreground work ended"
    kinds = frozenset({"work_end", "restart"})
    initial = None  # how the last work ended; RESTARTED after a restart (E10: nothing to tell)
    RESTARTED = "<restart>"

    def observe(self, m, e, before, after):
        return (self.RESTARTED if e.kind == "restart" else e.reason), None

    def at_rest(self, m, world):
        if m == self.RESTARTED or m is None:
            return None
        for c, client in enumerate(world.clients):
            if not client.up or client.last_stop == m:
                continue
            if client.view == "live" or (client.view in ("replayed", "resumed") and m == "error"):
                return f"the last work ended {m!r} but client c{c + 1} believes {client.last_stop!r}"
        return None
