"""Resume and replay on the agent side: attach, replay retained history, snapshot, respond.

R1/R3/S13: a ``session/resume`` attaches the connection, replays retained
history if asked (each message under its ID, chunked user messages reset
first: R5, R7, R13), sends the current-state snapshot (carrying how the last
work ended, with its error: E13, S14) and then the response.  Pure, as in
:mod:`.agent`.
"""

from __future__ import annotations

from . import agent_variants as av
from . import events as ev
from .agent_common import AUTH_REQUIRED, INVALID_PARAMS, Options, fresh_id, listed, send
from .agent_work import ask, start_work
from .spec import Spec
from .state import SESSION, Agent, Resuming, replace_at
from acplab.model.wire import AgentMessage, ErrorResponse, LoadResult, Resume, ResumeResult, StateUpdate, ToolCallUpdate, Update, UserMessage, \
    UserMessageChunk


def resume(agent: Agent, client, epoch, msg: Resume, spec: Spec, opts: Options, epochs):
    """R1/R3/S13: attach, replay retained history if asked (``session/load``: always), snapshot the state, then
    respond.

    With ``opts.interleaved_resume`` the connection is attached now and the rest is served by
    :func:`resume_step`, one step at a time, live work going on between the steps; otherwise all in this step.
    """
    conn = (client, epoch)
    load = msg.kind == "load"  # session/load: always the whole history, as replayFrom start
    if not load and msg.replay_from not in (None, "start"):
        return agent, [send(conn, ErrorResponse(msg.rid, INVALID_PARAMS))]  # R2
    agent = agent._replace(attached=replace_at(agent.attached, client, True))
    pending = Resuming(client, epoch, msg.rid, load or msg.replay_from == "start" or spec.replay_unasked,
                       len(agent.history), load=load)
    if opts.interleaved_resume:
        return agent._replace(resumes=agent.resumes + (pending,)), []
    out: list = []
    rerun: list = []
    while pending is not None:
        agent, pending, more, again = _serve(agent, pending, spec, opts, epochs)
        out += more
        rerun += again
    return _after_response(agent, client, rerun, spec, epochs, out)


def resume_step(agent: Agent, k: int, spec: Spec, opts: Options, epochs):
    """One step of pending resume ``k``: the next retained entry, else the snapshot, else the response."""
    pending = agent.resumes[k]
    rest = agent.resumes[:k] + agent.resumes[k + 1:]
    agent, served, out, rerun = _serve(agent._replace(resumes=rest), pending, spec, opts, epochs)
    if served is not None:
        return agent._replace(resumes=rest[:k] + (served,) + rest[k:]), out
    return _after_response(agent, pending.client, rerun, spec, epochs, out)


def _serve(agent: Agent, r: Resuming, spec: Spec, opts: Options, epochs):
    """Serve one step of resume ``r``: ``(agent, r' or None once answered, outputs, commands to rerun)``."""
    conn = (r.client, r.epoch)
    if r.replay:
        for i in range(r.cursor, r.end):
            if agent.history[i].retained:
                agent, out, rerun = _replay_entry(agent, conn, agent.history[i], spec, opts, r.load)
                return agent, r._replace(cursor=i + 1), out, rerun
        r = r._replace(cursor=r.end)
    if not r.snapped and spec.state_sync_on_resume and spec.state_updates:
        # G3: a background call the snapshot lists is announced on this connection first
        known = [send(conn, Update(SESSION, ToolCallUpdate(t, "in_progress"))) for t in listed(agent)]
        return agent, r._replace(snapped=True), known + [send(conn, Update(SESSION, _snapshot(agent, spec)))], []
    return agent, None, [send(conn, LoadResult(r.rid) if r.load else ResumeResult(r.rid))], []


def _after_response(agent: Agent, client: int, rerun, spec: Spec, epochs, out):
    """After the resume response: a permission whose asker left is asked again here (``reask``); the
    ``replay-reexecutes-command`` mutant runs a replayed command again (breaks R9)."""
    work = agent.work
    if work is not None and any(asked is None for _k, _rid, asked in work.perms):
        agent, asked = ask(agent, client, epochs)
        out += asked
    if rerun and agent.work is None:
        out.append(ev.Execute(rerun[0]))
        agent, started = start_work(agent, (rerun[0],), True, epochs, spec, replayed=True)
        out += started
    return agent, out


def _snapshot(agent: Agent, spec: Spec) -> StateUpdate:
    """S13/E13/G2: the current state; an idle carries how the last work ended, with its error; the
    background list once one went out (a design's own ``failed`` state: :func:`.agent_variants.failed_snapshot`)."""
    failed = av.failed_snapshot(agent, spec)
    if failed is not None:
        return failed
    background = listed(agent) if agent.bg_reported else None
    if agent.fg != "idle" or not spec.snapshot_outcome or agent.last_stop is None:
        return StateUpdate(agent.fg, background=background)
    error = AUTH_REQUIRED if agent.last_stop == "error" and spec.error_details else None
    return StateUpdate("idle", agent.last_stop, error, background)


def _replay_entry(agent: Agent, conn, entry, spec: Spec, opts: Options, load: bool = False):
    """R5/R7/R13: one retained message under its ID, in one shape; a chunked user message is reset first (for a
    ``session/load`` too, but in the ``load-replay-without-reset`` mutant).  With ``mixed_shapes`` a user message
    is replayed in the other shape than its live report (a choice that reaches both mixed orders; the RFD lets
    each report choose)."""
    out: list = []
    rerun = []
    mid = _replay_id(agent, entry) if spec.replay_renumbers else entry.mid
    if not spec.replay_keeps_ids:
        agent, mid = fresh_id(agent, spec, entry.mid[0])
    out.append(ev.Replayed(entry.mid, mid))
    if entry.role == "agent":
        out.append(send(conn, Update(SESSION, AgentMessage(mid, entry.content))))
        return agent, out, rerun
    chunks = not entry.chunked if opts.mixed_shapes else opts.chunks  # per message: the other shape than live
    if chunks:
        if spec.replay_reset and (spec.load_replay_reset or not load):  # with the entry's token, if it has one
            out.append(send(conn, Update(SESSION, UserMessage(mid, (), entry.token))))
        out += [send(conn, Update(SESSION, UserMessageChunk(mid, b))) for b in entry.content]
    else:
        out.append(send(conn, Update(SESSION, UserMessage(mid, entry.content, entry.token))))
        if entry.chunked and not spec.replay_one_shape:  # the mutant re-streams the live chunks after it
            out += [send(conn, Update(SESSION, UserMessageChunk(mid, b))) for b in entry.content]
    if entry.origin == "command" and spec.replay_reexecutes_commands:
        rerun.append(entry.mid)
    if not spec.echo_after_replay:
        agent = _mark_replayed(agent, entry.mid, conn[0])
    return agent, out, rerun


def _replay_id(agent: Agent, entry) -> str:
    """The replay-renumbered-after-forget mutant's name for ``entry``: the k-th retained entry gets the k-th
    ID of the whole history, a positional counter that a retention trim shifts."""
    retained = [e.mid for e in agent.history if e.retained]
    return agent.history[retained.index(entry.mid)].mid


def _mark_replayed(agent: Agent, mid: str, client: int) -> Agent:
    """The replay reported a message whose live report is still due: not again to this client."""
    for i, req in enumerate(agent.reqs):
        if req.mid == mid and req.inserted and not req.echoed and client not in req.replayed_to:
            return agent._replace(reqs=replace_at(agent.reqs, i, req._replace(replayed_to=req.replayed_to + (client,))))
    return agent
