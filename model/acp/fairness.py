"""Weak fairness per kind of step: which of the ACP model's actions a behaviour may stop taking.

The liveness pass (:mod:`acplab.model.engine.liveness`) judges obligations on
weakly fair behaviours, and a behaviour may *end* in any state where no fair
action is enabled, even if unfair ones (a user's choice, a fault) still are.
So this table decides what a pending user choice can and cannot excuse:

fair (weakly, one class per kind)
    the agent's steps: insertion, the live report, the response, every step
    of foreground work, late updates, each step of a resume (each by name); deliveries (per
    channel: ``(name, client)``); a client's answer to a permission request
    it was asked (per client: a user asked a question answers it in the end;
    whether it allows or rejects is its choice; the RFD is silent, so this is
    a choice: without it every permission scenario would owe an idle for ever);
unfair (None)
    user submissions and retries, ``session/cancel``, ``$/cancel_request``, reconnects;
    faults (drops, cuts, failures, rejections), restarts; the agent's own
    optional choices (hooks, IDs before insertion, its own work, imports,
    silent work, forgetting a retained message, a notice) and a runtime that swallows a prompt.

Work that ends only if the user cancels it therefore violates its
obligation: the behaviour in which the user never cancels is examined.
"""

from __future__ import annotations

from .events import Action

#: agent actions that are the agent's own optional choices, faults or restarts
UNFAIR_AGENT = frozenset({"reject", "fail", "import", "restart", "start_own_work", "hook", "assign_id",
                          "keep_working", "forget", "swallow", "notice"})
#: network actions that are faults
UNFAIR_NET = frozenset({"drop_to_agent", "drop_to_client", "cut"})
#: client actions a user may take or not, for ever
FAIR_CLIENT = frozenset({"answer_permission"})
#: the messages whose delivery to a client enables one of its FAIR_CLIENT actions (the partial-order
#: reduction never delivers these early: its argument needs deliveries that enable no fair class)
ENABLES_FAIR_CLIENT = frozenset({"request_permission"})


def fairness_class(a: Action):
    """The weak-fairness class of ``a`` (module docstring), or None for an action that needs none."""
    if a.actor == "net":
        return None if a.name in UNFAIR_NET else (a.name, a.args[0])
    if a.actor == "agent":
        return None if a.name in UNFAIR_AGENT else ("agent", a.name)
    if a.actor == "client" and a.name in FAIR_CLIENT:
        return ("client", a.name, a.args[0])
    return None
