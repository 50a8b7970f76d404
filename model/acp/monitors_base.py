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

``wire = True`` monitors read only ``Send`` (and ``Cut``) events of wire
messages and ignore the worlds, so the trace checker runs them unchanged on
recorded traffic; the others need internal events or the worlds (insertion,
failure, a client's reasoning) and say so.
"""

from __future__ import annotations

from .events import A2C
from acplab.model.wire.capture import conn_label as conn_name  # noqa: F401 - shared by the monitor modules
from .state import World

TERMINAL_TOOL = ("completed", "failed", "cancelled")
MESSAGE_UPDATES = ("user_message", "user_message_chunk", "agent_message", "agent_message_chunk", "agent_thought",
                   "agent_thought_chunk")


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


def rename_conn(conn, new_index):
    return (new_index[conn[0]], conn[1])


def rename_conn_pairs(pairs, new_index) -> tuple:
    """``((conn, x), ...)`` with clients renamed, sorted again."""
    return tuple(sorted((rename_conn(c, new_index), x) for c, x in pairs))


def sent(event, direction, kind) -> bool:
    return event.kind == "send" and event.dir == direction and event.msg.kind == kind


def sent_update(event, *kinds):
    if event.kind != "send" or event.dir != A2C or event.msg.kind != "update":
        return None
    update = event.msg.update
    return update if update.kind in kinds else None


def entry_of(world: World, sub):
    for e in world.agent.history:
        if e.sub == sub:
            return e
    return None


def position(world: World, mid) -> int | None:
    """The message's place in the agent's history (its position, P1), or None."""
    for n, e in enumerate(world.agent.history):
        if e.mid == mid:
            return n
    return None


def work_ended(before: World | None, after: World | None) -> bool:
    """The step ended foreground work (it ran before and not after)."""
    return before is not None and after is not None and before.agent.work is not None and after.agent.work is None


def attached_conns(world: World) -> list[tuple[int, int]]:
    """The connections the agent has attached to the session (its broadcast targets)."""
    return [(c, world.links[c].epoch) for c, on in enumerate(world.agent.attached) if on]
