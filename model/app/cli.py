"""The ``acplab`` command line (DESIGN.md, "Command line contract").

Exit codes: 0 every property holds (complete exploration), 1 a property is
violated, 2 bad usage or bad input (one line on stderr, no traceback),
3 incomplete (a limit was hit and nothing was violated).  With ``--json`` a
command prints one JSON object even on exit 2: ``{"verdict": "error",
"error": "..."}``.

Numeric options are finite and within documented maxima (:data:`MAXIMA`),
checked before any work starts; so are output folders.
"""

from __future__ import annotations

import math
import os
import sys

import click

from acplab.model.errors import InputError

from .checking import BOUND_MAXIMA

#: upper bounds of the explorer's options.  The state space grows by a factor of about
#: 3-10 per added client or prompt (default scenario: 2 clients 54k states in 4 s; 3 clients
#: over 160k states in 20 s) and the explorer keeps about 1 KB per state, so --max-states
#: 10^9 may need up to ~1 TB; a state's successors cost about clients^2.
MAXIMA = {**BOUND_MAXIMA, "rms": 16, "max_states": 10 ** 9, "max_seconds": 1e6, "workers": 256, "max_depth": 10 ** 6,
          "walk": 10 ** 9, "seed": 2 ** 63 - 1}


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="acplab")
def cli() -> None:
    """acplab: explore, simulate and check the ACP v2 prompt lifecycle."""


QUIET_HELP = "No progress display and no notes on stderr; stdout and the exit code stay the same."


def _number(value) -> str:
    """A number for a message (an int past 4,300 digits has no str)."""
    try:
        text = str(value)
    except ValueError:
        return "a number too long to show"
    return text if len(text) <= 40 else text[:37] + "..."


def _int_in(low: int, key: str | None = None):
    """A callback: an integer from ``low`` to ``MAXIMA[key]`` (no maximum without a key)."""

    def callback(ctx, param, value):
        if value is None:
            return value
        high = MAXIMA.get(key) if key else None
        if value < low or (high is not None and value > high):
            allowed = f"{low}..{high:,}" if high is not None else f"at least {low}"
            raise click.BadParameter(f"must be {allowed}, got {_number(value)}")
        return value

    return callback




def _seconds(ctx, param, value):
    """A time limit: finite, positive, at most ``MAXIMA['max_seconds']``."""
    if value is not None and not (math.isfinite(value) and 0 < value <= MAXIMA["max_seconds"]):
        raise click.BadParameter(f"must be a number of seconds in (0, {MAXIMA['max_seconds']:g}], got {value}")
    return value


def _interval(ctx, param, value):
    """A period: finite, 0 (every level) up to ``MAXIMA['max_seconds']``."""
    if value is not None and not (math.isfinite(value) and 0 <= value <= MAXIMA["max_seconds"]):
        raise click.BadParameter(f"must be a number of seconds in [0, {MAXIMA['max_seconds']:g}], got {value}")
    return value


def _finite(ctx, param, value):
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"must be a finite number, got {value}")
    return value


@cli.command()
@click.option("--model", "model_name", type=click.Choice(["acp", "twophase", "bridge-v1-agent", "bridge-v2-agent"]),
              default="acp", show_default=True,
              help="acp; twophase (the engine's validation model); the v1<->v2 bridges (--spec names a mutant).")
@click.option("--spec", default="rfd", show_default=True, help="Variant of the ACP model (see `acplab specs`).")
@click.option("--spec-file", type=click.Path(dir_okay=False), default=None,
              help="A variant written as a TOML file (see the README's 'Adding a variant'); replaces --spec.")
@click.option("--scenario", default=None, help="Named scenario (see `acplab scenarios`).")
@click.option("--clients", type=int, default=None, callback=_int_in(1, "clients"),
              help=f"Clients sharing the session (at most {MAXIMA['clients']}).")
@click.option("--prompts", type=int, default=None, callback=_int_in(0, "prompts"), help="Prompts submitted in all.")
@click.option("--drops", type=int, default=None, callback=_int_in(0, "drops"), help="Messages the network may drop.")
@click.option("--disconnects", type=int, default=None, callback=_int_in(0, "disconnects"), help="Connection cuts allowed.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="Any other bound a scenario sets (failures, cancels, cancel_requests, restarts, imports, chunks, "
                   "tools, permission, contents=hi,yes, ...); repeatable.")
@click.option("--rms", type=int, default=None, callback=_int_in(1, "rms"), help="TwoPhase resource managers (default 3).")
@click.option("--broken", is_flag=True, help="TwoPhase: let the TM commit without all Prepared.")
@click.option("--max-states", type=int, default=None, callback=_int_in(1, "max_states"),
              help="Stop after this many states (about 1 KB of memory each).")
@click.option("--max-seconds", type=float, default=None, callback=_seconds)
@click.option("--symmetry/--no-symmetry", default=None,
              help="Symmetry reduction: clients (ACP) or RMs (TwoPhase) are interchangeable. "
                   "Default: on for ACP; off for TwoPhase, whose published counts are without it.")
@click.option("--witness", "witness", multiple=True, metavar="NAME",
              help="Also write the shortest run to this witness, like a counterexample; repeatable.")
@click.option("--witnesses", "all_witnesses", is_flag=True, help="Also write the shortest run to every witness.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Folder for the runs' files and the report.")
@click.option("--html", is_flag=True, help="Also write OUT/report.html: one self-contained page that steps through "
                                           "every counterexample and witness run.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
@click.option("--workers", type=int, default=None, callback=_int_in(1, "workers"),
              help="Processes sharing the search (default: one per core); results are the same for any number.")
@click.option("--por/--no-por", default=True, show_default=True,
              help="Partial-order reduction (ACP): fewer states, same verdicts, counterexamples confirmed shortest.")
@click.option("--checkpoint", type=click.Path(file_okay=False), default=None,
              help="Folder (new, empty, or a checkpoint) for snapshots between levels; a killed check run "
                   "again with it resumes.")
@click.option("--checkpoint-every", type=float, default=60.0, show_default=True, callback=_interval,
              help="Seconds between snapshots (0: after every level).")
@click.option("--max-depth", type=int, default=None, callback=_int_in(1, "max_depth"),
              help="Explore at most this many steps deep (the run is then incomplete); the walk length for --walk.")
@click.option("--walk", type=int, default=None, callback=_int_in(1, "walk"),
              help="Random walks instead of an exhaustive search: hunt bugs beyond the bounds (never holds).")
@click.option("--seed", type=int, default=0, show_default=True, callback=_int_in(0, "seed"),
              help="Seed of the random walks.")
@click.pass_context
def check(ctx, model_name, spec, spec_file, scenario, clients, prompts, drops, disconnects, settings, rms,
          broken,
          max_states, max_seconds, symmetry, witness, all_witnesses, as_json, out, html, quiet, workers, por,
          checkpoint, checkpoint_every, max_depth, walk, seed):
    """Explore every interleaving within bounds and check the rules."""
    from acplab.model.engine import Limits

    from . import checking
    from acplab.model.render.artefacts import check_out_dir

    check_out_dir(out, "check")
    _reject_ignored(ctx, model_name)
    spec = _spec_from_file(ctx, spec, spec_file)
    opts = checking.Output(as_json, quiet, out, html, "all" if all_witnesses else (witness or None))
    if model_name.startswith("bridge-"):
        target = checking.bridge_target(model_name[len("bridge-"):], spec)
    elif model_name == "twophase":
        target = checking.twophase_target(rms or 3, broken, bool(symmetry))
    else:
        bounds = checking.parse_bounds(settings, clients=clients, prompts=prompts, drops=drops,
                                       disconnects=disconnects)
        target = checking.acp_target(spec, scenario, bounds, symmetry is not False)
    search = checking.Search(workers, por, checkpoint, checkpoint_every, walk, seed, max_depth)
    sys.exit(checking.run_check(target, Limits(max_states, max_seconds), opts, search))


#: the options of `check` each kind of model reads; giving another one is an error, not silently ignored
_CHECK_OPTIONS = {
    "acp": {"spec", "spec_file", "scenario", "clients", "prompts", "drops", "disconnects", "settings", "symmetry"},
    "twophase": {"rms", "broken", "symmetry"},
    "bridge": {"spec"},
}
_CHECK_COMMON = {"model_name", "max_states", "max_seconds", "witness", "all_witnesses", "as_json", "out", "html", "quiet",
                 "workers", "por", "checkpoint", "checkpoint_every", "max_depth", "walk", "seed"}


def _spec_from_file(ctx, spec: str, spec_file: str | None) -> str:
    """The spec to use: a spec file's (loaded and registered for this process) or ``--spec``'s."""
    if spec_file is None:
        return spec
    from click.core import ParameterSource

    if ctx.get_parameter_source("spec") == ParameterSource.COMMANDLINE:
        raise click.UsageError("--spec and --spec-file are exclusive: the file names its own spec")
    from acplab.model.acp.specfile import load_and_register

    return load_and_register(spec_file)


def _reject_ignored(ctx, model_name: str) -> None:
    """An option the chosen model does not read is a usage error naming it."""
    from click.core import ParameterSource

    allowed = _CHECK_OPTIONS["bridge" if model_name.startswith("bridge-") else model_name] | _CHECK_COMMON
    for param in ctx.command.params:
        if param.name not in allowed and ctx.get_parameter_source(param.name) == ParameterSource.COMMANDLINE:
            names = "/".join(o for o in param.opts + param.secondary_opts if o.startswith("--"))
            raise click.UsageError(f"{names} does not apply to --model {model_name}")


@cli.group()
def trace() -> None:
    """Record and check wire traffic in the capture format (JSON Lines)."""


@trace.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Capture file (JSON Lines).")
@click.option("--append", is_flag=True, help="Add to an existing capture, continuing its seq numbers.")
@click.option("--force", is_flag=True, help="Overwrite an existing capture.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def record(out, append, force, quiet, command):
    """Run COMMAND (an agent) behind a transparent stdio proxy and capture its traffic.

    Use in place of the agent command: acplab trace record --out FILE.jsonl -- AGENT [ARGS...]
    """
    from acplab.model.trace import record as recording

    if not command:
        raise click.UsageError("missing COMMAND: acplab trace record --out FILE.jsonl -- COMMAND [ARGS...]")
    sys.exit(recording.record(list(command), out, append=append, force=force))


@trace.command(name="check")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--spec", default=None, type=click.Choice(["rfd", "v2-draft", "v1"]),
              help="Judge every connection by this dialect (default: each connection's initialize, else rfd).")
@click.option("--complete", is_flag=True,
              help="The recording ended at rest: obligations still open at its end are violations, not warnings.")
@click.option("--internal", "internal", type=click.Path(dir_okay=False), default=None, metavar="EVENTS.jsonl",
              help="Sidecar of agent- or client-internal events (insert, work_start, ...); see the README.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Folder for a Mermaid diagram and a JSONL window per violation (never overwritten).")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
def trace_check(file, spec, complete, internal, as_json, out, quiet):
    """Check a capture (JSON Lines) against the rules an observer of the wire can check.

    Exit 0 holds (warnings may be listed), 1 violated (including damaged lines inside a capture),
    2 bad input (unreadable or empty file, first line not a capture record, a bad sidecar).
    """
    from . import tracing
    from acplab.model.render.artefacts import check_out_dir

    if out is not None:
        check_out_dir(out, "trace")
    result = tracing.check_and_write(file, spec=spec, out=out, complete=complete, internal=internal)
    tracing.print_result(result, as_json, echo=click.echo)
    sys.exit(result.exit_code)


@cli.command()
@click.argument("rule_id", required=False, metavar="[ID]")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {id, text, strength, checkable, monitors, mutants}.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
def rules(rule_id, as_json, quiet):
    """The rules catalogue acplab cites: each rule, the monitors that check it and the mutants that break it."""
    from . import tracing

    tracing.print_rules(tracing.rules_rows(rule_id), as_json, echo=click.echo)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
def specs(as_json, quiet):
    """List the spec variants and mutants, and the bridges' mutants, one line each."""
    from acplab.model.acp.bridges import MUTANT_INFO, MUTANTS as BRIDGE_MUTANTS, mutant_rules
    from acplab.model.acp.killers import spec_rules
    from acplab.model.acp.spec import FINDINGS, MUTANTS, SPECS, VARIANTS

    rows = []
    for name, spec in SPECS.items():
        kind = "mutant" if name in MUTANTS else "finding" if name in FINDINGS else \
            "variant" if name in VARIANTS else "spec"
        rows.append({"name": name, "kind": kind, "model": "acp", "description": spec.description,
                     "rules": list(spec_rules(name))})
    for model, mutants in BRIDGE_MUTANTS.items():
        for name in mutants:
            rows.append({"name": name, "kind": "bridge mutant", "model": f"bridge-{model}",
                         "description": f"bridge-{model}: {MUTANT_INFO[name][0]}",
                         "rules": list(mutant_rules(model, name))})
    _list_out(rows, as_json)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
def properties(as_json, quiet):
    """List every property: expectation, rules, wire-checkable, and the specs that violate it (killed_by)."""
    from . import checking

    rows = checking.property_rows()
    if as_json:
        from .report import print_json

        print_json(rows)
    else:
        checking.print_properties(rows)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
def scenarios(as_json, quiet):
    """List the named scenarios with their rule IDs, one line each."""
    from acplab.model.acp.scenarios import SCENARIOS

    rows = [
        {"name": s.name, "description": s.description, "rules": list(s.rules), "witnesses": list(s.witnesses),
         "catches": list(s.catches), "races": list(s.races), "bounds": s.bounds._asdict()}
        for s in SCENARIOS.values()
    ]
    _list_out(rows, as_json)


def _list_out(rows: list[dict], as_json: bool) -> None:
    if as_json:
        from .report import print_json

        print_json(rows)
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        rules = f" [{', '.join(r['rules'])}]" if r["rules"] else ""
        click.echo(f"{r['name']:<{width}}  {r['description']}{rules}")


@cli.command()
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Figures folder (default: the project's figures/).")
@click.option("--check", "check_only", is_flag=True,
              help="Regenerate into a temporary folder; exit 1 naming every file that differs from --out.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
def figures(out, check_only, quiet):
    """Regenerate every figure (sequence and state diagrams, README) deterministically."""
    from . import figures as figs

    sys.exit(figs.run(out, check_only))


@cli.command()
@click.option("--spec", default="rfd", show_default=True, help="Variant of the ACP model (see `acplab specs`).")
@click.option("--spec-file", type=click.Path(dir_okay=False), default=None,
              help="A variant written as a TOML file; replaces --spec.")
@click.option("--clients", type=int, default=2, show_default=True, help="Clients sharing the session.")
@click.option("--sessions", type=int, default=100, show_default=True, help="Independent runs (sub-seeds of --seed).")
@click.option("--prompts", type=int, default=3, show_default=True, help="Prompts each client submits per run (retries on top).")
@click.option("--latency", type=float, default=50.0, show_default=True, callback=_finite,
              help="Mean one-way network latency, ms.")
@click.option("--drop", type=float, default=0.0, show_default=True, callback=_finite,
              help="Probability a message is lost.")
@click.option("--disconnect-rate", type=float, default=0.0, show_default=True, callback=_finite,
              help="Connection cuts per second per client.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--duration", type=float, default=600.0, show_default=True, callback=_finite,
              help="Simulated seconds per run at most.")
@click.option("--on-violation", type=click.Choice(["stop", "count", "continue"]), default="continue", show_default=True,
              help="continue: record and go on in the run (metrics from all runs); count: end that run, go on; "
                   "stop: end at the first violation (with count and stop, metrics from completed runs only).")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="Any other simulation parameter (fail, reject, cancel, replay, step_ms, ...); repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Folder for violation artefacts and plots (fresh: a non-empty one gets a numbered sibling).")
@click.option("--html", is_flag=True, help="Also write OUT/report.html: metrics, coverage, and the first run that "
                                           "violated each monitor, to step through.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
@click.pass_context
def simulate(ctx, spec, spec_file, clients, sessions, prompts, latency, drop, disconnect_rate, seed, duration,
             on_violation, settings, as_json, out, html, quiet):
    """Simulate timed, stochastic sessions: live monitors, metrics with 95% intervals, fault-window coverage."""
    spec = _spec_from_file(ctx, spec, spec_file)
    from .report import print_json
    from acplab.model.render.artefacts import check_out_dir, fresh_out_dir
    from acplab.simulations.params import SimParams, check_cost
    from acplab.simulations.simulate import cli_progress, exit_code, print_table, simulate as run_simulation

    values = dict(spec=spec, clients=clients, sessions=sessions, prompts=prompts, latency_ms=latency, drop=drop,
                  disconnect_rate=disconnect_rate, seed=seed, duration_s=duration, on_violation=on_violation)
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"expected KEY=VALUE, got '{item}'", param_hint="'--set'")
        values[key.strip()] = value.strip()
    params = SimParams.from_mapping(values, "simulate")
    check_cost(params.estimated_seconds(), "simulate")
    if out is None:
        check_out_dir(None, "simulate-" + spec)
        artefacts = "acplab-out/simulate-" + spec
    else:  # claimed now: the plots and any violation's files go into this one fresh folder
        artefacts = out = str(fresh_out_dir(out, "simulate-" + spec))
    bar = cli_progress(quiet or as_json, params.sessions)
    if bar is None:
        result = run_simulation(params, artefacts)
    else:
        with bar:
            task = bar.add_task("runs", total=params.sessions)
            result = run_simulation(params, artefacts, lambda done, total: bar.update(task, completed=done))
    summary = result.to_json()
    folder = result.folder
    if folder is None and (out is not None or html):
        folder = fresh_out_dir(artefacts, f"simulate-{spec}")
    if out is not None:
        from acplab.simulations.plots import plot_simulation

        summary["plots"] = plot_simulation(result, folder)
    if html:
        from .pages import simulate_page, write_page

        summary["report"] = write_page(folder, simulate_page(result, summary))
    if as_json:
        print_json(summary)
    else:
        print_table(summary)
        if html:
            click.echo(f"report: {summary['report']}")
    sys.exit(exit_code(result))


@cli.command()
@click.argument("config", type=click.Path(exists=True, dir_okay=False))
@click.option("--executor", default="local", show_default=True, help="local (processes) or dask://HOST:PORT.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Folder for results.jsonl and summary.json.")
@click.option("--workers", type=int, default=None, callback=_int_in(1, "workers"),
              help="Local worker processes (default: CPU count).")
@click.option("--plots/--no-plots", default=False, help="Draw the sweep's figures into OUT.")
@click.option("--fresh", is_flag=True,
              help="Discard OUT's results of an earlier sweep (needed when the configuration changed).")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
def sweep(config, executor, out, workers, plots, fresh, quiet):
    """Run a grid of simulations (TOML or JSON CONFIG); results are appended and an interrupted sweep resumes.

    A rerun with a changed configuration refuses (exit 2) unless --fresh; one sweep at a time per OUT.
    """
    from acplab.simulations.sweep import load_config, run_sweep

    cfg = load_config(config)
    folder = out if out is not None else "acplab-out/sweep-" + __import__("pathlib").Path(config).stem
    sys.exit(run_sweep(cfg, folder, executor=executor, workers=workers, plots=plots, quiet=quiet, fresh=fresh))


@cli.command()
@click.option("--spec", "specs", multiple=True,
              help="Variants to include (default: rfd and every variant); rfd is always the baseline.")
@click.option("--spec-file", "spec_files", multiple=True, type=click.Path(dir_okay=False),
              help="A variant written as a TOML file, added as a row; repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print the matrix as one JSON object.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Folder for matrix.json, matrix.md and the counterexamples (default: a fresh acplab-out/matrix).")
@click.option("--jobs", type=int, default=None, callback=_int_in(1, "workers"),
              help="Worker processes (default: one per core).")
@click.option("--max-seconds", type=float, default=None, callback=_seconds,
              help="Limit per run (cells become incomplete).")
@click.option("--executor", default="local", show_default=True,
              help="Where the runs go: local (processes), serial, or dask://HOST:PORT (as for sweep).")
@click.option("--html", is_flag=True, help="Also write OUT/report.html: the matrix with every violated cell's "
                                           "counterexample to step through.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
def matrix(specs, spec_files, as_json, out, jobs, max_seconds, executor, html, quiet):
    """Check every variant against the design-neutral goals, then the RFD's rules.

    Cells: holds / violated / by design / incomplete / n/a.  Exit 1 if the rfd row violates a rule
    or a goal the RFD does not declare as a limitation, 3 if a cell is incomplete, else 0.
    """
    import json as _json

    from . import matrix as mx
    from .matrix_report import SYMBOL, markdown, table_text
    from acplab.model.render.artefacts import fresh_out_dir
    from .report import print_json
    from acplab.model.acp.spec import get_spec
    from acplab.model.acp.specfile import load_and_register

    for name in specs:
        get_spec(name)
    specs = list(specs) + [load_and_register(path) for path in spec_files]
    folder = fresh_out_dir(out, "matrix")
    if not as_json:
        names = list(specs) or mx.variant_names()
        click.echo(f"matrix: {len(names)} variants x {len(mx.GOAL_NAMES)} goals and {len(mx.PROPERTIES)} rules over "
                   f"{len(mx.MATRIX_RUNS)} scenarios, each at its own bounds: "
                   f"{', '.join(name for name, _ in mx.MATRIX_RUNS)}; and the v1<->v2 bridges")
    show = not quiet and not as_json and sys.stderr.isatty()
    result = mx.run_matrix(specs or None, str(folder), jobs, max_seconds, _run_counter if show else None, executor, html)
    if html:
        from .pages import matrix_page, write_page

        report = write_page(folder, matrix_page(result, folder, SYMBOL))
        result = {k: v for k, v in result.items() if k != "report_runs"} | {"report": report}
    (folder / "matrix.json").write_text(_json.dumps(result, indent=2, allow_nan=False) + "\n")
    (folder / "matrix.md").write_text(markdown(result, str(folder)))
    if as_json:
        print_json(result)
    else:
        click.echo(table_text(result))
        click.echo(f"\n{result['states']:,} states in {result['seconds']:.1f} s; wrote {folder}/matrix.md")
        if html:
            click.echo(f"report: {result['report']}")
    sys.exit(mx.rfd_exit_code(result))


def _run_counter(done: int, total: int) -> None:
    click.echo(f"\r{done}/{total} runs", err=True, nl=done == total)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the group; turn every failure into one line on stderr and exit 2.

    With ``--json`` (before any ``--``) the failure is also one JSON object on
    stdout, unless the command already printed its own.  Untrusted text is
    escaped for the terminal (:func:`report.terminal_text`).  ``ACPLAB_DEBUG=1``
    lets an internal error show its traceback.
    """
    from . import report

    args = sys.argv[1:] if argv is None else list(argv)
    if argv is None:
        from .steady_hashes import reexec_for_checkpoints

        reexec_for_checkpoints(args)
    wants_json = "--json" in (args[: args.index("--")] if "--" in args else args)
    report.reset()
    try:
        cli.main(args=args, prog_name="acplab", standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("acplab: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        _fail(err.format_message(), wants_json)
    except InputError as err:
        _fail(str(err), wants_json)
    except BrokenPipeError:  # the reader went away: stop quietly, as a shell pipeline expects
        _silence_stdout()
        sys.exit(141)
    except OSError as err:
        where = f"{err.filename}: " if getattr(err, "filename", None) else ""
        _fail(f"{where}{err.strerror or err}", wants_json)
    except RecursionError:
        _fail("input nested too deeply to process", wants_json)
    except MemoryError:
        _fail("out of memory: the input or the bounds are too large", wants_json)
    except Exception as err:  # noqa: BLE001 - the contract: one line, never a traceback
        if os.environ.get("ACPLAB_DEBUG"):
            raise
        _fail(f"internal error ({type(err).__name__}: {err}); please report it; ACPLAB_DEBUG=1 shows the traceback",
              wants_json)


def _fail(message: str, wants_json: bool) -> None:
    """One line on stderr (and one JSON object on stdout under --json), exit 2."""
    from . import report

    text = report.terminal_text(" ".join(str(message).split()))
    if wants_json and not report.printed():
        try:
            report.print_json({"verdict": "error", "error": text, "exit_code": 2})
        except OSError:
            pass
    try:
        click.echo(f"acplab: error: {text}", err=True)
    except OSError:
        pass
    sys.exit(2)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    main()
