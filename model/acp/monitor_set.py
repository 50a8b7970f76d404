"""The one monitor set every driver runs: the trace checker's rule monitors, plus what clients show.

The explorer, the simulator, the variant matrix and ``trace check``
judge with the same classes (:mod:`.rules`).  In the model they are fed by
:class:`~.rules_in_model.RuleMonitors` (one front end, each rule monitor its own
property); the only model monitors left (:data:`.monitors.CLIENT_MONITORS`)
judge what a client shows and believes, which no capture carries.  The
trace proxies (:data:`PROXIES`) are left out: in the model the internal
events feed the exact monitors they approximate, and a proxy's history
(which user messages looked like which prompt) would tell states apart.

:data:`RENAMED` keeps the names of the model monitors the rule monitors
replaced, so that a spec file naming one gets told the new name.
"""

from __future__ import annotations

from .rules_in_model import RuleMonitors, switches_for
from .monitors import CLIENT_MONITORS
from .rules import make_monitors

#: trace proxies for internal rules, and wire checks an exact internal one supersedes
PROXIES = ("PromptOutcomesMatchInsertion", "ReplayKeepsIds", "ReplayedCommandsNotRerun", "AgentWorkReportsRunning",
           "MessageIdsDistinct")

#: old model monitor -> the rule monitors that judge its rules now (when the rule monitors replaced them)
RENAMED = {
    "DistinctMessageIds": ("InsertedIdsDistinct",),
    "RejectedIdsNeverSurface": ("InsertedIdsDistinct", "ResponsesFollowInsertion"),
    "AcceptedMessageReportedLive": ("AcceptedMessagesReportedLive",),
    "ToolCallsTerminalBeforeIdle": ("ToolCallsSettleBeforeIdle",),
    "NothingOfEndedWorkAfterIdle": ("ToolCallsSettleBeforeIdle",),
    "EveryPromptAnswered": ("PromptsAnswered",),
    "SuccessCarriesInsertedId": ("PromptResultCarriesMessageId", "ResponsesFollowInsertion"),
    "SuccessOnlyAfterInsertion": ("ResponsesFollowInsertion",),
    "ErrorResponseMeansNotInserted": ("ResponsesFollowInsertion",),
    "CancelRequestErrorOnlyBeforeInsertion": ("ResponsesFollowInsertion",),
    "WorkEndsWithOneIdle": ("WorkReportedByState", "WorkEndsWithIdle"),
    "FailureEndsWithErrorIdle": ("WorkReportedByState", "StateUpdatesWellFormed"),
    "RunningEndsInIdle": ("WorkEndsWithIdle", "RequiresActionResolves"),
    "CancelledWorkEndsCancelled": ("CancelEndsWithCancelled",),
    "CancelWithdrawsHeldPrompts": ("HeldPromptsWithdrawnOnCancel",),
    "ReplayKeepsIds": ("RetainedMessagesReplayed",),
    "CommandsNeverReexecuted": ("CommandsRunOnce",),
    "ClientNeverGuesses": ("ClientsLinkByResponse",),
    "BindingsMatchTruth": ("ClientsLinkByResponse",),
}


def rule_members() -> list:
    """The rule monitors the model runs (the RFD's dialect), proxies left out."""
    return [m for m in make_monitors(switches_for(None)) if m.name not in PROXIES]


def monitor_set(skip=frozenset(), only=None, memo: bool = True) -> tuple:
    """The model's monitors: one group of rule monitors, then the client-view monitors (a step that breaks a
    rule of each reports the rule monitor's first: what a capture would show).

    Every spec is judged by the RFD's rules (its dialect forced): the model is
    the RFD's, and a variant's departures are what the rules table shows
    (declared ``by_design`` where they are its definition).  ``trace check``
    instead judges a capture by the version its ``initialize`` negotiated.
    ``skip`` leaves properties out by name; ``only`` keeps just those named;
    ``memo`` keeps the rule monitors' answers per (bookkeeping, event), which
    pays where states recur (the explorer), not in a simulated run.
    """
    def wanted(name: str) -> bool:
        return name not in skip and (only is None or name in only)

    members = [m for m in rule_members() if wanted(m.name)]
    group = (RuleMonitors(members, spec=None, name="RuleMonitors", members_as_properties=True, memo=memo),) \
        if members else ()
    return group + tuple(m for m in CLIENT_MONITORS if wanted(m.name))


def monitor_properties() -> list:
    """Every property of the monitor set, in order, each with ``name``, ``rules``, ``description``,
    ``expectation`` and ``level`` (a rule monitor as its group's member)."""
    out = []
    for m in monitor_set():
        members = getattr(m, "members", None)
        out.extend(members() if members is not None else (m,))
    return out


def monitor_names() -> list[str]:
    """The names of every property of the monitor set."""
    return [m.name for m in monitor_properties()]


def replaced_by(name: str) -> str | None:
    """For a model monitor the swap removed, the sentence naming its successors; None for any other name."""
    if name in RENAMED:
        return f"{name} was replaced by {' and '.join(RENAMED[name])}"
    return None
