"""Properties and the transition-system interface the explorer drives.

A model offers ``init_states()``, ``successors(state)``, ``properties()`` and
``format_action(action)`` (see :class:`TransitionSystem`).  A property is a
name, an expectation and a pure predicate on states; ``explain`` optionally
turns a violating state into the sentence a report prints, so a violation
carries its own words and nothing has to be fished out of the state later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Expectation = Literal["always", "sometimes", "eventually"]
State = Any
Action = Any


@dataclass(frozen=True)
class Property:
    """A named claim about a model: an expectation and a pure predicate on states.

    ``explain(state) -> str | None`` (optional) says in a sentence why a
    violating state violates it; without it a report uses ``description``.
    """

    name: str
    expectation: Expectation
    condition: Callable[[State], bool]
    rules: tuple[str, ...] = ()
    description: str = ""
    explain: Callable[[State], str | None] | None = None

    def sentence(self, state: State) -> str:
        """What went wrong in ``state``, in words."""
        said = self.explain(state) if self.explain is not None else None
        return said or self.description or self.name


def always(name: str, condition, rules=(), description="", explain=None) -> Property:
    return Property(name, "always", condition, tuple(rules), description, explain)


def sometimes(name: str, condition, rules=(), description="") -> Property:
    return Property(name, "sometimes", condition, tuple(rules), description)


def eventually(name: str, condition, rules=(), description="", explain=None) -> Property:
    return Property(name, "eventually", condition, tuple(rules), description, explain)


DEADLOCK = Property("deadlock", "always", lambda s: True, (), "a non-final state with no successor")


class TransitionSystem(Protocol):
    """What the explorer needs of a model.

    ``successors(state)`` yields tuples in a deterministic order whose first
    two items are ``(action, next_state)``; a model may add a third item, what
    the step produced (its events), which paths then carry and visitors see.
    """

    def init_states(self) -> Iterable[State]: ...
    def successors(self, state: State) -> Iterable[tuple]: ...
    def properties(self) -> Sequence[Property]: ...
    def format_action(self, action: Action) -> str: ...


def reject_duplicate_names(props: Sequence[Property]) -> None:
    """Two properties with one name would make verdicts ambiguous: refuse at once."""
    seen = set()
    for p in props:
        if p.name in seen:
            raise ValueError(f"two properties are named {p.name!r}: give each a unique name")
        seen.add(p.name)
