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
            ("early-success", "never-answers", "never-idles", "suppressed-echo", "report-under-runtime-id"), ("X01",),
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
            ("replayed_and_recognized", "streamed_user_message"), ("replay-without-reset", "echo-after-replay"), ("X26",),
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
            ("permission_pending", "work_cancelled"),
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
        # -- what the RFD allows the agent, and the placement and cancellation races (issue 13) --
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
            "slow-work",
            "work may go on silently for any number of steps: weak fairness, not a bound, makes it end",
            ("S2", "S3", "P2"), Bounds(clients=1, prompts=1, output=True, slow_work=True),
            ("echo_before_response", "response_before_echo"),
        ),
    )
}


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise InputError(f"unknown scenario {name!r}; see `acplab scenarios`") from None
