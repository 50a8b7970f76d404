"""Spec: the behavioural switches a variant of the v2 prompt lifecycle sets.

A variant is data, not a fork of the actors: the agent, adapter and client
step functions read these switches.  ``rfd`` is the seed RFD ("v2 Prompt
Lifecycle", 2026-10-01).  Where the newer schema differs from the RFD
(RULES.md D1..D22) the difference is a switch; the preset follows the RFD and
says where it takes the schema's side.  Mutants each break one behaviour and
must be caught by the monitor of the rule they break.
"""

from __future__ import annotations

from collections import ChainMap
from typing import NamedTuple

from acplab.model.errors import InputError


class Spec(NamedTuple):
    """Switches; defaults are the RFD's behaviour."""

    name: str = "rfd"
    description: str = "the v2 Prompt Lifecycle RFD (seed, 2026-10-01)"
    #: when the prompt response is sent: "insertion" (P2/P3), "receipt" (before
    #: insertion, on an ID minted in advance), "end_of_turn" (v1)
    respond_at: str = "insertion"
    #: the success result: "message_id" (P4), "empty" (the v2 draft's `{}`, D1),
    #: "stop_reason" (v1: `{stopReason}` at the end of the turn)
    response: str = "message_id"
    #: the agent reports foreground state with state_update (v2); v1 has none
    state_updates: bool = True
    #: the agent reports each inserted user message live (U1); v1 adapters often did not
    echo: bool = True
    #: who names user messages: "agent" (P13, U11), "jsonrpc_id" (the request id is the
    #: identity), "client_chosen" (the client's promptId becomes the messageId)
    message_ids: str = "agent"
    #: the resume snapshot carries the last stop reason and its error (E13, S14)
    snapshot_outcome: bool = True
    #: a later insertion reuses an ID already returned (breaks P5)
    reuse_ids: bool = False
    #: how a failure after insertion is reported to a still-pending prompt:
    #: "success" (E2: the response succeeds) or "error_response" (breaks E1/E2)
    failure_before_response: str = "success"
    #: how a failure that ends foreground work is reported: "idle_error" (E3),
    #: "idle_silent" (no idle at all: breaks S2), "failed_state" (a new `failed` state),
    #: "error_update" (an error update, then a plain idle), "error_notice" (an
    #: error-severity notice, then a plain idle), "error_response" (v1: the prompt's error)
    failure_report: str = "idle_error"
    #: `$/cancel_request` on an inserted prompt: "success" (C1) or "error" (-32800, breaks C1)
    cancel_request_after_insertion: str = "success"
    #: chunked replay starts with `user_message` content [] (R7)
    replay_reset: bool = True
    #: a ``session/load``'s chunked replay resets each message first too (R7 speaks of any replay); False: the load
    #: path streams the recorded chunks as they went out live, with no reset (the spec snapshot's load replays
    #: "the entire conversation" and never mentions one, D12): a client holding a copy appends to it
    load_replay_reset: bool = True
    #: replayed messages keep their insertion IDs (R5)
    replay_keeps_ids: bool = True
    #: a prompt with the text of an inserted one still unanswered on the same connection is taken for a retry:
    #: answered at once with that message's ID and never inserted (a silent deduplication; breaks P3, P12)
    dedupe_retries: bool = False
    #: the runtime may take a held prompt and never report its insertion ("an ID assigned in advance is not by
    #: itself evidence of insertion": it echoes late or never); the adapter then keeps the request pending, as
    #: the RFD says, and nothing ever answers it (a finding: the RFD gives no way out)
    runtime_swallows: bool = False
    #: a notice carries the non-empty title N5 requires; False sends an empty one
    notice_titled: bool = True
    #: a resume without ``replayFrom`` replays history all the same (breaks R1: replay only when asked)
    replay_unasked: bool = False
    #: a custom stop reason carries the ``_`` prefix that marks an extension value (W6); False drops it
    custom_stop_prefixed: bool = True
    #: replay names the k-th retained message with the k-th ID of the whole history, a positional counter
    #: that a retention trim shifts: a different message under an old ID (breaks R5)
    replay_renumbers: bool = False
    #: replaying a retained command runs it again (breaks R9)
    replay_reexecutes_commands: bool = False
    #: a current-state snapshot after replay, before the resume response (S13;
    #: the RFD names it a follow-up, the schema makes it a MUST: taken here)
    state_sync_on_resume: bool = True
    #: `session/cancel` also answers prompts held but not yet inserted with -32800 (C4, schema)
    cancel_withdraws_held: bool = True
    #: how clients link a submission to a message: "message_id" (P9), "content", "order",
    #: "token" (a client-generated promptId echoed in updates, besides the returned messageId),
    #: "jsonrpc_id" (the update's messageId is the request id), "token_after_cut" (the response is
    #: authoritative while connected; the token binds only a submission a cut left ambiguous)
    client_correlation: str = "message_id"
    #: after a receipt response (``respond_at="receipt"``) a prompt the agent then rejects or
    #: withdraws is signalled with a ``prompt_rejected`` update naming the reserved messageId
    #: (the two-phase acknowledge-then-insert design); with ``respond_at="never"`` the update names the
    #: prompt's token instead (the fire-and-forget design's rejection notification); False: it silently vanishes
    rejection_signal: bool = False
    #: a proxy between clients and agent adds this to every client request id (0: no proxy)
    proxy_id_offset: int = 0
    #: the transport between clients and agent may deliver a connection's messages in another order than sent
    #: (a reordering proxy or multiplexer; the model's unordered network, ``ordered=no``).  The RFD assumes the
    #: order JSON-RPC over stdio or a WebSocket keeps: a state_update carries no sequence number, so a client keeps
    #: whichever snapshot it got last (a finding, ``reordering-transport``)
    transport_reorders: bool = False
    #: the transport may lose one message on a connection that stays up (the model's ``drops=1`` as a spec).  The RFD
    #: assumes what JSON-RPC over stdio or a WebSocket gives: a message is lost only with its connection (E10, which
    #: resume recovers from); ACP has no retransmission or request timeout (a finding, ``lossy-transport``)
    transport_loses: bool = False
    #: properties a variant does not speak to: ((monitor name, reason), ...)
    not_applicable: tuple = ()
    #: rules of the RFD the variant breaks by definition: ((monitor name, reason), ...).  Their
    #: cells read "by design", never count as findings, and the tests check each is violated.
    by_design: tuple = ()
    #: why the model cannot tell the variant apart from ``rfd`` on the goals, if it cannot
    no_difference: str = ""
    #: the live report of a message is still streamed to a connection that already
    #: received it by replay (found by the explorer: chunks then duplicate content)
    echo_after_replay: bool = False

    # -- what the RFD allows the agent; each default is the RFD's reading --
    #: a prompt may be inserted while foreground work runs and then contributes to it
    #: ("A prompt may contribute to work already in progress"; the RFD leaves
    #: insert-while-busy open, so it is allowed; queued commands still wait)
    insert_while_busy: bool = True
    #: a locally handled command may be inserted (and executed by the adapter) while foreground work runs; it
    #: joins that work (its running ... idle, P11) and is answered in the same step, while the work still runs
    #: (the RFD puts no condition on a command's insertion point: taken; whether P11 asks a command inserted
    #: while busy for a running of its own is a question for the RFD)
    commands_while_busy: bool = True
    #: the agent may start foreground work on its own, with running ... idle (S17)
    agent_initiated_work: bool = True
    #: `running` may be reported before insertion, e.g. during a foreground hook (S4;
    #: the RFD is silent, the schema allows it: taken here)
    running_before_insertion: bool = True
    #: how hook work ends when its prompt is rejected before insertion: "error" (the
    #: schema's E11: pre-insertion work that fails ends with idle error; the RFD is
    #: silent) or "end_turn"
    hook_rejection_stop: str = "error"
    #: a foreground hook running for a prompt that ``$/cancel_request`` withdraws before insertion is
    #: cancelled and ends with idle ``cancelled`` (C1, C7, S2; the RFD says nothing of hooks, its conformant
    #: agents end them); False: the hook keeps waiting for a prompt that will never come
    withdrawn_hook_cancelled: bool = True
    #: the runtime ends foreground work only when it is cancelled (False: it ends by itself, S2).  A user who
    #: never cancels leaves it running for ever: what liveness under weak fairness must catch
    ends_only_on_cancel: bool = False
    #: the adapter may assign an ID before insertion, without answering (P7: not evidence)
    ids_before_insertion: bool = True
    #: an ID assigned to a submission that is then rejected or withdrawn: "retired"
    #: (never handed out again, P5) or "recycled" (given to the next message)
    withdrawn_ids: str = "retired"
    #: the user_message report of an inserted message goes out before any later output
    #: and before the idle of the work it started (insertion gives it a position; S6)
    echo_before_work: bool = True
    #: the ID the live report carries: "inserted" (U3) or "runtime" (the runtime's own
    #: ID, not the one the adapter returned: X03's variant)
    report_id: str = "inserted"
    #: the adapter answers inserted prompts (P2)
    answers: bool = True
    #: foreground work ends (S2/S3); False: the runtime keeps working and never says idle
    ends_work: bool = True
    #: the message-ID counter survives an agent restart (P5: never reused)
    ids_survive_restart: bool = True
    #: whose requests `$/cancel_request` is matched against: "sender" (C3) or "id_only"
    cancel_request_match: str = "sender"
    #: how cancelled work ends when aborting raises an error: "cancelled" (C9) or "error"
    abort_failure_stop: str = "cancelled"
    #: a pending permission request whose connection closes: "deny" (treated as not
    #: approved, as C11 does for a cancel) or "reask" (ask another attached client, or
    #: the next client to resume); the RFD is silent
    permission_on_disconnect: str = "deny"
    #: replay rebuilds a message in one shape: one full-content update, or a reset and its chunks (R7); False: a
    #: message reported chunked live is replayed as full content and then its chunks are streamed again
    replay_one_shape: bool = True
    #: an adapter whose runtime supplies native message IDs keeps them apart from the IDs it owns (P5); False: both
    #: count from 1 in one format, and a native ID can repeat an adapter-owned one
    native_ids_namespaced: bool = True
    #: ``session/cancel`` stops waiting for every outstanding permission request of the work and cancels each (C11);
    #: False: only the first, and an answer to another still counts
    cancel_stops_every_permission: bool = True
    #: ``session/close`` with active work is answered only after that work's cancelled idle (C14); False: at once
    close_waits_for_idle: bool = True
    #: background work sends a listed call's final status before the snapshot that drops it (G4); False: the
    #: ``background: []`` snapshot goes first and the final status after it
    background_final_first: bool = True
    #: an unfinished tool call's terminal status is sent only after the ending idle (X18)
    tool_status_after_idle: bool = False
    #: the idle error carries the JSON-RPC error object (E3/E5: a SHOULD)
    error_details: bool = True
    #: where ``error`` lives on an idle: "variant" (a field of the error stop reason, W7: beside
    #: any other stop reason it is an unknown field, so a client never reads it) or "sibling"
    #: (a field of every idle beside a plain-string stopReason; a client reads it wherever it is)
    error_shape: str = "variant"
    #: the agent forgets the prose rule: an idle after a failed turn still carries that error
    stale_error: bool = False
    #: the object a failure after insertion carries: "jsonrpc" (the JSON-RPC error object, E5)
    #: or "new" (a new error type {kind, message}: only the v1<->v2 bridges read it)
    error_type: str = "jsonrpc"
    #: a spec file's own mechanism: "FILE:Class", an agent hook and/or client strategy the model loads
    #: (:mod:`.extension`; "" for every preset)
    extension: str = ""
    #: for a mutant or finding: the monitor that must catch it
    breaks: str = ""

    # -- the mechanisms the rejected alternatives' proponents would add (acp/agent_variants, acp/client_strategies) --
    #: how a client draws its tokens or chosen messageIds: "global" (unique across clients, as a UUID is) or
    #: "per_client" (each client numbers its own 1, 2, ..., as it numbers JSON-RPC ids: two clients collide)
    client_ids: str = "global"
    #: a prompt whose client-chosen messageId is already taken (in history or held): "accept" (it is inserted
    #: under it all the same) or "reject" (the collision rule: answered with an error, not inserted)
    duplicate_ids: str = "accept"
    #: on a success with no messageId (the draft's `{}`) the client drops its optimistic copy and shows the
    #: message as the agent reports it (False: it keeps the copy it can never link)
    empty_result_drops_copy: bool = False
    #: the stop reason of the idle that follows an error update (``failure_report="error_update"``): "none"
    #: (a plain idle) or "error" (the two signals agree: the idle says error, the update carries the object)
    error_update_stop: str = "none"
    #: the ``failed`` state of ``failure_report="failed_state"`` as its design defines it: the client knows it
    #: means the work ended with an error, and a resume snapshot of a session whose last work failed says
    #: ``failed`` again (False: ``failed`` is unknown to the client, shown as busy, S15; the snapshot a plain idle)
    failed_state_vocabulary: bool = False
    #: the client reads ``error`` on any idle that carries it, whatever the stop reason (a client bug:
    #: "Clients ignore it otherwise" not implemented); False reads it only beside stopReason "error"
    stray_error_read: bool = False


RFD = Spec()

MUTANTS: dict[str, Spec] = {
    "early-success": RFD._replace(
        name="early-success", breaks="ResponsesFollowInsertion", respond_at="receipt",
        description="adapter answers success on an ID minted in advance, before the runtime inserts",
    ),
    "reused-id": RFD._replace(
        name="reused-id", breaks="InsertedIdsDistinct", reuse_ids=True, description="a later insertion gets an ID already returned",
    ),
    "error-after-insertion": RFD._replace(
        name="error-after-insertion", breaks="ResponsesFollowInsertion", failure_before_response="error_response",
        description="a failure after insertion, before the response, is sent as a JSON-RPC error",
    ),
    "cancel-request-32800-after-insertion": RFD._replace(
        name="cancel-request-32800-after-insertion", breaks="ResponsesFollowInsertion", cancel_request_after_insertion="error",
        description="$/cancel_request answers -32800 although the message was inserted",
    ),
    "replay-without-reset": RFD._replace(
        name="replay-without-reset", breaks="ReplayResetsBeforeChunks", replay_reset=False,
        description="chunked replay without the user_message content [] reset",
    ),
    "load-replay-without-reset": RFD._replace(
        name="load-replay-without-reset", breaks="ReplayResetsBeforeChunks", load_replay_reset=False,
        description="session/load replays a chunk-reported message as its live chunks, with no content [] reset "
                    "first (resume's replay resets it)",
    ),
    "replay-new-ids": RFD._replace(
        name="replay-new-ids", breaks="RetainedMessagesReplayed", replay_keeps_ids=False, description="replay mints fresh message IDs",
    ),
    "replay-reexecutes-command": RFD._replace(
        name="replay-reexecutes-command", breaks="CommandsRunOnce", replay_reexecutes_commands=True,
        description="replaying a retained command executes it again",
    ),
    "client-matches-by-content": RFD._replace(
        name="client-matches-by-content", breaks="ClientsLinkByResponse", client_correlation="content",
        description="the client binds a user_message to its pending prompt with equal content",
    ),
    "client-matches-by-order": RFD._replace(
        name="client-matches-by-order", breaks="ClientsLinkByResponse", client_correlation="order",
        description="the client binds a user_message to its oldest pending prompt",
    ),
    "no-idle-after-failure": RFD._replace(
        name="no-idle-after-failure", breaks="WorkReportedByState", failure_report="idle_silent",
        description="a failure after insertion ends work without an idle state_update",
    ),
    # -- liveness, placement, cancellation routing, IDs across rejection and restart --
    "never-answers": RFD._replace(
        name="never-answers", breaks="PromptsAnswered", answers=False,
        description="the adapter inserts and reports a prompt but never sends its response",
    ),
    "never-idles": RFD._replace(
        name="never-idles", breaks="WorkEndsWithIdle", ends_work=False,
        description="the runtime keeps working for ever: the work never ends and no idle comes",
    ),
    "late-echo": RFD._replace(
        name="late-echo", breaks="UserMessageReportedInPlace", echo_before_work=False,
        description="the user_message report may come after later output and after the idle of the work it started",
    ),
    "restart-resets-ids": RFD._replace(
        name="restart-resets-ids", breaks="InsertedIdsDistinct", ids_survive_restart=False,
        description="the message-ID counter starts again after an agent restart",
    ),
    "cancel-request-by-id-only": RFD._replace(
        name="cancel-request-by-id-only", breaks="CancelRequestMatchesSender", cancel_request_match="id_only",
        description="$/cancel_request is matched by request id across connections, not against the sender's own",
    ),
    "held-prompt-runs-after-cancel": RFD._replace(
        name="held-prompt-runs-after-cancel", breaks="HeldPromptsWithdrawnOnCancel", cancel_withdraws_held=False,
        description="a prompt held when session/cancel arrives is drained and run afterwards",
    ),
    "id-leaked-after-rejection": RFD._replace(
        name="id-leaked-after-rejection", breaks="InsertedIdsDistinct", withdrawn_ids="recycled",
        description="an ID assigned before insertion to a prompt later rejected is handed to the next message",
    ),
    "abort-fails-as-error": RFD._replace(
        name="abort-fails-as-error", breaks="CancelEndsWithCancelled", abort_failure_stop="error",
        description="an error raised while aborting cancelled work ends it with stopReason error",
    ),
    "retry-deduplicated": RFD._replace(
        name="retry-deduplicated", breaks="ResponsesFollowInsertion", dedupe_retries=True,
        description="a retried prompt is silently deduplicated: answered with the first message's ID, never inserted",
    ),
    "untitled-notice": RFD._replace(
        name="untitled-notice", breaks="NoticesWellFormed", notice_titled=False,
        description="an advisory notice goes out with an empty title",
    ),
    "replay-unasked": RFD._replace(
        name="replay-unasked", breaks="ResumeSendsStateSnapshot", replay_unasked=True,
        description="a resume without replayFrom replays retained history all the same",
    ),
    "custom-stop-unprefixed": RFD._replace(
        name="custom-stop-unprefixed", breaks="StateUpdatesWellFormed", custom_stop_prefixed=False,
        description="a custom stop reason goes out without the _ prefix an extension value needs",
    ),
    "hook-left-running": RFD._replace(
        name="hook-left-running", breaks="WorkEndsWithIdle", withdrawn_hook_cancelled=False,
        description="a hook whose prompt $/cancel_request withdrew keeps running: the work never ends",
    ),
    "ends-only-on-cancel": RFD._replace(
        name="ends-only-on-cancel", breaks="WorkEndsWithIdle", ends_only_on_cancel=True,
        description="foreground work ends only if the user cancels it: a user who never cancels waits for ever",
    ),
    "background-dropped-unfinished": RFD._replace(
        name="background-dropped-unfinished", breaks="BackgroundSnapshotsConsistent", background_final_first=False,
        description="background work is dropped by a background: [] snapshot before its final status, which "
                    "comes after it",
    ),
    "close-answered-early": RFD._replace(
        name="close-answered-early", breaks="CloseEndsQuietly", close_waits_for_idle=False,
        description="session/close is answered at once, before the cancelled idle of the work it ended",
    ),
    "cancel-leaves-a-permission": RFD._replace(
        name="cancel-leaves-a-permission", breaks="PermissionsNotApprovedAfterCancel",
        cancel_stops_every_permission=False,
        description="session/cancel cancels only the first of two outstanding permission requests; an approval "
                    "of the other, answered after the cancel, still runs its tool call",
    ),
    "native-ids-collide": RFD._replace(
        name="native-ids-collide", breaks="InsertedIdsDistinct", native_ids_namespaced=False,
        description="the runtime's native IDs and the adapter's own (for commands) are counted apart in one format: "
                    "a prompt and a command get the same messageId",
    ),
    "replay-full-then-chunks": RFD._replace(
        name="replay-full-then-chunks", breaks="ReplayResetsBeforeChunks", replay_one_shape=False,
        description="replay sends a chunk-reported message as one full-content update, then streams its chunks "
                    "again on top of it",
    ),
    "replay-renumbered-after-forget": RFD._replace(
        name="replay-renumbered-after-forget", breaks="RetainedMessagesReplayed", replay_renumbers=True,
        description="after the retention policy forgets a message, replay shifts the others onto older IDs: a "
                    "retained message is replayed under another message's ID (scenario retention-trim)",
    ),
    # -- so that every property can fail (acplab properties) --
    "suppressed-echo": RFD._replace(
        name="suppressed-echo", breaks="AcceptedMessagesReportedLive", echo=False,
        description="the adapter never reports inserted prompts live (what several v1 adapters did, X01)",
    ),
    "report-under-runtime-id": RFD._replace(
        name="report-under-runtime-id", breaks="ResponsesFollowInsertion", report_id="runtime",
        description="the live report carries the runtime's own ID, not the one returned (X03's variant)",
    ),
    "tool-status-after-idle": RFD._replace(
        name="tool-status-after-idle", breaks="ToolCallsSettleBeforeIdle", tool_status_after_idle=True,
        description="a failure ends the work with idle error first and fails its tool call afterwards (X18)",
    ),
    "error-without-details": RFD._replace(
        name="error-without-details", breaks="ErrorIdleCarriesErrorObject", error_details=False,
        description="the idle error omits the error object: allowed, but the RFD says SHOULD (a warning)",
    ),
}

#: Mutants whose typical bug no rule monitor of ``model/acp/rules/`` kills yet: defined here, in no registry
#: (not in :data:`SPECS`, no scenario's ``catches``, no killer claim).  ``breaks`` names the rule monitor that
#: should kill each; the scenario that exposes it is in its description.  Once that monitor does, it moves to
#: :data:`MUTANTS` and the killers.
#: (Empty: ``replay-renumbered-after-forget`` waited here until the scenario ``retention-trim`` showed R5's rule
#: monitor RetainedMessagesReplayed killing it; with one prompt, as in ``retention-forget``, only an agent message
#: moves onto another ID, and that monitor follows user messages only: the insert events name no agent output.)
AWAITING_MONITOR: dict[str, Spec] = {}

#: Variants the explorer's findings suggest (not in the RFD's text either way).
FINDINGS: dict[str, Spec] = {
    "silent-runtime": RFD._replace(
        name="silent-runtime", breaks="PromptsAnswered", runtime_swallows=True,
        description="the runtime never reports a prompt's insertion; the adapter keeps it pending, as the RFD says, "
                    "and it is never answered: the RFD names no deadline or error for an insertion that never comes",
    ),
    "echo-after-replay": RFD._replace(
        name="echo-after-replay", breaks="ViewMatchesHistory", echo_after_replay=True,
        description="the live user_message_chunk echo still goes to a connection that got the message by replay",
    ),
    "reordering-transport": RFD._replace(
        name="reordering-transport", breaks="StateViewMatches", transport_reorders=True,
        description="the rfd agent behind a transport that reorders a connection's messages: the idle overtakes "
                    "the running before it and the client shows running for ever; the agent's wire is conformant, "
                    "the RFD never says that a session's messages must arrive in the order sent",
    ),
    "lossy-transport": RFD._replace(
        name="lossy-transport", breaks="RequiresActionResolves", transport_loses=True,
        description="the rfd agent behind a transport that loses a message on a live connection: a lost "
                    "session/request_permission is never answered and the work stays requires_action for ever; "
                    "ACP has no request timeout or re-ask, and the RFD never says a message is lost only with its "
                    "connection",
    ),
}

_V1_ONLY = "v1 has no state_update: a turn ends with the prompt response"
_NO_MESSAGE_ID = "its result carries no messageId by definition"
_ERROR_NOT_ON_IDLE = (
    ("WorkReportedByState", "the idle after the failure names no error stop reason: the alternative reports the "
                            "failure outside the idle by definition"),
)
NAIVE = "naive build (kept for comparison, not the design at its strongest): "
_FAILED_BY_DESIGN = (
    ("WorkReportedByState", "failed work ends in the new `failed` state, not an idle, by definition"),
    ("WorkEndsWithIdle", "after `failed` no idle follows: the new state replaces it by definition"),
    ("StateUpdatesWellFormed", "`failed` is a state the RFD does not define, by definition"),
)

#: The published versions and the alternatives the RFD's FAQ rejects.  Each alternative's row is built as
#: its proponents would build it, with every mechanism the RFD (or the design's own prose) says it needs
#: (:data:`MECHANISMS`); the builds of before stay as ``NAME-naive`` rows, labelled so.  Faults (colliding
#: generators, a forgetful agent, a client bug) are never a row's: the matrix applies each as a column to
#: every row with the obligation it breaks (``app/matrix_faults.py``).  ``by_design`` lists the RFD's rules a
#: variant breaks by definition (never findings).
VARIANTS: dict[str, Spec] = {
    "rfd-as-written": RFD._replace(
        name="rfd-as-written", state_sync_on_resume=False,
        description="the RFD as written: no current-state snapshot on resume (it names state sync a follow-up; "
                    "`rfd` takes the schema's S13)",
        by_design=(("StateViewMatches", "S13 (a snapshot on resume) is the schema's; the RFD defers it"),
                   ("ResumeSendsStateSnapshot", "S13 (a snapshot on resume) is the schema's; the RFD defers it")),
    ),
    "v1": RFD._replace(
        name="v1", description="ACP v1: the prompt response ends the turn with stopReason; failures are error responses",
        respond_at="end_of_turn", response="stop_reason", state_updates=False, echo=False,
        failure_report="error_response", snapshot_outcome=False, insert_while_busy=False,
        agent_initiated_work=False, running_before_insertion=False,
        by_design=(
            ("ResponseNotHeldForWorkEnd", "v1's response ends the turn, so it waits for the work by definition"),
            ("PromptResultCarriesMessageId", "v1's response carries a stopReason and no messageId by definition"),
            ("ResponsesFollowInsertion", "v1 reports every failure, before or after insertion, as an error response"),
        ),
        not_applicable=(
            ("WorkEndsWithIdle", _V1_ONLY), ("RequiresActionResolves", _V1_ONLY),
            ("UserMessageReportedInPlace", "v1 does not report user messages"),
            ("ErrorIdleCarriesErrorObject", _V1_ONLY), ("WorkReportedByState", _V1_ONLY),
            ("StateUpdatesWellFormed", _V1_ONLY), ("StateViewMatches", _V1_ONLY), ("ResumeSendsStateSnapshot", _V1_ONLY),
            ("LocalCommandsFollowLifecycle", "v1 reports no user messages: a local command has no lifecycle to follow"),
            ("ToolCallsSettleBeforeIdle", _V1_ONLY),
            ("AcceptedMessagesReportedLive", "v1 does not require a live echo of the prompt"),
            ("ViewMatchesHistory", "v1 user messages carry no ID to compare views by"),
            ("ViewsConverge", "v1 reports no user message live: a v1 client shows its own prompts as local copies"),
            ("OneMessagePerSubmission", "v1 clients keep their local copy as the message"),
        ),
    ),
    "v2-draft": RFD._replace(
        name="v2-draft", response="empty", empty_result_drops_copy=True,
        description="the v2 draft (2026-08-22): the response at acceptance is an empty result {}; on it the client "
                    "drops its optimistic copy and shows the message as the agent reports it",
        no_difference="with the client dropping its copy on `{}`, every goal rfd meets is met; what `{}` loses is "
                      "the submitter's knowing which reported message is its own, which no goal here judges",
        by_design=(("PromptResultCarriesMessageId", "the draft's `{}`: " + _NO_MESSAGE_ID + " (D1)"),),
    ),
    "v2-draft-naive": RFD._replace(
        name="v2-draft-naive", response="empty",
        description=NAIVE + "the v2 draft's `{}`, with a client that keeps an optimistic copy it can never link",
        by_design=(("PromptResultCarriesMessageId", "the draft's `{}`: " + _NO_MESSAGE_ID + " (D1)"),),
    ),
    "client-correlation-token": RFD._replace(
        name="client-correlation-token", client_correlation="token_after_cut",
        description="a client-generated promptId, unique across clients, on the request, kept with the message and "
                    "echoed in its live and replayed user_message, besides the returned messageId; the response is "
                    "authoritative while connected, the token binds only a submission a cut left ambiguous",
    ),
    "client-correlation-token-naive": RFD._replace(
        name="client-correlation-token-naive", client_correlation="token", client_ids="per_client",
        description=NAIVE + "each client numbers its tokens 1, 2, ... (two clients' tokens collide) and binds by "
                             "the token wherever a report carries it",
    ),
    "ack-before-insertion": RFD._replace(
        name="ack-before-insertion", respond_at="receipt", rejection_signal=True,
        description="two-phase: the response acknowledges receipt under a reserved messageId; the user_message "
                    "reports insertion, a prompt_rejected update a later rejection",
        by_design=(
            ("ResponsesFollowInsertion", "the success is a receipt by definition (P3 ties it to insertion)"),
            ("AcceptedMessagesReportedLive", "a receipt is not an insertion: a prompt rejected after it is never "
                                            "reported as a user message, by design"),
        ),
        no_difference="a receipt followed by the insertion report or a rejection signal meets every goal the RFD "
                      "meets here; its costs (a second signal to define, an ID reserved before the runtime creates "
                      "the message) are not outcomes the goals judge",
    ),
    "reuse-jsonrpc-id": RFD._replace(
        name="reuse-jsonrpc-id", message_ids="jsonrpc_id", response="empty", client_correlation="jsonrpc_id",
        description="the JSON-RPC request id is the message identity",
        by_design=(("PromptResultCarriesMessageId", "the request id is the identity: " + _NO_MESSAGE_ID),
                   ("ClientsLinkByResponse", "the client derives the message's ID from its own request id by definition")),
    ),
    "reuse-jsonrpc-id-proxy": RFD._replace(
        name="reuse-jsonrpc-id-proxy", message_ids="jsonrpc_id", response="empty", client_correlation="jsonrpc_id",
        proxy_id_offset=100,
        description="the JSON-RPC request id is the message identity, behind a proxy that rewrites ids",
        by_design=(("PromptResultCarriesMessageId", "the request id is the identity: " + _NO_MESSAGE_ID),),
    ),
    "client-chosen-id": RFD._replace(
        name="client-chosen-id", message_ids="client_chosen", duplicate_ids="reject",
        description="the client picks the canonical messageId (unique across clients) and sends it with the "
                    "prompt; the agent rejects a prompt whose ID is already taken (the collision rule)",
    ),
    "client-chosen-id-naive": RFD._replace(
        name="client-chosen-id-naive", message_ids="client_chosen", client_ids="per_client",
        description=NAIVE + "each client numbers its chosen IDs 1, 2, ... and the agent has no collision rule",
    ),
    "prompt-as-notification": RFD._replace(
        name="prompt-as-notification", respond_at="never", client_correlation="token", rejection_signal=True,
        description="the prompt is a fire-and-forget notification carrying a client token (unique across clients) "
                    "that the agent echoes in the user_message; a rejection is a prompt_rejected notification "
                    "naming the token",
        by_design=(("PromptsAnswered", "a notification has no response by definition"),),
    ),
    "prompt-as-notification-naive": RFD._replace(
        name="prompt-as-notification-naive", respond_at="never",
        description=NAIVE + "a fire-and-forget notification with no client identifier and no rejection "
                             "notification; the client does not guess",
        by_design=(("PromptsAnswered", "a notification has no response by definition"),),
    ),
    "failed-state": RFD._replace(
        name="failed-state", failure_report="failed_state", failed_state_vocabulary=True,
        description="a failure after insertion is a new `failed` state instead of idle with stopReason error; the "
                    "design's clients know `failed` as the end of work with an error, and a resume snapshot "
                    "after a failure says `failed`",
        no_difference="judged with its own vocabulary (clients that know `failed`) it meets every goal rfd meets; "
                      "the FAQ's cost is for clients that do not know `failed` (the naive row, the rfd-vocabulary "
                      "strategy)",
        by_design=_FAILED_BY_DESIGN,
    ),
    "failed-state-naive": RFD._replace(
        name="failed-state-naive", failure_report="failed_state",
        description=NAIVE + "a new `failed` state, judged by a client that knows only the RFD's states",
        by_design=_FAILED_BY_DESIGN,
    ),
    "separate-error-update": RFD._replace(
        name="separate-error-update", failure_report="error_update", error_update_stop="error",
        description="a failure after insertion is an error update carrying the error object, then an idle whose "
                    "stopReason says error (the two signals agree)",
        no_difference="with the idle saying error the two signals agree and every goal rfd meets is met; the FAQ's "
                      "costs (rules for an error with no idle, for which idle an error belongs to) are spec surface, "
                      "not outcomes the goals judge",
    ),
    "separate-error-update-naive": RFD._replace(
        name="separate-error-update-naive", by_design=_ERROR_NOT_ON_IDLE, failure_report="error_update",
        description=NAIVE + "an error update followed by a plain idle (no stop reason)",
    ),
    "error-notice": RFD._replace(
        name="error-notice", by_design=_ERROR_NOT_ON_IDLE, failure_report="error_notice",
        description="a failure after insertion is an error-severity notice followed by a plain idle",
    ),
    "error-sibling-field": RFD._replace(
        name="error-sibling-field", error_shape="sibling",
        description="error beside a plain-string stopReason, tied to it by the prose rule, which agent and client "
                    "both follow: error only with stopReason error, ignored otherwise",
        no_difference="agent and client following the prose rule meet every goal rfd meets; the difference is what "
                      "forgetting it costs, a fault column",
    ),
    "error-sibling-field-naive": RFD._replace(
        name="error-sibling-field-naive", error_shape="sibling", stale_error=True, stray_error_read=True,
        description=NAIVE + "error beside a plain-string stopReason, with an agent that forgets the prose rule "
                             "(the idle after a failed turn keeps the stale error) and a client that reads it",
    ),
    "new-error-type": RFD._replace(
        name="new-error-type", error_type="new",
        description="a new error type {kind, message} for failures after insertion instead of the JSON-RPC error "
                    "object (judged on the v1<->v2 bridges)",
        by_design=(("B1_ErrorAfterInsertionBecomesIdleError", "B1 asks for an idle carrying the v1 error's JSON-RPC "
                                                              "object, which the alternative replaces by definition"),),
    ),
}

#: Specs loaded from files for this process (``--spec-file``, :mod:`.specfile`): never in the figures.
USER_SPECS: dict[str, Spec] = {}

#: Every spec by name: rfd, the variants, mutants, findings, then user specs.  A live view of the
#: dicts above, so a preset added to one of them later (even at the end of this file) is found.
SPECS = ChainMap(USER_SPECS, FINDINGS, MUTANTS, VARIANTS, {"rfd": RFD})


def get_spec(name: str) -> Spec:
    """The preset (or loaded spec file) called ``name``; a one-line error lists the known ones."""
    try:
        return SPECS[name]
    except KeyError:
        raise InputError(f"unknown spec {name!r}; known: {', '.join(SPECS)}") from None
