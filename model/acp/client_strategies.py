"""The client-side mechanisms and strategies of the RFD's rejected alternatives.

``client.py`` calls these at one point each.  A *strategy* is how a client
links a report to its own submission, or what it makes of a result or a
state; :data:`STRATEGIES` lists, per design, the sane ones its client
authors could choose (the matrix explores each and names the best and the
worst).  Guessing by content or order is not among them: those are the
``client-matches-by-*`` mutants; nor is reading an idle's ``error`` beside
another stop reason, a client bug the matrix applies as a fault column.
"""

from __future__ import annotations

from typing import NamedTuple

from .spec import Spec

#: link a report to a submission by the client's own token (always, or only after a cut)
TOKEN_STRATEGIES = ("token", "token_after_cut")


def prompt_id(spec: Spec, ordinal: int, rid: int, collide: bool) -> str | None:
    """A rejected alternative's client-side identifier: a correlation token or a chosen messageId.

    ``global`` identifiers are drawn from one space without repeats, as a UUID
    is (``ordinal`` numbers the submission among all clients'); ``per_client``
    ones, and any under the colliding-generators fault (``collide``), are the
    client's request counter: two clients' first identifiers are equal.
    """
    n = rid if collide or spec.client_ids == "per_client" else ordinal
    if spec.client_correlation in TOKEN_STRATEGIES:
        return f"p{n}"
    if spec.message_ids == "client_chosen":
        return f"k{n}"
    return None


def binding(spec: Spec) -> str:
    """How the client links a report it cannot link by a response: "own_id", a token strategy, ..."""
    return "own_id" if spec.message_ids == "client_chosen" else spec.client_correlation


def token_may_bind(spec: Spec, status: str) -> bool:
    """Whether a report's token may bind a submission in ``status``: always (``token``), or only once a
    cut left it ambiguous (``token_after_cut``: while connected the response is authoritative)."""
    return spec.client_correlation == "token" or status == "ambiguous"


def drops_copy_on_empty_result(spec: Spec) -> bool:
    """The draft's client drops its optimistic copy on a `{}` success (the report will show the message)."""
    return spec.empty_result_drops_copy


def ending(update, spec: Spec) -> tuple[str, str] | None:
    """``(fg, last_stop)`` for a state the design defines beyond the RFD's, or an error the client reads
    beside another stop reason; None when the RFD's reading applies (S15, W7).

    ``failed`` is the end of work with an error to a client that knows the design's vocabulary.  An
    idle's ``error`` beside another stop reason is read by a client with the stray-error bug
    (``stray_error_read``) only where the shape admits it there (``error_shape="sibling"``): under the
    RFD's union a decoder generated from the schema has no ``error`` on a non-error variant (W7), so
    the bug cannot show (a choice: a client reading raw JSON by hand is not modelled).
    """
    if update.state == "failed" and spec.failed_state_vocabulary:
        return "idle", "error"
    if (update.state == "idle" and getattr(update.error, "code", None) is not None and spec.stray_error_read
            and spec.error_shape == "sibling"):
        return "idle", "error"
    return None


def rejection_matches(sub, body: dict) -> bool:
    """Whether a ``prompt_rejected`` update rejects ``sub``: the reserved messageId of a received prompt
    (two-phase), or the token of a notification still unresolved (fire-and-forget)."""
    if "promptId" in body:
        return sub.pid == body["promptId"] and sub.status in ("sent", "ambiguous")
    return sub.mid == body.get("messageId") and sub.status == "received"


class Strategy(NamedTuple):
    """A client strategy: its name, what it does, and the switches it sets on the design's row."""

    name: str
    meaning: str
    switches: tuple = ()


_BY_RESPONSE = Strategy("by-response", "bind by the response's messageId (P9); a token, if any, unused",
                        (("client_correlation", "message_id"),))
_BY_TOKEN = Strategy("by-token", "bind by the client's token wherever a report carries it",
                     (("client_correlation", "token"),))
_TOKEN_AFTER_CUT = Strategy("response-live-token-after-cut", "the response is authoritative while connected; "
                            "the token binds only a submission a cut left ambiguous",
                            (("client_correlation", "token_after_cut"),))

#: per design (the row's name without ``-naive``), the sane strategies its client authors could choose
STRATEGIES: dict[str, tuple[Strategy, ...]] = {
    "client-correlation-token": (_BY_RESPONSE, _BY_TOKEN, _TOKEN_AFTER_CUT),
    "prompt-as-notification": (_BY_TOKEN,),
    "v2-draft": (
        Strategy("keep-copy", "keep the optimistic copy after `{}` (it can never be linked)",
                 (("empty_result_drops_copy", False),)),
        Strategy("drop-copy-on-empty", "drop the optimistic copy on `{}`; show the message as reported",
                 (("empty_result_drops_copy", True),)),
    ),
    "failed-state": (
        Strategy("rfd-vocabulary", "know only the RFD's states: `failed` is unknown, shown as busy (S15)",
                 (("failed_state_vocabulary", False),)),
        Strategy("design-vocabulary", "know `failed` as the end of work with an error",
                 (("failed_state_vocabulary", True),)),
    ),
}


def strategies_for(design: str) -> tuple[Strategy, ...]:
    """The design's strategies; every other design's client has one: bind by the response (or by
    what the design defines instead), as its row is built."""
    return STRATEGIES.get(design, ())
