"""``acplab test``: schedules against a real agent within a budget, each run judged, each failure shrunk.

The loop: draw a seeded schedule (or take the one given), run it
``repeat`` times (each run a fresh agent process), judge every run's
capture (:mod:`.judge`).  The first schedule that violates a property not
seen before is shrunk (:func:`~.schedule.shrink_candidates`, greedily: the
first smaller candidate that still violates the same property replaces it;
a candidate counts as failing if any of ``repeat`` tries fails).  The budget
covers shrinking: a shrink cut short keeps the smallest schedule so far and
says so.

Exit codes (DESIGN.md, "Command line contract", as ``check``): 0 nothing
violated and the budget spent, 1 a violation, 3 the agent could not be
driven (its stderr's tail in the report); 2 (bad usage) is the CLI's.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from acplab.model.render.artefacts import fresh_out_dir

from .client import NotDriven, Options, ScheduleRun
from .judge import Judgement, diagram, judgement, rule_sentences
from .process import AgentNotStarted
from .schedule import Schedule, random_schedule, save_schedule, schedule_size, shrink_candidates

STDERR_TAIL = 2000


@dataclass
class Config:
    command: list[str]
    budget: float = 180.0
    seed: int = 0
    repeat: int = 1
    settle: float = 0.3
    timeout: float = 5.0
    patience: float = 1.0
    schedule: Schedule | None = None  # replay this one instead of drawing schedules
    max_schedules: int | None = None
    max_steps: int = 6
    max_messages: int = 20000
    shrink: bool = True
    first: bool = False  # stop after the first finding (shrunk)
    stop_early: bool = False  # end each run at its first violation (judged live)
    witnesses: bool = False  # first the schedules of the scenarios' witness runs (explored: part of the budget)
    mutants: bool = False  # first the schedules of the mutants' counterexamples (explored: part of the budget)
    second: str | None = None  # env variable naming a second connection's fds: two-client schedules run
    images: bool = False  # prompts may carry an image the agent never advertised (a client warning, P15)
    order_probe: bool = True  # a request after each session/cancel whose answer proves the agent had it (client.py)
    out: str | None = None
    env: dict | None = None


@dataclass
class Finding:
    property: str
    rules: tuple[str, ...]
    explanation: str
    seq: tuple[int, ...]
    schedule: Schedule  # the first that failed
    minimal: Schedule  # after shrinking
    failed: int = 0
    runs: int = 0
    shrink_runs: int = 0
    shrink_complete: bool = True
    shrunk: bool = True  # False under --no-shrink: ``minimal`` is the failing schedule as it was
    files: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"property": self.property, "rules": list(self.rules), "rule_texts": rule_sentences(self.rules),
                "explanation": self.explanation, "seq": list(self.seq), "failed": self.failed, "runs": self.runs,
                "trace_length": len(self.minimal.steps), "schedule": self.schedule.to_json(),
                "minimal_schedule": self.minimal.to_json(), "shrink_runs": self.shrink_runs,
                "shrink_complete": self.shrink_complete, "shrunk": self.shrunk, "files": dict(self.files)}


@dataclass
class CaseResult:
    """One schedule, for the summary and ``--junit``."""

    name: str
    runs: int = 0
    failed: int = 0
    properties: set = field(default_factory=set)
    seconds: float = 0.0
    first_failure: str = ""


@dataclass
class Report:
    command: list[str]
    seed: int
    budget: float
    out_dir: str = ""
    runs: int = 0
    round_trips: int = 0
    messages: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    cases: list[CaseResult] = field(default_factory=list)
    actions: Counter = field(default_factory=Counter)
    opened: Counter = field(default_factory=Counter)
    missed: Counter = field(default_factory=Counter)
    warnings: Counter = field(default_factory=Counter)
    notes: Counter = field(default_factory=Counter)
    dialects: Counter = field(default_factory=Counter)
    not_driven: str | None = None
    interrupted: bool = False
    stopped_early: int = 0  # runs ended at their first violation (--stop-early, shrinking)

    @property
    def verdict(self) -> str:
        if self.not_driven is not None:
            return "not-driven"
        return "violated" if self.findings else "holds"

    @property
    def exit_code(self) -> int:
        return {"not-driven": 3, "violated": 1}.get(self.verdict, 0)

    def to_json(self) -> dict:
        return {"command": list(self.command), "verdict": self.verdict, "exit_code": self.exit_code,
                "spec": "rfd", "dialects": dict(self.dialects), "complete": True, "seed": self.seed,
                "budget": self.budget, "runs": self.runs, "schedules": len(self.cases),
                "states": self.runs, "transitions": self.round_trips, "messages": self.messages,
                "seconds": round(self.seconds, 3), "violations": [f.to_json() for f in self.findings],
                "warnings": dict(self.warnings),
                "coverage": {"actions": dict(self.actions), "windows_opened": dict(self.opened),
                             "windows_missed": dict(self.missed)},
                "cases": [{"name": c.name, "runs": c.runs, "failed": c.failed, "properties": sorted(c.properties)}
                          for c in self.cases],
                "notes": dict(self.notes), "not_driven": self.not_driven, "interrupted": self.interrupted,
                "stopped_early": self.stopped_early,
                "witnesses": {"found": [], "missing": []}, "out": self.out_dir}


class Campaign:
    def __init__(self, config: Config, echo=None) -> None:
        self.c = config
        self.echo = echo or (lambda line: None)
        self.folder = fresh_out_dir(config.out, "test")
        (self.folder / "runs").mkdir(exist_ok=True)
        self.report = Report(list(config.command), config.seed, config.budget, str(self.folder))
        self.started = time.monotonic()
        self.live_seen: set[str] = set()
        self.options = Options(list(config.command), settle=config.settle, timeout=config.timeout,
                               patience=config.patience, env=config.env,
                               max_messages=config.max_messages, on_violation=self._live, second=config.second,
                               stop_on=frozenset("*") if config.stop_early else None, order_probe=config.order_probe)
        self.tag = ""

    def left(self) -> float:
        return self.c.budget - (time.monotonic() - self.started)

    # -- one run -------------------------------------------------------------

    def _live(self, prop: str, rules, text: str, n: int) -> None:
        """A violation as it happens: one progress line for each property not yet reported."""
        if prop not in self.live_seen:
            self.live_seen.add(prop)
            self.echo(f"live: {prop} [{', '.join(rules)}] violated at message {n} of run {self.tag}: {text}")

    def run_once(self, schedule: Schedule, tag: str, stop_on: frozenset | None = None) -> tuple[Judgement, str]:
        n = self.report.runs + 1
        self.tag = f"{n} ({tag})"
        base = self.folder / "runs" / f"{n:04d}-{tag}"
        capture, stderr = base.with_suffix(".jsonl"), base.with_suffix(".stderr")
        save_schedule(schedule, base.with_suffix(".schedule.json"))
        try:
            options = self.options if stop_on is None else replace(self.options, stop_on=stop_on)
            outcome = ScheduleRun(schedule, options, capture, stderr).run()
        except (NotDriven, AgentNotStarted) as err:
            raise NotDriven(f"{err}; its stderr: {_tail(stderr)}") from None
        r = self.report
        r.runs += 1
        r.round_trips += outcome.round_trips
        r.messages += outcome.messages
        r.actions.update(outcome.actions)
        r.opened.update(outcome.opened)
        r.missed.update(outcome.missed)
        r.notes.update(n for n in outcome.notes if not n.startswith("the agent closed its stdout"))
        if outcome.stopped is not None:
            r.stopped_early += 1
        j = judgement(outcome.result)
        r.warnings.update(j.warnings)
        r.dialects[j.dialect] += 1
        return j, str(capture)

    def run_case(self, schedule: Schedule) -> tuple[CaseResult, Judgement | None, str]:
        case = CaseResult(schedule.name)
        first, first_capture = None, ""
        t = time.monotonic()
        for k in range(self.c.repeat):
            j, capture = self.run_once(schedule, f"{schedule.name}-r{k + 1}")
            case.runs += 1
            if j.failed:
                case.failed += 1
                case.properties |= j.properties()
                if first is None:
                    first, first_capture = j, capture
            if self.left() <= 0:
                break
        case.seconds = time.monotonic() - t
        if first is not None:
            v = first.violations[0]
            case.first_failure = f"{v.property} [{', '.join(v.rules)}]: {v.explanation}"
        return case, first, first_capture

    # -- shrinking -----------------------------------------------------------

    def still_fails(self, schedule: Schedule, prop: str) -> tuple[Judgement, str] | None:
        for _ in range(self.c.repeat):
            if self.left() <= 0:
                return None
            j, capture = self.run_once(schedule, "shrink", frozenset({prop}))  # it fails once prop is seen
            if prop in j.properties():
                return j, capture
        return None

    def shrink(self, finding: Finding, judgement: Judgement, capture: str) -> tuple[Judgement, str]:
        current = finding.schedule
        improved = finding.shrunk = self.c.shrink
        while improved:
            improved = False
            for cand in sorted(shrink_candidates(current), key=schedule_size):
                if self.left() <= 0:
                    finding.shrink_complete = False
                    improved = False
                    break
                finding.shrink_runs += 1
                hit = self.still_fails(cand, finding.property)
                if hit is not None:
                    current, (judgement, capture) = cand, hit
                    improved = True
                    break
        finding.minimal = Schedule(f"{finding.schedule.name}-minimal", current.steps, current.seed,
                                   "shrunk" if current is not finding.schedule else finding.schedule.origin)
        return judgement, capture

    def record_finding(self, schedule: Schedule, case: CaseResult, j: Judgement, capture: str) -> None:
        known = {f.property for f in self.report.findings}
        for v in j.violations:
            if v.property in known:
                continue
            known.add(v.property)
            f = Finding(v.property, v.rules, v.explanation, v.seq, schedule, schedule, case.failed, case.runs)
            j2, capture2 = self.shrink(f, j, capture)
            self._write_finding(f, j2, capture2)
            self.report.findings.append(f)
            self.echo(finding_line(f))

    def _write_finding(self, f: Finding, j: Judgement, capture: str) -> None:
        base = self.folder / f"{len(self.report.findings) + 1:02d}-{f.property}"
        save_schedule(f.minimal, base.with_suffix(".schedule.json"))
        f.files = {"schedule": str(base.with_suffix(".schedule.json")), "capture": capture}
        mmd = diagram(j, f.property)
        if mmd is not None:
            base.with_suffix(".mmd").write_text(mmd, encoding="utf-8")
            f.files["diagram"] = str(base.with_suffix(".mmd"))
        for v in j.violations:
            if v.property == f.property:
                f.explanation, f.seq = v.explanation, v.seq
                break

    # -- the loop ------------------------------------------------------------

    def schedules(self):
        if self.c.schedule is not None:
            yield self.c.schedule
            return
        k = 0
        from .witness_schedules import mutant_schedules, witness_schedules

        seconds = min(5.0, max(self.left() / 40, 0.5))
        clients = 2 if self.c.second else 1
        model_runs = ([lambda: mutant_schedules(seconds, clients)] if self.c.mutants else []) + \
            ([lambda: witness_schedules(seconds_per_scenario=seconds, clients=clients)] if self.c.witnesses else [])
        for schedules in model_runs:
            for schedule in schedules():
                if self.c.max_schedules is not None and k >= self.c.max_schedules:
                    return
                yield schedule
                k += 1
        while self.c.max_schedules is None or k < self.c.max_schedules:
            yield random_schedule(self.c.seed * 1_000_003 + k, max_steps=self.c.max_steps, images=self.c.images)
            k += 1

    def run(self) -> Report:
        try:
            for schedule in self.schedules():
                if self.left() <= 0 and self.c.schedule is None:
                    break
                if schedule.clients > 1 and self.c.second is None:
                    self.report.notes[f"{schedule.name}: two clients, not run (no --second-connection)"] += 1
                    continue
                case, j, capture = self.run_case(schedule)
                self.report.cases.append(case)
                if j is not None:
                    self.record_finding(schedule, case, j, capture)
                    if self.c.first:
                        break
        except NotDriven as err:
            self.report.not_driven = str(err)
        except KeyboardInterrupt:
            self.report.interrupted = True
        self.report.seconds = time.monotonic() - self.started
        return self.report


def _tail(path) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return "(nothing)"
    return repr(text[-STDERR_TAIL:]) if text else "(nothing)"


def finding_line(f: Finding) -> str:
    steps = "; ".join(s.describe() for s in f.minimal.steps)
    what = "minimal schedule" if f.shrunk else "schedule (not shrunk)"
    cut = "" if f.shrink_complete or not f.shrunk else " (shrinking stopped at the budget)"
    return (f"violated {f.property} [{', '.join(f.rules)}] in {f.failed}/{f.runs} run(s) of {f.schedule.name}; "
            f"{what} ({len(f.minimal.steps)} step(s)){cut}: {steps}")


def run_campaign(config: Config, echo=None) -> Report:
    return Campaign(config, echo).run()
