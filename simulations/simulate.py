"""``acplab simulate``: many seeded sessions, live monitors, metrics with confidence intervals.

``on_violation``:

* ``continue`` (the default): the violation is counted, the runtime clears
  the model's violation flag and the same run goes on, so every run is
  simulated to its end and the metrics come from all runs (an at-rest
  monitor can fire again at each rest point and each firing is counted).
* ``count``: a violating run ends there, the violation is counted and the
  next session runs.
* ``stop``: the first violating run ends the simulation (later sessions are
  not run).

A run cut short by a violation would bias every metric (a broken spec ends
its runs early: 141 instead of 365 submissions for
``client-matches-by-content``), so with ``count`` and ``stop`` the metrics
come from the completed runs only: those that reached rest without a
violation.  The output says which (``metrics_from``).  Intervals are Wilson
for proportions and t for means, none below two samples (:mod:`.stats`); a
metric that means nothing for the spec is ``n/a`` with its reason.
``coverage`` counts the fault windows the runs opened and warns about the
ones the spec or the configured faults need that no run opened
(:mod:`.fault_windows`).

For the first violation of each monitor the explorer's artefacts are written
under ``out``: ``<Monitor>.txt`` (numbered text trace), ``<Monitor>.jsonl``
(capture format, ``t`` = simulated milliseconds) and ``<Monitor>.mmd``
(Mermaid), covering the violating run up to the violating step.
"""

from __future__ import annotations

import sys
from pathlib import Path

from acplab.model.acp.spec import get_spec
from acplab.model.engine.verdicts import exit_code as verdict_exit_code
from . import fault_windows
from .metrics import LATENCIES, METRICS, explanation, not_applicable
from .params import SimParams
from .runtime import RunResult, build_model, run_session
from .stats import quantiles, summarize


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
        self.folder = None  # where the violations' files went (set by simulate)
        self.examples: dict = {}  # monitor -> (the run, its first violation), steps kept
        self.model = None
        self.counted = None  # the counting model the runs were stepped through (fault_windows.Counted)
        self.measured = [r for r in runs if self.counts_toward_metrics(r)]
        self.samples: dict[str, list[float]] = {name: [] for name in METRICS}
        self.counts: dict[str, int] = {}
        for r in self.measured:
            for name, values in r.metrics.samples().items():
                self.samples[name].extend(values)
        for r in runs:
            for k, v in r.metrics.counts().items():
                self.counts[k] = self.counts.get(k, 0) + v

    def counts_toward_metrics(self, run: RunResult) -> bool:
        """Every run when runs go on past violations; else only those that reached rest without one."""
        return self.params.on_violation == "continue" or (run.at_rest and not run.violations)

    @property
    def violated_runs(self) -> int:
        return sum(1 for r in self.runs if r.violations)

    def metrics_from(self) -> dict:
        n, m = len(self.runs), len(self.measured)
        if self.params.on_violation == "continue":
            basis = f"all {n} runs, each carried on past its violations"
        else:
            basis = (f"the {m} of {n} runs that reached rest without a violation (runs end at their first "
                     f"violation with on_violation={self.params.on_violation}, which would bias the metrics)")
        return {"runs": m, "of": n, "basis": basis}

    def to_json(self) -> dict:
        p = self.params
        spec = get_spec(p.spec)
        skip = not_applicable(spec)
        metrics = {}
        for name, metric in METRICS.items():
            row = summarize(self.samples[name], metric.kind)
            if name in LATENCIES and row["n"]:
                row["quantiles"] = quantiles(self.samples[name])
            row.update(explanation(name))
            if name in skip:
                row["n/a"] = skip[name]
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
            "metrics_from": self.metrics_from(),
            "counts": dict(sorted(self.counts.items())),
            "metrics": metrics,
            "violations": violations,
            "coverage": fault_windows.report(spec, p, [r.metrics.windows for r in self.runs], self.counted),
        }


def simulate(params: SimParams, out: str | Path | None = None, progress=None) -> SimulationResult:
    """Run ``params.sessions`` sessions; write violation artefacts under ``out`` (None: none written).

    ``progress``: an optional callable ``(done, total)`` after each run.
    """
    p = params.validate()
    model = build_model(p)
    counted = fault_windows.Counted(model)
    runs: list[RunResult] = []
    files: dict[str, list[str]] = {}
    first: dict[str, dict] = {}
    examples: dict[str, tuple[RunResult, object]] = {}
    per_monitor: dict[str, int] = {}
    folder = None
    stopped = False
    for k in range(p.sessions):
        r = run_session(p, k, counted)
        for v in r.violations:
            per_monitor[v.monitor] = per_monitor.get(v.monitor, 0) + 1
            if v.monitor not in first:
                first[v.monitor] = {"run": k, "seed": r.seed, "t_ms": round(v.t * 1000.0, 3), "step": v.step,
                                    "sentence": v.sentence}
                examples[v.monitor] = (r, v)
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
    result = SimulationResult(p, runs, files, first, per_monitor, stopped)
    result.folder, result.examples, result.model, result.counted = folder, examples, model, counted
    return result


def example_states(model, run: RunResult, violation) -> list:
    """The worlds of ``run`` up to the violating step, replayed from its actions (the runtime keeps none).

    With ``on_violation=continue`` the runtime cleared each violation and went
    on; the replay does the same, except at the last step.
    """
    states = [model.init_states()[0]]
    for n, (_t, action, _events) in enumerate(run.steps[: violation.step], 1):
        world = model.step(states[-1], action)[0]
        states.append(world if n == violation.step else world._replace(violation=None))
    return states


def write_artefacts(model, run: RunResult, violation, folder: Path) -> list[str]:
    """Text trace, capture JSONL and Mermaid of ``run`` up to the violating step (the explorer's files)."""
    from acplab.model.render.artefacts import write_behaviour
    from acplab.model.trace.visible import wire_visibility

    timed = run.steps[: violation.step]
    steps = [(action, events) for _t, action, events in timed]
    rules = next((p.rules for p in model.properties() if p.name == violation.monitor), ())
    title = (f"{violation.monitor} [{', '.join(rules)}] violated in simulated run {run.index} (seed {run.seed}) "
             f"at {violation.t * 1000.0:.1f} ms, step {violation.step} (spec {model.spec.name})")
    return write_behaviour(folder / violation.monitor, model, steps, title, (violation.monitor, violation.sentence),
                           rules, times_ms=[t * 1000.0 for t, _a, _e in timed], judge=wire_visibility)


def exit_code(result: SimulationResult) -> int:
    return verdict_exit_code("violated" if result.per_monitor else "holds")


# -- presentation ------------------------------------------------------------


def fmt(x) -> str:
    """A number for a table: grouped above 100, two decimals above 1, four below."""
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.4f}"


def headline(summary: dict) -> str:
    """The first line: spec and every parameter that shapes the runs."""
    p = summary["params"]
    faults = [f"{k} {p[k]:g}" for k in ("fail", "reject", "cancel", "cancel_request", "restart_rate") if p[k]]
    return (f"simulate spec {summary['spec']}: {p['sessions']} runs (seed {p['seed']}) x {p['clients']} clients x "
            f"{p['prompts']} prompts; latency {p['latency_ms']:g} ms, drop {p['drop']:g}, disconnects "
            f"{p['disconnect_rate']:g}/s" + (f", {', '.join(faults)}" if faults else "")
            + f"; on_violation {p['on_violation']}")


def _units(metrics: dict) -> str:
    """What ``n`` counts, grouped: submissions for most, retries or runs for some."""
    by_unit: dict[str, list[str]] = {}
    for name, row in metrics.items():
        by_unit.setdefault(row["unit"], []).append(name)
    main = max(by_unit, key=lambda u: len(by_unit[u]))
    plural = {"retry": "retries"}
    rest = [f"{plural.get(u, u + 's')} for {', '.join(names)}" for u, names in by_unit.items() if u != main]
    return plural.get(main, main + "s") + (f"; {'; '.join(rest)}" if rest else "")


def legend(metrics: dict, explain: bool) -> list[str]:
    """Below the table: the counterfactual metrics named as such; with ``explain`` each metric's meaning,
    unit and question (from the ``--json`` fields, so the two never disagree)."""
    lines = []
    what_if = [name for name, row in metrics.items() if row.get("counterfactual")]
    if what_if:
        lines.append(f"* counterfactual, not a finding: {', '.join(what_if)} say what clients correlating by content "
                     "or arrival order would have bound wrongly (shadow clients fed the real deliveries)")
    if not explain:
        return lines + ["--explain: what each metric means, its unit and the question it answers"]
    for name, row in metrics.items():
        lines.append(f"{name} [{row['measured_in']}]: {row['meaning']}. {row['question']}")
    return lines


def print_table(summary: dict, file=None, explain: bool = False) -> None:
    """The headline, the metrics (means, 95% intervals, sample sizes), a legend, coverage warnings, the violations."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file or sys.stdout, highlight=False)
    console.print(headline(summary), soft_wrap=True)
    console.print(f"metrics from {summary['metrics_from']['basis']}", soft_wrap=True)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("metric", no_wrap=True)
    for col in ("mean", "95% interval", "p50", "p95", "n"):
        table.add_column(col, justify="right", no_wrap=col != "95% interval")
    notes = []
    for name, row in summary["metrics"].items():
        if row.get("n/a"):
            table.add_row(name, "n/a", "", "", "", "")
            notes.append(f"{name}: n/a, {row['n/a']}")
            continue
        lo, hi = row["ci"]
        ci_text = "-" if lo is None else f"{fmt(lo)}..{fmt(hi)}"
        latency = name in LATENCIES
        table.add_row(name + (" *" if row.get("counterfactual") else ""), fmt(row["mean"]), ci_text,
                      fmt(row.get("p50")) if latency else "",
                      fmt(row.get("p95")) if latency else "", f"{row['n']:,}")
    console.print(table)
    console.print(f"n counts {_units(summary['metrics'])}", soft_wrap=True)
    for line in legend(summary["metrics"], explain):
        console.print(line, soft_wrap=True, markup=False)
    for note in notes:
        console.print(note, soft_wrap=True)
    console.print("counts: " + ", ".join(f"{k} {v:,}" for k, v in summary["counts"].items()), soft_wrap=True)
    for warning in summary.get("coverage", {}).get("warnings", []):
        what = "window never opened: " if fault_windows.window_warning(warning) else ""
        console.print(f"coverage warning: {what}{warning}", soft_wrap=True)
    v = summary["violations"]
    if not v["count"]:
        console.print(f"holds: no monitor fired in {summary['runs']} runs")
        return
    console.print(f"violated: {v['count']} violation(s) in {v['runs']} run(s)"
                  + (" (stopped at the first)" if summary["stopped_early"] else ""))
    for name, n in v["per_monitor"].items():
        f = v["first"][name]
        console.print(f"  {name}: {n}; first in run {f['run']} at {f['t_ms']:.1f} ms: {f['sentence']}", soft_wrap=True)
        for path in v["files"].get(name, []):
            console.print(f"    {path}", soft_wrap=True)
