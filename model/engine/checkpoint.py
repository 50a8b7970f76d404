"""Checkpoints of a level-synchronous search: a killed run resumes between two levels.

A snapshot is a folder ``snap-LEVEL`` inside the checkpoint folder: the
coordinator's decisions and parent links (``search.pkl``) and one file per
worker (its fingerprints and its share of the level about to be expanded).
It is written under a temporary name, synced, renamed, and only then named
in ``CURRENT`` (replaced atomically), so a kill at any moment leaves the
previous snapshot whole.  Resuming takes the snapshot named in ``CURRENT``
if it was made for the same search (``identity``, and the engine's
``options``: the properties, the reduction, the violation policy); the
number of workers may differ.

A search with ``eventually`` properties also saves its workers' records
(:mod:`.eventual_levels`): per worker ``worker-I.records`` (pickled) and
``worker-I.edges``, a hard link to the worker's edge spill file, which is
only ever appended to, so the link's first ``length`` bytes (named in
``search.pkl``) stay the snapshot's whatever the run appends later.
Resuming links every saved record into ``resumed/`` (the archive: read by
the liveness pass after the run, never re-partitioned, so any number of
workers may resume) and truncates each edge file to its length.  A later
snapshot links the archive in again as ``archive-J.*``.  The workers'
spill files live in ``spill/``, so the links stay on one file system.

The folder is the search's: one that holds anything but a checkpoint
(no ``CURRENT``, no ``.acplab-checkpoint`` mark) and is not empty is
refused, so nothing the user had is touched.

Fingerprints are the model's ``hash`` values, and Python salts the hash
of every string per process unless ``PYTHONHASHSEED`` is fixed (and before
3.12 hashes ``None`` by its address): a snapshot records a probe hash, and
resuming under other hashes is refused (its fingerprints would match
nothing, and every state seen before would be counted again).  ``acplab
check --checkpoint`` makes them steady for this reason
(:mod:`acplab.model.app.steady_hashes`).

Not covered: the work of the level that was being expanded when the run
was killed is done again, and a snapshot is only as durable as the file
system's ``fsync``.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
from pathlib import Path

from acplab.model.errors import InputError


#: hashed into every snapshot: equal only under the same string-hash salt (``PYTHONHASHSEED``) and, before
#: Python 3.12, with ``None`` at the same address (its hash was its address)
HASH_PROBE = ("acplab-checkpoint", "hash-probe", None)
#: the file that marks a folder as a checkpoint folder (written when a search first claims it)
MARK = ".acplab-checkpoint"
#: the suffixes of one worker's saved ``eventually`` records
RECORD_FILES = (".records", ".edges")
_SNAPSHOT = re.compile(r"snap-\d{4,}")


class Checkpoint:
    """Save and load snapshots of a search in ``folder``.

    ``records``: the workers also save ``eventually`` records (module docstring);
    after :meth:`load`, ``archive`` lists the saved ones as ``(path stem, falsified
    counts, edge bytes)``.
    """

    def __init__(self, folder: str, identity: str, workers: int, options: dict | None = None,
                 records: bool = False) -> None:
        self.folder = Path(folder)
        self.identity = identity
        self.workers = workers
        self.options = dict(options or {})
        self.records = records
        self.archive: list[tuple[str, list[int], int]] = []
        self.spill = self.folder / "spill"
        self.resumed = self.folder / "resumed"

    def claim(self) -> None:
        """Make the folder this search's (refusing one that holds anything else), with an empty ``spill/``."""
        folder = self.folder
        try:
            if folder.exists() and not folder.is_dir():
                raise InputError(f"--checkpoint {folder}: exists and is not a folder")
            if folder.is_dir() and not (folder / MARK).exists() and not (folder / "CURRENT").exists() \
                    and any(folder.iterdir()):
                raise InputError(f"--checkpoint {folder}: the folder holds files that are not an acplab checkpoint; "
                                 "name a new or empty folder (nothing in it was touched)")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / MARK).touch()
            for scratch in (self.spill, self.resumed):  # what a killed run left: its snapshots hold their own links
                shutil.rmtree(scratch, ignore_errors=True)
            if self.records:
                self.spill.mkdir()
        except OSError as err:
            raise InputError(f"--checkpoint {folder}: {err.strerror or err}") from None

    def tidy(self) -> None:
        """Remove the scratch folders (the snapshots keep what they need)."""
        for scratch in (self.spill, self.resumed):
            shutil.rmtree(scratch, ignore_errors=True)

    def load(self, peers, state: dict) -> bool:
        """Claim the folder; fill ``state`` and the workers from the current snapshot; False when there is none."""
        self.claim()
        current = self.folder / "CURRENT"
        if not current.exists():
            return False
        snap = self.folder / current.read_text().strip()
        try:
            with open(snap / "search.pkl", "rb") as f:
                saved = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError) as err:
            raise InputError(f"{self.folder}: its current snapshot {snap.name} cannot be read ({err}); "
                             "use another folder or remove it") from None
        if saved["identity"] != self.identity:
            raise InputError(f"{self.folder} holds a checkpoint of another search ({saved['identity']}); "
                             "use another folder or remove it")
        if saved.get("hash_probe") != hash(HASH_PROBE):
            raise InputError(f"{self.folder} holds a checkpoint made under another string-hash seed (or, before "
                             "Python 3.12, another address of None), so its fingerprints match nothing here; resume "
                             "with the PYTHONHASHSEED it was made with (acplab check --checkpoint uses 0, and runs "
                             "without address randomization)")
        if saved.get("options") != self.options:
            raise InputError(f"{self.folder} holds a checkpoint of this model made with other search options "
                             f"({options_diff(saved.get('options'), self.options)}); use another folder or remove it")
        files = [str(snap / f"worker-{i}.bin") for i in range(saved["workers"])]
        for peer in peers:
            peer.send("load", files)
        for peer in peers:
            peer.recv()
        if self.records:
            self.archive = self._link_records(snap, saved["records"])
        state.update(saved["state"])
        return True

    def _link_records(self, snap: Path, saved: list) -> list[tuple[str, list[int], int]]:
        """Link the snapshot's ``eventually`` records into ``resumed/``, each edge file cut to its saved length."""
        self.resumed.mkdir()
        archive = []
        for j, (name, counts, length) in enumerate(saved):
            stem = self.resumed / f"archive-{j}"
            for suffix in RECORD_FILES:
                link(snap / (name + suffix), Path(str(stem) + suffix))
            edges = str(stem) + ".edges"
            if os.path.getsize(edges) < length:
                raise InputError(f"{self.folder}: snapshot {snap.name} is damaged ({name}.edges is shorter than "
                                 "recorded); use another folder or remove it")
            os.truncate(edges, length)  # drops what the killed run appended after this snapshot
            archive.append((str(stem), counts, length))
        return archive

    def save(self, peers, state: dict) -> None:
        """Write a snapshot of the search between two levels, then make it current."""
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"snap-{state['level']:04d}"
        tmp = self.folder / (name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
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
        with open(tmp / "search.pkl", "wb") as f:
            pickle.dump({"identity": self.identity, "workers": len(peers), "state": state,
                         "hash_probe": hash(HASH_PROBE), "options": self.options, "records": records},
                        f, pickle.HIGHEST_PROTOCOL)
            f.flush()
            os.fsync(f.fileno())
        final = self.folder / name
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        pointer = self.folder / "CURRENT.tmp"
        pointer.write_text(name + "\n")
        with open(pointer) as f:
            os.fsync(f.fileno())
        os.replace(pointer, self.folder / "CURRENT")
        for old in self.folder.iterdir():
            if old.name != name and _SNAPSHOT.fullmatch(old.name.removesuffix(".tmp")):
                shutil.rmtree(old, ignore_errors=True)


def options_diff(saved: dict | None, wanted: dict) -> str:
    """The options that differ, as ``name: saved there, wanted here``.

    >>> options_diff({"por": True, "x": 1}, {"por": False, "x": 1})
    'por: True there, False here'
    >>> options_diff(None, {"por": True})
    'the snapshot records none: made by an earlier acplab'
    """
    if saved is None:
        return "the snapshot records none: made by an earlier acplab"
    names = sorted(set(saved) | set(wanted))
    return "; ".join(f"{k}: {_short(saved.get(k))} there, {_short(wanted.get(k))} here"
                     for k in names if saved.get(k) != wanted.get(k))


def _short(value, most: int = 60) -> str:
    text = str(value)
    return text if len(text) <= most else text[:most - 3] + "..."


def link(source: Path, target: Path) -> None:
    """``target`` names ``source``'s file: a hard link (no copy), else a copy where links are not supported."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
