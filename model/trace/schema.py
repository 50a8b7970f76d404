"""``acplab trace check --schema PATH``: every message validated against an official ACP JSON Schema.

The user points at a schema file (``schema.json``), or a folder holding
``v1/schema.json`` and ``v2/schema.json`` (``$ACPLAB_SCHEMA_DIR`` when
``--schema`` has no value); acplab ships no schema.  Each connection's
messages are validated against its dialect's schema: the whole JSON-RPC
object against the root, and, because the root's extension catch-alls
(``ExtRequest``, ``ExtResponse``: ``{}``) let almost any framed message
pass, also ``params`` against the ``$defs`` entry whose ``x-method`` is the
request's or notification's method, and a response's ``result`` against the
``...Response`` entry of the method of the request it answers.  A failure is
a violation naming the schema path of the failing keyword.  jsonschema is an
optional dependency: without it, one clear line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from acplab.model.errors import InputError

ENV = "ACPLAB_SCHEMA_DIR"


class _Schema:
    """One schema file: validators for the root and for each method's params and result."""

    def __init__(self, path: Path) -> None:
        try:
            import jsonschema.validators
        except ImportError:
            raise InputError("--schema needs the jsonschema package: pip install jsonschema") from None
        try:
            self.schema = json.loads(path.read_text(encoding="utf-8"))
            cls = jsonschema.validators.validator_for(self.schema)
            cls.check_schema(self.schema)
        except (OSError, ValueError) as err:
            raise InputError(f"--schema {path}: not a JSON Schema ({str(err).splitlines()[0][:80]})") from None
        except jsonschema.SchemaError as err:
            raise InputError(f"--schema {path}: not a valid JSON Schema ({err.message[:80]})") from None
        self.path = path
        self._cls = cls
        self.root = cls(self.schema)
        defs = self.schema.get("$defs", {})
        self.params: dict = {}
        self.results: dict = {}
        for name, d in defs.items():
            if isinstance(d, dict) and isinstance(d.get("x-method"), str):
                (self.results if name.endswith("Response") else self.params)[d["x-method"]] = name
        self._subs: dict = {}

    def _sub(self, name: str):
        if name not in self._subs:
            self._subs[name] = self._cls({"$schema": self.schema.get("$schema"), "$defs": self.schema["$defs"],
                                          "$ref": f"#/$defs/{name}"})
        return self._subs[name]

    def problem(self, msg: dict, method: str | None) -> str | None:
        """The first schema failure of ``msg`` (``method``: of the request a response answers), or None."""
        import jsonschema.exceptions

        err = jsonschema.exceptions.best_match(self.root.iter_errors(msg))
        where = "#"
        if err is None:
            if isinstance(msg.get("method"), str) and msg["method"] in self.params:
                name = self.params[msg["method"]]
                err, where = jsonschema.exceptions.best_match(self._sub(name).iter_errors(msg.get("params"))), \
                    f"#/$defs/{name}"
            elif "result" in msg and method in self.results:
                name = self.results[method]
                err, where = jsonschema.exceptions.best_match(self._sub(name).iter_errors(msg["result"])), \
                    f"#/$defs/{name}"
        if err is None:
            return None
        path = "/".join(str(p) for p in err.absolute_schema_path)
        return f"{where}/{path} ({self.path.name}): {err.message[:160]}"


_LOADED: dict = {}


def _load(path: Path) -> _Schema:
    """A schema file's validators, built once per process (checking and compiling a schema takes seconds)."""
    key = (str(path.resolve()), path.stat().st_mtime_ns)
    if key not in _LOADED:
        _LOADED[key] = _Schema(path)
    return _LOADED[key]


class SchemaCheck:
    """The schema of each dialect (``v1``, ``v2``), from a file or a folder; see the module."""

    def __init__(self, where: str) -> None:
        if where == "$" + ENV:
            where = os.environ.get(ENV, "")
            if not where:
                raise InputError(f"--schema without a path needs ${ENV} (a folder with v1/schema.json, v2/schema.json)")
        p = Path(where)
        if p.is_dir():
            files = {d: p / d / "schema.json" for d in ("v1", "v2") if (p / d / "schema.json").is_file()}
            if not files:
                raise InputError(f"--schema {p}: no v1/schema.json or v2/schema.json in that folder")
            self.by_dialect = {d: _load(f) for d, f in files.items()}
        elif p.is_file():
            one = _load(p)
            self.by_dialect = {"v1": one, "v2": one}
        else:
            raise InputError(f"--schema {p}: no such file or folder")

    def problem(self, msg: dict, dialect: str | None, method: str | None) -> str | None:
        schema = self.by_dialect.get("v1" if dialect == "v1" else "v2")
        return None if schema is None else schema.problem(msg, method)
