"""Which specs violate which property, and where: every property can fail.

A verdict of ``holds`` means something only if the property could have
failed.  For each property (every monitor, every goal of :mod:`.goals`, and
``NoStuckState``) :data:`KILLERS` names the specs (mutants, rejected
alternatives, findings) and the scenarios in which they violate it; a rule
monitor no model behaviour can reach (the model's codec never writes a
malformed frame) is killed by the hand-built captures of :mod:`.rules.cases`
instead (:func:`capture_killers`), which the trace checker flags.  The claims are data;
:func:`reproduce` re-checks one by exploring the scenario with that
property alone (so another property breaking first cannot hide it), and the
tests re-check every claim with a shortest counterexample.
"""

from __future__ import annotations

from typing import NamedTuple

from acplab.model.engine import Limits, Violation, explore

from .goals import GOALS
from .model import NO_STUCK_STATE, AcpModel
from .monitor_set import monitor_names, monitor_properties, monitor_set
from .rules.cases import CASES
from .scenarios import SCENARIOS
from .spec import SPECS


class Claim(NamedTuple):
    """``spec`` violates ``property`` when explored within ``scenario``'s bounds."""

    property: str
    spec: str
    scenario: str


#: property -> ((spec, scenario), ...): who kills it, and where
KILLERS: dict[str, tuple[tuple[str, str], ...]] = {
    # -- the rule monitors the model's mutants reach (the others: capture cases, :data:`CAPTURE_KILLERS`) --
    "ResponsesFollowInsertion": (("early-success", "report-order"), ("ack-before-insertion", "report-order"),
                                 ("error-after-insertion", "failure-after-insertion"),
                                 ("cancel-request-32800-after-insertion", "cancellation"),
                                 ("report-under-runtime-id", "report-order"), ("retry-deduplicated", "timeout-retry")),
    "PromptResultCarriesMessageId": (("v2-draft", "report-order"),),
    "InsertedIdsDistinct": (("reused-id", "identical-prompts"), ("restart-resets-ids", "agent-restart"),
                            ("id-leaked-after-rejection", "id-before-insertion"), ("native-ids-collide", "native-ids")),
    "AcceptedMessagesReportedLive": (("suppressed-echo", "report-order"), ("suppressed-echo", "placement")),
    "CancelRequestMatchesSender": (("cancel-request-by-id-only", "cancel-request-routing"),),
    "HeldPromptsWithdrawnOnCancel": (("held-prompt-runs-after-cancel", "cancellation"),),
    "WorkReportedByState": (("no-idle-after-failure", "failure-after-insertion"),
                            ("failed-state", "failure-after-insertion"), ("error-notice", "failure-after-insertion"),
                            ("separate-error-update-naive", "failure-after-insertion")),
    "WorkEndsWithIdle": (("never-idles", "report-order"), ("no-idle-after-failure", "failure-after-insertion"),
                         ("failed-state", "failure-after-insertion"), ("hook-left-running", "hooks-and-cancels"),
                         ("ends-only-on-cancel", "hooks-and-cancels")),
    "StateUpdatesWellFormed": (("failed-state", "failure-after-insertion"), ("custom-stop-unprefixed", "stop-reasons")),
    "CancelEndsWithCancelled": (("abort-fails-as-error", "abort-failure"),),
    "ErrorIdleCarriesErrorObject": (("error-without-details", "failure-after-insertion"),),
    "ToolCallsSettleBeforeIdle": (("tool-status-after-idle", "tool-failure"),),
    "UserMessageReportedInPlace": (("late-echo", "placement"),),
    "RetainedMessagesReplayed": (("replay-new-ids", "replay-identity"), ("replay-renumbered-after-forget", "retention-trim")),
    "ReplayResetsBeforeChunks": (("replay-without-reset", "streamed-replay"), ("replay-full-then-chunks", "mixed-shapes"),
                                 ("load-replay-without-reset", "late-joiner-load-chunked")),
    "ResumeSendsStateSnapshot": (("replay-unasked", "streamed-replay"),),
    "NoticesWellFormed": (("untitled-notice", "notices"),),
    "BackgroundSnapshotsConsistent": (("background-dropped-unfinished", "background-work"),),
    "CloseEndsQuietly": (("close-answered-early", "session-close"),),
    "PermissionsNotApprovedAfterCancel": (("cancel-leaves-a-permission", "parallel-permissions"),),
    "CommandsRunOnce": (("replay-reexecutes-command", "retained-command"),),
    "ClientsLinkByResponse": (("client-matches-by-content", "identical-prompts"),
                              ("client-matches-by-order", "multi-client"), ("reuse-jsonrpc-id", "multi-client")),
    "PromptsAnswered": (("never-answers", "report-order"), ("prompt-as-notification", "report-order"),
                        ("silent-runtime", "silent-runtime")),
    # -- the client-view monitors (:mod:`.monitors`) --
    "FeedFollowsHistory": (("late-echo", "placement"),),
    "ResponseNotHeldForWorkEnd": (("v1", "report-order"),),
    "OneMessagePerSubmission": (("v2-draft-naive", "report-order"),),
    "ViewMatchesHistory": (("echo-after-replay", "streamed-replay"),),
    "StateViewMatches": (("no-idle-after-failure", "failure-after-insertion"), ("reordering-transport", "report-order")),
    "OutcomeVisible": (("separate-error-update-naive", "failure-outcome"), ("error-notice", "failure-after-insertion")),
    NO_STUCK_STATE.name: (("never-answers", "report-order"),),
    # -- the design-neutral goals (goals.py) --
    "NoDuplicateMessages": (("v2-draft-naive", "report-order"), ("prompt-as-notification-naive", "report-order")),
    "NoMisattribution": (("client-matches-by-order", "multi-client"), ("client-correlation-token-naive", "multi-client")),
    "OutcomeKnown": (("error-after-insertion", "failure-after-insertion"), ("v1", "failure-after-insertion"),
                     ("error-notice", "failure-after-insertion")),
    "NoHang": (("never-answers", "report-order"), ("never-idles", "report-order")),
    "NoReexecution": (("replay-reexecutes-command", "retained-command"), ("rfd", "timeout-retry")),
    "ViewsConverge": (("echo-after-replay", "streamed-replay"), ("replay-without-reset", "streamed-replay")),
    "StateAgrees": (("failed-state-naive", "failure-after-insertion"), ("rfd-as-written", "failure-outcome")),
    "LostResponseRecoverable": (("rfd", "lost-response"),),
    "OwnMessageKnown": (("v2-draft", "report-order"),),
    "EndingKnownToAll": (("v1", "multi-client"), ("error-without-details", "failure-after-insertion")),
    "CancellationOutcomeKnown": (("cancel-request-32800-after-insertion", "cancellation"),),
}


#: mutant -> the rules it breaks (its catching monitor checks more: ``ResponsesFollowInsertion`` alone
#: stands for P3, P7, U3, E1, E2 and C1); the catching monitor's finding cites at least one of them
MUTANT_RULES: dict[str, tuple[str, ...]] = {
    "early-success": ("P3", "P7"), "reused-id": ("P5",), "error-after-insertion": ("E1", "E2"),
    "cancel-request-32800-after-insertion": ("C1", "E1"), "replay-without-reset": ("R7", "R8"),
    "replay-new-ids": ("R5", "R6"), "replay-reexecutes-command": ("R9",),
    "client-matches-by-content": ("P9", "R11", "U2"), "client-matches-by-order": ("P9", "R11", "U2"),
    "no-idle-after-failure": ("S2", "S5", "S3"), "never-answers": ("P2", "E1"), "never-idles": ("S2", "S3", "S9"),
    "late-echo": ("U1", "S6", "P1"), "restart-resets-ids": ("P5",), "cancel-request-by-id-only": ("C3", "P19"),
    "held-prompt-runs-after-cancel": ("C4", "P17"), "id-leaked-after-rejection": ("P16", "P5", "P7"),
    "abort-fails-as-error": ("C7", "C9"), "suppressed-echo": ("U1",), "report-under-runtime-id": ("P4", "U3", "W1"),
    "tool-status-after-idle": ("E6", "S6", "C8"), "error-without-details": ("E3", "E5"),
    "hook-left-running": ("S2", "S3", "C7"), "ends-only-on-cancel": ("S2", "S3"), "custom-stop-unprefixed": ("W6", "S5"),
    "replay-unasked": ("R1",), "retry-deduplicated": ("P3", "P12"),
    "untitled-notice": ("N5",), "background-dropped-unfinished": ("G4", "S11"),
    "close-answered-early": ("C14",), "cancel-leaves-a-permission": ("C11",),
    "native-ids-collide": ("P5",), "replay-full-then-chunks": ("R7", "R8"),
    "replay-renumbered-after-forget": ("R5", "R4"), "load-replay-without-reset": ("R7", "R8"),
}


def spec_rules(name: str) -> tuple[str, ...]:
    """The rules a spec breaks: a mutant's own (:data:`MUTANT_RULES`), or those of the monitor its
    ``breaks`` names (none for a spec that breaks nothing)."""
    if name in MUTANT_RULES:
        return MUTANT_RULES[name]
    breaks = SPECS[name].breaks
    return next((m.rules for m in monitor_properties() if m.name == breaks), ())


def property_names() -> list[str]:
    """Every property the ACP model checks: its monitors, ``NoStuckState``, then the goals."""
    return monitor_names() + [NO_STUCK_STATE.name] + [g.name for g in GOALS]


def capture_killers() -> dict[str, list[tuple[str, str]]]:
    """monitor -> ``(case, rule)`` of each capture case (:mod:`.rules.cases`) that makes it fail."""
    out: dict[str, list[tuple[str, str]]] = {}
    for case, (monitor, rule, *_rest) in CASES.items():
        out.setdefault(monitor, []).append((case, rule))
    return out


def claims(name: str | None = None) -> list[Claim]:
    """The claims, all or those about one property."""
    return [Claim(p, spec, sc) for p, pairs in KILLERS.items() if name in (None, p) for spec, sc in pairs]


def reproduce(claim: Claim, limits: Limits = Limits()) -> Violation | None:
    """Explore the claim's scenario for its spec, checking its property alone; the violation, or None.

    ``always`` properties stop at the first (shortest) violation; ``eventually``
    ones need the whole graph; a warning is returned like a violation.
    """
    spec = SPECS[claim.spec]
    only = {claim.property}
    monitors = monitor_set(only=only) + tuple(g for g in GOALS if g.name in only)
    model = AcpModel(spec, SCENARIOS[claim.scenario].bounds, monitors=monitors, symmetry=True)
    prop = next((p for p in model.properties() if p.name == claim.property), None)
    stuck = claim.property == NO_STUCK_STATE.name
    model.check_deadlock = stuck
    safety = stuck or (prop is not None and prop.expectation == "always" and prop.severity != "warning")
    result = explore(model, limits, stop_on_violation=bool(safety))
    found = [v for v in result.violations + result.warnings if v.property.name == claim.property]
    return found[0] if found else None


def shorter_exists(claim: Claim, length: int) -> bool:
    """Whether a violation of the claim's (safety) property exists within ``length - 1`` steps."""
    return reproduce(claim, Limits(max_depth=length)) is not None
