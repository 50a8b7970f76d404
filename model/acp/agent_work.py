"""Foreground work of the ACP v2 agent: its script, permission requests, failure and the ending idle.

Work is started by an inserted prompt or command, by the agent itself
(S17), or by a foreground hook before insertion (S4); later prompts may
join it (a prompt contributes to work in progress).  Its script: agent
output, then an optional tool call (with a permission request), then the
ending idle with its stop reason (S2, S5).  Every update of the work comes
before that idle (S6); unfinished tool calls get their terminal status first
(E6).  All functions are pure, as in :mod:`.agent`.
"""

from __future__ import annotations

from . import agent_variants as av
from . import events as ev
from .agent_common import AUTH_REQUIRED, Options, broadcast, finish_closes, fresh_id, report_due, send, settle
from .spec import Spec
from .state import SESSION, Agent, Entry, Work, replace_at
from acplab.model.wire import (
    AgentMessageChunk,
    ErrorResponse,
    Notice,
    PromptResultV1,
    RequestPermission,
    StateUpdate,
    ToolCallUpdate,
    UnknownUpdate,
    canonical_json,
)

#: every named step of foreground work (:func:`work_step`)
WORK_STEPS = ("output", "start_tool", "ask_permission", "complete_tool", "finish", "end_cancelled", "fail",
              "keep_working", "detach")


def tool_id(work: Work, k: int = 0) -> str:
    """The ID of the work's ``k``-th tool call: fixed by its first message (work without one has no tool)."""
    base = "t" + work.mids[0][1:] if work.mids else "t-" + work.origin
    return base if k == 0 else f"{base}.{k + 1}"


def start_work(agent: Agent, mids, command: bool, epochs, spec: Spec, replayed: bool = False,
               origin: str | None = None, hook=None):
    """S2/S17/S4: foreground work starts with ``running``, whatever started it."""
    origin = origin or ("command" if command else "prompt")
    work = Work(tuple(mids), command=command, replayed_command=replayed, origin=origin, hook=hook)
    agent = agent._replace(work=work, fg="running")
    return agent, [ev.WorkStart(work.mids, command, origin)] + broadcast(agent, epochs, StateUpdate("running"), spec)


def work_steps(agent: Agent, opts: Options, can_fail: bool, spec: Spec) -> list[str]:
    """The names of the work steps enabled now (the script, a failure, a cancellation's end).

    With ``spec.echo_before_work``, while an inserted message awaits its live
    report the work sends no later message and does not end: insertion gave
    the message a position, so later output and the ending idle come after
    its report (P1, S6).  Steps that report no message (tool call updates,
    silent work) may still go first.  A permission request waits too: it asks
    the user about work on a message the user should see first (a choice; the
    RFD does not order them, and letting it go first multiplies the states of
    permission-reconnect by three without a new violation).
    """
    work = agent.work
    if work is None:
        return []
    steps = _work_steps(agent, work, opts, can_fail, spec)
    if spec.echo_before_work and report_due(agent):
        return [s for s in steps if s in _BEFORE_REPORT]
    return steps


#: work steps that report no message, ask nothing and do not end the work: they may precede a report
_BEFORE_REPORT = frozenset({"start_tool", "complete_tool", "keep_working"})


def _work_steps(agent: Agent, work: Work, opts: Options, can_fail: bool, spec: Spec) -> list[str]:
    failing = ["fail"] if can_fail and not work.command else []
    if work.origin == "hook" and work.hook is not None and not work.cancelled:
        return []  # the hook runs until its prompt is inserted or rejected
    if work.perms:
        return failing
    if work.cancelled:
        return ["end_cancelled"] + failing  # aborting may itself raise (C9)
    if work.origin == "hook":
        return ["finish"]  # its prompt was rejected: the hook's work ends (S4, E11)
    steps = []
    if work.output is None and (opts.output or work.command or work.origin == "agent"):
        steps.append("output")
    elif not work.command and work.origin != "agent" and opts.tools and not work.tools:
        steps.append("ask_permission" if opts.permission else "start_tool")
    elif "in_progress" in work.tools:
        steps += ["complete_tool", "detach"] if opts.background and not agent.background else ["complete_tool"]
    elif spec.ends_only_on_cancel:
        pass  # the mutant waits for a cancel that a user need never send
    else:
        steps.append("finish" if spec.ends_work else "keep_working")
    if opts.slow and "keep_working" not in steps:
        steps.append("keep_working")
    return steps + failing


#: the stop reasons a turn may end with besides errors and cancellation (S5; W6: a custom one starts with ``_``)
STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "_custom")


def work_step(agent: Agent, step: str, spec: Spec, opts: Options, epochs, reason: str = "end_turn"):
    """Advance the foreground work by one named step (``finish`` ends it with ``reason``)."""
    work = agent.work
    if step == "output":
        agent, amid = fresh_id(agent, spec, "a")
        retained = opts.retain and not work.command
        agent = agent._replace(history=agent.history + (Entry(amid, "agent", ("ok",), retained, "agent"),))
        agent = agent._replace(work=work._replace(output=amid))
        return agent, broadcast(agent, epochs, AgentMessageChunk(amid, "ok"))
    if step == "start_tool":
        agent = agent._replace(work=work._replace(tools=("in_progress",) * opts.tool_calls))
        return agent, _each_call(agent, work, epochs, "in_progress")
    if step == "ask_permission":
        return _ask_permission(agent, work, epochs, spec, opts.tool_calls)
    if step == "complete_tool":
        k = work.tools.index("in_progress")
        agent = agent._replace(work=work._replace(tools=replace_at(work.tools, k, "completed")))
        return agent, broadcast(agent, epochs, ToolCallUpdate(tool_id(work, k), "completed"))
    if step == "finish":
        if work.failed:  # hook work whose prompt was rejected (E11)
            return end(agent, spec.hook_rejection_stop, epochs, spec, error=_error(spec))
        if reason.startswith("_") and not spec.custom_stop_prefixed:
            reason = reason[1:]  # the mutant drops the prefix a custom value needs (W6)
        return end(agent, reason, epochs, spec)
    if step == "end_cancelled":
        return end(agent, "cancelled", epochs, spec, tool_status="cancelled")
    if step == "fail":
        return _fail(agent, spec, epochs)
    if step == "keep_working":
        return agent, [ev.Working()]
    if step == "detach":
        # G3: the calls the idle lists are restated first: a connection attached after they started never saw them
        running = tuple(tool_id(work, k) for k, s in enumerate(work.tools) if s == "in_progress")
        known = [m for t in running for m in broadcast(agent, epochs, ToolCallUpdate(t, "in_progress"))]
        agent, out = end(agent, "end_turn", epochs, spec, detached=running)
        return agent, known + out
    raise ValueError(f"unknown work step {step!r}")


def _error(spec: Spec):
    """The error object an idle error carries: E5 makes it optional, the RFD says SHOULD."""
    return AUTH_REQUIRED if spec.error_details else None


# -- permission ------------------------------------------------------------


def submitter(agent: Agent, work: Work) -> int | None:
    """The client whose prompt started the work (None for agent-initiated work or imports)."""
    for entry in agent.history:
        if work.mids and entry.mid == work.mids[0] and entry.sub is not None:
            return entry.sub[0]
    return None


def _each_call(agent: Agent, work: Work, epochs, status: str) -> list:
    """``status`` reported for each of the work's tool calls, in order."""
    return [m for k in range(len(agent.work.tools)) for m in broadcast(agent, epochs, ToolCallUpdate(tool_id(work, k),
                                                                                                      status))]


def _ask_permission(agent: Agent, work: Work, epochs, spec: Spec, calls: int = 1):
    """S8: blocked on the user -> ``requires_action`` and a permission request per tool call to the submitter."""
    asker = submitter(agent, work)
    if asker is None or not agent.attached[asker]:
        asker = next((c for c, on in enumerate(agent.attached) if on), None) \
            if spec.permission_on_disconnect == "reask" else None
    if asker is None:
        # Nobody to ask: the tools are not approved (C16) and the work goes on.
        agent = agent._replace(work=work._replace(tools=("failed",) * calls))
        return agent, _each_call(agent, work, epochs, "failed")
    agent = agent._replace(work=work._replace(tools=("pending",) * calls), fg="requires_action")
    out = _each_call(agent, work, epochs, "pending")
    out += broadcast(agent, epochs, StateUpdate("requires_action"), spec)
    agent, asked = ask(agent, asker, epochs)
    return agent, out + asked


def ask(agent: Agent, client: int, epochs) -> tuple[Agent, list]:
    """Ask ``client`` about every pending tool call no attached client is asked about, each under a fresh
    request id."""
    work = agent.work
    perms = [p for p in work.perms if p[2] is not None]
    asked = {p[0] for p in perms}
    rid = agent.next_rid
    out = []
    for k, status in enumerate(work.tools):
        if status == "pending" and k not in asked:
            perms.append((k, rid, client))
            out.append(send((client, epochs[client]), RequestPermission(rid, SESSION, tool_id(work, k))))
            rid += 1
    return agent._replace(work=work._replace(perms=tuple(perms)), next_rid=rid), out


def resume_after_permission(agent: Agent, work: Work, k: int, approved: bool, epochs, spec: Spec):
    """S8/S9: an answer settles tool call ``k``: it runs (approved) or fails.  ``requires_action`` ends
    (running) once a call runs or no request is outstanding: while one approved call runs the foreground can
    move (S8), and a rejection alone with another request still open moves nothing (S9: answering one of
    several requests does not by itself imply running).  The RFD is silent on parallel requests: a choice."""
    status = "in_progress" if approved else "failed"
    work = work._replace(perms=tuple(p for p in work.perms if p[0] != k), tools=replace_at(work.tools, k, status))
    if agent.fg != "requires_action" or (work.perms and "in_progress" not in work.tools):
        agent = agent._replace(work=work)
        return agent, broadcast(agent, epochs, ToolCallUpdate(tool_id(work, k), status))
    agent = agent._replace(work=work, fg="running")
    out = broadcast(agent, epochs, StateUpdate("running"), spec)
    out += broadcast(agent, epochs, ToolCallUpdate(tool_id(work, k), status))
    return agent, out


# -- ending ------------------------------------------------------------


def _fail(agent: Agent, spec: Spec, epochs):
    """E2/E3/E6: a failure after insertion: unfinished tools ``failed``, then idle ``error``.

    A prompt of this work that is still unanswered keeps its success response
    (E2); the ``error-after-insertion`` mutant answers it with an error instead.
    An error raised while aborting cancelled work is reported as ``cancelled``
    (C9); the ``abort-fails-as-error`` mutant reports ``error``.
    """
    work = agent.work
    if work.cancelled:
        reason = spec.abort_failure_stop
        status = "cancelled" if reason == "cancelled" else "failed"
        agent, ended = end(agent, reason, epochs, spec, tool_status=status,
                           error=_error(spec) if reason == "error" else None)
        return agent, [ev.Fail(bool(work.mids), aborting=True)] + ended
    out: list = [ev.Fail(bool(work.mids))]
    if spec.failure_before_response == "error_response":
        for i, req in enumerate(agent.reqs):
            if req.inserted and not req.answered and req.mid in work.mids:
                agent = settle(agent, i, req._replace(answered=True))
                out.append(send((req.client, req.epoch), ErrorResponse(req.rid, AUTH_REQUIRED)))
                break
    agent, ended = end(agent, "error", epochs, spec, tool_status="failed", error=_error(spec))
    return agent, out + ended


def end(agent: Agent, reason: str, epochs, spec: Spec, tool_status: str | None = None, error=None, detached=()):
    """S5/S6: terminal tool statuses first, then exactly one idle with the stop reason.

    How a failure is reported follows ``spec.failure_report`` (the RFD's
    idle error, or one of the alternatives its FAQ rejects); with
    ``spec.stale_error`` an idle after a failed turn still carries its error
    (an implementation that forgot the sibling field's prose rule); a v1 agent
    answers the prompts of the work only now (X04).  The
    ``tool-status-after-idle`` mutant keeps the tool's terminal status for a
    later step.  ``detached`` tool calls go on as background work: the idle lists them (G1) and they report
    on while idle (S11, :func:`background_step`).
    """
    work = agent.work
    out = []
    late = ()
    for k, status in enumerate(work.tools if tool_status is not None else ()):
        if status not in ("pending", "in_progress"):
            continue
        update = ToolCallUpdate(tool_id(work, k), tool_status)
        if spec.tool_status_after_idle:
            late += (update,)
        else:
            out += broadcast(agent, epochs, update)
    how = spec.failure_report if reason == "error" else "idle_error"
    # What the ending report said: the stop reason, "" for an idle without one, None for no idle.
    reported = av.ending_report(how, reason, spec)
    if agent.last_stop == "error" and reason != "error" and error is None and spec.stale_error:
        error = AUTH_REQUIRED  # the prose rule forgotten: the last failure's error is still set
    agent = agent._replace(work=None, fg="idle", last_stop=av.kept_stop(how, reason, spec),
                           late=agent.late + late)
    if detached:
        agent = agent._replace(background=agent.background + tuple((t, False) for t in detached), bg_reported=True)
    detail = error if error is not None else AUTH_REQUIRED
    if how == "idle_error":
        out += broadcast(agent, epochs, StateUpdate("idle", reason, error), spec)
    elif how == "failed_state":
        out += broadcast(agent, epochs, av.failed_update(detail, spec), spec)
    elif how == "error_update":
        out += broadcast(agent, epochs, UnknownUpdate("error", canonical_json({"sessionUpdate": "error", "error": {
            "code": detail.code, "message": detail.message}})))
        out += broadcast(agent, epochs, av.idle_after_error_update(spec), spec)
    elif how == "error_notice":
        out += broadcast(agent, epochs, Notice("error", detail.message))
        out += broadcast(agent, epochs, StateUpdate("idle"), spec)
    if spec.respond_at == "end_of_turn":
        agent, answered = _answer_at_end(agent, work, reason, detail)
        out += answered
    if agent.closing:
        agent, closed = finish_closes(agent)
        out += closed
    out.append(ev.WorkEnd(reason, reported, (detail.code, detail.message) if reason == "error" else (),
                          tuple(detached)))
    return agent, out


def _answer_at_end(agent: Agent, work: Work, reason: str, error):
    """v1: the prompts of the ended work are answered now, with the stop reason or the error."""
    out = []
    for i in reversed(range(len(agent.reqs))):
        req = agent.reqs[i]
        if req.inserted and not req.answered and req.mid in work.mids:
            msg = ErrorResponse(req.rid, error) if reason == "error" else PromptResultV1(req.rid, reason)
            out.append(send((req.client, req.epoch), msg))
            out.append(ev.HeldResponse(req.token))
            agent = settle(agent, i, req._replace(answered=True))
    return agent, out


def send_late(agent: Agent, epochs) -> tuple[Agent, list]:
    """Send the updates of ended work kept back by a mutant (after the idle: breaks S6)."""
    out = []
    for update in agent.late:
        out += broadcast(agent, epochs, update)
    return agent._replace(late=()), out


# -- background work ------------------------------------------------------------


def background_step(agent: Agent, spec: Spec, epochs) -> tuple[Agent, list]:
    """G1/G4/S11: background work's next step: a listed call's final status (it changes no state, S11),
    then, once every listed call is final, a ``background: []`` snapshot of the current state.

    The ``background-dropped-unfinished`` mutant sends the snapshot that drops a call before its final
    status, which it sends afterwards (breaks G4).
    """
    running = [t for t, final in agent.background if not final]
    if running and spec.background_final_first:
        tid = running[0]
        agent = agent._replace(background=tuple((t, final or t == tid) for t, final in agent.background))
        return agent, broadcast(agent, epochs, ToolCallUpdate(tid, "completed"))
    late = tuple(ToolCallUpdate(t, "completed") for t in running)
    agent = agent._replace(background=(), late=agent.late + late)
    return agent, broadcast(agent, epochs, StateUpdate(agent.fg), spec)
