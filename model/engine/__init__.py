"""The generic explorer: it knows transition systems and properties, nothing of ACP.

Breadth-first search over a fingerprint store (:mod:`.search`), paths rebuilt
by replay (:mod:`.path`), the ``eventually`` pass (:mod:`.liveness`), and
TwoPhase commit as the engine's validation model (:mod:`.twophase`).  For
large bounds: the same search on several processes with checkpoints
(:mod:`.parallel`, :mod:`.worker`, :mod:`.frontier`, :mod:`.checkpoint`; ``eventually`` there:
:mod:`.eventual_levels`),
partial-order reduction (:mod:`.por`) and random walks (:mod:`.walk`).
"""

from .search import Limits, Result, Stats, Violation, Visitor, explore
from .path import Path, replay
from .properties import DEADLOCK, Property, TransitionSystem, always, eventually, sometimes
from .store import FP_MASK, FingerprintStore

__all__ = [
    "DEADLOCK", "FP_MASK", "FingerprintStore", "Limits", "Path", "Property", "Result", "Stats",
    "TransitionSystem", "Violation", "Visitor", "always", "eventually", "explore", "replay", "sometimes",
]
