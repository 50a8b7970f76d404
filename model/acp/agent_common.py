"""What every part of the agent side shares: its options, error objects, sending and message IDs.

Pure helpers over :class:`~.state.Agent` (see :mod:`.agent` for the adapter
and :mod:`.agent_work` for foreground work).
"""

from __future__ import annotations

from typing import NamedTuple

from . import events as ev
from .spec import Spec
from .state import SESSION, Agent, Req, replace_at
from acplab.model.wire import ErrorObject, Update

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
    slow: bool = False  # work may go on for any number of silent steps (fairness makes it end)


def is_command(content: tuple[str, ...]) -> bool:
    return bool(content) and content[0].startswith("/")


def send(conn, msg) -> ev.Send:
    return ev.Send(conn, ev.A2C, msg)


def broadcast(agent: Agent, epochs: tuple[int, ...], update, spec: Spec | None = None) -> list:
    """A session update to every attached connection (fan-out to all clients).

    A spec without state_update (v1) sends no state reports.
    """
    if spec is not None and not spec.state_updates and update.kind == "state_update":
        return []
    msg = Update(SESSION, update)
    return [send((c, epochs[c]), msg) for c, on in enumerate(agent.attached) if on]


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
