# --- ACP JSON Schema fixtures (used by tests/test_wire.py) -------------------
# Location: $ACPLAB_SCHEMA_DIR (holding v1/schema.json and v2/schema.json), else
# <repo>/../shared/reference/acp/schema. Missing schemas skip the dependent
# tests, unless ACPLAB_REQUIRE_SCHEMA=1 (CI), which makes them fail.
import json as _json
import os as _os
from pathlib import Path as _Path

import pytest as _pytest


def _acp_schema_dir() -> "_Path | None":
    candidates = []
    if _os.environ.get("ACPLAB_SCHEMA_DIR"):
        candidates.append(_Path(_os.environ["ACPLAB_SCHEMA_DIR"]))
    candidates.append(_Path(__file__).resolve().parents[2] / "shared/reference/acp/schema")
    for d in candidates:
        if (d / "v1/schema.json").is_file() and (d / "v2/schema.json").is_file():
            return d
    return None


class AcpSchema:
    """One ACP schema version, validating whole JSON-RPC objects.

    The root schema is an ``anyOf`` over Agent/Client/ProtocolLevel messages,
    but its request/notification/response branches include extension
    catch-alls (``$defs.ExtRequest``, ``ExtNotification``, ``ExtResponse`` are
    ``{}``), so almost any framed message passes it. ``errors`` therefore also
    checks ``params`` against the ``$defs`` entry whose ``x-method`` matches the
    method, and ``result`` against the ``...Response`` entry for
    ``response_to``.
    """

    def __init__(self, path: _Path, version: str) -> None:
        import jsonschema.validators

        self.version = version
        self.schema = _json.loads(path.read_text())
        self._cls = jsonschema.validators.validator_for(self.schema)
        self._cls.check_schema(self.schema)
        self.root = self._cls(self.schema)
        self._defs = self.schema["$defs"]
        self._sub: dict = {}
        self.params_def: dict = {}
        self.result_def: dict = {}
        for name, d in self._defs.items():
            if "x-method" in d:
                table = self.result_def if name.endswith("Response") else self.params_def
                table[d["x-method"]] = name

    def defn(self, name: str):
        """A validator for ``$defs[name]``."""
        if name not in self._sub:
            sub = {"$schema": self.schema["$schema"], "$defs": self._defs,
                   "$ref": f"#/$defs/{name}"}
            self._sub[name] = self._cls(sub)
        return self._sub[name]

    def errors(self, msg: dict, response_to: "str | None" = None) -> "list[str]":
        errs = [e.message for e in self.root.iter_errors(msg)]
        if isinstance(msg, dict) and isinstance(msg.get("method"), str):
            name = self.params_def.get(msg["method"])
            if name:
                errs += [f"{name}: {e.message}" for e in self.defn(name).iter_errors(msg.get("params"))]
        elif isinstance(msg, dict) and "result" in msg and response_to:
            name = self.result_def.get(response_to)
            if name:
                errs += [f"{name}: {e.message}" for e in self.defn(name).iter_errors(msg["result"])]
        return errs

    def is_valid(self, msg: dict, response_to: "str | None" = None) -> bool:
        return not self.errors(msg, response_to)

    def validate(self, msg: dict, response_to: "str | None" = None) -> None:
        errs = self.errors(msg, response_to)
        assert not errs, f"not valid ACP {self.version}: {_json.dumps(msg)}\n" + "\n".join(errs)


def _load_acp_schema(version: str) -> AcpSchema:
    d = _acp_schema_dir()
    if d is None:
        reason = ("ACP JSON schemas not found: set ACPLAB_SCHEMA_DIR to a directory with "
                  "v1/schema.json and v2/schema.json (default ../shared/reference/acp/schema)")
        if _os.environ.get("ACPLAB_REQUIRE_SCHEMA") == "1":
            _pytest.fail(reason + " [ACPLAB_REQUIRE_SCHEMA=1]", pytrace=False)
        _pytest.skip(reason)
    return AcpSchema(d / version / "schema.json", version)


@_pytest.fixture(scope="session")
def schema_v2() -> AcpSchema:
    return _load_acp_schema("v2")


@_pytest.fixture(scope="session")
def schema_v1() -> AcpSchema:
    return _load_acp_schema("v1")


# --- One regeneration of the figures per test run ------------------------------
# `acplab figures` takes about a minute (the variant matrix is most of it).  The
# tests that compare against the committed folder share one regeneration per
# run, across xdist workers: the first worker to ask builds it under a lock in
# the run's shared temporary folder, the others reuse it.


@_pytest.fixture(scope="session")
def regenerated_figures(tmp_path_factory, worker_id):
    import fcntl

    from acplab.model.app.figures import generate

    shared = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        shared = shared.parent  # the run's folder, above each worker's own
    folder = shared / "figures-regenerated"
    with open(shared / "figures.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "figures.done").exists():
            generate(folder)
            (shared / "figures.done").write_text("ok\n")
    return folder


# --- The tools that read our outputs: Mermaid's own parser and a real browser ----------
# tests/js holds a pinned Node project (package.json + package-lock.json): mermaid 11
# under jsdom parses every .mmd we write, and playwright-core drives Debian's headless
# Chromium over the HTML report.  `.ci/run` installs both (`npm ci` in tests/js, and
# `apt-get install chromium`).  Locally a missing piece skips the tests that need it, with
# the command that installs it; in CI (ACPLAB_REQUIRE_NODE=1 / ACPLAB_REQUIRE_BROWSER=1) it fails.
import shutil as _shutil
import subprocess as _subprocess

JS = _Path(__file__).resolve().parent / "js"
CHROMIUM = _os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def _missing(reason: str, flag: str) -> None:
    if _os.environ.get(flag) == "1":
        _pytest.fail(f"{reason} [{flag}=1]", pytrace=False)
    _pytest.skip(reason)


def _node_ready() -> None:
    if _shutil.which("node") is None:
        _missing("node not found: install Node 20 (Debian: apt-get install nodejs npm)", "ACPLAB_REQUIRE_NODE")
    if not (JS / "node_modules" / "mermaid").is_dir():
        _missing("tests/js has no node_modules: run `npm ci` in tests/js", "ACPLAB_REQUIRE_NODE")


def _run_json(args: list, timeout: float) -> tuple[int, dict]:
    proc = _subprocess.run(["node", *map(str, args)], capture_output=True, text=True, cwd=JS, timeout=timeout)
    try:
        return proc.returncode, _json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"node {args[0]} printed no JSON (exit {proc.returncode}): {proc.stderr[-2000:]}")


@_pytest.fixture(scope="session")
def mermaid_parse():
    """``parse(paths) -> {path: error or None}``: Mermaid 11's own parser over .mmd files, in one node run."""
    _node_ready()

    def parse(paths) -> dict:
        paths = [str(_Path(p).resolve()) for p in paths]
        assert paths, "no .mmd files to parse"
        proc = _subprocess.run(["node", "mermaid_parse.mjs", "-"], input=_json.dumps(paths), capture_output=True,
                               text=True, cwd=JS, timeout=120)
        try:
            report = _json.loads(proc.stdout)
        except ValueError:
            raise AssertionError(f"mermaid_parse.mjs printed no JSON (exit {proc.returncode}): {proc.stderr[-2000:]}")
        return {r["file"]: (None if r["ok"] else f"{r['error']} {r.get('detail') or ''}".strip())
                for r in report["results"]}

    return parse


@_pytest.fixture(scope="session")
def browser():
    """``check(page, steps) -> (exit code, report)``: headless Chromium steps over a local page (tests/js)."""
    _node_ready()
    if not _os.access(CHROMIUM, _os.X_OK):
        _missing(f"{CHROMIUM} not found: apt-get install chromium (or set CHROMIUM_PATH)", "ACPLAB_REQUIRE_BROWSER")

    def check(page, steps, tmp) -> tuple[int, dict]:
        steps_file = _Path(tmp) / "steps.json"
        steps_file.write_text(_json.dumps(steps))
        return _run_json(["browser_check.mjs", _Path(page).resolve(), steps_file.resolve()], timeout=120)

    return check
