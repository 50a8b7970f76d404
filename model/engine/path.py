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


def replay(model: TransitionSystem, ordinals: Sequence[int], loop_start=None) -> Path:
    """Rebuild a path from its ordinals: the first picks the initial state."""
    inits = list(model.init_states())
    state = inits[ordinals[0]]
    initial, steps, effects = state, [], []
    for ordinal in ordinals[1:]:
        for i, successor in enumerate(model.successors(state)):
            if i == ordinal:
                steps.append((successor[0], successor[1]))
                effects.append(_effects(successor))
                state = successor[1]
                break
        else:  # pragma: no cover - a nondeterministic model
            raise RuntimeError("successors() is not deterministic: a stored path cannot be replayed")
    return Path(initial, tuple(steps), tuple(ordinals), loop_start, tuple(effects))
