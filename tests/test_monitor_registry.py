"""Every monitor is listed by being defined: the rule families, the client views and the goals are registries.

A class that names a property (its own ``name``) registers itself when it is
defined (``__init_subclass__`` of :class:`~acplab.model.acp.monitors_base.Declared`, the base of either
protocol); its kind's list is
:func:`~acplab.model.acp.monitors_base.defined_in` over that kind's modules,
so no hand-kept tuple can miss one or hold one twice.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import acplab.model
from acplab.model.acp import monitors_base, rule_monitor
from acplab.model.acp.goals import GOALS
from acplab.model.acp.monitors import CLIENT_MONITORS
from acplab.model.acp.rules import FAMILIES, MONITOR_CLASSES

BASES = (rule_monitor.Monitor, monitors_base.Monitor)
PROTOCOL = (monitors_base.Declared,) + BASES


def _listed() -> list[type]:
    return list(MONITOR_CLASSES) + [type(m) for m in CLIENT_MONITORS] + [type(g) for g in GOALS]


def _naming_classes() -> list[type]:
    """Every monitor class of acplab that names a property of its own, found by walking the package."""
    out = []
    for info in pkgutil.walk_packages(acplab.model.__path__, "acplab.model."):
        module = importlib.import_module(info.name)
        out += [c for c in vars(module).values() if inspect.isclass(c) and c.__module__ == module.__name__
                and issubclass(c, monitors_base.Declared) and c not in PROTOCOL and "name" in vars(c)]
    return out


def test_every_monitor_class_that_names_a_property_is_listed_once():
    listed = _listed()
    missing = [f"{c.__module__}.{c.__qualname__}" for c in _naming_classes() if c not in listed]
    assert not missing, f"defined but in no list (is its module in rules.FAMILIES?): {missing}"
    twice = sorted({c.name for c in listed if sum(d is c for d in listed) > 1})
    assert not twice, f"listed twice: {twice}"


def test_property_names_are_unique_across_rules_client_views_and_goals():
    names = [c.name for c in _listed()]
    assert len(names) == len(set(names)) and all(names)


def test_each_family_module_is_named_once_and_defines_monitors():
    assert len({f.__name__ for f in FAMILIES}) == len(FAMILIES)
    assert all(monitors_base.defined_in(f.__name__) for f in FAMILIES)


@pytest.mark.parametrize("base", BASES, ids=["rule_monitor", "monitors_base"])
def test_a_class_is_registered_in_its_module_in_definition_order(base):
    module = f"registry_probe_{base.__module__.rsplit('.', 1)[1]}"
    first = type("First", (base,), {"name": "First", "__module__": module})
    second = type("Second", (base,), {"name": "Second", "__module__": module})
    assert monitors_base.defined_in(module) == (first, second)


def test_two_classes_of_one_name_or_a_module_named_twice_are_refused():
    module = "registry_probe_twice"
    for _ in range(2):  # a module run twice defines its class twice
        type("Twice", (rule_monitor.Monitor,), {"name": "Twice", "__module__": module})
    with pytest.raises(TypeError, match="Twice is defined twice"):
        monitors_base.defined_in(module)
    with pytest.raises(TypeError, match="named twice"):
        monitors_base.defined_in("registry_probe_other", "registry_probe_other")
