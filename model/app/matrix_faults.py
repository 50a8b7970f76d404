"""The matrix's fault and strategy columns: each fault applied to every row with the obligation it breaks,
and each design's client strategies, best and worst named.

A fault is never a row's property.  Each :class:`Fault` names the
obligation it breaks (a unique identifier, an ID never reused, an error
only on a failed turn), the scenario it is run on and what it sets; the
matrix runs it on every row with that obligation (the RFD's own generator
failing is ``restart-resets-ids`` on ``rfd`` as on any row whose agent
mints IDs) and compares with the same row on the same scenario without
it, so a fault cell's ✗ is exactly what the fault adds.

A strategy (:data:`acplab.model.acp.client_strategies.STRATEGIES`) is a
client's way of reading its design; each is explored on every matrix
scenario, and the best and the worst (fewest and most goals violated)
are named.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from acplab.model.acp.client_strategies import TOKEN_STRATEGIES, strategies_for
from acplab.model.acp.mechanisms import design_of
from acplab.model.acp.spec import SPECS, Spec
from acplab.model.acp.specfile import SWITCHES


def _client_mints(spec: Spec) -> str | None:
    if spec.client_correlation in TOKEN_STRATEGIES or spec.message_ids == "client_chosen":
        return None
    return "no client-minted identifier"


def _agent_mints(spec: Spec) -> str | None:
    if spec.response == "stop_reason":
        return "v1 puts no message ID on the wire"
    if spec.message_ids != "agent":
        return "the agent mints no user-message ID"
    return None


def _error_on_idle(spec: Spec) -> str | None:
    if spec.failure_report != "idle_error":
        return "no error travels on an idle"
    return None


class Fault(NamedTuple):
    """A fault: what it breaks, where it is run, and what it sets (bounds and switches)."""

    name: str
    meaning: str
    obligation: str
    scenario: str
    #: the scenario's own bound changes, as the matrix runs it (faulted and baseline alike)
    overrides: tuple = ()
    #: what the fault sets: switches, and bounds (the baseline has neither)
    switches: tuple = ()
    bounds: tuple = ()
    #: None when ``spec`` has the obligation, else why the fault cannot apply
    applies: Callable[[Spec], str | None] = _client_mints


FAULTS: tuple[Fault, ...] = (
    Fault("colliding-generators", "two clients' identifier generators collide (each numbers its own 1, 2, ...)",
          "a client-minted token or messageId is unique across clients", "multi-client",
          (), (), (("colliding_ids", True),), _client_mints),
    Fault("restart-resets-ids", "the agent's message-ID counter starts again after a restart",
          "an agent-minted messageId is never reused (P5)", "agent-restart", (), (("ids_survive_restart", False),), (),
          _agent_mints),
    Fault("stale-error", "the agent forgets to clear the error: the idle after a failed turn keeps it",
          "an idle carries an error only when work failed (W7; the sibling field's prose rule)",
          "failure-after-insertion", (("prompts", 2),), (("stale_error", True),), (), _error_on_idle),
    Fault("stale-error+lenient-client", "the stale error above, and a client that reads `error` on any idle",
          "an idle's error is read only beside stopReason error (the sibling field's \"Clients ignore it "
          "otherwise\")", "failure-after-insertion", (("prompts", 2),),
          (("stale_error", True), ("stray_error_read", True)), (), _error_on_idle),
)


def fault_runs(spec: Spec, bounds: dict) -> dict[str, tuple | str]:
    """Per fault: ``(faulted spec, baseline spec, scenario, faulted overrides, baseline overrides)`` for a row
    with the obligation, or the reason the fault cannot apply.  ``bounds`` (``matrix --set``) override the
    scenario's own; the fault's bounds come last (the baseline has none of them)."""
    out: dict[str, tuple | str] = {}
    for fault in FAULTS:
        why = fault.applies(spec)
        if why is not None:
            out[fault.name] = why
            continue
        faulted = spec._replace(name=f"{spec.name}+{fault.name}", **dict(fault.switches))
        base = {**dict(fault.overrides), **bounds}
        out[fault.name] = (faulted, spec, fault.scenario, {**base, **dict(fault.bounds)}, base)
    return out


def strategy_specs(spec: Spec) -> dict[str, Spec]:
    """The row's design's client strategies, each as the row's spec with the strategy's switches."""
    return {s.name: spec._replace(name=f"{spec.name}~{s.name}", **dict(s.switches))
            for s in strategies_for(design_of(spec.name))}


def fault_cell(goals: list[str], faulted: dict, base: dict) -> tuple[str, dict]:
    """A fault cell from the faulted run and the same run without the fault: the goals it adds.

    ``holds`` when the fault adds no violated goal (and both runs are complete), ``violated`` with the
    added goals and the shortest counterexample of each, ``incomplete`` when a limit was hit.  A cell
    that adds nothing names the goals the row violates without the fault too (``already``): the fault
    cannot show there what the row's own build shows.
    """
    before = {v["property"] for v in base["violations"]}
    added: dict = {}
    for v in faulted["violations"]:
        name = v["property"]
        if name in goals and name not in before and (name not in added or v["length"] < added[name]["length"]):
            added[name] = {"length": v["length"], "explanation": v["sentence"], "files": v["files"]}
    if added:
        return "violated", {"goals": dict(sorted(added.items()))}
    already = sorted(g for g in before if g in goals)
    return ("holds" if faulted["complete"] and base["complete"] else "incomplete"), (
        {"already": already} if already else {})


def strategy_summary(cells: dict[str, dict[str, str]], goals: list[str], under_faults: dict | None = None) -> dict:
    """The strategies of one design ranked by the goals each violates, then by those each loses under a
    fault (``under_faults``: strategy -> ["goal under fault", ...]): best and worst named, and every
    strategy tied with either."""
    failing = {name: sorted(g for g in goals if c.get(g) == "violated") for name, c in cells.items()}
    lost = {name: sorted((under_faults or {}).get(name, ())) for name in cells}
    score = {n: (len(failing[n]), len(lost[n])) for n in cells}
    ranked = sorted(cells, key=lambda n: (score[n], list(cells).index(n)))
    return {"cells": cells, "violated": failing, "under_faults": lost, "best": ranked[0], "worst": ranked[-1],
            "tied_best": [n for n in ranked[1:] if score[n] == score[ranked[0]]],
            "tied_worst": [n for n in ranked[:-1] if score[n] == score[ranked[-1]]]}


def plan_columns(rows: list, add_acp, runs: tuple, bounds: dict) -> dict:
    """Per ACP row: each fault's ``(faulted run, baseline run)`` task indices (or why it cannot apply) and,
    for a design's strongest row, each strategy's task indices over ``runs``; ``add_acp(spec, scenario,
    overrides)`` plans one run (identical models once) and returns its index."""
    out = {}
    for row in rows:
        spec = SPECS[row.spec]
        faults = {}
        for name, planned in fault_runs(spec, bounds).items():
            if isinstance(planned, str):
                faults[name] = planned
            else:
                faulted, base, scenario, with_fault, without = planned
                faults[name] = (add_acp(faulted, scenario, with_fault), add_acp(base, scenario, without))
        strategies, strategy_faults = {}, {}
        for name, s in ({} if row.spec.endswith("-naive") else strategy_specs(spec)).items():
            strategies[name] = [add_acp(s, sc, ov) for sc, ov in runs]
            strategy_faults[name] = {f: (add_acp(p[0], p[2], p[3]), add_acp(p[1], p[2], p[4]))
                                     for f, p in fault_runs(s, bounds).items() if not isinstance(p, str)}
        out[row.name] = {"faults": faults, "strategies": strategies, "strategy_faults": strategy_faults}
    return out


def assemble_columns(rows: list, runs: list, of_row: dict, columns: dict, goals: list[str], cell_of,
                     unread: tuple) -> dict:
    """The fault cells, the strategies' best and worst, rows whose runs equal another's, unread switches.

    ``cell_of(row name, spec name, goal, runs, spec)`` judges one goal cell (the matrix's own rule);
    ``unread`` is the matrix's table of switches read only when a bound is not zero.
    """
    faults: dict = {}
    strategies: dict = {}
    for row, planned in columns.items():
        faults[row] = {}
        for name, value in planned["faults"].items():
            if isinstance(value, str):
                faults[row][name] = {"cell": "n/a", "reason": value}
                continue
            cell, detail = fault_cell(goals, runs[value[0]], runs[value[1]])
            faults[row][name] = {"cell": cell, **detail}
        if planned["strategies"]:
            specs = strategy_specs(SPECS[row])
            cells = {name: {g: cell_of(specs[name].name, row, g, [runs[i] for i in idx], specs[name])
                            for g in goals} for name, idx in planned["strategies"].items()}
            lost = {name: [f"{g} under {f}" for f, (i, j) in planned["strategy_faults"][name].items()
                           for g in fault_cell(goals, runs[i], runs[j])[1].get("goals", {})]
                    for name in cells}
            strategies[row] = strategy_summary(cells, goals, lost)
    described = [{k: v for k, v in f._asdict().items() if k != "applies"} for f in FAULTS]
    return {"faults": faults, "fault_columns": described,
            "strategies": strategies, "identical_runs": identical_runs(rows, of_row),
            "descriptions": {r.spec: SPECS[r.spec].description for r in rows},
            "unread_switches": unread_switches(rows, runs, of_row, unread)}


def identical_runs(rows: list, of_row: dict) -> dict[str, dict]:
    """ACP rows whose runs are all another row's (the same effective models): the first such row (rfd
    first) and the switches that differ between the two, which no run of theirs reads."""
    acp = [r for r in rows if not r.bridge]
    out = {}
    for row in acp:
        same = next((o for o in acp if o.name != row.name and of_row[o.name] == of_row[row.name]), None)
        if same is None or acp.index(same) > acp.index(row):
            continue
        a, b = SPECS[row.spec], SPECS[same.spec]
        out[row.name] = {"as": same.name, "switches": [s for s in SWITCHES if getattr(a, s) != getattr(b, s)]}
    return out


def unread_switches(rows: list, runs: list, of_row: dict, unread: tuple) -> dict[str, str]:
    """Switches no ACP run of the matrix reads, each with the bound that would make it read (``unread``:
    (bounds all zero, the switches then not read), ...)."""
    acp_runs = [runs[i] for r in rows if not r.bridge for i in of_row[r.name]]
    out = {}
    for switch in SWITCHES:
        gates = [zero for zero, names in unread if switch in names]
        if switch == "error_type":
            out[switch] = "read only by the v1<->v2 bridge models, never by the ACP model"
        elif gates and all(any(all(not run["bounds"].get(b) for b in zero) for zero in gates) for run in acp_runs):
            either = [" or ".join(f"{b} > 0" for b in zero) for zero in gates]
            out[switch] = "read only with " + " and ".join(f"({e})" if " or " in e and len(either) > 1 else e
                                                           for e in either)
    return out


def fault_differences(faults: dict) -> dict[str, list[str]]:
    """Per row, the faults under which it loses other goals than rfd (both rows having the obligation)."""
    rfd = faults.get("rfd", {})
    out = {}
    for row, cells in faults.items():
        differ = [f for f, c in cells.items() if f in rfd and "n/a" not in (c["cell"], rfd[f]["cell"])
                  and set(c.get("goals", {})) != set(rfd[f].get("goals", {}))]
        if differ and row != "rfd":
            out[row] = differ
    return out
