"""``acplab trace check --junit FILE --sarif FILE``: a checked capture as CI and code-scanning tools read it.

Both are pure functions of the ``trace check --json`` object (its schema:
``model/schemas/trace-check.schema.json``), so the three outputs never disagree.

* **JUnit XML** (the Jenkins/Surefire dialect every CI reads): one
  ``<testsuite>`` for the capture, one ``<testcase>`` per property the capture
  was checked for; a violated property has one ``<failure>`` listing each
  finding (rule IDs, seq numbers, capture line); a property the capture cannot
  speak to (it needs events no wire carries) is ``<skipped>``; warnings are
  the testcase's ``<system-out>``, never failures (they do not change the
  exit code either).
* **SARIF 2.1.0** (OASIS; GitHub code scanning and IDE viewers): one run of
  the driver ``acplab`` whose rules are the checked properties (each tagged
  with its rule IDs); one result per violation (``error``) and per warning
  (``warning``), located at the capture file's line of the offending record
  (``region.startLine``), or at the file alone for a finding about the
  capture's end (an obligation still open), which has no line.

An existing FILE is never overwritten: the command refuses before any work
(exit 2), as for every output of acplab.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from xml.etree import ElementTree as ET

import click

from acplab.model.errors import InputError

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://agentclientprotocol.com"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("acplab")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0"


def _where(finding: dict) -> str:
    seq = f"seq {', '.join(map(str, finding['seq']))}" if finding["seq"] else "end of capture"
    return seq + (f" (line {finding['line']})" if finding.get("line") else "")


def _finding_text(finding: dict) -> str:
    rules = ", ".join(finding["rules"]) or "-"
    return f"[{rules}] at {_where(finding)}: {finding['explanation']}"


def junit_xml(report: dict) -> str:
    """The JUnit XML of a ``trace check --json`` object."""
    checked = [c["property"] for c in report.get("checked", [])]
    found: dict[str, list[dict]] = {}
    for finding in report["violations"] + report["warnings"]:
        found.setdefault(finding["property"], []).append(finding)
        if finding["property"] not in checked:
            checked.append(finding["property"])
    skipped = {c["property"]: c for c in report.get("not_checkable", [])}
    names = checked + [n for n in skipped if n not in checked]
    failures = sum(1 for n in names if any(f["level"] == "violation" for f in found.get(n, [])))
    suites = ET.Element("testsuites", name="acplab trace check", tests=str(len(names)), failures=str(failures),
                        errors="0", skipped=str(len(skipped)), time=f"{report.get('seconds', 0.0):.3f}")
    suite = ET.SubElement(suites, "testsuite", name=f"acplab trace check {report['file']}", tests=str(len(names)),
                          failures=str(failures), errors="0", skipped=str(len(skipped)),
                          time=f"{report.get('seconds', 0.0):.3f}")
    props = ET.SubElement(suite, "properties")
    for key, value in (("spec", report["spec"]), ("dialect", report.get("dialect", {}).get("used", "")),
                       ("complete", str(report["complete"]).lower()), ("messages", str(report["messages"]))):
        ET.SubElement(props, "property", name=key, value=str(value))
    classname = f"acplab.trace.{Path(report['file']).stem}"
    for name in names:
        case = ET.SubElement(suite, "testcase", classname=classname, name=name, time="0")
        violations = [f for f in found.get(name, []) if f["level"] == "violation"]
        warnings = [f for f in found.get(name, []) if f["level"] != "violation"]
        if violations:
            failure = ET.SubElement(case, "failure", type="violation",
                                    message=f"{name} {_finding_text(violations[0])}")
            failure.text = "\n".join(_finding_text(f) for f in violations)
        elif name in skipped:
            ET.SubElement(case, "skipped", message=f"needs {', '.join(skipped[name]['needs'])}, which no capture carries")
        if warnings:
            ET.SubElement(case, "system-out").text = "\n".join("warning " + _finding_text(f) for f in warnings)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _artifact_uri(path: str) -> str:
    """A relative path stays relative (SARIF resolves it against the checkout); an absolute one is a file URI."""
    p = Path(path)
    return p.resolve().as_uri() if p.is_absolute() else p.as_posix()


def sarif(report: dict) -> dict:
    """The SARIF 2.1.0 log of a ``trace check --json`` object."""
    described = {c["property"]: c for c in report.get("checked", [])}
    findings = report["violations"] + report["warnings"]
    order: list[str] = list(described)
    for f in findings:
        if f["property"] not in order:
            order.append(f["property"])
    texts = {f["property"]: f.get("description") or f["property"] for f in findings}
    rules = []
    for name in order:
        ids = list(described.get(name, {}).get("rules") or next(
            (f["rules"] for f in findings if f["property"] == name), []))
        rules.append({"id": name, "name": name, "shortDescription": {"text": texts.get(name, name)},
                      "properties": {"tags": ids}})
    uri = _artifact_uri(report["file"])
    results = []
    for f in findings:
        location: dict = {"artifactLocation": {"uri": uri, "index": 0}}
        if f.get("line"):
            location["region"] = {"startLine": f["line"]}
        results.append({"ruleId": f["property"], "ruleIndex": order.index(f["property"]),
                        "level": "error" if f["level"] == "violation" else "warning",
                        "message": {"text": f"{f['explanation']} ({', '.join(f['rules']) or 'no rule ID'}; "
                                            f"{_where(f)})"},
                        "locations": [{"physicalLocation": location}],
                        "properties": {"seq": list(f["seq"]), "rules": list(f["rules"])}})
    driver = {"name": "acplab", "version": _version(), "informationUri": INFORMATION_URI, "rules": rules}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "artifacts": [{"location": {"uri": uri}}], "results": results,
                      "properties": {"spec": report["spec"], "verdict": report["verdict"],
                                     "complete": report["complete"]}}]}


def check_targets(*paths: str | None) -> None:
    """Refuse, before any work, a report file that exists (never overwritten) or whose folder does not."""
    for path in filter(None, paths):
        if os.path.lexists(path):
            raise InputError(f"{path} exists; acplab does not overwrite files: remove it or name another")
        parent = Path(path).parent
        if not parent.is_dir():
            raise InputError(f"{path}: folder {parent} does not exist")


def write_reports(report: dict, junit: str | None, sarif_path: str | None) -> None:
    """Write the JUnit and SARIF files that were asked for (created exclusively: never overwritten)."""
    if junit:
        with open(junit, "x", encoding="utf-8") as f:
            f.write(junit_xml(report))
    if sarif_path:
        with open(sarif_path, "x", encoding="utf-8") as f:
            json.dump(sarif(report), f, indent=1)
            f.write("\n")


def options(command):
    """The ``--junit FILE`` and ``--sarif FILE`` options of ``trace check``."""
    command = click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                           help="Also write the findings as SARIF 2.1.0 (code scanning), each at its capture line.")(command)
    return click.option("--junit", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                        help="Also write a JUnit XML report (one testcase per checked property).")(command)
