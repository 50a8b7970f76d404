"""The rule monitors: one set over what an observer can see, run by the explorer, the simulator and the trace checker.

Every monitor follows :mod:`..observe` and cites rule IDs of the catalogue
(:mod:`.catalogue`).  Families: JSON-RPC framing (:mod:`.jsonrpc`), prompts
and their user messages (:mod:`.prompts`), insertion evidence
(:mod:`.insertion`), foreground state (:mod:`.foreground`), cancellation and
close (:mod:`.cancel`), tool calls and background work (:mod:`.tools`),
resume and replay (:mod:`.replay`), notices, v1 and bridges
(:mod:`.versions`), the rules that need internal events
(:mod:`.internal`), and where live reports are placed (:mod:`.placement`).
"""

from __future__ import annotations

from ..observe import INTERNAL, Switches
from . import cancel, foreground, insertion, internal, jsonrpc, placement, prompts, replay, tools, versions
from .catalogue import Rule, catalogue, wire_checkable_musts

#: every monitor class, in report order
MONITOR_CLASSES = (jsonrpc.ALL + prompts.ALL + insertion.ALL + foreground.ALL + cancel.ALL + tools.ALL
                   + replay.ALL + versions.ALL + internal.ALL + placement.ALL)

__all__ = ["MONITOR_CLASSES", "Rule", "catalogue", "make_monitors", "monitors_of_rule", "wire_checkable_musts"]


def make_monitors(switches: Switches | None = None, internal_events: bool = True, classes=MONITOR_CLASSES):
    """Instances of the monitors for one run; without internal events, only those that need the wire alone."""
    switches = switches if switches is not None else Switches()
    return [cls(switches) for cls in classes if internal_events or INTERNAL not in cls.needs]


def monitors_of_rule(rule_id: str) -> list[str]:
    """Names of the monitors that cite ``rule_id``."""
    return [cls.name for cls in MONITOR_CLASSES if rule_id in cls.rules]
