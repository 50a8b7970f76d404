"""`acplab check`: build the model, explore it, print the verdict and write the runs worth reading.

Every model (the ACP model, the v1 <-> v2 bridges, TwoPhase) goes through one
:func:`run_check`: the first line of text output names the spec and the
bounds; each counterexample, and each witness run asked for with
``--witness NAME`` / ``--witnesses``, gets its files (ACP and bridges: a
numbered text trace, the wire log in the capture format and a Mermaid
diagram; TwoPhase: the text trace); ``--html`` adds one self-contained
``report.html`` that steps through them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import click

from acplab.model.engine import Limits, Result
from acplab.model.engine import explore
from acplab.model.engine.hooks import hooks_of
from acplab.model.engine.walk import random_walks
from acplab.model.errors import InputError
from acplab.model.render.artefacts import fresh_out_dir, write_atomic, write_behaviour, write_bridge_behaviour
from acplab.model.render.traces import state_diff_trace, wire_records
from acplab.model.trace.visible import wire_visibility
from acplab.model.engine.verdicts import exit_code
from .progress import Progress
from .property_list import (NO_STUCK, PROPERTY_SETS, Selection, print_properties, properties_asked,  # noqa: F401
                            property_rows, select_properties)  # (re-exported: the command line and tests use them here)
from .report import coverage_json, print_json, result_json


@dataclass(frozen=True)
class Output:
    """What to print and write: ``witnesses`` is None (none), ``"all"`` or a tuple of names."""

    as_json: bool = False
    quiet: bool = False
    out: str | None = None
    html: bool = False
    witnesses: object = None
    itf: bool = False  # also an ITF trace (X.itf.json) per run: ACP and bridge models, which have a wire


@dataclass
class Target:
    """A model to check, and how its runs are named, written and shown."""

    model: object
    stem: str  # the default output folder's name
    header: str  # the first line of text output
    facts: list  # (name, value) rows for the report
    spec_label: str  # "spec rfd, scenario default": closes every run title
    write: Callable  # (base, model, path, title, violation, rules, itf=None) -> files; itf: #meta.acplab
    view: Callable  # runview builder: (ident, kind, name, title, model, path, **kw) -> run
    summary: dict = field(default_factory=dict)  # extra JSON fields
    identity: str = ""  # what a checkpoint is of: a resumed run must check the same thing
    prepare: Callable | None = None  # (search) -> why the model gets no reduction, or None
    #: (actions per kind) -> sentences on what the bounds allow and no transition did
    coverage_warnings: Callable | None = None
    #: property -> what the spec declares of it ("by design: ..." / "not applicable: ..."), shown beside
    #: its violation; the verdict stays the search's (the matrix is what turns these into cells)
    declared: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Search:
    """How ``acplab check`` searches: workers, reduction, checkpoints, or random walks instead.

    ``stop`` (the default; ``--continue`` clears it) ends the breadth-first
    search after the level of its first violation, as TLC does: that level
    was generated and judged whole, so every property violated there is
    reported with a shortest counterexample, on any number of workers,
    reduced or not (:func:`acplab.model.engine.por.confirm`).  What a stop
    leaves unjudged it says: the verdict is ``violated`` (never ``holds``),
    ``complete`` is false, and ``eventually`` properties and missing
    witnesses, which need the whole graph, are not judged; properties not
    violated by then are unknown, not holding (``--continue`` explores on to
    collect every violated property, each with its own shortest
    counterexample).  A warning (a SHOULD) does not stop.  With
    ``--checkpoint`` the stop writes a snapshot, which ``--continue`` resumes
    to explore on.  Random walks (``--walk``) take every walk either way.
    """

    workers: int | None = None  # None: one per core
    por: bool = True
    checkpoint: str | None = None
    checkpoint_every: float = 60.0
    walk: int | None = None  # random walks instead of an exhaustive search
    seed: int = 0
    max_depth: int | None = None
    stop: bool = True  # stop at the first violation (not --continue)

    def run(self, model, limits: Limits, progress, identity: str) -> Result:
        """Random walks, or the exhaustive search on ``workers`` processes (with checkpoints)."""
        if self.walk:
            return random_walks(model, self.walk, self.seed, self.max_depth or 200, progress, limits.max_seconds)
        workers = self.workers or os.cpu_count() or 1
        limits = Limits(limits.max_states, limits.max_seconds, self.max_depth)
        return explore(model, limits, progress, stop_on_violation=self.stop, por=self.por, workers=workers,
                       checkpoint=self.checkpoint, checkpoint_every=self.checkpoint_every, identity=identity)

    def stopped(self, result: Result) -> bool:
        """Whether the search ended at its first violation rather than at the end of the graph or at a limit."""
        return self.stop and not self.walk and bool(result.violations) and not result.complete and result.limit is None

    def json(self, result: Result) -> dict:
        """What the search did, for the JSON summary."""
        out = {"search": "random walks" if self.walk else "breadth-first",
               "workers": 1 if self.walk else self.workers or os.cpu_count() or 1,
               "reduced": result.reduced}
        if not self.walk:
            out["stop_at_first_violation"] = self.stop
            out["stopped_at_first_violation"] = self.stopped(result)
        if result.confirmed is not None:
            out["confirmed_states"] = result.confirmed
        elif result.reduced and (result.violations or result.warnings):
            out["confirmed_by"] = "exact levels"  # por.confirm: no state above them was reduced
        if result.note:
            out["note"] = result.note
        if result.peak_bytes:
            out["peak_rss_mb"] = round(result.peak_bytes / 2**20, 1)
        if result.worker_cpu:
            out["worker_cpu_seconds"] = [round(cpu, 2) for cpu in result.worker_cpu]
        return out


# -- the three kinds of model ------------------------------------------------------------


#: what judges an ACP check (one monitor set for the explorer, the simulator and trace check)
MONITORS_FACT = ("the trace checker's rule monitors over what the agent's side of each connection sees and the "
                 "agent's internal events, plus the model monitors that judge what clients show")
GOALS_FACT = "the design-neutral goals of `acplab matrix` (acplab.model.acp.goals), judged on what users see"


def acp_model(spec_name: str, scenario_name: str | None, symmetry: bool = False, *, properties: str = "rules",
              only: Selection | None = None, **overrides):
    """The ACP model for a spec and a scenario (default: the default scenario), with bound overrides.

    With the scenario's own bounds its witnesses are required (a missing one
    is a violation); once the user changes a bound, a witness those bounds
    cannot reach is only a warning that names it.  ``only`` (``--property``)
    keeps just the named properties and witnesses (:class:`Selection`).
    """
    from acplab.model.acp.model import AcpModel
    from acplab.model.acp.scenarios import DEFAULT, get_scenario
    from acplab.model.acp.spec import get_spec
    from acplab.model.acp.witnesses import WITNESSES

    spec = get_spec(spec_name)
    scenario = get_scenario(scenario_name) if scenario_name else DEFAULT
    changes = {k: v for k, v in overrides.items() if v is not None}
    bounds = scenario.bounds._replace(**changes)
    witnesses = [WITNESSES[w] for w in scenario.witnesses if only is None or only.keeps_witness(w)]
    model = AcpModel(spec, bounds, witnesses, symmetry=symmetry,
                     monitors=judged_by(properties, None if only is None else only.names))
    model.witnesses_required = bounds == scenario.bounds
    if only is not None and NO_STUCK not in only.names:
        model.check_deadlock = False  # the engine's deadlock is the property NoStuckState: left out too
    return model, scenario




def judged_by(properties: str, only: frozenset | None = None) -> tuple:
    """The monitors for ``--properties``: the one rule monitor set, the matrix's goals, or both; with ``only``,
    just the monitors of the properties it names (the others are not stepped, so not evaluated)."""
    from acplab.model.acp.goals import GOALS
    from acplab.model.acp.monitor_set import monitor_set

    goals = tuple(g for g in GOALS if only is None or g.name in only)
    return {"rules": lambda: monitor_set(only=only), "goals": lambda: goals,
            "all": lambda: monitor_set(only=only) + goals}[properties]()


def bounds_text(bounds) -> str:
    """The bounds in one line: clients, prompts and contents always, the rest where not the default."""
    defaults = type(bounds)._field_defaults
    shown = []
    for name, value in bounds._asdict().items():
        if name in ("clients", "prompts", "contents") or value != defaults[name]:
            shown.append(f"{name}={','.join(value) if isinstance(value, tuple) else _word(value)}")
    return " ".join(shown)


def _word(value) -> str:
    return {True: "yes", False: "no", None: "none"}.get(value, str(value)) if isinstance(value, (bool, type(None))) \
        else str(value)


#: the largest value ``--set`` accepts for a count (the same maxima as the shortcut options, see option_groups.MAXIMA)
BOUND_MAXIMA = {"clients": 8, "prompts": 16, "drops": 16, "disconnects": 16, "cancels": 16, "cancel_requests": 16,
                "failures": 16, "restarts": 16, "imports": 16, "own_work": 16, "contents": 16}


def parse_bounds(settings, **shortcuts) -> dict:
    """Bound overrides from ``--set KEY=VALUE`` items and the shortcut options (``--clients`` ...).

    Every field of the ACP model's bounds can be set: counts are whole
    numbers (``clients`` at least 1), switches are yes/no, ``contents`` is a
    comma-separated list of prompt texts.  Unknown keys, bad values and a
    bound given twice are input errors.
    """
    from acplab.model.acp.model import Bounds

    out = {k: v for k, v in shortcuts.items() if v is not None}
    defaults = Bounds._field_defaults
    for item in settings:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise InputError(f"--set: expected KEY=VALUE, got '{item}'")
        if key not in defaults:
            raise InputError(f"--set: unknown bound '{key}'; known: {', '.join(defaults)}")
        if key in out:
            raise InputError(f"--set: bound '{key}' given twice")
        out[key] = _bound_value(key, value.strip(), defaults[key])
    return out


def _bound_value(key: str, text: str, default):
    if isinstance(default, bool):
        words = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
        if text.lower() not in words:
            raise InputError(f"--set: {key} is yes or no, got '{text}'")
        return words[text.lower()]
    if isinstance(default, tuple):
        items = tuple(t.strip() for t in text.split(",") if t.strip())
        if not items:
            raise InputError(f"--set: {key} needs at least one text, e.g. {key}=hi,yes")
        if len(items) > BOUND_MAXIMA.get(key, len(items)):
            raise InputError(f"--set: {key} has at most {BOUND_MAXIMA[key]} texts, got {len(items)}")
        return items
    if not (text.isascii() and text.isdigit()) or len(text) > 9 or (key == "clients" and int(text) < 1):
        raise InputError(f"--set: {key} is a whole number{' of at least 1' if key == 'clients' else ''}, got '{text}'")
    most = BOUND_MAXIMA.get(key)
    if most is not None and int(text) > most:
        raise InputError(f"--set: {key} is at most {most}, got {text}")
    return int(text)


def acp_target(spec: str, scenario: str | None, bounds: dict, symmetry: bool, properties: str = "rules",
               only: Selection | None = None) -> Target:
    from acplab.model.render.runview import acp_run

    model, sc = acp_model(spec, scenario, symmetry, properties=properties, only=only, **bounds)
    where = f"spec {spec}, scenario {sc.name}"
    header = f"check {where}: bounds {bounds_text(model.bounds)}; symmetry {'on' if symmetry else 'off'}"
    facts = [("model", "acp (the ACP v2 prompt lifecycle)"), ("spec", f"{spec}: {model.spec.description}"),
             ("scenario", f"{sc.name}: {sc.description}"), ("bounds", bounds_text(model.bounds)),
             ("symmetry", "clients are interchangeable" if symmetry else "off"),
             ("monitors", {"rules": MONITORS_FACT, "goals": GOALS_FACT,
                           "all": f"{MONITORS_FACT}; and {GOALS_FACT}"}[properties])]

    encoded: dict = {}  # id(path) -> (path, its wire records): each message encoded once, for files and page

    def records_of(path):
        hit = encoded.get(id(path))
        if hit is None or hit[0] is not path:
            hit = encoded[id(path)] = (path, wire_records(path.actions_with_effects()))
        return hit[1]

    def write(base, model, path, title, violation, rules, itf=None):
        return write_behaviour(base, model, path.actions_with_effects(), title, violation, rules,
                               loop_start=path.loop_start, records=records_of(path), itf=itf, judge=wire_visibility)

    def view(*args, **kw):
        return acp_run(*args, records=records_of(args[5]), **kw)

    def prepare(search: Search) -> str | None:
        from acplab.model.acp.reduction import reduce

        return reduce(model) if search.por and not search.walk else None

    def unused(actions: dict) -> list[str]:
        from acplab.model.acp.unused_bounds import bound_warnings

        return bound_warnings(model.bounds, actions)

    # what a checkpoint is of (with the acplab version and the model code, which the checkpoint adds): the
    # spec by its every switch, so a spec file edited between two runs is another search
    identity = f"acp {spec} switches={spec_digest(model.spec)} {sc.name} {tuple(model.bounds)} symmetry={symmetry} monitors={properties}"
    summary = dict(model="acp", spec=spec, scenario=sc.name, bounds=model.bounds._asdict(), properties=properties)
    if only is not None:
        identity += f" only={','.join(sorted(only.names))} witnesses={','.join(w for w, *_ in model.witnesses)}"
        summary.update(checked_only=sorted(only.names), left_out=only.left_out(properties, sc.witnesses))
        facts.append(("properties", f"only {', '.join(sorted(only.names))}; {len(summary['left_out'])} left out"))
    declared = {p: f"not applicable: {why}" for p, why in model.spec.not_applicable} | {
        p: f"by design: {why}" for p, why in model.spec.by_design}
    return Target(model, f"{spec}-{sc.name}", header, facts, where, write, view, summary, identity, prepare, unused,
                  declared)


def bridge_target(name: str, mutant: str) -> Target:
    from acplab.model.acp.bridges import BRIDGE_MODELS, MUTANT_INFO, MUTANTS
    from acplab.model.render.runview import bridge_run

    if mutant != "rfd" and mutant not in MUTANTS[name]:
        raise InputError(f"unknown bridge mutant '{mutant}' for bridge-{name}; known: rfd, {', '.join(MUTANTS[name])}")
    model = BRIDGE_MODELS[name](mutant=None if mutant == "rfd" else mutant)
    what = "the conforming bridge" if mutant == "rfd" else f"mutant: {MUTANT_INFO[mutant][0]}"
    where = f"model bridge-{name}, spec {mutant}"
    header = f"check {where} ({what}); bounds: one prompt through the bridge, fixed by the model"
    facts = [("model", f"bridge-{name}: {type(model).__doc__.strip().splitlines()[0]}"), ("spec", f"{mutant}: {what}"),
             ("bounds", "one prompt, four FIFO channels (client, bridge, agent), fixed by the model")]
    return Target(model, f"bridge-{name}-{mutant}", header, facts, where, write_bridge_behaviour, bridge_run,
                  dict(model=f"bridge-{name}", spec=mutant), f"bridge-{name} {mutant}")


def twophase_target(rms: int, broken: bool, symmetry: bool) -> Target:
    from acplab.model.engine.twophase import TwoPhase
    from acplab.model.render.runview import state_run

    model = TwoPhase(rms, broken=broken, symmetry=symmetry)
    spec = "broken" if broken else "twophase"
    where = f"model twophase, spec {spec}"
    header = f"check {where}: {rms} resource managers; symmetry {'on' if symmetry else 'off'}"
    facts = [("model", "twophase: TLA+'s two-phase commit, the engine's validation model"),
             ("spec", "broken: the TM may commit without every Prepared" if broken else "twophase"),
             ("bounds", f"rms={rms}"), ("symmetry", "on" if symmetry else "off")]

    def write(base, model, path, title, violation, rules, itf=None):
        if itf is not None:
            raise InputError("--itf: TwoPhase has no wire to write as an ITF trace; use --model acp or a bridge")
        txt = base.with_suffix(".txt")
        write_atomic(txt, state_diff_trace(model, path, title))
        return [str(txt)]

    return Target(model, f"twophase-{rms}" + ("-broken" if broken else ""), header, facts, where, write, state_run,
                  dict(model="twophase", spec=spec, rms=rms), f"twophase rms={rms} broken={broken} symmetry={symmetry}")


# -- one check ------------------------------------------------------------


def witness_names(model, requested) -> list[str]:
    """The witnesses to write: none, all of the model's, or the named ones (unknown names are input errors)."""
    known = [p.name for p in model.properties() if p.expectation == "sometimes"]
    if not requested:
        return []
    if requested == "all":
        return known
    unknown = [w for w in requested if w not in known]
    if unknown:
        raise InputError(f"unknown witness {', '.join(unknown)}; this check has: {', '.join(known) or 'none'}")
    return list(dict.fromkeys(requested))


def run_check(target: Target, limits: Limits, opts: Output, search: Search = Search()) -> int:
    """Explore (or walk), print, write the runs (and the report); return the exit code."""
    model = target.model
    wanted = witness_names(model, opts.witnesses)
    if not opts.as_json:
        click.echo(target.header)
    why_not = target.prepare(search) if target.prepare is not None else None
    with Progress("check", quiet=opts.quiet or opts.as_json) as shown:
        result = search.run(model, limits, shown.stats, f"{target.identity} por={search.por}")
    found = [w for w in wanted if result.witnesses.get(w) is not None]
    folder = None
    if result.violations or result.warnings or found or opts.html:
        folder = fresh_out_dir(opts.out, target.stem)
    files, runs = write_runs(target, result, found, folder, opts.html, opts.itf)
    summary = result_json(result, **target.summary)
    summary.update(search.json(result))
    if why_not:
        summary["note"] = "; ".join(filter(None, [summary.get("note"), f"no partial-order reduction: {why_not}"]))
    summary.update(violations_json(result, files))
    for row in summary["violations"]:
        if row["property"] in target.declared:
            row["declared"] = target.declared[row["property"]]
    summary["warnings"] = warnings_json(result, files, {p.name: p.rules for p in model.properties()})
    summary["witnesses"] = witnesses_json(result, files, wanted)
    if result.coverage is not None:
        unused = target.coverage_warnings(result.coverage.actions) if target.coverage_warnings else []
        summary["coverage"] = coverage_json(result, unused)
    if opts.html:
        from .pages import check_page, write_page

        summary["report"] = write_page(folder, check_page(target, result, summary, runs))
    emit(summary, opts.as_json)
    return exit_code(result.verdict)


def write_runs(target: Target, result: Result, witnesses: list[str], folder, html: bool, itf: bool = False):
    """Files per counterexample and per witness run (and an ITF trace when ``itf``); the report's runs when ``html``."""
    from .schemas import SCHEMA_VERSION

    model = target.model
    files: dict[str, list[str]] = {}
    runs: list[dict] = []
    todo = [("counterexample", v.property.name, v.property, v.path, (v.property.name, v.sentence))
            for v in result.violations + result.warnings]
    props = {p.name: p for p in model.properties()}
    todo += [("witness", w, props[w], result.witnesses[w], None) for w in witnesses]
    for kind, name, prop, path, violation in todo:
        rules = ", ".join(prop.rules) or "no rule"
        if violation:
            what = "warning" if prop.severity == "warning" else "violated"
            loop = "" if path.loop_start is None else f", looping from step {path.loop_start + 1}"
            title = f"{name} [{rules}] {what} in {len(path)} steps{loop} ({target.spec_label})"
        else:
            title = f"witness {name} [{rules}] reached in {len(path)} steps ({target.spec_label})"
        base = folder / (name if violation else f"witness-{name}")
        about = {"schema_version": SCHEMA_VERSION, "kind": kind, "property": name, "rules": list(prop.rules)}
        files[name] = target.write(base, model, path, title, violation, prop.rules, itf=about if itf else None)
        if html:
            runs.append(target.view(f"run{len(runs) + 1}", kind, name, title, model, path, violation=violation,
                                    rules=prop.rules, files=files[name]))
    return files, runs


def spec_digest(spec) -> str:
    """A digest of a spec by its every field, in order: what a checkpoint's search and a matrix cache entry's
    model are of (a spec file edited between two runs is another model)."""
    text = json.dumps(list(spec), default=lambda v: sorted(v, key=repr))  # no salted set order in it
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def write_acp_counterexamples(model, result: Result, out, stem: str) -> dict[str, list[str]]:
    """Per violated property: numbered text trace, capture-format wire log, Mermaid diagram."""
    folder = fresh_out_dir(out, stem)
    files: dict[str, list[str]] = {}
    for v in result.violations + result.warnings:
        rules = ", ".join(v.property.rules)
        what = "warning" if v.property.severity == "warning" else "violated"
        loop = "" if v.path.loop_start is None else f", looping from step {v.path.loop_start + 1}"
        title = f"{v.property.name} [{rules}] {what} in {len(v.path)} steps{loop} (spec {model.spec.name})"
        files[v.property.name] = write_behaviour(folder / v.property.name, model, v.path.actions_with_effects(), title,
                                                 (v.property.name, v.sentence), v.property.rules,
                                                 loop_start=v.path.loop_start, judge=wire_visibility)
    return files


def complete_path(model, path, limit: int = 200):
    """Carry a path on, taking only the model's weakly fair actions (its ``fairness_class`` hook; for ACP,
    :mod:`acplab.model.acp.fairness`: no fault, no user decision, no optional choice of the agent's), until none is.

    Each step takes the first such enabled action, so the result is deterministic.
    """
    fair = hooks_of(model).fairness_class or (lambda _action: None)
    more, ordinals = [], []
    state = path.last_state
    for _ in range(limit):
        choice = next(((i, s) for i, s in enumerate(model.successors(state)) if fair(s[0]) is not None), None)
        if choice is None:
            break
        i, successor = choice
        more.append(successor)
        ordinals.append(i)
        state = successor[1]
    return path.extended(more, ordinals)




def violations_json(result: Result, files: dict) -> dict:
    rows = [
        {
            "property": v.property.name,
            "rules": list(v.property.rules),
            "trace_length": len(v.path),
            "files": files.get(v.property.name, []),
            "sentence": v.sentence,
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


def witnesses_json(result: Result, files: dict | None = None, wanted=()) -> dict:
    out = {
        "found": sorted(n for n, p in result.witnesses.items() if p is not None),
        "missing": sorted(result.missing_witnesses),
    }
    if wanted:
        out["files"] = {w: files.get(w, []) for w in wanted if result.witnesses.get(w) is not None}
    return out


def emit(summary: dict, as_json: bool) -> None:
    if as_json:
        print_json(summary)
        return
    head = f"{summary['verdict']}: {summary['states']:,} states, {summary['transitions']:,} transitions, " \
           f"depth {summary['depth']}, {summary['seconds']:.2f} s"
    if summary.get("limit"):
        head += f" (stopped at {summary['limit']})"
    click.echo(head)
    if summary.get("stopped_at_first_violation"):
        steps = max(v["trace_length"] for v in summary["violations"] if not v.get("missing_witness"))
        click.echo(f"  stopped at the first violation: every property violated in {steps} steps is listed, each "
                   "shortest; --continue explores on to find every violated property")
    if summary.get("checked_only"):
        click.echo(f"  checked only {', '.join(summary['checked_only'])}; left out (not evaluated): "
                   f"{', '.join(summary['left_out']) or 'nothing'}")
    if summary.get("reduced"):
        confirmed = summary.get("confirmed_states")
        click.echo("  partial-order reduction" + (
            f"; counterexamples confirmed shortest by an unreduced search ({confirmed:,} states)"
            if confirmed is not None else "; counterexamples shortest as found (the reduction chose no successors "
            "above their depth)" if summary.get("confirmed_by") else ""))
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
        rules = ", ".join(v["rules"]) or "no rule"
        click.echo(f"  violated {v['property']} [{rules}] in {v['trace_length']} steps: {v['sentence']}")
        if v.get("declared"):
            click.echo(f"    the spec declares it {v['declared']}")
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
    for name, paths in summary["witnesses"].get("files", {}).items():
        click.echo(f"  witness run {name}:")
        for f in paths:
            click.echo(f"    {f}")
    for w in summary.get("coverage", {}).get("warnings", ()):
        click.echo(f"  coverage: {w}")
    if summary.get("report"):
        click.echo(f"  report: {summary['report']}")
