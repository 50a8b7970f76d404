"""Checkpoints of a level-synchronous search: a killed run resumes between two levels.

A snapshot is a folder ``snap-LEVEL`` inside the checkpoint folder: the
coordinator's decisions and parent links (``search.dat``) and one file per
worker (its fingerprints and its share of the level about to be expanded).
It is written under a temporary name, synced, renamed, and only then named
in ``CURRENT`` (replaced atomically), so a kill at any moment leaves the
previous snapshot whole.  Resuming takes the snapshot named in ``CURRENT``
if it was made for the same search; the number of workers may differ.

Every file is data (:mod:`.datafile`: tagged values, never pickle), with a
checksum; ``search.dat``'s header names what the snapshot is of
(:meth:`Checkpoint.identity`): the acplab version, a digest of the model
package's source files (:func:`model_digest`: an edit of the model's code,
or an upgrade, changes what a state means), the search (the model, spec and
bounds, from the caller), the engine's options (properties, reduction,
violation policy) and the hash probe below.  Resuming compares all of them
before decoding anything, and refuses with one line saying which differs;
``search.dat`` also records the SHA-256 of every other file of the snapshot,
checked before a worker reads one.

A search with ``eventually`` properties also saves its workers' records
(:mod:`.eventual_levels`): per worker ``worker-I.records`` and
``worker-I.edges``, a hard link to the worker's edge spill file (raw
integers, only ever appended to, so the link's first ``length`` bytes,
named in ``search.dat``, stay the snapshot's whatever the run appends
later; being appended to, it has no checksum, only its length is checked).
Resuming links every saved record into ``resumed/`` (the archive: read by
the liveness pass after the run, never re-partitioned, so any number of
workers may resume) and truncates each edge file to its length.  A later
snapshot links the archive in again as ``archive-J.*``.  The workers'
spill files live in ``spill/``, so the links stay on one file system.

The folder is the search's, and only its (:meth:`Checkpoint.claim`): it
must be new, empty, or marked by an earlier run (``MARK``, holding
``MARK_TEXT``), and owned by the user running; ``CURRENT`` must name a
snapshot folder inside it (no path, no symbolic link is followed out of
it); and a run holds an exclusive lock on ``LOCK`` (``fcntl.flock``, the
file holding its PID) from claiming the folder to the end, so a second run
on the same folder is refused, naming the first one's PID.

Fingerprints are structural (:mod:`.fingerprint`): the same in every
process.  A snapshot records the fingerprint of a probe value, and a resume
whose fingerprints differ (an acplab with another encoding) is refused: its
fingerprints would match nothing, and every state seen before would be
counted again.

Not covered: the work of the level that was being expanded when the run
was killed is done again; a snapshot is only as durable as the file
system's ``fsync``; the checksums detect damage, not forgery (a file forged
in the user's own folder can give wrong results, never run code); the lock
is advisory (another program may ignore it) and, on some network file
systems, local to one machine.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
from functools import lru_cache
from pathlib import Path

from acplab.model.errors import InputError

from . import datafile
from .fingerprint import fingerprint


#: fingerprinted into every snapshot: equal only under the same fingerprint encoding
HASH_PROBE = ("acplab-checkpoint", "hash-probe", None)
#: the file that marks a folder as a checkpoint folder (written when a search first claims it), and its text
MARK = ".acplab-checkpoint"
MARK_TEXT = "acplab checkpoint folder, format 2 (data files; see acplab.model.engine.checkpoint)\n"
#: the lock file: locked by the run using the folder, and holding its PID
LOCK = ".acplab-lock"
SEARCH = "search.dat"
#: the suffixes of one worker's saved ``eventually`` records
RECORD_FILES = (".records", ".edges")
_SNAPSHOT = re.compile(r"snap-\d{4,}")
_RECORD = re.compile(r"(worker|archive)-\d+")
#: the package whose source files :func:`model_digest` covers: acplab.model, this file's grandparent
_MODEL_PACKAGE = Path(__file__).resolve().parents[1]


def acplab_version() -> str:
    """The installed acplab's version (``unknown`` when it runs from an uninstalled tree)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("acplab")
    except PackageNotFoundError:
        return "unknown"


@lru_cache(maxsize=1)
def model_digest() -> str:
    """SHA-256 over the model package's source files (every ``.py`` and ``.json`` below ``acplab.model``,
    by relative path and text): what a state of the search means, as far as a file on disk can say."""
    h = hashlib.sha256()
    for path in sorted(p for p in _MODEL_PACKAGE.rglob("*") if p.suffix in (".py", ".json") and p.is_file()):
        h.update(path.relative_to(_MODEL_PACKAGE).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def code_identity() -> dict:
    """What a saved search result means depends on beyond the search itself: the acplab version, the model
    package's code and the fingerprint encoding (a checkpoint's identity; a matrix cache entry's too)."""
    return {"acplab": acplab_version(), "model code": model_digest(), "hash probe": fingerprint(HASH_PROBE)}


class Checkpoint:
    """Save and load snapshots of a search in ``folder``.

    ``identity`` names the search (the model, its spec and bounds); ``records``: the workers also
    save ``eventually`` records (module docstring); after :meth:`load`, ``archive`` lists the
    saved ones as ``(path stem, falsified counts, edge bytes)``.
    """

    def __init__(self, folder: str, identity: str, workers: int, options: dict | None = None,
                 records: bool = False) -> None:
        self.folder = Path(folder)
        self.search = identity
        self.workers = workers
        self.options = dict(options or {})
        self.records = records
        self.archive: list[tuple[str, list[int], int]] = []
        self.spill = self.folder / "spill"
        self.resumed = self.folder / "resumed"
        self._lock: int | None = None

    def identity(self) -> dict:
        """What a snapshot must have been made by and for, to be resumed here (module docstring)."""
        return {**code_identity(), "search": self.search, "options": json.loads(json.dumps(self.options))}

    # -- the folder -------------------------------------------------------------------

    def claim(self) -> None:
        """Make the folder this search's, locked (refusing one that is not a checkpoint folder of this
        user's, or that another run holds), with an empty ``spill/``."""
        folder = self.folder
        try:
            if folder.exists() and not folder.is_dir():
                raise InputError(f"--checkpoint {folder}: exists and is not a folder")
            if folder.is_dir():
                self._check_owned()
            folder.mkdir(parents=True, exist_ok=True)
            self._take_lock()
            mark = folder / MARK
            if not mark.exists() and not mark.is_symlink():
                with open(os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), "w") as f:
                    f.write(MARK_TEXT)
            for scratch in (self.spill, self.resumed):  # what a killed run left: its snapshots hold their own links
                _remove(scratch)
            if self.records:
                self.spill.mkdir()
        except OSError as err:
            raise InputError(f"--checkpoint {folder}: {err.strerror or err}") from None

    def _check_owned(self) -> None:
        """Refuse a folder of another user's, or one holding anything but acplab's checkpoint (nothing is touched)."""
        folder = self.folder
        owner = folder.stat().st_uid
        if owner != os.geteuid():
            raise InputError(f"--checkpoint {folder}: the folder belongs to another user (uid {owner}); "
                             "name a folder of your own (nothing in it was touched)")
        entries = {p.name for p in folder.iterdir()}
        if not entries - {LOCK}:  # empty, or another run is claiming it (the lock then says so)
            return
        mark = folder / MARK
        if MARK not in entries:
            raise InputError(f"--checkpoint {folder}: the folder holds files that are not an acplab checkpoint; "
                             "name a new or empty folder (nothing in it was touched)")
        if mark.is_symlink() or not mark.is_file() or _read_small(mark) != MARK_TEXT:
            raise InputError(f"--checkpoint {folder}: the folder's mark ({MARK}) is not this acplab's (a "
                             "checkpoint of an earlier acplab, whose snapshots this one does not read?); remove it "
                             "or name another folder (nothing in it was touched)")

    def _take_lock(self) -> None:
        """Lock ``LOCK`` for this run, writing my PID in it; refuse when another run holds it."""
        fd = os.open(self.folder / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip()
            os.close(fd)
            who = f"PID {holder}" if holder.isdigit() else "its PID not written yet"
            raise InputError(f"--checkpoint {self.folder}: another acplab run ({who}) is using this folder; "
                             "wait for it to end or name another folder") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock = fd

    def tidy(self) -> None:
        """Remove the scratch folders (the snapshots keep what they need), and let the folder go."""
        if self._lock is None:
            return
        for scratch in (self.spill, self.resumed):
            _remove(scratch)
        os.close(self._lock)  # closing the descriptor releases the lock
        self._lock = None

    # -- loading ----------------------------------------------------------------------

    def load(self, peers, state: dict) -> bool:
        """Claim the folder; fill ``state`` and the workers from the current snapshot; False when there is none.

        Everything is checked before a value is decoded: the snapshot's place, its identity, every
        file's checksum; then the values' shape.  Any failure is one :class:`InputError`."""
        self.claim()
        current = self.folder / "CURRENT"
        if not current.exists() and not current.is_symlink():
            return False
        try:
            snap = self._current(current)
            header, payload = datafile.read_file(str(snap / SEARCH))
            self._same_identity(header)
            saved = datafile.decode_value(payload)
            files = self._check_shape(saved, state, snap)
            for name, digest in saved["files"].items():
                if _file_digest(snap / name) != digest:
                    raise datafile.Damaged(f"{name} is not the file the snapshot recorded (its checksum differs)")
            self._load_workers(peers, [str(snap / f) for f in files])
            if self.records:
                self.archive = self._link_records(snap, saved["records"])
        except datafile.Damaged as err:
            raise InputError(f"{self.folder}: its current snapshot is damaged: {err}; use another folder or "
                             "remove it") from None
        except OSError as err:
            where = f"{os.path.basename(err.filename)}: " if err.filename else ""
            raise InputError(f"{self.folder}: its current snapshot cannot be read ({where}{err.strerror or err}); "
                             "use another folder or remove it") from None
        state.update(saved["state"])
        return True

    def _current(self, current: Path) -> Path:
        """The snapshot folder ``CURRENT`` names: a ``snap-N`` folder right inside the checkpoint folder."""
        if current.is_symlink() or not current.is_file():
            raise datafile.Damaged("CURRENT is not a plain file")
        name = _read_small(current).strip()
        if not _SNAPSHOT.fullmatch(name):
            raise InputError(f"{self.folder}: CURRENT names {name[:60]!r}, which is not a snapshot of this folder "
                             "(a path leading out of it is never followed); use another folder or remove it")
        snap = self.folder / name
        if snap.is_symlink() or not snap.is_dir():
            raise datafile.Damaged(f"{name} is not a folder of the checkpoint folder")
        return snap

    def _same_identity(self, header: dict) -> None:
        """Refuse a snapshot made by another acplab, another model code, for another search or options."""
        saved, here = header.get("identity"), self.identity()
        if not isinstance(saved, dict):
            raise datafile.Damaged(f"{SEARCH} names no identity")
        if saved.get("acplab") != here["acplab"]:
            raise InputError(f"{self.folder} holds a checkpoint made by acplab {_short(saved.get('acplab'))}; this is "
                             f"acplab {here['acplab']}, whose states may mean something else: resume with that "
                             "version, or use another folder or remove it")
        if saved.get("model code") != here["model code"]:
            raise InputError(f"{self.folder} holds a checkpoint made with other model code (the source files of "
                             f"acplab.model changed since: digest {_short(saved.get('model code'), 12)} there, "
                             f"{here['model code'][:12]} here); resume with that code, or use another folder or "
                             "remove it")
        if saved.get("search") != here["search"]:
            raise InputError(f"{self.folder} holds a checkpoint of another search "
                             f"({words_diff(str(saved.get('search')), here['search'])}); use another folder or remove it")
        if saved.get("hash probe") != here["hash probe"]:
            raise InputError(f"{self.folder} holds a checkpoint whose state fingerprints are encoded otherwise "
                             "(another acplab version), so they match nothing here; use another folder or remove it")
        if saved.get("options") != here["options"]:
            theirs = saved.get("options") if isinstance(saved.get("options"), dict) else None
            raise InputError(f"{self.folder} holds a checkpoint of this model made with other search options "
                             f"({options_diff(theirs, here['options'])}); use another folder or remove it")

    def _check_shape(self, saved, state: dict, snap: Path) -> list[str]:
        """Refuse values that are not what :meth:`save` writes; returns the worker files, in order."""
        if not isinstance(saved, dict) or not {"workers", "state", "records", "files"} <= set(saved):
            raise datafile.Damaged(f"{SEARCH} lacks what a snapshot records")
        workers, st, files = saved["workers"], saved["state"], saved["files"]
        if type(workers) is not int or not 1 <= workers <= 4096 or not isinstance(files, dict):
            raise datafile.Damaged(f"{SEARCH} names no worker files")
        missing = [k for k in state if k not in st or type(st[k]) is not type(state[k])]
        if missing:
            raise datafile.Damaged(f"{SEARCH} lacks the search's {missing[0]!r} (or holds another kind of value)")
        names = [f"worker-{i}.bin" for i in range(workers)]
        records = saved["records"] if self.records else []
        for r in records:
            if not (isinstance(r, tuple) and len(r) == 3 and isinstance(r[0], str) and _RECORD.fullmatch(r[0])):
                raise datafile.Damaged(f"{SEARCH} names a record that is not one of the snapshot's")
        wanted = names + [r[0] + ".records" for r in records]
        if sorted(files) != sorted(wanted) or not all(isinstance(d, str) for d in files.values()):
            raise datafile.Damaged(f"{SEARCH} does not list the snapshot's files")
        return names

    def _load_workers(self, peers, files: list[str]) -> None:
        """The workers read their shares; a worker's failure (a file that passed its checksum yet does not
        decode: forged) is reported as damage, in one line."""
        try:
            for peer in peers:
                peer.send("load", files)  # a worker in this process loads at once
            for peer in peers:
                peer.recv()
        except (RuntimeError, ValueError, TypeError, KeyError) as err:
            lines = str(err).strip().splitlines() or [type(err).__name__]
            raise datafile.Damaged(f"a worker file cannot be read ({lines[-1].split(': ', 1)[-1][:200]})") from None

    def _link_records(self, snap: Path, saved: list) -> list[tuple[str, list[int], int]]:
        """Link the snapshot's ``eventually`` records into ``resumed/``, each edge file cut to its saved length."""
        self.resumed.mkdir()
        archive = []
        for j, (name, counts, length) in enumerate(saved):
            stem = self.resumed / f"archive-{j}"
            for suffix in RECORD_FILES:
                source = snap / (name + suffix)
                if source.is_symlink() or not source.is_file():
                    raise datafile.Damaged(f"{name}{suffix} is not a file of the snapshot")
                link(source, Path(str(stem) + suffix))
            edges = str(stem) + ".edges"
            if type(length) is not int or os.path.getsize(edges) < length:
                raise datafile.Damaged(f"{name}.edges is shorter than recorded")
            os.truncate(edges, length)  # drops what the killed run appended after this snapshot
            archive.append((str(stem), counts, length))
        return archive

    # -- saving -----------------------------------------------------------------------

    def save(self, peers, state: dict) -> None:
        """Write a snapshot of the search between two levels, then make it current."""
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"snap-{state['level']:04d}"
        tmp = self.folder / (name + ".tmp")
        _remove(tmp)
        tmp.mkdir()
        for i, peer in enumerate(peers):
            peer.send("save", str(tmp / f"worker-{i}.bin"))
        replies = [peer.recv() for peer in peers]
        records = []
        if self.records:  # each worker's reply: (falsified counts, edge bytes)
            records = [(f"worker-{i}", *reply) for i, reply in enumerate(replies)]
            for j, (stem, counts, length) in enumerate(self.archive):
                for suffix in RECORD_FILES:
                    link(Path(stem + suffix), tmp / f"archive-{j}{suffix}")
                records.append((f"archive-{j}", counts, length))
        files = [f"worker-{i}.bin" for i in range(len(peers))] + [r[0] + ".records" for r in records]
        saved = {"workers": len(peers), "state": state, "records": [tuple(r) for r in records],
                 "files": {f: _file_digest(tmp / f) for f in files}}
        datafile.write_file(str(tmp / SEARCH), {"identity": self.identity()}, datafile.encode_value(saved))
        final = self.folder / name
        _remove(final)
        os.replace(tmp, final)
        pointer = self.folder / "CURRENT.tmp"
        pointer.write_text(name + "\n")
        with open(pointer) as f:
            os.fsync(f.fileno())
        os.replace(pointer, self.folder / "CURRENT")
        for old in self.folder.iterdir():
            if old.name != name and _SNAPSHOT.fullmatch(old.name.removesuffix(".tmp")):
                _remove(old)


def write_values(path: str, kind: str, value) -> None:
    """Write one value as a data file of ``kind`` (a worker's share, its records), synced."""
    datafile.write_file(path, {"kind": kind}, datafile.encode_value(value))


def read_values(path: str, kind: str):
    """The value of a data file of ``kind`` (:class:`.datafile.Damaged` when it is not one, or is damaged)."""
    header, payload = datafile.read_file(path)
    if header.get("kind") != kind:
        raise datafile.Damaged(f"{os.path.basename(path)} is not a {kind} file")
    return datafile.decode_value(payload)


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_small(path: Path, most: int = 4096) -> str:
    """The start of a small text file, never following a symbolic link."""
    with open(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb") as f:
        return f.read(most).decode("utf-8", "replace")


def _remove(path: Path) -> None:
    """Remove a scratch file or folder of mine; a symbolic link is removed, never followed."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(path, ignore_errors=True)
    else:
        os.unlink(path)


def options_diff(saved: dict | None, wanted: dict) -> str:
    """The options that differ, as ``name: saved there, wanted here``.

    >>> options_diff({"por": True, "x": 1}, {"por": False, "x": 1})
    'por: True there, False here'
    >>> options_diff(None, {"por": True})
    "the snapshot's cannot be read"
    """
    if saved is None:
        return "the snapshot's cannot be read"
    names = sorted(set(saved) | set(wanted))
    return "; ".join(f"{k}: {_short(saved.get(k))} there, {_short(wanted.get(k))} here"
                     for k in names if saved.get(k) != wanted.get(k))


def words_diff(saved: str, wanted: str) -> str:
    """The words of two descriptions that differ, as ``saved there, wanted here``.

    >>> words_diff("acp rfd default por=True", "acp rfd default por=False")
    'por=True there, por=False here'
    """
    there, here = saved.split(), wanted.split()
    theirs, mine = [w for w in there if w not in here], [w for w in here if w not in there]
    if not theirs and not mine:
        return _short(saved, 200)
    return f"{_short(' '.join(theirs), 120) or 'nothing'} there, {_short(' '.join(mine), 120) or 'nothing'} here"


def _short(value, most: int = 60) -> str:
    """``value`` as text for one line of a message: at most ``most`` characters, nothing unprintable."""
    text = "".join(c if c.isprintable() else "?" for c in str(value))
    return text if len(text) <= most else text[:most - 3] + "..."


def link(source: Path, target: Path) -> None:
    """``target`` names ``source``'s file: a hard link (no copy), else a copy where links are not supported."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
