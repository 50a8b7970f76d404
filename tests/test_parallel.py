"""The search on several workers gives the one-worker result, and resumes after a kill."""

import os
import signal
import subprocess
import sys
import time

import pytest

from acplab.model.acp.reduction import reduce
from acplab.model.app.checking import acp_model
from acplab.model.engine import Limits, always, eventually, explore, sometimes
from acplab.model.engine.twophase import TwoPhase
from acplab.model.errors import InputError

from test_explore import Graph  # a transition system over small ints


def signature(r):
    """Everything a run reports, paths as replay tokens."""
    return (r.verdict, r.complete, r.stats.states, r.stats.transitions, r.stats.depth, r.limit,
            [(v.property.name, v.path.ordinals, v.path.loop_start) for v in r.violations],
            {k: None if p is None else p.ordinals for k, p in r.witnesses.items()})


def _acp(spec, scenario, por):
    model, _ = acp_model(spec, scenario, symmetry=True)
    if por:
        reduce(model)
    return model


CASES = {
    "twophase-5": (lambda: TwoPhase(5), {}),
    "twophase-4-broken": (lambda: TwoPhase(4, broken=True), {}),
    "twophase-4-broken-expand": (lambda: TwoPhase(4, broken=True), {"expand_violating": True}),
    "twophase-4-broken-stop": (lambda: TwoPhase(4, broken=True), {"stop_on_violation": True}),
    "twophase-4-symmetry": (lambda: TwoPhase(4, symmetry=True), {}),
    "graph-deadlock": (lambda: Graph({0: [1, 2, 3], 1: [4], 2: [4, 5], 3: [], 4: [0], 5: []},
                                     [always("not5", lambda s: s != 5), sometimes("sees4", lambda s: s == 4)],
                                     inits=(0, 2, 0)), {}),
    "acp-identical-prompts": (lambda: _acp("rfd", "identical-prompts", False), {}),
    "acp-multi-client-por": (lambda: _acp("rfd", "multi-client", True), {}),
    "acp-reused-id-stop": (lambda: _acp("reused-id", "identical-prompts", True), {"stop_on_violation": True}),
}
SLOW_CASES = {
    "acp-lost-response-por": (lambda: _acp("rfd", "lost-response", True), {}),
    "acp-reused-id-por": (lambda: _acp("reused-id", "multi-client", True), {}),
}


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("case", sorted(CASES) + [pytest.param(c, marks=pytest.mark.slow) for c in sorted(SLOW_CASES)])
def test_every_worker_count_gives_the_one_worker_result(case, workers):
    make, options = {**CASES, **SLOW_CASES}[case]
    one = explore(make(), **options)
    # small chunks and levels spilled early: exchanges, gifts and the disk all get exercised
    many = explore(make(), workers=workers, in_memory=5, chunk=7 if one.stats.states < 10_000 else 97, **options)
    assert signature(many) == signature(one)


def test_limits_end_incomplete_and_depth_limit_matches():
    assert explore(TwoPhase(5), Limits(max_states=100), workers=2, chunk=8).verdict == "incomplete"
    one = explore(TwoPhase(5), Limits(max_depth=6))
    assert signature(explore(TwoPhase(5), Limits(max_depth=6), workers=2)) == signature(one)


def test_eventually_runs_on_the_workers_too():
    """The liveness pass runs on the graph the workers recorded (test_parallel_liveness.py compares it in depth)."""
    model = Graph({0: [1], 1: [2], 2: [1]}, [eventually("reaches3", lambda s: s == 3)], final=lambda s: True)
    result = explore(model, workers=2)
    assert result.note is None and len(result.worker_cpu) == 2
    [v] = result.violations
    assert (v.property.name, v.path.ordinals, v.path.loop_start) == ("reaches3", (0, 0, 0, 0), 1)


def test_a_checkpoint_of_another_search_is_refused(tmp_path):
    explore(TwoPhase(3), workers=1, checkpoint=str(tmp_path), checkpoint_every=0, identity="a")
    with pytest.raises(InputError, match="another search"):
        explore(TwoPhase(3), workers=1, checkpoint=str(tmp_path), identity="b")


def test_resuming_from_a_checkpoint_with_other_worker_counts(tmp_path):
    """Snapshots at every level; resume from a middle one on 1 and on 3 workers."""
    folder = tmp_path / "ck"
    full = explore(TwoPhase(5), workers=2, checkpoint=str(folder), checkpoint_every=0, identity="tp5")
    assert signature(full) == signature(explore(TwoPhase(5)))
    # Cut a run short after a few levels, then resume it elsewhere.
    for workers in (1, 3):
        cut = tmp_path / f"cut{workers}"
        partial = explore(TwoPhase(5), Limits(max_depth=8), workers=2, checkpoint=str(cut),
                                 checkpoint_every=0, identity="tp5")
        assert partial.verdict == "incomplete"
        resumed = explore(TwoPhase(5), workers=workers, checkpoint=str(cut), identity="tp5")
        assert signature(resumed)[:4] == signature(full)[:4]
        assert signature(resumed)[5:] == signature(full)[5:]


@pytest.mark.slow
def test_a_killed_check_resumes_and_reaches_the_same_result(tmp_path):
    """Kill ``acplab check --checkpoint`` with SIGKILL mid-run; the rerun resumes and agrees.

    On TwoPhase (7 RMs, 296,448 states); checks with ``eventually`` properties: test_checkpoint_liveness.py."""
    folder = tmp_path / "ck"
    args = [sys.executable, "-m", "acplab.model.app.cli", "check", "--model", "twophase", "--rms", "7",
            "--workers", "2", "--json", "-q", "--checkpoint", str(folder), "--checkpoint-every", "0"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 120
    while not (folder / "CURRENT").exists() or (folder / "CURRENT").read_text().strip() < "snap-0010":
        assert proc.poll() is None and time.time() < deadline, "the run ended before a checkpoint"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    resumed = subprocess.run(args, capture_output=True, text=True, timeout=300)
    fresh = subprocess.run(args[:-4] + ["--workers", "1"], capture_output=True, text=True, timeout=300)
    import json

    a, b = json.loads(resumed.stdout), json.loads(fresh.stdout)
    keep = ("verdict", "complete", "states", "transitions", "depth", "violations", "witnesses")
    assert {k: a[k] for k in keep} == {k: b[k] for k in keep}
    assert "resumed" in a.get("note", "") and "resumed" not in b.get("note", "")


def test_a_checkpoint_resumes_under_another_string_hash_seed(tmp_path):
    """Fingerprints are structural, not salted hashes: a snapshot made under one PYTHONHASHSEED resumes under
    another to the count of an uninterrupted run (salted, 1,745,408 states became 1,888,232 on TwoPhase(8))."""
    folder = str(tmp_path / "ck")
    args = [sys.executable, "-m", "acplab.model.app.cli", "check", "--model", "twophase", "--rms", "5", "--symmetry",
            "--workers", "2", "--json", "-q", "--checkpoint", folder, "--checkpoint-every", "0", "--max-depth", "6"]
    env = dict(os.environ, PYTHONHASHSEED="1")
    assert subprocess.run(args, env=env, capture_output=True, text=True, timeout=300).returncode == 3
    other = subprocess.run(args[:-2], env=dict(env, PYTHONHASHSEED="2"), capture_output=True, text=True, timeout=300)
    fresh = subprocess.run(args[:-6], env=dict(env, PYTHONHASHSEED="3"), capture_output=True, text=True, timeout=300)
    import json

    resumed, whole = json.loads(other.stdout), json.loads(fresh.stdout)
    assert other.returncode == 0 and "resumed" in resumed["note"]
    assert (resumed["states"], resumed["transitions"]) == (whole["states"], whole["transitions"]) == (314, 2047)


class _Cyclic(TwoPhase):
    """TwoPhase whose every expansion leaves a reference cycle behind (garbage only the collector frees)."""

    made = freed = 0

    class Loop:
        def __init__(self):
            self.me = self
            _Cyclic.made += 1

        def __del__(self):
            _Cyclic.freed += 1

    def successors(self, s):
        self.Loop()
        return super().successors(s)


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_off_during_the_search_yet_frees_cycles_per_level(enabled):
    """The search turns the automatic collector off (one young collection per level) and restores it after."""
    import gc

    (gc.enable if enabled else gc.disable)()
    try:
        _Cyclic.made = _Cyclic.freed = 0
        r = explore(_Cyclic(4))
        assert gc.isenabled() is enabled
        assert r.stats.states == explore(TwoPhase(4)).stats.states
        assert _Cyclic.freed >= r.stats.states  # one cycle per expansion, each level's freed at its end
    finally:
        gc.enable()
