"""Coverage: action counts, properties evaluated / armed / violated, vacuity and bound warnings.

Every count that could be wrong is checked against an independent count: the
transitions in the stats, a visitor's view of the discovery order, the steps
of the simulated runs, the fault windows the runs opened.
"""

from __future__ import annotations

import json
import subprocess
import sys

from acplab.model.acp.model import AcpModel, Bounds
from acplab.model.acp.spec import SPECS
from acplab.model.engine import Visitor, explore
from acplab.model.engine.twophase import TwoPhase
from acplab.model.engine.walk import random_walks
from acplab.model.render.traces import describe_event
from acplab.simulations.params import SimParams
from acplab.simulations.simulate import simulate

VACUOUS = "was never armed in"


def _check(*args):
    proc = subprocess.run([sys.executable, "-m", "acplab.model.app.cli", "check", *args], capture_output=True,
                          text=True, timeout=300)
    return proc


def _check_json(*args) -> dict:
    proc = _check("--json", "-q", *args)
    assert proc.returncode in (0, 1, 3), proc.stderr
    return json.loads(proc.stdout)


class _Order(Visitor):
    """The states in discovery order."""

    def __init__(self) -> None:
        self.states = []

    def state(self, idx, state) -> None:
        assert idx == len(self.states)
        self.states.append(state)


# -- the engine ------------------------------------------------------------------------------


def test_engine_counts_match_an_independent_count_of_the_discovery_order():
    for broken in (False, True):
        model = TwoPhase(3, broken=broken)
        result = explore(model)
        order = _Order()
        explore(model, visitor=order)
        cov = result.coverage
        assert sum(cov.actions.values()) == result.stats.transitions
        consistent = next(p for p in model.properties() if p.name == "Consistent")
        c = cov.properties["Consistent"]
        first_bad = next((i for i, s in enumerate(order.states) if not consistent.condition(s)), None)
        # evaluated: every state up to the one that settled it; armed: those among them where it had something to watch
        evaluated = len(order.states) if first_bad is None else first_bad + 1
        assert (c.evaluated, c.violated) == (evaluated, 0 if first_bad is None else 1)
        assert c.armed == sum(1 for s in order.states[:evaluated] if consistent.armed(s)) > 0
        some_abort = cov.properties["SomeAbort"]
        assert some_abort.evaluated == 1 + next(i for i, s in enumerate(order.states) if "aborted" in s[0])
        assert cov.properties["TypeOK"].armed is None and cov.vacuous == []


def test_workers_sum_their_counts_to_the_one_process_counts():
    one = explore(TwoPhase(4))
    for workers in (1, 3):
        many = explore(TwoPhase(4), workers=workers)
        assert many.coverage == one.coverage
    # a violated property: the same evaluated and violated counts (armed is counted per level, see engine.coverage)
    broken = explore(TwoPhase(4, broken=True)).coverage.properties["Consistent"]
    split = explore(TwoPhase(4, broken=True), workers=2).coverage.properties["Consistent"]
    assert (split.evaluated, split.violated) == (broken.evaluated, broken.violated) == (broken.evaluated, 1)


def test_random_walks_count_the_steps_they_took():
    result = random_walks(TwoPhase(3, broken=True), 30, seed=4)
    assert sum(result.coverage.actions.values()) == result.stats.transitions > 0
    assert result.coverage.properties["Consistent"].violated == 1


# -- check --json -------------------------------------------------------------------------------


def test_check_json_coverage_adds_up_and_names_vacuous_properties():
    data = _check_json()
    cov = data["coverage"]
    assert set(cov) == {"actions", "properties", "vacuous", "warnings"}
    assert sum(cov["actions"].values()) == data["transitions"]
    assert cov["actions"]["client submit"] > 0 and "agent fail" not in cov["actions"]
    for name, c in cov["properties"].items():
        assert 0 <= c["evaluated"] <= data["states"], name
        assert c["armed"] is None or 0 <= c["armed"] <= c["evaluated"], name
    # cancels=0: nothing is cancelled, so the cancellation rule watched nothing; the IDs rule watched almost every
    # state (no rule monitor watches failures alone now: WorkReportedByState, which judges them, watches all work)
    assert "client cancel" not in cov["actions"]
    cancel = cov["properties"]["CancelEndsWithCancelled"]
    assert (cancel["armed"], cancel["evaluated"], cancel["violated"]) == (0, data["states"], 0)
    assert cov["properties"]["InsertedIdsDistinct"]["armed"] > data["states"] // 2
    assert cov["properties"]["PromptsAnswered"]["armed"] > 0  # an obligation open: a prompt awaits its answer
    assert "CancelEndsWithCancelled" in cov["vacuous"] and "InsertedIdsDistinct" not in cov["vacuous"]
    vacuous = cov["vacuous"]
    assert len(vacuous) > 1 and len(set(vacuous)) == len(vacuous)
    assert (f"{', '.join(vacuous)} were never armed in {data['states']:,} explored states: these {len(vacuous)} "
            "hold vacuously (nothing they watch happened)") in cov["warnings"]
    assert all(cov["properties"][n]["armed"] == 0 for n in cov["vacuous"])
    # stateless monitors claim nothing either way
    assert cov["properties"]["PromptResultCarriesMessageId"]["armed"] is None


def test_a_monitor_armed_and_disarmed_within_one_step_is_armed():
    """A $/cancel_request arms CancelRequestsAnswered and the -32800 answer to the prompt it withdraws, sent in
    the same step, disarms it: still armed (a rule monitor of the group is a monitor of its own here)."""
    cov = _check_json("--clients", "1", "--prompts", "1", "--set", "cancel_requests=1")["coverage"]
    assert cov["actions"]["client cancel_request"] > 0
    assert cov["properties"]["CancelRequestsAnswered"]["armed"] > 0
    assert "CancelRequestsAnswered" not in cov["vacuous"]
    # the steps that receive the request and answer its prompt: unarmed before and after, armed on the way
    model = AcpModel(SPECS["rfd"], Bounds(clients=1, prompts=1, cancel_requests=1))
    prop = next(p for p in model.properties() if p.name == "CancelRequestsAnswered")
    within, seen, todo = [], set(), list(model.init_states())
    while todo:
        world = todo.pop()
        for action, after, events in model.successors(world):
            said = [describe_event(e) or "" for e in events]
            if (any("receives $/cancel_request" in t for t in said) and any("sends error" in t for t in said)
                    and not prop.armed(world) and not prop.armed(after)):
                within.append((action, after, events))
            if after not in seen:
                seen.add(after)
                todo.append(after)
    assert within
    assert [s for s in within if "CancelRequestsAnswered" not in model.armed_during(s)] == []


def test_bounds_that_allow_a_fault_that_never_happens_are_named(tmp_path):
    data = _check_json("--set", "prompts=0", "--set", "drops=1", "--set", "failures=2")
    cov = data["coverage"]
    assert cov["actions"] == {} and data["transitions"] == 0  # no prompt: nothing ever moves
    assert cov["warnings"][:3] == [
        "the bounds allow 1 drop (drops=1), but no explored transition is a drop",
        "the bounds allow 2 failures of running work (failures=2), but no explored transition is a failure of "
        "running work",
        "the bounds allow 2 rejections of held prompts (failures=2), but no explored transition is a rejection "
        "of a held prompt",
    ]
    vacuous = cov["vacuous"]
    assert "InsertedIdsDistinct" in vacuous and "WorkReportedByState" in vacuous
    assert (f"{', '.join(vacuous)} were never armed in 1 explored state: these {len(vacuous)} hold vacuously "
            "(nothing they watch happened)") in cov["warnings"]
    # v1 has no hooks and no early IDs: the default scenario's bounds allow them in vain
    v1 = _check_json("--spec", "v1", "--clients", "1", "--prompts", "1", "--out", str(tmp_path))  # v1 violates rules
    v1 = v1["coverage"]["warnings"]
    assert "the bounds allow a foreground hook before insertion (hooks=yes), but no explored transition is a " \
           "foreground hook before insertion" in v1
    rfd = _check_json("--clients", "1", "--prompts", "1")["coverage"]["warnings"]
    assert not [w for w in rfd if w.startswith("the bounds allow")]


def test_check_text_prints_each_coverage_warning_on_its_own_line():
    proc = _check("-q", "--set", "prompts=0", "--set", "drops=1")
    lines = [line for line in proc.stdout.splitlines() if line.startswith("  coverage: ")]
    data = _check_json("--set", "prompts=0", "--set", "drops=1")
    assert lines == [f"  coverage: {w}" for w in data["coverage"]["warnings"]] and lines


def test_twophase_check_has_coverage_without_bound_warnings():
    data = _check_json("--model", "twophase", "--rms", "3")
    cov = data["coverage"]
    assert sum(cov["actions"].values()) == data["transitions"] and cov["actions"]["TMCommit"] > 0
    assert cov["warnings"] == [] and cov["properties"]["Consistent"]["armed"] > 0


# -- simulate --json ------------------------------------------------------------------------------


def test_simulate_coverage_counts_steps_actions_and_properties():
    summary = simulate(SimParams(spec="error-after-insertion", fail=0.2, sessions=20, seed=3)).to_json()
    cov = summary["coverage"]
    assert {"windows", "needed", "warnings", "actions", "properties", "vacuous"} <= set(cov)
    steps = sum(cov["actions"].values())
    assert steps > 0 and all(c["evaluated"] == steps for c in cov["properties"].values())
    # every failure strikes inserted work: the two failure windows count exactly the failure steps
    windows = cov["windows"]
    assert cov["actions"]["agent fail"] == (windows["failure after insertion, before the response"]["count"]
                                            + windows["failure after insertion, after the response"]["count"]) > 0
    assert cov["actions"]["client submit"] == summary["counts"]["submissions"]
    fail = cov["properties"]["WorkReportedByState"]  # E3: a failure ends with an error idle
    assert fail["armed"] >= cov["actions"]["agent fail"] and "WorkReportedByState" not in cov["vacuous"]
    bad = cov["properties"]["ResponsesFollowInsertion"]
    assert bad["violated"] == summary["violations"]["per_monitor"].get("ResponsesFollowInsertion", 0) > 0
    assert cov["properties"]["PromptsAnswered"]["violated"] is None  # obligations are not judged here
    # nothing is cancelled, so the cancellation rule watched nothing
    assert "client cancel" not in cov["actions"] and "CancelEndsWithCancelled" in cov["vacuous"]
    vacuous = cov["vacuous"]
    assert (f"{', '.join(vacuous)} were never armed in {steps:,} steps of 20 runs: these {len(vacuous)} hold "
            "vacuously (nothing they watch happened)") in cov["warnings"]


def test_simulate_without_cancels_calls_the_cancel_rule_vacuous():
    """No rule monitor watches failures alone (the model's own monitors went): the cancellation rule stands in."""
    cov = simulate(SimParams(spec="rfd", sessions=5, seed=1)).to_json()["coverage"]
    assert "client cancel" not in cov["actions"]
    assert cov["properties"]["CancelEndsWithCancelled"]["armed"] == 0 and "CancelEndsWithCancelled" in cov["vacuous"]
    cancelled = simulate(SimParams(spec="rfd", sessions=5, seed=1, cancel=0.5)).to_json()["coverage"]
    assert cancelled["actions"]["agent end_cancelled"] > 0
    assert cancelled["properties"]["CancelEndsWithCancelled"]["armed"] > 0
    assert "CancelEndsWithCancelled" not in cancelled["vacuous"]


def test_what_a_step_armed_on_the_way_does_not_depend_on_object_identity():
    """A state that went through pickle (the level engine spills and hands states over) shares no objects with
    the original: the members a step armed on the way are the same (compared by value)."""
    import pickle

    model = AcpModel(SPECS["rfd"], Bounds(clients=2, prompts=2), symmetry=True)
    seen, todo, steps = set(), list(model.init_states()), 0
    while todo and steps < 3000:
        world = todo.pop()
        copy = pickle.loads(pickle.dumps(world))
        for original, copied in zip(model.successors(world), model.successors(copy)):
            steps += 1
            assert model.armed_during(original) == model.armed_during(copied), original[0]
            if original[1] not in seen:
                seen.add(original[1])
                todo.append(original[1])
    assert steps >= 3000
