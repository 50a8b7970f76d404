"""Data files a search writes and reads back: a small tagged binary encoding of immutable values, never code.

What is read back from disk (a checkpoint's snapshots) may have been written
by someone else, so it is decoded by this module alone, which builds only
values of the kinds below and never imports, calls or looks up anything
named in the data:

* ``None``, ``bool``, ``int`` (any size), ``float``, ``str``, ``bytes``;
* ``tuple``, ``list``, ``dict``, ``set``, ``frozenset`` of encodable values;
* ``array.array`` of the numeric type codes (stored little-endian);
* named tuples of a registered class (:func:`register`; every named tuple
  class defined in an ``acplab.model`` module is registered when first
  needed): written as the class's name and its fields, rebuilt as a tuple
  of that class (``tuple.__new__``: no code of the class runs).  A name that
  is not registered is refused, so a file cannot make the reader build
  anything else.

Values are written in batches (:func:`encode`, :func:`decode`); within a
batch, an immutable value met twice (the same object: siblings of a search
share most of their structure) is written once and then referred to by its
position, as pickle's memo does.  Nesting is bounded (:data:`MAX_DEPTH`).

A file (:func:`write_file`, :func:`read_file`) is ``MAGIC``, the format
version, a JSON header (what the file is and of which search: compared by
the reader before anything else), the payload's length and a SHA-256 over
header and payload: integrity and identity are checked before a byte of the
payload is decoded.  The checksum detects damage, not forgery: trust comes
from the folder being the user's own (:mod:`.checkpoint`), and a forged file
can at worst give wrong values of these kinds, never run code.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
from array import array
from collections.abc import Iterable, Iterator
from typing import Any

from acplab.model.errors import InputError

MAGIC = b"ACPLAB-DATA\n"
VERSION = 1
#: how deeply values may nest (the ACP model's states nest about 8 deep)
MAX_DEPTH = 64
#: values per batch (:func:`encode`): parts shared within a batch are written once.  4,096 rather than 256:
#: on 6,000 states of the default check, 0.8 MB against 1.35 MB and half the CPU time (0.19 s against 0.35 s;
#: pickle in batches of 256: 1.8 MB, 0.15 s), for a memo of a few hundred thousand entries while encoding
BATCH = 4096
_HEAD = struct.Struct("<HIQ32s")  # version, header length, payload length, sha256
_LEN = struct.Struct("<I")
_FLOAT = struct.Struct("<d")
_ARRAY_CODES = frozenset("bBhHiIlLqQfd")
(_NONE, _TRUE, _FALSE, _INT, _NEG, _FLOAT_T, _STR, _BYTES, _TUPLE, _LIST, _DICT, _SET, _FROZEN, _ARRAY, _NAMED,
 _CLASS, _REF) = range(17)

_REGISTRY: dict[str, type] = {}
_scanned: set[str] = set()


class Damaged(InputError):
    """A data file that is not one, is cut short, fails its checksum, or holds what this format cannot hold."""


def register(cls: type) -> type:
    """Allow ``cls`` (a named tuple class) in data files; usable as a class decorator."""
    if not (issubclass(cls, tuple) and hasattr(cls, "_fields") and hasattr(cls, "_make")):
        raise TypeError(f"{cls.__qualname__} is not a named tuple class")
    _REGISTRY[_name(cls)] = cls
    return cls


def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _registered(name: str) -> type | None:
    """The registered class called ``name``; acplab's own named tuples are registered from loaded modules."""
    found = _REGISTRY.get(name)
    if found is None:
        for module_name, module in list(sys.modules.items()):
            if module_name.startswith("acplab.model") and module_name not in _scanned and module is not None:
                _scanned.add(module_name)
                for value in list(vars(module).values()):
                    if isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields") \
                            and value.__module__ == module_name:
                        _REGISTRY.setdefault(_name(value), value)
        found = _REGISTRY.get(name)
    return found


# -- values -----------------------------------------------------------------------


def _uint(out: bytearray, n: int) -> None:
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


class _Encoder:
    def __init__(self) -> None:
        self.out = bytearray()
        self.memo: dict[int, int] = {}
        self.classes: dict[type, int] = {}

    def value(self, v, depth: int = 0) -> None:
        out, t = self.out, type(v)
        if t is int:
            if 0 <= v < 0x80:
                out.append(_INT)
                out.append(v)
            else:
                out.append(_INT if v >= 0 else _NEG)
                _uint(out, v if v >= 0 else -v - 1)
        elif v is None:
            out.append(_NONE)
        elif t is bool:
            out.append(_TRUE if v else _FALSE)
        elif t is float:
            out.append(_FLOAT_T)
            out += _FLOAT.pack(v)
        elif t is list or t is dict or t is set or t is array:
            self.mutable(v, t, depth)
        else:
            ref = self.memo.get(id(v))
            if ref is not None:
                out.append(_REF)
                if ref < 0x80:
                    out.append(ref)
                else:
                    _uint(out, ref)
                return
            self.immutable(v, t, depth)
            self.memo[id(v)] = len(self.memo)

    def immutable(self, v, t: type, depth: int) -> None:
        out = self.out
        if t is str or t is bytes:
            data = v.encode() if t is str else v
            out.append(_STR if t is str else _BYTES)
            _uint(out, len(data))
            out += data
            return
        if depth >= MAX_DEPTH:
            raise ValueError(f"values nest more than {MAX_DEPTH} deep")
        if t is tuple or t is frozenset:
            out.append(_TUPLE if t is tuple else _FROZEN)
        elif issubclass(t, tuple) and hasattr(t, "_fields"):
            known = self.classes.get(t)
            if known is None:
                name = _name(t)
                if _registered(name) is not t:
                    raise ValueError(f"{name} is not a registered value type (datafile.register)")
                known = self.classes[t] = len(self.classes)
                data = name.encode()  # not a value: the name is no object of the input, so it has no place in the memo
                out.append(_CLASS)
                _uint(out, len(data))
                out += data
            out.append(_NAMED)
            _uint(out, known)
        else:
            raise ValueError(f"a {t.__qualname__} is not a value the data format holds")
        n = len(v)
        if n < 0x80:
            out.append(n)
        else:
            _uint(out, n)
        value = self.value
        for item in v:
            value(item, depth + 1)

    def mutable(self, v, t: type, depth: int) -> None:
        out = self.out
        if t is array:
            if v.typecode not in _ARRAY_CODES:
                raise ValueError(f"an array of type code {v.typecode!r} is not a value the data format holds")
            data = v if sys.byteorder == "little" else array(v.typecode, v)
            if sys.byteorder != "little":
                data.byteswap()
            out.append(_ARRAY)
            out += v.typecode.encode()
            _uint(out, len(v))
            out += data.tobytes()
            return
        if depth >= MAX_DEPTH:
            raise ValueError(f"values nest more than {MAX_DEPTH} deep")
        out.append(_LIST if t is list else _DICT if t is dict else _SET)
        _uint(out, len(v))
        if t is dict:
            for key, item in v.items():
                self.value(key, depth + 1)
                self.value(item, depth + 1)
        else:
            for item in v:
                self.value(item, depth + 1)


def encode(values: Iterable, batch: int = BATCH) -> bytes:
    """``values`` as consecutive batches of ``batch`` (each: its count, its length, then the values)."""
    parts, chunk = [], []
    for v in values:
        chunk.append(v)
        if len(chunk) == batch:
            parts.append(_batch(chunk))
            chunk = []
    if chunk:
        parts.append(_batch(chunk))
    return b"".join(parts)


def _batch(chunk: list) -> bytes:
    enc = _Encoder()
    for v in chunk:
        enc.value(v)
    return _LEN.pack(len(chunk)) + _LEN.pack(len(enc.out)) + bytes(enc.out)


class _Decoder:
    def __init__(self, data: memoryview) -> None:
        self.data, self.at = data, 0
        self.memo: list = []
        self.classes: list[Any] = []  # named tuple classes (typing has no type for "a NamedTuple class")

    def uint(self) -> int:
        data = self.data
        byte = data[self.at]
        self.at += 1
        if byte < 0x80:
            return byte
        n, shift = byte & 0x7F, 7
        while True:
            byte = data[self.at]
            self.at += 1
            n |= (byte & 0x7F) << shift
            if byte < 0x80:
                return n
            shift += 7
            if shift > 70 * 7:
                raise Damaged("an integer longer than any this format writes")

    def take(self, n: int) -> memoryview:
        if self.at + n > len(self.data):
            raise Damaged("the data ends inside a value")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def value(self, depth: int = 0):
        data, at = self.data, self.at
        tag = data[at]
        if tag == _REF or tag == _INT:
            small = data[at + 1]
            if small < 0x80:
                self.at = at + 2
                if tag == _INT:
                    return small
                if small >= len(self.memo):
                    raise Damaged("a reference to a value not seen yet")
                return self.memo[small]
        self.at = at + 1
        if tag == _NONE:
            return None
        if tag == _TRUE or tag == _FALSE:
            return tag == _TRUE
        if tag == _INT:
            return self.uint()
        if tag == _NEG:
            return -self.uint() - 1
        if tag == _FLOAT_T:
            return _FLOAT.unpack(self.take(_FLOAT.size))[0]
        if tag == _REF:
            ref = self.uint()
            if ref >= len(self.memo):
                raise Damaged("a reference to a value not seen yet")
            return self.memo[ref]
        v: Any  # what goes into the memo: text, bytes or a container
        if tag == _STR or tag == _BYTES:
            raw = bytes(self.take(self.uint()))
            v = raw.decode() if tag == _STR else raw
        elif tag == _ARRAY:
            code = bytes(self.take(1)).decode("latin-1")
            if code not in _ARRAY_CODES:
                raise Damaged(f"an array of unknown type code {code!r}")
            numbers = array(code)
            numbers.frombytes(self.take(self.uint() * numbers.itemsize))
            if sys.byteorder != "little":
                numbers.byteswap()
            return numbers
        elif tag == _CLASS:
            name = bytes(self.take(self.uint())).decode()
            cls = _registered(name)
            if cls is None:
                raise Damaged(f"a value of type {name[:80]!r}, which is not a registered value type")
            self.classes.append(cls)
            return self.value(depth)
        else:
            if depth >= MAX_DEPTH:
                raise Damaged(f"values nest more than {MAX_DEPTH} deep")
            v = self.container(tag, depth)
            if tag in (_LIST, _DICT, _SET):
                return v
        self.memo.append(v)
        return v

    def container(self, tag: int, depth: int):
        if tag == _NAMED:
            k = self.uint()
            if k >= len(self.classes):
                raise Damaged("a value of a type not named yet")
            cls = self.classes[k]
            n = self.uint()
            if n != len(cls._fields):
                raise Damaged(f"a {cls.__qualname__} with {n} fields (it has {len(cls._fields)})")
            value = self.value
            return tuple.__new__(cls, [value(depth + 1) for _ in range(n)])
        if tag not in (_TUPLE, _LIST, _DICT, _SET, _FROZEN):
            raise Damaged(f"an unknown tag {tag}")
        n = self.uint()
        if n > len(self.data) - self.at:
            raise Damaged("a collection longer than the data")
        if tag == _DICT:
            out = {}
            for _ in range(n):
                key = self.value(depth + 1)
                out[key] = self.value(depth + 1)
            return out
        value = self.value
        items = [value(depth + 1) for _ in range(n)]
        return tuple(items) if tag == _TUPLE else items if tag == _LIST else set(items) if tag == _SET \
            else frozenset(items)


def decode(data: bytes) -> Iterator:
    """The values of consecutive batches, in order (:class:`Damaged` on anything this format does not write)."""
    view, at = memoryview(data), 0
    while at < len(data):
        if at + 2 * _LEN.size > len(data):
            raise Damaged("the data ends inside a batch header")
        count, size = _LEN.unpack_from(view, at)[0], _LEN.unpack_from(view, at + _LEN.size)[0]
        at += 2 * _LEN.size
        if at + size > len(data):
            raise Damaged("the data ends inside a batch")
        dec = _Decoder(view[at:at + size])
        try:
            for _ in range(count):
                yield dec.value()
        except (IndexError, UnicodeDecodeError, TypeError, struct.error) as err:
            raise Damaged(f"a value cannot be read ({err})") from None
        if dec.at != size:
            raise Damaged("a batch holds more than its values")
        at += size


def encode_value(value) -> bytes:
    """One value as one batch."""
    return encode([value])


def decode_value(data: bytes):
    """The one value of ``encode_value``."""
    values = list(decode(data))
    if len(values) != 1:
        raise Damaged(f"{len(values)} values where one was written")
    return values[0]


# -- files ------------------------------------------------------------------------


def write_file(path: str, header: dict, payload: bytes) -> int:
    """Write ``MAGIC``, version, header, payload and their checksum, synced; returns the bytes written."""
    head = json.dumps(header, sort_keys=True).encode()
    digest = hashlib.sha256(head + payload).digest()
    with open(path, "xb") as f:
        f.write(MAGIC + _HEAD.pack(VERSION, len(head), len(payload), digest) + head)
        f.write(payload)
        f.flush()
        os.fsync(f.fileno())
    return len(MAGIC) + _HEAD.size + len(head) + len(payload)


def read_file(path: str) -> tuple[dict, bytes]:
    """The header and the payload of a data file, its integrity checked (nothing decoded but the JSON header).

    Symbolic links are not followed (``O_NOFOLLOW``)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as err:
        raise Damaged(f"{os.path.basename(path)} cannot be opened ({err.strerror or err})") from None
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    name = os.path.basename(path)
    start = len(MAGIC) + _HEAD.size
    if not data.startswith(MAGIC) or len(data) < start:
        raise Damaged(f"{name} is not an acplab data file")
    version, head_len, payload_len, digest = _HEAD.unpack_from(data, len(MAGIC))
    if version != VERSION:
        raise Damaged(f"{name} is in data format {version}; this acplab reads format {VERSION}")
    if len(data) != start + head_len + payload_len:
        raise Damaged(f"{name} is {len(data)} bytes; its header says {start + head_len + payload_len}")
    body = memoryview(data)[start:]
    if hashlib.sha256(body).digest() != digest:
        raise Damaged(f"{name} fails its checksum")
    try:
        header = json.loads(bytes(body[:head_len]))
    except ValueError:
        raise Damaged(f"{name} has a header that is not JSON") from None
    if not isinstance(header, dict):
        raise Damaged(f"{name} has a header that is not a JSON object")
    return header, bytes(body[head_len:])
