"""A run as an ITF trace (``X.itf.json``, the Informal Trace Format Apalache and Quint read and show).

The format and acplab's variables are :mod:`acplab.model.wire.itf`'s; here a
behaviour becomes its states.  An ACP run's wire is exactly what its
``X.jsonl`` holds (the preamble in state 0, then each step's sends,
numbered as there) and its ``internal`` events exactly the ``X.events.jsonl``
sidecar's, so ``acplab trace check X.itf.json`` judges what ``trace check
X.jsonl`` judges.  A bridge run has no preamble (as its ``.jsonl``) and no
internal events.
"""

from __future__ import annotations

import json

from acplab.model.wire.itf import itf_trace

from .atomic import write_atomic

SOURCE = "acplab"


def acp_states(model, steps, records: list[dict], head: list[dict], events) -> list[dict]:
    """State 0 (the opening: ``head``'s records) then one state per step, holding its records and events.

    ``records`` are the run's own (numbered after the preamble), ``events``
    its sidecar triples (``after`` counting the preamble too), in step order.
    """
    from acplab.model.acp.rules_in_model import sidecar_events

    states = [{"step": 0, "action": "the conversation opens (the model starts with every client attached)",
               "wire": head, "internal": []}]
    events = list(events)
    at_record = at_event = 0
    for n, step in enumerate(steps, 1):
        sends = sum(1 for e in step[1] if e.kind == "send" and not e.lost)
        made = len(sidecar_events([step]))  # the step's own internal events: their count does not depend on seq
        states.append({"step": n, "action": model.format_action(step[0]),
                       "wire": records[at_record:at_record + sends], "internal": events[at_event:at_event + made]})
        at_record += sends
        at_event += made
    return states


def bridge_states(model, steps, records: list[dict], head: list[dict] = ()) -> list[dict]:
    """One state per step of a bridge run, with the records it put on either connection; state 0 holds the
    wire log's preamble ``head`` (each connection's ``initialize`` and ``session/new``), as in the ``.jsonl``."""
    states = [{"step": 0, "action": "the bridge's channels are empty", "wire": list(head), "internal": []}]
    at = 0
    for n, (action, events) in enumerate(steps, 1):
        sends = sum(1 for e in events if e.kind == "send")
        states.append({"step": n, "action": model.format_action(action), "wire": records[at:at + sends],
                       "internal": []})
        at += sends
    return states


def write_itf(path, states: list[dict], title: str, about: dict, loop_start: int | None = None,
              internal: bool = True) -> str:
    """Write ``path`` (an ``.itf.json``) and return it; ``about`` is the ``#meta.acplab`` object.

    ``internal`` False (a bridge run) says the states' ``internal`` lists are
    not a record of internal events, so ``trace check`` judges the wire alone.
    A lasso (``loop_start``: the state its last step returns to) has ITF's
    ``loop`` one state later: a lasso's last state *is* state ``loop_start``,
    so the states that repeat forever are ``loop_start + 1`` to the last,
    and the last one's successor is ``states[loop]`` (ADR-015's reading).
    """
    meta = {"source": SOURCE, "description": title, "acplab": {**about, "internal": internal}}
    trace = itf_trace(meta, states, None if loop_start is None else loop_start + 1)
    write_atomic(path, json.dumps(trace, ensure_ascii=False, indent=1) + "\n")
    return str(path)
