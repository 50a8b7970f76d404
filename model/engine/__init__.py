"""The generic explorer: it knows transition systems and properties, nothing of ACP.

One breadth-first search, :func:`explore` (:mod:`.search` says what it
checks; :mod:`.parallel` runs it in this process or on several, with
:mod:`.worker`, :mod:`.frontier`, :mod:`.checkpoint` and, for
``eventually``, :mod:`.eventual_levels` and :mod:`.liveness`); the hooks a
model may offer (:mod:`.hooks`); structural fingerprints
(:mod:`.fingerprint`); paths rebuilt by replay (:mod:`.path`);
partial-order reduction (:mod:`.por`); random walks (:mod:`.walk`); and
TwoPhase commit as the engine's validation model (:mod:`.twophase`).
"""

from .results import Limits, Result, Stats, Violation, Visitor
from .search import explore
from .path import Path, replay
from .properties import DEADLOCK, Property, TransitionSystem, always, eventually, sometimes
from .store import FP_MASK, FingerprintStore

__all__ = [
    "DEADLOCK", "FP_MASK", "FingerprintStore", "Limits", "Path", "Property", "Result", "Stats",
    "TransitionSystem", "Violation", "Visitor", "always", "eventually", "explore", "replay", "sometimes",
]
