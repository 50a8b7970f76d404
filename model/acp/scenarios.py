"""Named scenarios: a bound preset plus the witnesses it must reach.

The first thirteen follow the RFD's implementation checklist, in its order;
then races from RACES.md that the RFD governs; the last ones explore what the
RFD leaves the agent free to do (insert while busy, start work on its own,
report running before insertion, ...) and placement.  ``catches`` names the
mutants (model/spec.py) whose broken behaviour this scenario's bounds expose;
the tests hold the explorer to it.
"""

from __future__ import annotations

from typing import NamedTuple

from .model import Bounds
from acplab.model.errors import InputError


class Scenario(NamedTuple):
    name: str
    description: str
    rules: tuple[str, ...]
    bounds: Bounds
    witnesses: tuple[str, ...]
    catches: tuple[str, ...] = ()
    races: tuple[str, ...] = ()


DEFAULT = Scenario(
    "default",
    "two clients on one session, two identical prompts, no faults: every order of response and report; "
    "the agent may insert while busy, assign IDs early and report running before insertion",
    ("P3", "P4", "P5", "U1", "U2", "P9", "S2", "P7", "P17", "S4"),
    Bounds(clients=2, prompts=2, contents=("hi",), busy_inserts=True, hooks=True, early_ids=True),
    ("echo_before_response", "response_before_echo", "identical_prompts_distinct_ids", "two_clients_submitted",
     "other_client_renders", "pending_with_id_minted", "inserted_while_busy", "id_assigned_before_insertion",
     "running_before_insertion"),
    ("early-success", "reused-id", "client-matches-by-content", "client-matches-by-order", "late-echo"),
)

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        DEFAULT,
        Scenario(
            "id-before-insertion",
            "an ID assigned before insertion, with no response until insertion; rejected, it retires (checklist 1)",
            ("P1", "P3", "P7", "P17", "P16", "P5"), Bounds(clients=1, prompts=2, early_ids=True, failures=1),
            ("pending_with_id_minted", "id_assigned_before_insertion", "assigned_id_withdrawn"),
            ("early-success", "id-leaked-after-rejection"), ("X03",),
        ),
        Scenario(
            "report-order",
            "the user_message arrives before the response, and after it (checklist 2)",
            ("U1", "U2", "P4", "P2", "S2"), Bounds(clients=1, prompts=1),
            ("echo_before_response", "response_before_echo"),
            ("early-success", "never-answers", "never-idles", "suppressed-echo", "report-under-runtime-id",
             "reordering-transport"), ("X01",),
        ),
        Scenario(
            "identical-prompts",
            "two identical prompts get distinct IDs, and the client keeps them apart (checklist 3)",
            ("P5", "U2", "P9"), Bounds(clients=1, prompts=2, contents=("yes",)),
            ("identical_prompts_distinct_ids", "both_accepted_identical"),
            ("reused-id", "client-matches-by-content", "client-matches-by-order"), ("X07",),
        ),
        Scenario(
            "multi-client",
            "two clients submit the same text on their own connections (checklist 4)",
            ("P5", "P9", "P19", "U1", "U2"), Bounds(clients=2, prompts=2, contents=("yes",)),
            ("two_clients_submitted", "other_client_renders"),
            ("client-matches-by-content", "client-matches-by-order", "reused-id"), ("X07",),
        ),
        Scenario(
            "id-collision",
            "two clients submit the same text while their identifier generators collide: each numbers its own "
            "correlation tokens or chosen messageIds, as it numbers JSON-RPC ids (the cost the RFD names for them)",
            ("P5", "P9", "P19", "U2"), Bounds(clients=2, prompts=2, contents=("yes",), colliding_ids=True),
            ("two_clients_submitted", "other_client_renders"), (), ("X07",),
        ),
        Scenario(
            "replay-identity",
            "a client reconnects and resumes with replay; its message comes back under its ID (checklist 5)",
            ("R1", "R5", "R12", "S13"), Bounds(clients=1, prompts=1, disconnects=1),
            ("replayed_and_recognized",), ("replay-new-ids",), ("X27",),
        ),
        Scenario(
            "imported-message",
            "an imported message appears with an agent ID and no prompt response (checklist 6)",
            ("U14", "P9"), Bounds(clients=2, prompts=1, imports=1),
            ("imported_rendered",),
        ),
        Scenario(
            "streamed-user-message",
            "user messages reported as chunks as well as full updates (checklist 7)",
            ("U7", "U13", "P18"), Bounds(clients=1, prompts=1, chunks=True),
            ("streamed_user_message", "echo_before_response", "response_before_echo"),
        ),
        Scenario(
            "local-command",
            "a locally handled command is reported live and absent from later replay (checklist 8)",
            ("P10", "P11", "R4"), Bounds(clients=1, prompts=1, contents=("/compact",), disconnects=1),
            ("command_live_not_replayed",), (), ("X05",),
        ),
        Scenario(
            "retained-command",
            "a retained command replays under its ID and is not executed again (checklist 9)",
            ("R9", "R5"), Bounds(clients=1, prompts=1, contents=("/compact",), retain_commands=True, disconnects=1),
            ("retained_command_replayed",), ("replay-reexecutes-command",), ("X05",),
        ),
        Scenario(
            "lost-response",
            "the connection drops before the response: the outcome stays ambiguous and a retry is a second message (checklist 10)",
            ("R11", "P12", "E10"), Bounds(clients=1, prompts=2, disconnects=1),
            ("ambiguous_submission", "ambiguous_but_inserted", "retry_created_second_message"),
            ("client-matches-by-content", "client-matches-by-order"), ("X08",),
        ),
        Scenario(
            "streamed-replay",
            "replay rebuilds a streamed message with a content [] reset and no duplicate content (checklist 11)",
            ("R7", "R8", "U5", "U7"), Bounds(clients=1, prompts=1, chunks=True, disconnects=1),
            ("replayed_and_recognized", "streamed_user_message"), ("replay-without-reset", "echo-after-replay", "replay-unasked"),
            ("X26",),
        ),
        Scenario(
            "failure-after-insertion",
            "a failure after insertion but before the response: success, then idle error (checklist 12)",
            ("E1", "E2", "E3", "E5"), Bounds(clients=1, prompts=1, failures=1),
            ("failed_before_response", "error_idle_seen", "rejected_before_insertion"),
            ("error-after-insertion", "no-idle-after-failure", "error-without-details"), ("X02",),
        ),
        Scenario(
            "failure-outcome",
            "work fails after insertion; a client that reconnects learns it from the resume snapshot",
            ("E3", "E13", "S13", "S14"), Bounds(clients=1, prompts=1, failures=1, disconnects=1),
            ("resumed_after_failure", "error_idle_seen"), (), ("X02",),
        ),
        Scenario(
            "cancellation",
            "cancel before and after insertion, by session/cancel and by $/cancel_request (checklist 13)",
            ("C1", "C4", "C7", "C9", "E1"), Bounds(clients=1, prompts=2, cancels=1, cancel_requests=1),
            ("cancelled_before_insertion", "cancel_request_after_insertion", "work_cancelled"),
            ("cancel-request-32800-after-insertion", "held-prompt-runs-after-cancel"), ("X09", "X11", "X13"),
        ),
        Scenario(
            "tool-failure",
            "a failure while a tool call runs: the call ends failed before the idle error",
            ("E6", "S6", "E3"), Bounds(clients=1, prompts=1, failures=1, tools=True),
            ("error_idle_seen",), ("no-idle-after-failure", "tool-status-after-idle"), ("X18",),
        ),
        Scenario(
            "permission-cancel",
            "work blocked on a permission (requires_action), then answered or cancelled",
            ("S8", "S9", "C7", "C11"), Bounds(clients=1, prompts=1, tools=True, permission=True, cancels=1),
            ("permission_pending", "work_cancelled"), ("lossy-transport",),
        ),
        Scenario(
            "resume-while-running",
            "a client resumes with replay while foreground work is running",
            ("R3", "S13", "R7"), Bounds(clients=1, prompts=1, disconnects=1, output=True),
            ("replay_while_running", "replayed_and_recognized"), (), ("X28",),
        ),
        Scenario(
            "agent-restart",
            "the agent restarts; retained messages replay under their IDs and new ones get fresh IDs",
            ("R5", "R4", "P5"), Bounds(clients=1, prompts=2, restarts=1),
            ("restart_kept_retained", "fresh_id_after_restart"), ("replay-new-ids", "restart-resets-ids"), ("X27",),
        ),
        # -- what the RFD allows the agent, and the placement and cancellation races --
        Scenario(
            "placement",
            "two clients; the other client sees the message, then the output it led to, in history order",
            ("P1", "U1", "S6"), Bounds(clients=2, prompts=1, output=True),
            ("other_client_renders", "output_follows_report"), ("late-echo",), ("X01",),
        ),
        Scenario(
            "insert-while-busy",
            "a prompt inserted while work runs joins that work; one idle ends both (the RFD leaves it open)",
            ("P17", "S1", "S3", "S6", "U1"), Bounds(clients=1, prompts=2, busy_inserts=True, output=True),
            ("inserted_while_busy", "echo_before_response"), ("late-echo",),
        ),
        Scenario(
            "agent-initiated-work",
            "the agent starts work on its own: running, output, idle, with no prompt (S17)",
            ("S17", "S2", "S18"), Bounds(clients=2, prompts=1, own_work=1, busy_inserts=True),
            ("agent_initiated_work", "inserted_while_busy"),
        ),
        Scenario(
            "running-before-insertion",
            "a foreground hook reports running before insertion; the prompt is then inserted or rejected (S4)",
            ("S4", "E11", "E1"), Bounds(clients=1, prompts=1, hooks=True, failures=1),
            ("running_before_insertion", "hook_outlives_rejection", "rejected_before_insertion"),
        ),
        Scenario(
            "permission-reconnect",
            "work awaits a permission while a client reconnects, and another client sees requires_action",
            ("S8", "S9", "S13", "C11"), Bounds(clients=2, prompts=1, tools=True, permission=True, disconnects=1),
            ("requires_action_after_reconnect", "requires_action_seen_by_other", "permission_pending"),
        ),
        Scenario(
            "abort-failure",
            "cancelled work raises an error while aborting: it still ends cancelled (C9)",
            ("C7", "C9"), Bounds(clients=1, prompts=1, cancels=1, failures=1, tools=True),
            ("abort_failure_reported_cancelled", "work_cancelled"), ("abort-fails-as-error",), ("X11",),
        ),
        Scenario(
            "cancel-request-routing",
            "two clients use the same request id; a $/cancel_request cancels only the sender's prompt (C3)",
            ("C3", "P19", "C1"), Bounds(clients=2, prompts=2, cancel_requests=1),
            ("cancelled_before_insertion", "two_clients_submitted"), ("cancel-request-by-id-only",), ("X09",),
        ),
        Scenario(
            "retention-forget",
            "the retention policy forgets a retained message after its insertion; a later replay leaves it out and "
            "keeps every other message (here the agent's output) under its ID",
            ("R4", "R5", "R1"), Bounds(clients=1, prompts=1, disconnects=1, forgets=1, output=True),
            ("forgotten_not_replayed", "replayed_and_recognized"),
        ),
        Scenario(
            "timeout-retry",
            "a client times out waiting for its prompt's response and submits the same text again: two submissions, "
            "two messages, each answered with its own ID",
            ("P12", "P5", "P9", "P3"), Bounds(clients=1, prompts=1, retries=1),
            ("retry_made_second_message", "identical_prompts_distinct_ids"), ("retry-deduplicated",),
        ),
        Scenario(
            "late-joiner",
            "a second client joins the live session for the first time on a new connection with session/resume, with "
            "replay (it sees the first client's message under its ID) or without (the snapshot alone)",
            ("R1", "R5", "S13", "U1"), Bounds(clients=2, prompts=1, late_joiners=1),
            ("late_joiner_replayed", "late_joiner_without_replay"),
        ),
        Scenario(
            "silent-runtime",
            "the runtime may take a prompt and never report its insertion: the adapter must keep the request "
            "pending, never answer it early; a $/cancel_request can still withdraw it",
            ("P3", "P7", "C1", "P2"), Bounds(clients=1, prompts=1, cancel_requests=1),
            ("cancelled_before_insertion",), ("silent-runtime",),
        ),
        Scenario(
            "notices",
            "the agent sends an advisory notice at any time, during work too: live only, never a stop reason",
            ("N5", "N3", "R10"), Bounds(clients=1, prompts=1, notices=1), ("notice_in_flight",), ("untitled-notice",),
        ),
        Scenario(
            "background-work",
            "a running tool call is detached at the idle that ends its turn: the idle lists it in background, it "
            "reports while idle, and a background: [] snapshot ends it once its final status went out",
            ("G1", "G2", "G3", "G4", "S11", "E9"), Bounds(clients=1, prompts=1, tools=True, background=True),
            ("background_reports_while_idle", "background_ended_by_snapshot"), ("background-dropped-unfinished",),
        ),
        Scenario(
            "background-overlap",
            "background work listed by one idle finishes while the agent's next foreground work (started on its own "
            "after the idle, G7) runs: its final status inside that work, and that work's state updates drop it",
            ("G1", "G2", "G4", "G7", "S11", "S17"),
            Bounds(clients=1, prompts=1, tools=True, background=True, own_work=1, background_overlap=True),
            ("background_finished_during_turn",),
        ),
        Scenario(
            "session-close",
            "session/close while work runs and a prompt is held: the work ends with idle cancelled, the held prompt "
            "gets -32800, and only then the close response; nothing more follows on that connection",
            ("C14", "G6", "C4", "C7"), Bounds(clients=1, prompts=2, closes=1),
            ("close_answered_after_cancelled_idle", "held_prompt_withdrawn_by_close"), ("close-answered-early",),
        ),
        Scenario(
            "parallel-permissions",
            "one turn makes two tool calls, each with its own permission request outstanding at once: answered in "
            "either order, or both cancelled by session/cancel",
            ("S8", "S9", "C11", "C16"),
            Bounds(clients=1, prompts=1, tools=True, permission=True, tool_calls=2, cancels=1),
            ("two_permissions_outstanding", "second_permission_answered_first", "cancel_with_two_permissions_pending"),
            ("cancel-leaves-a-permission",),
        ),
        Scenario(
            "native-ids",
            "the runtime names the prompts it inserts with its own native IDs, the adapter the messages it owns (an "
            "import here, a command likewise): both kinds in one session, every ID distinct",
            ("P8", "P5", "P4", "U3"), Bounds(clients=1, prompts=1, imports=1, native_ids=True),
            ("native_id_accepted", "native_and_adapter_ids"), ("native-ids-collide",),
        ),
        Scenario(
            "mixed-shapes",
            "each live user message report is chunked or full on its own, and a replay rebuilds it in the other "
            "shape: chunks live then full content on replay, and the reverse",
            ("U13", "R7", "R8", "U5", "U7"), Bounds(clients=1, prompts=1, disconnects=1, mixed_shapes=True),
            ("chunked_live_replayed_full", "full_live_replayed_chunked"), ("replay-full-then-chunks",),
        ),
        Scenario(
            "retention-trim",
            "an imported message, then a prompt; the retention policy forgets the first, and a replay carries the "
            "prompt under its own ID, not shifted onto the forgotten one's",
            ("R4", "R5", "R1"), Bounds(clients=1, prompts=1, imports=1, disconnects=1, forgets=1),
            ("later_message_replayed_after_trim",), ("replay-renumbered-after-forget",),
        ),
        Scenario(
            "late-joiner-load",
            "a client joins the live session late with session/load: the whole history replayed to it, then the "
            "response, while the other client's work goes on",
            ("R1", "R5", "S13", "U1"), Bounds(clients=2, prompts=1, late_joiners=1, load_joiners=True),
            ("late_joiner_loaded",),
        ),
        Scenario(
            "late-joiner-load-chunked",
            "a client joins late with session/load after the other client's message went out as chunks: the load's "
            "replay resets it (content []) before streaming its chunks again, so no copy is appended to",
            ("R7", "R8", "R13", "R1"), Bounds(clients=2, prompts=1, chunks=True, late_joiners=1, load_joiners=True),
            ("late_joiner_loaded", "load_reset_before_chunks"), ("load-replay-without-reset",),
        ),
        Scenario(
            "busy-import",
            "a message is imported while a prompt's work runs: reported live in its place, with no prompt response",
            ("U14", "S6", "P1"), Bounds(clients=1, prompts=1, imports=1, busy_imports=True),
            ("imported_while_busy",),
        ),
        Scenario(
            "busy-command",
            "a locally handled command is inserted while a prompt's work runs: the adapter runs it inside that work, "
            "answers it with its ID and reports it live",
            ("P10", "P11", "S1", "U1"), Bounds(clients=1, prompts=2, contents=("hi", "/compact"), busy_commands=True),
            ("command_while_busy",),
        ),
        Scenario(
            "stop-reasons",
            "work ends with every standard stop reason and a custom _-prefixed one; clients take each as the end",
            ("S5", "W6", "S2"), Bounds(clients=1, prompts=1, stop_reasons=True),
            ("custom_stop_reason_seen", "refusal_seen"), ("custom-stop-unprefixed",),
        ),
        Scenario(
            "hooks-and-cancels",
            "a foreground hook runs for a prompt with an ID assigned in advance; session/cancel or $/cancel_request "
            "withdraws the prompt before insertion, and the hook's work still ends with idle cancelled",
            ("S4", "P7", "P16", "C1", "C4", "C7", "S2"),
            Bounds(clients=1, prompts=1, hooks=True, early_ids=True, cancels=1, cancel_requests=1),
            ("running_before_insertion", "id_assigned_before_insertion", "hook_withdrawn_by_cancel_request",
             "hook_cancelled_by_session_cancel", "work_cancelled"),
            ("hook-left-running", "ends-only-on-cancel"),
        ),
        Scenario(
            "slow-work",
            "work may go on silently for any number of steps: weak fairness, not a bound, makes it end",
            ("S2", "S3", "P2"), Bounds(clients=1, prompts=1, output=True, slow_work=True),
            ("echo_before_response", "response_before_echo"),
        ),
    )
}


#: Scenarios whose ``rfd`` verdict waits on the rule monitors of ``rules/`` (another branch is teaching them that
#: live updates may arrive inside a replay window): ``acplab check --scenario NAME`` runs them, but they are in no
#: list the tests and figures walk.  Today ``rfd`` breaks ReplayResetsBeforeChunks (a live agent chunk inside the
#: window taken for replay, 8 steps) and WorkReportedByState (a live idle inside the window not counted, 11 steps).
PENDING: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "interleaved-resume",
            "a resume is served in steps (each replayed entry, the snapshot, the response) while work goes on: a "
            "held prompt inserted meanwhile, and the work's output, are streamed live inside the replay window",
            ("R3", "R5", "S13", "U1"),
            Bounds(clients=1, prompts=1, disconnects=1, output=True, interleaved_resume=True),
            ("live_inside_replay_window", "replay_while_running"),
        ),
    )
}


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name] if name in SCENARIOS else PENDING[name]
    except KeyError:
        raise InputError(f"unknown scenario {name!r}; see `acplab scenarios`") from None
