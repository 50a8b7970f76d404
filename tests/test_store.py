"""The explorer's fingerprint store: semantics, compactness, and unchanged exploration results."""

import random
import sys

import pytest

from acplab.model.engine import FP_MASK, FingerprintStore, replay, eventually, explore
from acplab.model.engine.twophase import TwoPhase


@pytest.mark.parametrize("track_index", [False, True])
def test_add_and_membership(track_index):
    store = FingerprintStore(track_index=track_index)
    big = (1 << 63) - 12345  # a 64-bit hash: stored masked to 60 bits
    assert store.add(big, -1, 0) == 0
    assert store.add(-7, 0, 3) == 1
    assert store.add(42, 1, 1) == 2
    assert len(store) == 3
    assert big in store and -7 in store and 42 in store
    assert 43 not in store
    assert store.key(big) == big & FP_MASK and 0 <= store.key(-7) <= FP_MASK
    assert list(store.parent) == [-1, 0, 1] and list(store.ordinal) == [0, 3, 1]
    if track_index:
        assert (store.find(big), store.find(-7), store.find(42), store.find(43)) == (0, 1, 2, None)
    else:
        with pytest.raises(TypeError):
            store.find(42)


def test_fingerprints_keep_60_bits_and_small_ints():
    store = FingerprintStore()
    for fp in (-(1 << 63) + 5, (1 << 63) - 1, -2, 1 << 59):
        store.add(fp, -1, 0)
    assert all(0 <= k <= FP_MASK for k in store.seen)
    assert all(sys.getsizeof(k) <= sys.getsizeof(FP_MASK) for k in store.seen)
    assert len(store.seen) == 4  # distinct 64-bit values that differ in the low 60 bits stay distinct


def test_ordinals_to_rebuilds_the_path():
    store = FingerprintStore()
    root = store.add(100, -1, 2)
    a = store.add(101, root, 0)
    b = store.add(102, root, 4)
    c = store.add(103, b, 1)
    assert store.ordinals_to(root) == [2]
    assert store.ordinals_to(a) == [2, 0]
    assert store.ordinals_to(c) == [2, 4, 1]


def test_replay_of_stored_ordinals_reaches_the_stored_state():
    model = TwoPhase(3)
    result = explore(model)
    path = result.witnesses["SomeCommit"]
    assert replay(model, path.ordinals).last_state == path.last_state
    assert "committed" in path.last_state[0]


def test_store_is_compact_at_scale():
    """Under 100 bytes a state at TwoPhase(7)'s size (296,448 states) with 64-bit hashes."""
    rng = random.Random(7)
    store = FingerprintStore()
    for i in range(296_448):
        store.add(rng.getrandbits(64) - (1 << 63), i - 1, i % 13)
    assert len(store) == len(store.seen) == 296_448
    assert store.nbytes() / len(store) < 100


@pytest.mark.parametrize("n, states", [(3, 288), (5, 8832)])
def test_twophase_counts_unchanged(n, states):
    result = explore(TwoPhase(n))
    assert (result.verdict, result.stats.states) == ("holds", states)


def test_broken_counterexample_unchanged():
    model = TwoPhase(3, broken=True)
    [violation] = explore(model).violations
    labels = [model.format_action(a) for a, _ in violation.path.steps]
    assert labels == ["TMCommit", "RMChooseToAbort(rm1)", "RMRcvCommitMsg(rm2)"]
    assert violation.path.last_state[0] == ("aborted", "committed", "working")


def test_eventually_uses_the_indexed_store_and_still_finds_lassos():
    class Loop:
        def init_states(self):
            return [0]

        def successors(self, s):
            return [(f"{s}->{t}", t) for t in {0: [1], 1: [2], 2: [1]}[s]]

        def properties(self):
            return [eventually("reaches3", lambda s: s == 3)]

        def format_action(self, a):
            return a

    [v] = explore(Loop()).violations
    assert v.path.loop_start is not None
    assert [s for s in v.path.states()] == [0, 1, 2, 1]
