"""Is this line JSON text?  A strict check (RFC 8259) that never recurses and never converts numbers.

The recorder embeds a message in its capture line *verbatim* when the line
is a JSON object text, so the capture keeps the exact bytes that crossed the
wire; anything else it marks as raw (:mod:`.capture`).  That decision needs a
check that is exact and cannot fail on odd input:

* **Strict** (RFC 8259): UTF-8; ``NaN``, ``Infinity``, a byte order mark,
  single quotes, trailing commas and control characters in strings are not
  JSON.
* **Still JSON** (the grammar allows them, so they are kept verbatim):
  duplicate object keys, numbers of any size or precision (``1e400``,
  a 5,000-digit integer, ``1E2``), escaped lone surrogates (``"\\ud800"``),
  insignificant whitespace anywhere, including a ``\\r`` before the newline.
  Readers decide what such a message means; the capture does not.
* **Any depth**: the fast path is the C parser with number conversion
  switched off; text nested deeper than it recurses goes to :func:`scan`,
  which keeps an explicit stack (a line 1,000,000 levels deep is checked in
  about a second).

Cost: one pass of the C parser per line (about 100 MB/s), rarely the
pure-Python :func:`scan` (about 10-20 MB/s).

:func:`canonical` is the capture reader's fast path: a line that is the
compact encoding of its own value is read by msgspec (no repeated member
names, nothing non-finite); any other line is read strictly.
"""

from __future__ import annotations

import json
import re

import msgspec

#: what :func:`classify` says about a line
OBJECT = "object"  # a JSON object text: embed verbatim
NOT_UTF8 = "not UTF-8"
NOT_JSON = "not JSON"
NOT_OBJECT = "not a JSON object"

#: a line with more ``{`` and ``[`` than this (in strings too) is read strictly (:func:`canonical`)
MAX_BRACKETS = 400

_WS = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, pos: int) -> int:
    """The position after the whitespace at ``pos`` (the pattern matches the empty string too)."""
    m = _WS.match(text, pos)
    return pos if m is None else m.end()
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?")
_LITERALS = {"t": "true", "f": "false", "n": "null"}
_CLOSE = {"{": "}", "[": "]"}


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


#: the C parser, numbers not converted (any size is fine), NaN/Infinity refused; built once
_DECODER = json.JSONDecoder(parse_int=len, parse_float=len, parse_constant=_reject_constant)


def scan(text: str) -> str | None:
    """The first character of the top-level value if ``text`` is one JSON text, else None.

    Iterative (an explicit stack), so any depth is fine.

    Examples
    --------
    >>> scan('{"a": [1, 2e400]} '), scan('[1,]'), scan('NaN'), scan('"x"')
    ('{', None, None, '"')
    """
    n = len(text)
    pos = _skip_ws(text, 0)
    stack: list[str] = []
    top = text[pos] if pos < n else None
    while True:
        if pos >= n:  # a value is expected here
            return None
        c = text[pos]
        if c in _CLOSE:
            pos = _skip_ws(text, pos + 1)
            if pos < n and text[pos] == _CLOSE[c]:
                pos += 1  # an empty container is a complete value
            else:
                stack.append(c)
                if c == "{":
                    pos = _key(text, pos)
                    if pos < 0:
                        return None
                continue
        elif c == '"':
            m = _STRING.match(text, pos)
            if m is None:
                return None
            pos = m.end()
        elif c in _LITERALS:
            if not text.startswith(_LITERALS[c], pos):
                return None
            pos += len(_LITERALS[c])
        else:
            m = _NUMBER.match(text, pos)
            if m is None:
                return None
            pos = m.end()
        # a complete value ends at pos: close containers, or find the next value
        while True:
            pos = _skip_ws(text, pos)
            if not stack:
                return top if pos == n else None
            if pos >= n:
                return None
            c = text[pos]
            if c == ",":
                pos = _skip_ws(text, pos + 1)
                if stack[-1] == "{":
                    pos = _key(text, pos)
                    if pos < 0:
                        return None
                break
            if c != _CLOSE[stack[-1]]:
                return None
            stack.pop()
            pos += 1


def _key(text: str, pos: int) -> int:
    """After ``{`` or ``,`` in an object: a string, ``:``; the position of the value, or -1."""
    m = _STRING.match(text, pos)
    if m is None:
        return -1
    pos = _skip_ws(text, m.end())
    if pos >= len(text) or text[pos] != ":":
        return -1
    return _skip_ws(text, pos + 1)


def classify(data: bytes) -> str:
    """:data:`OBJECT` if ``data`` is one JSON object text (strict, any depth), else why not.

    Never raises for any input of bytes.

    Examples
    --------
    >>> classify(b'{"id":1E2,"id":1e400}'), classify(b'{"x":NaN}'), classify(b'[1]'), classify(b'\\xff')
    ('object', 'not JSON', 'not a JSON object', 'not UTF-8')
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return NOT_UTF8
    try:
        value = _DECODER.decode(text)
        top: str | None = "{" if isinstance(value, dict) else "other"
    except ValueError:  # the C parser rejects exactly what RFC 8259 rejects, once NaN/Infinity are refused
        return NOT_JSON
    except (RecursionError, MemoryError):
        top = scan(text)
        if top is None:
            return NOT_JSON
    return OBJECT if top == "{" else NOT_OBJECT


def canonical(line: bytes, _decode=msgspec.json.decode, _encode=msgspec.json.encode):
    """The value of a capture line that is exactly the compact encoding of that value, else None (read it strictly).

    The capture reader's fast path (issue 27): msgspec decodes the line, and
    the value counts only if encoding it gives back the line's very bytes
    (its newline aside).  An object that repeats a member name (RFC 8259
    section 4) never passes: the value's dicts hold each name once, so their
    encoding has fewer members than the line.  Nor does anything else the
    strict reading must see: msgspec refuses ``NaN`` / ``Infinity``,
    ``1e400``, integers past Python's 4,300-digit limit, lone surrogates,
    invalid UTF-8 and nesting too deep; whitespace, escapes it would not
    write (``\\u00e9``, ``\\/``), ``1E2`` or ``1e+16`` make the bytes differ.
    Those lines go to the strict reading
    (:func:`acplab.model.wire.capture.loads_strict`, or the caller's
    ``loads``), which decides as before; so do lines with more than
    :data:`MAX_BRACKETS` brackets, as the strict reading's own depth limit
    is Python's recursion limit less the stack it is called at (msgspec's
    differs by a few levels).  A line with ``": `` (spaced JSON, or that text
    in a string) is not tried: it would cost a decode and an encode in vain.  Compact lines (``encode_record``'s,
    serde_json's, ``JSON.stringify``'s) are canonical.  Property tests:
    tests/test_capture_fastpath.py.
    """
    body = line[:-1] if line[-1:] == b"\n" else line
    if b'": ' in body or len(body) > MAX_BRACKETS and body.count(b"{") + body.count(b"[") > MAX_BRACKETS:
        return None  # spaced (Python's default json.dumps): never canonical, so not worth a try; or too deep
    try:
        return value if _encode(value := _decode(body)) == body else None
    except Exception:  # noqa: BLE001 - any refusal (DecodeError, ValidationError, RecursionError): read strictly
        return None


__all__ = ["NOT_JSON", "NOT_OBJECT", "NOT_UTF8", "OBJECT", "canonical", "classify", "scan"]
