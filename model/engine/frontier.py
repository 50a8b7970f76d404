"""A compact BFS level: states in order, the first ones as objects, the rest encoded on disk.

A level is appended to in the search order and read back once in the same
order.  Up to ``in_memory`` states stay live objects (a successor shares
most of its parent's structure, so these cost little to keep and nothing to
decode); beyond that they are pickled in batches with one memo per batch,
so siblings' shared parts are written once (about 250 bytes a state for
the ACP model, against 800 pickled alone and 1.5 KB as live objects), and
appended to a temporary file: the operating system's page cache, not the
process, then holds them.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import tempfile
from array import array
from collections.abc import Iterator

BATCH = 256
_LEN = struct.Struct("<II")


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
    and ``close`` drops the spill file.  ``encoded()`` gives the whole level
    as batches (for a checkpoint) and ``Level.decoded`` rebuilds one.
    """

    def __init__(self, in_memory: int = 50_000, folder: str | None = None) -> None:
        self.keys = array("q")
        self.ranks = array("q")
        self.live: list = []
        self.in_memory = in_memory
        self.folder = folder
        self.pending: list = []
        self.spill = None
        self.spilled = 0

    def __len__(self) -> int:
        return len(self.keys)

    def append(self, key: int, state) -> None:
        self.keys.append(key)
        if len(self.live) < self.in_memory:
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

    def encoded(self) -> bytes:
        """The whole level's states as encoded batches."""
        out = [encode_batch(self.live[i:i + BATCH]) for i in range(0, len(self.live), BATCH)]
        if self.spill is not None:
            self.spill.seek(0)
            out.append(self.spill.read())
            self.spill.seek(0, os.SEEK_END)
        out.append(encode_batch(self.pending) if self.pending else b"")
        return b"".join(out)

    @classmethod
    def decoded(cls, keys: bytes, ranks: bytes, data: bytes, in_memory: int, folder: str | None) -> Level:
        level = cls(in_memory, folder)
        k = array("q")
        k.frombytes(keys)
        for key, state in zip(k, decode_batches(data)):
            level.append(key, state)
        level.ranks.frombytes(ranks)
        return level

    def close(self) -> None:
        if self.spill is not None:
            self.spill.close()
            self.spill = None
        self.live, self.pending = [], []
