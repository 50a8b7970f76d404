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

import os
import sys

import click

from acplab.model.errors import InputError

from . import ci_formats, option_groups, trace_options
from .checking import PROPERTY_SETS
from .option_groups import MAXIMA, QUIET_HELP, finite as _finite, int_in as _int_in, seconds as _seconds
from .option_groups import reject_ignored as _reject_ignored, spec_from_file as _spec_from_file
from .progress import Progress
from .switches import switches_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="acplab")
def cli() -> None:
    """acplab: explore, simulate and check the ACP v2 prompt lifecycle."""


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
@click.option("--properties", type=click.Choice(PROPERTY_SETS), default="rules", show_default=True,
              help="Judge the RFD's rules, the matrix's design-neutral goals (what a user sees), or both.")
@click.option("--goals", "goals_only", is_flag=True, help="The same as --properties goals.")
@click.option("--property", "only", multiple=True, metavar="NAME",
              help="Check only this property (a name `acplab properties` lists); repeatable. The others, and the "
                   "scenario's witnesses not asked for with --witness, are left out (not evaluated).")
@click.option("--rms", type=int, default=None, callback=_int_in(1, "rms"), help="TwoPhase resource managers (default 3).")
@click.option("--broken", is_flag=True, help="TwoPhase: let the TM commit without all Prepared.")
@option_groups.limit_options
@click.option("--symmetry/--no-symmetry", default=None,
              help="Symmetry reduction: clients (ACP) or RMs (TwoPhase) are interchangeable. "
                   "Default: on for ACP; off for TwoPhase, whose published counts are without it.")
@option_groups.output_options
@option_groups.search_options
@click.pass_context
def check(ctx, model_name, spec, spec_file, scenario, clients, prompts, drops, disconnects, settings, properties,
          goals_only, only, rms, broken,
          max_states, max_seconds, symmetry, witness, all_witnesses, as_json, out, html, itf, quiet, keep_going,
          workers, por, checkpoint, checkpoint_every, max_depth, walk, seed, estimate):
    """Explore every interleaving within bounds and check the rules.

    Stops after the depth of the first violation (every property violated there is listed, each with a
    shortest counterexample); --continue explores on to find every violated property.
    """
    from acplab.model.engine import Limits

    from . import checking
    from acplab.model.render.artefacts import check_out_dir

    check_out_dir(out, "check")
    _reject_ignored(ctx, model_name)
    spec = _spec_from_file(ctx, spec, spec_file)
    opts = checking.Output(as_json, quiet, out, html, "all" if all_witnesses else (witness or None), itf)
    if keep_going and walk:
        raise click.UsageError("--continue does not apply to --walk: random walks take every walk")
    search = checking.Search(workers, por, checkpoint, checkpoint_every, walk, seed, max_depth, stop=not keep_going)
    if model_name.startswith("bridge-"):
        target = checking.bridge_target(model_name[len("bridge-"):], spec)
    elif model_name == "twophase":
        target = checking.twophase_target(rms or 3, broken, bool(symmetry))
    else:
        bounds = checking.parse_bounds(settings, clients=clients, prompts=prompts, drops=drops,
                                       disconnects=disconnects)
        from . import estimate as est

        if estimate and only:
            raise click.UsageError("--estimate times every property: leave out --property")
        if estimate:
            sys.exit(est.run_estimate(spec, scenario, bounds, symmetry is not False, search,
                                      Limits(max_states, max_seconds), opts))
        est.guard(est.asked_counts(spec, scenario, bounds, symmetry is not False),
                  limited=bool(max_states or max_seconds or max_depth or walk))
        judged = checking.properties_asked(properties, goals_only)
        target = checking.acp_target(spec, scenario, bounds, symmetry is not False, judged,
                                     checking.select_properties(only, judged, opts.witnesses))
    sys.exit(checking.run_check(target, Limits(max_states, max_seconds), opts, search))


cli.add_command(switches_command(QUIET_HELP))


@cli.group()
def trace() -> None:
    """Record and check wire traffic in the capture format (JSON Lines)."""


@trace.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Capture file (JSON Lines).")
@click.option("--append", is_flag=True, help="Add to an existing capture, continuing its seq numbers.")
@click.option("--force", is_flag=True, help="Overwrite an existing capture.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
@click.option("--conn-fds", multiple=True, metavar="IN,OUT", help="Another connection to the same agent: our fd IN "
              "to its fd IN, its fd OUT to ours (recorded as c2, c3, ...).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def record(out, append, force, quiet, conn_fds, command):
    """Run COMMAND (an agent) behind a transparent stdio proxy and capture its traffic.

    Use in place of the agent command: acplab trace record --out FILE.jsonl -- AGENT [ARGS...]
    """
    from acplab.model.trace import record as recording

    fds = tuple(map(recording.parse_conn_fds, conn_fds))
    sys.exit(recording.record(list(command), out, append=append, force=force, fd_conns=fds))


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
@ci_formats.options
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
@trace_options.check_options
def trace_check(file, spec, complete, internal, as_json, out, junit, sarif_path, quiet, no_internal, **declared):
    """Check a capture (JSON Lines) against the rules an observer of the wire can check.

    Exit 0 holds (warnings may be listed), 1 violated (including damaged lines inside a capture),
    2 bad input (unreadable or empty file, first line not a capture record, a bad sidecar).
    """
    from . import tracing
    from acplab.model.render.artefacts import check_out_dir

    if out is not None:
        check_out_dir(out, "trace")
    ci_formats.check_targets(junit, sarif_path)
    result = tracing.check_and_write(file, spec=spec, out=out, complete=complete, internal=internal,
                                     beside=not no_internal, schema=declared.pop("schema"),
                                     switches=trace_options.switches_from(spec, **declared))
    ci_formats.write_reports(result.to_json(), junit, sarif_path)
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
@click.option("--follow-symlink", is_flag=True, help="Write into the target of a symbolic link given as --out.")
@click.option("--cache", type=click.Path(file_okay=False), default=None,
              help="The variant matrix's run cache (as matrix --cache): the same figures, fewer runs.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
def figures(out, check_only, follow_symlink, cache, quiet):
    """Regenerate every figure (sequence and state diagrams, README) deterministically."""
    from . import figures as figs

    sys.exit(figs.run(out, check_only, follow_symlink, quiet, cache))


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
@click.option("--explain", is_flag=True, help="After the table, what each metric means, its unit and its question.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
@click.pass_context
def simulate(ctx, spec, spec_file, clients, sessions, prompts, latency, drop, disconnect_rate, seed, duration,
             on_violation, settings, as_json, out, html, explain, quiet):
    """Simulate timed, stochastic sessions: live monitors, metrics with 95% intervals, fault-window coverage."""
    spec = _spec_from_file(ctx, spec, spec_file)
    from .report import print_json
    from acplab.model.render.artefacts import check_out_dir, fresh_out_dir
    from acplab.simulations.params import SimParams, check_cost, with_settings
    from acplab.simulations.simulate import exit_code, print_table, simulate as run_simulation

    values = dict(spec=spec, clients=clients, sessions=sessions, prompts=prompts, latency_ms=latency, drop=drop,
                  disconnect_rate=disconnect_rate, seed=seed, duration_s=duration, on_violation=on_violation)
    options = {k: "--" + {"latency_ms": "latency", "duration_s": "duration"}.get(k, k).replace("_", "-") for k in values}
    params = SimParams.from_mapping(with_settings(values, settings, options, "simulate"), "simulate")
    check_cost(params.estimated_seconds(), "simulate")
    if out is None:
        check_out_dir(None, "simulate-" + spec)
        artefacts = "acplab-out/simulate-" + spec
    else:  # claimed now: the plots and any violation's files go into this one fresh folder
        artefacts = out = str(fresh_out_dir(out, "simulate-" + spec))
    with Progress("simulate", "runs", params.sessions, quiet=quiet or as_json) as shown:
        result = run_simulation(params, artefacts, shown.count)
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
        print_table(summary, explain=explain)
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
    with Progress("sweep", "points", quiet=quiet) as shown:
        sys.exit(run_sweep(cfg, folder, executor=executor, workers=workers, plots=plots, quiet=quiet, fresh=fresh,
                           progress=shown.count))


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
@click.option("--html", is_flag=True, help="Also write OUT/report.html with every violated cell's counterexample.")
@click.option("--costs", is_flag=True, help="Also simulate each row's costs and show its spec surface: "
              "--column costs --column surface.")
@click.option("--column", "extra", multiple=True, metavar="NAME",
              help="An extra column: costs, surface, or FILE.py:FACTORY returning a matrix_columns.Column (runs "
                   "that file's code); repeatable.")
@click.option("--cache", type=click.Path(file_okay=False), default=None,
              help="A folder of explored runs, kept between matrices: a run whose effective model is there is "
                   "not explored again (made if missing).")
@click.option("--clients", type=int, default=None, callback=_int_in(1, "clients"), help="Clients in every ACP run.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="A bound of every ACP run, as for check.")
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
def matrix(specs, spec_files, as_json, out, jobs, max_seconds, executor, html, costs, extra, cache, clients, settings,
           quiet):
    """Check every variant against the design-neutral goals, then the RFD's rules.

    Cells: holds / violated / by design / incomplete / n/a.  Exit 1 if the rfd row violates a rule
    or a goal the RFD does not declare as a limitation, 3 if a cell is incomplete, else 0.
    """
    import json as _json

    from . import checking, matrix as mx
    from .matrix_report import SYMBOL, markdown, table_text
    from acplab.model.render.artefacts import fresh_out_dir
    from .report import print_json
    from .schemas import stamped
    from acplab.model.acp.spec import get_spec
    from acplab.model.acp.specfile import load_and_register

    for name in specs:
        get_spec(name)
    specs = list(specs) + [load_and_register(path) for path in spec_files]
    bounds = checking.parse_bounds(settings, clients=clients)
    from .matrix_columns import check_names, named

    columns = tuple(dict.fromkeys((("costs", "surface") if costs else ()) + tuple(named(c) for c in extra)))
    check_names(columns)
    folder = fresh_out_dir(out, "matrix")
    if not as_json:
        names = list(specs) or mx.variant_names()
        click.echo(f"matrix: {len(names)} variants x {len(mx.GOAL_NAMES)} goals and {len(mx.PROPERTIES)} rules over "
                   f"{len(mx.MATRIX_RUNS)} scenarios, each at its own bounds: "
                   f"{', '.join(name for name, _ in mx.MATRIX_RUNS)}; and the v1<->v2 bridges"
                   + (f"; every ACP run with {' '.join(f'{k}={v}' for k, v in bounds.items())}" if bounds else ""))
    with Progress("matrix", "runs", quiet=quiet or as_json) as shown:
        result = mx.run_matrix(specs or None, str(folder), jobs, max_seconds, shown.count, executor, html, bounds,
                               columns, cache)
    if html:
        from .pages import matrix_page, write_page

        report = write_page(folder, matrix_page(result, folder, SYMBOL))
        result = {k: v for k, v in result.items() if k != "report_runs"} | {"report": report}
    from acplab.model.render.atomic import write_atomic

    write_atomic(folder / "matrix.json", _json.dumps(stamped(result), indent=2, allow_nan=False) + "\n")
    write_atomic(folder / "matrix.md", markdown(result, str(folder)))
    if as_json:
        print_json(result)
    else:
        click.echo(table_text(result))
        click.echo(f"\n{result['states']:,} states in {result['seconds']:.1f} s ({mx.explorations_text(result)}); "
                   f"wrote {folder}/matrix.md")
        if html:
            click.echo(f"report: {result['report']}")
    sys.exit(mx.rfd_exit_code(result))


from .testing import make_test_command  # noqa: E402 - `acplab test`, in its own module
cli.add_command(make_test_command(QUIET_HELP))
def main(argv: list[str] | None = None) -> None:
    """Entry point: run the group; turn every failure into one line on stderr and exit 2.

    With ``--json`` (before any ``--``) the failure is also one JSON object on
    stdout, unless the command already printed its own.  Untrusted text is
    escaped for the terminal (:func:`report.terminal_text`).  ``ACPLAB_DEBUG=1``
    lets an internal error show its traceback.
    """
    from . import report

    args = sys.argv[1:] if argv is None else list(argv)
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
        _fail(report.os_error_text(err), wants_json)
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
