"""The ``--html`` report: self-contained, and stepped through by headless Chromium (tests/js).

The browser tests skip locally without node, tests/js/node_modules or
Chromium, and fail in CI (ACPLAB_REQUIRE_NODE=1, ACPLAB_REQUIRE_BROWSER=1).
"""

from __future__ import annotations

import importlib.util
import json
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("report_screenshot", ROOT / "scripts" / "report_screenshot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "acplab.model.app.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def _failures(result: dict) -> list:
    return [(s["i"], s["step"], s.get("actual"), s.get("detail")) for s in result["steps"] if s["ok"] is not True]


def test_reused_id_report_steps_in_chromium(browser, tmp_path):
    """`check --spec reused-id --out D --html`: forward, back, first, last, by key and by button; no fetches."""
    shot = tmp_path / "shot.png"
    code, result = _script().make(shot, tmp_path)
    assert _failures(result) == [] and result["network"] == [] and result["pageErrors"] == []
    assert code == 0
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", header[16:24]) == (1280, 900)


def test_several_runs_switch_with_brackets(browser, tmp_path):
    """Counterexamples and a witness run: `]` moves on to the next run, whose steps then move on their own."""
    out = tmp_path / "out"
    proc = _cli("check", "--spec", "reused-id", "--witness", "echo_before_response", "--out", str(out), "--html",
                "--json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    runs = len([v for v in data["violations"] if v["files"]]) + 1  # every counterexample, then the witness
    last = f"#run{runs}"
    steps = [
        {"expect": {"selector": ".run", "count": runs}},
        {"expect": {"selector": last, "attr": "data-kind", "equals": "witness"}},
        {"expect": {"selector": last, "visible": False}},
        *[{"press": "]"} for _ in range(runs - 1)],
        {"expect": {"selector": last, "visible": True}},
        {"press": "ArrowRight"},
        {"expect": {"selector": f"{last} [data-step].current", "attr": "data-step", "equals": "1"}},
        {"expect": {"selector": "#run1 [data-step].current", "attr": "data-step", "equals": "0"}},
        {"click": "#runlist button"},
        {"expect": {"selector": "#run1", "visible": True}},
        {"noConsoleErrors": True},
    ]
    code, result = browser(out / "report.html", steps, tmp_path)
    assert _failures(result) == [] and result["network"] == []
    assert code == 0


def test_report_is_one_file_that_fetches_nothing(tmp_path):
    out = tmp_path / "out"
    proc = _cli("check", "--model", "bridge-v1-agent", "--spec", "early_ack", "--out", str(out), "--html", "--json")
    data = json.loads(proc.stdout)
    page = Path(data["report"]).read_text()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"""(src|href)=["'](?!#)""", page), "a src or href that is not a fragment"
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page
    assert page.count('data-step="') == 3  # the initial state and the bridge's two steps
    assert "bridge -&gt; client (v2)  sends result #7 {messageId: m1}" in page


def test_check_report_shows_the_coverage_tables(browser, tmp_path):
    """The coverage object of `check --json` on the page: its warnings, actions and properties."""
    out = tmp_path / "out"
    proc = _cli("check", "--clients", "1", "--prompts", "1", "--out", str(out), "--html", "--json")
    data = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    cov = data["coverage"]
    # one sentence names every vacuous property (nothing is cancelled in this scenario)
    assert "CancelEndsWithCancelled" in cov["vacuous"]
    [vacuous] = [w for w in cov["warnings"] if w.startswith(f"{cov['vacuous'][0]}, ")]
    assert vacuous.endswith(f"these {len(cov['vacuous'])} hold vacuously (nothing they watch happened)")
    steps = [
        {"expect": {"selector": "#coverage .warn", "count": len(cov["warnings"])}},
        {"expect": {"selector": "#coverage", "contains": vacuous}},
        {"expect": {"selector": "#coverage-actions tr", "count": len(cov["actions"]) + 1}},
        {"expect": {"selector": "#coverage-actions", "contains": "client submit"}},
        {"expect": {"selector": "#coverage-properties tr", "count": len(cov["properties"]) + 1}},
        {"expect": {"selector": "#coverage-properties", "contains": "vacuous"}},
        {"noConsoleErrors": True},
    ]
    code, report = browser(data["report"], steps, tmp_path)
    assert _failures(report) == [] and report["network"] == []
    assert code == 0


def test_twophase_and_holding_checks_write_a_report(tmp_path):
    proc = _cli("check", "--model", "twophase", "--rms", "2", "--out", str(tmp_path / "a"), "--html", "--json")
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["verdict"] == "holds"
    page = Path(data["report"]).read_text()
    assert "No counterexample" in page and 'id="properties"' in page


def test_matrix_report_links_each_violated_cell_to_its_run(browser, tmp_path, monkeypatch):
    from acplab.model.app import matrix as mx
    from acplab.model.app.pages import matrix_page, write_page

    from acplab.model.app.matrix_report import SYMBOL

    from acplab.model.app import matrix_faults

    monkeypatch.setattr(mx, "MATRIX_RUNS", (("report-order", {}),))  # one small scenario: the page, not the matrix
    monkeypatch.setattr(matrix_faults, "FAULTS", ())
    result = mx.run_matrix(["v2-draft-naive", "v1"], None, 1, None, None, "serial", html=True)
    cells = [tuple(r["cell"]) for r in result["report_runs"]]
    # goals first (v2-draft-naive's duplicate), then the rules, a by-design cell included (v1's held response)
    assert ("v2-draft-naive", "NoDuplicateMessages") in cells and ("v1", "ResponseNotHeldForWorkEnd") in cells
    page = write_page(tmp_path, matrix_page(result, tmp_path, SYMBOL))
    goals = [c for c in cells if c[1] in result["goals"]]
    steps = [
        {"expect": {"selector": "#matrix a[data-run]", "count": len(goals)}},
        {"expect": {"selector": "#rules a[data-run]", "count": len(cells) - len(goals)}},
        {"expect": {"selector": ".run.active", "attr": "id", "equals": "cell-1"}},
        {"click": f"#rules a[data-run=\"cell-{len(cells)}\"]"},
        {"expect": {"selector": ".run.active", "attr": "id", "equals": f"cell-{len(cells)}"}},
        {"press": "End"},
        {"expect": {"selector": ".run.active .sentence", "contains": "held until the work ended"}},
        {"expect": {"selector": ".run.active .next", "attr": "disabled"}},
        {"noConsoleErrors": True},
    ]
    code, report = browser(page, steps, tmp_path)
    assert _failures(report) == [] and report["network"] == []
    assert code == 0


def test_simulation_report_shows_metrics_coverage_and_the_violating_run(browser, tmp_path):
    out = tmp_path / "sim"
    proc = _cli("simulate", "--spec", "error-after-insertion", "--set", "fail=0.2", "--sessions", "40", "--out", str(out),
                "--html", "--json")
    data = json.loads(proc.stdout)
    assert proc.returncode == 1 and data["verdict"] == "violated"
    steps = [
        {"expect": {"selector": "#metrics", "contains": "response_ms"}},
        {"expect": {"selector": "#windows", "contains": "failure after insertion, before the response"}},
        {"expect": {"selector": "#coverage-actions", "contains": "agent fail"}},
        {"expect": {"selector": "#coverage-properties", "contains": "WorkReportedByState"}},
        {"click": "#violations a[data-run]"},
        {"expect": {"selector": "#run1", "visible": True}},
        {"expect": {"selector": "#run1", "attr": "data-kind", "equals": "simulated run"}},
        {"press": "End"},
        {"expect": {"selector": "#run1 [data-step].current", "contains": " ms"}},
        {"expect": {"selector": "#run1 [data-step].current .diff", "contains": "ResponsesFollowInsertion"}},
        {"expect": {"selector": "#run1 [data-step].current .diff", "contains": "but its message was inserted"}},
        {"noConsoleErrors": True},
    ]
    code, report = browser(data["report"], steps, tmp_path)
    assert _failures(report) == [] and report["network"] == []
    assert code == 0
