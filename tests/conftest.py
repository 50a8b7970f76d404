# --- ACP JSON Schema fixtures (used by tests/test_wire.py) -------------------
# Location: $ACPLAB_SCHEMA_DIR (holding v1/schema.json and v2/schema.json), else
# <repo>/../shared/reference/acp/schema. Missing schemas skip the dependent
# tests, unless ACPLAB_REQUIRE_SCHEMA=1 (CI), which makes them fail.
import json as _json
import os as _os
from pathlib import Path as _Path

import pytest as _pytest
import shutil as _shutil
import subprocess as _subprocess


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


# --- One wheel and one regeneration of the figures per test run --------------------
# Building the wheel, installing it in a fresh venv (pinned by constraints.txt) and
# `acplab figures` (about two minutes of CPU, the variant matrix most of it) happen once
# per run, in the run's shared temporary folder under a lock: the figures the tests
# compare with the committed folder are the ones the *installed wheel* draws, run from
# a folder outside the repository.  Every test that uses them is in the xdist group
# "figures" (one worker), so no other worker waits on the lock.

def _run_shared_once(tmp_path_factory, worker_id, name: str, make) -> "_Path":
    """``make(folder)`` once per test run (across xdist workers); the folder it filled."""
    import fcntl

    shared = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        shared = shared.parent  # the run's folder, above each worker's own
    folder = shared / name
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (shared / f"{name}.failed").exists():
            _pytest.fail(f"{name}: an earlier test of this run failed to make it: "
                         + (shared / f"{name}.failed").read_text(), pytrace=False)
        if not (shared / f"{name}.done").exists():
            try:
                make(folder)
            except BaseException as e:
                (shared / f"{name}.failed").write_text(str(e)[-4000:])
                raise
            (shared / f"{name}.done").write_text("ok\n")
    return folder


def _checked_run(cmd, cwd, **kw):
    out = _subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd, **kw)
    assert out.returncode == 0, f"{cmd}: exit {out.returncode}\n{out.stdout[-2000:]}{out.stderr[-2000:]}"
    return out


class InstalledWheel:
    """The project's wheel installed in a fresh venv: ``run(args, cwd)`` runs its ``acplab``."""

    def __init__(self, folder: "_Path") -> None:
        self.folder = folder
        self.wheel = next((folder / "wheels").glob("acplab-*.whl"))
        self.python = folder / "venv" / "bin" / "python"
        self.acplab = folder / "venv" / "bin" / "acplab"
        self.elsewhere = folder / "elsewhere"  # outside the repository, with a user's copy of ./figures

    def env(self) -> dict:
        env = {k: v for k, v in _os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["MPLBACKEND"] = "Agg"
        return env

    def run(self, args, cwd=None):
        return _checked_run([self.acplab, *args], cwd or self.elsewhere, env=self.env())


def _build_and_install(folder: "_Path") -> None:
    import sys
    import venv

    root = _Path(__file__).resolve().parents[1]
    folder.mkdir()
    _checked_run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", folder / "wheels", root], folder)
    (wheel,) = (folder / "wheels").glob("acplab-*.whl")
    venv.EnvBuilder(with_pip=True).create(folder / "venv")
    _checked_run([folder / "venv" / "bin" / "python", "-m", "pip", "install", "-q", "-c", root / "constraints.txt",
                  wheel], folder)
    # a user's copy of the figures, as the default folder ./figures: `acplab figures` carries its
    # report screenshot over (pixels are not byte-stable, so it is never redrawn: app/figures.py)
    _shutil.copytree(root / "figures", folder / "elsewhere" / "figures")


@_pytest.fixture(scope="session")
def installed_wheel(tmp_path_factory, worker_id) -> InstalledWheel:
    return InstalledWheel(_run_shared_once(tmp_path_factory, worker_id, "wheel", _build_and_install))


def figures_cache(regenerated: "_Path") -> "_Path":
    """The ``--cache`` folder the run's one regeneration filled (beside it): a later ``figures --check`` by the
    wheel reuses its explorations instead of redoing them."""
    return regenerated.parent / "figures-cache"


@_pytest.fixture(scope="session")
def regenerated_figures(tmp_path_factory, worker_id, installed_wheel) -> "_Path":
    """``acplab figures --out FOLDER`` by the installed wheel, from outside the repository, once per run;
    without the manifest ``--out`` leaves (what that run wrote there, not a figure: app/outfolder.py)."""
    from acplab.model.app.outfolder import MANIFEST

    def draw(folder):
        installed_wheel.run(["figures", "--out", folder, "-q", "--cache", figures_cache(folder)])
        (folder / MANIFEST).unlink()

    return _run_shared_once(tmp_path_factory, worker_id, "figures-regenerated", draw)


# --- The tools that read our outputs: Mermaid's own parser and a real browser ----------
# tests/js holds a pinned Node project (package.json + package-lock.json): mermaid 11
# under jsdom parses every .mmd we write, and playwright-core drives Debian's headless
# Chromium over the HTML report.  `.ci/run` installs both (`npm ci` in tests/js, and
# `apt-get install chromium`).  Locally a missing piece skips the tests that need it, with
# the command that installs it; in CI (ACPLAB_REQUIRE_NODE=1 / ACPLAB_REQUIRE_BROWSER=1) it fails.
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


# --- The smoke tier: `pytest -m smoke`, under a minute on 2 cores ----------------------------
# A few fast tests from every layer (engine, wire, acp, trace, render, simulations, app and the
# packaging), so a change that breaks the house shows in seconds; a test can also carry
# @pytest.mark.smoke itself.  The README's "Test tiers" gives each tier's measured duration.
SMOKE = ("test_layers.py", "test_explore.py", "test_store.py", "test_capture.py", "test_model.py", "test_specfile.py",
         "test_tracecheck.py", "test_mermaid.py::test_escape", "test_mermaid.py::test_sequence_diagrams",
         "test_mermaid.py::test_long_notes", "test_packaging.py::test_licence", "test_packaging.py::test_hypothesis",
         "test_packaging.py::test_build", "test_packaging.py::test_constraints", "test_sim_schedule.py")


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: two workers more than the machine has cores.  Some tests mostly wait (a real agent's
    quiescence, a browser, a recorder's linger): measured on 2 cores, the SDK agent tests take 280 s of wall
    for 80 s of CPU; with spare workers that waiting overlaps with the CPU-bound tests."""
    return (_os.cpu_count() or 1) + 2


@_pytest.hookimpl(tryfirst=True)  # before the mark plugin deselects `-m 'not deep'`
def pytest_collection_modifyitems(config, items):
    from tiers import DEEP, OVER_CI_BUDGET
    for item in items:
        name = item.nodeid.split("/")[-1]
        if name in OVER_CI_BUDGET:
            for mark in DEEP:
                item.add_marker(mark)
        if name.startswith(SMOKE) and item.get_closest_marker("slow") is None:
            item.add_marker(_pytest.mark.smoke)


# --- CPU seconds per test: ACPLAB_TEST_CPU=FILE -----------------------------------------------
# Wall time (`--durations`) on a shared machine measures the neighbours; CPU seconds of the test's
# process and of the children it waited for (subprocesses, the engine's workers, node) do not.
# Each xdist worker appends JSON lines {"test", "cpu", "wall"} to FILE.<worker>;
# scripts/test_budget.py sums them per file and per tier.
if _os.environ.get("ACPLAB_TEST_CPU"):
    import resource as _resource
    import time as _time

    def _cpu_seconds() -> float:
        own, children = _resource.getrusage(_resource.RUSAGE_SELF), _resource.getrusage(_resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    @_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        cpu, wall = _cpu_seconds(), _time.monotonic()
        yield
        worker = _os.environ.get("PYTEST_XDIST_WORKER", "master")
        marks = sorted(m.name for m in item.iter_markers() if m.name in ("deep", "slow", "smoke"))
        with open(f"{_os.environ['ACPLAB_TEST_CPU']}.{worker}", "a") as out:
            out.write(_json.dumps({"test": item.nodeid, "cpu": round(_cpu_seconds() - cpu, 3),
                                   "wall": round(_time.monotonic() - wall, 3), "marks": marks}) + "\n")
