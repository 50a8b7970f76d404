"""`acplab check`: build the model, explore it, print the verdict and write counterexamples."""

from __future__ import annotations

import click

from acplab.model.engine import Limits, Result, explore
from acplab.model.render.artefacts import fresh_out_dir, write_behaviour
from acplab.model.render.traces import state_diff_trace
from .progress import explorer_progress
from .report import print_json, result_json
from acplab.model.engine.verdicts import exit_code


def check_twophase(rms, broken, symmetry, max_states, max_seconds, as_json, out, quiet) -> int:
    """Check the TwoPhase validation model and report like any other model."""
    from acplab.model.engine.twophase import TwoPhase

    model = TwoPhase(rms, broken=broken, symmetry=symmetry)
    result = explore(model, Limits(max_states, max_seconds), explorer_progress(quiet or as_json))
    name = f"twophase-{rms}" + ("-broken" if broken else "")
    files = write_counterexamples(model, result, out, name) if result.violations else {}
    summary = result_json(result, model="twophase", spec="broken" if broken else "twophase", rms=rms)
    summary.update(violations_json(result, files), witnesses=witnesses_json(result))
    emit(summary, as_json)
    return exit_code(result.verdict)


def check_bridge(name, mutant, max_states, max_seconds, as_json, out, quiet) -> int:
    """Check a v1<->v2 bridge model (B1-B8); ``--spec rfd`` is the conforming bridge, else a mutant."""
    from acplab.model.acp.bridges import BRIDGE_MODELS, MUTANTS
    from acplab.model.errors import InputError

    if mutant != "rfd" and mutant not in MUTANTS[name]:
        raise InputError(f"unknown bridge mutant {mutant!r}; known: rfd, {', '.join(MUTANTS[name])}")
    model = BRIDGE_MODELS[name](mutant=None if mutant == "rfd" else mutant)
    result = explore(model, Limits(max_states, max_seconds), explorer_progress(quiet or as_json))
    files = write_counterexamples(model, result, out, f"bridge-{name}-{mutant}") if result.violations else {}
    summary = result_json(result, model=f"bridge-{name}", spec=mutant)
    summary.update(violations_json(result, files), witnesses=witnesses_json(result))
    emit(summary, as_json)
    return exit_code(result.verdict)


def acp_model(spec_name: str, scenario_name: str | None, symmetry: bool = False, **overrides):
    """The ACP model for a spec and a scenario (default: the default scenario), with bound overrides.

    With the scenario's own bounds its witnesses are required (a missing one
    is a violation); once the user changes a bound, a witness those bounds
    cannot reach is only a warning that names it.
    """
    from acplab.model.acp.model import AcpModel
    from acplab.model.acp.scenarios import DEFAULT, get_scenario
    from acplab.model.acp.spec import get_spec
    from acplab.model.acp.witnesses import WITNESSES

    spec = get_spec(spec_name)
    scenario = get_scenario(scenario_name) if scenario_name else DEFAULT
    changes = {k: v for k, v in overrides.items() if v is not None}
    bounds = scenario.bounds._replace(**changes)
    witnesses = [WITNESSES[w] for w in scenario.witnesses]
    model = AcpModel(spec, bounds, witnesses, symmetry=symmetry)
    model.witnesses_required = bounds == scenario.bounds
    return model, scenario


def check_acp(spec, scenario, clients, prompts, drops, disconnects, symmetry, max_states, max_seconds,
              as_json, out, quiet) -> int:
    """Check the ACP model: verdict, counts, and for each violation a trace, a wire log and a diagram."""
    model, sc = acp_model(spec, scenario, symmetry, clients=clients, prompts=prompts, drops=drops,
                          disconnects=disconnects)
    result = explore(model, Limits(max_states, max_seconds), explorer_progress(quiet or as_json))
    noteworthy = result.violations or result.warnings
    files = write_acp_counterexamples(model, result, out, f"{spec}-{sc.name}") if noteworthy else {}
    summary = result_json(result, model="acp", spec=spec, scenario=sc.name, bounds=model.bounds._asdict())
    summary.update(violations_json(result, files), witnesses=witnesses_json(result),
                   warnings=warnings_json(result, files, {w[0]: w[2] for w in model.witnesses}))
    emit(summary, as_json)
    return exit_code(result.verdict)


#: Actions a run carried on to rest leaves out: faults and new user decisions.
_NOT_TO_REST = frozenset({"submit", "cancel", "cancel_request", "cut", "drop_to_agent", "drop_to_client",
                          "restart", "import", "reject", "fail", "reconnect", "assign_id", "hook",
                          "start_own_work", "keep_working"})


def complete_path(model, path, limit: int = 200):
    """Carry a path on, without faults or new user actions, until nothing is left to do.

    Each step takes the first such enabled action, so the result is deterministic.
    """
    more, ordinals = [], []
    state = path.last_state
    for _ in range(limit):
        choice = next(((i, s) for i, s in enumerate(model.successors(state)) if s[0].name not in _NOT_TO_REST), None)
        if choice is None:
            break
        i, successor = choice
        more.append(successor)
        ordinals.append(i)
        state = successor[1]
    return path.extended(more, ordinals)


def write_acp_counterexamples(model, result: Result, out, stem: str) -> dict[str, list[str]]:
    """Per violated property (and per warning): numbered text trace, capture-format wire log, Mermaid diagram.

    A lasso (an ``eventually`` counterexample that loops) marks where its loop starts.
    """
    folder = fresh_out_dir(out, stem)
    files: dict[str, list[str]] = {}
    for v in result.violations + result.warnings:
        rules = ", ".join(v.property.rules)
        what = "warning" if v.property.severity == "warning" else "violated"
        loop = "" if v.path.loop_start is None else f", looping from step {v.path.loop_start + 1}"
        title = f"{v.property.name} [{rules}] {what} in {len(v.path)} steps{loop} (spec {model.spec.name})"
        files[v.property.name] = write_behaviour(folder / v.property.name, model, v.path.actions_with_effects(), title,
                                                 (v.property.name, v.sentence), v.property.rules,
                                                 loop_start=v.path.loop_start)
    return files


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
            for name in result.missing_required
        )
    return {"violations": rows}


def warnings_json(result: Result, files: dict, witness_rules: dict | None = None) -> list[dict]:
    """SHOULDs not met (with their shortest path) and witnesses out of reach of user-chosen bounds.

    Warnings never change the verdict or the exit code.
    """
    witness_rules = witness_rules or {}
    rows = [
        {"property": w.property.name, "rules": list(w.property.rules), "sentence": w.sentence,
         "trace_length": len(w.path), "files": files.get(w.property.name, [])}
        for w in result.warnings
    ]
    if result.complete:
        rows.extend(
            {"property": name, "rules": list(witness_rules.get(name, ())),
             "sentence": f"witness {name} is not reachable within these bounds",
             "trace_length": None, "files": [], "missing_witness": True}
            for name in result.missing_optional
        )
    return rows


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
        path.write_text(state_diff_trace(model, v.path, title))
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
    real = [v for v in summary["violations"] if not v.get("missing_witness")]
    missing = [v["property"] for v in summary["violations"] if v.get("missing_witness")]
    if missing and real:
        click.echo(f"  witnesses not reached (paths end at violations): {', '.join(missing)}")
    elif missing:
        for name in missing:
            click.echo(f"  missing witness: {name} (no reachable state shows it)")
    for v in real:
        rules = ", ".join(v["rules"]) or "-"
        click.echo(f"  violated {v['property']} [{rules}] in {v['trace_length']} steps")
        for f in v["files"]:
            click.echo(f"    {f}")
    for w in summary.get("warnings", ()):
        rules = ", ".join(w["rules"]) or "-"
        click.echo(f"  warning {w['property']} [{rules}]: {w['sentence']}")
        for f in w["files"]:
            click.echo(f"    {f}")
    found = summary["witnesses"]["found"]
    if found:
        click.echo(f"  witnesses found: {', '.join(found)}")


def property_rows() -> list[dict]:
    """``acplab properties``: each property with its expectation, rules, wire-checkability and killers.

    ``killed_by`` names the specs that violate the property and the scenario
    in which they do (:mod:`acplab.model.acp.killers`; the tests re-check
    every claim).
    """
    from acplab.model.acp.killers import KILLERS
    from acplab.model.acp.model import NO_STUCK_STATE
    from acplab.model.acp.monitors import ALL_MONITORS

    rows = [
        {"name": m.name, "expectation": m.expectation, "level": m.level, "rules": list(m.rules), "wire": m.wire,
         "description": m.description}
        for m in ALL_MONITORS
    ]
    rows.append({"name": NO_STUCK_STATE.name, "expectation": "always", "level": "error",
                 "rules": list(NO_STUCK_STATE.rules), "wire": False, "description": NO_STUCK_STATE.description})
    for row in rows:
        row["killed_by"] = [{"spec": spec, "scenario": sc} for spec, sc in KILLERS.get(row["name"], ())]
    return rows


def print_properties(rows: list[dict]) -> None:
    """One line per property, then who violates it."""
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        kind = r["expectation"] + (" (warning)" if r["level"] == "warning" else "") + (", wire" if r["wire"] else "")
        killers = ", ".join(f"{k['spec']} in {k['scenario']}" for k in r["killed_by"]) or "NOTHING"
        click.echo(f"{r['name']:<{width}}  {kind} [{', '.join(r['rules'])}]: {r['description']}")
        click.echo(f"{'':<{width}}  killed by {killers}")
