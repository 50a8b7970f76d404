"""What the RFD claims of each alternative, and what the matrix makes of the claim.

Each claim paraphrases the RFD's FAQ and names the goals the argument
predicts the alternative fails (``fails``) and those it predicts it does
better on (``gains``).  A verdict compares those predictions with the
computed goal cells of the alternative's rows and of the matching ``rfd``
rows: nothing here is a cell, only what the RFD said.  A claim that names
no goal is one the model cannot speak to (a cost in the schema or the
ecosystem, not in what a client can observe).
"""

from __future__ import annotations

from typing import NamedTuple


class Claim(NamedTuple):
    text: str
    fails: tuple[str, ...] = ()
    gains: tuple[str, ...] = ()
    #: what the alternative does better that no goal measures (said plainly, not computed)
    also: str = ""
    #: how the model renders it, or evidence beyond the goals, with the test that shows it
    note: str = ""


CLAIMS: dict[str, Claim] = {
    "rfd-as-written": Claim(
        "the RFD names current-state synchronisation on resume a follow-up; `rfd` takes the schema's S13 "
        "snapshot, this row shows what deferring it costs", ("StateAgrees",)),
    "v1": Claim(
        "v1's response spans the turn: it is held until the work ends, and a failure reported as an error "
        "response leaves open whether the message was inserted", ("OutcomeKnown",),
        also="one response carries both the acknowledgement and the outcome, with no second signal to correlate"),
    "v2-draft": Claim(
        "an empty acceptance result leaves a correlation gap: the submitting client cannot tell which accepted "
        "message is its own, so it cannot reconcile its optimistic copy", ("NoDuplicateMessages",),
        note="the draft's client drops its optimistic copy on `{}` and shows the message as reported, so no copy is "
             "left to reconcile; it still cannot tell which reported message is its own, which no goal here judges "
             "(the naive row keeps the copy)"),
    "client-correlation-token": Claim(
        "a second identifier needs uniqueness across clients and a mapping to history messages; it could "
        "identify a submission even if the response is lost, and could be combined with a returned messageId",
        ("NoMisattribution",), ("LostResponseRecoverable",),
        also="it also names pending input before the agent assigns an ID",
        note="tokens are unique across clients and paired with the returned messageId, which is authoritative while "
             "connected; the token binds only a submission a cut left ambiguous. Colliding generators are a fault "
             "column; the naive row numbers tokens per client and binds by token, and misattributes"),
    "ack-before-insertion": Claim(
        "a receipt or reservation is not insertion: the RFD keeps the request pending until insertion or "
        "rejection, and an earlier receipt would be a separate acknowledgement for a future queueing design",
        also="the submitter learns sooner that its prompt arrived, and holds its ID before insertion",
        note="the two-phase design: the receipt carries a reserved messageId, then the user_message reports "
             "insertion or a prompt_rejected update a later rejection (or a withdrawal by session/cancel)"),
    "reuse-jsonrpc-id": Claim(
        "JSON-RPC ids are chosen per sender and reused across connections, so they cannot be message "
        "identities", ("NoMisattribution",),
        also="no new field at all: the id the client already has names the message",
        note="with one client the request id works as a token and recovers a lost response; with two, both "
             "clients' first request is r1"),
    "reuse-jsonrpc-id-proxy": Claim(
        "proxies may rewrite JSON-RPC ids, so an id the client chose is not the one the agent saw",
        ("NoDuplicateMessages",)),
    "client-chosen-id": Claim(
        "client-chosen canonical IDs bring several sources of IDs and shared collision-avoidance rules",
        ("ViewsConverge",), also="the client knows the ID before any response, as a token would",
        note="IDs are unique across clients (a UUID-like generator) and the agent rejects a prompt whose ID is "
             "taken (the collision rule); colliding generators are a fault column; the naive row has per-client IDs "
             "and no collision rule"),
    "prompt-as-notification": Claim(
        "a fire-and-forget prompt has no channel for errors and no way to tell the sender where (or whether) "
        "its message was accepted", ("OutcomeKnown", "NoDuplicateMessages"),
        also="symmetry: clients and agent both only notify",
        note="the notification carries a client token (unique across clients) that the agent echoes in the "
             "user_message, and a rejection is a prompt_rejected notification naming it, the error channel the FAQ "
             "says the design would need; the naive row has neither, and its client never learns which message "
             "is its own"),
    "failed-state": Claim(
        "a client that does not know a new `failed` state cannot tell that the work ended; an unknown stop "
        "reason still arrives on an idle", ("StateAgrees",),
        note="judged with the design's own vocabulary: its clients know `failed` as the end of work with an error, "
             "and a resume snapshot after a failure says `failed`; the FAQ's cost, an existing client that does "
             "not know `failed`, is the naive row and the rfd-vocabulary strategy"),
    "separate-error-update": Claim(
        "two signals must agree, and the error is not part of the state snapshot that mirrors and resume carry",
        ("OutcomeKnown",),
        note="the idle after the error update says stopReason error, so the two signals agree; the naive row's "
             "plain idle is what makes them disagree"),
    "error-notice": Claim(
        "notices are advisory: clients may ignore them, and they must not report fatal errors",
        ("OutcomeKnown",)),
    "error-sibling-field": Claim(
        "the same wire format, but the schema cannot tie error to one stop reason: a prose rule every "
        "implementation enforces by hand", ("OutcomeKnown",),
        also="a plain-string stopReason is simpler to type in languages without tagged unions",
        note="agent and client both follow the prose rule here; forgetting it is a fault column applied to every "
             "row with an error on an idle, rfd included (stale-error, and stale-error+lenient-client). On the "
             "wire the stale idle {stopReason: end_turn, error: {...}} is valid under a schema with the sibling "
             "field and rejected by the RFD's union as a generated decoder reads it (both derived from the "
             "official schema in tests/test_goals.py), so under the RFD's shape the lenient client has no error "
             "to read (W7)"),
    "new-error-type": Claim(
        "reusing the JSON-RPC error object keeps one shape before and after insertion and lets bridges "
        "convert in both directions without losing information", ("OutcomeKnown",),
        also="a type of its own could carry categories the JSON-RPC code space lacks",
        note="the model's new type is {kind, message} with the kinds auth_required and internal: a failure with "
             "another code or with data loses them in both directions, one it covers converts back without loss; "
             "a type keeping the code space and data would be the JSON-RPC object by another name"),
}


def verdict(claim: Claim | None, fails_here: set[str], holds_here: set[str], rfd_fails: set[str]) -> tuple[str, str]:
    """``(word, sentence)``: whether the model confirms the claim, refutes it, or cannot speak to it.

    ``fails_here``: goals the alternative violates on some row; ``holds_here``: goals it meets on
    every row; ``rfd_fails``: goals the matching rfd rows violate.  A predicted failure counts
    only where rfd meets the goal, a predicted gain only where rfd does not.
    """
    if claim is None:
        return "no claim", "The RFD makes no claim about this variant."
    if not claim.fails and not claim.gains:
        return "cannot speak to it", ("The model cannot speak to it: the argument is about a cost no goal "
                                      "measures (what a client can observe is the same).")
    fails = [g for g in claim.fails if g in fails_here and g not in rfd_fails]
    gains = [g for g in claim.gains if g in holds_here and g in rfd_fails]
    parts = []
    if claim.fails:
        found = "confirmed" if len(fails) == len(claim.fails) else "not found" if not fails else \
            f"confirmed for {', '.join(fails)} only"
        parts.append(f"predicted to fail {', '.join(claim.fails)}: {found}")
    if claim.gains:
        found = "confirmed" if len(gains) == len(claim.gains) else "not found"
        parts.append(f"granted {', '.join(claim.gains)}: {found}")
    if len(fails) == len(claim.fails) and len(gains) == len(claim.gains):
        word = "confirmed"
    elif not fails and not gains:
        word = "refuted"
    else:
        word = "partly confirmed"
    return word, "; ".join(parts) + "."
