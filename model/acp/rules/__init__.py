"""The rule monitors: one set over what an observer can see, run by the explorer, the simulator and the trace checker.

Every monitor follows :mod:`..rule_monitor` and cites rule IDs of the catalogue
(:mod:`.catalogue`).  Families: JSON-RPC framing (:mod:`.jsonrpc`), prompts
and their user messages (:mod:`.prompts`), insertion evidence
(:mod:`.insertion`), foreground state (:mod:`.foreground`), cancellation and
close (:mod:`.cancel`), tool calls and background work (:mod:`.tools`),
resume and replay (:mod:`.replay`), notices, v1 and bridges
(:mod:`.versions`), the rules that need internal events
(:mod:`.internal`), and where live reports are placed (:mod:`.placement`).
"""

from __future__ import annotations

from ..monitors_base import defined_in
from ..rule_monitor import INTERNAL, Switches
from . import cancel, foreground, insertion, internal, jsonrpc, placement, prompts, replay, tools, versions
from .catalogue import Rule, catalogue, wire_checkable_musts

#: the families in report order: the order of ``acplab rules``, ``acplab properties``, reports and figures
FAMILIES = (jsonrpc, prompts, insertion, foreground, cancel, tools, replay, versions, internal, placement)

#: every monitor class, in report order: family by family, each family's in the order its module defines them
#: (a class registers itself when it is defined: :func:`~..monitors_base.defined_in`)
MONITOR_CLASSES = defined_in(*(family.__name__ for family in FAMILIES))

__all__ = ["FAMILIES", "MONITOR_CLASSES", "Rule", "catalogue", "make_monitors", "monitors_of_rule", "wire_checkable_musts"]


def make_monitors(switches: Switches | None = None, internal_events: bool = True, classes=MONITOR_CLASSES):
    """Instances of the monitors for one run; without internal events, only those that need the wire alone; a
    monitor with ``applies(switches)`` only where that reading was chosen."""
    switches = switches if switches is not None else Switches()
    return [cls(switches) for cls in classes if (internal_events or INTERNAL not in cls.needs)
            and getattr(cls, "applies", lambda _s: True)(switches)]


def monitors_of_rule(rule_id: str) -> list[str]:
    """Names of the monitors that cite ``rule_id``."""
    return [cls.name for cls in MONITOR_CLASSES if rule_id in cls.rules]
