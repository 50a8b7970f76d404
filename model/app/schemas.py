"""The published JSON Schemas (``model/schemas/*.json``, package data) and the ``schema_version`` every JSON output carries.

One schema per output (``check``, ``matrix``, ``simulate``, ``trace-check``: the
``--json`` objects, an error object included) and per input or file format
(``capture`` records with their optional connection-close record, ``sidecar``
events, ``spec-file`` and ``sweep`` TOML read as JSON, ``itf`` traces of ``check --itf``).  ``schema_version`` is
an integer, bumped when a field changes meaning or goes away; new fields do
not bump it (every schema allows them).  List outputs (``specs``,
``scenarios``, ``properties``, ``rules --json``) stay bare lists, as the
command-line contract has them, and carry no version.
"""

from __future__ import annotations

import json
from importlib import resources

SCHEMA_VERSION = 1
NAMES = ("check", "matrix", "simulate", "trace-check", "capture", "sidecar", "spec-file", "sweep", "itf")


def schema(name: str) -> dict:
    """The schema ``name`` (one of :data:`NAMES`), read from the installed package."""
    if name not in NAMES:
        raise KeyError(f"no schema {name!r}; known: {', '.join(NAMES)}")
    return json.loads((resources.files("acplab.model") / "schemas" / f"{name}.schema.json").read_text("utf-8"))


def stamped(obj):
    """``obj`` with ``schema_version`` first when it is a JSON object (lists and scalars unchanged)."""
    if not isinstance(obj, dict) or "schema_version" in obj:
        return obj
    return {"schema_version": SCHEMA_VERSION, **obj}
