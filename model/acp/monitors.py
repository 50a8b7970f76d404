"""Rule monitors: observers of the event stream, each tied to RULES.md IDs.

The monitor protocol is :class:`~.monitors_base.Monitor`; the monitors live
by area (:mod:`.monitors_response`, :mod:`.monitors_order`,
:mod:`.monitors_outcome`, :mod:`.monitors_view`) and are gathered here, in
the order that decides which one a step that breaks two rules reports.
``acplab properties`` lists them with the specs that violate each one
(:mod:`.killers`).
"""

from __future__ import annotations

from .monitors_base import MESSAGE_UPDATES, TERMINAL_TOOL, Monitor  # noqa: F401 - the public protocol
from .monitors_order import FeedFollowsHistory, NothingOfEndedWorkAfterIdle, UserMessageReportedInPlace
from .monitors_outcome import (
    CancelledWorkEndsCancelled,
    ErrorIdleCarriesErrorObject,
    FailureEndsWithErrorIdle,
    OutcomeVisible,
    RunningEndsInIdle,
    StateViewMatches,
    ToolCallsTerminalBeforeIdle,
    WorkEndsWithOneIdle,
)
from .monitors_response import (
    AcceptedMessageReportedLive,
    CancelRequestErrorOnlyBeforeInsertion,
    CancelRequestMatchesSender,
    CancelWithdrawsHeldPrompts,
    DistinctMessageIds,
    ErrorResponseMeansNotInserted,
    EveryPromptAnswered,
    RejectedIdsNeverSurface,
    ResponseNotHeldForWorkEnd,
    SuccessCarriesInsertedId,
    SuccessOnlyAfterInsertion,
)
from .monitors_view import (
    BindingsMatchTruth,
    ClientNeverGuesses,
    CommandsNeverReexecuted,
    OneMessagePerSubmission,
    ReplayKeepsIds,
    ReplayResetsBeforeChunks,
    ViewMatchesHistory,
)

ALL_MONITORS: tuple[Monitor, ...] = (
    SuccessOnlyAfterInsertion(),
    SuccessCarriesInsertedId(),
    DistinctMessageIds(),
    RejectedIdsNeverSurface(),
    AcceptedMessageReportedLive(),
    ErrorResponseMeansNotInserted(),
    CancelRequestErrorOnlyBeforeInsertion(),
    CancelRequestMatchesSender(),
    CancelWithdrawsHeldPrompts(),
    WorkEndsWithOneIdle(),
    RunningEndsInIdle(),
    CancelledWorkEndsCancelled(),
    FailureEndsWithErrorIdle(),
    ErrorIdleCarriesErrorObject(),
    ToolCallsTerminalBeforeIdle(),
    UserMessageReportedInPlace(),
    NothingOfEndedWorkAfterIdle(),
    FeedFollowsHistory(),
    ReplayKeepsIds(),
    ReplayResetsBeforeChunks(),
    CommandsNeverReexecuted(),
    ClientNeverGuesses(),
    BindingsMatchTruth(),
    EveryPromptAnswered(),
    ResponseNotHeldForWorkEnd(),
    OneMessagePerSubmission(),
    ViewMatchesHistory(),
    StateViewMatches(),
    OutcomeVisible(),
)

__all__ = ["ALL_MONITORS", "MESSAGE_UPDATES", "Monitor", "TERMINAL_TOOL"] + [type(m).__name__ for m in ALL_MONITORS]
