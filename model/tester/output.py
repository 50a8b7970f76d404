"""What ``acplab test`` prints and writes: one line per finding, a summary, JUnit XML (one test case per schedule)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from acplab.model.render.html import page

from .campaign import Report, finding_line
from .judge import rule_sentences


def summary_lines(report: Report) -> list[str]:
    """The text report: the verdict line, each finding (rule sentence, minimal schedule, files), coverage."""
    r = report
    lines = []
    if r.not_driven is not None:
        lines.append(f"not driven: {r.not_driven}")
    head = {"holds": "holds", "violated": "violated", "not-driven": "not driven"}[r.verdict]
    rate = r.round_trips / r.seconds if r.seconds else 0.0
    lines.append(f"{head}: {r.runs} run(s) of {len(r.cases)} schedule(s), {len(r.findings)} violation(s), "
                 f"{sum(r.warnings.values())} warning(s), {r.seconds:.1f} s of {r.budget:g} s budget "
                 f"({r.round_trips:,} round trips, {rate:.0f}/s; seed {r.seed})"
                 + (" - interrupted" if r.interrupted else ""))
    for f in r.findings:
        lines.append("  " + finding_line(f))
        for rule, text in rule_sentences(f.rules).items():
            lines.append(f"    {rule}: {text}")
        lines.append(f"    {f.explanation}")
        for kind, path in f.files.items():
            lines.append(f"    {kind}: {path}")
    lines.append("  client actions: " + (", ".join(f"{k} {v}" for k, v in sorted(r.actions.items())) or "none"))
    lines.append("  windows opened: " + (", ".join(f"{k} {v}" for k, v in sorted(r.opened.items())) or "none")
                 + ("; never came: " + ", ".join(f"{k} {v}" for k, v in sorted(r.missed.items())) if r.missed else ""))
    if r.warnings:
        lines.append("  warnings: " + ", ".join(f"{k} {v}" for k, v in sorted(r.warnings.items())))
    for note, n in sorted(r.notes.items()):
        lines.append(f"  note ({n} run(s)): {note}")
    lines.append(f"  output: {r.out_dir}")
    return lines


def write_junit(report: Report, path) -> None:
    """JUnit XML: one ``testsuite``, one ``testcase`` per schedule, a ``failure`` per failing one."""
    failures = sum(1 for c in report.cases if c.failed)
    suite = ET.Element("testsuite", name="acplab test", tests=str(len(report.cases)), failures=str(failures),
                       errors="1" if report.not_driven else "0", time=f"{report.seconds:.3f}")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="command", value=json.dumps(report.command))
    ET.SubElement(props, "property", name="seed", value=str(report.seed))
    minimal = {f.schedule.name: f for f in report.findings}
    for c in report.cases:
        case = ET.SubElement(suite, "testcase", classname="acplab.test", name=c.name, time=f"{c.seconds:.3f}")
        if c.failed:
            fail = ET.SubElement(case, "failure", message=f"failed {c.failed}/{c.runs} run(s): {c.first_failure}",
                                 type=", ".join(sorted(c.properties)))
            f = minimal.get(c.name)
            fail.text = finding_line(f) if f is not None else c.first_failure
    if report.not_driven:
        case = ET.SubElement(suite, "testcase", classname="acplab.test", name="start")
        ET.SubElement(case, "error", message=report.not_driven, type="NotDriven")
        suite.set("tests", str(len(report.cases) + 1))
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def report_doc(report: Report) -> dict:
    """``--html``: the document :func:`acplab.model.render.html.page` draws (the other commands' report)."""
    r = report
    findings = [[f.property, ", ".join(f.rules), " ".join(rule_sentences(f.rules).values()), f"{f.failed}/{f.runs}",
                 "; ".join(s.describe() for s in f.minimal.steps), f.explanation,
                 " ".join(str(p) for p in f.files.values())] for f in r.findings]
    cases = [[c.name, c.runs, c.failed, ", ".join(sorted(c.properties)), round(c.seconds, 2)] for c in r.cases]
    tables = (("action", r.actions), ("window opened", r.opened), ("window never came", r.missed))
    coverage = [[kind, name, n] for kind, table in tables for name, n in sorted(table.items())]
    return {
        "title": "acplab test: " + " ".join(r.command),
        "verdict": r.verdict,
        "lines": summary_lines(r)[:1] + ([f"not driven: {r.not_driven}"] if r.not_driven else []),
        "facts": [("agent", " ".join(r.command)), ("seed", r.seed), ("budget", f"{r.budget:g} s"),
                  ("judged by", "the rule monitors of acplab trace check, each run declared complete"),
                  ("output", r.out_dir)],
        "tables": [
            {"title": "Findings", "id": "findings", "lead": True, "rows": findings,
             "head": ["property", "rules", "rule", "failed runs", "minimal schedule", "explanation", "files"],
             "note": "Each violated property once, with its schedule shrunk to a minimal one that still fails."},
            {"title": "Schedules", "id": "cases", "head": ["schedule", "runs", "failed", "properties", "seconds"],
             "rows": cases},
            {"title": "Coverage", "id": "test-coverage", "head": ["kind", "name", "count"], "rows": coverage,
             "note": "Client actions performed, and the events the steps waited for (opened, or never came)."},
        ],
        "runs": [],
    }


def write_html(report: Report, folder) -> str:
    path = Path(folder) / "report.html"
    path.write_text(page(report_doc(report)), encoding="utf-8")
    return str(path)
