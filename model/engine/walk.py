"""Random walks: bug hunting beyond the bounds an exhaustive search can finish (TLC's simulate mode).

:func:`random_walks` starts ``walks`` behaviours from a random initial state
and takes a random enabled action at each step, up to ``depth`` steps or
until no action is enabled.  Every state on the way is checked against the
``always`` properties (and deadlocks, as the model's ``deadlock_property``,
when it checks them), and the shortest violating walk found per property is reported; a state met twice
on one walk cuts the loop between the two visits out of the walk, so a
reported walk never revisits a state.  Walks are reproducible from
``seed``.

What it covers, and what it does not
------------------------------------
A walk finds violations, never their absence: a run without one is
``incomplete`` (never ``holds``), and its counterexamples are the shortest
walks found, not the shortest behaviours (an exhaustive search gives
those).  ``sometimes`` witnesses met are reported, a missing one says
nothing.  ``eventually`` properties are not checked.  Every property is
followed past the first violation of another, as walks are independent.
Coverage (:mod:`.search_coverage`) counts the steps taken per action kind, and per
``always`` property the states visited (evaluated) and those armed, counted
at every visit; ``violated`` is 1 for a property some walk violated.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from .search_coverage import Tally, summarize
from .hooks import hooks_of
from .path import replay
from .properties import TransitionSystem, reject_duplicate_names
from .results import Result, Stats, Violation
from .store import FP_MASK


def random_walks(model: TransitionSystem, walks: int, seed: int = 0, depth: int = 200,
                 progress: Callable[[Stats], None] | None = None, max_seconds: float | None = None) -> Result:
    """Walk ``walks`` random behaviours of at most ``depth`` steps; report the shortest violations found.

    Examples
    --------
    >>> from acplab.model.engine.twophase import TwoPhase
    >>> random_walks(TwoPhase(3, broken=True), 200, seed=1).verdict
    'violated'
    """
    props = list(model.properties())
    reject_duplicate_names(props)
    always = [p for p in props if p.expectation == "always"]
    sometimes = [p for p in props if p.expectation == "sometimes"]
    hooks = hooks_of(model)
    fingerprint, check_deadlock, is_final = hooks.fingerprint, hooks.check_deadlock, hooks.is_final
    deadlock = hooks.deadlock_property  # what a stuck state violates, named by the model
    rng = random.Random(seed)
    inits = list(model.init_states())
    best: dict[str, list[int]] = {}
    witnessed: dict[str, list[int]] = {}
    seen: set[int] = set()
    tally = Tally(model, props)
    visits = 0
    stats = Stats()
    started = time.perf_counter()
    next_report = started + 0.5
    done = 0
    where: dict[int, int]  # per walk: fingerprint -> its place on the path
    states: list
    for done in range(1, walks + 1):
        ordinal = rng.randrange(len(inits))
        state, token, where, states = inits[ordinal], [ordinal], {}, []
        step = None  # the successor that led to ``state``
        for _ in range(depth + 1):
            fp = fingerprint(state) & FP_MASK
            seen.add(fp)
            if fp in where:  # a loop: cut it out and go on from the first visit (the very state replay gives)
                at = where[fp]
                del token[at + 1:], states[at + 1:]
                where = {f: i for f, i in where.items() if i <= at}
                state = states[at]
            else:
                where[fp] = len(token) - 1
                states.append(state)
            visits += 1
            tally.state(state, step)
            _note(best, [p.name for p in always if not p.condition(state)], token)
            _note(witnessed, [p.name for p in sometimes if p.condition(state)], token)
            successors = list(model.successors(state))
            if not successors:
                tally.terminals += 1
                if check_deadlock and not (is_final and is_final(state)):
                    _note(best, [deadlock.name], token)
                break
            if len(token) > depth:
                break
            pick = rng.randrange(len(successors))
            step = successors[pick]
            state = step[1]
            if tally.kind is not None:
                tally.actions[step[0]] = tally.actions.get(step[0], 0) + 1
            token.append(pick)
            stats.transitions += 1
        stats.depth = max(stats.depth, len(token))
        now = time.perf_counter()
        if progress is not None and now >= next_report:
            progress(Stats(len(seen), stats.transitions, stats.depth, walks - done, now - started))
            next_report = now + 0.5
        if max_seconds is not None and now - started >= max_seconds:
            break
    stats.states, stats.seconds = len(seen), time.perf_counter() - started
    result = Result(complete=False, stats=stats, limit=f"{done} random walks of at most {depth} steps (seed {seed})")
    named = {p.name: p for p in always}
    named[deadlock.name] = deadlock
    for name, token in sorted(best.items(), key=lambda kv: (len(kv[1]), kv[0])):
        result.violations.append(Violation(named[name], replay(model, token)))
    result.witnesses = {p.name: replay(model, witnessed[p.name]) if p.name in witnessed else None
                        for p in sometimes}
    result.coverage = summarize([p for p in props if p.expectation != "eventually"], tally, visits, {},
                                set(best), set(), deadlock if check_deadlock else None)
    return result


def _note(found: dict[str, list[int]], names: list[str], token: list[int]) -> None:
    """Keep ``token`` for each name it reaches in fewer steps than before."""
    for name in names:
        if name not in found or len(token) < len(found[name]):
            found[name] = list(token)
