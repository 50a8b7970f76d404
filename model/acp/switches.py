"""The switches a variant sets, read from the code: meaning, values, readers and invalid combinations.

Nothing here is a hand-kept list of switches.  The switches are
:data:`.specfile.SWITCHES` (the fields of :class:`.spec.Spec` that are not
presentation); each one's meaning is the ``#:`` comment above its field in
``spec.py`` (parsed, not executed); its values are its default's type and,
for a text switch, :data:`.specfile.CHOICES`; the actors that read it come
from an AST scan of the model's modules for ``spec.NAME`` (or
``self.spec.NAME``).  The only declared table is which *module* belongs to
which actor (:data:`ACTOR_OF_MODULE`); a test fails when a module reads a
switch and is neither an actor's nor a tool's.

:data:`.switch_rules.COMBINATIONS` are the combinations a spec file may not
use, listed here beside the switches.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from .spec import RFD, Spec
from .specfile import CHOICES, SWITCHES
from .switch_rules import COMBINATIONS

_MODEL = Path(__file__).resolve().parents[1]  # the acplab.model package's folder

#: which actor each module that reads switches belongs to (path below the model package, without .py;
#: a trailing ``*`` matches a prefix).  The agent is the adapter and its runtime; ``enabling`` decides
#: which of the agent's steps are enabled; the network's proxy lives in the model's links.
ACTOR_OF_MODULE: dict[str, str] = {
    "acp/rules_in_model": "agent", "acp/agent*": "agent", "acp/enabling": "agent",
    "acp/client": "client", "acp/client_strategies": "client",
    "acp/network": "network", "acp/model": "network",
}
#: switches the v1<->v2 bridge models take as a constructor parameter of the same name (the matrix
#: passes the spec's value): they read no ``spec`` (a test checks each is such a parameter)
BRIDGE_PARAMETERS: tuple[str, ...] = ("error_type",)
#: modules that read switches without being an actor: the partial-order reduction's soundness
#: conditions, scenarios, spec files, and the tools that print or key a spec
TOOL_MODULES: tuple[str, ...] = ("acp/reduction", "acp/scenarios", "acp/specfile", "acp/switches", "app/*",
                                 "render/*", "trace/*")


# -- introspection ------------------------------------------------------------


@cache
def field_docs() -> dict[str, str]:
    """Each field of :class:`Spec` -> the ``#:`` comment lines right above it in ``spec.py``, joined."""
    path = _MODEL / "acp" / "spec.py"
    lines = path.read_text(encoding="utf-8").splitlines()
    tree = ast.parse("\n".join(lines), str(path))
    spec_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Spec")
    docs = {}
    for node in spec_class.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            above, k = [], node.lineno - 2
            while k >= 0 and lines[k].strip().startswith("#:"):
                above.insert(0, lines[k].strip()[2:].strip())
                k -= 1
            docs[node.target.id] = " ".join(above)
    return docs


def _module_key(path: Path) -> str:
    return path.relative_to(_MODEL).with_suffix("").as_posix()


def _matches(key: str, patterns) -> str | None:
    for pattern in patterns:
        if key == pattern or pattern.endswith("*") and key.startswith(pattern[:-1]):
            return pattern
    return None


@cache
def readers() -> dict[str, dict[str, tuple[str, ...]]]:
    """Module -> the Spec fields it reads as ``<something named *spec*>.FIELD`` (an AST scan)."""
    fields = set(Spec._fields)
    out = {}
    for path in sorted(_MODEL.rglob("*.py")):
        read = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in fields:
                owner = node.value
                name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
                if "spec" in name.lower():
                    read.add(node.attr)
        if read:
            out[_module_key(path)] = tuple(sorted(read))
    return out


def actors_reading(switch: str) -> tuple[str, ...]:
    """The actors whose modules read ``switch`` (agent, client, network, then the bridges)."""
    found = {ACTOR_OF_MODULE[p] for module, read in readers().items() if switch in read
             for p in [_matches(module, ACTOR_OF_MODULE)] if p is not None}
    order = list(dict.fromkeys(ACTOR_OF_MODULE.values()))
    return tuple(sorted(found, key=order.index)) + (("bridges",) if switch in BRIDGE_PARAMETERS else ())


def unassigned_modules() -> list[str]:
    """Modules that read a switch but are neither an actor's nor a tool's (a test keeps this empty)."""
    return [m for m, read in readers().items() if set(read) & set(SWITCHES)
            and _matches(m, ACTOR_OF_MODULE) is None and _matches(m, TOOL_MODULES) is None]


def values_of(switch: str) -> str:
    """A switch's values in words: its choices, or true/false, or a range of whole numbers."""
    default = getattr(RFD, switch)
    if switch in CHOICES:
        return " | ".join(CHOICES[switch])
    return {bool: "true | false", int: "0 .. 1000000"}.get(type(default), type(default).__name__)


def catalogue() -> list[dict]:
    """One row per switch: name, type, values, default, meaning, read_by, combinations it takes part in."""
    docs = field_docs()
    return [{"name": s, "type": type(getattr(RFD, s)).__name__, "values": values_of(s),
             "default": getattr(RFD, s), "meaning": docs.get(s, ""), "read_by": list(actors_reading(s)),
             "combinations": [c.name for c in COMBINATIONS if s in c.switches]} for s in SWITCHES]
