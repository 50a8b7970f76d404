"""Every hook a model may offer the engine, declared once (:class:`Model`), read once (:func:`hooks_of`).

A model must offer the four methods of
:class:`~.properties.TransitionSystem`; :class:`Model` adds the optional
ones, each with the default the engine uses when a model leaves it out
(:class:`Hooks` holds them, resolved).  The engine, the random walks and
path replay read a model's hooks only through :func:`hooks_of`, so this
Protocol is the whole interface: a hook named here is honoured everywhere,
and a name that is not here is not a hook.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

from .fingerprint import fingerprint as structural_fingerprint
from .properties import DEADLOCK, Action, Property, State, TransitionSystem


class AmpleSets(Protocol):
    """A model's partial-order reduction (:mod:`.por`).

    ``ample(state)`` is ``None`` (expand fully) or a non-empty part of
    ``successors(state)`` as ``(ordinal, successor)`` pairs.  ``keeps_eventually``:
    the model's argument covers ``eventually`` properties too; then
    ``enabled(state)`` must list every enabled action of a state (the liveness
    pass records all their fairness classes on a reduced state).  Without both,
    a run with ``eventually`` properties is not reduced.
    """

    keeps_eventually: bool

    def __call__(self, state: State) -> Any: ...
    def enabled(self, state: State) -> Sequence[Action]: ...


class Model(TransitionSystem, Protocol):
    """The optional hooks, with the default each takes when a model does not define it.

    ``fingerprint(state) -> int``
        identifies a state (default: the structural fingerprint of
        :mod:`.fingerprint`; a model with a symmetry reduction fingerprints a
        canonical representative).  It must be equal for equal states and
        the same in every process (checkpoints and workers rely on it).
    ``check_deadlock: bool``
        whether a terminal state that is not final is a violation (default ``True``).
    ``deadlock_property: Property``
        what such a state violates (default :data:`~.properties.DEADLOCK`).
    ``is_final(state) -> bool``
        a terminal state that is not a deadlock (default: none is).
    ``fairness_class(action) -> Hashable | None``
        weak fairness for ``eventually`` (:mod:`.liveness`; default: no fairness).
    ``action_kind(action) -> str``
        what coverage counts actions by (:mod:`.search_coverage`; default: no action counts).
    ``armed_during(successor) -> Collection[str]``
        the properties a step armed on its way (:mod:`.search_coverage`; default: only states arm).
    ``ample: AmpleSets``
        partial-order reduction (:mod:`.por`; default: none): called on a
        state; its ``keeps_eventually`` and ``enabled`` (:class:`AmpleSets`)
        say whether the engine may also reduce a run with ``eventually`` properties.
    ``actions(state) -> Sequence[Action]`` and ``step(state, action) -> (next_state, effects)``
        the enabled actions in the order of ``successors(state)``, and one of
        them taken: path replay then computes one step per step of a path,
        not every successor (:mod:`.path`; default: replay picks from ``successors``).
    """

    def fingerprint(self, state: State) -> int: ...
    check_deadlock: bool
    deadlock_property: Property
    def is_final(self, state: State) -> bool: ...
    def fairness_class(self, action: Action) -> Hashable | None: ...
    def action_kind(self, action: Action) -> str: ...
    def armed_during(self, successor: tuple) -> Collection[str]: ...
    ample: AmpleSets
    def actions(self, state: State) -> Sequence[Action]: ...
    def step(self, state: State, action: Action) -> tuple: ...


@dataclass(frozen=True)
class Hooks:
    """A model's hooks, each resolved to the model's own or the default (``None``: the hook is off)."""

    fingerprint: Callable[[State], int] = structural_fingerprint
    check_deadlock: bool = True
    deadlock_property: Property = DEADLOCK
    is_final: Callable[[State], bool] | None = None
    fairness_class: Callable[[Action], Hashable | None] | None = None
    action_kind: Callable[[Action], str] | None = None
    armed_during: Callable[[tuple], Collection[str]] | None = None
    ample: AmpleSets | None = None
    actions: Callable[[State], Sequence[Action]] | None = None
    step: Callable[[State, Action], tuple] | None = None


#: the optional hooks' names, in :class:`Model`'s order
HOOKS = tuple(f.name for f in fields(Hooks))


def hooks_of(model: TransitionSystem) -> Hooks:
    """The hooks ``model`` offers (each named in :class:`Model`), the defaults for the rest.

    ``actions`` and ``step`` count only together (replay needs both).
    """
    found = {name: getattr(model, name) for name in HOOKS if getattr(model, name, None) is not None}
    if "actions" not in found or "step" not in found:
        found.pop("actions", None)
        found.pop("step", None)
    return Hooks(**found)
