"""The agent-side mechanisms of the RFD's rejected alternatives, as their proponents would build them.

Each function is one mechanism a FAQ alternative needs and the RFD (or the
design's own prose) names; ``agent.py``, ``agent_work.py`` and
``agent_resume.py`` call them at one point each, so the actors' own rules
stay where they are.  Every mechanism is behind a switch of
:class:`~acplab.model.acp.spec.Spec` whose default leaves the RFD's
behaviour unchanged.
"""

from __future__ import annotations

from .agent_common import AUTH_REQUIRED, INVALID_PARAMS, send
from .spec import Spec
from .state import SESSION, Agent
from acplab.model.wire import ErrorResponse, StateUpdate, UnknownUpdate, Update, canonical_json

#: the error a duplicate client-chosen messageId is rejected with (the RFD names none: a choice)
DUPLICATE_ID = INVALID_PARAMS


def duplicate_chosen_id(agent: Agent, prompt_id: str | None, spec: Spec) -> bool:
    """The collision rule client-chosen IDs need ("shared collision-avoidance rules", the FAQ): a prompt
    whose chosen messageId names a message in history, or a prompt already held, is rejected."""
    if spec.message_ids != "client_chosen" or spec.duplicate_ids != "reject" or prompt_id is None:
        return False
    return any(e.mid == prompt_id for e in agent.history) or any(r.prompt_id == prompt_id for r in agent.reqs)


def reject_duplicate(conn, rid) -> ErrorResponse:
    """The answer to a prompt the collision rule rejects (E1: an error means not inserted)."""
    return send(conn, ErrorResponse(rid, DUPLICATE_ID))


def notification_rejected(req, error, spec: Spec):
    """The fire-and-forget design's rejection notification (``respond_at="never"`` with
    ``rejection_signal``): a ``prompt_rejected`` update naming the prompt's token, to its connection.
    None when the design has no such notification (the prompt then silently vanishes)."""
    if spec.respond_at != "never" or not spec.rejection_signal or req.prompt_id is None:
        return None
    body = {"sessionUpdate": "prompt_rejected", "promptId": req.prompt_id,
            "error": {"code": error.code, "message": error.message}}
    return send((req.client, req.epoch), Update(SESSION, UnknownUpdate("prompt_rejected", canonical_json(body))))


def ending_report(how: str, reason: str, spec: Spec) -> str | None:
    """What the report that ends the work says: its stop reason, "" for an idle without one, None for
    no idle (``how``: the spec's ``failure_report`` for a failure, else "idle_error")."""
    if how == "error_update" and spec.error_update_stop == "error":
        return reason  # "two signals that must agree": the idle says error too
    return {"idle_error": reason, "failed_state": "failed", "error_update": "", "error_notice": ""}.get(how)


def kept_stop(how: str, reason: str, spec: Spec) -> str | None:
    """The stop reason the agent keeps for a resume snapshot (S14): what the ending report said, and a
    ``failed`` work's error (the state it ended in)."""
    if how == "failed_state" and spec.failed_state_vocabulary:
        return reason
    return reason if ending_report(how, reason, spec) == reason else None


def idle_after_error_update(spec: Spec) -> StateUpdate:
    """The idle that follows the separate error update: plain, or saying error (``error_update_stop``)."""
    return StateUpdate("idle", "error") if spec.error_update_stop == "error" else StateUpdate("idle")


def failed_snapshot(agent: Agent, spec: Spec) -> StateUpdate | None:
    """The resume snapshot of a session whose last work ended ``failed``: that state again (the design's
    own vocabulary); None when the last work did not fail or the design has no ``failed`` state."""
    if (spec.failure_report == "failed_state" and spec.failed_state_vocabulary and agent.fg == "idle"
            and agent.last_stop == "error"):
        return failed_update(AUTH_REQUIRED if spec.error_details else None, spec)
    return None


def failed_update(error, spec: Spec) -> StateUpdate:
    """The design's ``failed`` state; built at its strongest (``failed_state_vocabulary``) it carries the error
    object as the RFD's error idle does (E-rules: the code and message of how work failed), a choice of this
    project: the FAQ's alternative names the state only."""
    return StateUpdate("failed", None, error if spec.failed_state_vocabulary else None)
