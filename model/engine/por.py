"""Partial-order reduction: the engine's side of it (the model computes the ample sets).

A model may offer ``ample(state)``: a reduced expansion of ``state``, as
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
    a violation of every property the full graph violates).  Lengths are not:
    a postponed independent action can make a reduced counterexample longer.
    So whenever the reduced run finds violations, :func:`confirm` re-runs the
    search *unreduced*, bounded by the depth of the longest reduced
    counterexample, and reports its violations: the same properties, each
    with the shortest counterexample and the very path an unreduced run gives.
``eventually``
    not reduced.  A liveness pass needs every terminal state and every cycle
    with the actions enabled on it (for fairness); ample sets keep neither in
    general, so a model with ``eventually`` properties is always explored in
    full, and so is a run with a visitor (it wants the whole graph).
``deadlock``
    a deadlock found is confirmed like a violation; not missing one is the
    model's to answer for (its ample sets must keep states with no
    successor: stubborn sets do).
State counts are those of the reduced graph: fewer, and not comparable with
an unreduced run's.
"""

from __future__ import annotations

from collections.abc import Callable

from .properties import TransitionSystem


def ample_of(model: TransitionSystem, por: bool, eventual: bool, visitor) -> Callable | None:
    """The model's ample function when the run may reduce, else None."""
    if not por or eventual or visitor is not None:
        return None
    return getattr(model, "ample", None)


def confirm(model: TransitionSystem, reduced, explore: Callable, limits, **options):
    """Replace a reduced run's counterexamples by the shortest unreduced ones.

    ``explore`` is called unreduced with ``max_depth`` covering the longest
    reduced counterexample; its violations replace the reduced ones, in its
    order (any reduced violation it did not meet is kept, so nothing found
    is ever dropped; a confirming run cut short by ``limits`` leaves the
    reduced ones it did not reach).  Returns ``reduced`` with ``confirmed`` set to the
    number of states the confirming run explored.
    """
    from dataclasses import replace

    if not reduced.violations:
        return reduced
    depth = max(len(v.path) for v in reduced.violations)
    full = explore(model, replace(limits, max_depth=depth + 1), por=False, **options)
    names = {v.property.name for v in full.violations}
    reduced.violations = full.violations + [v for v in reduced.violations if v.property.name not in names]
    if options.get("stop_on_violation"):
        reduced.witnesses = full.witnesses
    reduced.confirmed = full.stats.states
    return reduced
