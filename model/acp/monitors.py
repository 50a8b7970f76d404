"""The model monitors that judge what clients show: the part of the monitor set no capture carries.

Every rule of the RFD that the agent's side of a connection (or its internal
events) can witness is judged by the trace checker's rule monitors
(:mod:`.rules`, run in the model by :class:`~.adapter.RuleMonitors`; the
whole set is :func:`~.monitor_set.monitor_set`).  What is left here reads a
client's record, which no recording carries: what a client shows
(``ViewMatchesHistory``, ``FeedFollowsHistory``, ``StateViewMatches``,
``OneMessagePerSubmission``), what it knows of an outcome
(``OutcomeVisible``), and whether a v1-style response holds the client until
the work ends (``ResponseNotHeldForWorkEnd``).  The protocol is
:class:`~.monitors_base.Monitor`.
"""

from __future__ import annotations

from .monitors_base import Monitor
from .monitors_order import FeedFollowsHistory
from .monitors_outcome import OutcomeVisible, StateViewMatches
from .monitors_response import ResponseNotHeldForWorkEnd
from .monitors_view import OneMessagePerSubmission, ViewMatchesHistory

#: in the order that decides which one a step that breaks two rules reports
CLIENT_MONITORS: tuple[Monitor, ...] = (
    FeedFollowsHistory(),
    ResponseNotHeldForWorkEnd(),
    OneMessagePerSubmission(),
    ViewMatchesHistory(),
    StateViewMatches(),
    OutcomeVisible(),
)

__all__ = ["CLIENT_MONITORS", "Monitor"] + [type(m).__name__ for m in CLIENT_MONITORS]
