"""The variant matrix: every published version and rejected alternative against every property.

Each variant (model/spec.py ``VARIANTS`` plus ``rfd``) is explored on the
matrix scenarios below with the monitors that apply to it, and exploration
goes on past violations, so each property gets its own shortest
counterexample even when another property breaks first on the way.  A cell is
``holds`` (every run complete, nothing violated), ``violated`` (the shortest
counterexample over all scenarios, with its files), ``incomplete`` (a limit
was hit and nothing violated) or ``n/a`` (the variant does not speak to the
property; the reason says why).  Runs are independent and go to a process
pool, one per core.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from acplab.model.acp.model import AcpModel
from acplab.model.engine import Limits, explore
from acplab.model.engine.executors import run_all
from acplab.model.acp.monitors import ALL_MONITORS
from acplab.model.acp.scenarios import SCENARIOS
from acplab.model.acp.spec import SPECS, VARIANTS

#: (scenario, bound overrides): small runs that carry the RFD's arguments:
#: several clients, lost responses, failures seen live and after a resume,
#: cancellation, streamed replay, retained commands.
MATRIX_RUNS: tuple[tuple[str, dict], ...] = (
    ("report-order", {}),
    ("multi-client", {}),
    ("lost-response", {}),
    ("failure-after-insertion", {}),
    ("failure-outcome", {}),
    ("tool-failure", {}),
    ("cancellation", {"prompts": 1}),
    ("streamed-replay", {}),
    ("retained-command", {}),
)

AREAS: dict[str, tuple[str, ...]] = {
    "correlation": ("SuccessCarriesInsertedId", "DistinctMessageIds", "ClientNeverGuesses", "BindingsMatchTruth",
                    "OneMessagePerSubmission"),
    "insertion": ("SuccessOnlyAfterInsertion", "ResponseNotHeldForWorkEnd", "EveryPromptAnswered",
                  "AcceptedMessageReportedLive"),
    "failure reporting": ("ErrorResponseMeansNotInserted", "WorkEndsWithOneIdle", "FailureEndsWithErrorIdle",
                          "ToolCallsTerminalBeforeIdle", "StateViewMatches", "OutcomeVisible"),
    "cancellation": ("CancelRequestErrorOnlyBeforeInsertion", "CancelledWorkEndsCancelled"),
    "replay": ("ReplayKeepsIds", "ReplayResetsBeforeChunks", "CommandsNeverReexecuted", "ViewMatchesHistory"),
}
PROPERTIES: tuple[str, ...] = tuple(p for names in AREAS.values() for p in names)
RULES = {m.name: m.rules for m in ALL_MONITORS}

#: What the RFD's FAQ says of each alternative (paraphrased), for the Markdown report.
CLAIMS = {
    "v1": "v1's response spans the turn; it can report failures at any point, but it is held until the work "
          "ends and an error after insertion is ambiguous.",
    "v2-draft": "an empty acceptance result leaves a correlation gap: the client cannot tell which accepted "
                "message is its own.",
    "client-correlation-token": "a second identifier needs uniqueness across clients and a mapping to history "
                                "messages; it could recover lost responses.",
    "ack-before-insertion": "a receipt or reservation is not insertion: the RFD keeps the request pending until "
                            "insertion or rejection.",
    "reuse-jsonrpc-id": "JSON-RPC ids are reused across connections and rewritten by proxies, so they cannot be "
                        "message identities.",
    "reuse-jsonrpc-id-proxy": "proxies may rewrite JSON-RPC ids, so an id the client chose means nothing to "
                              "the agent.",
    "client-chosen-id": "client-chosen IDs bring several sources of IDs and shared collision-avoidance rules.",
    "prompt-as-notification": "a fire-and-forget prompt has no channel for errors and no way to tell where it "
                              "was accepted.",
    "failed-state": "a client that does not know `failed` cannot tell that the work ended; an unknown stop reason "
                    "still arrives on an idle.",
    "separate-error-update": "two signals must agree, and the error is not part of the state snapshot that "
                             "mirrors (and resume) carry.",
    "error-notice": "notices are advisory, may be ignored and must not report fatal errors.",
    "error-sibling-field": "the same wire format, but the schema cannot tie error to one stop reason: a prose "
                           "rule every implementation enforces by hand.",
    "new-error-type": "reusing the JSON-RPC error object keeps one shape before and after insertion and lets "
                      "bridges convert without loss.",
}


def variant_names() -> list[str]:
    return ["rfd", *VARIANTS]


def _not_applicable(spec) -> dict[str, str]:
    reasons = dict(spec.not_applicable)
    if "*" in reasons:
        return {p: reasons["*"] for p in PROPERTIES}
    return {p: r for p, r in reasons.items() if p in PROPERTIES}


def run_one(task) -> dict:
    """Explore one variant on one matrix scenario (runs in a worker process).

    With ``html`` (the task's optional sixth item) each violation also comes
    back as a report run (``views``), without its diagram, and with the steps
    to draw it from (``raw``): only the shortest per cell gets drawn.
    """
    spec_name, scenario_name, overrides, out_dir, max_seconds, *rest = task
    html = bool(rest and rest[0])
    from .checking import write_acp_counterexamples

    spec = SPECS[spec_name]
    skip = _not_applicable(spec)
    monitors = tuple(m for m in ALL_MONITORS if m.name not in skip)
    bounds = SCENARIOS[scenario_name].bounds._replace(**overrides)
    model = AcpModel(spec, bounds, monitors=monitors, symmetry=True, continue_after_violation=True)
    result = explore(model, Limits(max_seconds=max_seconds), expand_violating=True)
    files = {}
    if result.violations and out_dir:
        folder = Path(out_dir) / spec_name / scenario_name
        folder.mkdir(parents=True, exist_ok=True)
        files = write_acp_counterexamples(model, result, str(folder), scenario_name)
    extra = _views(model, result, files, spec_name, scenario_name) if html else {}
    return {
        **extra,
        "spec": spec_name,
        "scenario": scenario_name,
        "complete": result.complete,
        "states": result.stats.states,
        "seconds": result.stats.seconds,
        "violations": [
            {"property": v.property.name, "length": len(v.path), "files": files.get(v.property.name, []),
             "sentence": v.sentence}
            for v in result.violations
        ],
    }


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


def run_matrix(specs=None, out_dir: str | None = None, jobs: int | None = None, max_seconds: float | None = None,
               progress=None, executor: str = "local", html: bool = False) -> dict:
    """All variants x matrix scenarios on ``executor`` (see :mod:`acplab.model.engine.executors`).

    With ``html`` the result also carries ``report_runs``: the shortest
    counterexample of every violated cell as a report run, with its diagram.
    """
    names = list(specs) if specs else variant_names()
    tasks = [(s, sc, ov, out_dir, max_seconds, html) for s in names for sc, ov in MATRIX_RUNS]
    started = time.perf_counter()
    runs = run_all(run_one, tasks, executor, jobs or os.cpu_count() or 1, progress)
    result = assemble(names, runs, time.perf_counter() - started)
    if html:
        result["report_runs"] = cell_runs(result, runs)
    return result


def cell_runs(matrix: dict, runs: list[dict]) -> list[dict]:
    """The report runs of the violated cells (ids ``cell-<n>``, ``cell`` naming spec and property), drawn."""
    from acplab.model.render.mermaid import mermaid
    from acplab.model.render.runview import sequence_svg

    out = []
    for name in matrix["specs"]:
        for prop in matrix["properties"]:
            detail = matrix["details"][name].get(prop, {})
            if matrix["cells"][name][prop] != "violated":
                continue
            run = next(r for r in runs if r["spec"] == name and r["scenario"] == detail["scenario"])
            view = dict(run["views"][prop], id=f"cell-{len(out) + 1}")
            steps, clients, title, violation, rules = run["raw"][prop]
            view["svg"] = sequence_svg(steps, clients, title, violation, rules)
            view["mermaid"] = mermaid(steps, clients, title, violation, rules)
            view["cell"] = [name, prop]
            out.append(view)
    return out


def assemble(names: list[str], runs: list[dict], seconds: float) -> dict:
    """Cells from runs: the shortest violation over scenarios, else holds/incomplete, or n/a."""
    cells, details = {}, {}
    for name in names:
        skip = _not_applicable(SPECS[name])
        mine = [r for r in runs if r["spec"] == name]
        cells[name], details[name] = {}, {}
        for prop in PROPERTIES:
            if prop in skip:
                cells[name][prop] = "n/a"
                details[name][prop] = {"reason": skip[prop]}
                continue
            hits = [(v["length"], r["scenario"], v) for r in mine for v in r["violations"] if v["property"] == prop]
            if hits:
                length, scenario, v = min(hits, key=lambda h: (h[0], h[1]))
                cells[name][prop] = "violated"
                details[name][prop] = {"trace_length": length, "scenario": scenario, "files": v["files"],
                                       "explanation": v["sentence"]}
            elif all(r["complete"] for r in mine):
                cells[name][prop] = "holds"
            else:
                cells[name][prop] = "incomplete"
    return {
        "specs": names,
        "properties": list(PROPERTIES),
        "areas": {a: list(p) for a, p in AREAS.items()},
        "rules": {p: list(RULES[p]) for p in PROPERTIES},
        "scenarios": [{"name": sc, "overrides": ov} for sc, ov in MATRIX_RUNS],
        "cells": cells,
        "details": details,
        "states": sum(r["states"] for r in runs),
        "seconds": round(seconds, 2),
        "runs": [{k: r[k] for k in ("spec", "scenario", "complete", "states")} | {"seconds": round(r["seconds"], 2)}
                 for r in runs],
    }


SYMBOL = {"holds": "✓", "violated": "✗", "incomplete": "?", "n/a": "–"}


def markdown(matrix: dict, link_base: str = "") -> str:
    """The table for the RFD, with violated cells linking to their Mermaid counterexample."""
    props = matrix["properties"]
    head = "| variant | " + " | ".join(f"{p}<br>({', '.join(matrix['rules'][p])})" for p in props) + " |"
    lines = ["# Variant matrix", "", _legend(), "", head, "|" + "---|" * (len(props) + 1)]
    for name in matrix["specs"]:
        row = [f"`{name}`"]
        for p in props:
            cell = matrix["cells"][name][p]
            detail = matrix["details"][name].get(p, {})
            text = SYMBOL[cell]
            if cell == "violated":
                text = f"✗ {detail['trace_length']}"
                mmd = next((f for f in detail.get("files", []) if f.endswith(".mmd")), None)
                if mmd:
                    text = f"[{text}]({_relative(mmd, link_base)})"
            row.append(text)
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## What each alternative gives up", ""]
    for name in matrix["specs"]:
        if name == "rfd":
            continue
        lines += _paragraph(matrix, name)
    return "\n".join(lines) + "\n"


def _legend() -> str:
    return ("✓ holds (exhaustive within the matrix scenarios' bounds) · ✗ *n* violated, shortest "
            "counterexample of *n* steps (linked) · ? incomplete · – not applicable (reason below)")


def _relative(path: str, base: str) -> str:
    """A link from the Markdown file's folder to a counterexample file."""
    return os.path.relpath(path, base) if base else path


def _paragraph(matrix: dict, name: str) -> list[str]:
    cells = matrix["cells"][name]
    details = matrix["details"][name]
    violated = [p for p in matrix["properties"] if cells[p] == "violated"]
    na = [p for p in matrix["properties"] if cells[p] == "n/a"]
    out = [f"### `{name}`", "", f"*The RFD:* {CLAIMS.get(name, SPECS[name].description)}", ""]
    if na and len(na) == len(matrix["properties"]):
        out.append(f"*The model:* not checked: {details[na[0]]['reason']}.")
        out.append("")
        return out
    if violated:
        first = min(violated, key=lambda p: details[p]["trace_length"])
        d = details[first]
        found = ", ".join(f"{p} ({', '.join(matrix['rules'][p])})" for p in violated)
        out.append(f"*The model:* breaks {found}. Shortest: {first} in {d['trace_length']} steps "
                   f"(scenario `{d['scenario']}`): {d['explanation']}")
    else:
        out.append("*The model:* no property is violated within these bounds: the model does not confirm the "
                   "RFD's argument here; its cost lies outside what the model observes.")
    if na:
        reasons = sorted({details[p]["reason"] for p in na})
        out.append("")
        out.append(f"*Not applicable:* {', '.join(na)}: {'; '.join(reasons)}.")
    out.append("")
    return out


def table_text(matrix: dict) -> str:
    """A compact terminal table: rows variants, columns numbered properties."""
    props = matrix["properties"]
    width = max(len(n) for n in matrix["specs"])
    lines = [" " * (width + 2) + " ".join(f"{i + 1:>2}" for i in range(len(props)))]
    for name in matrix["specs"]:
        cells = " ".join(f"{SYMBOL[matrix['cells'][name][p]]:>2}" for p in props)
        lines.append(f"{name:<{width}}  {cells}")
    lines.append("")
    lines += [f"{i + 1:>2} {p} [{', '.join(matrix['rules'][p])}]" for i, p in enumerate(props)]
    return "\n".join(lines)


COLOURS = {"holds": "#cfe8cf", "violated": "#f4b6b6", "incomplete": "#f6e3a1", "n/a": "#e4e4e4"}


def draw_heatmap(matrix: dict, path_svg: Path) -> None:
    """The matrix as a heat-map style table: rows variants, columns properties grouped by area."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from acplab.model.render.style import save_deterministic, setup_rcparams

    with matplotlib.rc_context():
        matplotlib.rcdefaults()  # independent of whatever the process drew before
        setup_rcparams()
        _draw_heatmap(plt, matrix, path_svg, save_deterministic)


def _draw_heatmap(plt, matrix: dict, path_svg: Path, save_deterministic) -> None:
    props, names = matrix["properties"], matrix["specs"]
    fig, ax = plt.subplots(figsize=(2.2 + 0.55 * len(props), 1.6 + 0.38 * len(names)))
    for r, name in enumerate(names):
        for c, prop in enumerate(props):
            cell = matrix["cells"][name][prop]
            detail = matrix["details"][name].get(prop, {})
            ax.add_patch(plt.Rectangle((c, r), 1, 1, facecolor=COLOURS[cell], edgecolor="white", linewidth=1.5))
            text = f"✗{detail['trace_length']}" if cell == "violated" else SYMBOL[cell]
            ax.text(c + 0.5, r + 0.55, text, ha="center", va="center", fontsize=8)
    ax.set_xlim(0, len(props))
    ax.set_ylim(len(names), 0)
    ax.set_yticks([r + 0.5 for r in range(len(names))], names, fontsize=8)
    labels = [f"{p} ({', '.join(matrix['rules'][p][:2])})" for p in props]
    ax.set_xticks([c + 0.5 for c in range(len(props))], labels, rotation=60, ha="right", fontsize=7)
    ax.tick_params(length=0)
    x = 0
    for area, members in matrix["areas"].items():
        ax.axvline(x, color="black", linewidth=0.8)
        ax.text(x + len(members) / 2, -0.3, area, ha="center", va="bottom", fontsize=8, weight="bold")
        x += len(members)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title("Variants x properties: ✓ holds, ✗n violated (shortest counterexample, n steps), – n/a",
                 fontsize=9, pad=22)
    fig.tight_layout()
    path_svg.parent.mkdir(parents=True, exist_ok=True)
    save_deterministic(fig, path_svg)
    plt.close(fig)


def write_figures(folder: Path) -> list[tuple[tuple[str, ...], str, str]]:
    """Figure hook for ``acplab figures``: the matrix as Markdown and as a heat map."""
    result = run_matrix()
    (folder / "matrix").mkdir(parents=True, exist_ok=True)
    stable = {k: v for k, v in result.items() if k not in ("seconds", "runs")}
    (folder / "matrix" / "matrix.json").write_text(json.dumps(stable, indent=1, sort_keys=True) + "\n")
    (folder / "matrix" / "matrix.md").write_text(markdown(result))
    draw_heatmap(result, folder / "matrix" / "matrix.svg")
    caption = (f"**Variant matrix**: the RFD, v1, the v2 draft and the FAQ's alternatives against every "
               f"property ({result['states']:,} states explored over {len(MATRIX_RUNS)} scenarios per variant).")
    return [(("matrix/matrix.svg", "matrix/matrix.md", "matrix/matrix.json"), caption, "acplab matrix")]
