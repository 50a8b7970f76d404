"""Events: everything observable in a step, on the wire or inside the agent.

Wire events carry an abstract message from :mod:`model.wire`; a wire observer
(the trace checker) sees only those.  Internal events are what the model
knows and a wire observer does not: insertion, failure, a client binding a
submission to a message.  Every class ends with a ``kind`` tag so values of
different classes never compare equal.
"""

from __future__ import annotations

from typing import NamedTuple

from acplab.model.wire.capture import A2C, C2A  # noqa: F401 - the directions, named once


class Send(NamedTuple):
    """A message put on a connection's channel; ``lost`` if the connection was already down."""

    conn: tuple[int, int]
    dir: str
    msg: object
    lost: bool = False
    kind: str = "send"


class Deliver(NamedTuple):
    conn: tuple[int, int]
    dir: str
    msg: object
    kind: str = "deliver"


class Drop(NamedTuple):
    conn: tuple[int, int]
    dir: str
    msg: object
    kind: str = "drop"


class Cut(NamedTuple):
    """A connection is cut: both ends see it closed; messages in flight are lost."""

    conn: tuple[int, int]
    lost: tuple = ()
    kind: str = "cut"


class Connect(NamedTuple):
    conn: tuple[int, int]
    kind: str = "connect"


class Insert(NamedTuple):
    """The runtime (or the adapter, for a local command) inserted a user message."""

    mid: str
    sub: tuple[int, int, int] | None
    origin: str
    retained: bool
    kind: str = "insert"


class Reject(NamedTuple):
    """A prompt was rejected before insertion (nothing inserted); ``by``: the connection whose
    ``$/cancel_request`` withdrew it (None for a failure or a ``session/cancel``)."""

    sub: tuple[int, int, int]
    code: int
    by: tuple[int, int] | None = None
    kind: str = "reject"


class WorkStart(NamedTuple):
    """Foreground work started; ``origin`` "prompt", "command", "agent" (S17) or "hook" (S4)."""

    mids: tuple[str, ...]
    command: bool
    origin: str = "prompt"
    kind: str = "work_start"


class Join(NamedTuple):
    """A message inserted while work ran joins that work (it contributes to work in progress)."""

    mid: str
    kind: str = "join"


class AssignId(NamedTuple):
    """The adapter assigned ``mid`` to a submission before inserting it (not evidence of insertion, P7)."""

    mid: str
    sub: tuple[int, int, int]
    kind: str = "assign_id"


class Working(NamedTuple):
    """The runtime goes on working without reporting anything (a step that changes nothing)."""

    kind: str = "working"


class WorkEnd(NamedTuple):
    """Foreground work ended; ``reported`` is the idle's stop reason sent, None if none was sent."""

    reason: str
    reported: str | None
    #: the (code, message) of the agent's error when the work failed (sent or not), () otherwise
    error: tuple = ()
    background: tuple[str, ...] = ()  # the tool calls the idle listed as running on in the background (G1)
    kind: str = "work_end"


class Fail(NamedTuple):
    """The runtime failed; ``after_insertion`` for work that serves an inserted message;
    ``aborting`` when the failure is raised by aborting cancelled work (C9)."""

    after_insertion: bool
    aborting: bool = False
    kind: str = "fail"


class HeldResponse(NamedTuple):
    """The agent sent a prompt's response only because the work it started ended (v1, X04)."""

    sub: tuple[int, int, int]
    kind: str = "held_response"


class CancelSeen(NamedTuple):
    """The agent processed ``session/cancel``; ``active`` if foreground work was running."""

    active: bool
    kind: str = "cancel_seen"


class Bind(NamedTuple):
    """A client linked its submission ``sub`` (client, epoch, rid) to message ``mid``."""

    client: int
    sub: tuple[int, int, int]
    mid: str
    how: str
    kind: str = "bind"


class Execute(NamedTuple):
    """A locally handled command ran (its side effect happened)."""

    mid: str
    kind: str = "execute"


class Replayed(NamedTuple):
    """Replay sent history entry ``original`` under ``sent``."""

    original: str
    sent: str
    kind: str = "replayed"


class Restart(NamedTuple):
    kind: str = "restart"


class Forget(NamedTuple):
    """The retention policy dropped history entry ``mid``: no replay carries it from now on (R4)."""

    mid: str
    kind: str = "forget"



class Action(NamedTuple):
    """One step of one actor: ``actor`` is "net", "agent" or "client"; ``args`` say which one and what."""

    actor: str
    name: str
    args: tuple = ()
