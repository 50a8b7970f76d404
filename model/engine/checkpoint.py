"""Checkpoints of a level-synchronous search: a killed run resumes between two levels.

A snapshot is a folder ``snap-LEVEL`` inside the checkpoint folder: the
coordinator's decisions and parent links (``search.pkl``) and one file per
worker (its fingerprints and its share of the level about to be expanded).
It is written under a temporary name, synced, renamed, and only then named
in ``CURRENT`` (replaced atomically), so a kill at any moment leaves the
previous snapshot whole.  Resuming takes the snapshot named in ``CURRENT``
if it was made for the same search (``identity``); the number of workers
may differ.

Fingerprints are the model's ``hash`` values, and Python salts the hash
of every string per process unless ``PYTHONHASHSEED`` is fixed: a snapshot
records a probe hash, and resuming under another salt is refused (its
fingerprints would match nothing, and every state seen before would be
counted again).  ``acplab check --checkpoint`` fixes the seed for this
reason.

Not covered: the work of the level that was being expanded when the run
was killed is done again, and a snapshot is only as durable as the file
system's ``fsync``.
"""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

from acplab.model.errors import InputError


#: hashed into every snapshot: equal only under the same string-hash salt (``PYTHONHASHSEED``)
HASH_PROBE = ("acplab-checkpoint", "hash-probe")


class Checkpoint:
    """Save and load snapshots of a search in ``folder``."""

    def __init__(self, folder: str, identity: str, workers: int) -> None:
        self.folder = Path(folder)
        self.identity = identity
        self.workers = workers

    def load(self, peers, state: dict) -> bool:
        """Fill ``state`` and the workers from the current snapshot; False when there is none."""
        current = self.folder / "CURRENT"
        if not current.exists():
            return False
        snap = self.folder / current.read_text().strip()
        with open(snap / "search.pkl", "rb") as f:
            saved = pickle.load(f)
        if saved["identity"] != self.identity:
            raise InputError(f"{self.folder} holds a checkpoint of another search ({saved['identity']}); "
                             "use another folder or remove it")
        if saved.get("hash_probe") != hash(HASH_PROBE):
            raise InputError(f"{self.folder} holds a checkpoint made under another string-hash seed, so its "
                             "fingerprints match nothing here; resume with the PYTHONHASHSEED it was made with "
                             "(acplab check --checkpoint uses 0)")
        files = [str(snap / f"worker-{i}.bin") for i in range(saved["workers"])]
        for peer in peers:
            peer.send("load", files)
        for peer in peers:
            peer.recv()
        state.update(saved["state"])
        return True

    def save(self, peers, state: dict) -> None:
        """Write a snapshot of the search between two levels, then make it current."""
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"snap-{state['level']:04d}"
        tmp = self.folder / (name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for i, peer in enumerate(peers):
            peer.send("save", str(tmp / f"worker-{i}.bin"))
        for peer in peers:
            peer.recv()
        with open(tmp / "search.pkl", "wb") as f:
            pickle.dump({"identity": self.identity, "workers": len(peers), "state": state,
                         "hash_probe": hash(HASH_PROBE)}, f, pickle.HIGHEST_PROTOCOL)
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
        for old in self.folder.glob("snap-*"):
            if old.name != name:
                shutil.rmtree(old, ignore_errors=True)
