"""Small hand-built captures that break one rule each: the wire mutants of the rule monitors.

``CASES`` maps a case name to ``(monitor, rule, level, complete, records, events)``:
the capture (and optional sidecar events) must make ``monitor`` report ``rule``
at ``level``.  Every rule monitor has at least one case: a monitor that nothing
can make fail would be a defect.  They are the ``killed_by`` evidence
(``acplab properties``) of the rule monitors no model mutant reaches, such as
the JSON-RPC framing checks the model's codec always satisfies; the tests
feed each to ``trace check``.  Builders keep each case to a few lines.
"""

from __future__ import annotations

C, A = "client->agent", "agent->client"
SID = "s1"


def req(rid, method, params, conn="c1"):
    return (conn, C, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def areq(rid, method, params, conn="c1"):
    return (conn, A, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def res(rid, result, conn="c1", to_agent=False):
    return (conn, C if to_agent else A, {"jsonrpc": "2.0", "id": rid, "result": result})


def err(rid, code, message="failed", conn="c1"):
    return (conn, A, {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def note(method, params, conn="c1", d=C):
    return (conn, d, {"jsonrpc": "2.0", "method": method, "params": params})


def upd(update, conn="c1", sid=SID):
    return note("session/update", {"sessionId": sid, "update": update}, conn, A)


def text(t):
    return {"type": "text", "text": t}


def prompt(rid, t="hi", conn="c1", **extra):
    return req(rid, "session/prompt", {"sessionId": SID, "prompt": [text(t)], **extra}, conn)


def state(s, **extra):
    return upd({"sessionUpdate": "state_update", "state": s, **extra})


def user(mid, t="hi", conn="c1"):
    return upd({"sessionUpdate": "user_message", "messageId": mid, "content": [text(t)]}, conn)


def chunk(kind, mid, t, conn="c1"):
    return upd({"sessionUpdate": f"{kind}_chunk", "messageId": mid, "content": text(t)}, conn)


def tool(tid, status, conn="c1", **extra):
    return upd({"sessionUpdate": "tool_call_update", "toolCallId": tid, "status": status, **extra}, conn)


def start(version=2, conn="c1", caps=None, new=True):
    """initialize (and session/new) on a connection."""
    result = {"protocolVersion": version, "capabilities": caps or {"session": {}}} if version == 2 else \
        {"protocolVersion": 1, "agentCapabilities": caps or {}}
    out = [req(0, "initialize", {"protocolVersion": version}, conn), res(0, result, conn)]
    if new:
        out += [req(1, "session/new", {"cwd": "/w", "mcpServers": []}, conn), res(1, {"sessionId": SID}, conn)]
    return out


def turn(rid, mid, t="hi", end="end_turn"):
    """A conforming prompt turn: prompt, running, success, user message, idle."""
    return [prompt(rid, t), state("running"), res(rid, {"messageId": mid}), user(mid, t), state("idle", stopReason=end)]


def records(items) -> list[dict]:
    return [{"seq": k, "conn": conn, "dir": d, "msg": msg} for k, (conn, d, msg) in enumerate(items, 1)]


S = start()
RUN = [prompt(2), state("running"), res(2, {"messageId": "m1"}), user("m1")]  # work running after a prompt

CASES = {
    # JSON-RPC framing
    "no-jsonrpc-member": ("WellFormedJsonRpc", None, "violation", False, S + [("c1", A, {"id": 9, "result": {}})], ()),
    "prompt-without-id": ("RequestsCarryValidIds", "W11", "violation", False,
                          S + [note("session/prompt", {"sessionId": SID, "prompt": [text("x")]})], ()),
    "request-id-null": ("RequestsCarryValidIds", "W11", "violation", False, S + [req(None, "session/prompt", {})], ()),
    "orphan-response": ("ResponsesMatchRequests", "W11", "violation", False, S + [res(77, {})], ()),
    "id-reused-while-pending": ("ResponsesMatchRequests", "P19", "violation", False, S + [prompt(2), prompt(2)], ()),
    "error-without-code": ("ErrorObjectsWellFormed", "W9", "violation", False,
                           S + [prompt(2), ("c1", A, {"jsonrpc": "2.0", "id": 2, "error": {"message": "x"}})], ()),
    "cancelled-never-answered": ("CancelRequestsAnswered", "C2", "violation", True,
                                 S + [prompt(2), note("$/cancel_request", {"requestId": 2})], ()),
    # prompts
    "empty-result": ("PromptResultCarriesMessageId", "P4", "violation", False, S + [prompt(2), res(2, {})], ()),
    "same-id-twice": ("MessageIdsDistinct", "P5", "violation", False, S + turn(2, "m1") + turn(3, "m1"), ()),
    "never-reported": ("AcceptedMessagesReportedLive", "U1", "violation", True,
                       S + [prompt(2), state("running"), res(2, {"messageId": "m1"}), state("idle", stopReason="end_turn")],
                       ()),
    "client-message-id": ("ClientsSendNoMessageIds", "P13", "violation", False, S + [prompt(2, messageId="x")], ()),
    "client-prompt-id": ("ClientsSendNoMessageIds", "U15", "violation", False, S + [prompt(2, promptId="p")], ()),
    "client-update": ("ClientsSendNoMessageIds", "U11", "violation", False,
                      S + [note("session/update", {"sessionId": SID, "update": {"sessionUpdate": "user_message",
                                                                                "messageId": "x"}})], ()),
    "empty-prompt": ("PromptRequestsWellFormed", "P14", "violation", False,
                     S + [req(2, "session/prompt", {"sessionId": SID, "prompt": []})], ()),
    "prompt-without-blocks": ("PromptRequestsWellFormed", "W2", "violation", False,
                              S + [req(2, "session/prompt", {"sessionId": SID})], ()),
    "image-rejected-badly": ("UnsupportedContentRejected", "P15", "violation", False,
                             S + [req(2, "session/prompt", {"sessionId": SID, "prompt": [{"type": "image", "data": "x",
                                                                                          "mimeType": "image/png"}]}),
                                  err(2, -32603)], ()),
    "prompt-never-answered": ("PromptsAnswered", "P2", "violation", True, S + [prompt(2)], ()),
    "chunk-without-id": ("MessageIdsPresent", "U10", "violation", False,
                         S + RUN + [upd({"sessionUpdate": "agent_message_chunk", "content": text("x")})], ()),
    "command-without-running": ("LocalCommandsFollowLifecycle", "P11", "violation", False,
                                S + [prompt(2, "/status"), res(2, {"messageId": "m1"}), user("m1", "/status"),
                                     state("idle", stopReason="end_turn")], ()),
    # insertion evidence
    "error-after-user-message": ("PromptOutcomesMatchInsertion", "E2", "violation", False,
                                 S + [prompt(2), state("running"), user("m1"), err(2, -32603)], ()),
    "user-message-after-error": ("PromptOutcomesMatchInsertion", "P16", "violation", False,
                                 S + [prompt(2), err(2, -32602), user("m1")], ()),
    "held-prompt-run-after-cancel": ("PromptOutcomesMatchInsertion", "C4", "violation", False,
                                     S + RUN + [prompt(3, "two"), note("session/cancel", {"sessionId": SID}),
                                                state("idle", stopReason="cancelled"), state("running"),
                                                res(3, {"messageId": "m2"}), user("m2", "two")], ()),
    # foreground state
    "running-never-idle": ("WorkEndsWithIdle", "S2", "violation", True, S + RUN, ()),
    "custom-state": ("StateUpdatesWellFormed", "S15", "violation", False, S + RUN + [state("_busy")], ()),
    "unknown-stop-reason": ("StateUpdatesWellFormed", "W6", "violation", False,
                            S + RUN + [state("idle", stopReason="timeout")], ()),
    "idle-without-reason": ("StateUpdatesWellFormed", "S5", "warning", False, S + RUN + [state("idle")], ()),
    "error-idle-bad-error": ("StateUpdatesWellFormed", "E5", "violation", False,
                             S + RUN + [state("idle", stopReason="error", error={"code": "x", "message": "m"})], ()),
    "state-missing": ("StateUpdatesWellFormed", "W5", "violation", False,
                      S + [upd({"sessionUpdate": "state_update"})], ()),
    "usage-on-snapshot": ("SnapshotsAreIdempotent", "W13", "violation", False,
                          S + RUN + [state("idle", stopReason="end_turn", usage={"totalTokens": 5}),
                                     state("idle", usage={"totalTokens": 9})], ()),
    "second-ending": ("SnapshotsAreIdempotent", "S14", "warning", False,
                      S + turn(2, "m1") + [state("idle", stopReason="end_turn")], ()),
    "requires-action-unresolved": ("RequiresActionResolves", "S9", "violation", True,
                                   S + RUN + [state("requires_action")], ()),
    "output-while-idle": ("AgentWorkReportsRunning", "S17", "warning", False,
                          S + turn(2, "m1") + [chunk("agent_message", "a1", "late")], ()),
    # cancel and close
    "cancel-ends-in-error": ("CancelEndsWithCancelled", "C9", "violation", False,
                             S + RUN + [note("session/cancel", {"sessionId": SID}), req(3, "_acme/ping", {}),
                                        res(3, {}),
                                        state("idle", stopReason="error", error={"code": -32603, "message": "abort"})],
                             ()),
    "cancel-never-ends": ("CancelEndsWithCancelled", "C7", "violation", True,
                          S + RUN + [note("session/cancel", {"sessionId": SID})], ()),
    "update-after-close": ("CloseEndsQuietly", "C14", "violation", False,
                           S + turn(2, "m1") + [req(3, "session/close", {"sessionId": SID}), res(3, {}),
                                                state("idle")], ()),
    "close-before-cancelled-idle": ("CloseEndsQuietly", "C14", "violation", False,
                                    S + RUN + [req(3, "session/close", {"sessionId": SID}), res(3, {})], ()),
    "v1-cancel-as-error": ("V1CancelEndsTurnCancelled", "C9", "violation", False,
                           start(1) + [prompt(2), note("session/cancel", {"sessionId": SID}), req(3, "_acme/ping", {}),
                                       res(3, {}), err(2, -32603)], ()),
    "tool-runs-after-cancel": ("PermissionsNotApprovedAfterCancel", "C11", "violation", False,
                               S + RUN + [tool("t1", "pending"), state("requires_action"),
                                          areq(0, "session/request_permission",
                                               {"sessionId": SID, "subject": {"type": "tool_call",
                                                                              "toolCall": {"toolCallId": "t1"}},
                                                "options": [{"optionId": "allow", "kind": "allow_once"}]}),
                                          note("session/cancel", {"sessionId": SID}),
                                          res(0, {"outcome": {"outcome": "selected", "optionId": "allow"}},
                                              to_agent=True),
                                          tool("t1", "in_progress")], ()),
    "unknown-outcome-approves": ("PermissionsNotApprovedAfterCancel", "C16", "violation", False,
                                 S + RUN + [tool("t1", "pending"),
                                            areq(0, "session/request_permission",
                                                 {"sessionId": SID, "toolCall": {"toolCallId": "t1"},
                                                  "options": [{"optionId": "allow", "kind": "allow_once"}]}),
                                            res(0, {"outcome": {"outcome": "_maybe"}}, to_agent=True),
                                            tool("t1", "completed")], ()),
    # tool calls and background work
    "tool-update-after-idle": ("ToolCallsSettleBeforeIdle", "S6", "violation", False,
                               S + RUN + [tool("t1", "in_progress"), state("idle", stopReason="end_turn", background=[]),
                                          tool("t1", "completed")], ()),
    "background-omitted": ("BackgroundSnapshotsConsistent", "G2", "violation", False,
                           S + RUN + [tool("t1", "in_progress"),
                                      state("running", background=[{"type": "tool_call", "toolCallId": "t1"}]),
                                      state("idle", stopReason="end_turn")], ()),
    "background-unannounced": ("BackgroundSnapshotsConsistent", "G3", "violation", False,
                               S + RUN + [state("running", background=[{"type": "terminal", "terminalId": "x"}])], ()),
    "background-dropped-unfinished": ("BackgroundSnapshotsConsistent", "G4", "violation", False,
                                      S + RUN + [tool("t1", "in_progress"),
                                                 state("running", background=[{"type": "tool_call",
                                                                               "toolCallId": "t1"}]),
                                                 state("idle", stopReason="end_turn", background=[])], ()),
    "background-listed-twice": ("BackgroundSnapshotsConsistent", "G5", "violation", False,
                                S + RUN + [tool("t1", "in_progress"),
                                           state("running", background=[{"type": "tool_call", "toolCallId": "t1"}] * 2)],
                                ()),
    "cancel-not-advertised": ("ToolCallCancelHonoured", "C15", "violation", False,
                              S + RUN + [tool("t1", "in_progress"),
                                         req(3, "tool_call/cancel", {"sessionId": SID, "toolCallId": "t1"})], ()),
    # resume and replay
    "resume-without-snapshot": ("ResumeSendsStateSnapshot", "S13", "violation", False,
                                S + turn(2, "m1") + start(new=False, conn="c2") +
                                [req(1, "session/resume", {"sessionId": SID, "cwd": "/w"}, "c2"), res(1, {}, "c2")], ()),
    "bad-cursor-accepted": ("ResumeSendsStateSnapshot", "R2", "violation", False,
                            S + start(new=False, conn="c2") +
                            [req(1, "session/resume", {"sessionId": SID, "cwd": "/w", "replayFrom": {"type": "later"}},
                                 "c2"), upd({"sessionUpdate": "state_update", "state": "idle"}, "c2"),
                             res(1, {}, "c2")], ()),
    "chunked-replay-without-reset": ("ReplayResetsBeforeChunks", "R7", "violation", False,
                                     S + turn(2, "m1") + start(new=False, conn="c2") +
                                     [req(1, "session/resume", {"sessionId": SID, "cwd": "/w",
                                                                "replayFrom": {"type": "start"}}, "c2"),
                                      chunk("user_message", "m1", "hi", "c2")], ()),
    "replay-new-id": ("ReplayKeepsIds", "R5", "violation", False,
                      S + turn(2, "m1") + start(new=False, conn="c2") +
                      [req(1, "session/resume", {"sessionId": SID, "cwd": "/w", "replayFrom": {"type": "start"}}, "c2"),
                       user("m9", "hi", "c2"), upd({"sessionUpdate": "state_update", "state": "idle"}, "c2"),
                       res(1, {}, "c2")], ()),
    "replayed-command-reruns": ("ReplayedCommandsNotRerun", "R9", "warning", False,
                                S + turn(2, "m1", "/status") + start(new=False, conn="c2") +
                                [req(1, "session/resume", {"sessionId": SID, "cwd": "/w",
                                                           "replayFrom": {"type": "start"}}, "c2"),
                                 user("m1", "/status", "c2"), upd({"sessionUpdate": "state_update", "state": "idle"}, "c2"),
                                 res(1, {}, "c2"), upd({"sessionUpdate": "state_update", "state": "running"}, "c2")],
                                ()),
    # notices, v1, bridges
    "notice-without-title": ("NoticesWellFormed", "N5", "violation", False,
                             S + [upd({"sessionUpdate": "notice", "severity": "info", "title": ""})], ()),
    "v1-error-stop-reason": ("V1StopReasonClosedEnum", "W14", "violation", False,
                             start(1) + [prompt(2), res(2, {"stopReason": "error"})], ()),
    "bridge-loses-failure": ("BridgeCarriesFailures", "B1", "violation", False,
                             start(2) + start(1, conn="c2") +
                             [prompt(2, "go"), prompt(2, "go", conn="c2"), state("running"), user("m1", "go"),
                              res(2, {"messageId": "m1"}), err(2, -32000, "auth", conn="c2"),
                              state("idle", stopReason="end_turn")], ()),
    "bridge-duplicates": ("BridgeDoesNotDuplicate", "B5", "violation", False,
                          start(2) + start(1, conn="c2") +
                          [chunk("agent_message", "a1", "x", "c2"),
                           upd({"sessionUpdate": "agent_message", "messageId": "a1", "content": [text("xy")]}),
                           chunk("agent_message", "a1", "y", "c2")], ()),
    # internal events (a sidecar)
    "success-before-insert": ("ResponsesFollowInsertion", "P3", "violation", False, S + turn(2, "m1"),
                              ((9, "insert", {"session": SID, "messageId": "m1", "conn": "c1", "request": 2}),)),
    "error-after-insert": ("ResponsesFollowInsertion", "E2", "violation", False, S + [prompt(2), err(2, -32603)],
                           ((5, "insert", {"session": SID, "messageId": "m1", "conn": "c1", "request": 2}),)),
    "work-ends-unreported": ("WorkReportedByState", "S2", "violation", True, S + RUN,
                             ((5, "work_start", {"session": SID}), (8, "work_end", {"session": SID, "reason": "error"}))),
    "held-then-inserted": ("HeldPromptsWithdrawnOnCancel", "C4", "violation", False,
                           S + RUN + [prompt(3, "two"), note("session/cancel", {"sessionId": SID})],
                           ((10, "insert", {"session": SID, "messageId": "m2", "conn": "c1", "request": 3}),)),
    "retained-not-replayed": ("RetainedMessagesReplayed", "R5", "violation", False,
                              S + turn(2, "m1") + start(new=False, conn="c2") +
                              [req(1, "session/resume", {"sessionId": SID, "cwd": "/w", "replayFrom": {"type": "start"}},
                                   "c2"), upd({"sessionUpdate": "state_update", "state": "idle"}, "c2"),
                               res(1, {}, "c2")],
                              ((6, "insert", {"session": SID, "messageId": "m1", "conn": "c1", "request": 2,
                                              "retained": True}),)),
    "command-runs-twice": ("CommandsRunOnce", "R9", "violation", False, S,
                           ((4, "execute", {"session": SID, "messageId": "m1"}),
                            (4, "execute", {"session": SID, "messageId": "m1"}))),
    "client-guesses": ("ClientsLinkByResponse", "P9", "violation", False, S + turn(2, "m1"),
                       ((9, "bind", {"conn": "c1", "request": 2, "messageId": "m1", "how": "content"}),)),
}
CASES["id-inserted-twice"] = ("InsertedIdsDistinct", "P5", "violation", False, S + turn(2, "m1") + turn(3, "m1"),
                              ((5, "insert", {"session": SID, "messageId": "m1", "conn": "c1", "request": 2}),
                               (12, "insert", {"session": SID, "messageId": "m1", "conn": "c1", "request": 3})))

# the monitors of the liveness, placement and cancellation-routing mutants
CASES["error-idle-without-error"] = ("ErrorIdleCarriesErrorObject", "E3", "warning", False,
                                     S + RUN + [state("idle", stopReason="error")], ())
CASES["cancel-request-of-another-connection"] = (
    "CancelRequestMatchesSender", "C3", "violation", False,
    S + start(new=False, conn="c2") + [prompt(2)],
    ((7, "reject", {"session": SID, "conn": "c1", "request": 2, "code": -32800, "cancelled_by": "c2"}),))
CASES["idle-before-the-user-message"] = (
    "UserMessageReportedInPlace", "S6", "violation", False,
    S + [prompt(2), state("running"), res(2, {"messageId": "m1"}), state("idle", stopReason="end_turn"), user("m1")],
    ((5, "insert", {"session": SID, "messageId": "m1", "conn": "c1", "request": 2}),
     (5, "work_start", {"session": SID}),
     (8, "work_end", {"session": SID, "reason": "end_turn"})))
CASES["report-under-an-id-never-inserted"] = (
    "ResponsesFollowInsertion", "U3", "violation", False, S + turn(2, "m1") + [user("m9")],
    ((5, "insert", {"session": SID, "messageId": "m1", "conn": "c1", "request": 2}),))


# cross-connection reasoning, content-aware replay, proofs of order (each with its conformant twin in TWINS)
def resume(replay=True, conn="c2"):
    """``conn`` opens a resume window on the session (``replayFrom: start`` when ``replay``)."""
    params = {"sessionId": SID, "cwd": "/w", **({"replayFrom": {"type": "start"}} if replay else {})}
    return start(new=False, conn=conn) + [req(1, "session/resume", params, conn)]


def resumed(conn="c2", s="idle"):
    """The window's state snapshot and the resume's success."""
    return [upd({"sessionUpdate": "state_update", "state": s}, conn), res(1, {}, conn)]


def attached(conn="c2"):
    """``conn`` attached to the session by a resume without replay."""
    return resume(False, conn) + resumed(conn)


def cstate(s, conn, **extra):
    return upd({"sessionUpdate": "state_update", "state": s, **extra}, conn)


def cuser(mid, t, conn, content=...):
    """A whole user_message on ``conn``: ``[text(t)]``, or the ``content`` given."""
    return upd({"sessionUpdate": "user_message", "messageId": mid,
                "content": [text(t)] if content is ... else content}, conn)


BG = {"background": []}
REPLAYED = S + turn(2, "m1", "hi") + resume()
CASES.update({
    "replay-full-then-chunks": ("ReplayResetsBeforeChunks", "R7", "violation", False,
                                REPLAYED + [cuser("m1", "hi", "c2"), chunk("user_message", "m1", "hi", "c2")], ()),
    "replay-metadata-only-reset": ("ReplayResetsBeforeChunks", "R7", "violation", False,
                                   REPLAYED + [upd({"sessionUpdate": "user_message", "messageId": "m1",
                                                    "content": None}, "c2"),
                                               chunk("user_message", "m1", "hi", "c2")], ()),
    "replay-renumbered-after-trim": ("ReplayKeepsIds", "R5", "violation", False,
                                     S + turn(2, "m1", "one") + turn(3, "m2", "two") + resume() +
                                     [cuser("m1", "two", "c2")] + resumed(), ()),
    "resume-without-replayfrom-replays": ("ResumeSendsStateSnapshot", "R1", "violation", False,
                                          S + turn(2, "m1") + resume(False) + [cuser("m1", "hi", "c2")] + resumed(),
                                          ()),
    "error-after-fan-out": ("PromptOutcomesMatchInsertion", "E2", "violation", False,
                            S + attached() + [prompt(2, "x"), cstate("running", "c1"), cuser("m1", "x", "c2"),
                                              err(2, -32603)], ()),
    "fan-out-under-another-id": ("PromptOutcomesMatchInsertion", "U3", "violation", False,
                                 S + attached() + turn(2, "m1", "x") + [cuser("m9", "x", "c2")], ()),
    "fan-out-first-under-another-id": ("PromptOutcomesMatchInsertion", "U3", "violation", False,
                                       S + attached() + [prompt(2, "x"), state("running"), cuser("m9", "x", "c2"),
                                                         res(2, {"messageId": "m1"}), user("m1", "x"),
                                                         state("idle", stopReason="end_turn")], ()),
    "prompt-after-cancel-answered-cancelled": ("PromptOutcomesMatchInsertion", "C4", "violation", False,
                                               S + RUN + [note("session/cancel", {"sessionId": SID}),
                                                          state("idle", stopReason="cancelled"), prompt(3, "two"),
                                                          err(3, -32800)], ()),
    "cancel-proven-then-end-turn": ("CancelEndsWithCancelled", "C7", "violation", False,
                                    S + RUN + [note("session/cancel", {"sessionId": SID}), req(3, "_acme/ping", {}),
                                               res(3, {}), state("idle", stopReason="end_turn")], ()),
    "error-idle-for-background-failure": ("BackgroundSnapshotsConsistent", "E9", "violation", False,
                                          S + RUN + [tool("t1", "in_progress"),
                                                     state("idle", stopReason="end_turn",
                                                           background=[{"type": "tool_call", "toolCallId": "t1"}]),
                                                     tool("t1", "failed"),
                                                     state("idle", stopReason="error", background=[])], ()),
    "command-rerun-inside-replay-window": ("ReplayedCommandsNotRerun", "R9", "warning", False,
                                           S + turn(2, "m1", "/status") + resume() +
                                           [cuser("m1", "/status", "c2"), cstate("idle", "c2"),
                                            cstate("running", "c2")] + resumed(s="running"), ()),
    "command-rerun-on-another-connection": ("ReplayedCommandsNotRerun", "R9", "warning", False,
                                            S + turn(2, "m1", "/status") + resume() +
                                            [cuser("m1", "/status", "c2"), cstate("running", "c2"),
                                             state("running")] + resumed(s="running"), ()),
    "live-chunk-while-idle-in-replay-window": ("AgentWorkReportsRunning", "S17", "warning", False,
                                               REPLAYED + [chunk("agent_message", "a9", "x"),
                                                           chunk("agent_message", "a9", "x", "c2")] + resumed(), ()),
    "replay-chunks-without-reset-while-running": ("ReplayResetsBeforeChunks", "R7", "violation", False,
                                                  REPLAYED + [cstate("running", "c2"),
                                                              chunk("agent_message", "a1", "x", "c2")] +
                                                  resumed(s="running"), ()),
    "message-after-idle-with-empty-background": ("ToolCallsSettleBeforeIdle", "S6", "violation", False,
                                                 S + RUN + [chunk("agent_message", "a1", "x"),
                                                            state("idle", stopReason="end_turn", **BG),
                                                            chunk("agent_message", "a1", "y")], ()),
})

#: conformant twins of the cases above: ``name -> (monitor, records, events)``; each holds, with no warning of
#: ``monitor``
TWINS = {
    "replay-reset-then-chunks": ("ReplayResetsBeforeChunks",
                                 REPLAYED + [cuser("m1", "", "c2", content=[]), chunk("user_message", "m1", "hi", "c2")]
                                 + resumed(), ()),
    "replay-full-content-only": ("ReplayResetsBeforeChunks", REPLAYED + [cuser("m1", "hi", "c2")] + resumed(), ()),
    "live-chunk-in-replay-window": ("ReplayResetsBeforeChunks",
                                    REPLAYED + [cuser("m1", "hi", "c2"), prompt(3, "two"), state("running"),
                                                chunk("user_message", "m2", "two", "c2"),
                                                chunk("user_message", "m2", "two"), res(3, {"messageId": "m2"}),
                                                state("idle", stopReason="end_turn")] + resumed(), ()),
    "replay-keeps-content": ("ReplayKeepsIds",
                             S + [prompt(2, "one"), state("running"), res(2, {"messageId": "m1"}),
                                  chunk("user_message", "m1", "o"), chunk("user_message", "m1", "ne"),
                                  state("idle", stopReason="end_turn")] + turn(3, "m2", "two") + resume() +
                             [cuser("m1", "one", "c2"), cuser("m2", "two", "c2")] + resumed(), ()),
    "resume-without-replayfrom": ("ResumeSendsStateSnapshot", S + turn(2, "m1") + attached(), ()),
    # a resume served in steps: m1's first report goes out while c2's window without replayFrom is open, to c2 before
    # c1 (fan-out order is the agent's); an imported message first reported in such a window: both live, not replay
    "first-report-in-window-without-replayfrom": ("ResumeSendsStateSnapshot",
                                                  S + [prompt(2), state("running"), res(2, {"messageId": "m1"})] +
                                                  resume(False) + [cuser("m1", "hi", "c2"), user("m1"),
                                                                   state("idle", stopReason="end_turn"),
                                                                   cstate("idle", "c2", stopReason="end_turn")] +
                                                  resumed(), ()),
    "import-in-window-without-replayfrom": ("ResumeSendsStateSnapshot",
                                           S + resume(False) + [cuser("m1", "imported", "c2"), user("m1", "imported")]
                                           + resumed(), ()),
    "fan-out-then-success": ("PromptOutcomesMatchInsertion",
                             S + attached() + [prompt(2, "x"), state("running"), cuser("m1", "x", "c2"),
                                               res(2, {"messageId": "m1"}), user("m1", "x"),
                                               state("idle", stopReason="end_turn")], ()),
    "fan-out-same-id": ("PromptOutcomesMatchInsertion", S + attached() + turn(2, "m1", "x") + [cuser("m1", "x", "c2")],
                        ()),
    "prompt-before-cancel-answered-cancelled": ("PromptOutcomesMatchInsertion",
                                                S + RUN + [prompt(3, "two"), note("session/cancel", {"sessionId": SID}),
                                                           err(3, -32800), state("idle", stopReason="cancelled")], ()),
    "cancel-then-cancelled": ("CancelEndsWithCancelled",
                              S + RUN + [note("session/cancel", {"sessionId": SID}), req(3, "_acme/ping", {}),
                                         res(3, {}), state("idle", stopReason="cancelled")], ()),
    "background-failure-while-idle": ("BackgroundSnapshotsConsistent",
                                      S + RUN + [tool("t1", "in_progress"),
                                                 state("idle", stopReason="end_turn",
                                                       background=[{"type": "tool_call", "toolCallId": "t1"}]),
                                                 tool("t1", "failed"), state("idle", background=[])], ()),
    "command-replayed-not-rerun": ("ReplayedCommandsNotRerun",
                                   S + turn(2, "m1", "/status") + resume() + [cuser("m1", "/status", "c2")] +
                                   resumed() + [prompt(2, "go", "c2"), cstate("running", "c2")], ()),
    "prompt-before-work-after-replayed-command": ("ReplayedCommandsNotRerun",
                                                  S + turn(2, "m1", "/status") + resume() +
                                                  [cuser("m1", "/status", "c2"), prompt(3, "go"),
                                                   state("running"), cstate("running", "c2")] +
                                                  resumed(s="running"), ()),
    "live-message-restated-by-replay": ("AgentWorkReportsRunning",
                                        REPLAYED + [prompt(3, "two"), state("running"), cstate("running", "c2"),
                                                    res(3, {"messageId": "m2"}), user("m2", "two"),
                                                    chunk("agent_message", "a2", "ok"),
                                                    chunk("agent_message", "a2", "ok", "c2"),
                                                    state("idle", stopReason="end_turn"),
                                                    cstate("idle", "c2", stopReason="end_turn"),
                                                    upd({"sessionUpdate": "agent_message", "messageId": "a2",
                                                         "content": [text("ok")]}, "c2")] + resumed(), ()),
    "live-chunks-fanned-out-first-in-replay-window": ("ReplayResetsBeforeChunks",
                                                      REPLAYED + [prompt(3, "two"), state("running"),
                                                                  cstate("running", "c2"),
                                                                  chunk("agent_message", "a2", "ok", "c2"),
                                                                  res(3, {"messageId": "m2"}), user("m2", "two"),
                                                                  chunk("agent_message", "a2", "ok"),
                                                                  state("idle", stopReason="end_turn"),
                                                                  cstate("idle", "c2", stopReason="end_turn")] +
                                                      resumed(), ()),
    "message-before-idle-with-empty-background": ("ToolCallsSettleBeforeIdle",
                                                  S + RUN + [chunk("agent_message", "a1", "x"),
                                                             state("idle", stopReason="end_turn", **BG)], ()),
}

#: cases under a reading the user chooses: ``name -> (monitor, rule, level, records, switch changes)``
SWITCHED = {
    "agent-id-names-a-user-message": ("MessageIdsUniqueInSession", "P5", "violation",
                                      S + turn(2, "m1") + [state("running"), chunk("agent_message", "m1", "x")],
                                      {"id_scope": "session"}),
}

# an idle that may have crossed session/cancel in flight: the capture does not prove the agent had the cancel
CANCEL = note("session/cancel", {"sessionId": SID})
ABORT = {"code": -32603, "message": "abort"}
#: sidecar events of RUN and a cancel after it: m1 inserted; a failure raised while aborting the cancelled work
M1_INSERTED = (len(S) + 1, "insert", {"session": SID, "messageId": "m1", "conn": "c1", "request": 2})
FAILED_ABORTING = (len(S + RUN) + 1, "fail", {"session": SID, "after_insertion": True, "aborting": True})
CASES.update({
    "error-idle-may-precede-cancel": ("CancelEndsWithCancelled", "C9", "warning", False,
                                      S + RUN + [CANCEL, state("idle", stopReason="error", error=ABORT)], ()),
    "held-prompt-run-after-crossed-idle": ("PromptOutcomesMatchInsertion", "C4", "warning", False,
                                           S + RUN + [prompt(3, "two"), CANCEL, state("idle", stopReason="end_turn"),
                                                      state("running"), res(3, {"messageId": "m2"}),
                                                      user("m2", "two")], ()),
    # the agent's own sidecar says the failure was raised while aborting the cancelled work: C9's case, proven
    "error-idle-after-a-failed-abort": ("CancelEndsWithCancelled", "C9", "violation", False,
                                        S + RUN + [CANCEL, state("idle", stopReason="error", error=ABORT)],
                                        (M1_INSERTED, FAILED_ABORTING)),
    "v1-error-may-precede-cancel": ("V1CancelEndsTurnCancelled", "C9", "warning", False,
                                    start(1) + [prompt(2), CANCEL, err(2, -32603)], ()),
    "held-prompt-run-after-probed-idle": ("PromptOutcomesMatchInsertion", "C4", "violation", False,
                                          S + RUN + [prompt(3, "two"), CANCEL, req(4, "_acme/ping", {}), res(4, {}),
                                                     state("idle", stopReason="end_turn"), state("running"),
                                                     res(3, {"messageId": "m2"}), user("m2", "two")], ()),
    "held-prompt-run-after-a-probe-answered-before-its-work": ("PromptOutcomesMatchInsertion", "C4", "violation",
                                                               False,
                                                               S + RUN + [CANCEL, prompt(3, "two"), CANCEL,
                                                                          req(4, "_acme/ping", {}),
                                                                          state("idle", stopReason="cancelled"),
                                                                          res(4, {}), state("running"),
                                                                          res(3, {"messageId": "m2"}),
                                                                          user("m2", "two")], ()),
    "cancelled-idle-of-an-earlier-cancel": ("PromptOutcomesMatchInsertion", "C4", "warning", False,
                                            S + RUN + [CANCEL, prompt(3, "two"), CANCEL,
                                                       state("idle", stopReason="cancelled"), state("running"),
                                                       res(3, {"messageId": "m2"}), user("m2", "two")], ()),
})
TWINS.update({
    "v1-cancel-then-cancelled": ("V1CancelEndsTurnCancelled",
                                 start(1) + [prompt(2), CANCEL, req(3, "_acme/ping", {}), res(3, {}),
                                             res(2, {"stopReason": "cancelled"})], ()),
    "failure-idle-before-cancel": ("CancelEndsWithCancelled",
                                   S + RUN + [state("idle", stopReason="error", error=ABORT), CANCEL], ()),
    "failed-abort-ends-cancelled": ("CancelEndsWithCancelled",
                                    S + RUN + [CANCEL, state("idle", stopReason="cancelled")],
                                    (M1_INSERTED, FAILED_ABORTING)),
    "held-prompt-withdrawn-at-cancelled-idle": ("PromptOutcomesMatchInsertion",
                                                S + RUN + [prompt(3, "two"), CANCEL,
                                                           state("idle", stopReason="cancelled"), err(3, -32800)], ()),
})
