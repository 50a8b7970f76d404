"""Fingerprint-store options for the explorer: bytes per state and speed on TwoPhase N.

    python benchmarks/store_options.py [N]

Runs the real :func:`acplab.model.engine.search` with each store in turn (swapped in
for ``acplab.model.engine.search.FingerprintStore``) and reports, per option, the explorer's seconds,
its throughput ratio to the plain BFS of ``benchmarks/twophase_bfs.py``, and the
store's bytes per state by two measures: ``sys.getsizeof`` accounting of the
store after the run, and ``tracemalloc`` while a fresh store is refilled with
the same fingerprints (fresh int objects, as in a run).

Options:

``set``   the explorer's store: a set of 60-bit fingerprints + parent/ordinal arrays;
``dict``  the previous store: dict fingerprint -> index + arrays (what the
          explorer still uses when ``eventually`` properties need indices);
``open``  open addressing in an ``array('q')`` of indices (load <= 1/2, linear
          probing in Python) + an ``array('q')`` of fingerprints + arrays.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import acplab.model.engine.search as E  # noqa: E402  (the module whose FingerprintStore the search uses)
from acplab.model.engine.twophase import TwoPhase  # noqa: E402

try:
    from benchmarks.twophase_bfs import plain_bfs  # noqa: E402
except ImportError:  # run as a script from benchmarks/
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from twophase_bfs import plain_bfs  # noqa: E402

_MASK = E.FP_MASK


class DictStore(E.FingerprintStore):
    """The store before: every state indexed (``track_index`` always on)."""

    __slots__ = ()

    def __init__(self, track_index: bool = False) -> None:
        super().__init__(track_index=True)


class _OpenTable:
    """Open addressing over arrays: ``in`` and ``[]`` as the explorer uses them."""

    __slots__ = ("table", "fps", "mask", "used", "_fp", "_slot")

    def __init__(self) -> None:
        self.mask = (1 << 10) - 1
        self.table = array("q", [-1]) * (self.mask + 1)
        self.fps = array("q")
        self.used = 0
        self._fp = self._slot = -1

    def __contains__(self, fp: int) -> bool:
        table, fps, mask = self.table, self.fps, self.mask
        h = (fp ^ (fp >> 30)) & mask
        while True:
            i = table[h]
            if i < 0:
                self._fp, self._slot = fp, h
                return False
            if fps[i] == fp:
                return True
            h = (h + 1) & mask

    def __getitem__(self, fp: int) -> int:
        table, fps, mask = self.table, self.fps, self.mask
        h = (fp ^ (fp >> 30)) & mask
        while True:
            i = table[h]
            if i < 0:
                raise KeyError(fp)
            if fps[i] == fp:
                return i
            h = (h + 1) & mask

    def insert(self, fp: int, idx: int) -> None:
        if self._fp != fp and fp in self:
            raise KeyError(f"{fp} already stored")
        self.table[self._slot] = idx
        self._fp = -1
        self.fps.append(fp)
        self.used += 1
        if 2 * self.used > self.mask + 1:
            self._grow()

    def _grow(self) -> None:
        mask = 2 * self.mask + 1
        table = array("q", [-1]) * (mask + 1)
        for i, fp in enumerate(self.fps):
            h = (fp ^ (fp >> 30)) & mask
            while table[h] >= 0:
                h = (h + 1) & mask
            table[h] = i
        self.table, self.mask = table, mask

    def __iter__(self):
        return iter(self.fps)

    def get(self, fp, default=None):
        return self[fp] if fp in self else default

    def __len__(self) -> int:
        return self.used


class OpenStore(E.FingerprintStore):
    __slots__ = ()

    def __init__(self, track_index: bool = False) -> None:
        super().__init__()
        self.index = self.seen = _OpenTable()

    def add(self, fp: int, parent: int, ordinal: int) -> int:
        idx = len(self.parent)
        self.seen.insert(fp & _MASK, idx)
        self.parent.append(parent)
        self.ordinal.append(ordinal)
        return idx

    def nbytes(self) -> int:
        t = self.seen
        return sys.getsizeof(t.table) + sys.getsizeof(t.fps) + sys.getsizeof(self.parent) + sys.getsizeof(self.ordinal)


OPTIONS = {"set": E.FingerprintStore, "dict": DictStore, "open": OpenStore}


def measure_option(name: str, n: int, plain_seconds: float | None) -> dict:
    cls = OPTIONS[name]
    kept: list = []

    class Recording(cls):
        __slots__ = ()

        def __init__(self, track_index: bool = False) -> None:
            super().__init__(track_index)
            kept.append(self)

    original = E.FingerprintStore
    E.FingerprintStore = Recording
    try:
        t0 = time.perf_counter()
        result = E.explore(TwoPhase(n))
        seconds = time.perf_counter() - t0
    finally:
        E.FingerprintStore = original
    store = kept[0]
    states = len(store)
    assert states == result.stats.states
    row = {"option": name, "states": states, "explorer_seconds": seconds,
           "getsizeof_bytes_per_state": store.nbytes() / states}
    if plain_seconds is not None:
        row["ratio"] = plain_seconds / seconds
    fps = array("q", store.seen)
    parent, ordinal = array("q", store.parent), array("i", store.ordinal)
    del kept[:], store, result
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    fresh = cls()
    for i in range(states):
        fresh.add(fps[i], parent[i], ordinal[i])
    row["tracemalloc_bytes_per_state"] = (tracemalloc.get_traced_memory()[0] - before) / states
    tracemalloc.stop()
    del fresh
    return row


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    t0 = time.perf_counter()
    plain_bfs(TwoPhase(n))
    plain_s = time.perf_counter() - t0
    print(f"TwoPhase N={n}: plain BFS {plain_s:.2f} s")
    print(f"{'store':6} {'seconds':>8} {'ratio':>6} {'B/state getsizeof':>18} {'B/state tracemalloc':>20}")
    for name in OPTIONS:
        r = measure_option(name, n, plain_s)
        print(f"{name:6} {r['explorer_seconds']:8.2f} {r['ratio']:6.2f} {r['getsizeof_bytes_per_state']:18.1f}"
              f" {r['tracemalloc_bytes_per_state']:20.1f}")


if __name__ == "__main__":
    main()
