"""``acplab check --workers 2`` leaves no worker behind, whatever ends it, and never holds the caller's output.

Each test starts a check long enough to still be running (two clients, two prompts, one cut: tens of
seconds), waits for its two worker processes, ends the coordinator alone (never its process group, which
would end the workers too and prove nothing) and looks for the workers 2 s later.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

CHECK = [sys.executable, "-m", "acplab.model.app.cli", "check", "--workers", "2", "--clients", "2", "--prompts", "2",
         "--disconnects", "1", "-q"]


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie nobody reaped has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _workers_of(proc: subprocess.Popen, count: int = 2, within: float = 120.0) -> list[int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = [c for c in _children(proc.pid) if _alive(c)]
        if len(found) >= count:
            time.sleep(0.5)  # let them start serving
            return found
        assert proc.poll() is None, "the check ended before its workers started"
        time.sleep(0.05)
    raise AssertionError(f"no {count} workers after {within:.0f} s")


def _left_after(pids: list[int], seconds: float = 2.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(map(_alive, pids)):
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def _end(pids: list[int]) -> None:
    """Clean up after a failure: the workers this test started, by pid."""
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_no_worker_outlives_its_check(sig):
    proc = subprocess.Popen(CHECK, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers = []
    try:
        workers = _workers_of(proc)
        os.kill(proc.pid, sig)
        proc.wait(timeout=10)
        assert _left_after(workers) == [], f"workers still running 2 s after {sig.name}"
    finally:
        _end(workers + [proc.pid])


def test_a_pipe_reading_the_check_ends_after_sigterm():
    """``acplab check | cat``: the workers do not hold the pipe, so ``cat`` sees its end."""
    proc = subprocess.Popen(CHECK, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    cat = subprocess.Popen(["cat"], stdin=proc.stdout, stdout=subprocess.DEVNULL)
    proc.stdout.close()
    workers = []
    try:
        workers = _workers_of(proc)
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
        assert cat.wait(timeout=5) == 0
        assert _left_after(workers) == []
    finally:
        _end(workers + [proc.pid, cat.pid])
