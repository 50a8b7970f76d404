"""Packaging that builds for years: SPDX licence, bounded build requirements, test-only
dependencies, ``python -m acplab``, ``py.typed``, mypy on ``model/engine`` and ``model/wire``,
the constraints file CI installs from, and a wheel that works in a fresh venv outside the repository.

mypy covers ``model/wire`` (but ``wire/capture.py``, being changed elsewhere: see
``[tool.mypy]`` in pyproject.toml) and ``model/engine`` (slow: about 6 s of CPU cold);
both runs keep mypy's cache in ``.mypy_cache`` (git-ignored), which mypy checks against
the sources, so a second run costs about a second.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import figures_cache

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_licence_is_an_spdx_string_with_its_file():
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200]


def test_build_requirements_are_bounded_and_read_spdx():
    """setuptools 77 is the first to read PEP 639's ``license`` string and ``license-files``."""
    (req,) = PYPROJECT["build-system"]["requires"]
    assert req.startswith("setuptools>=77,<")


def _third_party_imports(folder: Path) -> set[str]:
    names = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names


def test_hypothesis_is_a_test_dependency_only():
    runtime = " ".join(PYPROJECT["project"]["dependencies"])
    assert "hypothesis" not in runtime
    assert any(d.startswith("hypothesis") for d in PYPROJECT["project"]["optional-dependencies"]["test"])
    for folder in ("model", "simulations", "acplab"):
        assert "hypothesis" not in _third_party_imports(ROOT / folder), folder


def test_python_dash_m_acplab_and_the_typed_marker():
    assert (ROOT / "acplab" / "py.typed").exists()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["acplab"]
    out = subprocess.run([sys.executable, "-m", "acplab", "--version"], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0 and "0.1.0" in out.stdout, out.stderr


def _pins(text: str) -> dict[str, str]:
    pins = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name.lower().replace("_", "-")] = version
    return pins


def test_constraints_pin_what_ci_installs():
    pins = _pins((ROOT / "constraints.txt").read_text())
    for name in ("matplotlib", "numpy", "networkx", "click", "rich", "simpy", "jsonschema", "mypy"):
        assert pins.get(name), f"constraints.txt does not pin {name}"
    assert "-c constraints.txt" in (ROOT / ".ci" / "run").read_text()


def _typed_tree(tmp_path: Path) -> Path:
    """The installed layout (acplab/model -> model/), which mypy reads without the editable finder."""
    top = tmp_path / "acplab"
    top.mkdir()
    (top / "__init__.py").write_text((ROOT / "acplab" / "__init__.py").read_text())
    (top / "model").symlink_to(ROOT / "model")
    (top / "simulations").symlink_to(ROOT / "simulations")
    return tmp_path


def _mypy(tmp_path: Path, package: str) -> None:
    pytest.importorskip("mypy")
    tree = _typed_tree(tmp_path)
    env = {**os.environ, "MYPYPATH": str(tree)}
    cache = ROOT / ".mypy_cache"  # mypy's own default, kept between runs: it checks it against the sources
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--follow-imports=silent", "--cache-dir", str(cache), "-p", package],
                         capture_output=True, text=True, cwd=tree, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues found in" in out.stdout


def test_mypy_is_clean_on_the_wire_layer(tmp_path):
    _mypy(tmp_path, "acplab.model.wire")  # about 1 s of CPU, cold


@pytest.mark.slow  # about 6 s of CPU with a cold cache (CI's), 2 s warm
def test_mypy_is_clean_on_the_engine_layer(tmp_path):
    _mypy(tmp_path, "acplab.model.engine")


def _run(cmd, cwd, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, **kw)
    assert out.returncode == 0, f"{cmd}: {out.stdout[-2000:]}{out.stderr[-2000:]}"
    return out


@pytest.mark.slow
@pytest.mark.xdist_group("figures")  # with the run's one regeneration (conftest)
def test_a_wheel_installs_and_runs_outside_the_repository(installed_wheel, regenerated_figures):
    """The wheel (built and installed in a fresh venv, pinned by constraints.txt, once per run: conftest)
    carries its licence, marker and schemas, and runs from a folder outside the repository: ``--version``,
    ``check``, ``figures`` (the run's one regeneration, which tests/test_figures.py compares with the
    committed folder, byte for byte) and ``figures --check`` on a copy of the committed folder."""
    names = zipfile.ZipFile(installed_wheel.wheel).namelist()
    assert any(n.endswith("licenses/LICENSE") for n in names), names
    assert "acplab/py.typed" in names and "acplab/__main__.py" in names
    assert any(n.startswith("acplab/model/schemas/") and n.endswith(".json") for n in names)
    version = _run([str(installed_wheel.python), "-m", "acplab", "--version"], installed_wheel.elsewhere,
                   env=installed_wheel.env())
    assert "0.1.0" in version.stdout
    checked = json.loads(installed_wheel.run(["check", "-q", "--json"]).stdout)
    assert checked["verdict"] == "holds", checked
    assert (regenerated_figures / "README.md").is_file()
    # `figures --check` itself, against the user's copy of the committed figures (./figures there), with the
    # explorations the regeneration cached: a stale committed folder fails here as in tests/test_figures.py
    up_to_date = installed_wheel.run(["figures", "--check", "-q", "--cache", figures_cache(regenerated_figures)])
    assert "up to date" in up_to_date.stdout, up_to_date.stdout[-2000:]
