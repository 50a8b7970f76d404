"""The agent side of one ACP v2 session: an adapter in front of a runtime.

The adapter keeps a :class:`~model.state.Req` per received ``session/prompt``
and forwards the input to the runtime under a private per-submission token;
it answers only when the runtime's insertion event for that token arrives
(RFD "Correlate prompts...": an ID assigned in advance is not evidence of
insertion, P7).  Insertion, the ``user_message`` report and the response are
separate steps, so every order the RFD allows (U2) is explored.  Locally
handled commands are inserted by the adapter itself as live-only user
messages (P10, P11).

Every function is pure: ``(agent, ...) -> (agent', outputs)`` where outputs
are :mod:`model.events` values; ``Send`` values name a connection and the
caller routes them onto the network.
"""

from __future__ import annotations

from typing import NamedTuple

from . import events as ev
from .spec import Spec
from .state import SESSION, Agent, Entry, Req, Work, replace_at
from acplab.model.wire import (
    Notice,
    PromptResultV1,
    UnknownUpdate,
    canonical_json,
    CancelRequest,
    ErrorObject,
    ErrorResponse,
    PermissionResult,
    Prompt,
    PromptResult,
    RequestPermission,
    Resume,
    ResumeResult,
    StateUpdate,
    ToolCallUpdate,
    Update,
    UserMessage,
    UserMessageChunk,
    AgentMessage,
    AgentMessageChunk,
)

REQUEST_CANCELLED = ErrorObject(-32800, "Request cancelled")
INTERNAL_ERROR = ErrorObject(-32603, "Internal error")
AUTH_REQUIRED = ErrorObject(-32000, "Authentication required")
INVALID_PARAMS = ErrorObject(-32602, "Invalid params")


class Options(NamedTuple):
    """The bounds the agent's behaviour depends on."""

    chunks: bool = False  # user messages reported as user_message_chunk (U13)
    retain: bool = True  # prompts and agent output kept for replay (R4)
    retain_commands: bool = False
    tools: bool = False
    permission: bool = False
    output: bool = False  # the work streams an agent message chunk before it ends


def is_command(content: tuple[str, ...]) -> bool:
    return bool(content) and content[0].startswith("/")


def _send(conn, msg) -> ev.Send:
    return ev.Send(conn, ev.A2C, msg)


def broadcast(agent: Agent, epochs: tuple[int, ...], update, spec: Spec | None = None) -> list:
    """A session update to every attached connection (fan-out to all clients).

    A spec without state_update (v1) sends no state reports.
    """
    if spec is not None and not spec.state_updates and update.kind == "state_update":
        return []
    msg = Update(SESSION, update)
    return [_send((c, epochs[c]), msg) for c, on in enumerate(agent.attached) if on]


def _fresh_id(agent: Agent, spec: Spec, prefix: str = "m") -> tuple[Agent, str]:
    """A new message ID (P5); the ``reused-id`` mutant hands out the last one again."""
    if spec.reuse_ids and prefix == "m" and agent.issued:
        return agent, agent.issued[-1]
    mid = f"{prefix}{agent.next_id}"
    return agent._replace(next_id=agent.next_id + 1, issued=agent.issued + (mid,)), mid


# -- receiving from a client ------------------------------------------------------------


def receive(agent: Agent, client: int, epoch: int, msg, spec: Spec, opts: Options, epochs) -> tuple[Agent, list]:
    """The adapter handles one message delivered from a client connection."""
    conn = (client, epoch)
    kind = msg.kind
    if kind == "prompt":
        return _receive_prompt(agent, client, epoch, msg, spec)
    if kind == "cancel_session":
        return _cancel_session(agent, spec, epochs)
    if kind == "cancel_request":
        return _cancel_request(agent, conn, msg.rid, spec)
    if kind == "resume":
        return _resume(agent, client, epoch, msg, spec, opts, epochs)
    if kind == "permission_result":
        return _permission_answer(agent, msg, epochs, spec)
    return agent, []


def _receive_prompt(agent: Agent, client, epoch, msg: Prompt, spec: Spec):
    req = Req(client, epoch, msg.rid, msg.content, prompt_id=msg.prompt_id)
    out = []
    if spec.respond_at == "receipt":
        # Non-conforming: answer on an ID minted in advance (X03; breaks P3).
        agent, mid = _fresh_id(agent, spec)
        req = req._replace(mid=mid, answered=True)
        out.append(_send((client, epoch), _result(spec, msg.rid, mid)))
    return agent._replace(reqs=agent.reqs + (req,)), out


def _result(spec: Spec, rid, mid, stop: str = "end_turn"):
    """The success response the spec defines (P4 / the v2 draft's `{}` / v1's stopReason)."""
    if spec.response == "stop_reason":
        return PromptResultV1(rid, stop)
    return PromptResult(rid, mid if spec.response == "message_id" else None)


def _cancel_session(agent: Agent, spec: Spec, epochs):
    """C4/C7: mark active work cancelled; withdraw held prompts with -32800."""
    out: list = [ev.CancelSeen(agent.work is not None and not agent.work.cancelled)]
    work = agent.work
    if work is not None and not work.cancelled:
        if work.perm_rid is not None:
            # C11: stop waiting for the permission answer and cancel the request.
            out.append(_send((work.perm_client, epochs[work.perm_client]), CancelRequest(work.perm_rid)))
            work = work._replace(perm_rid=None, perm_client=None)
        agent = agent._replace(work=work._replace(cancelled=True))
    if spec.cancel_withdraws_held:
        kept = []
        for req in agent.reqs:
            if req.inserted or req.answered:
                kept.append(req)
            else:
                out.append(ev.Reject(req.token, REQUEST_CANCELLED.code))
                out.append(_send((req.client, req.epoch), ErrorResponse(req.rid, REQUEST_CANCELLED)))
        agent = agent._replace(reqs=tuple(kept))
    return agent, out


def _cancel_request(agent: Agent, conn, rid, spec: Spec):
    """C1/C2/C3: -32800 only before insertion; matched against the sender's own requests."""
    for i, req in enumerate(agent.reqs):
        if (req.client, req.epoch, req.rid) != (*conn, rid) or req.answered:
            continue
        if not req.inserted:
            out = [ev.Reject(req.token, REQUEST_CANCELLED.code), _send(conn, ErrorResponse(rid, REQUEST_CANCELLED))]
            return agent._replace(reqs=agent.reqs[:i] + agent.reqs[i + 1 :]), out
        if spec.cancel_request_after_insertion == "error":
            out = [_send(conn, ErrorResponse(rid, REQUEST_CANCELLED))]
            return _settle(agent, i, req._replace(answered=True, cancel_asked=True)), out
        return _settle(agent, i, req._replace(cancel_asked=True)), []
    return agent, []


def _permission_answer(agent: Agent, msg: PermissionResult, epochs, spec: Spec):
    """S9: an approval resumes the work (running); anything else is not approval (C16)."""
    work = agent.work
    if work is None or work.perm_rid != msg.rid:
        return agent, []  # S10: an answer for work that already ended is ignored
    approved = msg.outcome == "selected" and msg.option_id == "allow"
    return _resume_after_permission(agent, work, approved, epochs, spec)


def _resume_after_permission(agent: Agent, work: Work, approved: bool, epochs, spec: Spec):
    tool = _tool_id(work)
    status = "in_progress" if approved else "failed"
    work = work._replace(perm_rid=None, perm_client=None, tool=status)
    agent = agent._replace(work=work, fg="running")
    out = broadcast(agent, epochs, StateUpdate("running"), spec)
    out += broadcast(agent, epochs, ToolCallUpdate(tool, status))
    return agent, out


def connection_lost(agent: Agent, client: int, epochs, spec: Spec) -> tuple[Agent, list]:
    """E10: the transport closed; a permission asked on it counts as not approved (C11)."""
    agent = agent._replace(attached=replace_at(agent.attached, client, False))
    work = agent.work
    if work is not None and work.perm_client == client and work.perm_rid is not None:
        return _resume_after_permission(agent, work, False, epochs, spec)
    return agent, []


# -- insertion, echo and response ------------------------------------------------------------


def next_held(agent: Agent) -> int | None:
    """Index of the oldest received prompt not yet inserted (P17: arrival order)."""
    for i, req in enumerate(agent.reqs):
        if not req.inserted:
            return i
    return None


def insert(agent: Agent, i: int, spec: Spec, opts: Options, epochs) -> tuple[Agent, list]:
    """The runtime (or, for a command, the adapter) inserts held prompt ``i`` and starts work."""
    req = agent.reqs[i]
    command = is_command(req.content)
    if req.mid is not None:
        mid = req.mid  # minted in advance by a non-conforming adapter
    elif spec.message_ids == "jsonrpc_id":
        mid = f"r{req.rid}"  # the request id as the message's identity (a rejected alternative)
    elif spec.message_ids == "client_chosen" and req.prompt_id is not None:
        mid = req.prompt_id  # the client picked the canonical ID (a rejected alternative)
    else:
        agent, mid = _fresh_id(agent, spec)
    retained = opts.retain_commands if command else opts.retain
    entry = Entry(mid, "user", req.content, retained, "command" if command else "prompt", req.token, req.prompt_id)
    agent = agent._replace(history=agent.history + (entry,))
    agent = _settle(agent, i, req._replace(mid=mid, inserted=True))
    out: list = [ev.Insert(mid, req.token, entry.origin, retained)]
    if command:
        out.append(ev.Execute(mid))
    agent, started = start_work(agent, (mid,), command, epochs, spec)
    if not spec.echo:
        agent = _settle(agent, i, agent.reqs[i]._replace(echoed=True)) if i < len(agent.reqs) else agent
    return agent, out + started


def import_message(agent: Agent, spec: Spec, epochs) -> tuple[Agent, list]:
    """U14: a message imported from elsewhere: an agent ID, reported live, and no prompt response."""
    agent, mid = _fresh_id(agent, spec)
    agent = agent._replace(history=agent.history + (Entry(mid, "user", ("imported",), True, "imported"),))
    out = [ev.Insert(mid, None, "imported", True)]
    return agent, out + broadcast(agent, epochs, UserMessage(mid, ("imported",)))


def start_work(agent: Agent, mids, command: bool, epochs, spec: Spec, replayed: bool = False):
    """S2: foreground work starts with ``running``."""
    work = Work(tuple(mids), command=command, replayed_command=replayed)
    agent = agent._replace(work=work, fg="running")
    return agent, [ev.WorkStart(work.mids, command)] + broadcast(agent, epochs, StateUpdate("running"), spec)


def reject(agent: Agent, i: int, spec: Spec) -> tuple[Agent, list]:
    """A failure before insertion: a JSON-RPC error, nothing inserted (E1)."""
    req = agent.reqs[i]
    agent = agent._replace(reqs=agent.reqs[:i] + agent.reqs[i + 1 :])
    if req.answered or spec.respond_at == "never":
        return agent, [ev.Reject(req.token, 0)]  # already (wrongly) answered: the input just vanishes
    return agent, [ev.Reject(req.token, INTERNAL_ERROR.code), _send((req.client, req.epoch), ErrorResponse(req.rid, INTERNAL_ERROR))]


def echo(agent: Agent, i: int, opts: Options, epochs) -> tuple[Agent, list]:
    """U1/U3: report the inserted message live, under its ID, to every attached client."""
    req = agent.reqs[i]
    update = UserMessage(req.mid, req.content, req.prompt_id)
    if opts.chunks:
        update = [UserMessageChunk(req.mid, block) for block in req.content]
    out = []
    for c, on in enumerate(agent.attached):
        if on and c not in req.replayed_to:  # a connection that got it by replay has it already
            for u in update if opts.chunks else [update]:
                out.append(_send((c, epochs[c]), Update(SESSION, u)))
    return _settle(agent, i, req._replace(echoed=True)), out


def answer(agent: Agent, i: int, spec: Spec) -> tuple[Agent, list]:
    """P2/P4: the success response, with the inserted message's ID."""
    req = agent.reqs[i]
    result = _result(spec, req.rid, req.mid)
    return _settle(agent, i, req._replace(answered=True)), [_send((req.client, req.epoch), result)]


def _settle(agent: Agent, i: int, req: Req) -> Agent:
    """Store the updated request; forget it once answered and (if inserted) echoed."""
    done = req.answered and (req.echoed or not req.inserted)
    reqs = agent.reqs[:i] + agent.reqs[i + 1 :] if done else replace_at(agent.reqs, i, req)
    return agent._replace(reqs=reqs)


# -- foreground work ------------------------------------------------------------


def _tool_id(work: Work) -> str:
    return "t" + work.mids[0][1:]


#: every named step of foreground work (:func:`work_step`)
WORK_STEPS = ("output", "start_tool", "ask_permission", "complete_tool", "finish", "end_cancelled", "fail")


def work_steps(agent: Agent, opts: Options, can_fail: bool) -> list[str]:
    """The names of the work steps enabled now (the script, a failure, a cancellation's end)."""
    work = agent.work
    if work is None or work.perm_rid is not None:
        return ["fail"] if work is not None and can_fail and not work.command else []
    if work.cancelled:
        return ["end_cancelled"]
    steps = []
    if work.output is None and (opts.output or work.command):
        steps.append("output")
    elif not work.command and opts.tools and work.tool is None:
        steps.append("ask_permission" if opts.permission else "start_tool")
    elif work.tool == "in_progress":
        steps.append("complete_tool")
    else:
        steps.append("finish")
    if can_fail and not work.command:
        steps.append("fail")
    return steps


def work_step(agent: Agent, step: str, spec: Spec, opts: Options, epochs) -> tuple[Agent, list]:
    """Advance the foreground work by one named step."""
    work = agent.work
    if step == "output":
        agent, amid = _fresh_id(agent, spec, "a")
        retained = opts.retain and not work.command
        agent = agent._replace(history=agent.history + (Entry(amid, "agent", ("ok",), retained, "agent"),))
        agent = agent._replace(work=work._replace(output=amid))
        return agent, broadcast(agent, epochs, AgentMessageChunk(amid, "ok"))
    if step == "start_tool":
        agent = agent._replace(work=work._replace(tool="in_progress"))
        return agent, broadcast(agent, epochs, ToolCallUpdate(_tool_id(work), "in_progress"))
    if step == "ask_permission":
        return _ask_permission(agent, work, epochs, spec)
    if step == "complete_tool":
        agent = agent._replace(work=work._replace(tool="completed"))
        return agent, broadcast(agent, epochs, ToolCallUpdate(_tool_id(work), "completed"))
    if step == "finish":
        return _end(agent, "end_turn", epochs, spec)
    if step == "end_cancelled":
        return _end(agent, "cancelled", epochs, spec, tool_status="cancelled")
    if step == "fail":
        return _fail(agent, spec, epochs)
    raise ValueError(f"unknown work step {step!r}")


def _ask_permission(agent: Agent, work: Work, epochs, spec: Spec):
    """S8: blocked on the user -> ``requires_action`` and a permission request to the submitter."""
    submitter = _submitter(agent, work)
    if submitter is None or not agent.attached[submitter]:
        # Nobody to ask: the tool is not approved (C16) and the work goes on.
        agent = agent._replace(work=work._replace(tool="failed"))
        return agent, broadcast(agent, epochs, ToolCallUpdate(_tool_id(work), "failed"))
    rid = agent.next_rid
    tool = _tool_id(work)
    work = work._replace(perm_rid=rid, perm_client=submitter, tool="pending")
    agent = agent._replace(work=work, fg="requires_action", next_rid=rid + 1)
    out = broadcast(agent, epochs, ToolCallUpdate(tool, "pending"))
    out += broadcast(agent, epochs, StateUpdate("requires_action"), spec)
    out.append(_send((submitter, epochs[submitter]), RequestPermission(rid, SESSION, tool)))
    return agent, out


def _submitter(agent: Agent, work: Work) -> int | None:
    for entry in agent.history:
        if entry.mid == work.mids[0] and entry.sub is not None:
            return entry.sub[0]
    return None


def _fail(agent: Agent, spec: Spec, epochs):
    """E2/E3/E6: a failure after insertion: unfinished tools ``failed``, then idle ``error``.

    A prompt of this work that is still unanswered keeps its success response
    (E2); the ``error-after-insertion`` mutant answers it with an error instead.
    """
    out: list = [ev.Fail(True)]
    if spec.failure_before_response == "error_response":
        for i, req in enumerate(agent.reqs):
            if req.inserted and not req.answered and req.mid in agent.work.mids:
                agent = _settle(agent, i, req._replace(answered=True))
                out.append(_send((req.client, req.epoch), ErrorResponse(req.rid, AUTH_REQUIRED)))
                break
    agent, ended = _end(agent, "error", epochs, spec, tool_status="failed", error=AUTH_REQUIRED)
    return agent, out + ended


def _end(agent: Agent, reason: str, epochs, spec: Spec, tool_status: str | None = None, error=None):
    """S5/S6: terminal tool statuses first, then exactly one idle with the stop reason.

    How a failure is reported follows ``spec.failure_report`` (the RFD's
    idle error, or one of the alternatives its FAQ rejects); a v1 agent
    answers the prompts of the work only now (X04).
    """
    work = agent.work
    out = []
    if tool_status is not None and work.tool in ("pending", "in_progress"):
        out += broadcast(agent, epochs, ToolCallUpdate(_tool_id(work), tool_status))
    how = spec.failure_report if reason == "error" else "idle_error"
    # What the ending report said: the stop reason, "" for an idle without one, None for no idle.
    reported = {"idle_error": reason, "failed_state": "failed", "error_update": "", "error_notice": ""}.get(how)
    agent = agent._replace(work=None, fg="idle", last_stop=reason if how == "idle_error" else None)
    if how == "idle_error":
        out += broadcast(agent, epochs, StateUpdate("idle", reason, error), spec)
    elif how == "failed_state":
        out += broadcast(agent, epochs, StateUpdate("failed"), spec)
    elif how == "error_update":
        out += broadcast(agent, epochs, UnknownUpdate("error", canonical_json({"sessionUpdate": "error", "error": {
            "code": error.code, "message": error.message}})))
        out += broadcast(agent, epochs, StateUpdate("idle"), spec)
    elif how == "error_notice":
        out += broadcast(agent, epochs, Notice("error", error.message))
        out += broadcast(agent, epochs, StateUpdate("idle"), spec)
    if spec.respond_at == "end_of_turn":
        agent, answered = _answer_at_end(agent, work, reason, error)
        out += answered
    out.append(ev.WorkEnd(reason, reported))
    return agent, out


def _answer_at_end(agent: Agent, work: Work, reason: str, error):
    """v1: the prompts of the ended work are answered now, with the stop reason or the error."""
    out = []
    for i in reversed(range(len(agent.reqs))):
        req = agent.reqs[i]
        if req.inserted and not req.answered and req.mid in work.mids:
            msg = ErrorResponse(req.rid, error) if reason == "error" else PromptResultV1(req.rid, reason)
            out.append(_send((req.client, req.epoch), msg))
            out.append(ev.HeldResponse(req.token))
            agent = _settle(agent, i, req._replace(answered=True))
    return agent, out


# -- resume and replay ------------------------------------------------------------


def _resume(agent: Agent, client, epoch, msg: Resume, spec: Spec, opts: Options, epochs):
    """R1/R3/S13: attach, replay retained history if asked, snapshot the state, then respond."""
    conn = (client, epoch)
    if msg.replay_from not in (None, "start"):
        return agent, [_send(conn, ErrorResponse(msg.rid, INVALID_PARAMS))]  # R2
    agent = agent._replace(attached=replace_at(agent.attached, client, True))
    out: list = []
    rerun = []
    if msg.replay_from == "start":
        agent, out, rerun = _replay(agent, conn, spec, opts)
    if spec.state_sync_on_resume and spec.state_updates:
        out.append(_send(conn, Update(SESSION, _snapshot(agent, spec))))
    out.append(_send(conn, ResumeResult(msg.rid)))
    if rerun and agent.work is None:
        # Non-conforming: a replayed command runs again (breaks R9).
        out.append(ev.Execute(rerun[0]))
        agent, started = start_work(agent, (rerun[0],), True, epochs, spec, replayed=True)
        out += started
    return agent, out


def _snapshot(agent: Agent, spec: Spec) -> StateUpdate:
    """S13/E13: the current state; an idle carries how the last work ended, with its error."""
    if agent.fg != "idle" or not spec.snapshot_outcome or agent.last_stop is None:
        return StateUpdate(agent.fg)
    return StateUpdate("idle", agent.last_stop, AUTH_REQUIRED if agent.last_stop == "error" else None)


def _replay(agent: Agent, conn, spec: Spec, opts: Options):
    """R5/R7/R13: each retained message under its ID; chunked user messages reset first."""
    out: list = []
    rerun = []
    for entry in agent.history:
        if not entry.retained:
            continue
        mid = entry.mid
        if not spec.replay_keeps_ids:
            agent, mid = _fresh_id(agent, spec, entry.mid[0])
        out.append(ev.Replayed(entry.mid, mid))
        if entry.role == "agent":
            out.append(_send(conn, Update(SESSION, AgentMessage(mid, entry.content))))
            continue
        if opts.chunks:
            if spec.replay_reset:
                out.append(_send(conn, Update(SESSION, UserMessage(mid, ()))))
            out += [_send(conn, Update(SESSION, UserMessageChunk(mid, b))) for b in entry.content]
        else:
            out.append(_send(conn, Update(SESSION, UserMessage(mid, entry.content, entry.token))))
        if entry.origin == "command" and spec.replay_reexecutes_commands:
            rerun.append(entry.mid)
        if not spec.echo_after_replay:
            agent = _mark_replayed(agent, entry.mid, conn[0])
    return agent, out, rerun


def _mark_replayed(agent: Agent, mid: str, client: int) -> Agent:
    """The replay reported a message whose live report is still due: not again to this client."""
    for i, req in enumerate(agent.reqs):
        if req.mid == mid and req.inserted and not req.echoed and client not in req.replayed_to:
            return agent._replace(reqs=replace_at(agent.reqs, i, req._replace(replayed_to=req.replayed_to + (client,))))
    return agent


def restart(agent: Agent) -> tuple[Agent, list]:
    """The agent process restarts: connections close, live-only history and work are lost.

    Retained history keeps its IDs (R5); the ID counter survives so new IDs stay fresh (P5).
    """
    history = tuple(e for e in agent.history if e.retained)
    agent = Agent(history=history, next_id=agent.next_id, next_rid=agent.next_rid,
                  attached=(False,) * len(agent.attached), issued=agent.issued)
    return agent, [ev.Restart()]
