"""The monitor: an observer of the event stream tied to RULES.md IDs, and the helpers monitors share.

A monitor never acts.  It keeps a small hashable bookkeeping value (part of
the explored state), sees every event of a step with the worlds before and
after, and may report a violation as a sentence with actual and expected
values.  Some also check the world when it is at rest (nothing in flight,
no work, no request pending).

Three kinds, by class attributes (checked when a subclass is defined, :func:`check_declared`):

* ``expectation = "always"`` (the default): ``observe`` or ``at_rest``
  return a sentence when the rule is broken;
* ``level = "warning"``: the same, for a SHOULD: reported, never a violation
  (``level`` is ``violation`` or ``warning``, the vocabulary of every monitor and property);
* ``expectation = "eventually"``: an obligation (hot/cold).  ``owes(m)`` says
  whether something is owed; the explorer checks that every behaviour
  discharges it, under weak fairness; ``at_rest`` says what is owed (the
  trace checker calls it at the end of a capture).

``needs`` is ``{"state"}``: these monitors read the worlds around each step,
so nothing may keep their answers per (bookkeeping, event) as the rule
monitors' adapter does (:mod:`.rules_in_model` refuses a member that needs state).

The monitors left of this kind judge a client's record (:mod:`.monitors`);
the rules the agent's side of a connection can witness are judged by the
trace checker's rule monitors (:mod:`.rules`, through :mod:`.rules_in_model`).
"""

from __future__ import annotations

from acplab.model.engine.properties import SEVERITIES, VIOLATION
from acplab.model.wire.capture import conn_label as conn_name  # noqa: F401 - shared by the monitor modules

from .state import World

#: what a monitor may read beyond its own bookkeeping: the wire traffic, internal events, the model's worlds
WIRE, INTERNAL, STATE = "wire", "internal", "state"
NEEDS = frozenset({WIRE, INTERNAL, STATE})
#: what a monitor's property expects of every run
ALWAYS, EVENTUALLY = "always", "eventually"


#: every monitor class of either protocol (this one and :mod:`.rule_monitor`'s), in the order it was defined:
#: filled by the classes themselves (``__init_subclass__``), read through :func:`defined_in`
DEFINED: list[type] = []


def declare(cls) -> None:
    """Check a monitor class's declarations (:func:`check_declared`) and record it in :data:`DEFINED`."""
    check_declared(cls)
    DEFINED.append(cls)


def defined_in(*modules: str) -> tuple[type, ...]:
    """The monitor classes defined in ``modules`` (module names): module by module in the order given, each
    module's in the order of its class statements.  The one way to list a kind of monitor (the rule families,
    the client views, the goals), so a class cannot be left out of its list; a module named twice, or two
    classes of one ``name`` (a module run twice, a copied class), is a TypeError naming them."""
    if len(set(modules)) != len(modules):
        raise TypeError(f"monitor modules named twice: {sorted(m for m in set(modules) if modules.count(m) > 1)}")
    classes = tuple(cls for module in modules for cls in DEFINED if cls.__module__ == module)
    names: dict[str, type] = {}
    for cls in classes:
        first = names.setdefault(cls.name, cls)
        if first is not cls:
            raise TypeError(f"monitor {cls.name} is defined twice: {first.__module__}.{first.__qualname__} "
                            f"and {cls.__module__}.{cls.__qualname__}")
    return classes


def check_declared(cls) -> None:
    """A monitor class's ``level``, ``expectation`` and ``needs`` are in the one vocabulary (a TypeError naming
    the class otherwise): checked when the class is defined, so a monitor with ``level = "error"`` never runs."""
    if cls.level not in SEVERITIES:
        raise TypeError(f"monitor {cls.__name__}: level must be one of {', '.join(SEVERITIES)}, got {cls.level!r}")
    if cls.expectation not in (ALWAYS, EVENTUALLY):
        raise TypeError(f"monitor {cls.__name__}: expectation must be always or eventually, got {cls.expectation!r}")
    if not (isinstance(cls.needs, frozenset) and cls.needs and cls.needs <= NEEDS):
        raise TypeError(f"monitor {cls.__name__}: needs must be a non-empty frozenset of {sorted(NEEDS)}, "
                        f"got {cls.needs!r}")


class Declared:
    """What every monitor declares, whichever hooks it has (:class:`Monitor`'s ``observe`` / ``at_rest`` on the
    model's worlds, or :class:`.rule_monitor.Monitor`'s ``on`` / ``end`` on observations): the property's
    ``name``, the ``rules`` it judges, a ``description``, its ``level``, ``expectation`` and ``needs``, checked
    and registered when a subclass is defined (:func:`declare`)."""

    name = ""
    rules: tuple[str, ...] = ()
    description = ""
    #: "violation" (MUST) or "warning" (SHOULD: reported, verdict unchanged)
    level = VIOLATION
    #: "always" (a safety rule) or "eventually" (an obligation that must be discharged)
    expectation = ALWAYS
    #: what it reads beyond its own bookkeeping (:data:`NEEDS`)
    needs: frozenset = frozenset({STATE})

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        declare(cls)


class Monitor(Declared):
    """A property as an observer of the model's steps; subclasses set the class attributes and override hooks.

    It reads the worlds before and after each step (``needs`` is ``{"state"}``)."""

    wire = False
    kinds: frozenset[str] = frozenset()
    initial = None

    def observe(self, mstate, event, before: World | None, after: World | None):
        """Return ``(new bookkeeping, violation sentence or None)``."""
        return mstate, None

    def at_rest(self, mstate, world: World | None) -> str | None:
        return None

    def owes(self, mstate) -> bool:
        """For ``eventually`` monitors: whether an obligation is open (cheap: called on every state)."""
        return bool(mstate)

    @property
    def keeps_bookkeeping(self) -> bool:
        """Whether the monitor sets its own ``initial`` bookkeeping: then it is *armed* (has something to
        watch, for coverage) where its bookkeeping is not ``initial``.  One that judges each event on its
        own keeps none, and coverage reports its arming as unknown."""
        return any("initial" in vars(c) for c in type(self).__mro__ if c is not Monitor)

    def rename_clients(self, mstate, new_index: dict[int, int]):
        """The bookkeeping with client indices renamed (symmetry reduction); override if it names any."""
        return mstate

