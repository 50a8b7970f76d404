"""`acplab check`: build the model, explore it, print the verdict and write counterexamples."""

from __future__ import annotations

import click

from model.errors import InputError
from model.explore import Limits, Result, explore
from model.progress import explorer_progress
from model.report import exit_code, fresh_out_dir, print_json, result_json, text_trace, verdict_of


def check_twophase(rms, broken, symmetry, max_states, max_seconds, as_json, out, quiet) -> int:
    """Check the TwoPhase validation model and report like any other model."""
    from model.twophase import TwoPhase

    model = TwoPhase(rms, broken=broken, symmetry=symmetry)
    result = explore(model, Limits(max_states, max_seconds), explorer_progress(quiet or as_json))
    name = f"twophase-{rms}" + ("-broken" if broken else "")
    files = write_counterexamples(model, result, out, name) if result.violations else {}
    summary = result_json(result, model="twophase", spec="broken" if broken else "twophase", rms=rms)
    summary.update(violations_json(result, files), witnesses=witnesses_json(result))
    emit(summary, as_json)
    return exit_code(verdict_of(result))


def check_acp(**options) -> int:
    raise InputError("the ACP model is not built yet: use `acplab check --model twophase`")


def violations_json(result: Result, files: dict) -> dict:
    rows = [
        {
            "property": v.property.name,
            "rules": list(v.property.rules),
            "trace_length": len(v.path),
            "files": files.get(v.property.name, []),
        }
        for v in result.violations
    ]
    if result.complete:
        rows.extend(
            {"property": name, "rules": [], "trace_length": None, "files": [], "missing_witness": True}
            for name in result.missing_witnesses
        )
    return {"violations": rows}


def witnesses_json(result: Result) -> dict:
    return {
        "found": sorted(n for n, p in result.witnesses.items() if p is not None),
        "missing": sorted(result.missing_witnesses),
    }


def write_counterexamples(model, result: Result, out, stem: str) -> dict[str, list[str]]:
    """Write a text trace per violated property; returns the paths per property."""
    folder = fresh_out_dir(out, stem)
    files: dict[str, list[str]] = {}
    for v in result.violations:
        path = folder / f"{v.property.name}.txt"
        title = f"{v.property.name} violated ({', '.join(v.property.rules) or 'no rule'}): {len(v.path)} steps"
        path.write_text(text_trace(model, v.path, title))
        files[v.property.name] = [str(path)]
    return files


def emit(summary: dict, as_json: bool) -> None:
    if as_json:
        print_json(summary)
        return
    head = f"{summary['verdict']}: {summary['states']:,} states, {summary['transitions']:,} transitions, " \
           f"depth {summary['depth']}, {summary['seconds']:.2f} s"
    if summary.get("limit"):
        head += f" (stopped at {summary['limit']})"
    click.echo(head)
    for v in summary["violations"]:
        if v.get("missing_witness"):
            click.echo(f"  missing witness: {v['property']} (no reachable state shows it)")
            continue
        rules = ", ".join(v["rules"]) or "-"
        click.echo(f"  violated {v['property']} [{rules}] in {v['trace_length']} steps")
        for f in v["files"]:
            click.echo(f"    {f}")
    found = summary["witnesses"]["found"]
    if found:
        click.echo(f"  witnesses found: {', '.join(found)}")
