"""What each rejected alternative's row is built with: its mechanisms, and where each comes from.

Per alternative of :data:`.spec.VARIANTS` (naive rows included), the
mechanisms its row has, each with the sentence of the RFD (or of the
design's own prose) it comes from.  A mechanism no sentence asks for says
so: a choice, listed as a question for the RFD.
"""

from __future__ import annotations

from .spec import NAIVE, VARIANTS

_FAQ = "the RFD's FAQ"
#: per alternative: ((mechanism, its source), ...)
MECHANISMS: dict[str, tuple[tuple[str, str], ...]] = {
    "v2-draft": (
        ("`{}` success result", "the draft (D1): the response at acceptance is an empty result"),
        ("client drops its optimistic copy on `{}`", "no sentence: the draft's client has nothing to link the copy "
                                                     "with, so it shows the reported message (a choice)"),
    ),
    "client-correlation-token": (
        ("promptId on the request, kept with the message, echoed live and on replay", _FAQ + ": \"A client-generated "
         "promptId on the request, preserved with the accepted input and its replayed user message\""),
        ("tokens unique across clients", _FAQ + ": \"a uniqueness requirement across clients\""),
        ("returned messageId kept, authoritative while connected", _FAQ + ": \"it could be combined with a returned "
                                                                          "messageId\""),
        ("token binds only a submission a cut left ambiguous", _FAQ + ": \"could identify a submission even if the "
                                                                      "response is lost\""),
    ),
    "client-chosen-id": (
        ("client-chosen canonical messageId on the request", _FAQ + ": \"Let the client choose the canonical message "
                                                                    "ID\""),
        ("IDs unique across clients", _FAQ + ": \"require shared collision-avoidance rules\""),
        ("agent rejects a prompt whose ID is taken (error response, not inserted)", _FAQ + ": \"require shared "
         "collision-avoidance rules\" (the rule itself is a choice: reject, with -32602)"),
    ),
    "prompt-as-notification": (
        ("prompt sent as a notification: no response", _FAQ + ": \"a bidirectional stream of notifications on the "
                                                               "session\""),
        ("client token echoed in the user_message", _FAQ + ": \"The Agent would still need to replay that message to "
                                                           "show where it got accepted\" (the token is a choice: "
                                                           "without it the sender cannot tell its message)"),
        ("prompt_rejected notification naming the token", _FAQ + ": \"a notification-based way of emitting errors for "
                                                                  "invalid prompts that would need to be tied to "
                                                                  "fire-and-forget notifications\""),
    ),
    "failed-state": (
        ("a `failed` state ends failed work", _FAQ + ": \"Report failures after insertion with a `failed` state\""),
        ("clients know `failed` (the design's vocabulary)", "no sentence: the design defines the state its clients "
                                                            "read; the FAQ's cost is for existing clients"),
        ("a resume snapshot after a failure says `failed`", "no sentence: the state persists until new work (a "
                                                            "choice)"),
    ),
    "separate-error-update": (
        ("an error update carrying the error object", _FAQ + ": \"An error update followed by idle\""),
        ("the idle after it says stopReason error", _FAQ + ": \"two signals that must agree\""),
    ),
    "error-sibling-field": (
        ("error beside a plain-string stopReason", _FAQ + ": \"Keeping stopReason a plain string and adding error as "
                                                          "a sibling field\""),
        ("agents send error only with stopReason error", _FAQ + ": \"a prose rule that Agents send error only with "
                                                                "stopReason: \\\"error\\\"\""),
        ("clients ignore it otherwise", _FAQ + ": \"and that Clients ignore it otherwise\""),
    ),
    "ack-before-insertion": (
        ("receipt response under a reserved messageId", _FAQ + ": \"acknowledge receipt or reservation rather than "
                                                               "insertion\""),
        ("prompt_rejected update for a later rejection", "no sentence: what a receipt needs once the request no "
                                                         "longer waits for rejection (a choice)"),
    ),
    "reuse-jsonrpc-id": (("the request id is the messageId", _FAQ + ": \"Reuse the JSON-RPC request ID\""),),
    "reuse-jsonrpc-id-proxy": (("the request id is the messageId, behind a proxy", _FAQ + ": \"proxies may rewrite "
                                                                                          "it\""),),
    "error-notice": (("an error-severity notice, then a plain idle", "the RFD's notice table: notices are for "
                                                                     "failures where work continues"),),
    "new-error-type": (("a new {kind, message} error type", _FAQ + ": \"Reusing the JSON-RPC error object\" "
                                                                   "(its alternative)"),),
}
for _name in [n for n in VARIANTS if n.endswith("-naive")]:
    MECHANISMS[_name] = (("the build of before", VARIANTS[_name].description.removeprefix(NAIVE)),)


def design_of(name: str) -> str:
    """The design a row builds: its name without ``-naive``."""
    return name[: -len("-naive")] if name.endswith("-naive") else name
