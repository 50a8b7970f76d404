"""Files for a behaviour: a numbered text trace, its wire log (capture JSONL) and a Mermaid diagram.

One writer for ``check`` (counterexamples), ``simulate`` (violating runs) and
``figures``; output folders are fresh, never an existing non-empty one.

A folder is *claimed* atomically (:func:`fresh_out_dir`): created with an
exclusive ``mkdir``, or, when it already exists and is empty, locked with
``flock`` for the rest of the process, so two runs never share one (the
lock is released when the process ends; on systems without ``flock`` an
existing empty folder is taken as it is).  :func:`check_out_dir` tells,
before any work starts, whether a folder could be made there at all.
"""

from __future__ import annotations

import os
from pathlib import Path as FsPath

from acplab.model.errors import InputError

from acplab.model.wire.capture import dump_capture

from .bridgeview import bridge_mermaid, bridge_records, bridge_trace, path_events
from .mermaid import mermaid
from .traces import step_trace, wire_records

#: what :func:`write_behaviour` can write, by file suffix
KINDS = ("txt", "jsonl", "mmd")


#: folders this process claimed (real path -> open descriptor holding the lock); the oldest claims are let go
#: past MAX_CLAIMS (a long-lived process, a test run), when their folders have long been written
_CLAIMED: dict[str, int] = {}
MAX_CLAIMS = 256
MAX_SIBLINGS = 10_000


def out_root(base: str | None, stem: str) -> FsPath:
    """The folder asked for: ``base``, or ``acplab-out/STEM`` by default."""
    return FsPath(base) if base else FsPath("acplab-out") / stem


def check_out_dir(base: str | None, stem: str = "out", option: str = "--out") -> None:
    """Raise :class:`InputError` (one line) unless an artefact folder can be made at ``base``.

    Run it before any work, so an unwritable ``--out`` is reported at once,
    not after a long run whose verdict would then be lost.
    """
    root = out_root(base, stem)
    probe = root
    while not probe.exists():
        if probe.is_symlink():
            raise InputError(f"{option} {root}: {probe} is a broken symbolic link")
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe != root or root.is_dir():
        if not probe.is_dir():
            raise InputError(f"{option} {root}: {probe} is not a folder")
        if not os.access(probe, os.W_OK | os.X_OK):
            raise InputError(f"{option} {root}: {probe} is not writable")
        return
    raise InputError(f"{option} {root}: exists and is not a folder")


def _claim(folder: FsPath, created: bool) -> bool:
    """Own ``folder`` for this process if nobody else does and it is empty (or we just created it)."""
    try:
        import fcntl
    except ImportError:
        return created or not any(folder.iterdir())
    key = os.path.realpath(folder)
    if key in _CLAIMED:
        return not any(folder.iterdir())
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    if not created and any(folder.iterdir()):
        os.close(fd)
        return False
    _CLAIMED[key] = fd
    while len(_CLAIMED) > MAX_CLAIMS:
        os.close(_CLAIMED.pop(next(iter(_CLAIMED))))
    return True


def _try_folder(folder: FsPath) -> bool:
    try:
        folder.mkdir(parents=True)
        created = True
    except FileExistsError:
        if not folder.is_dir():
            return False
        created = False
    return _claim(folder, created)


def fresh_out_dir(base: str | None, stem: str) -> FsPath:
    """A new folder for artefacts: ``base`` itself if given and empty, else a numbered sibling.

    Never overwrites, never shares: an existing non-empty (or claimed) folder
    gets ``NAME-2``, ``NAME-3``, ...  A path that cannot be a folder, and
    creation errors, are :class:`InputError`.
    """
    root = out_root(base, stem)
    check_out_dir(base, stem)
    try:
        if _try_folder(root):
            return root
        for n in range(2, MAX_SIBLINGS):
            candidate = root.with_name(f"{root.name}-{n}")
            if _try_folder(candidate):
                return candidate
    except OSError as err:
        raise InputError(f"--out {root}: cannot create a folder: {err.strerror or err}") from None
    raise InputError(f"--out {root}: no free folder name next to it (tried {MAX_SIBLINGS:,})")


def write_behaviour(base: FsPath, model, steps, title: str, violation: tuple[str, str] | None = None,
                    rules=(), times_ms=None, kinds=KINDS, loop_start: int | None = None) -> list[str]:
    """Write ``base``.txt / .jsonl / .mmd (those in ``kinds``) for ``steps`` (``[(action, events)]``).

    ``violation`` is ``(property name, sentence)``; ``times_ms`` gives each
    step's time for the wire log (default: the step number); ``loop_start``
    marks a lasso's repeating part in the trace and the diagram.
    """
    parts = {
        "txt": lambda: step_trace(model, steps, title, violation[1] if violation else None, loop_start),
        "jsonl": lambda: wire_records(steps, times_ms),
        "mmd": lambda: mermaid(steps, model.bounds.clients, title, violation, rules, loop_start),
    }
    return write_parts(base, {k: parts[k] for k in KINDS if k in kinds})


def write_bridge_behaviour(base: FsPath, model, path, title: str, violation: tuple[str, str] | None = None,
                           rules=()) -> list[str]:
    """The same three files for a run of a v1 <-> v2 bridge model."""
    steps = path_events(path)
    return write_parts(base, {
        "txt": lambda: bridge_trace(model, steps, title, violation[1] if violation else None),
        "jsonl": lambda: bridge_records(steps),
        "mmd": lambda: bridge_mermaid(model, steps, title, violation, rules),
    })


def write_parts(base: FsPath, parts: dict) -> list[str]:
    """``base.<suffix>`` for each ``suffix -> make()``: text, or capture records for ``jsonl``."""
    written = []
    for suffix, make in parts.items():
        path = base.with_suffix(f".{suffix}")
        content = make()
        if suffix == "jsonl":
            dump_capture(content, path)
        else:
            path.write_text(content, encoding="utf-8")
        written.append(str(path))
    return written
