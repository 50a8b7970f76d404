"""What every part of the agent side shares: its options, error objects, sending and message IDs.

Pure helpers over :class:`~.state.Agent` (see :mod:`.agent` for the adapter
and :mod:`.agent_work` for foreground work).
"""

from __future__ import annotations

from typing import NamedTuple

from . import events as ev
from .spec import Spec
from .state import SESSION, Agent, Req, replace_at
from acplab.model.wire import CloseResult, ErrorObject, ToolCallUpdate, Update

REQUEST_CANCELLED = ErrorObject(-32800, "Request cancelled")
INTERNAL_ERROR = ErrorObject(-32603, "Internal error")
AUTH_REQUIRED = ErrorObject(-32000, "Authentication required")
INVALID_PARAMS = ErrorObject(-32602, "Invalid params")
RESOURCE_NOT_FOUND = ErrorObject(-32002, "Resource not found")


class Options(NamedTuple):
    """The bounds the agent's behaviour depends on."""

    chunks: bool = False  # user messages reported as user_message_chunk (U13)
    retain: bool = True  # prompts and agent output kept for replay (R4)
    retain_commands: bool = False
    tools: bool = False
    permission: bool = False
    output: bool = False  # the work streams an agent message chunk before it ends
    slow: bool = False  # work may go on for any number of silent steps (fairness makes it end)
    interleaved_resume: bool = False  # a resume is served in steps, live work going on between them
    background: bool = False  # a running tool call may be detached into background work at the idle (G1, S11)
    tool_calls: int = 1  # tool calls a turn makes in parallel
    native_ids: bool = False  # the runtime names the prompts it inserts with its own IDs
    mixed_shapes: bool = False  # each live report's shape chosen on its own; replay in the other shape
    background_overlap: bool = False  # background work may report while a later turn's foreground work runs


def is_command(content: tuple[str, ...]) -> bool:
    return bool(content) and content[0].startswith("/")


def send(conn, msg) -> ev.Send:
    return ev.Send(conn, ev.A2C, msg)


def broadcast(agent: Agent, epochs: tuple[int, ...], update, spec: Spec | None = None) -> list:
    """A session update to every attached connection (fan-out to all clients).

    A spec without state_update (v1) sends no state reports.  Once a ``background`` list went out, every
    state update carries the current one (G2).
    """
    if update.kind == "state_update":
        if spec is not None and not spec.state_updates:
            return []
        if agent.bg_reported and update.background is None:
            update = update._replace(background=listed(agent))
    msg = Update(SESSION, update)
    return [send((c, epochs[c]), msg) for c, on in enumerate(agent.attached) if on]


def listed(agent: Agent) -> tuple[str, ...]:
    """The ``background`` snapshot: every item still running (G1: complete); one whose final status went out is
    dropped by the next snapshot (G4)."""
    return tuple(t for t, final in agent.background if not final)


def background_due(agent: Agent, opts: Options) -> bool:
    """Background work has a step to take now: it runs independently of the foreground (G1), but without
    ``background_overlap`` it waits for foreground work's idle (a bound on interleavings, not a rule)."""
    return bool(agent.background) and (opts.background_overlap or agent.work is None)


def reported_drop(agent: Agent, events) -> Agent:
    """G1/G4: a state update broadcast after a background call's final status lists the background without it:
    that update is the snapshot that drops it, so the call leaves ``agent.background`` and no second
    ``background: []`` snapshot is owed (it would only repeat the same snapshot)."""
    if not any(final for _t, final in agent.background):
        return agent
    told = {e.conn[0] for e in events if type(e) is ev.Send and e.msg.kind == "update"
            and e.msg.update.kind == "state_update" and e.msg.update.background is not None}
    if not told or any(on and c not in told for c, on in enumerate(agent.attached)):
        return agent  # some attached connection has not seen the drop yet
    return agent._replace(background=tuple(item for item in agent.background if not item[1]))


def closed_on(agent: Agent, client: int, epoch: int) -> bool:
    """The connection ``(client, epoch)`` closed the session (C14): its close is answered (the connection is
    detached) or waits for the cancelled idle."""
    detached = client < len(agent.attached) and not agent.attached[client]
    return detached or any(x[:2] == (client, epoch) for x in agent.closing)


def finish_closes(agent: Agent) -> tuple[Agent, list]:
    """C14: answer every ``session/close`` that waited for the work's idle and detach its connection: nothing
    more is sent for the session there (prompt responses excepted)."""
    out = []
    attached = agent.attached
    for client, epoch, rid in agent.closing:
        out.append(send((client, epoch), CloseResult(rid)))
        attached = replace_at(attached, client, False)
    return agent._replace(closing=(), attached=attached), out


def stop_background(agent: Agent, epochs) -> tuple[Agent, list]:
    """C14/G4: ``session/close`` stops background work: each running call's final ``cancelled`` status."""
    out = []
    for tid in listed(agent):
        out += broadcast(agent, epochs, ToolCallUpdate(tid, "cancelled"))
    return agent._replace(background=()), out


def native_id(agent: Agent, spec: Spec) -> tuple[Agent, str]:
    """P5/P8: the runtime's own ID for a prompt it inserted, from its own counter.  The adapter keeps these apart
    from the IDs it owns (commands) by a namespace of their own; the ``native-ids-collide`` mutant does not, and
    both counters count from 1 in one format."""
    mid = f"{'n' if spec.native_ids_namespaced else 'm'}{agent.native_next}"
    return agent._replace(native_next=agent.native_next + 1, issued=agent.issued + (mid,)), mid


def fresh_id(agent: Agent, spec: Spec, prefix: str = "m") -> tuple[Agent, str]:
    """A new message ID (P5).

    The ``reused-id`` mutant hands out the last one again; the
    ``id-leaked-after-rejection`` mutant first hands out an ID it had assigned
    to a submission that was then rejected.
    """
    if spec.reuse_ids and prefix == "m" and agent.issued:
        return agent, agent.issued[-1]
    if spec.withdrawn_ids == "recycled" and prefix == "m" and agent.withdrawn:
        return agent._replace(withdrawn=agent.withdrawn[1:]), agent.withdrawn[0]
    mid = f"{prefix}{agent.next_id}"
    return agent._replace(next_id=agent.next_id + 1, issued=agent.issued + (mid,)), mid


def settle(agent: Agent, i: int, req: Req) -> Agent:
    """Store the updated request; forget it once answered and (if inserted) echoed."""
    done = req.answered and (req.echoed or not req.inserted)
    reqs = agent.reqs[:i] + agent.reqs[i + 1 :] if done else replace_at(agent.reqs, i, req)
    return agent._replace(reqs=reqs)


def retire(agent: Agent, req: Req) -> Agent:
    """A submission leaves without insertion: an ID assigned to it in advance is retired (P5, P16)."""
    if req.mid is not None and not req.inserted and not req.answered:
        return agent._replace(withdrawn=agent.withdrawn + (req.mid,))
    return agent


def report_due(agent: Agent) -> bool:
    """Some inserted message still awaits its live user_message report."""
    return any(r.inserted and not r.echoed for r in agent.reqs)
