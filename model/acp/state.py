"""The ACP model's state: small immutable records (NamedTuples, for fast hashing).

One :class:`World` value is one global state: the agent side, every client,
every connection's channels, the remaining fault and workload budgets, and
the monitors' own bookkeeping.  Connections are ``(client, epoch)``: a
reconnect opens epoch + 1.  All collections are tuples.
"""

from __future__ import annotations

from typing import NamedTuple

SESSION = "s1"

class Entry(NamedTuple):
    """A message in the agent's session history.

    ``origin`` is "prompt", "command", "imported" or "agent"; ``sub`` is the
    submission ``(client, epoch, rid)`` that inserted it (ground truth the
    wire does not show), None for imported and agent messages.
    """

    mid: str
    role: str
    content: tuple[str, ...]
    retained: bool
    origin: str
    sub: tuple[int, int, int] | None = None
    token: str | None = None  # a client's promptId (only in the correlation-token variant)
    chunked: bool = False  # its live report went out as chunks (per message with ``mixed_shapes``)


class Req(NamedTuple):
    """The adapter's record of a received ``session/prompt`` until it is answered and echoed.

    The triple ``(client, epoch, rid)`` is the private per-submission token
    that matches the runtime's insertion event to the request (P7).
    """

    client: int
    epoch: int
    rid: int
    content: tuple[str, ...]
    mid: str | None = None  # set at insertion (or minted in advance by a non-conforming adapter)
    prompt_id: str | None = None  # a client's promptId (variants only)
    inserted: bool = False
    answered: bool = False
    echoed: bool = False
    cancel_asked: bool = False  # a $/cancel_request arrived after insertion
    replayed_to: tuple[int, ...] = ()  # clients that already got the message by replay
    swallowed: bool = False  # the runtime took the input and will never report its insertion

    @property
    def token(self) -> tuple[int, int, int]:
        return (self.client, self.epoch, self.rid)


class Work(NamedTuple):
    """Foreground work in progress: the script is output, then an optional tool call, then idle.

    ``origin`` says what started it: "prompt", "command", "agent" (the agent
    on its own, S17) or "hook" (foreground work before insertion, S4; ``hook``
    is then the submission it runs for, None once that prompt was rejected).
    Later prompts may join running work (``mids`` grows: a prompt contributes
    to work in progress).
    """

    mids: tuple[str, ...]
    command: bool = False
    output: str | None = None  # agent message id once its chunk was sent
    tools: tuple[str, ...] = ()  # each tool call's status once started (several run in parallel)
    #: outstanding permission requests ``(call index, request id, client asked)``; the client is None when the
    #: asker left and the request waits to be asked again
    perms: tuple = ()
    cancelled: bool = False
    failed: bool = False
    replayed_command: bool = False
    origin: str = "prompt"
    hook: tuple[int, int, int] | None = None


class Resuming(NamedTuple):
    """A ``session/resume`` the agent serves in steps (``interleaved_resume``): the connection is attached, live
    work goes on, and the replay walks the history as it was at the request (``end``) from ``cursor``."""

    client: int
    epoch: int
    rid: int
    replay: bool
    end: int
    cursor: int = 0
    snapped: bool = False  # the current-state snapshot went out
    load: bool = False  # a ``session/load``: whole history replayed, answered with its own result


class Agent(NamedTuple):
    history: tuple[Entry, ...] = ()
    fg: str = "idle"
    reqs: tuple[Req, ...] = ()
    work: Work | None = None
    next_id: int = 1
    next_rid: int = 1  # ids of agent -> client requests
    attached: tuple[bool, ...] = ()  # per client: its live connection is attached to the session
    last_stop: str | None = None
    issued: tuple[str, ...] = ()  # every message ID ever returned or inserted (for reuse mutants)
    #: IDs assigned to submissions before insertion that were then rejected or withdrawn (P5, P16)
    withdrawn: tuple[str, ...] = ()
    #: updates of ended work still to send (only the ``tool-status-after-idle`` mutant has any)
    late: tuple = ()
    #: resumes being served step by step (:class:`Resuming`; only with ``interleaved_resume``)
    resumes: tuple = ()
    #: work running independently of the foreground (G1): ``(tool call id, final status sent)`` per listed item
    background: tuple = ()
    #: a ``background`` list went out once: every later state update carries one (G2)
    bg_reported: bool = False
    #: the runtime's own counter of native message IDs (``native_ids``; it lives in the runtime, past restarts)
    native_next: int = 1
    #: ``session/close`` requests ``(client, epoch, rid)`` waiting for the cancelled work's idle (C14)
    closing: tuple = ()


class Sub(NamedTuple):
    """A client's submission and what the client knows of it.

    ``status``: pending (awaiting its answer), accepted (inserted, as far as the client
    knows), rejected, cancelled, ambiguous (the connection was lost before the answer,
    R11), sent (a fire-and-forget prompt: no answer will come), received (a receipt came,
    insertion is still to be reported) or failed (v1: an error response, which does not
    say whether the message was inserted).  ``pid`` is the identifier the client sent with
    it in an alternative that has one (a correlation token or a chosen messageId).
    """

    rid: int
    epoch: int
    content: tuple[str, ...]
    status: str = "pending"
    mid: str | None = None
    pid: str | None = None
    #: the index (in the client's ``subs``) of the submission this one retries after a timeout, if it is a retry
    retry_of: int | None = None


class Item(NamedTuple):
    """One rendered message in a client's feed.

    ``mid`` is None for an optimistic copy of the client's own pending prompt
    (``sub`` is its submission index).  ``provisional`` marks content that is
    the client's local copy: the agent's first report replaces it (P18).
    """

    mid: str | None
    role: str
    content: tuple[str, ...]
    sub: int | None = None
    provisional: bool = False


class Client(NamedTuple):
    epoch: int = 0
    up: bool = True
    #: what the rendered feed can claim: "live" (connected throughout, nothing lost),
    #: "replayed" (rebuilt by replay), "resumed" (resumed without replay: state only),
    #: "resuming", "partial" (something was lost) or "closed" (it closed the session: it follows it no more)
    view: str = "live"
    subs: tuple[Sub, ...] = ()
    feed: tuple[Item, ...] = ()
    fg: str = "idle"
    next_rid: int = 1
    perms: tuple[int, ...] = ()  # permission requests to answer
    resume_rid: int | None = None
    replay: bool = False  # the outstanding resume asked for replay
    cut: bool = False  # was disconnected at least once
    last_stop: str | None = None  # how the client believes the last work ended
    last_error: tuple = ()  # the (code, message) of the error it learned that work ended with, () if none
    closed: bool = False  # it sent session/close on this connection: it submits nothing more there (C14)


class Link(NamedTuple):
    """A client's current connection: FIFO channels both ways (in-flight messages die with it)."""

    epoch: int = 0
    up: bool = True
    to_agent: tuple = ()
    to_client: tuple = ()
    #: what a proxy on this connection adds to the client's request ids (P19; 0: no proxy).  The
    #: agent knows a submission by the rewritten id: goals map a client's id to it with this.
    proxy: int = 0


class Budget(NamedTuple):
    prompts: int = 0  # prompts still to submit (all clients together)
    drops: int = 0
    cuts: int = 0
    cancels: int = 0
    cancel_requests: int = 0
    failures: int = 0
    restarts: int = 0
    own_work: int = 0  # agent-initiated foreground work the agent may still start (S17)
    forgets: int = 0  # retained messages the retention policy may still drop (R4)
    retries: int = 0  # submissions a client that timed out waiting may still send again (P12)
    notices: int = 0  # advisory notices the agent may still send (N5)
    closes: int = 0  # session/close requests clients may still send (C14)


class World(NamedTuple):
    agent: Agent
    clients: tuple[Client, ...]
    links: tuple[Link, ...]
    budget: Budget
    mon: tuple = ()  # per-monitor bookkeeping, in monitor order
    violation: tuple[str, str] | None = None  # (monitor name, what happened)
    #: other monitors the same step violated, ((name, what happened), ...): none is masked
    more: tuple = ()
    warning: tuple[str, str] | None = None  # (monitor name, what happened) for a SHOULD, this step only


def replace_at(values: tuple, i: int, value) -> tuple:
    return values[:i] + (value,) + values[i + 1 :]
