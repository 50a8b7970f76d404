"""Partial-order reduction for the ACP model: a delivery to a client that nothing else can disturb.

Two clients each consuming the agent's broadcast interleave in every order;
most of those orders lead to the same states.  The ample set here is one
action, ``deliver_to_client(c)``, taken alone when all of these hold in the
state ``w``:

1. the network is FIFO and no drop, cut or restart budget is left, so
   nothing but this delivery can remove the head of ``c``'s channel;
2. client ``c`` has no action of its own enabled (no submit, cancel, answer
   or reconnect): its record then changes only through deliveries to it,
   and budgets only shrink, so none becomes enabled before this delivery;
3. the delivery's step emits nothing but the ``Deliver`` event (no
   ``Bind``, no send): no monitor observes it, and, as client ``c``'s
   record and the message are the same whenever it is taken, it emits the
   same events later;
4. ``c``'s channel holds at least two messages, so the world cannot be at
   rest (quiescent) before the second one is delivered, which FIFO puts
   after this one: every at-rest check along a reordered path happens in
   the same state as along the original;
5. every monitor of the model is one this argument was checked against
   (below): their ``observe`` reads events and the agent's record, never a
   client's record or a channel, and none observes ``deliver``.

Why verdicts are kept.  Take a path from ``w`` to a violating state.  Every
other action commutes with the delivery: agent steps and deliveries to the
agent append to ``c``'s channel tail or pop its other channel, other
clients touch their own records, and monitors see the same events in the
same bookkeeping (5).  Moving the delivery to the front (or adding it, if
the path never took it) gives a path through states that differ only in
client ``c`` and ``c``'s channel head, with the same monitor bookkeeping and
the same violation recorded at each step (3, 4), ending in a violation of
the same property.  The key action stays enabled on every path that avoids
it (1), and a cycle made of reduced steps alone is impossible, since each
strictly lowers the number of messages in flight (C3).  With symmetry the
argument runs on the representatives, the rule being blind to client names
apart from the choice of ``c``.

Not covered, hence never reduced: states with a fault budget left, an
unordered network, a delivery whose effect a monitor sees, and models whose
monitors or step functions differ from the reviewed text (see
:data:`REVIEWED`).  The engine adds its own rules (:mod:`acplab.model.engine.por`):
no reduction while a witness is missing or with ``eventually`` properties,
and counterexamples confirmed shortest by an unreduced bounded run.
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

from . import client, events, model, monitors, network, state

#: The files the argument above was checked against, by SHA-256 of their
#: text.  When one changes, the reduction switches itself off (and says
#: why) until someone re-reads the argument and updates the digest with
#: :func:`source_digest`.
REVIEWED = "5577914d64cf72dc5fc1ccc5a81f0f16e69aac3b45183264486a097a63e4c3b8"

_REVIEWED_MODULES = (client, events, model, monitors, network, state)


def source_digest() -> str:
    """SHA-256 over the text of the modules the argument depends on."""
    h = hashlib.sha256()
    for module in _REVIEWED_MODULES:
        h.update(Path(inspect.getsourcefile(module)).read_bytes())
    return h.hexdigest()


def why_not(m: "model.AcpModel") -> str | None:
    """Why this model cannot be reduced, or None when it can."""
    if not m.bounds.ordered:
        return "the network is unordered"
    known = {type(x) for x in monitors.ALL_MONITORS}
    strangers = [x.name for x in m.monitors if type(x) not in known]
    if strangers:
        return f"monitor {strangers[0]} is not one the reduction was checked against"
    if any("deliver" in x.kinds for x in m.monitors):
        return "a monitor observes deliveries"
    if source_digest() != REVIEWED:
        return "the model's text changed since acp/reduction.py was checked against it"
    return None


class DeliveryReduction:
    """``ample(w)`` for :class:`~.model.AcpModel`: one undisturbable delivery to a client, or None."""

    def __init__(self, m: "model.AcpModel") -> None:
        self.model = m

    def __call__(self, w: state.World):
        b = w.budget
        if b.drops or b.cuts or b.restarts or w.violation is not None:
            return None
        acts = self.model.actions(w)
        busy = {a.args[0] for a in acts if a.actor == "client"}
        for ordinal, a in enumerate(acts):
            if a.name != "deliver_to_client" or a.actor != "net":
                continue
            c = a.args[0]
            if c in busy or len(w.links[c].to_client) < 2:
                continue
            nxt, evs = self.model.step(w, a)
            if len(evs) == 1:
                return [(ordinal, (a, nxt, evs))]
        return None


def reduce(m: "model.AcpModel") -> str | None:
    """Give ``m`` its ample sets when the argument covers it; returns why not otherwise."""
    reason = why_not(m)
    if reason is None:
        m.ample = DeliveryReduction(m)
    return reason
