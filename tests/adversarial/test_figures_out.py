"""``acplab figures --out DIR`` touches only what it wrote (model/app/outfolder.py).

Each case is what a user's folder can hold or what an interrupted run leaves:
folders with their own modes, owners and setgid bit, a file system mounted
inside, a symbolic link as ``--out``, the leftovers of a kill.  Generation is
the small fake of tests/test_reliability_figures.py; the installing is real.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from acplab.model.app import figures, outfolder
from acplab.model.app.outfolder import MANIFEST
from cli_harness import contract, run_cli
from test_reliability_figures import fake_generate, tree


def identity(path: Path) -> tuple:
    """What must not change about a folder or file of the user's: inode, mode (with special bits), owner."""
    st = os.lstat(path)
    return st.st_ino, st.st_mode, st.st_uid, st.st_gid


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(figures, "generate", fake_generate())
    out = tmp_path / "figs"
    out.mkdir()
    (out / "mine.txt").write_text("the user's")
    return out


def test_a_private_folder_and_a_setgid_folder_keep_their_mode_owner_and_inode(folder):
    private = folder / "private"
    private.mkdir()
    (private / "diary.txt").write_text("secret")
    os.chmod(private, 0o700)
    shared = folder / "scenarios"  # a folder the figures go into, made by the user: setgid, another group
    shared.mkdir()
    os.chmod(shared, 0o2770)
    if os.geteuid() == 0:
        os.chown(shared, 0, 1234)
        os.chown(folder / "mine.txt", 4321, 4321)
    before = {p: identity(folder / p) for p in (".", "private", "private/diary.txt", "scenarios", "mine.txt")}
    code, _, err, _ = contract("figures", "--out", str(folder))
    assert code == 0, err
    assert {p: identity(folder / p) for p in before} == before
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o700
    new = os.stat(shared / "a.svg")
    assert new.st_gid == os.stat(shared).st_gid  # a file made in a setgid folder takes its group
    manifest = json.loads((folder / MANIFEST).read_text())
    assert "scenarios" not in manifest["folders"] and "states" in manifest["folders"]


def test_a_replaced_file_keeps_the_mode_and_owner_it_was_given(folder):
    assert contract("figures", "--out", str(folder))[0] == 0
    target = folder / "scenarios" / "a.svg"
    target.write_text("stale")
    os.chmod(target, 0o640)
    if os.geteuid() == 0:
        os.chown(target, 4321, 4321)
    before = os.stat(target)
    assert contract("figures", "--out", str(folder))[0] == 0
    after = os.stat(target)
    assert target.read_text() == "figure scenarios/a.svg"
    assert (after.st_mode, after.st_uid, after.st_gid) == (before.st_mode, before.st_uid, before.st_gid)


def _mount_tmpfs(where: Path) -> str:
    """Mount a small tmpfs at ``where``; return its source name, unique, to find it wherever it moves."""
    where.mkdir(exist_ok=True)
    source = f"acplab-test-{os.getpid()}-{where.name}-{os.urandom(4).hex()}"
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", source, str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a file system here (needs root): {done.stderr.strip() or done.returncode}")
    return source


def _unmount(source: str) -> None:
    """Unmount ``source`` wherever it is now (a tool that moves folders can carry a mount along)."""
    with open("/proc/mounts") as f:
        points = [line.split()[1] for line in f if line.split()[0] == source]
    for point in reversed(points):
        subprocess.run(["umount", point.encode().decode("unicode_escape")], check=False)


@pytest.fixture
def mounted(folder):
    where = folder / "data"
    source = _mount_tmpfs(where)
    try:
        (where / "results.csv").write_text("1,2,3")
        yield where
    finally:
        _unmount(source)


def test_a_file_system_mounted_inside_is_not_entered(folder, mounted):
    dev = os.stat(mounted).st_dev
    code, _, err, _ = contract("figures", "--out", str(folder))
    assert code == 0, err
    assert (mounted / "results.csv").read_text() == "1,2,3" and os.stat(mounted).st_dev == dev
    assert sorted(os.listdir(mounted)) == ["results.csv"]
    assert not any(name.startswith("data") for name in json.loads((folder / MANIFEST).read_text())["files"])


def test_a_mount_on_a_generated_files_way_is_refused_and_nothing_changes(tmp_path, folder):
    source = _mount_tmpfs(folder / "scenarios")
    try:
        before = tree(folder)
        code, _, err, _ = contract("figures", "--out", str(folder))
        assert code == 2 and "another file system" in err
        assert tree(folder) == before
    finally:
        _unmount(source)


def test_a_symlinked_out_is_refused_unless_asked(tmp_path, folder):
    link = tmp_path / "link"
    os.symlink(folder, link)
    before = tree(folder)
    code, _, err, _ = contract("figures", "--out", str(link))
    assert code == 2 and "symbolic link" in err and "--follow-symlink" in err
    assert tree(folder) == before and link.is_symlink()
    inode = os.stat(folder).st_ino
    code, _, err, _ = contract("figures", "--out", str(link), "--follow-symlink")
    assert code == 0, err
    assert link.is_symlink() and os.stat(folder).st_ino == inode  # the target is used in place, not rebuilt
    assert (folder / "mine.txt").read_text() == "the user's" and (folder / "scenarios" / "a.svg").is_file()


def test_a_symlinked_folder_inside_is_not_followed(tmp_path, folder):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, folder / "states")
    code, _, err, _ = contract("figures", "--out", str(folder))
    assert code == 2 and "states" in err
    assert os.listdir(elsewhere) == []


def test_the_old_folder_left_by_a_kill_mid_swap_is_restored(tmp_path, monkeypatch):
    """Earlier versions moved the folder aside, then moved the new one in; a kill between left it hidden."""
    monkeypatch.setattr(figures, "generate", fake_generate())
    hidden = tmp_path / ".figs.acplab-old-abc123"
    (hidden / "x").mkdir(parents=True)
    (hidden / "x" / "thesis.tex").write_text("my thesis")
    code, _, err, _ = contract("figures", "--out", str(tmp_path / "figs"))
    assert code == 0, err
    assert (tmp_path / "figs" / "thesis.tex").read_text() == "my thesis"
    assert "restored" in err and not hidden.exists()


def test_an_old_folder_next_to_an_existing_one_is_reported_and_nothing_changes(tmp_path, folder):
    hidden = tmp_path / ".figs.acplab-old-abc123"
    (hidden / "x").mkdir(parents=True)
    (hidden / "x" / "thesis.tex").write_text("my thesis")
    before = tree(folder)
    code, _, err, _ = contract("figures", "--out", str(folder))
    assert code == 2 and str(hidden) in err
    assert tree(folder) == before and (hidden / "x" / "thesis.tex").read_text() == "my thesis"


def test_temporary_leftovers_are_cleaned_at_the_next_start(tmp_path, folder):
    stale = tmp_path / ".figs.acplab-new-zz9"
    (stale / "scenarios").mkdir(parents=True)
    (stale / "scenarios" / "a.svg").write_text("half")
    assert contract("figures", "--out", str(folder))[0] == 0
    torn = folder / "scenarios" / ".a.svg.acplab-tmp-q1"
    torn.write_text("torn")
    code, _, err, _ = contract("figures", "--out", str(folder))
    assert code == 0, err
    assert not stale.exists() and not torn.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figs"]


def test_a_run_killed_between_two_files_leaves_the_users_files_and_a_usable_manifest(folder, monkeypatch):
    before = {k: v for k, v in tree(folder).items()}
    copies = []

    def dies_on_the_second(src, dst):
        copies.append(src)
        if len(copies) == 2:
            raise KeyboardInterrupt
        return shutil.copyfile(src, dst)

    monkeypatch.setattr(outfolder.shutil, "copyfile", dies_on_the_second)
    code, _, err = run_cli("figures", "--out", str(folder))
    assert code == 130 and "Traceback" not in err
    after = tree(folder)
    assert {k: v for k, v in after.items() if k in before} == before
    listed = set(json.loads((folder / MANIFEST).read_text())["files"])
    assert {k for k, v in after.items() if v != "/" and k not in before and k != MANIFEST} <= listed
    assert not [p for p in folder.rglob("*acplab-tmp*")] and not [p for p in folder.parent.iterdir()
                                                                  if p.name.startswith(".")]
    monkeypatch.undo()
    monkeypatch.setattr(figures, "generate", fake_generate())
    code, _, err, _ = contract("figures", "--out", str(folder))
    assert code == 0, err
    assert (folder / "mine.txt").read_text() == "the user's"
