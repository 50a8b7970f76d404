"""The spec-surface column: what each design adds to the protocol's text, with the sentence it comes from.

Most of the RFD's FAQ arguments are about surface, not outcomes: "adds a
second identifier, a uniqueness requirement across clients", "the protocol
would need a prose rule".  The goals cannot see them, so the matrix shows
them as data: per design, each new wire field, each new MUST (a requirement
an implementation can break) and each prose rule (a requirement the schema
cannot state, enforced by hand), with the sentence of the RFD (its FAQ, for
an alternative) or of the design's own description it comes from.

``rfd`` counts what it adds to the v2 draft; every alternative counts what it
adds *beyond* rfd, so a row's surface reads against the baseline it is
compared with.  A row the table does not know (a spec file, a new row) reads
"not on record"; a ``-naive`` row has its design's surface (the mechanisms a
naive build leaves out are the row's weakness, not less text to write).
"""

from __future__ import annotations

from .matrix_table import Column, Table

#: the three kinds of surface, in the order the column shows them
KINDS = ("field", "MUST", "prose rule")

_FAQ_TOKEN = ("RFD FAQ (client-generated correlation token): \"That alternative adds a second identifier, a "
              "uniqueness requirement across clients, and a mapping between submissions and history messages.\"")
_FAQ_ACK = ("RFD FAQ (acknowledgment before insertion): \"An earlier response would acknowledge receipt or reservation "
            "rather than insertion, and could require agents to reserve an ID before their runtime creates the message.\"")
_FAQ_JSONRPC = ("RFD FAQ (reuse the JSON-RPC request ID): \"different clients or connections can reuse the same ID, and "
                "proxies may rewrite it.\"")
_FAQ_CHOSEN = ("RFD FAQ (client chooses the canonical ID): \"they introduce multiple sources of IDs and require shared "
               "collision-avoidance rules.\"")
_FAQ_NOTIFY = ("RFD FAQ (prompt as a notification): \"We would then need a notification-based way of emitting errors for "
               "invalid prompts that would need to be tied to fire-and-forget notifications.\"")
_FAQ_FAILED = ("RFD FAQ (a `failed` state): \"A new state would also leave existing v2 clients unable to tell that "
               "foreground work ended\"")
_FAQ_ERROR_UPDATE = ("RFD FAQ (a separate error update): \"The protocol would need rules for an error with no idle after "
                     "it and for which idle an error belongs to\"")
_FAQ_NOTICE = ("RFD FAQ (an error-severity notice): \"Notices are advisory. Clients may ignore them, and they must not "
               "report fatal errors or change session state.\"")
_FAQ_SIBLING = ("RFD FAQ (`error` beside the stop reason): \"The protocol would need a prose rule that Agents send error "
                "only with stopReason: \"error\" and that Clients ignore it otherwise\"")
_FAQ_NEW_TYPE = ("RFD FAQ (a new error type): \"Reusing the JSON-RPC error object keeps failures before and after "
                 "insertion in one shape, lets clients reuse the code handling they already have\"")

#: design -> ((kind, what it adds, the sentence it comes from), ...)
SURFACE: dict[str, tuple[tuple[str, str, str], ...]] = {
    "rfd": (
        ("field", "`messageId` on the session/prompt result", "RFD: \"the agent returns the ID when acknowledging "
                                                               "insertion\""),
        ("field", "`error` on the error stop reason", "RFD: \"error is a field of the error stop reason, sitting "
                                                      "beside stopReason on the idle update\""),
        ("MUST", "a distinct messageId per accepted submission, never reused", "RFD: \"The agent MUST assign a "
                 "distinct messageId to each accepted submission ... MUST NOT be reused for a different submission\""),
        ("MUST", "report each inserted user message live under that ID", "RFD: \"The agent MUST report each inserted "
                 "user message through user_message or user_message_chunk updates, using the same messageId\""),
        ("MUST", "replay reuses the returned messageId", "RFD: \"it MUST reuse the returned messageId, including after "
                                                         "reconnecting or restarting\""),
        ("MUST", "chunked replay starts with content []", "RFD: \"the agent MUST first send a user_message update with "
                                                          "content: []\""),
        ("MUST", "no error response once inserted", "RFD: \"Once the user message is inserted, the Agent MUST NOT report "
                                                    "a later failure as an error response to session/prompt\""),
    ),
    "rfd-as-written": (),
    "v1": (),
    "v2-draft": (),
    "client-correlation-token": (
        ("field", "`promptId` on session/prompt", _FAQ_TOKEN),
        ("field", "`promptId` on the live and replayed user_message", _FAQ_TOKEN),
        ("MUST", "tokens unique across clients", _FAQ_TOKEN),
        ("prose rule", "a mapping from submissions to history messages (and for several submissions that become one "
                       "message)", "RFD FAQ: \"It would still need to define that mapping if several submissions could "
                                   "become one ACP history message\""),
    ),
    "ack-before-insertion": (
        ("field", "a `prompt_rejected` update naming the reserved messageId", _FAQ_ACK),
        ("MUST", "reserve the ID before the runtime creates the message", _FAQ_ACK),
        ("prose rule", "a receipt is not an insertion: the user_message or the rejection settles it", "RFD: \"If a "
                       "future queueing design needs an earlier receipt, that is a separate acknowledgment from the "
                       "insertion response defined here.\""),
    ),
    "reuse-jsonrpc-id": (
        ("prose rule", "the request id is the message identity, scoped to one client's connection", _FAQ_JSONRPC),
        ("MUST", "no proxy may rewrite request ids", _FAQ_JSONRPC),
    ),
    "reuse-jsonrpc-id-proxy": (
        ("prose rule", "the request id is the message identity, scoped to one client's connection", _FAQ_JSONRPC),
    ),
    "client-chosen-id": (
        ("field", "`messageId` on session/prompt, chosen by the client", _FAQ_CHOSEN),
        ("MUST", "chosen IDs unique across clients (shared collision avoidance)", _FAQ_CHOSEN),
        ("prose rule", "what the agent does with a colliding ID", _FAQ_CHOSEN),
    ),
    "prompt-as-notification": (
        ("field", "a notification-based rejection for invalid prompts", _FAQ_NOTIFY),
        ("prose rule", "tie a rejection to a fire-and-forget notification", _FAQ_NOTIFY),
    ),
    "failed-state": (
        ("field", "a `failed` foreground state", _FAQ_FAILED),
        ("prose rule", "what `failed` means for accepting the next prompt", "RFD FAQ: \"state says whether the agent "
                                                                            "can accept a prompt now\""),
    ),
    "separate-error-update": (
        ("field", "an `error` session update", _FAQ_ERROR_UPDATE),
        ("prose rule", "an error with no idle after it", _FAQ_ERROR_UPDATE),
        ("prose rule", "which idle an error belongs to", _FAQ_ERROR_UPDATE),
    ),
    "error-notice": (
        ("prose rule", "a notice that ends the work (against the notice contract)", _FAQ_NOTICE),
    ),
    "error-sibling-field": (
        ("prose rule", "Agents send error only with stopReason \"error\"", _FAQ_SIBLING),
        ("prose rule", "Clients ignore error otherwise", _FAQ_SIBLING),
    ),
    "new-error-type": (
        ("field", "a new error object {kind, message} for failures after insertion", _FAQ_NEW_TYPE),
        ("prose rule", "how bridges convert it to and from a JSON-RPC error", _FAQ_NEW_TYPE),
    ),
}


def surface_of(spec_name: str) -> tuple | None:
    """The surface of a design by its row's spec name (a ``-naive`` row: its design's); None if not on record."""
    if spec_name in SURFACE:
        return SURFACE[spec_name]
    base = spec_name.removesuffix("-naive")
    return SURFACE.get(base)


def surface_column(spec_names) -> dict:
    """Per spec: the counts by kind and the items, or ``None`` counts when not on record."""
    out = {}
    for name in spec_names:
        items = surface_of(name)
        if items is None:
            out[name] = {"counts": None, "items": [], "note": "not on record"}
            continue
        counts = {kind: sum(1 for k, _w, _s in items if k == kind) for kind in KINDS}
        out[name] = {"counts": counts, "items": [{"kind": k, "what": w, "source": s} for k, w, s in items]}
    return out


def surface_text(entry: dict) -> str:
    """The column's short text: fields / MUSTs / prose rules, or "not on record"."""
    counts = entry["counts"]
    if counts is None:
        return "not on record"
    return f"{counts['field']} / {counts['MUST']} / {counts['prose rule']}"


def surface_table(matrix: dict) -> Table | None:
    """The surface as every output shows it, with where each item comes from as notes; None without it."""
    surface = matrix.get("spec_surface")
    if not surface:
        return None
    notes = ["Where each surface item comes from:", ""] + [
        f"* {name}: {item['kind']} {item['what']}; {item['source']}" for name, entry in surface.items()
        for item in entry["items"]]
    return Table("spec surface", "The surface counts what a design adds to the text (rfd: to the v2 draft; an "
                 "alternative: beyond rfd).", {"surface": "surface (fields / MUSTs / prose rules)"},
                 {name: {"surface": surface_text(entry)} for name, entry in surface.items()}, tuple(notes))


#: the ``surface`` column (:mod:`.matrix_columns`)
COLUMN = Column("surface", "per ACP row's spec: the fields, MUSTs and prose rules it adds, each with its source",
                lambda inputs: {"spec_surface": surface_column(
                    list(dict.fromkeys(r.spec for r in inputs.rows if not r.bridge)))}, surface_table)
