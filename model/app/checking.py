"""`acplab check`: build the model, explore it, print the verdict and write counterexamples."""

from __future__ import annotations

import os
from dataclasses import dataclass

import click

from acplab.model.engine import Limits, Result
from acplab.model.engine.parallel import explore_levels
from acplab.model.engine.walk import random_walks
from acplab.model.render.artefacts import fresh_out_dir, write_behaviour
from acplab.model.render.traces import state_diff_trace
from .progress import explorer_progress
from .report import print_json, result_json
from acplab.model.engine.verdicts import exit_code


@dataclass(frozen=True)
class Search:
    """How ``acplab check`` searches: workers, reduction, checkpoints, or random walks instead."""

    workers: int | None = None  # None: one per core
    por: bool = True
    checkpoint: str | None = None
    checkpoint_every: float = 60.0
    walk: int | None = None  # random walks instead of an exhaustive search
    seed: int = 0
    max_depth: int | None = None

    def run(self, model, limits: Limits, progress, identity: str) -> Result:
        """Random walks, or the exhaustive search on ``workers`` processes (with checkpoints)."""
        if self.walk:
            return random_walks(model, self.walk, self.seed, self.max_depth or 200, progress, limits.max_seconds)
        workers = self.workers or os.cpu_count() or 1
        limits = Limits(limits.max_states, limits.max_seconds, self.max_depth)
        return explore_levels(model, limits, workers, progress, por=self.por, checkpoint=self.checkpoint,
                              checkpoint_every=self.checkpoint_every, identity=identity)

    def json(self, result: Result) -> dict:
        """What the search did, for the JSON summary."""
        out = {"search": "random walks" if self.walk else "breadth-first",
               "workers": 1 if self.walk else self.workers or os.cpu_count() or 1,
               "reduced": result.reduced}
        if result.confirmed is not None:
            out["confirmed_states"] = result.confirmed
        if result.note:
            out["note"] = result.note
        if result.peak_bytes:
            out["peak_rss_mb"] = round(result.peak_bytes / 2**20, 1)
        if result.worker_cpu:
            out["worker_cpu_seconds"] = [round(cpu, 2) for cpu in result.worker_cpu]
        return out


def check_twophase(rms, broken, symmetry, max_states, max_seconds, as_json, out, quiet, search=Search()) -> int:
    """Check the TwoPhase validation model and report like any other model."""
    from acplab.model.engine.twophase import TwoPhase

    model = TwoPhase(rms, broken=broken, symmetry=symmetry)
    identity = f"twophase rms={rms} broken={broken} symmetry={symmetry}"
    result = search.run(model, Limits(max_states, max_seconds), explorer_progress(quiet or as_json), identity)
    name = f"twophase-{rms}" + ("-broken" if broken else "")
    files = write_counterexamples(model, result, out, name) if result.violations else {}
    summary = result_json(result, model="twophase", spec="broken" if broken else "twophase", rms=rms)
    summary.update(search.json(result))
    summary.update(violations_json(result, files), witnesses=witnesses_json(result))
    emit(summary, as_json)
    return exit_code(result.verdict)


def check_bridge(name, mutant, max_states, max_seconds, as_json, out, quiet, search=Search()) -> int:
    """Check a v1<->v2 bridge model (B1-B8); ``--spec rfd`` is the conforming bridge, else a mutant."""
    from acplab.model.acp.bridges import BRIDGE_MODELS, MUTANTS
    from acplab.model.errors import InputError

    if mutant != "rfd" and mutant not in MUTANTS[name]:
        raise InputError(f"unknown bridge mutant {mutant!r}; known: rfd, {', '.join(MUTANTS[name])}")
    model = BRIDGE_MODELS[name](mutant=None if mutant == "rfd" else mutant)
    identity = f"bridge-{name} {mutant}"
    result = search.run(model, Limits(max_states, max_seconds), explorer_progress(quiet or as_json), identity)
    files = write_counterexamples(model, result, out, f"bridge-{name}-{mutant}") if result.violations else {}
    summary = result_json(result, model=f"bridge-{name}", spec=mutant)
    summary.update(search.json(result))
    summary.update(violations_json(result, files), witnesses=witnesses_json(result))
    emit(summary, as_json)
    return exit_code(result.verdict)


def acp_model(spec_name: str, scenario_name: str | None, symmetry: bool = False, **overrides):
    """The ACP model for a spec and a scenario (default: the default scenario), with bound overrides."""
    from acplab.model.acp.model import AcpModel
    from acplab.model.acp.scenarios import DEFAULT, get_scenario
    from acplab.model.acp.spec import get_spec
    from acplab.model.acp.witnesses import WITNESSES

    spec = get_spec(spec_name)
    scenario = get_scenario(scenario_name) if scenario_name else DEFAULT
    changes = {k: v for k, v in overrides.items() if v is not None}
    bounds = scenario.bounds._replace(**changes)
    witnesses = [WITNESSES[w] for w in scenario.witnesses]
    return AcpModel(spec, bounds, witnesses, symmetry=symmetry), scenario


def check_acp(spec, scenario, clients, prompts, drops, disconnects, symmetry, max_states, max_seconds,
              as_json, out, quiet, search=Search()) -> int:
    """Check the ACP model: verdict, counts, and for each violation a trace, a wire log and a diagram."""
    from acplab.model.acp.reduction import reduce

    model, sc = acp_model(spec, scenario, symmetry, clients=clients, prompts=prompts, drops=drops,
                          disconnects=disconnects)
    why_not = reduce(model) if search.por and not search.walk else None
    identity = f"acp {spec} {sc.name} {tuple(model.bounds)} symmetry={symmetry} por={search.por}"
    result = search.run(model, Limits(max_states, max_seconds), explorer_progress(quiet or as_json), identity)
    files = write_acp_counterexamples(model, result, out, f"{spec}-{sc.name}") if result.violations else {}
    summary = result_json(result, model="acp", spec=spec, scenario=sc.name, bounds=model.bounds._asdict())
    summary.update(search.json(result))
    if why_not:
        summary["note"] = "; ".join(filter(None, [summary.get("note"), f"no partial-order reduction: {why_not}"]))
    summary.update(violations_json(result, files), witnesses=witnesses_json(result))
    emit(summary, as_json)
    return exit_code(result.verdict)


#: Actions a run carried on to rest leaves out: faults and new user decisions.
_NOT_TO_REST = frozenset({"submit", "cancel", "cancel_request", "cut", "drop_to_agent", "drop_to_client",
                          "restart", "import", "reject", "fail", "reconnect"})


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
    """Per violated property: numbered text trace, capture-format wire log, Mermaid diagram."""
    folder = fresh_out_dir(out, stem)
    files: dict[str, list[str]] = {}
    for v in result.violations:
        rules = ", ".join(v.property.rules)
        title = f"{v.property.name} [{rules}] violated in {len(v.path)} steps (spec {model.spec.name})"
        files[v.property.name] = write_behaviour(folder / v.property.name, model, v.path.actions_with_effects(), title,
                                                 (v.property.name, v.sentence), v.property.rules)
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
    if summary.get("reduced"):
        confirmed = summary.get("confirmed_states")
        click.echo("  partial-order reduction" + (f"; counterexamples confirmed shortest by an unreduced search "
                                                  f"({confirmed:,} states)" if confirmed is not None else ""))
    if summary.get("note"):
        click.echo(f"  note: {summary['note']}")
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
    found = summary["witnesses"]["found"]
    if found:
        click.echo(f"  witnesses found: {', '.join(found)}")
