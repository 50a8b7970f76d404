"""The variant matrix: every variant against design-neutral goals first, then against the RFD's rules.

Rows are the RFD (``rfd``), the variants of model/acp/spec.py ``VARIANTS``
and any spec file given, each explored on the matrix scenarios below, plus
bridge rows (the v1 <-> v2 bridge models) for ``rfd`` and for every
variant that changes what a bridge converts (``error_type``), with the
bridges' B5 and B8 behaviours as two more ``rfd`` rows.  Every run checks
every rule monitor and every goal (:mod:`acplab.model.acp.goals`) and goes
on past violations, so each cell gets its own shortest counterexample.

A cell is ``holds`` (every run complete, nothing violated), ``violated``
(the shortest counterexample over the row's runs), ``by design`` (a rule of
the RFD the variant breaks by definition, declared in its spec; never a
finding), ``incomplete`` (a limit was hit, nothing violated) or ``n/a``
(with its reason).  ``known_limitations`` lists the goals the RFD itself
declares it does not meet; ``no_difference`` the variants whose goal cells
equal rfd's, with the reason.  Runs that would explore the same model
(same behaviour switches, same effective bounds) are planned once; a run
whose spec agrees with a finished run on every field that run read gets
its result instead of being explored, and ``--cache`` keeps runs between
matrices (:mod:`.matrix_cache`).  Runs go to the shared executor
(:mod:`acplab.model.engine.executors`).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import NamedTuple

from acplab.model.acp.bounds import Bounds
from acplab.model.acp.client_strategies import TOKEN_STRATEGIES
from acplab.model.acp.goals import GOAL_NAMES, GOALS, KNOWN_LIMITATIONS
from acplab.model.acp.mechanisms import design_of
from acplab.model.acp.model import AcpModel
from acplab.model.acp.monitor_set import monitor_properties, monitor_set
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.specfile import SWITCHES
from acplab.model.acp.spec import RFD, SPECS, VARIANTS, Spec
from acplab.model.engine import Limits, explore
from acplab.model.engine.executors import made_in_scratch, run_all
from acplab.model.errors import InputError

from .matrix_claims import CLAIMS, verdict
from .matrix_faults import assemble_columns, fault_differences, plan_columns

#: (scenario, bound overrides): small runs that carry the RFD's arguments: several clients, colliding
#: client identifiers, lost responses, failures seen live (then a second turn) and after a resume,
#: cancellation, streamed replay, retained commands, a retry after a timeout.
MATRIX_RUNS: tuple[tuple[str, dict], ...] = (
    ("report-order", {}),
    ("multi-client", {}),
    ("lost-response", {}),
    ("failure-after-insertion", {"prompts": 2}),
    ("failure-outcome", {}),
    ("tool-failure", {}),
    ("cancellation", {"prompts": 1}),
    ("streamed-replay", {}),
    ("retained-command", {}),
    ("timeout-retry", {}),  # a client that times out and retries: NoReexecution judges the user's one request
)

#: the rule monitors whose surface the ACP model produces (each has a mutant that breaks it), by area: the
#: rules table's columns.  Every other rule monitor (JSON-RPC framing, prompt requests,
#: the bridges' wire rules, v1's) runs too; a violation of one is listed under ``unlisted`` and fails rfd.
AREAS: dict[str, tuple[str, ...]] = {
    "correlation": ("PromptResultCarriesMessageId", "InsertedIdsDistinct", "ClientsLinkByResponse",
                    "OneMessagePerSubmission"),
    "insertion": ("ResponsesFollowInsertion", "ResponseNotHeldForWorkEnd", "PromptsAnswered",
                  "AcceptedMessagesReportedLive", "UserMessageReportedInPlace", "FeedFollowsHistory"),
    "work and failures": ("WorkReportedByState", "WorkEndsWithIdle", "StateUpdatesWellFormed",
                          "ErrorIdleCarriesErrorObject", "ToolCallsSettleBeforeIdle", "StateViewMatches",
                          "OutcomeVisible", "BackgroundSnapshotsConsistent"),
    "cancellation": ("CancelRequestMatchesSender", "HeldPromptsWithdrawnOnCancel", "CancelEndsWithCancelled",
                     "PermissionsNotApprovedAfterCancel", "CloseEndsQuietly"),
    "replay": ("RetainedMessagesReplayed", "ReplayResetsBeforeChunks", "CommandsRunOnce", "ViewMatchesHistory",
               "ResumeSendsStateSnapshot"),
    "notices": ("NoticesWellFormed",),
}
PROPERTIES: tuple[str, ...] = tuple(p for names in AREAS.values() for p in names)

#: the bridge rules, in the order of the bridges' table
BRIDGE_PROPERTIES: tuple[str, ...] = (
    "B1_ErrorAfterInsertionBecomesIdleError", "B2_ErrorBeforeInsertionBecomesErrorResponse",
    "B7_InsertionReportedOnlyOnEvidence", "E1_ErrorResponseMeansNotInserted", "X33_IdleEndTurnOnlyAfterInsertionReported",
    "B3_IdleErrorBecomesV1ErrorResponse", "B4_NoV2OnlyValuesToV1", "W14_V1StopReasonInClosedEnum",
    "B6_ExactlyOneV1Response", "B5_UnrepresentableUpdateNotDropped",
)

#: the bridge rows every matrix has for rfd: (bridge model, options, suffix); B5 and B8 are rfd's only
BRIDGE_BEHAVIOURS: tuple[tuple[str, tuple, str], ...] = (
    ("v1-agent", (), ""),
    ("v2-agent", (), ""),
    ("v2-agent", (("updates", True),), "+B5"),
    ("v2-agent", (("own_work", True),), "+B8"),
)


class Row(NamedTuple):
    """One row: a spec on the ACP model, or on a bridge model (``bridge`` names it)."""

    name: str
    spec: str
    bridge: str = ""
    options: tuple = ()

    @property
    def baseline(self) -> str:
        """The rfd row this row is compared with."""
        return "rfd" + self.name[len(self.spec):]


def variant_names() -> list[str]:
    return ["rfd", *VARIANTS]


def matrix_rows(names: list[str], full: bool) -> list[Row]:
    """The ACP rows, then the bridge rows: two for each spec whose bridges differ from rfd's, and
    rfd's as their baseline; with ``full`` (the whole matrix, or rfd asked for) rfd's four always."""
    rows = [Row(n, n) for n in names]
    bridged = [n for n in names if n != "rfd" and SPECS[n].error_type != RFD.error_type]
    for name in (["rfd"] if full or bridged else []) + bridged:
        for bridge, options, suffix in BRIDGE_BEHAVIOURS:
            if suffix and (name != "rfd" or not full):
                continue
            rows.append(Row(f"{name}@bridge-{bridge}{suffix}", name, bridge, options))
    return rows


#: switches read only on paths a bound makes unreachable: (the bounds all zero, the switches).  A test runs
#: the model with a recording spec to check that none of these is read when its bounds are zero.
_UNREAD = (
    (("failures",), ("failure_before_response", "failure_report", "stale_error", "error_shape", "error_details",
                     "abort_failure_stop", "hook_rejection_stop", "error_update_stop", "failed_state_vocabulary",
                     "stray_error_read")),  # only after a failure or a rejection
    (("disconnects", "restarts"), ("state_sync_on_resume", "snapshot_outcome", "replay_reset", "replay_keeps_ids",
                                   "replay_reexecutes_commands", "echo_after_replay", "permission_on_disconnect",
                                   "ids_survive_restart")),  # only on a resume, a lost connection or a restart
    (("busy_inserts",), ("insert_while_busy",)),  # only when a prompt may be inserted into running work
    (("busy_commands",), ("commands_while_busy",)),
    (("own_work",), ("agent_initiated_work",)),
    (("hooks",), ("running_before_insertion", "withdrawn_hook_cancelled")),
    (("early_ids",), ("ids_before_insertion",)),
    (("permission",), ("permission_on_disconnect",)),
)


#: the bounds every ACP run has at least: a run's other bound values are what its verdicts assume
_MINIMAL = Bounds(clients=1, prompts=1)


def assumed(spec: Spec, bounds) -> dict:
    """What one run assumes beyond the smallest run: its bound values other than :data:`_MINIMAL`'s, and
    the switches it reads (within those bounds, :func:`_acp_key`) whose value differs from rfd's."""
    read, rfd = _acp_key(spec, bounds), _acp_key(RFD, bounds)
    return {"bounds": {k: v for k, v in bounds._asdict().items() if v != getattr(_MINIMAL, k)},
            "switches": {k: getattr(read, k) for k in SWITCHES if getattr(read, k) != getattr(rfd, k)}}


def _acp_key(spec: Spec, bounds) -> Spec:
    """The switches the ACP model reads within ``bounds``: equal keys explore the same model.

    Presentation fields and the bridges' error type are never read; the failure switches are not
    read when nothing can fail, nor the resume and replay ones when no connection is cut and the
    agent never restarts (each is read only on a path those bounds rule out).
    """
    spec = spec._replace(name="", description="", not_applicable=(), by_design=(), no_difference="", breaks="",
                         error_type=RFD.error_type)
    for bounds_zero, switches in _UNREAD:
        if all(getattr(bounds, b) == 0 for b in bounds_zero):
            spec = spec._replace(**{s: getattr(RFD, s) for s in switches})
    return spec


def _bounds(spec: Spec, scenario: str, overrides: dict):
    """The scenario's bounds as they act on ``spec``: colliding generators matter only to client identifiers."""
    bounds = SCENARIOS[scenario].bounds._replace(**overrides)
    if spec.client_correlation not in TOKEN_STRATEGIES and spec.message_ids != "client_chosen":
        bounds = bounds._replace(colliding_ids=False)
    return bounds


def run_one(task) -> dict:
    """Explore one task in a worker process: ``("acp", spec, scenario, overrides, ...)`` or
    ``("bridge", bridge, options, error_type, label, ...)``; every rule and goal is checked.

    With ``html`` each violation also comes back as a report run (``views``) and, for the ACP
    model, the steps its diagram is drawn from (``raw``): only the shortest per cell is drawn.
    """
    if task[0] == "bridge":
        return _run_bridge(*task[1:])
    _, spec, scenario, overrides, out_dir, max_seconds, html = task
    from .checking import write_acp_counterexamples
    from .matrix_cache import recording

    recorded, reads = recording(spec)  # the fields this run reads: what it is a run of (matrix_cache)
    model = AcpModel(recorded, _bounds(spec, scenario, overrides), monitors=monitor_set() + GOALS, symmetry=True,
                     continue_after_violation=True)
    result = explore(model, Limits(max_seconds=max_seconds), expand_violating=True)
    read = sorted(reads)
    files: dict = {}
    made: dict = {}
    if result.violations and out_dir:
        files, made = made_in_scratch(
            lambda scratch: write_acp_counterexamples(model, result, str(scratch / spec.name / scenario), scenario),
            out_dir)
    extra = _views(model, result, files, spec.name, scenario) if html else {}
    return {**extra, "scenario": scenario, **_summary(result, files), **assumed(spec, model.bounds), "made": made,
            "reads": read}


def _summary(result, files) -> dict:
    return {
        "complete": result.complete, "states": result.stats.states, "seconds": result.stats.seconds,
        "violations": [{"property": v.property.name, "length": len(v.path), "files": files.get(v.property.name, []),
                        "sentence": v.sentence} for v in result.violations],
    }


def bridge_model(bridge: str, options: tuple, error_type: str):
    """A bridge model as the matrix explores it: the agent's failure detailed, the goals added."""
    from acplab.model.acp.bridge_goals import with_goals
    from acplab.model.acp.bridges import BRIDGE_MODELS

    return with_goals(BRIDGE_MODELS[bridge](error_type=error_type, detailed=True, **dict(options)))


def _run_bridge(bridge, options, error_type, label, out_dir, max_seconds, html) -> dict:
    from acplab.model.render.artefacts import write_bridge_behaviour

    model = bridge_model(bridge, options, error_type)
    result = explore(model, Limits(max_seconds=max_seconds), expand_violating=True)
    titles = {v.property.name: f"{v.property.name} [{', '.join(v.property.rules)}] violated in {len(v.path)} steps "
                               f"({label})" for v in result.violations}

    def write(scratch: Path) -> dict:
        folder = scratch / label.replace("@", "/")
        folder.mkdir(parents=True, exist_ok=True)
        return {v.property.name: write_bridge_behaviour(folder / v.property.name, model, v.path,
                                                        titles[v.property.name], (v.property.name, v.sentence),
                                                        v.property.rules) for v in result.violations}

    files, made = made_in_scratch(write, out_dir) if out_dir and result.violations else ({}, {})
    views: dict = {}
    if html:
        from acplab.model.render.runview import bridge_run

        for v in result.violations:
            name = v.property.name
            views[name] = bridge_run("", "counterexample", f"{label} / {name}", titles[name], model, v.path,
                                     violation=(name, v.sentence), rules=v.property.rules, files=files.get(name, []))
    rules = {p.name: list(p.rules) for p in model.properties()}
    return {"views": views, "scenario": f"bridge-{bridge}", "rules": rules, **_summary(result, files), "made": made}


def _views(model, result, files, spec_name: str, scenario_name: str) -> dict:
    """Each violation as a report run (no diagram yet) and the steps its diagram is drawn from."""
    from acplab.model.render.runview import acp_steps, run_view

    views, raw = {}, {}
    for v in result.violations:
        name = v.property.name
        title = (f"{name} [{', '.join(v.property.rules)}] violated in {len(v.path)} steps "
                 f"(spec {spec_name}, scenario {scenario_name})")
        steps = v.path.actions_with_effects()
        views[name] = run_view("", "counterexample", f"{spec_name} / {name}", title,
                               acp_steps(model, v.path.states(), steps), rules=v.property.rules,
                               sentence=v.sentence, files=files.get(name, []))
        raw[name] = (steps, model.bounds.clients, title, (name, v.sentence), v.property.rules)
    return {"views": views, "raw": raw}


def plan(rows: list[Row], out_dir, max_seconds, html, bounds: dict | None = None,
         columns: dict | None = None) -> tuple[list, dict]:
    """The tasks to run (each distinct model once, the biggest first) and, per row, its tasks' indices.

    ``bounds`` (``matrix --clients/--set``) override every ACP run's bounds, over the matrix's own
    per-scenario changes; the bridge models' bounds are fixed by the models.  With ``columns`` (a
    dict) each ACP row's fault and strategy runs are planned too, their indices put there per row
    (:func:`.matrix_faults.plan_columns`).
    """
    runs = tuple((sc, {**ov, **(bounds or {})}) for sc, ov in MATRIX_RUNS)
    tasks: list = []
    index: dict = {}
    of_row: dict = {}

    def add(key, task) -> int:
        if key not in index:
            index[key] = len(tasks)
            tasks.append(task)
        return index[key]

    def add_acp(spec: Spec, scenario: str, overrides: dict) -> int:
        effective = _bounds(spec, scenario, overrides)
        return add(("acp", _acp_key(spec, effective), effective),
                   ("acp", spec, scenario, overrides, out_dir, max_seconds, html))

    for row in rows:
        spec = SPECS[row.spec] if row.spec in SPECS else None
        if row.bridge:
            key = ("bridge", row.bridge, row.options, spec.error_type)
            of_row[row.name] = [add(key, ("bridge", row.bridge, row.options, spec.error_type, row.name, out_dir,
                                          max_seconds, html))]
        else:
            of_row[row.name] = [add_acp(spec, sc, ov) for sc, ov in runs]
    if columns is not None:
        columns.update(plan_columns([r for r in rows if not r.bridge], add_acp, runs, bounds or {}))
    return tasks, of_row


_WEIGHT = {"multi-client": 4, "id-collision": 4, "lost-response": 4}


def run_matrix(specs=None, out_dir: str | None = None, jobs: int | None = None, max_seconds: float | None = None,
               progress=None, executor: str = "local", html: bool = False, bounds: dict | None = None,
               columns: tuple[str, ...] = (), cache: str | None = None) -> dict:
    """Every row's runs on ``executor``; ``specs`` (names) select rows, rfd always being the baseline;
    ``bounds`` override every ACP run's (see :func:`plan`), recorded as ``bounds_overrides``; ``columns``
    names the extra columns to add (:mod:`.matrix_columns`: ``costs``, ...).  Each effective model is
    explored once (:mod:`.matrix_cache`), and with ``cache`` (a folder) found there when an earlier
    matrix explored it; ``explorations`` says how many runs were explored, shared and taken from the cache.

    With ``html`` the result also carries ``report_runs``: the shortest counterexample of every
    cell that has one, as a report run with its diagram.
    """
    from .matrix_cache import RunCache, TaskHooks, explore_tasks, same_models
    from .matrix_columns import add_columns, check_names

    check_names(columns)
    full = not specs
    names = variant_names() if full else ["rfd"] + [n for n in dict.fromkeys(specs) if n != "rfd"]
    rows = matrix_rows(names, full or "rfd" in (specs or ()))
    planned: dict = {}
    tasks, of_row = plan(rows, out_dir, max_seconds, html, bounds, planned)
    order = sorted(range(len(tasks)), key=lambda i: -_WEIGHT.get(tasks[i][2] if tasks[i][0] == "acp" else "", 1))
    ordered = [tasks[i] for i in order]
    store = RunCache(cache) if cache and not html else None  # a report's diagrams are drawn from live steps
    started = time.perf_counter()
    hooks = TaskHooks(ordered, out_dir, store, _bounds, assumed, write_home)
    done = explore_tasks(ordered, run_one, executor, jobs or os.cpu_count() or 1, progress, hooks.arrived,
                         hooks.share_key, hooks.lookup, hooks.save)
    runs: list = [None] * len(tasks)
    for i, result in zip(order, done["results"]):
        runs[i] = result
    result = assemble(rows, runs, of_row, time.perf_counter() - started)
    result.update(assemble_columns(rows, runs, of_row, planned, list(GOAL_NAMES), _goal_cell, _UNREAD))
    result["fault_differences"] = fault_differences(result["faults"])
    for name in result["fault_differences"]:
        result["no_difference"].pop(name, None)  # the goals tell it from rfd under a fault
    result["same_models"] = same_models(rows, runs, of_row, tasks, _bounds)
    counts = done["counts"]
    result["explorations"] = {"explored": counts["explored"], "shared": counts["shared"],
                              "from_cache": counts["cache"], **({"cache": store.summary()} if store else {}),
                              **({"cache_unused": f"{cache}: not used with --html"} if cache and html else {})}
    if bounds:
        result["bounds_overrides"] = dict(bounds)
    add_columns(result, columns, rows, runs, of_row, executor, jobs or os.cpu_count() or 1)
    if html:
        result["report_runs"] = cell_runs(result, runs, of_row)
    return result


def write_home(out_dir: str | None, made: dict[str, bytes]) -> None:
    """Write the files a run made on its worker (``{path relative to out_dir: bytes}``) into ``out_dir``.

    The folder is the matrix's own fresh one, so a file already there is a
    clash between two runs, never a user's file: an error, not an overwrite.
    """
    from acplab.model.render.atomic import write_atomic

    for rel, data in made.items():
        path = Path(out_dir or ".") / rel
        if path.exists():
            raise InputError(f"{path}: two matrix runs made the same file")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)


def cell_runs(matrix: dict, runs: list[dict], of_row: dict) -> list[dict]:
    """The report runs of every cell with a counterexample (ids ``cell-<n>``, ``cell`` naming row and property)."""
    from acplab.model.render.mermaid import mermaid
    from acplab.model.render.runview import sequence_svg

    out = []
    for name in matrix["specs"]:
        for prop in matrix["goals"] + matrix["properties"] + matrix["bridge_properties"]:
            detail = matrix["details"][name].get(prop, {})
            if "trace_length" not in detail:
                continue
            run = next(runs[i] for i in of_row[name] if runs[i]["scenario"] == detail["scenario"])
            view = dict(run["views"][prop], id=f"cell-{len(out) + 1}", cell=[name, prop])
            if prop in run.get("raw", {}):
                steps, clients, title, violation, rules = run["raw"][prop]
                view["svg"] = sequence_svg(steps, clients, title, violation, rules)
                view["mermaid"] = mermaid(steps, clients, title, violation, rules)
            out.append(view)
    return out


# -- cells ------------------------------------------------------------------------------------

_ACP_ONLY = "a rule of the ACP model: judged on the ACP rows"
_BRIDGE_ONLY = "a rule of the v1<->v2 bridges: judged on the bridge rows"
_ONE_PROMPT = "the bridge models have one client and one prompt: judged on the ACP rows"
#: a difference between two rows on a goal (``n/a`` against ``holds`` is none)
_OUTCOMES = ("holds", "violated", "incomplete")


def _cell(row: Row, prop: str, mine: list[dict], spec: Spec) -> tuple[str, dict]:
    """One cell and its details: n/a, by design, violated, holds or incomplete."""
    if row.bridge and prop in PROPERTIES:
        return "n/a", {"reason": _ACP_ONLY}
    if not row.bridge and prop in BRIDGE_PROPERTIES:
        return "n/a", {"reason": _BRIDGE_ONLY}
    if row.bridge and prop not in mine[0]["rules"]:
        if prop in GOAL_NAMES:
            return "n/a", {"reason": _ONE_PROMPT if prop != "ViewsConverge" else "this bridge row streams no message"}
        return "n/a", {"reason": f"not exercised by bridge-{row.bridge}{' with ' + _options(row) if row.options else ''}"}
    skip = dict(spec.not_applicable)
    if prop in skip:
        return "n/a", {"reason": skip[prop]}
    hits = [(v["length"], r["scenario"], v) for r in mine for v in r["violations"] if v["property"] == prop]
    detail: dict = {}
    if hits:
        length, scenario, v = min(hits, key=lambda h: (h[0], h[1]))
        detail = {"trace_length": length, "scenario": scenario, "files": v["files"], "explanation": v["sentence"],
                  **_assumes([r for r in mine if any(x["property"] == prop for x in r["violations"])])}
    designed = dict(spec.by_design)
    if prop in designed:
        return "by design", {**detail, "reason": designed[prop], "confirmed": bool(hits)}
    if hits:
        return "violated", {**detail, "known_limitation": prop in KNOWN_LIMITATIONS}
    return ("holds" if all(r["complete"] for r in mine) else "incomplete"), {}


def _goal_cell(row: str, spec_name: str, goal: str, mine: list[dict], spec: Spec) -> str:
    """One goal's cell for runs of ``spec`` (a strategy's build of the row ``spec_name``)."""
    return _cell(Row(row, spec_name), goal, mine, spec)[0]


def _assumes(violating: list[dict]) -> dict:
    """What a violated cell depends on: the bound values and differing switches every violating run has
    (the runs without one of them all meet the property); bridge runs record none."""
    if not violating or "bounds" not in violating[0]:
        return {}
    common = {part: {k: v for k, v in violating[0][part].items() if all(r[part].get(k) == v for r in violating)}
              for part in ("bounds", "switches")}
    return {"assumes": {**common, "scenarios": sorted({r["scenario"] for r in violating})}}


def _options(row: Row) -> str:
    return ", ".join(k for k, _ in row.options)


def _rules() -> dict[str, list[str]]:
    """Rule IDs of every column: the ACP rules, the goals (context) and the bridge rules."""
    from acplab.model.acp.bridges import V1AgentBehindBridge
    from acplab.model.acp.bridges_v2 import V2AgentBehindBridge

    out = {m.name: list(m.rules) for m in monitor_properties() + list(GOALS)}
    for model in (V1AgentBehindBridge(), V2AgentBehindBridge(updates=True)):
        out.update({p.name: list(p.rules) for p in model.properties()})
    return out


def assemble(rows: list[Row], runs: list[dict], of_row: dict, seconds: float) -> dict:
    """Cells from runs, then what each variant's rows show against rfd's."""
    cells, details = {}, {}
    for row in rows:
        mine = [runs[i] for i in of_row[row.name]]
        cells[row.name], details[row.name] = {}, {}
        for prop in GOAL_NAMES + PROPERTIES + BRIDGE_PROPERTIES:
            cells[row.name][prop], detail = _cell(row, prop, mine, SPECS[row.spec])
            if detail:
                details[row.name][prop] = detail
    rules = _rules()
    analysis = analyse(rows, cells)
    listed = set(GOAL_NAMES + PROPERTIES + BRIDGE_PROPERTIES)
    unlisted = {row.name: sorted({v["property"] for i in of_row[row.name] for v in runs[i]["violations"]
                                  if v["property"] not in listed and v["property"] not in dict(SPECS[row.spec].by_design)
                                  and v["property"] not in dict(SPECS[row.spec].not_applicable)})
                for row in rows}
    return {
        "specs": [r.name for r in rows],
        "goals": list(GOAL_NAMES),
        "properties": list(PROPERTIES),
        "bridge_properties": list(BRIDGE_PROPERTIES),
        "areas": {a: list(p) for a, p in AREAS.items()},
        "rules": {p: rules.get(p, []) for p in GOAL_NAMES + PROPERTIES + BRIDGE_PROPERTIES},
        "scenarios": [{"name": sc, "overrides": ov} for sc, ov in MATRIX_RUNS],
        "rows": {r.name: {"spec": r.spec, "model": f"bridge-{r.bridge}" if r.bridge else "acp",
                          "options": dict(r.options)} for r in rows},
        "cells": cells,
        "details": details,
        "known_limitations": dict(KNOWN_LIMITATIONS),
        "unlisted": {r: names for r, names in unlisted.items() if names},
        **analysis,
        "states": sum(r["states"] for r in runs),
        "seconds": round(seconds, 2),
        "runs": [{"scenario": r["scenario"], "complete": r["complete"], "states": r["states"],
                  "seconds": round(r["seconds"], 2), "source": r.get("source", "explored")} for r in runs],
    }


def analyse(rows: list[Row], cells: dict) -> dict:
    """Per variant: the claim's verdict, goals better and worse than rfd, rule findings; ``no_difference``;
    and ``findings``: goals an rfd row violates that the RFD does not declare."""
    verdicts, same = {}, {}
    by_spec: dict[str, list[Row]] = {}
    for row in rows:
        by_spec.setdefault(row.spec, []).append(row)
    for name, mine in by_spec.items():
        if name == "rfd":
            continue
        pairs = [(r, r.baseline) for r in mine if r.baseline in cells]
        better = sorted({g for r, b in pairs for g in GOAL_NAMES
                         if cells[r.name][g] == "holds" and cells[b][g] == "violated"})
        worse = sorted({g for r, b in pairs for g in GOAL_NAMES
                        if cells[r.name][g] == "violated" and cells[b][g] == "holds"})
        differ = [g for r, b in pairs for g in GOAL_NAMES
                  if cells[r.name][g] != cells[b][g] and {cells[r.name][g], cells[b][g]} <= set(_OUTCOMES)]
        fails = {g for r in mine for g in GOAL_NAMES if cells[r.name][g] == "violated"}
        holds = {g for g in GOAL_NAMES if all(cells[r.name][g] in ("holds", "n/a") for r in mine)}
        rfd_fails = {g for _, b in pairs for g in GOAL_NAMES if cells[b][g] == "violated"}
        claim = CLAIMS.get(design_of(name))
        word, sentence = verdict(claim, fails, holds, rfd_fails)
        verdicts[name] = {
            "claim": claim.text if claim else None, "verdict": word, "sentence": sentence,
            "better": better, "worse": worse,
            "also": claim.also if claim else "",
            "note": claim.note if claim and name == design_of(name) else "",
            "rule_findings": sorted({p for r in mine for p in PROPERTIES + BRIDGE_PROPERTIES
                                     if cells[r.name][p] == "violated"}),
        }
        if not differ:
            same[name] = SPECS[name].no_difference or NO_DIFFERENCE_DEFAULT
    findings = [{"row": r.name, "goal": g} for r in by_spec.get("rfd", ()) for g in GOAL_NAMES
                if cells[r.name][g] == "violated" and g not in KNOWN_LIMITATIONS]
    as_written = [{"row": r.name, "property": p} for r in by_spec.get("rfd-as-written", ())
                  for p in GOAL_NAMES + PROPERTIES + BRIDGE_PROPERTIES
                  if cells[r.name][p] == "violated" and p not in KNOWN_LIMITATIONS]
    return {"verdicts": verdicts, "no_difference": same, "findings": findings, "findings_as_written": as_written}


#: the reason given for a variant with no declared one whose goal cells equal rfd's
NO_DIFFERENCE_DEFAULT = "no goal differs from rfd within the matrix scenarios' bounds (no reason on record)"


def explorations_text(matrix: dict) -> str:
    """How many runs were explored, shared with an identical run, or taken from the cache (and refused)."""
    e = matrix["explorations"]
    text = f"{e['explored']} runs explored, {e['shared']} shared with an identical run"
    if "cache" in e:
        cache = e["cache"]
        text += f", {e['from_cache']} from the cache {cache['folder']}" + (
            f" ({cache['refused']} stale or damaged entries not used)" if cache["refused"] else "")
    return text + (f"; cache {e['cache_unused']}" if "cache_unused" in e else "")


def rfd_exit_code(matrix: dict) -> int:
    """1 if an rfd row violates a goal it does not declare, or a rule (listed or not); 3 if a cell is
    incomplete; else 0."""
    row = matrix["cells"].get("rfd", {})
    if any(c == "violated" and p not in matrix["known_limitations"] for p, c in row.items()):
        return 1
    if any(r.split("@")[0] == "rfd" for r in matrix.get("unlisted", {})):
        return 1
    return 3 if any("incomplete" in r.values() for r in matrix["cells"].values()) else 0


def write_figures(folder: Path, cache: str | None = None) -> list[tuple[tuple[str, ...], str, str]]:
    """Figure hook for ``acplab figures``: the matrix as Markdown, JSON and a heat map (presets only); ``cache``
    (``figures --cache``) finds runs explored before, and changes no byte (the run counts are left out)."""
    from .matrix_report import draw_heatmap, markdown

    result = run_matrix(columns=("costs", "surface"), cache=cache)
    (folder / "matrix").mkdir(parents=True, exist_ok=True)
    stable = {k: v for k, v in result.items() if k not in ("seconds", "runs", "explorations")}
    (folder / "matrix" / "matrix.json").write_text(json.dumps(stable, indent=1, sort_keys=True) + "\n")
    (folder / "matrix" / "matrix.md").write_text(markdown(result))
    draw_heatmap(result, folder / "matrix" / "matrix.svg")
    caption = (f"**Variant matrix**: the RFD, v1, the v2 draft and the FAQ's alternatives against design-neutral "
               f"goals first, then the RFD's rules ({result['states']:,} states explored over "
               f"{len(MATRIX_RUNS)} scenarios per variant, and the v1<->v2 bridges).")
    return [(("matrix/matrix.svg", "matrix/matrix.md", "matrix/matrix.json"), caption, "acplab matrix")]
