"""The explorer's memory of seen states: 60-bit fingerprints and parent links as arrays."""

from __future__ import annotations

from array import array

#: Fingerprints are kept to 60 bits: a non-negative int below 2**60 is a
#: two-digit CPython int (32 bytes), one of 61..64 bits takes 36.
FP_MASK = (1 << 60) - 1


class FingerprintStore:
    """Fingerprints of seen states with parent links (index and action ordinal).

    A state is identified by its index in discovery order; ``parent[idx]`` is
    the index of the state it was discovered from (-1 for an initial state) and
    ``ordinal[idx]`` the position of the discovering action in ``successors()``
    (of the initial state in ``init_states()``).

    Fingerprints are masked to 60 bits (:data:`FP_MASK`).  By default they
    are kept in a ``set``: dedup is all the breadth-first search needs, and a
    set of small ints costs about 60 bytes a state against about 100 for a
    ``dict`` fingerprint -> index.  With ``track_index`` (``eventually``
    properties: their post-pass needs the index of an already seen successor)
    ``index`` is that dict and ``seen`` is the same object.
    """

    __slots__ = ("seen", "index", "parent", "ordinal")

    def __init__(self, track_index: bool = False) -> None:
        index: dict[int, int] | None = {} if track_index else None
        self.index = index
        self.seen: set[int] | dict[int, int] = set() if index is None else index
        self.parent = array("q")
        self.ordinal = array("i")

    @staticmethod
    def key(fp: int) -> int:
        """The stored form of a fingerprint."""
        return fp & FP_MASK

    def __len__(self) -> int:
        return len(self.parent)

    def __contains__(self, fp: int) -> bool:
        return fp & FP_MASK in self.seen

    def find(self, fp: int) -> int | None:
        """The index of a seen fingerprint, or None (needs ``track_index``)."""
        if self.index is None:
            raise TypeError("this store keeps no index: build it with track_index=True")
        return self.index.get(fp & FP_MASK)

    def add(self, fp: int, parent: int, ordinal: int) -> int:
        """Record a new state; returns its index.  ``fp`` may be unmasked."""
        idx = len(self.parent)
        seen = self.seen
        if isinstance(seen, set):
            seen.add(fp & FP_MASK)
        else:  # the index itself
            seen[fp & FP_MASK] = idx
        self.parent.append(parent)
        self.ordinal.append(ordinal)
        return idx

    def ordinals_to(self, idx: int) -> list[int]:
        """The ordinals from an initial state to ``idx``: what :func:`~.path.replay` takes."""
        chain = []
        while idx >= 0:
            chain.append(self.ordinal[idx])
            idx = self.parent[idx]
        chain.reverse()
        return chain

    def nbytes(self) -> int:
        """Bytes held by the store: containers, the int objects they own, the arrays.

        Ints that CPython caches (-5..256) are shared, not owned, and not counted.
        """
        from sys import getsizeof

        total = getsizeof(self.seen) + getsizeof(self.parent) + getsizeof(self.ordinal)
        total += sum(map(getsizeof, self.seen))
        if self.index is not None:
            total += sum(getsizeof(v) for v in self.index.values() if v > 256)
        return total
