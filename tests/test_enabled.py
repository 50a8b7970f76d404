"""``AcpModel.enabled(w, a)`` agrees exactly with ``a in AcpModel.actions(w)``.

The simulator asks ``enabled`` once a step instead of building every action
list; the explorer still uses ``actions``.  Checked on every state a
breadth-first search reaches (up to a cap) in every scenario, on the RFD and
on the first mutant each scenario catches (so violating states are asked
too), plus random walks at large bounds (unordered channels, permissions,
tools, a model that goes on after violations), and for every action a state
offers or a caller could ask: every step name with arguments in and out of
range, of odd types, and unknown kinds.
"""

from __future__ import annotations

import random
from collections import deque

import pytest

from acplab.model.acp import agent as ag
from acplab.model.acp.events import Action
from acplab.model.acp.model import AcpModel, Bounds
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import RFD, SPECS

#: states per scenario and spec (breadth first: the shallow, varied part of the graph)
CAP = 200

_INDEXED = ("insert", "reject", "echo", "answer", "assign_id", "hook")
_PLAIN = (*ag.WORK_STEPS, "late_update", "import", "start_own_work", "restart")
_NET = ("deliver_to_agent", "deliver_to_client", "drop_to_agent", "drop_to_client", "cut")
_ODD = (True, 1.0, "0")


def probes(model: AcpModel) -> list[Action]:
    """Every action a caller could ask of a world of ``model``, enabled or not."""
    n = model.bounds.clients
    clients = (*range(-1, n + 1), *_ODD)
    small = (*range(-1, 4), True, False)
    out = [Action("bogus", "insert", (0,)), Action("agent", "bogus", ()), Action("net", "bogus", (0,)),
           Action("client", "bogus", (0,)), Action("client", "submit", ())]
    for name in _INDEXED:
        out += [Action("agent", name, (i,)) for i in small] + [Action("agent", name, ()), Action("agent", name, (0, 0))]
    for name in _PLAIN:
        out += [Action("agent", name, ()), Action("agent", name, (0,))]
    for c in clients:
        for name in _NET:
            out += [Action("net", name, (c,))] + [Action("net", name, (c, i)) for i in (-1, 0, 1, 2)]
        out += [Action("client", "submit", (c, content)) for content in (*model.bounds.contents, "zz")]
        out += [Action("client", "cancel", (c,)), Action("client", "cancel", (c, 0))]
        out += [Action("client", "cancel_request", (c, i)) for i in small]
        out += [Action("client", "reconnect", (c, r)) for r in (True, False, 1, 0, None)]
        out += [Action("client", "answer_permission", (c, rid, ok)) for rid in range(4) for ok in (True, False)]
    return out


def check_world(model: AcpModel, w, asked: list[Action]) -> None:
    acts = model.actions(w)
    for a in acts + asked:
        assert model.enabled(w, a) == (a in acts), (a, acts, w)


def bfs_worlds(model: AcpModel, cap: int = CAP):
    seen = set()
    todo = deque(model.init_states())
    while todo and len(seen) < cap:
        w = todo.popleft()
        if w in seen:
            continue
        seen.add(w)
        yield w
        for a in model.actions(w):
            todo.append(model.step(w, a)[0])


CASES = [(name, RFD.name) for name in sorted(SCENARIOS)]
CASES += [(name, SCENARIOS[name].catches[0]) for name in sorted(SCENARIOS) if SCENARIOS[name].catches]


@pytest.mark.parametrize("scenario,spec", CASES)
def test_enabled_agrees_with_actions_on_every_reached_state(scenario, spec):
    model = AcpModel(SPECS[spec], SCENARIOS[scenario].bounds)
    asked = probes(model)
    count = 0
    for w in bfs_worlds(model):
        check_world(model, w, asked)
        count += 1
    assert count > 1  # a mutant caught at once stops early: its violating states are asked too


BIG = Bounds(
    clients=3, prompts=5, contents=("hi", "/compact"), drops=2, disconnects=2, cancels=2, cancel_requests=2,
    failures=2, restarts=1, imports=1, chunks=True, retain_commands=True, tools=True, permission=True, output=True,
    busy_inserts=True, hooks=True, early_ids=True, own_work=1,
)


@pytest.mark.parametrize("spec", ["rfd", "v1", "ack-before-insertion", "late-echo", "reuse-jsonrpc-id-proxy"])
@pytest.mark.parametrize("ordered", [True, False])
def test_enabled_agrees_with_actions_on_random_walks(spec, ordered):
    model = AcpModel(SPECS[spec], BIG._replace(ordered=ordered), continue_after_violation=True)
    asked = probes(model)
    rng = random.Random(f"{spec}/{ordered}")
    for _ in range(10):
        w = model.init_states()[0]
        for _ in range(50):
            check_world(model, w, asked)
            acts = model.actions(w)
            if not acts:
                break
            w = model.step(w, rng.choice(acts))[0]
