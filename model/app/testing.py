"""``acplab test -- COMMAND``: the model's clients drive a real agent; every run judged; failures shrunk."""

from __future__ import annotations

import os
import signal
import sys

import click


def _positive(ctx, param, value):
    if value is not None and value <= 0:
        raise click.BadParameter(f"must be > 0, got {value:g}")
    return value


@click.command(name="test", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--budget", type=float, default=180.0, show_default=True, callback=_positive,
              help="Seconds for the whole test, shrinking included.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the random schedules.")
@click.option("--schedule", "schedule_file", type=click.Path(dir_okay=False), default=None,
              help="Replay this saved schedule (JSON) instead of drawing random ones; a capture (.jsonl, such as "
                   "check --out's counterexample) is replayed as its client's side.")
@click.option("--schedules", "max_schedules", type=click.IntRange(min=1), default=None,
              help="At most this many random schedules (default: as many as the budget allows).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs of each schedule (nondeterminism: the verdict says how often it failed).")
@click.option("--settle", type=float, default=0.3, show_default=True, callback=_positive,
              help="Quiescence: seconds without an agent message that end a run.")
@click.option("--timeout", type=float, default=5.0, show_default=True, callback=_positive,
              help="Per message: seconds to wait for an awaited answer or event.")
@click.option("--patience", type=float, default=1.0, show_default=True, callback=_positive,
              help="A step's event: seconds of silence from a busy agent after which the step runs anyway.")
@click.option("--max-steps", type=click.IntRange(min=1), default=6, show_default=True,
              help="Longest random schedule.")
@click.option("--max-messages", type=click.IntRange(min=1), default=20000, show_default=True,
              help="A flooding agent: a run stops after this many agent messages.")
@click.option("--witnesses", is_flag=True,
              help="First the client actions of every single-client scenario's witness runs (explored; in the budget).")
@click.option("--mutants", is_flag=True,
              help="First the client actions of every mutant's counterexample (explored; in the budget): the races "
                   "a wrong implementation of the RFD loses.")
@click.option("--second-connection", "second", metavar="ENV", default=None,
              help="Two-client schedules: a second connection to the same agent process, a pipe pair whose file "
                   "descriptors the agent gets as IN,OUT in environment variable ENV (the SDK agent: "
                   "ACP_CORPUS_CONN_FDS).")
@click.option("--unadvertised-content", "images", is_flag=True,
              help="Let prompts carry an image block the agent never advertised (a client warning, P15), "
                   "to see how it rejects one (P15, P16).")
@click.option("--first", is_flag=True, help="Stop at the first violation (once shrunk).")
@click.option("--stop-early", is_flag=True,
              help="End each run at its first violation, judged as it happens (the run is then judged as "
                   "incomplete: obligations the cut left open are not counted).")
@click.option("--no-shrink", is_flag=True, help="Report failing schedules as they are.")
@click.option("--no-order-probe", is_flag=True,
              help="Send no _acplab/order_probe request after each session/cancel (its answer proves the agent "
                   "had the cancel before what follows; without it C4, C7 and C9 are warnings where an idle may "
                   "have crossed the cancel).")
@click.option("--junit", type=click.Path(dir_okay=False), default=None,
              help="Write JUnit XML (a test case per schedule).")
@click.option("--html", is_flag=True, help="Also write OUT/report.html (findings, schedules, coverage).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Folder for every run's capture, schedule and stderr, and each finding's diagram.")
@click.option("--quiet", "-q", is_flag=True)  # its help: the house sentence, set by make_test_command
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def test_command(budget, seed, schedule_file, max_schedules, repeat, settle, timeout, patience, max_steps,
                 max_messages, witnesses, mutants, second, images, first, stop_early, no_shrink, no_order_probe, junit,
                 html, as_json, out, quiet, command):
    """Drive COMMAND (an ACP agent on stdio) with the model's clients and judge every run.

    acplab test [OPTIONS] -- AGENT [ARGS...]

    Exit 0 nothing violated (budget spent), 1 a violation, 2 bad usage, 3 the agent could not be driven.
    """
    from acplab.model.render.artefacts import check_out_dir
    from acplab.model.tester.campaign import Config, run_campaign
    from acplab.model.tester.output import summary_lines, write_html, write_junit
    from acplab.model.tester.capture_schedules import capture_schedule
    from acplab.model.tester.schedule import load_schedule

    from .report import print_json, terminal_text

    if not command:
        raise click.UsageError("missing COMMAND: acplab test [OPTIONS] -- AGENT [ARGS...]")
    check_out_dir(out, "test")
    schedule = None if not schedule_file else \
        capture_schedule(schedule_file) if schedule_file.endswith(".jsonl") else load_schedule(schedule_file)
    config = Config(list(command), budget=budget, seed=seed, repeat=repeat, settle=settle, timeout=timeout,
                    patience=patience,
                    schedule=schedule, max_schedules=max_schedules, max_steps=max_steps, max_messages=max_messages,
                    shrink=not no_shrink, first=first, stop_early=stop_early, order_probe=not no_order_probe,
                    images=images, witnesses=witnesses, mutants=mutants, second=second,
                    out=out, env=dict(os.environ))
    echo = (lambda line: None) if quiet else (lambda line: click.echo(terminal_text(line), err=True))  # progress
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        report = run_campaign(config, echo)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if junit:
        write_junit(report, junit)
    if html:
        write_html(report, report.out_dir)
    if as_json:
        print_json(report.to_json())
    else:
        for line in summary_lines(report):
            click.echo(terminal_text(line))
    sys.exit(130 if report.interrupted else report.exit_code)


def make_test_command(quiet_help: str) -> click.Command:
    """``acplab test`` with the house's ``--quiet`` sentence (cli.py's, which imports this module)."""
    for param in test_command.params:
        if param.name == "quiet":
            param.help = quiet_help
    return test_command


def _interrupt(signum, frame):
    raise KeyboardInterrupt
