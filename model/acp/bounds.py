"""The explorer's bounds on the ACP model: how much may happen, and which optional behaviours are explored.

Every count and switch defaults to nothing extra, so a bound left at its default explores exactly the state
space it did before the bound existed.
"""

from __future__ import annotations

from typing import NamedTuple

from .agent_common import Options


class Bounds(NamedTuple):
    """How much may happen: the explorer's bounds (all small)."""

    clients: int = 2
    prompts: int = 2
    contents: tuple[str, ...] = ("hi",)
    drops: int = 0
    disconnects: int = 0
    cancels: int = 0
    cancel_requests: int = 0
    failures: int = 0
    restarts: int = 0
    imports: int = 0
    chunks: bool = False
    retain: bool = True
    retain_commands: bool = False
    tools: bool = False
    permission: bool = False
    output: bool = False
    #: FIFO channels (stdio, a WebSocket); False lets any message in a channel arrive next
    ordered: bool = True
    # -- what the RFD allows the agent, explored when set (each behind a Spec switch) --
    #: prompts may be inserted while work runs (and join it)
    busy_inserts: bool = False
    #: foreground work the agent may start on its own (S17)
    own_work: int = 0
    #: a foreground hook may report running before insertion (S4)
    hooks: bool = False
    #: the adapter may assign IDs before insertion (P7)
    early_ids: bool = False
    #: work may go on for any number of silent steps (weak fairness makes it end)
    slow_work: bool = False
    #: retained messages a retention policy may forget, at any time after their insertion (R4: "later
    #: omitted under the agent's history-retention policy"); replay from then on leaves them out
    forgets: int = 0
    #: a client whose prompt is still pending may time out and submit the same text again: a second
    #: submission, not counted in ``prompts`` (the RFD's FAQ: retrying is not made safe by messageId)
    retries: int = 0
    #: an imported message may arrive while work runs or a resume is served, not only when all is calm (U14)
    busy_imports: bool = False
    #: a locally handled command may be inserted while a prompt's work runs (P10)
    busy_commands: bool = False
    #: the last N clients are not connected at the start: each joins the live session later on a new connection
    #: with ``session/resume``, with or without ``replayFrom`` (a late joiner, not a reconnect)
    late_joiners: int = 0
    #: a late joiner may attach with ``session/load`` as well (the whole history replayed, then the response)
    load_joiners: bool = False
    #: advisory notices the agent may send at any time, to every attached connection (N5: live only)
    notices: int = 0
    #: a resume is served in steps (each replayed entry, the snapshot, the response), live work going on
    #: between them: a prompt inserted meanwhile is streamed live to the resuming connection too (R3, S13)
    interleaved_resume: bool = False
    #: work may end with every standard stop reason the schema lists (end_turn, max_tokens, max_turn_requests,
    #: refusal) and a custom ``_``-prefixed one (S5, W6), not only end_turn
    stop_reasons: bool = False
    #: a running tool call may be detached at the idle that ends its work: the idle lists it in ``background``,
    #: it goes on reporting while idle and, once final, a ``background: []`` snapshot ends it (G1-G4, S11)
    background: bool = False
    #: background work may go on reporting while a later turn's foreground work runs (its final status, and the
    #: snapshot that drops it, inside that turn: G1, S11); off, it waits for that work's idle.  Real behaviour the
    #: RFD allows, off by default for its cost: at 1 client x 2 prompts with tools it takes 23,203 states to 74,414
    background_overlap: bool = False
    #: ``session/close`` requests clients may send (C14): it cancels work, withdraws held prompts, stops background
    #: work, answers after the cancelled idle and detaches the connection from the session
    closes: int = 0
    #: tool calls a turn makes in parallel (with ``tools``): each its own status and, with ``permission``, its own
    #: permission request, all outstanding at once and answered in any order (S8, S9, C11)
    tool_calls: int = 1
    #: each live user message report is chunked or full on its own (U13), and replay rebuilds each message in the
    #: other shape than its live report had (chunked live, full replay; full live, chunked replay: R7)
    mixed_shapes: bool = False
    #: the runtime names the prompts it inserts with its own native IDs ("the returned ID may be native to the
    #: underlying agent or adapter-owned", P8); the adapter still names the messages it owns (commands, imports), and it
    #: cannot assign an ID before insertion (it learns the native one only then)
    native_ids: bool = False
    #: clients' identifier generators collide: each client numbers its own tokens or chosen
    #: messageIds (as it numbers JSON-RPC ids) instead of drawing them unique across clients
    colliding_ids: bool = False

    def options(self) -> Options:
        return Options(self.chunks, self.retain, self.retain_commands, self.tools, self.permission, self.output,
                       self.slow_work, self.interleaved_resume, self.background,
                       self.tool_calls, self.native_ids, self.mixed_shapes, self.background_overlap)
