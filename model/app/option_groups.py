"""The command line's shared option machinery: maxima, validating callbacks, and the option groups of ``check``.

Kept out of :mod:`.cli` so that module stays a list of commands; every
command registers the groups it takes with one decorator each.
"""

from __future__ import annotations

import math

import click

from .checking import BOUND_MAXIMA

#: upper bounds of the explorer's options.  The state space grows by a factor of about
#: 3-10 per added client or prompt (default scenario: 2 clients 54k states in 4 s; 3 clients
#: over 160k states in 20 s) and the explorer keeps about 1 KB per state, so --max-states
#: 10^9 may need up to ~1 TB; a state's successors cost about clients^2.
MAXIMA = {**BOUND_MAXIMA, "rms": 16, "max_states": 10 ** 9, "max_seconds": 1e6, "workers": 256, "max_depth": 10 ** 6,
          "walk": 10 ** 9, "seed": 2 ** 63 - 1}

QUIET_HELP = "No progress display and no notes on stderr; stdout and the exit code stay the same."


def number_text(value) -> str:
    """A number for a message (an int past 4,300 digits has no str)."""
    try:
        text = str(value)
    except ValueError:
        return "a number too long to show"
    return text if len(text) <= 40 else text[:37] + "..."


def int_in(low: int, key: str | None = None):
    """A callback: an integer from ``low`` to ``MAXIMA[key]`` (no maximum without a key)."""

    def callback(ctx, param, value):
        if value is None:
            return value
        high = MAXIMA.get(key) if key else None
        if value < low or (high is not None and value > high):
            allowed = f"{low}..{high:,}" if high is not None else f"at least {low}"
            raise click.BadParameter(f"must be {allowed}, got {number_text(value)}")
        return value

    return callback


def seconds(ctx, param, value):
    """A time limit: finite, positive, at most ``MAXIMA['max_seconds']``."""
    if value is not None and not (math.isfinite(value) and 0 < value <= MAXIMA["max_seconds"]):
        raise click.BadParameter(f"must be a number of seconds in (0, {MAXIMA['max_seconds']:g}], got {value}")
    return value


def interval(ctx, param, value):
    """A period: finite, 0 (every level) up to ``MAXIMA['max_seconds']``."""
    if value is not None and not (math.isfinite(value) and 0 <= value <= MAXIMA["max_seconds"]):
        raise click.BadParameter(f"must be a number of seconds in [0, {MAXIMA['max_seconds']:g}], got {value}")
    return value


def finite(ctx, param, value):
    """A number that is finite."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"must be a finite number, got {value}")
    return value


def limit_options(command):
    """Add ``--max-states`` and ``--max-seconds`` (the search stops there, incomplete)."""
    options = [
        click.option("--max-states", type=int, default=None, callback=int_in(1, "max_states"),
                     help="Stop after this many states (about 1 KB of memory each)."),
        click.option("--max-seconds", type=float, default=None, callback=seconds),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def output_options(command):
    """Add ``--witness``, ``--witnesses``, ``--json``, ``--out``, ``--html``, ``--itf``, ``--quiet`` (what a check
    writes)."""
    options = [
        click.option("--witness", "witness", multiple=True, metavar="NAME",
                     help="Also write the shortest run to this witness, like a counterexample; repeatable."),
        click.option("--witnesses", "all_witnesses", is_flag=True, help="Also write the shortest run to every witness."),
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout."),
        click.option("--out", type=click.Path(file_okay=False), default=None, help="Folder for the runs' files and the report."),
        click.option("--html", is_flag=True, help="Also write OUT/report.html: one self-contained page that steps through "
                                                  "every counterexample and witness run."),
        click.option("--itf", is_flag=True,
                     help="Also write each run as an ITF trace (X.itf.json), as Apalache and Quint do."),
        click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def search_options(command):
    """Add ``--continue``, ``--workers``, ``--por``, ``--checkpoint(-every)``, ``--max-depth``, ``--walk``, ``--seed``,
    ``--estimate``."""
    options = [
        click.option("--continue", "keep_going", is_flag=True,
                     help="Explore on past the first violation to find every violated property (default: stop after "
                          "the depth of the first one, which lists every property violated there, each shortest)."),
        click.option("--workers", type=int, default=None, callback=int_in(1, "workers"),
                     help="Processes sharing the search (default: one per core); results are the same for any number."),
        click.option("--por/--no-por", default=True, show_default=True,
                     help="Partial-order reduction (ACP): fewer states, same verdicts, counterexamples confirmed shortest."),
        click.option("--checkpoint", type=click.Path(file_okay=False), default=None,
                     help="Folder (new, empty, or a checkpoint) for snapshots between levels; a killed check run "
                          "again with it resumes."),
        click.option("--checkpoint-every", type=float, default=60.0, show_default=True, callback=interval,
                     help="Seconds between snapshots (0: after every level)."),
        click.option("--max-depth", type=int, default=None, callback=int_in(1, "max_depth"),
                     help="Explore at most this many steps deep (the run is then incomplete); the walk length for --walk."),
        click.option("--walk", type=int, default=None, callback=int_in(1, "walk"),
                     help="Random walks instead of an exhaustive search: hunt bugs beyond the bounds (never holds)."),
        click.option("--seed", type=int, default=0, show_default=True, callback=int_in(0, "seed"),
                     help="Seed of the random walks."),
        click.option("--estimate", is_flag=True, help="Run no check: time it at smaller bounds (within --max-seconds, "
                     "default 30) and say how many states, how long and how much memory the asked bounds need."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


#: the options of `check` each kind of model reads; giving another one is an error, not silently ignored
CHECK_OPTIONS = {
    "acp": {"spec", "spec_file", "scenario", "clients", "prompts", "drops", "disconnects", "settings", "symmetry",
            "estimate", "properties", "goals_only", "itf", "only"},
    "twophase": {"rms", "broken", "symmetry"},
    "bridge": {"spec", "itf"},
}
CHECK_COMMON = {"model_name", "max_states", "max_seconds", "witness", "all_witnesses", "as_json", "out", "html", "quiet",
                "workers", "por", "checkpoint", "checkpoint_every", "max_depth", "walk", "seed",
                "keep_going"}


def spec_from_file(ctx, spec: str, spec_file: str | None) -> str:
    """The spec to use: a spec file's (loaded and registered for this process) or ``--spec``'s."""
    if spec_file is None:
        return spec
    from click.core import ParameterSource

    if ctx.get_parameter_source("spec") == ParameterSource.COMMANDLINE:
        raise click.UsageError("--spec and --spec-file are exclusive: the file names its own spec")
    from acplab.model.acp.specfile import load_and_register

    return load_and_register(spec_file)


def reject_ignored(ctx, model_name: str) -> None:
    """An option the chosen model does not read is a usage error naming it."""
    from click.core import ParameterSource

    allowed = CHECK_OPTIONS["bridge" if model_name.startswith("bridge-") else model_name] | CHECK_COMMON
    for param in ctx.command.params:
        if param.name not in allowed and ctx.get_parameter_source(param.name) == ParameterSource.COMMANDLINE:
            names = "/".join(o for o in param.opts + param.secondary_opts if o.startswith("--"))
            raise click.UsageError(f"{names} does not apply to --model {model_name}")
