"""``acplab simulate``: many seeded sessions, live monitors, metrics with confidence intervals.

``on_violation``:

* ``stop``: the first violating run ends the simulation (later sessions are
  not run); its artefacts are written.
* ``count``: a violating run ends there (the model refuses to go on after a
  violation), the violation is counted and the next session runs.
* ``continue``: the violation is counted, the runtime clears the model's
  violation flag and the same run goes on (to measure what a broken variant
  does downstream; an at-rest monitor can fire again at each rest point and
  each firing is counted).

For the first violation of each monitor the explorer's artefacts are written
under ``out``: ``<Monitor>.txt`` (numbered text trace), ``<Monitor>.jsonl``
(capture format, ``t`` = simulated milliseconds) and ``<Monitor>.mmd``
(Mermaid), covering the violating run up to the violating step.
"""

from __future__ import annotations

import sys
from pathlib import Path

from acplab.model.engine.verdicts import exit_code as verdict_exit_code
from .metrics import LATENCIES, METRICS, quantiles, summarize
from .params import SimParams
from .runtime import RunResult, build_model, run_session


class SimulationResult:
    """The runs of one simulation and their aggregate (``to_json``)."""

    def __init__(self, params: SimParams, runs: list[RunResult], files: dict[str, list[str]],
                 first: dict[str, dict], per_monitor: dict[str, int], stopped_early: bool,
                 latency_samples: dict[str, list[float]] | None = None) -> None:
        self.params = params
        self.runs = runs
        self.files = files
        self.first = first
        self.per_monitor = per_monitor
        self.stopped_early = stopped_early
        self.samples: dict[str, list[float]] = {name: [] for name in METRICS}
        self.counts: dict[str, int] = {}
        for r in runs:
            for name, values in r.metrics.samples().items():
                self.samples[name].extend(values)
            for k, v in r.metrics.counts().items():
                self.counts[k] = self.counts.get(k, 0) + v

    @property
    def violated_runs(self) -> int:
        return sum(1 for r in self.runs if r.violations)

    def to_json(self) -> dict:
        p = self.params
        metrics = {}
        for name, (unit, desc) in METRICS.items():
            row = summarize(self.samples[name])
            if name in LATENCIES and row["n"]:
                row["quantiles"] = quantiles(self.samples[name])
            row["unit"] = unit
            row["description"] = desc
            metrics[name] = row
        violations = {
            "count": sum(self.per_monitor.values()),
            "runs": self.violated_runs,
            "per_monitor": dict(sorted(self.per_monitor.items())),
            "first": dict(sorted(self.first.items())),
            "files": dict(sorted(self.files.items())),
        }
        return {
            "spec": p.spec,
            "verdict": "violated" if self.per_monitor else "holds",
            "params": p.to_json(),
            "runs": len(self.runs),
            "runs_at_rest": sum(1 for r in self.runs if r.at_rest),
            "stopped_early": self.stopped_early,
            "simulated_seconds": float(f"{sum(r.end_s for r in self.runs):.6g}"),
            "counts": dict(sorted(self.counts.items())),
            "metrics": metrics,
            "violations": violations,
        }


def simulate(params: SimParams, out: str | Path | None = None, progress=None) -> SimulationResult:
    """Run ``params.sessions`` sessions; write violation artefacts under ``out`` (None: none written).

    ``progress``: an optional callable ``(done, total)`` after each run.
    """
    p = params.validate()
    model = build_model(p)
    runs: list[RunResult] = []
    files: dict[str, list[str]] = {}
    first: dict[str, dict] = {}
    per_monitor: dict[str, int] = {}
    folder = None
    stopped = False
    for k in range(p.sessions):
        r = run_session(p, k, model)
        for v in r.violations:
            per_monitor[v.monitor] = per_monitor.get(v.monitor, 0) + 1
            if v.monitor not in first:
                first[v.monitor] = {"run": k, "seed": r.seed, "t_ms": round(v.t * 1000.0, 3), "step": v.step,
                                    "sentence": v.sentence}
                if out is not None:
                    if folder is None:
                        from acplab.model.render.artefacts import fresh_out_dir

                        folder = fresh_out_dir(str(out), f"simulate-{p.spec}")
                    files[v.monitor] = write_artefacts(model, r, v, folder)
        runs.append(RunResult(r.index, r.seed, r.end_s, r.at_rest, r.violations, r.metrics, []))  # drop the steps
        if progress is not None:
            progress(k + 1, p.sessions)
        if r.violations and p.on_violation == "stop":
            stopped = k + 1 < p.sessions
            break
    return SimulationResult(p, runs, files, first, per_monitor, stopped)


def write_artefacts(model, run: RunResult, violation, folder: Path) -> list[str]:
    """Text trace, capture JSONL and Mermaid of ``run`` up to the violating step (the explorer's files)."""
    from acplab.model.acp.monitors import ALL_MONITORS
    from acplab.model.render.artefacts import write_behaviour

    timed = run.steps[: violation.step]
    steps = [(action, events) for _t, action, events in timed]
    rules = next((m.rules for m in ALL_MONITORS if m.name == violation.monitor), ())
    title = (f"{violation.monitor} [{', '.join(rules)}] violated in simulated run {run.index} (seed {run.seed}) "
             f"at {violation.t * 1000.0:.1f} ms, step {violation.step} (spec {model.spec.name})")
    return write_behaviour(folder / violation.monitor, model, steps, title, (violation.monitor, violation.sentence),
                           rules, times_ms=[t * 1000.0 for t, _a, _e in timed])


def exit_code(result: SimulationResult) -> int:
    return verdict_exit_code("violated" if result.per_monitor else "holds")


# -- presentation ------------------------------------------------------------


def _fmt(x) -> str:
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.4f}"


def print_table(summary: dict, file=None) -> None:
    """The metrics as a rich table (means, 95% CIs, sample sizes), then the violations."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file or sys.stdout, highlight=False)
    p = summary["params"]
    title = (f"simulate {summary['spec']}: {summary['runs']} runs x {p['clients']} clients, {p['prompts']} prompts each, "
             f"latency {p['latency_ms']:g} ms, drop {p['drop']:g}, disconnects {p['disconnect_rate']:g}/s, seed {p['seed']}")
    table = Table(title=title, title_justify="left")
    for col, just in (("metric", "left"), ("mean", "right"), ("95% CI", "right"), ("p50", "right"),
                      ("p95", "right"), ("n", "right"), ("per", "left")):
        table.add_column(col, justify=just)
    for name, row in summary["metrics"].items():
        ci = row["ci"]
        ci_text = "-" if ci[0] is None else f"{_fmt(ci[0])} .. {_fmt(ci[1])}"
        table.add_row(name, _fmt(row["mean"]), ci_text, _fmt(row.get("p50")) if name in LATENCIES else "",
                      _fmt(row.get("p95")) if name in LATENCIES else "", str(row["n"]), row["unit"])
    console.print(table)
    counts = summary["counts"]
    console.print("counts: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    v = summary["violations"]
    if not v["count"]:
        console.print(f"holds: no monitor fired in {summary['runs']} runs")
        return
    console.print(f"violated: {v['count']} violation(s) in {v['runs']} run(s)"
                  + (" (stopped at the first)" if summary["stopped_early"] else ""))
    for name, n in v["per_monitor"].items():
        f = v["first"][name]
        console.print(f"  {name}: {n}; first in run {f['run']} at {f['t_ms']:.1f} ms: {f['sentence']}")
        for path in v["files"].get(name, []):
            console.print(f"    {path}")


def cli_progress(quiet: bool, total: int):
    """A rich progress bar on stderr (None when quiet or stderr is not a terminal); use as a context."""
    if quiet or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("simulating"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=Console(stderr=True), transient=True)
    return bar
