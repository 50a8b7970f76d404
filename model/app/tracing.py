"""``acplab trace check`` output and ``acplab rules``: the text report, the files per violation, the catalogue."""

from __future__ import annotations

from pathlib import Path

from acplab.model.render.artefacts import fresh_out_dir, replacing, write_atomic
from acplab.model.render.mermaid import capture_window
from acplab.model.trace.check import TraceResult, check_capture
from acplab.model.wire.capture import dump_capture

from .report import print_json, terminal_text


def check_and_write(path, spec: str | None = None, out: str | None = None, *, complete: bool = False,
                    internal=None, beside: bool = True, switches=None, schema=None) -> TraceResult:
    """Check a capture; with ``out``, write a Mermaid window and a JSONL window per violation.

    Without ``internal``, ``X.events.jsonl`` beside ``X.jsonl`` is the sidecar (the one ``check --out`` writes)
    unless ``beside`` is False (``--no-internal``).
    """
    found = sidecar_beside(path) if internal is None and beside else None
    result = check_capture(path, spec, complete=complete, internal=internal or found, switches=switches,
                           schema=schema)
    result.internal_beside = found is not None
    if out is not None and result.violations:
        write_files(result, out, Path(str(path)).stem)
    return result


def sidecar_beside(path) -> Path | None:
    """``X.events.jsonl`` beside the capture ``X.jsonl`` (or ``X.EXT``), if it exists."""
    p = Path(str(path))
    candidate = p.with_name((p.name[:-6] if p.name.endswith(".jsonl") else p.stem) + ".events.jsonl")
    return candidate if candidate.is_file() and candidate != p else None


def write_files(result: TraceResult, out: str, stem: str) -> None:
    """A Mermaid window and the JSONL records around each violation, in a fresh folder under ``out``."""
    folder = fresh_out_dir(out, f"trace-{stem}")
    result.out_dir = str(folder)
    version = {"v1": "v1", "v2-draft": "v2-draft"}.get(result.dialect if result.spec == "rfd" else result.spec, "v2")
    for k, (v, window) in enumerate(zip(result.violations, result.windows), 1):
        if not window:
            continue
        base = folder / f"{k:02d}-{v.property}"
        mmd, jsonl = base.with_suffix(".mmd"), base.with_suffix(".jsonl")
        write_atomic(mmd, capture_window(window, v.property, v.rules, v.seq, v.explanation, version))
        with replacing(jsonl) as tmp:
            dump_capture(list(window), tmp)
        v.files = [str(mmd), str(jsonl)]


def print_result(result: TraceResult, as_json: bool, echo=print, quiet: bool = False) -> None:
    """The report: a summary line, each violation and warning, what was not checkable; capture text escaped for the terminal."""
    if as_json:
        print_json(result.to_json())
        return
    raw_echo = echo

    def echo(line: str) -> None:  # explanations quote the capture (labels, ids, raw lines): untrusted
        raw_echo(terminal_text(line))
    if getattr(result, "internal_beside", False):
        echo(f"internal events from {result.internal} (found beside the capture; --no-internal ignores it)")
    source = {"--spec": "forced by --spec", "initialize": "from initialize", "default": "no initialize: the spec's"}
    state = "declared complete" if result.complete else "not declared complete"
    echo(f"{result.verdict}: {result.messages:,} messages, {len(result.violations)} violation(s), "
         f"{len(result.warnings)} warning(s), {result.seconds:.2f} s "
         f"(spec {result.spec}, dialect {result.dialect} {source[result.dialect_source]}; capture {state})")
    if result.readings and not quiet:
        r = result.readings
        echo(f"  readings: message IDs unique per {r['message_id_scope']} (--id-scope type|session); unprefixed "
             f"unknown stop reasons are {r['unknown_stop_reason']}s (--unknown-stop-reasons violation|warning)")
    for v in result.violations + ([] if quiet else result.warnings):
        rules = ", ".join(v.rules) or "-"
        where = f"seq {', '.join(map(str, v.seq))}" if v.seq else "end of capture"
        where += f" (line {v.line})" if v.line else ""
        echo(f"  {'violated' if v.level == 'violation' else 'warning '} {v.property} [{rules}] at {where}: "
             f"{v.explanation}")
        for f in v.files:
            echo(f"    {f}")
    for name, n in result.suppressed.items():
        echo(f"  ... and {n:,} more of {name} not listed")
    if result.not_checkable and not quiet:
        names = "; ".join(f"{n} [{', '.join(r)}] needs {', '.join(e)}" for n, r, e in result.not_checkable)
        echo(f"  not checkable from the wire (give --internal EVENTS.jsonl): {names}")


def rules_rows(rule_id: str | None = None) -> list[dict]:
    """``acplab rules``: ``{id, text, strength, checkable, monitors, mutants}`` per rule (or the one asked for)."""
    from acplab.model.acp.killers import spec_rules
    from acplab.model.acp.monitors import CLIENT_MONITORS
    from acplab.model.acp.rules import catalogue, monitors_of_rule
    from acplab.model.acp.spec import FINDINGS, MUTANTS
    from acplab.model.errors import InputError

    rules = catalogue()
    if rule_id is not None and rule_id not in rules:
        raise InputError(f"unknown rule {rule_id!r}; the catalogue has {', '.join(rules)}")
    broken = {name: spec_rules(name) for name in {**MUTANTS, **FINDINGS}}
    rows = []
    for r in rules.values():
        if rule_id is not None and r.id != rule_id:
            continue
        monitors = monitors_of_rule(r.id) + [m.name for m in CLIENT_MONITORS if r.id in m.rules]
        mutants = [name for name, rules in broken.items() if r.id in rules]
        rows.append({"id": r.id, "text": r.text, "strength": r.strength, "checkable": r.checkable,
                     "monitors": monitors, "mutants": mutants, "source": r.source, "wire_note": r.wire_note,
                     "rfd": r.rfd or r.source})
    return rows


def print_rules(rows: list[dict], as_json: bool, echo=print) -> None:
    if as_json:
        print_json(rows)
        return
    for row in rows:
        monitors = ", ".join(row["monitors"]) or "-"
        echo(f"{row['id']:<4} {row['strength']:<10.10} {row['checkable']:<8} {row['text']}")
        if len(rows) == 1:
            echo(f"     source: {row['source']}")
            if row["wire_note"]:
                echo(f"     on the wire: {row['wire_note']}")
            echo(f"     mutants: {', '.join(row['mutants']) or '-'}")
        echo(f"     monitors: {monitors}")
