"""Structural fingerprints: 64 bits from a canonical encoding of a state, equal in every process.

A state's fingerprint is a Merkle digest of its value: a container (a
``tuple``, a ``NamedTuple``, a ``frozenset``) is the BLAKE2b digest (8
bytes) of its children's encodings, in order for a tuple and sorted for a
frozenset (element order does not count).  Nothing in it depends on the
process: no ``id()``, no salted ``hash()`` of strings, no address of
``None``, no set iteration order; so one command gives the same
fingerprints under any ``PYTHONHASHSEED``, in any process (workers, a
resumed checkpoint) and on any Python version (BLAKE2b is in ``hashlib``
since 3.6, and ``int.to_bytes`` and UTF-8 do not change).

Equal values (``==``) get equal fingerprints, which is what deduplication
needs: two states are one state when they are equal, as with Python's
``hash``.  So the encoding follows Python's equality:

* ``int`` and ``bool`` (and ``IntEnum``): a tag and 8 two's-complement bytes
  (``True`` is ``1``), or another tag and a digest for a larger int;
  an integral ``float`` is its ``int`` (``1.0 == 1``), another ``float`` its
  ``float.hex``;
* ``str`` and ``bytes``: a tag and the digest of the UTF-8
  (``surrogatepass``) or raw bytes;
* ``None``: one tag byte; an ``enum.Enum`` member: its class and name;
* a ``NamedTuple`` is encoded as the tuple of its fields (``==`` ignores
  its type).

Every encoding of a child starts with a tag that fixes its length, so no two
different sequences of children encode the same.  Anything else (a
``list``, a ``dict``, an object) is refused with a ``TypeError`` naming its
type (mostly in Python's own words, "unhashable type"): a state must be
an immutable value.

Speed: a container's digest is memoised, keyed by the container itself (at
most :data:`MEMO` entries; the memo is emptied when full), and so is a whole
value's fingerprint, apart (at most :data:`RECENT`, emptied when full: a
search meets a state again soon after it first did, and a top-level value
is looked up once and stored once, not in both memos: 0.82x the time of
the two generations it replaces on 195k fingerprints of a ``--prompts 3``
check, the same ints).  Python's own
``hash`` only finds an entry; what is stored is the value's digest, and a
hit needs an equal value, so the memo never changes a fingerprint.  A
successor shares most of its parent's parts, and equal parts recur across
states, so most children are found in the memo: on the ACP model a
fingerprint costs a few times Python's ``hash`` of the state (that hash is
C code over cached string hashes), not the fifty-fold a walk in Python of
every node costs (``benchmarks/PROFILE.md``).
"""

from __future__ import annotations

import enum
from hashlib import blake2b

#: containers whose digests are remembered (keyed by value); emptied when full
MEMO = 1 << 16
#: whole values whose fingerprints are remembered (each holds its value alive: a few); emptied when full
RECENT = 1 << 13

_INT64 = 1 << 63


def _digest(data: bytes) -> bytes:
    return blake2b(data, digest_size=8).digest()


class Fingerprinter:
    """A structural fingerprint function with its own memo (module docstring).

    ``fp = Fingerprinter(); fp(state)`` is a non-negative int below ``2**64``.

    >>> fp = Fingerprinter()
    >>> fp((1, "a", frozenset({"x", "y"}))) == fp((True, "a", frozenset({"y", "x"})))
    True
    >>> fp(("a", "b")) == fp(("ab",))
    False
    """

    __slots__ = ("_memo", "_strs", "_whole")

    def __init__(self) -> None:
        self._memo: dict = {}
        self._strs: dict[str, bytes] = {}
        self._whole: dict = {}  # whole values' fingerprints (a search meets a state again soon after it first did)

    def __call__(self, value) -> int:
        whole = self._whole
        found = whole.get(value)
        if found is None:
            if type(value) is frozenset or isinstance(value, tuple):
                found = int.from_bytes(self._digest_of(value), "little")  # not in the containers' memo too
            else:
                found = int.from_bytes(_digest(self._part(value)), "little")
            if len(whole) >= RECENT:
                whole.clear()
            whole[value] = found
        return found

    def digest(self, value) -> bytes:
        """The 8-byte digest of ``value``: a container's Merkle digest, or the digest of a leaf's encoding."""
        if type(value) is frozenset or isinstance(value, tuple):
            return self._node(value)
        return _digest(self._part(value))

    def _node(self, value) -> bytes:
        memo = self._memo
        found = memo.get(value)
        if found is None:
            found = self._digest_of(value)
            if len(memo) >= MEMO:
                memo.clear()
            memo[value] = found
        return found

    def _digest_of(self, value) -> bytes:
        """A container's digest from its children's encodings (in order; sorted for a frozenset)."""
        parts = [self._part(v) for v in value]
        if type(value) is frozenset:
            parts.sort()
            parts.append(b"}")  # a frozenset and the tuple of its sorted elements differ
        return _digest(b"".join(parts))

    def _part(self, v) -> bytes:
        """A child's encoding inside its container (module docstring)."""
        t = type(v)
        if t is str:
            found = self._strs.get(v)
            if found is None:
                if len(self._strs) >= MEMO:
                    self._strs.clear()
                found = self._strs[v] = b"s" + _digest(v.encode("utf-8", "surrogatepass"))
            return found
        if t is int or t is bool:
            found = _SMALL.get(v)  # True and 1 are one key, as they are one encoding
            return found if found is not None else _int(v)
        if v is None:
            return b"N"
        if t is frozenset or isinstance(v, tuple):
            return b"(" + self._node(v)
        return _other(v)


def _int(v: int) -> bytes:
    if -_INT64 <= v < _INT64:
        return b"i" + int(v).to_bytes(8, "little", signed=True)
    return b"I" + _digest(int(v).to_bytes((v.bit_length() + 8) // 8, "little", signed=True))


#: the encodings of the ints a state holds most (counts, ids, indices), made once
_SMALL = {i: _int(i) for i in range(-256, 4096)}


def _other(v) -> bytes:
    """The rarer leaves: subclasses of int and str, bytes, floats, enum members."""
    if isinstance(v, int):  # IntEnum, IntFlag: equal to their int
        return _int(v)
    if isinstance(v, str):
        return b"s" + _digest(str(v).encode("utf-8", "surrogatepass"))
    if isinstance(v, bytes):
        return b"b" + _digest(bytes(v))
    if isinstance(v, float):
        return _int(int(v)) if v.is_integer() else b"f" + _digest(v.hex().encode())
    if isinstance(v, enum.Enum):
        t = type(v)
        return b"e" + _digest(f"{t.__module__}.{t.__qualname__}.{v.name}".encode())
    raise TypeError(f"cannot fingerprint a {type(v).__qualname__}: a state is made of tuples, frozensets, str, "
                    "int, float, bytes, bool, None and enum members")


#: the fingerprint of a state for a model that does not define its own (one memo per process)
fingerprint = Fingerprinter()
