"""The house: layers import only downwards, no import circles, no module over 600 lines.

The layers of DESIGN.md (Layout), read from the code's own imports (an AST
walk, nothing is executed):

    errors  <  engine  <  wire  <  acp  <  trace, render (peers)  <  simulations, tester (peers)  <  app  <  entry

``entry`` is the top package ``acplab`` itself (``python -m acplab``).

``errors`` is the one shared base (the bad-input exception); ``simulations``
drives the model layers and is imported only by ``app``; ``tester`` (``acplab test``: real agents
driven, judged by ``trace``, drawn by ``render``) likewise.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"acplab.model": ROOT / "model", "acplab.simulations": ROOT / "simulations", "acplab": ROOT / "acplab"}

#: layer -> rank; peers share a rank and must not import each other
RANK = {"errors": 0, "engine": 1, "wire": 2, "acp": 3, "trace": 4, "render": 4, "simulations": 5, "tester": 5, "app": 6,
        "entry": 7}
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


MODULES = _modules()


def layer_of(module: str) -> str | None:
    """``acplab.model.acp.agent`` -> ``acp``; ``acplab.simulations.x`` -> ``simulations``."""
    parts = module.split(".")
    if module in ("acplab", "acplab.__main__"):
        return "entry"  # `python -m acplab`, above the command line it runs
    if parts[:2] == ["acplab", "simulations"]:
        return "simulations"
    if parts[:2] == ["acplab", "model"] and len(parts) > 2:
        return parts[2] if parts[2] in RANK else None
    return None


def imports_of(module: str, path: Path) -> set[str]:
    """Absolute names of the acplab modules ``module`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("acplab"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if not base.startswith("acplab"):
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                out.add(candidate if candidate in MODULES else base)
    return out


def test_every_module_sits_in_a_layer():
    loose = [m for m in MODULES if layer_of(m) is None and m not in ("acplab.model",)]
    assert loose == [], f"modules outside the layers of DESIGN.md: {loose}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_only_downwards(module):
    mine = layer_of(module)
    if mine is None:
        return
    wrong = []
    for target in sorted(imports_of(module, MODULES[module])):
        theirs = layer_of(target)
        if theirs is None or theirs == mine:
            continue
        if RANK[theirs] >= RANK[mine]:
            wrong.append(f"{target} ({theirs})")
    assert wrong == [], f"{module} ({mine}) imports a layer at or above its own: {wrong}"


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (module -> imported modules), or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(node, trail):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return trail[trail.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, trail + [nxt])
                if found:
                    return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_no_import_circles():
    """Package ``__init__`` files only hand names on, so they are left out of the graph."""
    modules = {m: p for m, p in MODULES.items() if p.name != "__init__.py"}
    graph = {m: {t for t in imports_of(m, p) if t in modules and t != m} for m, p in modules.items()}
    assert find_circle(graph) is None, f"import circle: {' -> '.join(find_circle(graph))}"
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_over_600_lines(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines; split it along a seam"


def test_the_checker_sees_a_wrong_import(tmp_path):
    """The walk resolves relative imports: an engine module importing acp would be flagged."""
    bad = tmp_path / "bad.py"
    bad.write_text("from ..acp import agent\nfrom acplab.model.wire import codec\n")
    assert imports_of("acplab.model.engine.bad", bad) == {"acplab.model.acp.agent", "acplab.model.wire.codec"}
    assert RANK[layer_of("acplab.model.acp.agent")] > RANK[layer_of("acplab.model.engine.bad")]


def test_the_bare_names_model_and_simulations_do_not_resolve(tmp_path):
    """Installed as acplab.model / acplab.simulations: a user's own model.py cannot be shadowed by ours."""
    import subprocess
    import sys

    probe = "import importlib.util as u; print(u.find_spec('model'), u.find_spec('simulations'), u.find_spec('acplab.model'))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path).stdout.split()
    assert out[:2] == ["None", "None"] and out[2] != "None"


#: modules renamed for what they are (the rule monitor protocol, the reading of the wire, the rule monitors run in
#: the model): the old names are gone, so no module may come back under one and mean something else
RENAMED_MODULES = {"acplab.model.acp.observe": "acplab.model.acp.rule_monitor",
                   "acplab.model.acp.observer": "acplab.model.acp.wire_reading",
                   "acplab.model.acp.observer_caps": "acplab.model.acp.wire_reading_caps",
                   "acplab.model.acp.adapter": "acplab.model.acp.rules_in_model"}


@pytest.mark.parametrize("old, new", sorted(RENAMED_MODULES.items()))
def test_a_renamed_module_is_found_only_under_its_new_name(old, new):
    import importlib.util

    assert importlib.util.find_spec(old) is None, f"{old} is back: its code lives in {new}"
    assert importlib.util.find_spec(new) is not None


#: imports of another module's private names made before this rule, as (importing module, imported name); each
#: owner should make the name public or move the code; the list may only shrink (a fixed one must leave it)
PRIVATE_IMPORTS_BEFORE = {
    ("acplab.model.acp.bridge_goals", "_events"),
    *(("acplab.model.acp.bridges", n) for n in ("_Base", "_after", "_before", "_events", "_payload", "_push", "_sent")),
    *(("acplab.model.acp.bridges_v2", n) for n in ("_Base", "_after", "_events", "_payload", "_push", "_sent")),
    ("acplab.model.acp.wire_reading", "_prompt_caps"), ("acplab.model.acp.wire_reading", "_unadvertised"),
    ("acplab.model.app.pages", "_fault_mark"), ("acplab.simulations.sweep", "_short"),
}


def private_imports(module: str, path: Path) -> set[tuple[str, str]]:
    """``(module, name)`` for each ``_name`` (not a dunder) ``module`` imports from another acplab module."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("acplab")):
            out.update((module, a.name) for a in node.names if a.name.startswith("_") and not a.name.startswith("__"))
    return out


def test_no_module_imports_another_modules_private_names():
    """A ``_name`` is its module's own: whoever needs it from outside needs a public API (live.py and check.py)."""
    found = set().union(*(private_imports(m, p) for m, p in MODULES.items()))
    assert found - PRIVATE_IMPORTS_BEFORE == set(), "import of a private name; make it public in its module"
    assert PRIVATE_IMPORTS_BEFORE - found == set(), "fixed: remove it from PRIVATE_IMPORTS_BEFORE"


def test_the_private_import_rule_sees_one(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from acplab.model.trace.check import _Loads, TraceChecker\nfrom .x import __all__, _y\n")
    assert private_imports("m", bad) == {("m", "_Loads"), ("m", "_y")}
