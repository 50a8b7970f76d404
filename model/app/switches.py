"""`acplab switches`: every switch a variant (a spec file's ``[switches]``) can set, read from the code.

The rows come from :mod:`acplab.model.acp.switches` (the ``Spec`` fields,
their ``#:`` comments, the actors whose modules read them, and the
combinations a spec file may not use), so a switch added to ``spec.py``
appears here without an edit of this file.
"""

from __future__ import annotations

import click


def switches_command(quiet_help: str) -> click.Command:
    """The ``switches`` command, for ``cli.add_command`` (``quiet_help``: the shared ``--quiet`` text)."""

    @click.command("switches")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object: switches and combinations.")
    @click.option("--quiet", "-q", is_flag=True, help=quiet_help)
    def switches(as_json, quiet):
        """List every spec switch: values, default, meaning, who reads it, and the combinations refused."""
        from acplab.model.acp.switch_rules import COMBINATIONS
        from acplab.model.acp.switches import catalogue

        rows = catalogue()
        combos = [{"name": c.name, "switches": list(c.switches), "why": c.why} for c in COMBINATIONS]
        if as_json:
            from .report import print_json

            print_json({"switches": rows, "combinations": combos})
            return
        for line in switch_lines(rows, combos):
            click.echo(line)

    return switches


def switch_lines(rows: list[dict], combos: list[dict]) -> list[str]:
    """The text listing: one header line per switch, its meaning indented, then the refused combinations."""
    out = []
    for r in rows:
        default = str(r["default"]).lower() if isinstance(r["default"], bool) else repr(r["default"])
        read = ", ".join(r["read_by"]) or "no actor (not read by the model)"
        out.append(f"{r['name']}: {r['values']} (default {default}; read by {read})")
        out.append(f"    {r['meaning']}")
    out.append("")
    out.append("combinations a spec file may not use:")
    for c in combos:
        out.append(f"{c['name']} ({', '.join(c['switches'])}): {c['why']}")
    return out
