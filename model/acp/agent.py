"""The agent side of one ACP v2 session: an adapter in front of a runtime.

The adapter keeps a :class:`~model.state.Req` per received ``session/prompt``
and forwards the input to the runtime under a private per-submission token;
it answers only when the runtime's insertion event for that token arrives
(RFD "Correlate prompts...": an ID assigned in advance is not evidence of
insertion, P7).  Insertion, the ``user_message`` report and the response are
separate steps, so every order the RFD allows (U2) is explored.  Locally
handled commands are inserted by the adapter itself as live-only user
messages (P10, P11).

Beyond that the agent does what the RFD leaves open, each behaviour behind
a :class:`~.spec.Spec` switch whose default is the RFD's reading: it may
insert a prompt while work runs (the prompt joins that work), assign an ID
before insertion (and retire it if the prompt is rejected), report
``running`` before insertion (a foreground hook, S4) and start work on its
own (S17, :mod:`.agent_work`).

Every function is pure: ``(agent, ...) -> (agent', outputs)`` where outputs
are :mod:`model.events` values; ``Send`` values name a connection and the
caller routes them onto the network.  Foreground work lives in
:mod:`.agent_work`, resume and replay in :mod:`.agent_resume`.
"""

from __future__ import annotations

from . import agent_variants as av
from . import events as ev
from .extension import agent_decision
from .agent_common import (  # noqa: F401 - re-exported: the agent's public face
    AUTH_REQUIRED, INTERNAL_ERROR, INVALID_PARAMS, REQUEST_CANCELLED, RESOURCE_NOT_FOUND, Options, broadcast, fresh_id,
    is_command, background_due, closed_on, finish_closes, native_id, report_due, reported_drop, retire, send, settle, stop_background,
)
from .agent_resume import resume, resume_step  # noqa: F401 - re-exported
from .agent_work import (  # noqa: F401 - re-exported
    STOP_REASONS, WORK_STEPS, ask, background_step, resume_after_permission, send_late, start_work, submitter, tool_id, work_step, work_steps,
)
from .spec import Spec
from .state import SESSION, Agent, Entry, Req, replace_at
from acplab.model.wire import (
    CancelRequest,
    ErrorResponse,
    Notice,
    UnknownUpdate,
    canonical_json,
    PermissionResult,
    Prompt,
    PromptResult,
    PromptResultV1,
    Update,
    UserMessage,
    UserMessageChunk,
)


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
    if kind in ("resume", "load"):
        return resume(agent, client, epoch, msg, spec, opts, epochs)
    if kind == "permission_result":
        return _permission_answer(agent, msg, epochs, spec)
    if kind == "close":
        return _close_session(agent, client, epoch, msg.rid, spec, epochs)
    return agent, []


def _receive_prompt(agent: Agent, client, epoch, msg: Prompt, spec: Spec):
    req = Req(client, epoch, msg.rid, msg.content, prompt_id=msg.prompt_id)
    out = []
    if closed_on(agent, client, epoch):
        # C14/E1: a prompt that reaches the agent after its own connection's session/close (sent before it, on a
        # channel that reorders) is for a session closed there: -32002, nothing inserted.  Inserted, it could
        # never be reported live on that connection (U1), which gets nothing more for the session.  The RFD is
        # silent on such a prompt: a choice, and a question for the RFD.
        return agent, [ev.Reject(req.token, RESOURCE_NOT_FOUND.code), send((client, epoch),
                                                                          ErrorResponse(msg.rid, RESOURCE_NOT_FOUND))]
    if av.duplicate_chosen_id(agent, msg.prompt_id, spec):
        return agent, [ev.Reject(req.token, av.DUPLICATE_ID.code), av.reject_duplicate((client, epoch), msg.rid)]
    decided = (agent_decision(agent, client, epoch, msg, spec, lambda rid, mid: _result(spec, rid, mid))
               if spec.extension else None)  # a spec file's own mechanism (.extension)
    if decided is not None:
        return decided
    if spec.dedupe_retries:
        first = next((r for r in agent.reqs if (r.client, r.epoch) == (client, epoch) and r.inserted
                      and r.content == msg.content), None)
        if first is not None:  # the mutant: a retry answered with the first message's ID, nothing inserted
            return agent, [send((client, epoch), _result(spec, msg.rid, first.mid))]
    if spec.respond_at == "receipt":
        # Non-conforming: answer on an ID minted in advance (X03; breaks P3).
        agent, mid = fresh_id(agent, spec)
        req = req._replace(mid=mid, answered=True)
        out.append(send((client, epoch), _result(spec, msg.rid, mid)))
    return agent._replace(reqs=agent.reqs + (req,)), out


def _result(spec: Spec, rid, mid, stop: str = "end_turn"):
    """The success response the spec defines (P4 / the v2 draft's `{}` / v1's stopReason)."""
    if spec.response == "stop_reason":
        return PromptResultV1(rid, stop)
    return PromptResult(rid, mid if spec.response == "message_id" else None)


def _cancel_session(agent: Agent, spec: Spec, epochs):
    """C4/C7: mark active work cancelled; withdraw held prompts with -32800 (their IDs retire)."""
    out: list = [ev.CancelSeen(agent.work is not None and not agent.work.cancelled)]
    work = agent.work
    if work is not None and not work.cancelled:
        # C11: stop waiting for every permission answer and cancel each request (the ``cancel-leaves-a-permission``
        # mutant cancels only the first and still waits for the others, whose answers it then honours)
        cancelled = work.perms if spec.cancel_stops_every_permission else work.perms[:1]
        for _k, rid, asked in cancelled:
            if asked is not None:
                out.append(send((asked, epochs[asked]), CancelRequest(rid)))
        work = work._replace(perms=work.perms[len(cancelled):])
        agent = agent._replace(work=work._replace(cancelled=True))
    if spec.cancel_withdraws_held:
        kept = []
        for req in agent.reqs:
            if req.inserted or (req.answered and not spec.rejection_signal):
                kept.append(req)
            elif req.answered:  # two-phase: a received prompt is withdrawn with the rejection signal
                agent = retire(agent, req._replace(answered=False))
                out += [ev.Reject(req.token, REQUEST_CANCELLED.code), _rejection_signal(req, REQUEST_CANCELLED)]
            else:
                agent = retire(agent, req)
                out.append(ev.Reject(req.token, REQUEST_CANCELLED.code))
                out.append(av.notification_rejected(req, REQUEST_CANCELLED, spec)
                           or send((req.client, req.epoch), ErrorResponse(req.rid, REQUEST_CANCELLED)))
        agent = agent._replace(reqs=tuple(kept))
    return agent, out


def _close_session(agent: Agent, client: int, epoch: int, rid, spec: Spec, epochs):
    """C14/G6: ``session/close`` behaves like ``session/cancel`` and also stops background work; the response
    comes after the cancelled idle of active work (the ``close-answered-early`` mutant answers at once), and
    then the connection is detached.  Which connections a close detaches the RFD leaves open: here only the
    closing one, the session goes on for the others."""
    agent, out = _cancel_session(agent, spec, epochs)
    agent, stopped = stop_background(agent, epochs)
    agent = agent._replace(resumes=tuple(r for r in agent.resumes if r.client != client),
                           closing=agent.closing + ((client, epoch, rid),))
    if agent.work is None or not spec.close_waits_for_idle:
        agent, closed = finish_closes(agent)
        return agent, out + stopped + closed
    return agent, out + stopped


def _rejection_signal(req, error) -> ev.Send:
    """The two-phase design's later rejection: a ``prompt_rejected`` update naming the reserved ID,
    to the submitting connection (the only one that knows the ID)."""
    body = {"sessionUpdate": "prompt_rejected", "messageId": req.mid, "error": {"code": error.code,
                                                                                "message": error.message}}
    return send((req.client, req.epoch), Update(SESSION, UnknownUpdate("prompt_rejected", canonical_json(body))))


def _cancel_request(agent: Agent, conn, rid, spec: Spec):
    """C1/C2/C3: -32800 only before insertion; matched against the sender's own requests.

    The ``cancel-request-by-id-only`` mutant matches the id on any connection.
    """
    for i, req in enumerate(agent.reqs):
        mine = (req.client, req.epoch) == conn or spec.cancel_request_match == "id_only"
        if not mine or req.rid != rid or req.answered:
            continue
        if not req.inserted:
            agent = _withdraw_hook(retire(agent._replace(reqs=agent.reqs[:i] + agent.reqs[i + 1 :]), req), req, spec)
            out = [ev.Reject(req.token, REQUEST_CANCELLED.code, conn),
                   send((req.client, req.epoch), ErrorResponse(rid, REQUEST_CANCELLED))]
            return agent, out
        if spec.cancel_request_after_insertion == "error":
            out = [send((req.client, req.epoch), ErrorResponse(rid, REQUEST_CANCELLED))]
            return settle(agent, i, req._replace(answered=True, cancel_asked=True)), out
        return settle(agent, i, req._replace(cancel_asked=True)), []
    return agent, []


def _withdraw_hook(agent: Agent, req, spec: Spec) -> Agent:
    """C1/C7/S2: a hook running for a prompt withdrawn by ``$/cancel_request`` is cancelled and ends with
    idle ``cancelled``, as conformant agents do; the ``hook-left-running`` mutant leaves it waiting for ever."""
    work = agent.work
    if work is None or work.origin != "hook" or work.hook != req.token or not spec.withdrawn_hook_cancelled:
        return agent
    return agent._replace(work=work._replace(hook=None, cancelled=True))


def _permission_answer(agent: Agent, msg: PermissionResult, epochs, spec: Spec):
    """S9: an approval resumes the work (running); anything else is not approval (C16)."""
    work = agent.work
    k = next((k for k, rid, _c in work.perms if rid == msg.rid), None) if work is not None else None
    if k is None:
        return agent, []  # S10: an answer for work that already ended is ignored
    approved = msg.outcome == "selected" and msg.option_id == "allow"
    return resume_after_permission(agent, work, k, approved, epochs, spec)


def connection_lost(agent: Agent, client: int, epochs, spec: Spec) -> tuple[Agent, list]:
    """E10: the transport closed.  A permission asked on it counts as not approved (C11's rule
    for a cancel), or with ``permission_on_disconnect="reask"`` is asked again: of another
    attached client now, else of the next client to resume (the RFD is silent)."""
    agent = agent._replace(attached=replace_at(agent.attached, client, False),
                           resumes=tuple(r for r in agent.resumes if r.client != client),
                           closing=tuple(x for x in agent.closing if x[0] != client))
    work = agent.work
    mine = [k for k, _rid, asked in work.perms if asked == client] if work is not None else []
    if not mine:
        return agent, []
    if spec.permission_on_disconnect != "reask":
        out: list = []
        for k in mine:
            agent, more = resume_after_permission(agent, agent.work, k, False, epochs, spec)
            out += more
        return agent, out
    agent = agent._replace(work=work._replace(perms=tuple((k, rid, None if asked == client else asked)
                                                          for k, rid, asked in work.perms)))
    other = next((c for c, on in enumerate(agent.attached) if on), None)
    return ask(agent, other, epochs) if other is not None else (agent, [])


# -- insertion, echo and response ------------------------------------------------------------


def next_held(agent: Agent) -> int | None:
    """Index of the oldest received prompt not yet inserted (P17: arrival order) that the runtime still holds."""
    for i, req in enumerate(agent.reqs):
        if not req.inserted and not req.swallowed:
            return i
    return None


def notice(spec: Spec) -> Notice:
    """N5: an advisory notice with a severity and a non-empty title (the ``untitled-notice`` mutant's is empty)."""
    return Notice("info", "heads up" if spec.notice_titled else "")


def swallow(agent: Agent, i: int) -> tuple[Agent, list]:
    """The runtime takes held prompt ``i`` and will never report its insertion (``runtime_swallows``): the
    adapter keeps the request pending and never answers it early (P3, P7)."""
    return agent._replace(reqs=replace_at(agent.reqs, i, agent.reqs[i]._replace(swallowed=True))), []


def insertable(agent: Agent, spec: Spec, busy: bool, commands: bool = False) -> int | None:
    """The held prompt that may be inserted now (the oldest, P17), or None.

    With no work running; into the hook running for it (S4); or, when
    ``busy`` is explored and the spec allows it, into running work that is
    not being cancelled (the prompt then contributes to it).  Commands are
    never inserted into running work, nor prompts into a command's.
    """
    i = next_held(agent)
    if i is None:
        return None
    work, req = agent.work, agent.reqs[i]
    if work is None:
        return i
    if work.cancelled:
        return None
    if work.origin == "hook":
        return i if work.hook == req.token else None
    if busy and spec.insert_while_busy and not work.command and not is_command(req.content):
        return i
    if commands and spec.commands_while_busy and not work.command and is_command(req.content):
        return i  # the adapter handles it on its own while the runtime works (P10)
    return None


def insert(agent: Agent, i: int, spec: Spec, opts: Options, epochs) -> tuple[Agent, list]:
    """The runtime (or, for a command, the adapter) inserts held prompt ``i``; work starts or it joins."""
    req = agent.reqs[i]
    command = is_command(req.content)
    if req.mid is not None:
        mid = req.mid  # assigned in advance (P7 allows it; it was not evidence of insertion)
    elif spec.message_ids == "jsonrpc_id":
        mid = f"r{req.rid}"  # the request id as the message's identity (a rejected alternative)
    elif spec.message_ids == "client_chosen" and req.prompt_id is not None:
        mid = req.prompt_id  # the client picked the canonical ID (a rejected alternative)
    elif opts.native_ids and not command:
        agent, mid = native_id(agent, spec)  # the runtime's own ID; commands keep adapter-owned ones
    else:
        agent, mid = fresh_id(agent, spec)
    retained = opts.retain_commands if command else opts.retain
    entry = Entry(mid, "user", req.content, retained, "command" if command else "prompt", req.token, req.prompt_id)
    agent = agent._replace(history=agent.history + (entry,))
    # A fire-and-forget prompt (respond_at "never") has nothing to answer.
    done = req._replace(mid=mid, inserted=True, echoed=not spec.echo,
                        answered=req.answered or spec.respond_at == "never")
    agent = settle(agent, i, done)
    out: list = [ev.Insert(mid, req.token, entry.origin, retained)]
    if command:
        out.append(ev.Execute(mid))
    work = agent.work
    if work is None:
        agent, started = start_work(agent, (mid,), command, epochs, spec)
        return agent, out + started
    if command:
        # P10/P11: handled by the adapter inside the running work (its running ... idle), and answered at once,
        # while that work still runs: it waits for nothing (the RFD is silent on a command inserted while busy)
        agent = agent._replace(work=work._replace(mids=work.mids + (mid,)))
        out.append(ev.Join(mid))
        if spec.respond_at == "insertion" and spec.answers:
            agent, answered = answer(agent, i, spec)
            out += answered
        return agent, out
    # It contributes to the work in progress (or the hook that ran for it, S4): no new running.
    joined = work._replace(mids=work.mids + (mid,), origin="prompt" if work.origin == "hook" else work.origin,
                           hook=None)
    return agent._replace(work=joined), out + [ev.Join(mid)]


def assign_id(agent: Agent, i: int, spec: Spec) -> tuple[Agent, list]:
    """P7: the adapter assigns held prompt ``i`` an ID before insertion, and answers nothing yet."""
    agent, mid = fresh_id(agent, spec)
    req = agent.reqs[i]
    return agent._replace(reqs=replace_at(agent.reqs, i, req._replace(mid=mid))), [ev.AssignId(mid, req.token)]


def hook(agent: Agent, i: int, spec: Spec, epochs) -> tuple[Agent, list]:
    """S4: foreground work (a hook) for held prompt ``i`` reports ``running`` before insertion."""
    return start_work(agent, (), False, epochs, spec, origin="hook", hook=agent.reqs[i].token)


def start_own_work(agent: Agent, spec: Spec, epochs) -> tuple[Agent, list]:
    """S17: the agent starts foreground work on its own: no prompt, the same running ... idle."""
    return start_work(agent, (), False, epochs, spec, origin="agent")


def forget(agent: Agent, i: int) -> tuple[Agent, list]:
    """R4: the retention policy drops retained history entry ``i`` at some time after its insertion; its ID
    stays issued (P5) and later replays leave it out.  The RFD sets no policy: any entry, any time."""
    entry = agent.history[i]
    agent = agent._replace(history=replace_at(agent.history, i, entry._replace(retained=False)))
    return agent, [ev.Forget(entry.mid)]


def import_message(agent: Agent, spec: Spec, epochs) -> tuple[Agent, list]:
    """U14: a message imported from elsewhere: an adapter-owned ID, reported live, and no prompt response."""
    agent, mid = fresh_id(agent, spec)
    agent = agent._replace(history=agent.history + (Entry(mid, "user", ("imported",), True, "imported"),))
    out = [ev.Insert(mid, None, "imported", True)]
    return agent, out + broadcast(agent, epochs, UserMessage(mid, ("imported",)))


def reject(agent: Agent, i: int, spec: Spec) -> tuple[Agent, list]:
    """A failure before insertion: a JSON-RPC error, nothing inserted (E1); an ID assigned in
    advance retires.  A hook running for the prompt goes on and ends by itself (S4, E11)."""
    req = agent.reqs[i]
    agent = retire(agent._replace(reqs=agent.reqs[:i] + agent.reqs[i + 1 :]), req)
    work = agent.work
    if work is not None and work.origin == "hook" and work.hook == req.token:
        agent = agent._replace(work=work._replace(hook=None, failed=spec.hook_rejection_stop == "error"))
    if req.answered and spec.rejection_signal:
        agent = retire(agent, req._replace(answered=False))
        return agent, [ev.Reject(req.token, INTERNAL_ERROR.code), _rejection_signal(req, INTERNAL_ERROR)]
    notified = av.notification_rejected(req, INTERNAL_ERROR, spec)
    if notified is not None:
        return agent, [ev.Reject(req.token, INTERNAL_ERROR.code), notified]
    if req.answered or spec.respond_at == "never":
        return agent, [ev.Reject(req.token, 0)]  # already (wrongly) answered: the input just vanishes
    return agent, [ev.Reject(req.token, INTERNAL_ERROR.code), send((req.client, req.epoch), ErrorResponse(req.rid, INTERNAL_ERROR))]


def echo_index(agent: Agent, spec: Spec) -> list[int]:
    """Requests whose live report may go out now: in insertion order when placement matters."""
    due = [i for i, r in enumerate(agent.reqs) if r.inserted and not r.echoed]
    if spec.echo_before_work and due:
        first = min(due, key=lambda i: _position(agent, agent.reqs[i].mid))
        return [first]
    return due


def _position(agent: Agent, mid) -> int:
    for n, e in enumerate(agent.history):
        if e.mid == mid:
            return n
    return len(agent.history)


def echo(agent: Agent, i: int, spec: Spec, opts: Options, epochs, chunked: bool | None = None) -> tuple[Agent, list]:
    """U1/U3: report the inserted message live, under its ID, to every attached client; as chunks or one
    full-content update (U13: ``chunked`` chooses per message, else the bounds' ``chunks``)."""
    req = agent.reqs[i]
    chunks = opts.chunks if chunked is None else chunked
    if chunks and opts.mixed_shapes:  # the shape it went out in decides its replay's
        n = _position(agent, req.mid)
        agent = agent._replace(history=replace_at(agent.history, n, agent.history[n]._replace(chunked=True)))
    mid = req.mid if spec.report_id == "inserted" else "x" + req.mid[1:]
    update = UserMessage(mid, req.content, req.prompt_id)
    updates = [UserMessageChunk(mid, block) for block in req.content] if chunks else [update]
    if chunks and req.prompt_id is not None:
        # A chunk's _meta is its own (U8): the token goes on a metadata-only user_message first (U6).
        updates = [UserMessage(mid, None, req.prompt_id)] + updates
    out = []
    for c, on in enumerate(agent.attached):
        if on and c not in req.replayed_to:  # a connection that got it by replay has it already
            out += [send((c, epochs[c]), Update(SESSION, u)) for u in updates]
    return settle(agent, i, req._replace(echoed=True)), out


def answer(agent: Agent, i: int, spec: Spec) -> tuple[Agent, list]:
    """P2/P4: the success response, with the inserted message's ID."""
    req = agent.reqs[i]
    result = _result(spec, req.rid, req.mid)
    return settle(agent, i, req._replace(answered=True)), [send((req.client, req.epoch), result)]


def restart(agent: Agent, spec: Spec) -> tuple[Agent, list]:
    """The agent process restarts: connections close, live-only history and work are lost.

    Retained history keeps its IDs (R5).  New IDs must never repeat one given
    before (P5), so the ID counter (and the retired IDs) survive, as a durable
    or random ID source would; the ``restart-resets-ids`` mutant starts again.
    """
    history = tuple(e for e in agent.history if e.retained)
    keep = spec.ids_survive_restart
    agent = Agent(history=history, next_id=agent.next_id if keep else 1, next_rid=agent.next_rid,
                  native_next=agent.native_next,
                  attached=(False,) * len(agent.attached), issued=agent.issued if keep else (),
                  withdrawn=agent.withdrawn if keep else ())
    return agent, [ev.Restart()]
