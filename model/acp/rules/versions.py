"""Notices (N3, N5, R10), v1 turns (W14) and v1 <-> v2 bridges seen from both legs (B1, B2, B3, B5).

A bridge capture holds the bridge's v2 connection and its v1 connection
(their dialects come from ``initialize``).  Which v1 prompt a v2 prompt
became (or the other way round) is not on the wire: prompts are paired by
content, first come first paired, and a pairing is used only when it is
unambiguous.  Which side the bridge is follows from the order: a v2 prompt
forwarded to a v1 agent comes first on the v2 leg (B1, B2); a v1 prompt
forwarded to a v2 agent comes first on the v1 leg (B3).
"""

from __future__ import annotations

from ..rule_monitor import BOTH, ONLY_V1, Monitor, conn_name, json_type, obligation, violation, warning
from .common import V1_STOP_REASONS, C2A, content_key, drop_conn, is_live, is_success, message_id, stop_reason

SEVERITIES = ("info", "warning", "error")


class NoticesWellFormed(Monitor):
    """N5, N3, R10: a notice has a severity and a non-empty title, is advisory, and is live only.

    ``severity`` (an open enum: ``_`` for extensions; an unknown unprefixed
    value is a violation under ``switches.strict_enums``, Q10) and ``title``
    (a non-empty string) are required; a malformed ``description`` is read as
    absent (a warning).  A notice never stands in for a stop reason (N3, N2):
    an ``error`` notice followed by an ending idle without a stop reason is a
    warning.  Notices are not replayed (R10): one inside a replay window is a
    warning (live notices may interleave).
    """

    name = "NoticesWellFormed"
    rules = ("N5", "N3", "R10")
    description = "notices carry a severity and a non-empty title, and never report how work ended"
    keys = ("upd:notice",)
    armed = {"upd:state_update": ("errors",), "close": ("errors",)}
    dialects = BOTH
    fields = {"errors": dict}

    def on(self, b, o):
        if o.kind == "close":
            drop_conn(b.errors, o.conn)
            return None
        if o.dir == C2A:
            return None
        key = (o.conn, o.sid)
        if o.utype == "state_update":
            stamp = b.errors.pop(key, None)
            if stamp is not None and o.ending and stop_reason(o.update) is None:
                return [warning(("N3",), f"an error notice, then an idle without stopReason on {conn_name(o.conn)}: "
                                         "a notice cannot report how work ended", stamp, o.stamp)]
            return None
        u = o.update
        where = f"notice on {conn_name(o.conn)}"
        out = []
        severity = u.get("severity")
        if not isinstance(severity, str):
            out.append(violation(("N5",), f"{where}: severity is "
                                          f"{json_type(severity) if 'severity' in u else 'missing'}", o.stamp))
        elif severity not in SEVERITIES and not severity.startswith("_"):
            make = violation if self.switches.strict_enums else warning
            out.append(make(("N5",), f"{where}: severity {severity!r} is neither known nor _-prefixed", o.stamp))
        title = u.get("title")
        if not isinstance(title, str) or not title:
            what = "empty" if title == "" else json_type(title) if "title" in u else "missing"
            out.append(violation(("N5",), f"{where}: title is {what}; a non-empty string is required", o.stamp))
        if u.get("description") is not None and not isinstance(u.get("description"), str):
            out.append(warning(("N5",), f"{where}: description is {json_type(u['description'])}", o.stamp))
        if not is_live(o):
            out.append(warning(("R10",), f"{where} inside a replay window: notices are live only", o.stamp))
        if severity == "error":
            b.errors[key] = o.stamp
        return out


class V1StopReasonClosedEnum(Monitor):
    """W14 (v1): a v1 prompt response is ``{stopReason}`` with one of the five v1 values.

    v1 has no ``error`` stop reason and no custom values: failures are error
    responses (B6).
    """

    name = "V1StopReasonClosedEnum"
    rules = ("W14",)
    description = "v1: a prompt response carries stopReason, one of the five v1 values"
    keys = ("res:session/prompt:ok",)
    dialects = ONLY_V1

    def on(self, b, o):
        if not is_success(o.msg):
            return None
        result = o.msg["result"]
        reason = result.get("stopReason") if isinstance(result, dict) else None
        if reason in V1_STOP_REASONS:
            return None
        what = "no stopReason" if not isinstance(result, dict) or "stopReason" not in result else \
            f"stopReason {reason!r}"
        return [violation(self.rules, f"v1 response to #{o.rid} on {conn_name(o.conn)} carries {what}, not one of "
                                      f"{', '.join(V1_STOP_REASONS)}", o.stamp)]


class BridgeCarriesFailures(Monitor):
    """B1, B2, B3: a v1 <-> v2 bridge maps failures across the legs with the same error object.

    * B1 (v1 agent behind the bridge): a v1 error that arrives after the
      v2 leg already reported the prompt inserted (a success or its user
      message) becomes the next ending idle on the v2 leg, with
      ``stopReason: "error"`` and the same code and message.
    * B2: a v1 error before that becomes an error on the v2 prompt; a
      success there is a violation (a different code is a warning).
    * B3 (v2 agent behind the bridge): an ending error idle on the v2 leg,
      while exactly one paired v1 prompt is pending, becomes that prompt's
      error response, with the same code and message (``-32603`` when the
      idle carried none).
    """

    name = "BridgeCarriesFailures"
    rules = ("B1", "B2", "B3")
    description = "a v1<->v2 bridge carries a failure over with the same error object"
    keys = ("bridge",)
    armed = {"close": ("prompts", "expect_idle")}
    dialects = BOTH
    fields = {"prompts": dict, "pairs": dict, "expect_idle": dict, "expect_error": dict, "mids": dict}

    def on(self, b, o):
        if o.kind == "msg" and o.method != "session/prompt" and o.answers != "session/prompt" \
                and o.utype not in ("state_update", "user_message", "user_message_chunk"):
            return None
        if o.kind == "close":
            for table in (b.prompts, b.expect_idle):
                drop_conn(table, o.conn)
            return None
        if o.shape == "request":
            return self._request(b, o)
        if o.shape == "response":
            return self._response(b, o)
        if o.dir == C2A:
            return None
        if o.utype == "state_update":
            return self._idle(b, o) if o.ending else None
        mid = message_id(o.update)
        key = b.mids.get((o.conn, mid)) if mid is not None and is_live(o) else None
        if key is None and b.pairs:
            for k, (dialect, sid, content, stamp, inserted) in b.prompts.items():
                if k[0] == o.conn and dialect == "v2" and not inserted and sid == o.sid and k in b.pairs and \
                        content[:1] == _content(o.update)[:1]:
                    b.prompts[k] = (dialect, sid, content, stamp, True)
                    break
        return None

    def _request(self, b, o):
        content = content_key(o.params.get("prompt")) if o.params is not None else ()
        key = (o.conn, o.rid)
        b.prompts[key] = (o.dialect, o.sid, content, o.stamp, False)
        for other, (dialect, _sid, c2, _s, _i) in b.prompts.items():
            if dialect != o.dialect and c2 == content and other not in b.pairs and other != key:
                b.pairs[other] = key  # the earlier prompt was forwarded as this one
                b.pairs[key] = other
                break
        return None

    def _response(self, b, o):
        key = (o.conn, o.rid)
        mine = b.prompts.get(key)
        if mine is None:
            return None
        dialect, sid, content, stamp, inserted = mine
        out = []
        expected = b.expect_error.pop(key, None)
        if expected is not None:
            out += self._check_error(o, expected, "B2" if dialect == "v2" else "B3")
        if is_success(o.msg):
            if dialect == "v2" and key in b.pairs:
                b.prompts[key] = (dialect, sid, content, stamp, True)
                mid = o.msg["result"].get("messageId") if isinstance(o.msg["result"], dict) else None
                if isinstance(mid, str):
                    b.mids[(o.conn, mid)] = key
            else:
                b.prompts.pop(key)
                other = b.pairs.pop(key, None)
                if other is not None:
                    b.pairs.pop(other, None)
                    b.prompts.pop(other, None)
            return out
        b.prompts.pop(key)
        other = b.pairs.pop(key, None)
        if other is None or dialect != "v1" or other not in b.prompts:
            return out
        b.pairs.pop(other, None)
        v2 = b.prompts[other]
        err = o.msg.get("error") if isinstance(o.msg.get("error"), dict) else {}
        if v2[4]:
            b.expect_idle[(other[0], v2[1])] = (err.get("code"), err.get("message"), o.stamp)
        else:
            b.expect_error[other] = (err.get("code"), err.get("message"), o.stamp)
        return out

    def _check_error(self, o, expected, rule):
        code, message, stamp = expected
        if is_success(o.msg):
            return [violation((rule,), f"prompt #{o.rid} on {conn_name(o.conn)} succeeds although the other leg "
                                       f"failed it before insertion with {code}", stamp, o.stamp)]
        err = o.msg.get("error") if isinstance(o.msg.get("error"), dict) else {}
        if (err.get("code"), err.get("message")) != (code, message):
            make = violation if rule == "B3" else warning
            return [make((rule,), f"prompt #{o.rid} on {conn_name(o.conn)} fails with {err.get('code')}, not the "
                                  f"other leg's error {code} {message!r}", stamp, o.stamp)]
        return []

    def _idle(self, b, o):
        key = (o.conn, o.sid)
        out = []
        expected = b.expect_idle.pop(key, None)
        if expected is not None:
            code, message, stamp = expected
            err = o.update.get("error") if isinstance(o.update.get("error"), dict) else {}
            if stop_reason(o.update) != "error" or (err.get("code"), err.get("message")) != (code, message):
                out.append(violation(("B1",), f"the v1 agent failed an inserted prompt with {code} {message!r}, but "
                                              f"the next idle on {conn_name(o.conn)} says "
                                              f"{stop_reason(o.update)!r} without that error", stamp, o.stamp))
        if o.dialect == "v2" and stop_reason(o.update) == "error":
            pending = [v1 for v2, v1 in b.pairs.items() if v2[0] == o.conn and v1 in b.prompts
                       and b.prompts[v1][0] == "v1" and b.prompts.get(v2, ("",))[0] == "v2"]
            if len(pending) == 1:
                err = o.update.get("error") if isinstance(o.update.get("error"), dict) else None
                code, message = (err.get("code"), err.get("message")) if err else (-32603, None)
                b.expect_error[pending[0]] = (code, message if err else None, o.stamp)
        return out

    def end(self, b, complete, front=None):
        return [obligation(("B1",), f"the v1 failure of an inserted prompt never reached {conn_name(conn)} as an "
                                    f"error idle ({code})", stamp)
                for (conn, _sid), (code, _m, stamp) in sorted(b.expect_idle.items(), key=lambda kv: repr(kv[0]))]


def _content(update: dict) -> tuple:
    content = update.get("content")
    return content_key(content) if isinstance(content, list) else content_key([content])


class BridgeDoesNotDuplicate(Monitor):
    """B5 (v2 agent behind a v1 client): a whole update is not fanned out as v1 chunks twice.

    When the v2 leg sends a whole message update with content for an ID whose
    content the v1 leg already received as chunks (v1 cannot replace), chunks
    for that ID on the v1 leg afterwards duplicate it: a violation.  (Silent
    drops of patch-only updates are not visible without the bridge's log.)
    """

    name = "BridgeDoesNotDuplicate"
    rules = ("B5",)
    description = "a v2 whole-message update is not fanned out again as v1 chunks over content already sent"
    keys = ("bridge",)
    dialects = BOTH
    fields = {"chunked": dict, "replaced": dict}
    _KINDS = ("user_message", "agent_message", "user_message_chunk", "agent_message_chunk")

    def on(self, b, o):
        if o.utype not in self._KINDS or o.dir == C2A:
            return None
        mid = message_id(o.update)
        if mid is None or o.sid is None:
            return None
        chunk = o.utype.endswith("_chunk")
        if o.dialect == "v1" and chunk:
            if mid in b.replaced:
                stamp = b.replaced.pop(mid)
                return [violation(self.rules, f"{o.utype} for {mid} on the v1 leg {conn_name(o.conn)} after the v2 "
                                              "whole update: v1 already had its content, so it is duplicated",
                                  stamp, o.stamp)]
            b.chunked[mid] = o.stamp
        elif o.dialect == "v2" and not chunk and isinstance(o.update.get("content"), list) and mid in b.chunked:
            b.replaced[mid] = o.stamp
        return None
