"""Behaviours as paths: an initial state, then the steps taken, rebuilt by replaying ordinals."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .properties import State, TransitionSystem


@dataclass(frozen=True)
class Path:
    """A behaviour: the initial state, then ``(action, state)`` steps.

    ``effects[i]`` is what step ``i`` produced (the optional third item of the
    model's successors, such as its events; ``()`` when the model gives none).
    ``ordinals`` are the positions of each step among its state's successors
    (the first picks the initial state): a replay token.  ``loop_start`` is set
    for a lasso: the step index the last state returns to.
    """

    initial: State
    steps: tuple[tuple[object, State], ...]
    ordinals: tuple[int, ...]
    loop_start: int | None = None
    effects: tuple[tuple, ...] = ()

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def last_state(self) -> State:
        return self.steps[-1][1] if self.steps else self.initial

    def states(self) -> list[State]:
        return [self.initial] + [s for _, s in self.steps]

    def actions_with_effects(self) -> list[tuple[object, tuple]]:
        """``(action, effects)`` per step: what renderers of a behaviour read."""
        effects = self.effects or ((),) * len(self.steps)
        return [(action, eff) for (action, _state), eff in zip(self.steps, effects)]

    def extended(self, more: Sequence[tuple], more_ordinals: Sequence[int]) -> Path:
        """This path carried on by successor tuples ``(action, state[, effects])``."""
        steps = self.steps + tuple((s[0], s[1]) for s in more)
        effects = (self.effects or ((),) * len(self.steps)) + tuple(_effects(s) for s in more)
        return Path(self.initial, steps, self.ordinals + tuple(more_ordinals), None, effects)


def _effects(successor: tuple) -> tuple:
    return tuple(successor[2]) if len(successor) > 2 else ()


class ReplayError(RuntimeError):
    """A stored path that does not replay on the model: its message names the step."""


def replay(model: TransitionSystem, ordinals: Sequence[int], loop_start=None) -> Path:
    """Rebuild a path from its ordinals: the first picks the initial state, each next one an action.

    Each step is the action recorded at that position of the state's
    enabled actions, taken once: with the model's ``actions`` and ``step``
    hooks (:mod:`.hooks`), one ``step`` per step; without them, the
    ordinal-th of ``successors(state)``.  A step that does not replay (the
    model enumerates fewer actions there than the search did: a model whose
    ``successors`` is not deterministic, or changed since the path was
    stored) raises :class:`ReplayError` naming the step.
    """
    from .hooks import hooks_of

    hooks = hooks_of(model)
    inits = list(model.init_states())
    if not 0 <= ordinals[0] < len(inits):
        raise ReplayError(f"step 0 does not replay: the path starts at initial state {ordinals[0]}, "
                          f"the model has {len(inits)}")
    state = inits[ordinals[0]]
    initial, steps, effects = state, [], []
    actions_of, step_of = hooks.actions, hooks.step  # both or neither (hooks_of)
    for n, ordinal in enumerate(ordinals[1:], 1):
        successor: tuple | None
        if actions_of is not None and step_of is not None:
            actions = actions_of(state)
            if not 0 <= ordinal < len(actions):
                raise ReplayError(_lost(n, ordinal, len(actions)))
            successor = (actions[ordinal], *step_of(state, actions[ordinal]))
        else:
            successors = model.successors(state)
            successor = next((s for i, s in enumerate(successors) if i == ordinal), None)
            if successor is None:
                raise ReplayError(_lost(n, ordinal, len(list(model.successors(state)))))
        steps.append((successor[0], successor[1]))
        effects.append(_effects(successor))
        state = successor[1]
    return Path(initial, tuple(steps), tuple(ordinals), loop_start, tuple(effects))


def _lost(n: int, ordinal: int, enabled: int) -> str:
    return (f"step {n} does not replay: the path takes action {ordinal + 1} of the state reached, which has "
            f"{enabled} enabled: the model's successors are not deterministic, or it changed since the path was found")
