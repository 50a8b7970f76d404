"""The options of ``acplab trace check`` beyond the basic ones: declarations and readings a user chooses.

Registered on the command with one decorator (:func:`check_options`) and
turned into the checker's switches by :func:`switches_from`.
"""

from __future__ import annotations

import click


def check_options(command):
    """Add ``--no-internal``, ``--allowed-states``, ``--id-scope``, ``--schema``, ``--unknown-stop-reasons``."""
    options = [
        click.option("--no-internal", "no_internal", is_flag=True,
                     help="Ignore X.events.jsonl beside the capture X.jsonl (the sidecar check --out writes)."),
        click.option("--allowed-states", "states_key", default=None, metavar="KEY",
                     help="The _meta key under which a client's initialize lists the custom states it supports (S15)."),
        click.option("--id-scope", type=click.Choice(["type", "session"]), default=None,
                     help="Message IDs unique per message type (the schema, default) or in the session (the RFD)."),
        click.option("--schema", "schema", is_flag=False, flag_value="$ACPLAB_SCHEMA_DIR", default=None,
                     metavar="PATH", help="Validate every message against an official ACP schema file, or a folder "
                     "with v1/schema.json and v2/schema.json (no PATH: $ACPLAB_SCHEMA_DIR); needs jsonschema."),
        click.option("--unknown-stop-reasons", type=click.Choice(["violation", "warning"]), default=None,
                     help="An unprefixed unknown stop reason: a violation (the schema, default) or a warning (the RFD)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def switches_from(spec: str | None, states_key=None, id_scope=None, unknown_stop_reasons=None, schema=None):
    """The spec's switches with the user's declarations and readings; None when the user chose none."""
    if states_key is None and id_scope is None and unknown_stop_reasons is None:
        return None
    from acplab.model.trace.check import get_trace_spec

    sw = get_trace_spec(spec or "rfd").switches
    if states_key is not None:
        sw = sw._replace(states_key=states_key)
    if id_scope is not None:
        sw = sw._replace(id_scope=id_scope)
    if unknown_stop_reasons is not None:
        sw = sw._replace(strict_stop_reasons=unknown_stop_reasons == "violation")
    return sw
