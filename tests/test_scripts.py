"""The scripts in scripts/: they run from their own environment and write nothing into tests/ by default."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_record_sdk_runs_outside_acplab_and_defaults_outside_tests(tmp_path):
    script = ROOT / "scripts" / "record_sdk.py"
    # a Python without acplab's packages on its path (-I: isolated, no site-packages of the venv's user)
    helped = subprocess.run([sys.executable, "-I", str(script), "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert helped.returncode == 0 and "acplab-out/sdk-" in helped.stdout
    text = script.read_text()
    assert 'default=DEFAULT_OUT' in text and 'DEFAULT_OUT = Path("acplab-out")' in text
    assert "import acplab" not in text and "acplab.model" not in text  # the recorder is run as a command
    proc = subprocess.run([sys.executable, "-I", str(script), "--out-dir", str(tmp_path / "o")], capture_output=True,
                          text=True, cwd=tmp_path)
    if proc.returncode != 0:  # this Python has no SDK: one line saying how to get it
        assert proc.stderr.count("\n") == 1 and "pip install agent-client-protocol" in proc.stderr
    assert not (ROOT / "tests" / "fixtures" / "o").exists()
