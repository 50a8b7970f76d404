"""Properties and the transition-system interface the explorer drives.

A model offers ``init_states()``, ``successors(state)``, ``properties()`` and
``format_action(action)`` (see :class:`TransitionSystem`).  A property is a
name, an expectation and a pure predicate on states; ``explain`` optionally
turns a violating state into the sentence a report prints, so a violation
carries its own words and nothing has to be fished out of the state later.

Three refinements, each a field of :class:`Property`:

* ``severity="warning"`` (``always`` only): a SHOULD.  A violating state is
  reported as a warning with its shortest path, is still expanded, and never
  changes the verdict.
* ``required=False`` (``sometimes`` only): a witness that may be out of reach
  (bounds the user chose); a missing one is a warning, not a violation.
* ``armed`` (``always`` only): a predicate saying where the property has
  something to watch (coverage counts such states; a property never armed
  held vacuously, see :mod:`.search_coverage`).
* ``every_state=True`` (``eventually`` only): the condition must become true
  again from *every* reachable state, not only from the initial ones
  (``[]<>P``: an obligation such as "nothing is owed" that is true at the
  start and false while something is owed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Expectation = Literal["always", "sometimes", "eventually"]

#: the one severity vocabulary of properties, monitors and their findings: a violation (a MUST broken) or a
#: warning (a SHOULD or a heuristic: reported, never changes the verdict).  "error" means bad input only.
VIOLATION, WARNING = "violation", "warning"
SEVERITIES = (VIOLATION, WARNING)
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
    #: VIOLATION or WARNING (a SHOULD: reported, never changes the verdict)
    severity: str = VIOLATION
    #: a ``sometimes`` witness whose absence is a violation (else a warning)
    required: bool = True
    #: an ``eventually`` condition that must recur from every reachable state (``[]<>``)
    every_state: bool = False
    #: where the property has something to watch (``always``; for coverage, see :mod:`.search_coverage`)
    armed: Callable[[State], bool] | None = None

    def sentence(self, state: State) -> str:
        """What went wrong in ``state``, in words."""
        said = self.explain(state) if self.explain is not None else None
        return said or self.description or self.name


def always(name: str, condition, rules=(), description="", explain=None, severity=VIOLATION, armed=None) -> Property:
    """Every reachable state satisfies ``condition`` (``severity="warning"`` for a SHOULD; ``armed``: where it
    has something to watch, for coverage)."""
    if severity not in SEVERITIES:
        raise ValueError(f"severity must be one of {', '.join(SEVERITIES)}, got {severity!r}")
    return Property(name, "always", condition, tuple(rules), description, explain, severity=severity, armed=armed)


def sometimes(name: str, condition, rules=(), description="", required=True) -> Property:
    """Some reachable state satisfies ``condition``; ``required=False`` makes a miss a warning."""
    return Property(name, "sometimes", condition, tuple(rules), description, required=required)


def eventually(name: str, condition, rules=(), description="", explain=None, every_state=False) -> Property:
    """Every (weakly fair) maximal behaviour reaches ``condition``: from the start, or with
    ``every_state`` from every reachable state (``[]<>``, for obligations)."""
    return Property(name, "eventually", condition, tuple(rules), description, explain, every_state=every_state)


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
