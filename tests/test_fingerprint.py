"""Structural fingerprints: equal values agree, different ones differ, and no process or hash seed changes one."""

import os
import subprocess
import sys
from typing import NamedTuple

import pytest

from acplab.model.engine import explore
from acplab.model.engine.fingerprint import Fingerprinter
from acplab.model.engine.path import ReplayError, replay
from acplab.model.engine.twophase import TwoPhase


class Pair(NamedTuple):
    a: object
    b: object


def test_equal_values_get_equal_fingerprints_whatever_their_history():
    fp = Fingerprinter()
    assert fp(Pair(1, "x")) == fp((1, "x")) == fp((True, "x"))  # == ignores the record type; True == 1
    assert fp(frozenset(["a", "b", "c"])) == fp(frozenset(["c", "b", "a"]))
    assert fp((1.0, None)) == fp((1, None))
    assert Fingerprinter()(("m1", frozenset({("s1", 2)}))) == fp(("m1", frozenset({("s1", 2)})))  # no memo needed


@pytest.mark.parametrize("left,right", [
    (("a", "b"), ("ab",)), ((1, 2), (2, 1)), ((None,), ()), (("1",), (1,)), (((),), ()),
    ((frozenset({1, 2}),), ((1, 2),)), ((2 ** 70,), (2 ** 70 + 1,)), ((0.5,), (0.25,)), ((b"a",), ("a",)),
])
def test_different_values_get_different_fingerprints(left, right):
    fp = Fingerprinter()
    assert fp(left) != fp(right)


def test_a_mutable_part_is_refused_with_its_type():
    with pytest.raises(TypeError, match="list"):
        Fingerprinter()((1, [2]))
    with pytest.raises(TypeError, match="dict"):
        Fingerprinter()({})


_PROBE = """
from acplab.model.app.checking import acp_model
from acplab.model.engine import explore
model, _ = acp_model("rfd", "report-order", True)
w = model.init_states()[0]
fps = [model.fingerprint(w)] + [model.fingerprint(s[1]) for s in model.successors(w)]
r = explore(model)
print(fps, r.stats.states, r.stats.transitions, [len(p) for p in r.witnesses.values()])
"""


def test_the_same_fingerprints_and_counts_under_every_hash_seed():
    """Two processes with different PYTHONHASHSEED: the same fingerprints, states and witness lengths."""
    out = set()
    for seed in ("0", "1", "random"):
        proc = subprocess.run([sys.executable, "-c", _PROBE], env=dict(os.environ, PYTHONHASHSEED=seed),
                              capture_output=True, text=True, timeout=300, check=True)
        out.add(proc.stdout)
    assert len(out) == 1, out


def test_a_path_that_does_not_replay_names_its_step():
    [v] = explore(TwoPhase(3, broken=True)).violations
    assert replay(TwoPhase(3, broken=True), v.path.ordinals).steps == v.path.steps
    with pytest.raises(ReplayError, match="step 2 does not replay"):
        replay(TwoPhase(3, broken=True), (*v.path.ordinals[:2], 99))
