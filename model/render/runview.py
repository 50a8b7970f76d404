"""A run as the HTML report steps through it: per step the action, what happened, the wire, the state diff.

:func:`run_view` returns plain data (see :mod:`.html`): ``id``, ``kind``
(counterexample / witness / simulated run), ``name``, ``title``, ``rules``,
``sentence``, ``files``, ``svg`` (the matplotlib sequence diagram, when the
model has one), ``mermaid`` and ``steps``.  Step 0 is the initial state (every
field of it); step ``n`` is the ``n``-th action with its events in protocol
words, the messages it put on the wire as JSON-RPC, and the state fields it
changed.
"""

from __future__ import annotations

import io

from . import bridgeview
from .labels import describe_event
from .mermaid import mermaid
from .statediff import diff, flatten, world_names
from .traces import wire_records


def acp_steps(model, states, steps, times_ms=None, records=None) -> list[dict]:
    """Step views of an ACP run: ``states`` has one more entry than ``steps`` (``[(action, events)]``);
    ``records``: the run's wire records when the caller has them (:func:`.traces.wire_records`)."""
    names = world_names(model)
    out = [_initial(states[0], names)]
    records = iter(wire_records(steps) if records is None else records)
    for n, (action, events) in enumerate(steps):
        sent = sum(1 for e in events if e.kind == "send" and not e.lost)  # the records this step wrote
        wire = [{k: r[k] for k in ("conn", "dir", "msg")} for r in (next(records) for _ in range(sent))]
        out.append({
            "n": n + 1, "label": model.format_action(action),
            "events": [t for t in (describe_event(e) for e in events) if t],
            "wire": wire, "diff": diff(states[n], states[n + 1], names),
            "t_ms": None if times_ms is None else times_ms[n],
        })
    return out


def bridge_steps(model, path) -> list[dict]:
    """Step views of a run of a v1 <-> v2 bridge model (both connections on the wire)."""
    states = path.states()
    names = bridgeview.party_names(model)
    out = [_initial(states[0], {})]
    for n, (action, events) in enumerate(bridgeview.path_events(path)):
        wire = [{k: r[k] for k in ("conn", "dir", "msg")} for r in bridgeview.bridge_records([(action, events)])]
        out.append({"n": n + 1, "label": model.format_action(action),
                    "events": [bridgeview.describe_event(e, names) for e in events], "wire": wire,
                    "diff": diff(states[n], states[n + 1])})
    return out


def state_steps(model, path) -> list[dict]:
    """Step views of any other model (TwoPhase): the action and the fields it changed."""
    states = path.states()
    out = [_initial(states[0], {})]
    for n, (action, _state) in enumerate(path.steps):
        out.append({"n": n + 1, "label": model.format_action(action), "diff": diff(states[n], states[n + 1])})
    return out


def _initial(state, names) -> dict:
    return {"n": 0, "label": "initial state", "diff": [f"{k}: {v}" for k, v in flatten(state, names).items()]}


def run_view(ident: str, kind: str, name: str, title: str, steps: list[dict], *, rules=(), sentence=None,
             files=(), svg: str | None = None, mermaid_text: str | None = None) -> dict:
    """One run of the report (see the module docstring)."""
    return {"id": ident, "kind": kind, "name": name, "title": title, "rules": list(rules), "sentence": sentence,
            "files": [str(f) for f in files], "svg": svg, "mermaid": mermaid_text, "steps": steps}


def acp_run(ident, kind, name, title, model, path, *, violation=None, rules=(), files=(), records=None) -> dict:
    """An explored ACP path as a report run, with its sequence diagram (SVG) and Mermaid text."""
    steps = path.actions_with_effects()
    return run_view(ident, kind, name, title, acp_steps(model, path.states(), steps, records=records), rules=rules,
                    sentence=violation[1] if violation else None, files=files,
                    svg=sequence_svg(steps, model.bounds.clients, title, violation, rules),
                    mermaid_text=mermaid(steps, model.bounds.clients, title, violation, rules))


def bridge_run(ident, kind, name, title, model, path, *, violation=None, rules=(), files=()) -> dict:
    steps = bridgeview.path_events(path)
    return run_view(ident, kind, name, title, bridge_steps(model, path), rules=rules,
                    sentence=violation[1] if violation else None, files=files,
                    mermaid_text=bridgeview.bridge_mermaid(model, steps, title, violation, rules))


def state_run(ident, kind, name, title, model, path, *, violation=None, rules=(), files=()) -> dict:
    return run_view(ident, kind, name, title, state_steps(model, path), rules=rules,
                    sentence=violation[1] if violation else None, files=files)


def sequence_svg(steps, clients: int, title: str = "", violation=None, rules=()) -> str:
    """The matplotlib sequence diagram of ``steps`` as SVG text (for inlining)."""
    from .seqdiagram import draw_sequence

    buf = io.BytesIO()
    draw_sequence(steps, clients, title, violation, rules, path_svg=buf)
    return buf.getvalue().decode("utf-8")
