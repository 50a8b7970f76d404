"""Combinations of switches a spec file may not use, each with the sentence that says why.

A combination is refused when one switch is never read under the others'
values (it would be silently ignored) or the values contradict each other.
Each rule is a choice of this model (the RFD does not speak to the
alternative designs' switches); ``acplab switches`` lists them beside the
switches (:mod:`.switches`), and :func:`refuse_invalid` turns one into a
one-line input error (exit 2).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import NamedTuple

from acplab.model.errors import InputError

from .spec import RFD, Spec


class Combination(NamedTuple):
    """A combination of switch values the model refuses; ``applies(spec)`` is true when ``spec`` has it."""

    name: str
    switches: tuple[str, ...]
    applies: Callable[[Spec], bool]
    why: str


COMBINATIONS: tuple[Combination, ...] = (
    Combination(
        "rejection-signal-needs-receipt", ("rejection_signal", "respond_at"),
        lambda s: s.rejection_signal and s.respond_at not in ("receipt", "never"),
        "the prompt_rejected update rejects a prompt already answered at receipt (or, for a notification, "
        "never answered); with any other respond_at no prompt is answered before insertion, so the signal "
        "is never sent"),
    Combination(
        "notification-rejection-needs-token", ("rejection_signal", "respond_at", "client_correlation"),
        lambda s: s.rejection_signal and s.respond_at == "never" and not s.client_correlation.startswith("token"),
        "a notification's prompt_rejected update names the prompt's token; without tokens it names nothing "
        "the client can match"),
    Combination(
        "duplicate-rule-needs-chosen-ids", ("duplicate_ids", "message_ids"),
        lambda s: s.duplicate_ids != RFD.duplicate_ids and s.message_ids != "client_chosen",
        "the collision rule rejects a duplicate client-chosen messageId; with other message IDs there is "
        "none to compare"),
    Combination(
        "rejection-signal-needs-message-id", ("rejection_signal", "response"),
        lambda s: s.rejection_signal and s.response != "message_id",
        "the prompt_rejected update names the messageId the receipt response reserved; a response "
        "without a messageId leaves the client nothing to match the signal with, so it is ignored"),
    Combination(
        "stop-reason-needs-end-of-turn", ("response", "respond_at"),
        lambda s: s.response == "stop_reason" and s.respond_at != "end_of_turn",
        "v1's {stopReason} result reports how the turn ended; sent before the turn ends it claims an "
        "end that has not happened"),
    Combination(
        "notification-has-no-result", ("respond_at", "response"),
        lambda s: s.respond_at == "never" and s.response != RFD.response,
        "a prompt sent as a notification gets no response, so the shape of its result is never read"),
    Combination(
        "no-echo-no-echo-switches", ("echo", "report_id", "echo_before_work", "echo_after_replay"),
        lambda s: not s.echo and (s.report_id != RFD.report_id or s.echo_before_work != RFD.echo_before_work
                                  or s.echo_after_replay != RFD.echo_after_replay),
        "without the live user_message report (echo=false) nothing reads the report's ID, its place "
        "before later output, or its echo after a replay"),
)


def violated(spec: Spec) -> list[Combination]:
    """The combinations of :data:`COMBINATIONS` that ``spec`` has."""
    return [c for c in COMBINATIONS if c.applies(spec)]


def refuse_invalid(spec: Spec, where: str) -> Spec:
    """``spec`` unchanged, or a one-line :class:`InputError` naming the first invalid combination."""
    for rule in violated(spec):
        values = ", ".join(f"{k}={_show(getattr(spec, k))}" for k in rule.switches)
        raise InputError(f"{where}: switches {values} do not go together ({rule.name}): {rule.why}; "
                         f"see `acplab switches`")
    return spec


def unknown_switch(where: str, key: str, known) -> InputError:
    """The error for a switch not in ``known``: the closest one's name, and where to look."""
    close = difflib.get_close_matches(key, list(known), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return InputError(f"{where}: unknown switch {key!r}; {hint}`acplab switches` lists them all")


def _show(value) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value) if isinstance(value, str) else str(value)
