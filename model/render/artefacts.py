"""Files for a behaviour: a numbered text trace, its wire log (capture JSONL) and a Mermaid diagram.

Every wire log is a complete conversation that checks itself: it starts
with a preamble (:func:`preamble`: ``initialize`` on each connection, then
``session/new`` on the first and a ``session/resume`` without replay on each
other one), and beside ``X.jsonl`` goes ``X.events.jsonl``, the sidecar of
the behaviour's internal events (insertions, ID assignments, ...) lined up
with it, which ``acplab trace check X.jsonl`` picks up.

One writer for ``check`` (counterexamples), ``simulate`` (violating runs) and
``figures``; output folders are fresh, never an existing non-empty one.

A folder is *claimed* atomically (:func:`fresh_out_dir`): created with an
exclusive ``mkdir``, or, when it already exists and is empty, locked with
``flock`` for the rest of the process, so two runs never share one (the
lock is released when the process ends; on systems without ``flock`` an
existing empty folder is taken as it is).  :func:`check_out_dir` tells,
before any work starts, whether a folder could be made there at all.
Files are written atomically (:func:`.atomic.replacing`).
"""

from __future__ import annotations

import os
from pathlib import Path as FsPath

from acplab.model.errors import InputError

from acplab.model.wire.capture import dump_capture, parse_conn_label
from acplab.model.wire.sidecar_file import write_sidecar

from .atomic import replacing, write_atomic
from .bridgeview import bridge_mermaid, bridge_records, bridge_trace, bridge_versions, path_events
from .itf import acp_states, bridge_states, write_itf
from .mermaid import mermaid
from .traces import step_trace, wire_records, wire_steps

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
                    rules=(), times_ms=None, kinds=KINDS, loop_start: int | None = None,
                    itf: dict | None = None, records=None, judge=None) -> list[str]:
    """Write ``base``.txt / .jsonl / .mmd (those in ``kinds``) for ``steps`` (``[(action, events)]``).

    ``violation`` is ``(property name, sentence)``; ``times_ms`` gives each
    step's time for the wire log (default: the step number); ``loop_start``
    marks a lasso's repeating part in the trace and the diagram; ``itf`` (the
    trace's ``#meta.acplab``) also writes ``base.itf.json`` (:mod:`.itf`); ``records``: the steps' wire
    records when the caller has them already (:func:`.traces.wire_records`, so each message is encoded once).
    ``judge`` (the trace layer's ``wire_visibility``) lets the text trace say at which step the wire log
    alone shows the violation, if at any.
    """
    from acplab.model.acp.rules_in_model import sidecar_events

    records = wire_records(steps, times_ms) if records is None else records
    head = preamble(records)
    own = shifted(records, len(head))

    def visible():
        if judge is None or violation is None:
            return None
        found = judge(head + own, tuple(rules))
        return visibility_line(found, wire_steps(steps), len(head), len(steps), base.name)

    parts = {
        "txt": lambda: step_trace(model, steps, title, violation[1] if violation else None, loop_start, visible()),
        "jsonl": lambda: head + own,
        "mmd": lambda: mermaid(steps, model.bounds.clients, title, violation, rules, loop_start),
    }
    written = write_parts(base, {k: parts[k] for k in KINDS if k in kinds})
    events = [(after + len(head), event, data) for after, event, data in sidecar_events(steps)]
    if "jsonl" in kinds:
        # beside the wire log, not listed with the three files (trace check finds it by name)
        write_sidecar(events, base.parent / f"{base.name}.events.jsonl")
    if itf is not None:
        states = acp_states(model, steps, own, head, events)
        written.append(write_itf(base.parent / f"{base.name}.itf.json", states, title, itf, loop_start))
    return written


def visibility_line(found, steps_of: list[int], head: int, length: int, name: str) -> str:
    """The text trace's sentence on where the wire shows the violation: ``found`` is ``(capture line, property,
    rules)`` or None; ``steps_of[i]`` the step of the i-th wire record; ``head`` the preamble's length."""
    if found is None:
        return (f"not visible on the wire in these {length} steps: the wire log alone ({name}.jsonl without "
                f"{name}.events.jsonl) shows no violation; only the internal events do")
    line, prop, found_rules = found
    if line <= head:
        return f"visible on the wire in the preamble (line {line}): {prop} [{', '.join(found_rules)}]"
    step = steps_of[line - head - 1]
    where = "the step that breaks it" if step == length else f"{length - step} step(s) before the model's finding"
    return (f"visible on the wire at step {step} ({where}): trace check of the wire log alone reports "
            f"{prop} [{', '.join(found_rules)}] at line {line}")


def preamble(records: list[dict], session: str = "s1", versions: dict | None = None,
             own_sessions: bool = False) -> list[dict]:
    """The records that make a model's wire log a complete conversation (the model starts with every client attached).

    Per first-epoch connection (``cN``) in order of appearance: ``initialize``
    (``protocolVersion`` from ``versions``, default 2); the first then
    creates the session (``session/new`` answering ``session``), each other
    one attaches to it with a ``session/resume`` without ``replayFrom``
    (nothing replayed, R1), whose window carries the state snapshot (S13:
    idle, as every model session starts).  Request ids are strings
    (``acplab-N``) no model request uses; ``t`` is 0.  ``own_sessions``
    (a bridge: each connection has its own peer): every connection, however
    named, creates the session with ``session/new``.
    """
    labels = list(dict.fromkeys(r["conn"] for r in records))
    if not own_sessions:
        labels = [c for c in labels if (parse_conn_label(c) or (0, 1))[1] == 0] or ["c1"]
    versions = versions or {}
    out: list[dict] = []

    def add(conn, direction, msg):
        out.append({"seq": len(out) + 1, "t": 0.0, "conn": conn, "dir": direction, "msg": {"jsonrpc": "2.0", **msg}})

    for k, conn in enumerate(labels):
        version = versions.get(conn, 2)
        caps = {"capabilities": {"session": {}}} if version == 2 else {"agentCapabilities": {}}
        add(conn, C2A, {"id": "acplab-1", "method": "initialize", "params": {"protocolVersion": version}})
        add(conn, A2C, {"id": "acplab-1", "result": {"protocolVersion": version, **caps}})
        if k == 0 or own_sessions:
            add(conn, C2A, {"id": "acplab-2", "method": "session/new", "params": {"cwd": "/", "mcpServers": []}})
            add(conn, A2C, {"id": "acplab-2", "result": {"sessionId": session}})
        elif version == 2:
            add(conn, C2A, {"id": "acplab-2", "method": "session/resume", "params": {"sessionId": session, "cwd": "/"}})
            add(conn, A2C, {"method": "session/update", "params": {"sessionId": session, "update": {
                "sessionUpdate": "state_update", "state": "idle"}}})
            add(conn, A2C, {"id": "acplab-2", "result": {}})
    return out


def shifted(records: list[dict], by: int) -> list[dict]:
    """``records`` renumbered after ``by`` records of a preamble."""
    return [{**r, "seq": r["seq"] + by} for r in records]


C2A, A2C = "client->agent", "agent->client"


def write_bridge_behaviour(base: FsPath, model, path, title: str, violation: tuple[str, str] | None = None,
                           rules=(), itf: dict | None = None) -> list[str]:
    """The same three files for a run of a v1 <-> v2 bridge model (and ``base.itf.json`` with ``itf``); the
    wire log starts with each connection's preamble (``initialize`` in the version its two ends speak,
    ``session/new``), so it checks itself."""
    steps = path_events(path)
    records = bridge_records(steps)
    head = preamble(records, versions=bridge_versions(model), own_sessions=True)
    own = shifted(records, len(head))

    written = write_parts(base, {
        "txt": lambda: bridge_trace(model, steps, title, violation[1] if violation else None),
        "jsonl": lambda: head + own,
        "mmd": lambda: bridge_mermaid(model, steps, title, violation, rules),
    })
    if itf is not None:
        states = bridge_states(model, steps, own, head)
        written.append(write_itf(base.parent / f"{base.name}.itf.json", states, title, itf, internal=False))
    return written


def write_parts(base: FsPath, parts: dict) -> list[str]:
    """``base.<suffix>`` for each ``suffix -> make()``: text, or capture records for ``jsonl``."""
    written = []
    for suffix, make in parts.items():
        path = base.with_suffix(f".{suffix}")
        content = make()
        if suffix == "jsonl":
            with replacing(path) as tmp:
                dump_capture(content, tmp)
        else:
            write_atomic(path, content)
        written.append(str(path))
    return written
