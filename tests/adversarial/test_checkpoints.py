"""A checkpoint folder is input: hostile or damaged, it gets one line and exit 2, never code run, never a traceback.

What a resume may meet (:mod:`acplab.model.engine.checkpoint`): a pickle planted where a snapshot is looked
for, ``CURRENT`` pointing out of the folder, a folder that is not acplab's, a second run on the same folder,
a snapshot of another acplab or of other model code, and damage: a truncated worker file, a missing key, a
bad checksum, a file swapped for a symbolic link, a type name the data format does not register.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from acplab.model.engine import checkpoint, datafile
from acplab.model.engine.parallel import explore
from acplab.model.engine.twophase import TwoPhase
from acplab.model.errors import InputError

CLI = [sys.executable, "-m", "acplab.model.app.cli", "check", "--model", "twophase", "--rms", "3", "-q"]


def check(folder: Path, *more: str) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + ["--checkpoint", str(folder), "--checkpoint-every", "0", *more],
                          capture_output=True, text=True, timeout=300)


def one_line_refusal(done: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 2, one line on stderr naming ``words``, no traceback."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.fixture
def snapshot(tmp_path) -> Path:
    """A checkpoint folder holding a snapshot of a run stopped at depth 4 (the CLI, as a user makes one)."""
    folder = tmp_path / "ck"
    done = check(folder, "--max-depth", "4")
    assert done.returncode == 3, done.stderr  # incomplete: stopped at its depth limit
    return folder


def current(folder: Path) -> Path:
    return folder / (folder / "CURRENT").read_text().strip()


class _Planted:
    """Unpickling this writes a file: a pickle planted in a checkpoint folder would run code as the resumer."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self):
        return (Path.write_text, (self.target, "code ran"))


def forge(path: Path, change) -> None:
    """Rewrite a data file with ``change`` applied to its value and a checksum that fits again (a forgery)."""
    header, payload = datafile.read_file(str(path))
    value = change(datafile.decode_value(payload))
    path.unlink()
    datafile.write_file(str(path), header, datafile.encode_value(value))


# -- a folder that is not the user's checkpoint ---------------------------------------------


def test_a_planted_pickle_is_never_unpickled(tmp_path):
    """A shared folder pre-created with CURRENT and a pickle (as /tmp/ck could be): refused, nothing run."""
    folder, ran = tmp_path / "ck", tmp_path / "ran"
    (folder / "snap-0001").mkdir(parents=True)
    (folder / "CURRENT").write_text("snap-0001\n")
    (folder / "snap-0001" / "search.pkl").write_bytes(pickle.dumps(_Planted(ran)))
    one_line_refusal(check(folder), "not an acplab checkpoint")
    assert not ran.exists()
    (folder / checkpoint.MARK).write_text(checkpoint.MARK_TEXT)  # even with acplab's mark: no pickle is read
    one_line_refusal(check(folder), "damaged")
    assert not ran.exists()


def test_a_folder_marked_by_an_earlier_acplab_is_refused_and_left_alone(tmp_path):
    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / checkpoint.MARK).touch()  # the empty mark of the pickled format
    (folder / "CURRENT").write_text("snap-0003\n")
    before = sorted(p.name for p in folder.iterdir())
    one_line_refusal(check(folder), "mark", "earlier acplab")
    assert sorted(p.name for p in folder.iterdir()) == before


@pytest.mark.parametrize("pointer", ["../elsewhere", "/tmp", "snap-0001/../../elsewhere", "snap-x"])
def test_current_pointing_out_of_the_folder_is_refused(snapshot, tmp_path, pointer):
    elsewhere = tmp_path / "elsewhere"
    current(snapshot).rename(elsewhere)
    (snapshot / "CURRENT").write_text(pointer + "\n")
    one_line_refusal(check(snapshot), "CURRENT names", "never followed")


def test_a_snapshot_folder_that_is_a_link_out_of_the_folder_is_refused(snapshot, tmp_path):
    snap = current(snapshot)
    snap.rename(tmp_path / "elsewhere")
    snap.symlink_to(tmp_path / "elsewhere")
    one_line_refusal(check(snapshot), "damaged", "not a folder of the checkpoint folder")


def test_a_worker_file_that_is_a_link_is_not_followed(snapshot, tmp_path):
    worker = current(snapshot) / "worker-0.bin"
    outside = tmp_path / "outside.bin"
    worker.rename(outside)
    worker.symlink_to(outside)
    one_line_refusal(check(snapshot), "cannot be read", "worker-0.bin")


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder of another user's needs root")
def test_a_folder_of_another_user_is_refused(tmp_path):
    folder = tmp_path / "ck"
    folder.mkdir()
    os.chown(folder, 65534, 65534)
    one_line_refusal(check(folder), "belongs to another user")
    assert list(folder.iterdir()) == []


# -- a second run --------------------------------------------------------------------------


def test_a_second_run_on_the_same_folder_is_refused_naming_the_first(tmp_path):
    """The first run holds the lock; the second is refused with the first's PID, and touches nothing of its."""
    folder = tmp_path / "ck"
    first = checkpoint.Checkpoint(str(folder), "a", 1)
    first.claim()
    (folder / "spill").mkdir()
    (folder / "spill" / "theirs").write_text("the first run's scratch")
    second = checkpoint.Checkpoint(str(folder), "a", 1, records=True)
    with pytest.raises(InputError, match=f"another acplab run \\(PID {os.getpid()}\\) is using this folder"):
        second.claim()
    second.tidy()  # what explore does on the way out: nothing, as the folder is not its
    assert (folder / "spill" / "theirs").exists()
    first.tidy()
    second.claim()  # free again
    second.tidy()


def test_the_cli_refuses_a_folder_another_process_holds(snapshot):
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               "fd = os.open(sys.argv[1], os.O_RDWR)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                               "os.ftruncate(fd, 0); os.write(fd, b'%d\\n' % os.getpid())\n"
                               "print('locked', flush=True); time.sleep(60)", str(snapshot / checkpoint.LOCK)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        one_line_refusal(check(snapshot), f"PID {holder.pid}")
    finally:
        holder.kill()
        holder.wait()
    assert check(snapshot).returncode == 0  # resumes once the holder is gone


def test_the_lock_is_an_flock_held_while_the_run_lasts(tmp_path):
    folder = tmp_path / "ck"
    held = []

    class Probe(TwoPhase):
        def successors(self, s):
            if not held:
                fd = os.open(folder / checkpoint.LOCK, os.O_RDWR)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    held.append(False)
                except BlockingIOError:
                    held.append(os.read(fd, 20).decode().strip())
                os.close(fd)
            return super().successors(s)

    explore(Probe(3), checkpoint=str(folder), checkpoint_every=0, identity="probe")
    assert held == [str(os.getpid())]


# -- another acplab, other model code ------------------------------------------------------


def _tp(folder, **limits):
    from acplab.model.engine import Limits

    return explore(TwoPhase(3), Limits(**limits), checkpoint=str(folder), checkpoint_every=0, identity="tp3")


def test_a_checkpoint_made_before_an_edit_of_the_model_code_is_refused(tmp_path, monkeypatch):
    """The identity holds a digest of acplab.model's source files: change one (here its digest's input, the
    package folder, is a copy with one line added to acp/agent.py) and the resume is refused, in one line."""
    import acplab.model

    folder = tmp_path / "ck"
    assert _tp(folder, max_depth=4).verdict == "incomplete"
    import shutil

    copy = tmp_path / "model"
    shutil.copytree(Path(acplab.model.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "acp" / "agent.py", "a") as f:
        f.write("\n# one line a contributor added\n")
    monkeypatch.setattr(checkpoint, "_MODEL_PACKAGE", copy)
    checkpoint.model_digest.cache_clear()
    try:
        with pytest.raises(InputError, match="made with other model code .*changed since") as refused:
            _tp(folder)
        assert "\n" not in str(refused.value)
    finally:
        monkeypatch.undo()
        checkpoint.model_digest.cache_clear()
    assert "resumed" in _tp(folder).note  # the same code again: resumed


def test_a_checkpoint_of_another_acplab_version_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "ck"
    monkeypatch.setattr(checkpoint, "acplab_version", lambda: "0.0.1")
    _tp(folder, max_depth=4)
    monkeypatch.undo()
    with pytest.raises(InputError, match=f"made by acplab 0.0.1; this is acplab {checkpoint.acplab_version()}"):
        _tp(folder)


# -- damage ----------------------------------------------------------------------------------


def test_a_truncated_worker_file_is_one_line(snapshot):
    worker = current(snapshot) / "worker-0.bin"
    worker.write_bytes(worker.read_bytes()[:-7])
    one_line_refusal(check(snapshot), "damaged", "worker-0.bin")


def test_a_bad_checksum_is_one_line(snapshot):
    search = current(snapshot) / checkpoint.SEARCH
    data = bytearray(search.read_bytes())
    data[-3] ^= 0x40
    search.write_bytes(bytes(data))
    one_line_refusal(check(snapshot), "damaged", "fails its checksum")


def test_an_empty_search_file_is_one_line(snapshot):
    (current(snapshot) / checkpoint.SEARCH).write_bytes(b"")
    one_line_refusal(check(snapshot), "damaged", "not an acplab data file")


def test_a_missing_file_is_one_line(snapshot):
    (current(snapshot) / "worker-0.bin").unlink()
    one_line_refusal(check(snapshot), "cannot")


@pytest.mark.parametrize("key", ["state", "files", "workers"])
def test_a_forged_snapshot_missing_a_key_is_one_line(snapshot, key):
    forge(current(snapshot) / checkpoint.SEARCH, lambda saved: {k: v for k, v in saved.items() if k != key})
    one_line_refusal(check(snapshot), "damaged", "lacks what a snapshot records")


def test_a_forged_snapshot_missing_a_key_of_the_search_is_one_line(snapshot):
    def drop_level(saved):
        saved["state"].pop("level")
        return saved

    forge(current(snapshot) / checkpoint.SEARCH, drop_level)
    one_line_refusal(check(snapshot), "damaged", "'level'")


def test_a_forged_worker_file_with_a_good_checksum_is_one_line(snapshot):
    """The search file records each worker file's digest: a worker file forged with a fitting checksum of
    its own is still refused before a worker reads it."""
    forge(current(snapshot) / "worker-0.bin", lambda data: {**data, "seen": b"\x01"})
    one_line_refusal(check(snapshot), "damaged", "worker-0.bin is not the file the snapshot recorded")


def test_a_type_name_the_format_does_not_register_is_refused(tmp_path):
    """A data file naming a class outside the registry is refused: the decoder builds registered values only."""
    # a named tuple of an unregistered class, written by hand: tag CLASS, "os:_wrap_close", tag NAMED 0, 0 fields
    name = b"os:_wrap_close"
    body = bytes([datafile._CLASS, len(name)]) + name + bytes([datafile._NAMED, 0, 0])
    data = len([1]).to_bytes(4, "little") + len(body).to_bytes(4, "little") + body
    with pytest.raises(datafile.Damaged, match="not a registered value type"):
        datafile.decode_value(data)


def test_the_data_format_round_trips_the_values_a_search_saves():
    from array import array

    from acplab.model.acp.state import Agent, Entry

    shared = Entry("m1", "user", ("hi",), True, "prompt")
    value = {"level": 3, "links": [array("q", [1, -2, 1 << 60])], "skip": {1, 2}, "f": 1.5, "n": None,
             "t": (True, False), "fs": frozenset({("a", 1)}), "b": b"\x00\xff", 7: [Agent(history=(shared, shared))],
             "neg": -(1 << 70)}
    back = datafile.decode_value(datafile.encode_value(value))
    assert back == value and back[7][0].history[0] is back[7][0].history[1]  # shared parts stay shared


def test_random_damage_never_gives_a_traceback(tmp_path):
    """Every single-byte change to a valid data file is refused as damage (the checksum), and every cut too."""
    path = tmp_path / "v.dat"
    datafile.write_file(str(path), {"kind": "worker"}, datafile.encode_value({"a": (1, "x"), "b": [2.5]}))
    data = path.read_bytes()
    for i in range(len(data)):
        for flip in (0x01, 0x80):
            damaged = bytearray(data)
            damaged[i] ^= flip
            path.write_bytes(bytes(damaged))
            with pytest.raises(datafile.Damaged):
                checkpoint.read_values(str(path), "worker")
        path.write_bytes(data[:i])
        with pytest.raises(datafile.Damaged):
            checkpoint.read_values(str(path), "worker")


def test_forged_payloads_never_give_a_traceback():
    """Every cut and every byte change of a payload (past the checksum: a forgery) decodes or is Damaged."""
    payload = datafile.encode_value({"a": (1, "x", frozenset({2})), "b": [2.5, None, b"z"], "c": {3}})
    for i in range(len(payload)):
        for forged in (payload[:i], payload[:i] + bytes([payload[i] ^ 0x55]) + payload[i + 1:]):
            try:
                datafile.decode_value(forged)
            except datafile.Damaged:
                pass
