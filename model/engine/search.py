"""The explorer's entry point: :func:`explore`, the one breadth-first search (:mod:`.parallel`).

A model offers the four methods of :class:`~.properties.TransitionSystem`:

``init_states()``
    the initial states, in a fixed order;
``successors(state)``
    ``(action, next_state)`` pairs, or ``(action, next_state, effects)``
    triples, in a deterministic order (paths are stored as ordinals into this
    sequence and rebuilt by replaying it; the effects, such as a step's
    events, travel with the rebuilt path);
``properties()``
    a sequence of :class:`Property`;
``format_action(action)``
    a one-line label for traces;

and any of the optional hooks that :class:`~.hooks.Model` declares (the
fingerprint, deadlocks and final states, fairness, coverage, partial-order
reduction, one-step replay).

What each expectation covers
----------------------------
``always``
    checked on every reachable state when it is first discovered; the first
    (hence shortest, by breadth-first order) violating state is reported.
    A violating state is not expanded further, so a second property whose only
    violations lie beyond the first one's violating states is reported only
    through paths that avoid them.  ``severity="warning"`` (a SHOULD): the
    first violating state is reported as a warning with its shortest path,
    the state is still expanded, and the verdict does not change.
``sometimes``
    a witness: some reachable state satisfies the condition.  A missing
    *required* witness after a complete run makes the verdict ``violated``
    (the model cannot reach a state it was declared to reach); a missing
    witness with ``required=False`` is only listed, never changes the verdict.
``eventually``
    every maximal behaviour reaches a state satisfying the condition: from
    the initial states (``<>P``), or with ``every_state`` from every
    reachable state (``[]<>P``: obligations).  After a complete exploration
    the explorer keeps the subgraph of states where the condition is false
    (reachable through such states only, for ``<>P``); it reports a violation
    if that subgraph contains a terminal state (a finite behaviour that never
    satisfies it; the shallowest one) or a cycle that is weakly fair for the
    model's fairness classes (an infinite one; the counterexample is a lasso
    whose ``loop_start`` says where the loop begins).  Covered: weak fairness
    per class (a cycle the system leaves by a continuously enabled class is
    not a counterexample).  Not covered: strong fairness; fairness per action
    instance; a model without ``fairness_class`` (then any cycle counts); and
    incomplete runs (an ``eventually`` property is never reported as holding
    when a limit was hit).
deadlock
    a terminal state (no successor) that the model's ``is_final`` does not
    accept violates ``deadlock_property`` (checked when ``check_deadlock``);
    the shallowest such state is reported once.

States are stored as 60-bit fingerprints (the model's 64-bit structural
fingerprint, :mod:`.fingerprint`, masked to 60 bits, which keeps each one a
32-byte int), not as values: two distinct states with equal fingerprints
would be merged.  The chance is about n**2 / 2**61 for n states (about 4e-8
for a million states).
"""

from __future__ import annotations

from .parallel import explore
from .results import Limits, Result, Stats, Violation, Visitor

__all__ = ["Limits", "Result", "Stats", "Violation", "Visitor", "explore"]
