"""Which specs violate which property, and where: every property can fail.

A verdict of ``holds`` means something only if the property could have
failed.  For each property (every monitor, every goal of :mod:`.goals`, and
``NoStuckState``) this table
names at least one spec (a mutant, a rejected alternative or a finding) and
the scenario in which that spec violates it.  The claims are data;
:func:`reproduce` re-checks one by exploring the scenario with that
property alone (so another property breaking first cannot hide it), and the
tests re-check every claim with a shortest counterexample.
"""

from __future__ import annotations

from typing import NamedTuple

from acplab.model.engine import Limits, Violation, explore

from .goals import GOALS
from .model import NO_STUCK_STATE, AcpModel
from .monitors import ALL_MONITORS
from .scenarios import SCENARIOS
from .spec import SPECS


class Claim(NamedTuple):
    """``spec`` violates ``property`` when explored within ``scenario``'s bounds."""

    property: str
    spec: str
    scenario: str


#: property -> ((spec, scenario), ...): who kills it, and where
KILLERS: dict[str, tuple[tuple[str, str], ...]] = {
    "SuccessOnlyAfterInsertion": (("early-success", "report-order"), ("ack-before-insertion", "report-order")),
    "SuccessCarriesInsertedId": (("report-under-runtime-id", "report-order"), ("v2-draft", "report-order")),
    "DistinctMessageIds": (("reused-id", "identical-prompts"), ("restart-resets-ids", "agent-restart")),
    "RejectedIdsNeverSurface": (("id-leaked-after-rejection", "id-before-insertion"),),
    "AcceptedMessageReportedLive": (("suppressed-echo", "report-order"),),
    "ErrorResponseMeansNotInserted": (("error-after-insertion", "failure-after-insertion"),),
    "CancelRequestErrorOnlyBeforeInsertion": (("cancel-request-32800-after-insertion", "cancellation"),),
    "CancelRequestMatchesSender": (("cancel-request-by-id-only", "cancel-request-routing"),),
    "CancelWithdrawsHeldPrompts": (("held-prompt-runs-after-cancel", "cancellation"),),
    "WorkEndsWithOneIdle": (("no-idle-after-failure", "failure-after-insertion"),
                            ("failed-state", "failure-after-insertion")),
    "RunningEndsInIdle": (("never-idles", "report-order"), ("failed-state", "failure-after-insertion")),
    "CancelledWorkEndsCancelled": (("abort-fails-as-error", "abort-failure"),),
    "FailureEndsWithErrorIdle": (("error-notice", "failure-after-insertion"),
                                 ("separate-error-update", "failure-after-insertion")),
    "ErrorIdleCarriesErrorObject": (("error-without-details", "failure-after-insertion"),),
    "ToolCallsTerminalBeforeIdle": (("tool-status-after-idle", "tool-failure"),),
    "UserMessageReportedInPlace": (("late-echo", "placement"), ("suppressed-echo", "placement")),
    "NothingOfEndedWorkAfterIdle": (("late-echo", "placement"), ("tool-status-after-idle", "tool-failure")),
    "FeedFollowsHistory": (("late-echo", "placement"),),
    "ReplayKeepsIds": (("replay-new-ids", "replay-identity"),),
    "ReplayResetsBeforeChunks": (("replay-without-reset", "streamed-replay"),),
    "CommandsNeverReexecuted": (("replay-reexecutes-command", "retained-command"),),
    "ClientNeverGuesses": (("client-matches-by-content", "identical-prompts"),
                           ("client-matches-by-order", "multi-client")),
    "BindingsMatchTruth": (("client-matches-by-order", "multi-client"), ("reuse-jsonrpc-id", "multi-client")),
    "EveryPromptAnswered": (("never-answers", "report-order"), ("prompt-as-notification", "report-order")),
    "ResponseNotHeldForWorkEnd": (("v1", "report-order"),),
    "OneMessagePerSubmission": (("v2-draft", "report-order"),),
    "ViewMatchesHistory": (("echo-after-replay", "streamed-replay"),),
    "StateViewMatches": (("no-idle-after-failure", "failure-after-insertion"),),
    "OutcomeVisible": (("separate-error-update", "failure-outcome"), ("error-notice", "failure-after-insertion")),
    NO_STUCK_STATE.name: (("never-answers", "report-order"),),
    # -- the design-neutral goals (goals.py) --
    "NoDuplicateMessages": (("v2-draft", "report-order"), ("prompt-as-notification", "report-order")),
    "NoMisattribution": (("client-matches-by-order", "multi-client"), ("client-correlation-token", "id-collision")),
    "OutcomeKnown": (("error-after-insertion", "failure-after-insertion"), ("v1", "failure-after-insertion"),
                     ("error-notice", "failure-after-insertion")),
    "NoHang": (("never-answers", "report-order"), ("never-idles", "report-order")),
    "NoReexecution": (("replay-reexecutes-command", "retained-command"),),
    "ViewsConverge": (("echo-after-replay", "streamed-replay"), ("replay-without-reset", "streamed-replay")),
    "StateAgrees": (("failed-state", "failure-after-insertion"), ("rfd-as-written", "failure-outcome")),
    "LostResponseRecoverable": (("rfd", "lost-response"),),
}


def property_names() -> list[str]:
    """Every property the ACP model checks: its monitors, ``NoStuckState``, then the goals."""
    return [m.name for m in ALL_MONITORS] + [NO_STUCK_STATE.name] + [g.name for g in GOALS]


def claims(name: str | None = None) -> list[Claim]:
    """The claims, all or those about one property."""
    return [Claim(p, spec, sc) for p, pairs in KILLERS.items() if name in (None, p) for spec, sc in pairs]


def reproduce(claim: Claim, limits: Limits = Limits()) -> Violation | None:
    """Explore the claim's scenario for its spec, checking its property alone; the violation, or None.

    ``always`` properties stop at the first (shortest) violation; ``eventually``
    ones need the whole graph; a warning is returned like a violation.
    """
    monitors = tuple(m for m in ALL_MONITORS + GOALS if m.name == claim.property)
    model = AcpModel(SPECS[claim.spec], SCENARIOS[claim.scenario].bounds, monitors=monitors, symmetry=True)
    stuck = claim.property == NO_STUCK_STATE.name
    model.check_deadlock = stuck
    safety = stuck or (monitors and monitors[0].expectation == "always" and monitors[0].level == "error")
    result = explore(model, limits, stop_on_violation=bool(safety))
    found = [v for v in result.violations + result.warnings if v.property.name == claim.property]
    return found[0] if found else None


def shorter_exists(claim: Claim, length: int) -> bool:
    """Whether a violation of the claim's (safety) property exists within ``length - 1`` steps."""
    return reproduce(claim, Limits(max_depth=length)) is not None
