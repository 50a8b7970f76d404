"""The monitor: an observer of the event stream tied to RULES.md IDs, and the helpers monitors share.

A monitor never acts.  It keeps a small hashable bookkeeping value (part of
the explored state), sees every event of a step with the worlds before and
after, and may report a violation as a sentence with actual and expected
values.  Some also check the world when it is at rest (nothing in flight,
no work, no request pending).

Three kinds, by class attributes:

* ``expectation = "always"`` (the default): ``observe`` or ``at_rest``
  return a sentence when the rule is broken;
* ``level = "warning"``: the same, for a SHOULD: reported, never a violation;
* ``expectation = "eventually"``: an obligation (hot/cold).  ``owes(m)`` says
  whether something is owed; the explorer checks that every behaviour
  discharges it, under weak fairness; ``at_rest`` says what is owed (the
  trace checker calls it at the end of a capture).

The monitors left of this kind judge a client's record (:mod:`.monitors`);
the rules the agent's side of a connection can witness are judged by the
trace checker's rule monitors (:mod:`.rules`, through :mod:`.adapter`).
"""

from __future__ import annotations

from acplab.model.wire.capture import conn_label as conn_name  # noqa: F401 - shared by the monitor modules
from .state import World

class Monitor:
    """A property as an observer; subclasses set the class attributes and override hooks."""

    name = ""
    rules: tuple[str, ...] = ()
    description = ""
    wire = False
    kinds: frozenset[str] = frozenset()
    initial = None
    #: "always" (a safety rule) or "eventually" (an obligation that must be discharged)
    expectation = "always"
    #: "error" (MUST) or "warning" (SHOULD: reported, verdict unchanged)
    level = "error"

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


def work_ended(before: World | None, after: World | None) -> bool:
    """The step ended foreground work (it ran before and not after)."""
    return before is not None and after is not None and before.agent.work is not None and after.agent.work is None
