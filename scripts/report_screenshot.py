"""Step through an HTML report in headless Chromium and keep a screenshot of it for the figures gallery.

    python scripts/report_screenshot.py [--out figures/report/reused-id.png]

Runs ``acplab check --spec reused-id --out DIR --html`` in a temporary folder,
then ``tests/js/browser_check.mjs`` over ``DIR/report.html`` with the steps in
``tests/js/report_steps.json`` (the same steps ``tests/test_report.py`` takes),
whose last picture is the screenshot.  Needs Node with ``npm ci`` run in
``tests/js``, and Chromium (``apt-get install chromium``, or ``CHROMIUM_PATH``).

A screenshot is not byte-stable (fonts, anti-aliasing and the Chromium build
all show in the pixels), so ``acplab figures`` carries the committed one over
unchanged instead of comparing it; run this script to refresh it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "tests" / "js"
STEPS = JS / "report_steps.json"
DEFAULT_OUT = ROOT / "figures" / "report" / "reused-id.png"


def report(folder: Path) -> Path:
    """``acplab check --spec reused-id --continue --out FOLDER --html`` (the whole search, as the picture shows);
    returns the report's path."""
    cmd = [sys.executable, "-m", "acplab.model.app.cli", "check", "--spec", "reused-id", "--continue", "--out",
           str(folder), "--html", "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 1 or not (folder / "report.html").is_file():  # 1: the mutant is caught
        raise RuntimeError(f"acplab check exited {proc.returncode}: {proc.stderr.strip()}")
    return folder / "report.html"


def step_through(page: Path, screenshot: Path, work: Path) -> tuple[int, dict]:
    """Run the report steps in Chromium; returns browser_check's exit code and JSON report."""
    spec = json.loads(STEPS.read_text())
    for step in spec["steps"]:
        if step.get("screenshot") == "SCREENSHOT":
            step["screenshot"] = str(screenshot.resolve())
    steps = work / "steps.json"
    steps.write_text(json.dumps(spec))
    proc = subprocess.run(["node", "browser_check.mjs", str(page.resolve()), str(steps)], capture_output=True,
                          text=True, cwd=JS, timeout=120)
    try:
        return proc.returncode, json.loads(proc.stdout)
    except ValueError:
        raise RuntimeError(f"browser_check.mjs failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")


def make(screenshot: Path, work: Path) -> tuple[int, dict]:
    """The whole job in ``work``: the report, the steps, the screenshot at ``screenshot``."""
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    return step_through(report(work / "out"), screenshot, work)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the PNG to write (default: %(default)s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="acplab-report-") as tmp:
        code, result = make(args.out, Path(tmp))
    failed = [s for s in result.get("steps", []) if s.get("ok") is False]
    for s in failed:
        print(f"step {s['i']} failed: {json.dumps(s['step'])} (got {s.get('actual')!r})", file=sys.stderr)
    if code != 0:
        print(f"browser check failed: {result.get('error') or f'{len(failed)} step(s)'}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({result['passed']} steps passed in Chromium {result['chromium']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
