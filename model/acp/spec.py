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
    #: replayed messages keep their insertion IDs (R5)
    replay_keeps_ids: bool = True
    #: replaying a retained command runs it again (breaks R9)
    replay_reexecutes_commands: bool = False
    #: a current-state snapshot after replay, before the resume response (S13;
    #: the RFD names it a follow-up, the schema makes it a MUST: taken here)
    state_sync_on_resume: bool = True
    #: `session/cancel` also answers prompts held but not yet inserted with -32800 (C4, schema)
    cancel_withdraws_held: bool = True
    #: how clients link a submission to a message: "message_id" (P9), "content", "order",
    #: "token" (a client-generated promptId echoed in updates, besides the returned messageId),
    #: "jsonrpc_id" (the update's messageId is the request id)
    client_correlation: str = "message_id"
    #: after a receipt response (``respond_at="receipt"``) a prompt the agent then rejects or
    #: withdraws is signalled with a ``prompt_rejected`` update naming the reserved messageId
    #: (the two-phase acknowledge-then-insert design); False: it silently vanishes
    rejection_signal: bool = False
    #: a proxy between clients and agent adds this to every client request id (0: no proxy)
    proxy_id_offset: int = 0
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

    # -- what the RFD allows the agent (issue 13); each default is the RFD's reading --
    #: a prompt may be inserted while foreground work runs and then contributes to it
    #: ("A prompt may contribute to work already in progress"; the RFD leaves
    #: insert-while-busy open, so it is allowed; queued commands still wait)
    insert_while_busy: bool = True
    #: the agent may start foreground work on its own, with running ... idle (S17)
    agent_initiated_work: bool = True
    #: `running` may be reported before insertion, e.g. during a foreground hook (S4;
    #: the RFD is silent, the schema allows it: taken here)
    running_before_insertion: bool = True
    #: how hook work ends when its prompt is rejected before insertion: "error" (the
    #: schema's E11: pre-insertion work that fails ends with idle error; the RFD is
    #: silent) or "end_turn"
    hook_rejection_stop: str = "error"
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
    #: for a mutant or finding: the monitor that must catch it
    breaks: str = ""


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
    # -- issue 13: liveness, placement, cancellation routing, IDs across rejection and restart --
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

#: Variants the explorer's findings suggest (not in the RFD's text either way).
FINDINGS: dict[str, Spec] = {
    "echo-after-replay": RFD._replace(
        name="echo-after-replay", breaks="ViewMatchesHistory", echo_after_replay=True,
        description="the live user_message_chunk echo still goes to a connection that got the message by replay",
    ),
}

_V1_ONLY = "v1 has no state_update: a turn ends with the prompt response"
_NO_MESSAGE_ID = "its result carries no messageId by definition"
_ERROR_NOT_ON_IDLE = (
    ("WorkReportedByState", "the idle after the failure names no error stop reason: the alternative reports the "
                            "failure outside the idle by definition"),
)

#: The published versions and the alternatives the RFD's FAQ rejects, each rendered as its proponents
#: would build it, with what the RFD itself says it would need (unique tokens, a rejection signal).
#: ``by_design`` lists the RFD's rules a variant breaks by definition (never findings).
VARIANTS: dict[str, Spec] = {
    "rfd-as-written": RFD._replace(
        name="rfd-as-written", state_sync_on_resume=False,
        description="the RFD as written: no current-state snapshot on resume (it names state sync a follow-up; "
                    "`rfd` takes the schema's S13)",
        by_design=(("StateViewMatches", "S13 (a snapshot on resume) is the schema's; the RFD defers it"),
                   ("ResumeSendsStateSnapshot", "S13 (a snapshot on resume) is the schema's; the RFD defers it"),
                   ("WorkReportedByState", "without a snapshot on resume, work that ended while the only client was "
                                           "away is never reported to it (S13 deferred)")),
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
        name="v2-draft", response="empty",
        description="the v2 draft (2026-08-22): the response at acceptance is an empty result {}",
        by_design=(("PromptResultCarriesMessageId", "the draft's `{}`: " + _NO_MESSAGE_ID + " (D1)"),),
    ),
    "client-correlation-token": RFD._replace(
        name="client-correlation-token", client_correlation="token",
        description="a client-generated promptId on the request, kept with the message and echoed in its live and "
                    "replayed user_message, besides the returned messageId; tokens are unique across clients",
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
                      "the message) are not outcomes a client can observe",
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
        name="client-chosen-id", message_ids="client_chosen",
        description="the client picks the canonical messageId (unique across clients) and sends it with the prompt",
    ),
    "prompt-as-notification": RFD._replace(
        name="prompt-as-notification", respond_at="never",
        description="the prompt is a fire-and-forget notification: no response, no error; the client does not guess",
        by_design=(("PromptsAnswered", "a notification has no response by definition"),),
    ),
    "failed-state": RFD._replace(
        name="failed-state", failure_report="failed_state",
        description="a failure after insertion is a new `failed` state instead of idle with stopReason error",
        by_design=(("WorkReportedByState", "failed work ends in the new `failed` state, not an idle, by definition"),
                   ("WorkEndsWithIdle", "after `failed` no idle follows: the new state replaces it by definition"),
                   ("StateUpdatesWellFormed", "`failed` is a state the RFD does not define, by definition")),
    ),
    "separate-error-update": RFD._replace(
        name="separate-error-update", by_design=_ERROR_NOT_ON_IDLE, failure_report="error_update",
        description="a failure after insertion is an error update followed by a plain idle",
    ),
    "error-notice": RFD._replace(
        name="error-notice", by_design=_ERROR_NOT_ON_IDLE, failure_report="error_notice",
        description="a failure after insertion is an error-severity notice followed by a plain idle",
    ),
    "error-sibling-field": RFD._replace(
        name="error-sibling-field", error_shape="sibling", stale_error=True,
        description="error beside a plain-string stopReason, tied to it by a prose rule that this implementation "
                    "forgets: the idle after a failed turn keeps the stale error, and the client reads it",
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
