"""The ``acplab`` command line (DESIGN.md, "Command line contract").

Exit codes: 0 every property holds (complete exploration), 1 a property is
violated, 2 bad usage or bad input (one line on stderr, no traceback),
3 incomplete (a limit was hit and nothing was violated).
"""

from __future__ import annotations

import sys

import click

from model.errors import InputError


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
@click.option("--model", "model_name", type=click.Choice(["acp", "twophase"]), default="acp", show_default=True)
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
              help="Symmetry reduction (TwoPhase: RMs are interchangeable). Default off: TwoPhase's published counts are without it.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Folder for counterexample files.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
def check(model_name, spec, scenario, clients, prompts, drops, disconnects, rms, broken,
          max_states, max_seconds, symmetry, as_json, out, quiet):
    """Explore every interleaving within bounds and check the rules."""
    from model import checking

    if max_seconds is not None and max_seconds <= 0:
        raise click.BadParameter(f"must be positive, got {max_seconds:g}", param_hint="'--max-seconds'")
    if model_name == "twophase":
        code = checking.check_twophase(rms, broken, bool(symmetry), max_states, max_seconds, as_json, out, quiet)
    else:
        code = checking.check_acp(
            spec=spec, scenario=scenario, clients=clients, prompts=prompts, drops=drops,
            disconnects=disconnects, symmetry=bool(symmetry), max_states=max_states,
            max_seconds=max_seconds, as_json=as_json, out=out, quiet=quiet,
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
    from model import record as recording

    if not command:
        raise click.UsageError("missing COMMAND: acplab trace record --out FILE.jsonl -- COMMAND [ARGS...]")
    sys.exit(recording.record(list(command), out, append=append, force=force))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def specs(as_json):
    """List the spec variants and mutants, one line each."""
    from model.spec import FINDINGS, MUTANTS, SPECS

    rows = []
    for name, spec in SPECS.items():
        kind = "mutant" if name in MUTANTS else "finding" if name in FINDINGS else "spec"
        rows.append({"name": name, "kind": kind, "description": spec.description, "rules": list(_spec_rules(name))})
    _list_out(rows, as_json)


def _spec_rules(name: str) -> tuple[str, ...]:
    """The rules a mutant breaks: those of the monitor that must catch it."""
    from model.monitors import ALL_MONITORS
    from model.spec import SPECS

    breaks = SPECS[name].breaks
    return next((m.rules for m in ALL_MONITORS if m.name == breaks), ())


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def scenarios(as_json):
    """List the named scenarios with their rule IDs, one line each."""
    from model.scenarios import SCENARIOS

    rows = [
        {"name": s.name, "description": s.description, "rules": list(s.rules), "witnesses": list(s.witnesses),
         "catches": list(s.catches), "races": list(s.races), "bounds": s.bounds._asdict()}
        for s in SCENARIOS.values()
    ]
    _list_out(rows, as_json)


def _list_out(rows: list[dict], as_json: bool) -> None:
    if as_json:
        from model.report import print_json

        print_json(rows)
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        rules = f" [{', '.join(r['rules'])}]" if r["rules"] else ""
        click.echo(f"{r['name']:<{width}}  {r['description']}{rules}")


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
