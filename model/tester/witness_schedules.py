"""Schedules translated from the model's own runs: scenarios' witnesses and mutants' counterexamples.

The explorer finds, for each scenario (:mod:`acplab.model.acp.scenarios`),
the shortest run to each of its ``sometimes`` witnesses, and for each
mutant the shortest run that breaks the rule it was made to break (the
claims of :mod:`acplab.model.acp.killers`: which spec, in which scenario).
A run's wire records (what ``check --out`` writes as its capture) become a
schedule through :func:`.capture_schedules.records_schedule`, the one
translation: client messages only, each step after the last message the
agent had sent on that client's connection.

A mutant's counterexample drives a real agent into the race the mutant
loses; an agent with the same bug then shows it there (the same rule,
judged on the real traffic).  Choices (RFD silent):

* scenarios with more than ``clients`` clients are left out (two at most:
  one agent process, a second connection);
* only the mutants (:data:`~acplab.model.acp.killers.MUTANT_RULES`), not the
  rejected designs: an agent under test implements the RFD, so the races
  worth provoking are those a wrong RFD implementation loses.
"""

from __future__ import annotations

from acplab.model.acp.killers import MUTANT_RULES, claims, reproduce
from acplab.model.acp.model import AcpModel
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import get_spec
from acplab.model.acp.witnesses import WITNESSES
from acplab.model.engine import Limits
from acplab.model.engine.search import explore
from acplab.model.render.artefacts import preamble, shifted
from acplab.model.render.traces import wire_records

from .capture_schedules import records_schedule
from .schedule import Schedule


def path_records(steps) -> list[dict]:
    """A model run's capture, as ``check --out`` writes it (the preamble, then its wire records)."""
    records = wire_records(steps)
    head = preamble(records)
    return head + shifted(records, len(head))


def path_schedule(name: str, steps, origin: str) -> Schedule | None:
    """The client's side of one model run (``[(action, events)]``); None if it has no prompt."""
    schedule, _left_out = records_schedule(path_records(steps), name, origin)
    return schedule


def witness_schedules(spec: str = "rfd", seconds_per_scenario: float = 10.0, clients: int = 1,
                      only=None) -> list[Schedule]:
    """One schedule per distinct client plan among the witness runs of scenarios of at most ``clients`` clients
    (``only``: these scenarios)."""
    found: dict[tuple, Schedule] = {}
    for sc in SCENARIOS.values():
        if sc.bounds.clients > clients or (only is not None and sc.name not in only):
            continue
        model = AcpModel(get_spec(spec), sc.bounds, [WITNESSES[w] for w in sc.witnesses])
        result = explore(model, Limits(max_seconds=seconds_per_scenario))
        for witness, path in sorted(result.witnesses.items()):
            if path is None:
                continue
            schedule = path_schedule(f"witness-{sc.name}-{witness}", path.actions_with_effects(), "witness")
            if schedule is not None:
                found.setdefault(schedule.steps, schedule)
    return list(found.values())


def mutant_schedules(seconds_per_claim: float = 10.0, clients: int = 1, only=None) -> list[Schedule]:
    """One schedule per mutant claim (``only``: these mutants) whose scenario has at most ``clients`` clients.

    Named ``mutant-SPEC-PROPERTY``; a claim not reproduced within the time is left out.
    """
    out: list[Schedule] = []
    seen: set = set()
    for claim in claims():
        if claim.spec not in MUTANT_RULES or (only is not None and claim.spec not in only):
            continue
        if SCENARIOS[claim.scenario].bounds.clients > clients:
            continue
        found = reproduce(claim, Limits(max_seconds=seconds_per_claim))
        if found is None or found.path is None:
            continue
        schedule = path_schedule(f"mutant-{claim.spec}-{claim.property}", found.path.actions_with_effects(), "mutant")
        if schedule is not None and (schedule.name, schedule.steps) not in seen:  # one claim per scenario killing it
            seen.add((schedule.name, schedule.steps))
            out.append(schedule)
    return out
