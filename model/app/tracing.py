"""``acplab trace check`` output: the text report and the files written per violation."""

from __future__ import annotations

from pathlib import Path

from acplab.model.render.artefacts import fresh_out_dir
from acplab.model.render.mermaid import capture_window
from acplab.model.trace.check import TraceResult, check_capture, get_trace_spec
from acplab.model.wire.capture import dump_capture

from .report import print_json, terminal_text


def check_and_write(path, spec: str = "rfd", out: str | None = None) -> TraceResult:
    """Check a capture; with ``out``, write a Mermaid window and a JSONL window per violation."""
    result = check_capture(path, spec)
    if out is not None and result.violations:
        write_files(result, out, Path(str(path)).stem)
    return result


def write_files(result: TraceResult, out: str, stem: str) -> None:
    """A Mermaid window and the JSONL records around each violation, in a fresh folder under ``out``."""
    folder = fresh_out_dir(out, f"trace-{stem}")
    result.out_dir = str(folder)
    for k, (v, window) in enumerate(zip(result.violations, result.windows), 1):
        base = folder / f"{k:02d}-{v.property}"
        mmd, jsonl = base.with_suffix(".mmd"), base.with_suffix(".jsonl")
        mmd.write_text(capture_window(window, v.property, v.rules, v.seq, v.explanation, get_trace_spec(result.spec).version),
                       encoding="utf-8")
        dump_capture(list(window), jsonl)
        v.files = [str(mmd), str(jsonl)]


def print_result(result: TraceResult, as_json: bool, echo=print) -> None:
    """The report: one JSON object, or text lines with the capture's own text escaped for the terminal."""
    if as_json:
        print_json(result.to_json())
        return
    raw_echo = echo

    def echo(line: str) -> None:  # explanations quote the capture (labels, ids, raw lines): untrusted
        raw_echo(terminal_text(line))
    skipped = f", {result.skipped:,} outside the model" if result.skipped else ""
    echo(f"{result.verdict}: {result.messages:,} messages{skipped}, {len(result.violations)} violation(s), "
         f"{result.seconds:.2f} s (spec {result.spec})")
    for v in result.violations:
        rules = ", ".join(v.rules) or "-"
        where = f"seq {', '.join(map(str, v.seq))}" + (f" (line {v.line})" if v.line else "")
        echo(f"  violated {v.property} [{rules}] at {where}: {v.explanation}")
        for f in v.files:
            echo(f"    {f}")
    for name, n in result.suppressed.items():
        echo(f"  ... and {n:,} more violation(s) of {name} not listed")
    names = ", ".join(f"{n} [{', '.join(r)}]" for n, r in result.not_checkable)
    echo(f"  not checkable from the wire: {names}")
