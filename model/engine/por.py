"""Partial-order reduction: the engine's side of it (the model computes the ample sets).

A model may offer ``ample(state)`` (:class:`~.hooks.AmpleSets`): a reduced expansion of ``state``, as
``(ordinal, successor)`` pairs that are a non-empty part of
``successors(state)`` (``ordinal`` is the successor's position there, so
paths still replay on the full model), or ``None`` to expand fully.  The
model answers for its ample sets: each must be a persistent set whose
actions are invisible to every ``always`` property and whose postponed
actions cannot be ignored forever (conditions C0-C3 of Clarke, Grumberg and
Peled; the ACP model's own argument is in ``acp/reduction.py``).

What the engine adds, and what each expectation keeps
-----------------------------------------------------
``sometimes``
    witness predicates are opaque, so nothing is reduced while a witness is
    still missing: a level is expanded with ample sets only if every
    ``sometimes`` property was witnessed before it started.  Witnesses, their
    paths and a missing witness are exactly those of an unreduced run.
``always``
    verdicts are preserved by the model's argument (the reduced graph reaches
    a violation of every property the full graph violates).  Lengths are not,
    even for a safety property whose visibility the reduction respected: if
    the shortest counterexample ``w`` never takes the action ``b`` an ample
    set chose alone, the argument gives the reduced graph ``b w`` (``b`` is
    invisible and independent of ``w``), one step longer, and BFS depth on
    the reduced graph is then not the shortest length.  What does hold: a
    level expanded without the reduction choosing any state's successors
    yields exactly the unreduced search's next level (same states, same
    ranks, same first violators), so every level up to and including the
    first one the reduction narrowed is an unreduced run's (the run records
    that level, ``Result.exact_to``).  Hence, whenever the reduced run finds
    violations or warnings (``severity="warning"``, whose paths are reported
    too), :func:`confirm` keeps them as they are when each ends at a level
    no deeper than ``exact_to`` (or the reduction narrowed nothing at all):
    they are the unreduced run's, shortest, to the path.  Otherwise it
    re-runs the search *unreduced*, bounded by the depth of the longest
    reduced counterexample (and, when the run stops at its first violation,
    stopping at its own first violation too), and reports its violations:
    the same properties, each with the shortest counterexample and the very
    path an unreduced run gives.
``eventually``
    reduced only when the model's ample function says its sets keep them
    (``ample.keeps_eventually``) and lists every enabled action of a state
    (``ample.enabled(state)``): a reduced state that falsifies a condition then
    records the fairness classes of *all* its actions, not just the ample
    one's, so a fair cycle of the reduced graph is a fair cycle of the full
    one.  The other direction (every fair cycle and every terminal of the full
    graph has one in the reduced graph) is the model's argument.  A stuck
    behaviour (a terminal) keeps its length by that argument; a lasso's
    length is the liveness pass's pick on the graph it was given, so when the
    reduced run reports a lasso :func:`confirm` re-runs the whole search
    unreduced and reports its violations (unless the reduction narrowed no
    state at all: the graph was then the full one).  A run with a visitor (it wants the
    whole graph) is never reduced.
``deadlock``
    a deadlock found is confirmed like a violation; not missing one is the
    model's to answer for (its ample sets must keep states with no
    successor: stubborn sets do).
State counts are those of the reduced graph: fewer, and not comparable with
an unreduced run's.
"""

from __future__ import annotations

from collections.abc import Callable

from .hooks import AmpleSets, Hooks
from .properties import TransitionSystem


def ample_of(hooks: Hooks, por: bool, eventual: bool, visitor) -> AmpleSets | None:
    """The model's ample sets (``hooks.ample``) when the run may reduce, else None (``eventual``: the run
    has ``eventually`` properties, which need the sets' ``keeps_eventually``)."""
    if not por or visitor is not None or hooks.ample is None:
        return None
    return hooks.ample if not eventual or hooks.ample.keeps_eventually else None


def confirm(model: TransitionSystem, reduced, explore: Callable, limits, **options):
    """Replace a reduced run's counterexamples and warnings by the shortest unreduced ones.

    Nothing to do when every one ends at a level the reduction left exact
    (:func:`exact`).  Otherwise ``explore`` is called unreduced with
    ``max_depth`` covering the longest reduced counterexample (with no depth
    bound when one of them is a lasso, an ``eventually`` counterexample that
    needs the complete graph); its violations replace the reduced ones, in
    its order.  Any reduced violation it did not meet is kept, so nothing
    found is dropped (a confirming run cut short by ``limits`` leaves the
    reduced ones it did not reach), but for one case: with
    ``stop_on_violation`` a confirming run that stopped at its first
    violation is the answer, whole, as an unreduced run's first violations
    are what a stopping run reports (a reduced counterexample deeper than
    that is not a first one).  Returns ``reduced`` with ``confirmed`` set to
    the number of states the confirming run explored.
    """
    from dataclasses import replace

    found = reduced.violations + reduced.warnings
    if not found or exact(reduced, found):
        return reduced
    if any(v.path.loop_start is not None for v in found):
        full = explore(model, limits, por=False, **options)  # a lasso needs the whole graph
    else:
        depth = max(len(v.path) for v in found)
        full = explore(model, replace(limits, max_depth=depth + 1), por=False, **options)
    whole = options.get("stop_on_violation") and full.violations and full.limit is None
    reduced.violations = full.violations if whole else _merged(full.violations, reduced.violations)
    reduced.warnings = full.warnings if whole else _merged(full.warnings, reduced.warnings)
    if options.get("stop_on_violation"):
        reduced.witnesses = full.witnesses
    reduced.confirmed = full.stats.states
    return reduced


def exact(reduced, found: list) -> bool:
    """Whether the counterexamples ``found`` are already the unreduced run's: the reduction narrowed no state
    at all, or none is a lasso and each ends at a level no deeper than the first one it narrowed (module
    docstring, ``always``)."""
    if reduced.exact_to is None:
        return True
    return all(v.path.loop_start is None and len(v.path) <= reduced.exact_to for v in found)


def _merged(confirmed: list, reduced: list) -> list:
    """The confirming run's counterexamples, then the reduced ones of properties it did not reach."""
    names = {v.property.name for v in confirmed}
    return confirmed + [v for v in reduced if v.property.name not in names]
