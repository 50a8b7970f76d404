"""Resume and replay on the agent side: attach, replay retained history, snapshot, respond.

R1/R3/S13: a ``session/resume`` attaches the connection, replays retained
history if asked (each message under its ID, chunked user messages reset
first: R5, R7, R13), sends the current-state snapshot (carrying how the last
work ended, with its error: E13, S14) and then the response.  Pure, as in
:mod:`.agent`.
"""

from __future__ import annotations

from . import events as ev
from .agent_common import AUTH_REQUIRED, INVALID_PARAMS, Options, fresh_id, send
from .agent_work import ask, start_work
from .spec import Spec
from .state import SESSION, Agent, replace_at
from acplab.model.wire import AgentMessage, ErrorResponse, Resume, ResumeResult, StateUpdate, Update, UserMessage, \
    UserMessageChunk


def resume(agent: Agent, client, epoch, msg: Resume, spec: Spec, opts: Options, epochs):
    """R1/R3/S13: attach, replay retained history if asked, snapshot the state, then respond.

    With ``spec.permission_on_disconnect == "reask"`` a permission request
    whose asker left is asked again on the resumed connection (after the
    response; the snapshot already says ``requires_action``).
    """
    conn = (client, epoch)
    if msg.replay_from not in (None, "start"):
        return agent, [send(conn, ErrorResponse(msg.rid, INVALID_PARAMS))]  # R2
    agent = agent._replace(attached=replace_at(agent.attached, client, True))
    out: list = []
    rerun = []
    if msg.replay_from == "start":
        agent, out, rerun = _replay(agent, conn, spec, opts)
    if spec.state_sync_on_resume and spec.state_updates:
        out.append(send(conn, Update(SESSION, _snapshot(agent, spec))))
    out.append(send(conn, ResumeResult(msg.rid)))
    work = agent.work
    if work is not None and work.perm_rid is not None and work.perm_client is None:
        agent, asked = ask(agent, client, epochs)
        out += asked
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
    error = AUTH_REQUIRED if agent.last_stop == "error" and spec.error_details else None
    return StateUpdate("idle", agent.last_stop, error)


def _replay(agent: Agent, conn, spec: Spec, opts: Options):
    """R5/R7/R13: each retained message under its ID; chunked user messages reset first."""
    out: list = []
    rerun = []
    for entry in agent.history:
        if not entry.retained:
            continue
        mid = entry.mid
        if not spec.replay_keeps_ids:
            agent, mid = fresh_id(agent, spec, entry.mid[0])
        out.append(ev.Replayed(entry.mid, mid))
        if entry.role == "agent":
            out.append(send(conn, Update(SESSION, AgentMessage(mid, entry.content))))
            continue
        if opts.chunks:
            if spec.replay_reset:  # the reset carries the entry's correlation token, if it has one
                out.append(send(conn, Update(SESSION, UserMessage(mid, (), entry.token))))
            out += [send(conn, Update(SESSION, UserMessageChunk(mid, b))) for b in entry.content]
        else:
            out.append(send(conn, Update(SESSION, UserMessage(mid, entry.content, entry.token))))
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
