"""The design-neutral goals (:mod:`.goals`) judged on the v1 <-> v2 bridge models.

A bridge model has one client, one prompt and one agent, so only three goals
speak to it; each is checked on every final state (everything delivered,
the agent done):

* ``NoHang``: the client's prompt got its answer (v1: exactly one response).
* ``OutcomeKnown``: the client learns how the work ended as the agent
  reported it: the stop reason, and a failure's JSON-RPC error code and
  message where the agent had one (the granularity of the ACP model's
  ``OutcomeKnown``; ``data`` is shown in the sentence, not compared).  Through a v1 agent no
  bridge can know whether the message was inserted (X33), so insertion is
  not judged here.
* ``ViewsConverge`` (v2 agent streaming an agent message, B5): the v1
  client's text of the message equals the agent's final content.

:func:`with_goals` wraps a bridge model so that the explorer checks these
beside the model's own rules.
"""

from __future__ import annotations

from acplab.model.engine import Property, always
from acplab.model.wire import AgentMessage, AgentMessageChunk, ErrorResponse, PromptResult, PromptResultV1, StateUpdate

from .bridge_base import BState, CLIENT_RID, _events, new_type_error
from .bridges import V1AgentBehindBridge

#: the goals a bridge row can speak to (the others are judged on the ACP rows)
BRIDGE_GOALS = ("NoHang", "OutcomeKnown", "ViewsConverge")


def goal_properties(model) -> list[Property]:
    """The goals that apply to ``model``, as ``always`` properties of its final states."""
    v1_agent = isinstance(model, V1AgentBehindBridge)
    hang = _v2_client_hangs if v1_agent else _v1_client_hangs
    outcome = _v2_client_outcome if v1_agent else _v1_client_outcome
    checks = [("NoHang", hang, ("P2", "B6"), "no prompt waits forever and no work runs forever"),
              ("OutcomeKnown", outcome, ("B1", "B3", "E5"),
               "the client behind the bridge learns how the work ended, with the agent's error object")]
    if getattr(model, "updates", False):
        checks.append(("ViewsConverge", _v1_view, ("B5", "U5"),
                       "the v1 client's text of the agent message equals the agent's content"))
    props = []
    for name, check, rules, description in checks:
        props.append(always(name, _at_final(model, check), rules, description, _sentence(model, check)))
    return props


def applicable(model) -> tuple[str, ...]:
    """The names of the goals :func:`goal_properties` checks on ``model``."""
    return tuple(p.name for p in goal_properties(model))


def with_goals(model):
    """``model`` with its goals added to its properties (for the explorer)."""
    return _WithGoals(model)


class _WithGoals:
    def __init__(self, model) -> None:
        self._model = model

    def __getattr__(self, name):
        return getattr(self._model, name)

    def properties(self) -> list[Property]:
        return self._model.properties() + goal_properties(self._model)


def _at_final(model, check):
    return lambda s: not model.is_final(s) or check(model, s) is None


def _sentence(model, check):
    return lambda s: check(model, s)


# -- a v2 client behind the bridge (v1 agent) ------------------------------------------------------------


def _v2_client_hangs(model, s: BState) -> str | None:
    got = _events(s, "client_recv")
    if not any(isinstance(m, (PromptResult, ErrorResponse)) for m in got):
        return "the v2 client's prompt was never answered"
    return None


def _learned_error(got):
    """The error object a v2 client learned: from an idle error, a new-type idle, or an error response."""
    for m in got:
        if isinstance(m, StateUpdate) and m.state == "idle" and m.stop_reason == "error":
            return m.error
        if new_type_error(m) is not None:
            return new_type_error(m)
        if isinstance(m, ErrorResponse):
            return m.error
    return None


def _v2_client_outcome(model, s: BState) -> str | None:
    got = _events(s, "client_recv")
    if s.agent_end == "end_turn":
        if not any(isinstance(m, StateUpdate) and m.stop_reason == "end_turn" for m in got):
            return "the v1 agent ended the turn normally, but the v2 client never learned it"
        return None
    want = model.agent_error
    learned = _learned_error(got)
    if _outcome_of(learned) != _outcome_of(want):
        return f"the v1 agent failed with {_error_text(want)}, but the v2 client learned {_error_text(learned)}"
    return None


# -- a v1 client behind the bridge (v2 agent) ------------------------------------------------------------


def _v1_responses(s: BState) -> list:
    return [m for m in _events(s, "client_recv") if isinstance(m, (PromptResultV1, ErrorResponse)) and m.rid == CLIENT_RID]


def _v1_client_hangs(model, s: BState) -> str | None:
    if len(_v1_responses(s)) != 1:
        return f"the v1 client got {len(_v1_responses(s))} responses to its prompt"
    return None


def _v1_client_outcome(model, s: BState) -> str | None:
    answers = _v1_responses(s)
    if not answers:
        return None  # NoHang's to report
    got, end = answers[0], s.agent_end
    if end == "end_turn":
        ok = got == PromptResultV1(CLIENT_RID, "end_turn")
    elif end == "vendor":
        ok = isinstance(got, ErrorResponse) and "_vendor" in got.error.message
    elif end == "error_with_object":
        ok = isinstance(got, ErrorResponse) and _outcome_of(got.error) == _outcome_of(model.agent_failure(end))
    else:
        ok = isinstance(got, ErrorResponse)
    if ok:
        return None
    truth = _error_text(model.agent_failure(end)) if end == "error_with_object" else end
    learned = _error_text(got.error) if isinstance(got, ErrorResponse) else f"stopReason {got.stop_reason}"
    return f"the prompt's work ended {truth}, but the v1 client learned {learned}"


def _v1_view(model, s: BState) -> str | None:
    sent = [m for m in _events(s, "agent_sent") if isinstance(m, (AgentMessage, AgentMessageChunk))]
    want = ""
    for m in sent:
        want = "".join(m.content or ()) if isinstance(m, AgentMessage) else want + m.block
    shown = "".join(m.block for m in _events(s, "client_recv") if isinstance(m, AgentMessageChunk))
    if shown != want:
        return f"the v1 client shows the agent message as {shown!r}, the agent holds {want!r}"
    return None


def _outcome_of(error) -> tuple:
    """What OutcomeKnown compares of an error, on every model: its code and message (``data`` is not
    compared: the ACP model's clients are judged at this granularity too, goals_common.ending_known)."""
    return () if error is None else (error.code, error.message)


def _error_text(error) -> str:
    if error is None:
        return "no error object"
    data = f" with data {error.data.text}" if error.data is not None and hasattr(error.data, "text") else ""
    return f"{error.code} {error.message!r}{data}"
