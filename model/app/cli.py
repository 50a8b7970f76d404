"""The ``acplab`` command line (DESIGN.md, "Command line contract").

Exit codes: 0 every property holds (complete exploration), 1 a property is
violated, 2 bad usage or bad input (one line on stderr, no traceback),
3 incomplete (a limit was hit and nothing was violated).
"""

from __future__ import annotations

import sys

import click

from acplab.model.errors import InputError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="acplab")
def cli() -> None:
    """acplab: explore, simulate and check the ACP v2 prompt lifecycle."""


def _positive(ctx, param, value):
    if value is not None and value < 1:
        raise click.BadParameter(f"must be at least 1, got {value}")
    return value


def _non_negative(ctx, param, value):
    if value is not None and value < 0:
        raise click.BadParameter(f"must be 0 or more, got {value}")
    return value


@cli.command()
@click.option("--model", "model_name", type=click.Choice(["acp", "twophase", "bridge-v1-agent", "bridge-v2-agent"]),
              default="acp", show_default=True,
              help="acp; twophase (the engine's validation model); the v1<->v2 bridges (--spec names a mutant).")
@click.option("--spec", default="rfd", show_default=True, help="Variant of the ACP model (see `acplab specs`).")
@click.option("--scenario", default=None, help="Named scenario (see `acplab scenarios`).")
@click.option("--clients", type=int, default=None, callback=_positive, help="Clients sharing the session.")
@click.option("--prompts", type=int, default=None, callback=_non_negative, help="Prompts submitted in all.")
@click.option("--drops", type=int, default=None, callback=_non_negative, help="Messages the network may drop.")
@click.option("--disconnects", type=int, default=None, callback=_non_negative, help="Connection cuts allowed.")
@click.option("--rms", type=int, default=3, show_default=True, callback=_positive, help="TwoPhase resource managers.")
@click.option("--broken", is_flag=True, help="TwoPhase: let the TM commit without all Prepared.")
@click.option("--max-states", type=int, default=None, callback=_positive)
@click.option("--max-seconds", type=float, default=None)
@click.option("--symmetry/--no-symmetry", default=None,
              help="Symmetry reduction: clients (ACP) or RMs (TwoPhase) are interchangeable. "
                   "Default: on for ACP; off for TwoPhase, whose published counts are without it.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Folder for counterexample files.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option("--workers", type=int, default=None, callback=_positive,
              help="Processes sharing the search (default: one per core); results are the same for any number.")
@click.option("--por/--no-por", default=True, show_default=True,
              help="Partial-order reduction (ACP): fewer states, same verdicts, counterexamples confirmed shortest.")
@click.option("--checkpoint", type=click.Path(file_okay=False), default=None,
              help="Folder for snapshots between levels; a killed check run again with it resumes.")
@click.option("--checkpoint-every", type=float, default=60.0, show_default=True, help="Seconds between snapshots.")
@click.option("--max-depth", type=int, default=None, callback=_positive,
              help="Explore at most this many steps deep (the run is then incomplete); the walk length for --walk.")
@click.option("--walk", type=int, default=None, callback=_positive,
              help="Random walks instead of an exhaustive search: hunt bugs beyond the bounds (never holds).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random walks.")
def check(model_name, spec, scenario, clients, prompts, drops, disconnects, rms, broken,
          max_states, max_seconds, symmetry, as_json, out, quiet, workers, por, checkpoint, checkpoint_every,
          max_depth, walk, seed):
    """Explore every interleaving within bounds and check the rules."""
    from . import checking

    if max_seconds is not None and max_seconds <= 0:
        raise click.BadParameter(f"must be positive, got {max_seconds:g}", param_hint="'--max-seconds'")
    search = checking.Search(workers, por, checkpoint, checkpoint_every, walk, seed, max_depth)
    if model_name.startswith("bridge-"):
        code = checking.check_bridge(model_name[len("bridge-"):], spec, max_states, max_seconds, as_json, out, quiet,
                                     search)
    elif model_name == "twophase":
        code = checking.check_twophase(rms, broken, bool(symmetry), max_states, max_seconds, as_json, out, quiet,
                                       search)
    else:
        code = checking.check_acp(
            spec=spec, scenario=scenario, clients=clients, prompts=prompts, drops=drops,
            disconnects=disconnects, symmetry=symmetry is not False, max_states=max_states,
            max_seconds=max_seconds, as_json=as_json, out=out, quiet=quiet, search=search,
        )
    sys.exit(code)


@cli.group()
def trace() -> None:
    """Record and check wire traffic in the capture format (JSON Lines)."""


@trace.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Capture file (JSON Lines).")
@click.option("--append", is_flag=True, help="Add to an existing capture, continuing its seq numbers.")
@click.option("--force", is_flag=True, help="Overwrite an existing capture.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def record(out, append, force, command):
    """Run COMMAND (an agent) behind a transparent stdio proxy and capture its traffic.

    Use in place of the agent command: acplab trace record --out FILE.jsonl -- AGENT [ARGS...]
    """
    from acplab.model.trace import record as recording

    if not command:
        raise click.UsageError("missing COMMAND: acplab trace record --out FILE.jsonl -- COMMAND [ARGS...]")
    sys.exit(recording.record(list(command), out, append=append, force=force))


@trace.command(name="check")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--spec", default="rfd", show_default=True, help="rfd, v2-draft or v1: the dialect the capture is checked against.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Folder for a Mermaid diagram and a JSONL window per violation (never overwritten).")
def trace_check(file, spec, as_json, out):
    """Check a capture (JSON Lines) against the wire-checkable rules.

    Exit 0 holds, 1 violated (including damaged lines inside a capture), 2 bad input
    (unknown spec, unreadable or empty file, first line not a capture record).
    """
    from . import tracing

    result = tracing.check_and_write(file, spec=spec, out=out)
    tracing.print_result(result, as_json, echo=click.echo)
    sys.exit(result.exit_code)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def specs(as_json):
    """List the spec variants and mutants, one line each."""
    from acplab.model.acp.spec import FINDINGS, MUTANTS, SPECS, VARIANTS

    rows = []
    for name, spec in SPECS.items():
        kind = "mutant" if name in MUTANTS else "finding" if name in FINDINGS else \
            "variant" if name in VARIANTS else "spec"
        rows.append({"name": name, "kind": kind, "description": spec.description, "rules": list(_spec_rules(name))})
    _list_out(rows, as_json)


def _spec_rules(name: str) -> tuple[str, ...]:
    """The rules a mutant breaks: those of the monitor that must catch it."""
    from acplab.model.acp.monitors import ALL_MONITORS
    from acplab.model.acp.spec import SPECS

    breaks = SPECS[name].breaks
    return next((m.rules for m in ALL_MONITORS if m.name == breaks), ())


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def scenarios(as_json):
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
def figures(out, check_only):
    """Regenerate every figure (sequence and state diagrams, README) deterministically."""
    from . import figures as figs

    sys.exit(figs.run(out, check_only))


@cli.command()
@click.option("--spec", default="rfd", show_default=True, help="Variant of the ACP model (see `acplab specs`).")
@click.option("--clients", type=int, default=2, show_default=True, help="Clients sharing the session.")
@click.option("--sessions", type=int, default=100, show_default=True, help="Independent runs (sub-seeds of --seed).")
@click.option("--prompts", type=int, default=3, show_default=True, help="Prompts each client submits per run (retries on top).")
@click.option("--latency", type=float, default=50.0, show_default=True, help="Mean one-way network latency, ms.")
@click.option("--drop", type=float, default=0.0, show_default=True, help="Probability a message is lost.")
@click.option("--disconnect-rate", type=float, default=0.0, show_default=True, help="Connection cuts per second per client.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--duration", type=float, default=600.0, show_default=True, help="Simulated seconds per run at most.")
@click.option("--on-violation", type=click.Choice(["stop", "count", "continue"]), default="count", show_default=True,
              help="stop: end at the first violation; count: end that run, go on; continue: record and go on in the run.")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
              help="Any other simulation parameter (fail, reject, cancel, replay, step_ms, ...); repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Folder for violation artefacts and plots.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
def simulate(spec, clients, sessions, prompts, latency, drop, disconnect_rate, seed, duration, on_violation,
             settings, as_json, out, quiet):
    """Simulate timed, stochastic sessions: live monitors, metrics with 95% CIs."""
    from .report import print_json
    from acplab.simulations.params import SimParams
    from acplab.simulations.simulate import cli_progress, exit_code, print_table, simulate as run_simulation

    values = dict(spec=spec, clients=clients, sessions=sessions, prompts=prompts, latency_ms=latency, drop=drop,
                  disconnect_rate=disconnect_rate, seed=seed, duration_s=duration, on_violation=on_violation)
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="'--set'")
        values[key.strip()] = value.strip()
    params = SimParams.from_mapping(values, "simulate")
    artefacts = out if out is not None else "acplab-out/simulate-" + spec
    bar = cli_progress(quiet or as_json, params.sessions)
    if bar is None:
        result = run_simulation(params, artefacts)
    else:
        with bar:
            task = bar.add_task("runs", total=params.sessions)
            result = run_simulation(params, artefacts, lambda done, total: bar.update(task, completed=done))
    summary = result.to_json()
    if out is not None:
        from acplab.simulations.plots import plot_simulation

        summary["plots"] = plot_simulation(result, out)
    if as_json:
        print_json(summary)
    else:
        print_table(summary)
    sys.exit(exit_code(result))


@cli.command()
@click.argument("config", type=click.Path(exists=True, dir_okay=False))
@click.option("--executor", default="local", show_default=True, help="local (processes) or dask://HOST:PORT.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Folder for results.jsonl and summary.json.")
@click.option("--workers", type=int, default=None, help="Local worker processes (default: CPU count).")
@click.option("--plots/--no-plots", default=False, help="Draw the sweep's figures into OUT.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
def sweep(config, executor, out, workers, plots, quiet):
    """Run a grid of simulations (TOML or JSON CONFIG); results are appended and an interrupted sweep resumes."""
    from acplab.simulations.sweep import load_config, run_sweep

    if workers is not None and workers < 1:
        raise click.BadParameter(f"must be at least 1, got {workers}", param_hint="'--workers'")
    cfg = load_config(config)
    folder = out if out is not None else "acplab-out/sweep-" + __import__("pathlib").Path(config).stem
    sys.exit(run_sweep(cfg, folder, executor=executor, workers=workers, plots=plots, quiet=quiet))


@cli.command()
@click.option("--spec", "specs", multiple=True, help="Variants to include (default: rfd and every variant).")
@click.option("--json", "as_json", is_flag=True, help="Print the matrix as one JSON object.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Folder for matrix.json, matrix.md and the counterexamples (default: a fresh acplab-out/matrix).")
@click.option("--jobs", type=int, default=None, callback=_positive, help="Worker processes (default: one per core).")
@click.option("--max-seconds", type=float, default=None, help="Limit per run (cells become incomplete).")
@click.option("--executor", default="local", show_default=True,
              help="Where the runs go: local (processes), serial, or dask://HOST:PORT (as for sweep).")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
def matrix(specs, as_json, out, jobs, max_seconds, executor, quiet):
    """Check every variant against every property: holds / violated / incomplete / n/a.

    Exit 1 if the rfd row has a violated cell, 3 if a cell is incomplete, else 0.
    """
    import json as _json

    from . import matrix as mx
    from acplab.model.render.artefacts import fresh_out_dir
    from .report import print_json
    from acplab.model.acp.spec import get_spec

    for name in specs:
        get_spec(name)
    folder = fresh_out_dir(out, "matrix")
    show = not quiet and not as_json and sys.stderr.isatty()
    result = mx.run_matrix(specs or None, str(folder), jobs, max_seconds, _run_counter if show else None, executor)
    (folder / "matrix.json").write_text(_json.dumps(result, indent=2) + "\n")
    (folder / "matrix.md").write_text(mx.markdown(result, str(folder)))
    if as_json:
        print_json(result)
    else:
        click.echo(mx.table_text(result))
        click.echo(f"\n{result['states']:,} states in {result['seconds']:.1f} s; wrote {folder}/matrix.md")
    cells = result["cells"]
    if "rfd" in cells and "violated" in cells["rfd"].values():
        sys.exit(1)
    sys.exit(3 if any("incomplete" in row.values() for row in cells.values()) else 0)


def _run_counter(done: int, total: int) -> None:
    click.echo(f"\r{done}/{total} runs", err=True, nl=done == total)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the group; turn usage and input errors into one line and exit 2."""
    try:
        cli.main(args=argv, prog_name="acplab", standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.exceptions.Abort:
        click.echo("acplab: aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        click.echo(f"acplab: error: {_one_line(err)}", err=True)
        sys.exit(2)
    except InputError as err:
        click.echo(f"acplab: error: {err}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(1)


def _one_line(err: click.ClickException) -> str:
    return " ".join(err.format_message().split())


if __name__ == "__main__":  # pragma: no cover
    main()
