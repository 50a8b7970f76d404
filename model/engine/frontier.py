"""A compact BFS level: states in order, the first ones as objects, the rest encoded on disk.

A level is appended to in the search order and read back once in the same
order.  States stay live objects (a successor shares most of its parent's
structure, so these cost little to keep and nothing to decode) while the
process has :class:`Room`: its resident memory is below its share of the
search's memory budget.  Past it they are pickled in batches with one memo
per batch, so siblings' shared parts are written once (about 250 bytes a
state for the ACP model, against 800 pickled alone and 1.5 KB as live
objects), and appended to a temporary file: the operating system's page
cache, not the process, then holds them.  Where a level spills changes
nothing but memory and time: the states are read back in the same order.

The budget (bytes, for the whole search, shared out among its workers) is
``explore(memory=...)``, else ``$ACPLAB_SEARCH_MEMORY`` (``512M``, ``2G``,
or bytes), else :data:`DEFAULT_MEMORY`.  It bounds what the live states
may take; the fingerprints and the rest grow past it.  The fixed 500 live
states a level it replaces cost a pickle and an unpickle per state past the
500th, and an unpickled state shares no part with the others, so memo
lookups on it compare deep tuples and the memos hold its copies: on
``--clients 2 --prompts 3`` the budget takes half the CPU and half the peak
memory of the cap (``benchmarks/PROFILE.md``).
"""

from __future__ import annotations

import io
import os
import pickle
import re
import resource
import struct
import tempfile
from array import array
from collections.abc import Iterator
from typing import IO

from acplab.model.errors import InputError

BATCH = 256
_LEN = struct.Struct("<II")

#: the search's memory budget when neither ``explore(memory=...)`` nor :data:`MEMORY_ENV` gives one (the
#: scale goals' 300 B/state at 1M states, less what fingerprints and interpreters take past it)
DEFAULT_MEMORY = 256 << 20
#: the environment variable that sets the search's memory budget (``512M``, ``2G``, ``300000000``)
MEMORY_ENV = "ACPLAB_SEARCH_MEMORY"
#: appends between two readings of the resident memory (a reading costs a few microseconds)
CHECK_EVERY = 256

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def memory_budget(given: int | None = None) -> int:
    """The search's memory budget in bytes: ``given``, else ``$ACPLAB_SEARCH_MEMORY``, else the default.

    >>> memory_budget(1000)
    1000
    >>> parse_memory("1.5G") == 3 << 29
    True
    """
    if given is not None:
        return given
    text = os.environ.get(MEMORY_ENV, "").strip()
    return parse_memory(text) if text else DEFAULT_MEMORY


def parse_memory(text: str) -> int:
    """Bytes from ``512M``, ``2G``, ``1.5g``, ``300000000`` (``K``, ``M``, ``G``, ``T``: powers of 1,024)."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if found is None:
        raise InputError(f"{MEMORY_ENV}={text!r}: give bytes, or a number with K, M, G or T (512M, 2G)")
    return int(float(found[1]) * _UNITS[found[2].upper()])


def resident_bytes() -> int:
    """This process's resident memory now (Linux: ``/proc/self/statm``; elsewhere its peak, which only grows)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return usage if os.uname().sysname == "Darwin" else usage * 1024  # macOS counts bytes, Linux kilobytes


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class Room:
    """Whether a new state may stay live: this process's resident memory is below ``budget`` bytes.

    The memory is read every :data:`CHECK_EVERY` calls and the answer kept in
    between.  ``cap``, when given, also bounds the live states of a level
    (tests use it to make small searches spill).
    """

    __slots__ = ("budget", "cap", "countdown", "free")

    def __init__(self, budget: int, cap: int | None = None) -> None:
        self.budget, self.cap = budget, cap
        self.countdown, self.free = 0, True

    def __call__(self, live: int) -> bool:
        if self.cap is not None and live >= self.cap:
            return False
        self.countdown -= 1
        if self.countdown < 0:
            self.countdown = CHECK_EVERY
            self.free = resident_bytes() < self.budget
        return self.free


def encode_batch(states: list) -> bytes:
    """Pickle states with one memo: parts shared among them are written once."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, pickle.HIGHEST_PROTOCOL)
    for s in states:
        pickler.dump(s)
    return _LEN.pack(len(states), buf.tell()) + buf.getvalue()


def decode_batches(data: bytes) -> Iterator:
    """The states of consecutive encoded batches, in order."""
    view, at = memoryview(data), 0
    while at < len(data):
        count, size = _LEN.unpack_from(view, at)
        at += _LEN.size
        unpickler = pickle.Unpickler(io.BytesIO(view[at:at + size]))
        for _ in range(count):
            yield unpickler.load()
        at += size


class Level:
    """One BFS level: ``keys`` (array), then the states in the same order.

    Life cycle: ``append`` in order; then ``states()`` reads them back once
    and ``close`` drops the spill file.  A checkpoint saves ``states()``
    through :mod:`.datafile`, never these pickled batches.  States stay live
    while ``room`` says so (a worker's two levels share one); once a level
    spilled, the rest of it spills too (the order is live, then spilled).
    """

    def __init__(self, room: Room | None = None, folder: str | None = None) -> None:
        self.keys = array("q")
        self.ranks = array("q")
        self.live: list = []
        self.room = room if room is not None else Room(memory_budget())
        self.folder = folder
        self.pending: list = []
        self.spill: IO[bytes] | None = None
        self.spilled = 0

    def __len__(self) -> int:
        return len(self.keys)

    def append(self, key: int, state) -> None:
        self.keys.append(key)
        if not self.pending and self.spill is None and self.room(len(self.live)):
            self.live.append(state)
            return
        self.pending.append(state)
        if len(self.pending) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        if not self.pending:
            return
        if self.spill is None:
            self.spill = tempfile.TemporaryFile(dir=self.folder, prefix="acplab-level-")
        self.spill.write(encode_batch(self.pending))
        self.spilled += len(self.pending)
        self.pending = []

    def states(self) -> Iterator:
        """Every state in order: the live ones, then the spilled batches, then the unflushed tail."""
        yield from self.live
        if self.spill is not None:
            self.spill.seek(0)
            while True:
                head = self.spill.read(_LEN.size)
                if not head:
                    break
                count, size = _LEN.unpack(head)
                yield from decode_batches(head + self.spill.read(size))
        yield from self.pending

    def close(self) -> None:
        if self.spill is not None:
            self.spill.close()
            self.spill = None
        self.live, self.pending = [], []
