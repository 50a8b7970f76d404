"""Checkpoints of checks with ``eventually`` properties: a run stopped mid-way resumes to the uninterrupted result.

The workers' liveness records (:mod:`acplab.model.engine.eventual_levels`) go into every snapshot
(:mod:`acplab.model.engine.checkpoint`); a resumed run, on any number of workers, must report what a run that
was never stopped reports: verdict, counts, depth, every counterexample with its lasso, witnesses, coverage.
A stop is a limit (between levels, or mid-level: the workers have then appended records past the snapshot),
an exception raised mid-level by the model (the run dies as a kill leaves it), or a real SIGKILL (slow tier).
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from acplab.model.engine import Limits, explore
from acplab.model.engine import eventual_levels
from acplab.model.errors import InputError

from test_parallel_liveness import Graph, Random, _acp, signature


@pytest.fixture(autouse=True)
def spill_edges_early(monkeypatch):
    """Workers spill edges every few dozen: a stopped run leaves records in the spill file past its snapshot."""
    monkeypatch.setattr(eventual_levels, "SPILL", 40)


class Killed(Exception):
    """What the crashing model raises: the run ends mid-level, as a kill ends it."""


def crashing(model, after: int):
    """``model``, whose successors raise :class:`Killed` after ``after`` expansions in a process."""
    inner, calls = model.successors, [0]

    def successors(state):
        calls[0] += 1
        if calls[0] > after:
            raise Killed("stopped mid-level")
        return inner(state)

    model.successors = successors
    return model


def run(make, folder, workers, limits=Limits(), **options):
    return explore(make(), limits, workers=workers, in_memory=5, chunk=7, checkpoint=str(folder),
                          checkpoint_every=0, identity="test", **options)


def stop_then_resume(tmp_path, make, stop, resume_with=(1, 2), stopped_on=2):
    """Stop a checkpointed run with ``stop`` (limits, or a number of expansions before a crash), resume it on
    each worker count, and compare every resumed run with an uninterrupted one-process search."""
    one = explore(make())
    for workers in resume_with:
        folder = tmp_path / f"ck-{stopped_on}-{workers}"
        if isinstance(stop, Limits):
            assert not run(make, folder, stopped_on, stop).complete
        else:
            with pytest.raises((Killed, RuntimeError), match="stopped mid-level"):
                run(lambda: crashing(make(), stop), folder, stopped_on)
        assert (folder / "CURRENT").exists(), "stopped before the first snapshot: nothing is resumed"
        resumed = run(make, folder, workers)
        assert "resumed" in resumed.note
        assert signature(resumed) == signature(one), (stopped_on, workers)
        again = run(make, folder, 3 - workers)  # from the last snapshot, taken after the last level
        assert signature(again) == signature(one) and "resumed" in again.note
        assert sorted(p.name for p in folder.iterdir()) == [".acplab-checkpoint", ".acplab-lock", "CURRENT",
                                                             (folder / "CURRENT").read_text().strip()]
    return one


def test_a_run_stopped_at_its_depth_limit_saves_a_snapshot_to_go_deeper_from(tmp_path):
    """A depth limit stops between two levels: a snapshot is saved there though the periodic one is not due."""
    make = lambda: Random(3, n=60)  # noqa: E731
    folder = tmp_path / "deeper"
    stopped = explore(make(), Limits(max_depth=3), workers=2, in_memory=5, chunk=7, checkpoint=str(folder),
                             checkpoint_every=3600, identity="test")
    assert not stopped.complete and (folder / "CURRENT").exists()
    resumed = run(make, folder, 1)
    assert "resumed" in resumed.note and signature(resumed) == signature(explore(make()))


@pytest.mark.parametrize("seed", range(8))
def test_random_graphs_resume_after_a_stop_between_levels(tmp_path, seed):
    stop_then_resume(tmp_path, lambda: Random(seed, n=60), Limits(max_depth=3))


@pytest.mark.parametrize("seed", range(8))
def test_random_graphs_resume_after_a_stop_mid_level(tmp_path, seed):
    one = explore(Random(seed, n=60))
    stop_then_resume(tmp_path, lambda: Random(seed, n=60), Limits(max_states=one.stats.states * 3 // 4), stopped_on=1)


SPIN = {0: [0, 1], 1: []}


@pytest.mark.parametrize("case", [
    (SPIN, {"0->0": "spin", "0->1": "exit"}, 1, "holds"),  # weak fairness: the starved exit is no counterexample
    (SPIN, None, 1, "violated"),
    ({0: [0, 1], 1: [0, 1, 2], 2: []}, {"0->0": "spin", "0->1": "go", "1->0": "back", "1->1": "go"}, 2, "violated"),
])
def test_the_fairness_toys_resume(tmp_path, case):
    from acplab.model.engine import eventually

    edges, classes, target, verdict = case
    chain = {k + 10 * n: [t + 10 * n for t in ts] for n in range(3) for k, ts in edges.items()}  # three copies
    chain[0] = chain[0] + [10]
    chain[10] = chain[10] + [20]  # reached one level after another: there are levels to stop between

    def make():
        prop = eventually("reaches", lambda s: s % 10 == target, every_state=True)
        fair = None if classes is None else {f"{a + 10 * n}->{b + 10 * n}": c for n in range(3)
                                             for ab, c in classes.items() for a, b in [map(int, ab.split("->"))]}
        return Graph(chain, [prop], final=lambda s: True, classes=fair)

    assert stop_then_resume(tmp_path, make, Limits(max_depth=2)).verdict == verdict


#: rfd's whole default check (12-13 s a resume) is slow; the mutants' violated checks are quick
ACP = [pytest.param("rfd", "default", True, marks=pytest.mark.slow), ("never-idles", "cancel-request-routing", True),
       ("never-answers", "multi-client", True), ("never-idles", "agent-restart", False)]


@pytest.mark.parametrize("spec,scenario,por", ACP)
def test_acp_checks_resume_after_a_stop_between_levels(tmp_path, spec, scenario, por):
    one = stop_then_resume(tmp_path, lambda: _acp(spec, scenario, por), Limits(max_depth=8))
    assert one.verdict == ("holds" if spec == "rfd" else "violated")


@pytest.mark.parametrize("spec,scenario,por", ACP[:2])
def test_acp_checks_resume_after_a_crash_mid_level(tmp_path, spec, scenario, por):
    one = stop_then_resume(tmp_path, lambda: _acp(spec, scenario, por), 300, stopped_on=1)
    if spec != "rfd":  # the eventually violation came back (a fair end owing its idle: finite since fair ends)
        assert "WorkEndsWithIdle" in {v.property.name for v in one.violations}


def test_a_run_resumed_twice_on_other_worker_counts(tmp_path):
    """Stopped on 2 workers, resumed on 1 and stopped again mid-level, resumed on 3: the records of both stopped
    runs reach the liveness pass (the second snapshot carries the first run's records along)."""
    make = lambda: _acp("never-idles", "cancel-request-routing", True)  # noqa: E731
    one = explore(make())
    folder = tmp_path / "ck"
    assert not run(make, folder, 2, Limits(max_depth=5)).complete
    second = run(make, folder, 1, Limits(max_states=one.stats.states * 2 // 3))
    assert not second.complete and "resumed" in second.note
    resumed = run(make, folder, 3)
    assert signature(resumed) == signature(one)


def test_a_checkpoint_made_with_other_options_is_refused(tmp_path):
    make = lambda: _acp("never-idles", "cancel-request-routing", True)  # noqa: E731
    run(make, tmp_path / "ck", 1, Limits(max_depth=4))
    with pytest.raises(InputError, match="other search options.*por: True there, False here"):
        run(make, tmp_path / "ck", 1, por=False)
    with pytest.raises(InputError, match="another search"):
        explore(make(), workers=1, checkpoint=str(tmp_path / "ck"), identity="other")
    safety = tmp_path / "safety"
    explore(Graph({0: [1], 1: []}, []), workers=1, checkpoint=str(safety), checkpoint_every=0,
                   identity="test")
    with pytest.raises(InputError, match="other search options.*properties"):
        run(lambda: Graph({0: [1], 1: []}, [eventually_reaches(1)]), safety, 1)


def eventually_reaches(target):
    from acplab.model.engine import eventually

    return eventually("reaches", lambda s: s == target)


def test_a_folder_holding_other_files_is_refused_and_left_alone(tmp_path):
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "snap-photos").mkdir()
    (mine / "todo.txt").write_text("keep me")
    with pytest.raises(InputError, match="not an acplab checkpoint"):
        run(lambda: _acp("rfd", "default", True), mine, 1)
    assert sorted(p.name for p in mine.iterdir()) == ["snap-photos", "todo.txt"]


CLI = [sys.executable, "-m", "acplab.model.app.cli", "check", "--json", "-q"]
KEEP = ("verdict", "complete", "states", "transitions", "depth", "violations", "witnesses", "coverage")


def check(args, folder, **options):
    """``acplab check ARGS --json`` run in ``folder`` (its counterexamples written there): exit code, summary."""
    done = subprocess.run(CLI + args, capture_output=True, text=True, timeout=600, cwd=folder, **options)
    return done.returncode, json.loads(done.stdout), done.stderr


def facts(doc):
    """What a run found, without where its files went."""
    out = {k: doc[k] for k in KEEP}
    out["violations"] = [{k: v for k, v in row.items() if k != "files"} for row in doc["violations"]]
    return out


def test_the_cli_resumes_an_eventually_check_and_refuses_other_options(tmp_path):
    """A check stopped by --max-depth resumes without it on another worker count; --no-por there is refused."""
    args = ["--spec", "never-idles", "--scenario", "cancel-request-routing", "--checkpoint", "ck",
            "--checkpoint-every", "0"]
    code, _, err = check(args + ["--workers", "2", "--max-depth", "9"], tmp_path)
    assert code == 3, err
    other = subprocess.run(CLI + args + ["--workers", "1", "--no-por"], capture_output=True, text=True, timeout=300,
                           cwd=tmp_path)
    assert other.returncode == 2 and "checkpoint of another search" in other.stderr and "por=True" in other.stderr
    assert len(other.stderr.strip().splitlines()) == 1 and "Traceback" not in other.stderr
    code, resumed, _ = check(args + ["--workers", "1"], tmp_path)
    fresh_code, fresh, _ = check(args[:4] + ["--workers", "1"], tmp_path)
    assert code == fresh_code == 1
    assert facts(resumed) == facts(fresh)
    assert "resumed" in resumed["note"] and "note" not in fresh


@pytest.mark.slow
def test_a_killed_acp_check_resumes_and_reaches_the_same_result(tmp_path):
    """SIGKILL ``acplab check --checkpoint`` on two workers after some levels; rerun on one worker, it agrees.

    51,086 states, a lasso (WorkEndsWithIdle), about 20 s on two workers."""
    folder = tmp_path / "ck"
    args = ["--spec", "never-idles", "--disconnects", "1", "--no-por", "--checkpoint", str(folder),
            "--checkpoint-every", "0"]
    proc = subprocess.Popen(CLI + args + ["--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, cwd=tmp_path)
    deadline = time.time() + 120
    while not (folder / "CURRENT").exists() or (folder / "CURRENT").read_text().strip() < "snap-0014":
        assert proc.poll() is None and time.time() < deadline, "the run ended before a checkpoint"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    _, resumed, _ = check(args + ["--workers", "1"], tmp_path)
    _, fresh, _ = check(args[:-4] + ["--workers", "1"], tmp_path)
    assert facts(resumed) == facts(fresh)
    assert "resumed" in resumed["note"] and "note" not in fresh
