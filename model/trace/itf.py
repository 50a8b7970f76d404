"""Reading an ITF trace of wire messages (``X.itf.json``) as a capture, for ``acplab trace check``.

A file whose name ends in ``.itf.json`` (ADR-015's convention) is an ITF
trace; its ``wire`` variable holds the capture records, state after state
(:mod:`acplab.model.wire.itf`).  The records are turned back into capture
lines and read through the one capture reader, so an ITF trace is judged
exactly as the ``.jsonl`` of the same run; its ``internal`` events, when the
trace says it recorded them (``#meta.acplab.internal`` not false), are its
sidecar.

Decisions
---------
* A finding has no ``line`` (JSON need not be written one record a
  line, and a SARIF region would point into the wrong text); its ``seq``
  numbers, the trace's own, say where it is.
* An explicit ``--internal`` sidecar replaces the trace's internal events.
* Anything that is not an ITF trace of wire records (not JSON, another
  tool's trace without a ``wire`` variable, a bad record) is one
  ``InputError`` line naming the file and the place.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from collections.abc import Iterator

from acplab.model.errors import InputError
from acplab.model.wire.itf import capture_lines, wire_of
from acplab.model.wire.sidecar_file import write_sidecar

SUFFIX = ".itf.json"


def is_itf(path) -> bool:
    """Whether ``path`` names an ITF trace (by ADR-015's file name convention)."""
    return isinstance(path, (str, os.PathLike)) and os.fspath(path).endswith(SUFFIX)


def load_itf(path) -> tuple[list[dict], list[tuple[int, str, dict]] | None]:
    """The capture records of the ITF trace at ``path`` and its internal events (None: it recorded none)."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            trace = json.load(f)
    except OSError as err:
        raise InputError(f"{name}: cannot read ITF trace: {err.strerror or err}") from None
    except (ValueError, RecursionError) as err:
        raise InputError(f"{name}: not an ITF trace: not JSON ({str(err).splitlines()[0][:80]})") from None
    try:
        records, events = wire_of(trace, name)
    except ValueError as err:
        raise InputError(str(err)) from None
    if not records:
        raise InputError(f"{name}: empty ITF trace: no wire records in any state")
    about = trace.get("#meta", {}).get("acplab", {}) if isinstance(trace.get("#meta"), dict) else {}
    recorded = "internal" in trace["vars"] and not (isinstance(about, dict) and about.get("internal") is False)
    return records, events if recorded else None


@contextlib.contextmanager
def itf_as_capture(path, internal=None) -> Iterator[tuple[io.BytesIO, object]]:
    """``(capture stream, sidecar path or None)`` for the ITF trace at ``path``, while the block runs.

    The stream is named as the ITF file; a sidecar of the trace's own events
    is a temporary file (unless ``internal`` names one, which wins).
    """
    records, events = load_itf(path)
    stream = io.BytesIO(b"".join(capture_lines(records)))
    stream.name = os.fspath(path)  # the capture reader names the source with it
    if internal is not None or events is None:
        yield stream, internal
        return
    with tempfile.TemporaryDirectory(prefix="acplab-itf-") as folder:
        sidecar = os.path.join(folder, "internal.events.jsonl")
        write_sidecar(events, sidecar)
        yield stream, sidecar
