"""Fuzz every file format acplab reads by mutating a real file, and check it touches nothing but ``--out``.

The generators of tests/test_fuzz_capture.py and tests/test_fuzz_sweep.py build
inputs from scratch; here a valid file of each format (a capture, a sidecar of
internal events, a spec file, a sweep config) is damaged byte by byte and line
by line (flips, cuts, splices, duplicated and dropped lines, hostile tokens),
so most inputs are near misses that reach deep into the readers.  Whatever
the input, the command keeps the contract (tests/cli_harness.py: one line and
exit 2, or a verdict; never a traceback), the input file is left as it was,
and nothing changes in the working folder outside the output folder.

Fast by default; ``ACPLAB_FUZZ=nightly`` runs 40x the examples.
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import assume, given, strategies as st

from cli_harness import contract, fuzz_settings

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = (ROOT / "tests" / "fixtures" / "v2" / "bad_duplicate_message_id.jsonl").read_bytes()
SIDECAR = (b'{"after": 4, "event": "insert", "session": "s1", "messageId": "m1", "conn": "c1", "request": 2, '
           b'"retained": true}\n{"after": 5, "event": "work_start", "session": "s1"}\n'
           b'{"after": 6, "event": "work_end", "session": "s1"}\n')
SPEC_FILE = (b'name = "fuzzed"\nbase = "rfd"\ndescription = "a <b>variant</b> for the fuzzer"\n'
             b'no_difference = "none"\n[switches]\necho = "none"\nreplay_reset = false\n')
SWEEP = b'specs = ["rfd"]\nsessions = 1\nseed = 1\n[base]\nclients = 1\nprompts = 1\n[grid]\ndrop = [0.0, 0.1]\n'

TOKENS = [b"{", b"}", b"[", b"]", b'"', b",", b":", b"=", b"\n", b"\r", b"\x00", b"\xff", b"\xef\xbb\xbf", b"null",
          b"true", b"-1", b"1e400", b"NaN", b"9" * 40, b'"\\ud800"', b"\x1b[31m", b"../..", b"/etc/passwd", b"[base]",
          b"[grid]", b'"after": 99999', b'"seq": 0', b"\xc3\x28", "\u202e".encode()]


@st.composite
def damaged(draw, seed: bytes) -> bytes:
    """``seed`` with a few random edits: what a crash, a bad editor or a hostile author leaves."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "truncate", "dup_line", "drop_line", "splice"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "cut":
            del data[at:at + draw(st.integers(1, 30))]
        elif kind == "insert":
            data[at:at] = draw(st.sampled_from(TOKENS))
        elif kind == "truncate":
            del data[at:]
        elif kind in ("dup_line", "drop_line"):
            lines = bytes(data).split(b"\n")
            k = draw(st.integers(0, len(lines) - 1))
            lines[k:k + 1] = [lines[k], lines[k]] if kind == "dup_line" else []
            data = bytearray(b"\n".join(lines))
        else:
            other = draw(st.sampled_from([CAPTURE, SIDECAR, SPEC_FILE, SWEEP]))
            data[at:at] = other[: draw(st.integers(1, 80))]
    return bytes(data)


def snapshot(folder: Path, skip: Path) -> dict:
    """Every entry under ``folder`` but ``skip``: its bytes (files), target (links) or mode (folders)."""
    out = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if Path(root, d) != skip]
        for name in dirs + files:
            p = Path(root, name)
            st_ = os.lstat(p)
            out[str(p.relative_to(folder))] = (st_.st_mode, os.readlink(p) if p.is_symlink() else
                                               p.read_bytes() if p.is_file() else None)
    return out


@pytest.fixture
def work(tmp_path, monkeypatch):
    """The working folder: default output folders (acplab-out/) would land here, and are then a change."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "capture.jsonl").write_bytes(CAPTURE)
    return tmp_path


def run_checked(work: Path, name: str, data: bytes, args) -> None:
    """Write ``data`` as ``name`` in a fresh folder, run ``acplab ARGS`` (``{}``: the file, ``OUT``: --out)."""
    case = Path(tempfile.mkdtemp(dir=work))
    path, out = case / name, case / "out"
    path.write_bytes(data)
    before = snapshot(work, out)
    argv = [str(path) if a == "{}" else str(out) if a == "OUT" else a for a in args]
    code, _, err, obj = contract(*argv)
    assert code in (0, 1, 2, 3)
    if code != 2:
        assert obj is None or obj.get("verdict") in ("holds", "violated", "incomplete"), obj
    assert snapshot(work, out) == before, f"acplab {' '.join(argv)} changed something outside --out"


@given(data=damaged(CAPTURE))
@fuzz_settings(25)
def test_damaged_captures(work, data):
    run_checked(work, "c.jsonl", data, ["trace", "check", "{}", "--out", "OUT", "--json"])


@given(data=damaged(SIDECAR))
@fuzz_settings(25)
def test_damaged_sidecars(work, data):
    run_checked(work, "events.jsonl", data,
                ["trace", "check", str(work / "capture.jsonl"), "--internal", "{}", "--out", "OUT", "--json"])


@given(data=damaged(SPEC_FILE))
@fuzz_settings(20)
def test_damaged_spec_files(work, data):
    run_checked(work, "v.toml", data, ["check", "--spec-file", "{}", "--max-states", "150", "--workers", "1",
                                       "--out", "OUT", "--json"])


def _cheap(data: bytes) -> bool:
    """A config that would run is kept small (every number at most 3), so an accepted one runs in a moment."""
    try:
        cfg = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return True
    numbers = []

    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            numbers.append(v)

    walk(cfg)
    return all(abs(n) <= 3 for n in numbers if n == n)


@given(data=damaged(SWEEP))
@fuzz_settings(20)
def test_damaged_sweep_configs(work, data):
    assume(_cheap(data))
    run_checked(work, "s.toml", data, ["sweep", "{}", "--out", "OUT", "--workers", "1", "-q", "--fresh"])
