"""What a search returns (:class:`Result`), what bounds it (:class:`Limits`), and who may watch it (:class:`Visitor`)."""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field

from .search_coverage import Coverage
from .path import Path
from .properties import Property


@dataclass(frozen=True)
class Violation:
    """A property and the shortest behaviour found that violates it."""

    property: Property
    path: Path

    @builtins.property  # the field ``property`` shadows the builtin in the class body
    def sentence(self) -> str:
        """What went wrong, in the property's own words."""
        return self.property.sentence(self.path.last_state)


@dataclass
class Stats:
    states: int = 0
    transitions: int = 0
    depth: int = 0
    queue: int = 0
    seconds: float = 0.0


@dataclass
class Result:
    """What an exploration established; ``verdict`` is ``holds`` only if it was complete."""

    complete: bool
    stats: Stats
    violations: list[Violation] = field(default_factory=list)
    witnesses: dict[str, Path | None] = field(default_factory=dict)
    limit: str | None = None
    #: violations of ``severity="warning"`` properties (SHOULDs): reported, verdict unchanged
    warnings: list[Violation] = field(default_factory=list)
    #: witnesses declared ``required=False``: missing ones are warnings
    optional: frozenset[str] = frozenset()
    #: partial-order reduction: whether ample sets were used, and the states of the confirming run
    reduced: bool = False
    confirmed: int | None = None
    #: the deepest level up to which the reduced run's levels are an unreduced run's (the reduction chose no
    #: successors of a shallower state), None when it chose none at all (:func:`.por.confirm`)
    exact_to: int | None = None
    #: what the run could not do as asked (say, fewer workers), in a sentence
    note: str | None = None
    #: peak resident memory of the processes that searched, and each worker's CPU seconds, when measured
    peak_bytes: int | None = None
    worker_cpu: list[float] | None = None
    #: how often each kind of action fired and each property was evaluated, armed, violated (:mod:`.search_coverage`)
    coverage: Coverage | None = None

    @property
    def verdict(self) -> str:
        """``holds`` needs a complete run, no violation and every required witness found.

        A required witness missing after a complete run means the model cannot
        reach a state it was declared to reach: ``violated``, never a quiet
        ``holds``.  Warnings never change the verdict.
        """
        if self.violations or (self.complete and self.missing_required):
            return "violated"
        return "holds" if self.complete else "incomplete"

    @property
    def missing_witnesses(self) -> list[str]:
        return [name for name, path in self.witnesses.items() if path is None]

    @property
    def missing_required(self) -> list[str]:
        """Missing witnesses that make the verdict ``violated``."""
        return [name for name in self.missing_witnesses if name not in self.optional]

    @property
    def missing_optional(self) -> list[str]:
        """Missing witnesses declared ``required=False``: warnings only."""
        return [name for name in self.missing_witnesses if name in self.optional]


@dataclass(frozen=True)
class Limits:
    max_states: int | None = None
    max_seconds: float | None = None
    max_depth: int | None = None


class Visitor:
    """Sees the search as it goes: every stored state once, every transition found.

    ``state(idx, state)`` for a newly stored state (its index in discovery
    order); ``edge(src, dst, successor)`` for each transition out of an
    expanded state, with the model's successor tuple ``(action, next_state[,
    effects])``.  Hooks do nothing by default.  A visitor makes the store keep
    an index, so it costs memory like an ``eventually`` property.
    """

    def state(self, idx: int, state) -> None:
        pass

    def edge(self, src: int, dst: int, successor: tuple) -> None:
        pass
