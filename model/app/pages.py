"""The ``--html`` report of ``check``, ``matrix`` and ``simulate``: the document each command shows.

Each function turns a command's result into the plain document that
:func:`acplab.model.render.html.page` draws; :func:`write_page` writes it as
``report.html`` in the command's output folder.  A result that carries a
``coverage`` object (the explorer's and the simulator's)
gets its warnings and tables shown; nothing here computes coverage.
"""

from __future__ import annotations

from pathlib import Path

from acplab.model.render.html import page

REPORT = "report.html"


def write_page(folder, doc: dict) -> str:
    """Write ``report.html`` into ``folder``; return its path."""
    from acplab.model.render.atomic import write_atomic

    path = Path(folder) / REPORT
    write_atomic(path, page(doc))
    return str(path)


def _prop_result(p, result, runs_by_name: dict) -> dict:
    """One property's cell: holds / violated / found / missing / not reached / incomplete, linked to its run."""
    violated = {v.property.name for v in result.violations}
    if p.expectation == "sometimes":
        if result.witnesses.get(p.name) is not None:
            text = "found"
        else:
            text = "missing" if result.complete else "not reached"
    elif p.name in violated:
        text = "violated"
    else:
        text = "holds" if result.complete else "incomplete"
    cell = {"text": text, "class": {"not reached": "incomplete"}.get(text, text)}
    if p.name in runs_by_name:
        cell["run"] = runs_by_name[p.name]
    return cell


def properties_table(model, result, runs: list[dict], rule_texts: dict | None = None) -> dict:
    """Every property the check ran, what it claims, its rules and its result."""
    rule_texts = rule_texts or {}
    by_name = {r["name"]: r["id"] for r in runs}
    rows = []
    for p in model.properties():
        rules = ", ".join(p.rules) or "–"
        texts = "; ".join(f"{r}: {rule_texts[r]}" for r in p.rules if r in rule_texts)
        rows.append([p.name, p.expectation, {"text": rules, "title": texts} if texts else rules,
                     p.description or "–", _prop_result(p, result, by_name)])
    note = ("always: must hold in every reachable state; sometimes: a witness some run must reach; eventually: "
            "every run must get there. Click a result to step through its run.")
    if result.violations:
        note += " States past a violation are not explored: another property's holds means none was found before."
    return {"title": "Properties", "id": "properties", "head": ["property", "kind", "rules", "what it claims", "result"],
            "rows": rows, "note": note}


def check_page(target, result, summary: dict, runs: list[dict]) -> dict:
    """The report of one ``acplab check``."""
    stats = (f"{summary['states']:,} states, {summary['transitions']:,} transitions, depth {summary['depth']}, "
             f"{summary['seconds']:.2f} s" + (f" (stopped at {summary['limit']})" if summary.get("limit") else ""))
    facts = list(target.facts) + [("exploration", ("complete: " if result.complete else "incomplete: ") + stats)]
    return {
        "title": f"acplab check: {target.spec_label}",
        "verdict": summary["verdict"],
        "lines": [target.header, stats],
        "facts": facts,
        "tables": [properties_table(target.model, result, runs)],
        "coverage": coverage_tables(summary.get("coverage")),
        "runs": runs,
    }


def coverage_tables(cov: dict | None, unit: str = "state") -> dict | None:
    """A coverage object as the page shows it: its warnings, then actions and properties (per ``unit``:
    the explorer's states and transitions, or the simulator's steps)."""
    if cov is None:
        return None
    return {"warnings": cov["warnings"], "tables": _coverage_tables(cov, unit)}


def _coverage_tables(cov: dict, unit: str) -> list[dict]:
    if "actions" not in cov:
        return []
    actions = [[kind, n] for kind, n in sorted(cov["actions"].items(), key=lambda kv: -kv[1])]
    vacuous = set(cov.get("vacuous", ()))
    props = [[name, c["expectation"], c["evaluated"], c["armed"], c["violated"], "vacuous" if name in vacuous else ""]
             for name, c in cov["properties"].items()]
    fired, per = ("Explored transitions", "transitions") if unit == "state" else ("Steps taken in all runs", "steps")
    return [
        {"title": "Actions", "id": "coverage-actions", "head": ["action", per], "rows": actions,
         "note": f"{fired} per kind of action."},
        {"title": "Properties", "id": "coverage-properties",
         "head": ["property", "expectation", "evaluated", "armed", "violated", ""], "rows": props,
         "note": f"The {unit}s each property was checked on, the {unit}s where it had something to watch (– : "
                 f"it keeps no bookkeeping to tell), and its violations (–: not judged here)."},
    ]


def matrix_page(matrix: dict, folder, symbols: dict[str, str]) -> dict:
    """The report of ``acplab matrix``: goals, then the RFD's rules (and the bridges'), each cell with a
    counterexample linked to its run.

    ``symbols`` maps a cell (holds, violated, ...) to its mark, as the matrix's own tables show it.
    """
    runs = matrix.get("report_runs", [])
    by_cell = {tuple(r["cell"]): r["id"] for r in runs}
    tables = []
    for title, ident, props, rows in (
        ("Goals", "matrix", matrix["goals"], matrix["specs"]),
        ("The RFD's rules", "rules", matrix["properties"],
         [r for r in matrix["specs"] if matrix["rows"][r]["model"] == "acp"]),
        ("The bridges' rules", "bridges", matrix["bridge_properties"],
         [r for r in matrix["specs"] if matrix["rows"][r]["model"] != "acp"]),
    ):
        if rows:
            tables.append(_matrix_table(matrix, title, ident, props, rows, symbols, by_cell, lead=not tables))
    every = matrix["goals"] + matrix["properties"] + matrix["bridge_properties"]
    legend = [[str(i + 1), p, ", ".join(matrix["rules"][p])] for i, p in enumerate(every)]
    rfd = matrix["cells"].get("rfd", {})
    rfd_broken = any(c == "violated" and p not in matrix["known_limitations"] for p, c in rfd.items())
    incomplete = any("incomplete" in r.values() for r in matrix["cells"].values())
    verdict = "violated" if rfd_broken else "incomplete" if incomplete else "holds"
    return {
        "title": "acplab matrix: variants x goals and rules",
        "verdict": verdict,
        "lines": [f"{len(matrix['specs'])} rows x {len(matrix['goals'])} goals and {len(matrix['properties'])} rules "
                  f"over {len(matrix['scenarios'])} scenarios; {matrix['states']:,} states in "
                  f"{matrix['seconds']:.1f} s; the verdict is the rfd row's",
                  f"files: {folder}"],
        "facts": [("variants", ", ".join(matrix["specs"])),
                  ("scenarios", ", ".join(s["name"] + (f" {s['overrides']}" if s["overrides"] else "")
                                          for s in matrix["scenarios"])),
                  ("no difference on the goals", "; ".join(f"{k}: {v}" for k, v in matrix["no_difference"].items())
                   or "none")],
        "tables": tables + _matrix_columns(matrix)
        + [{"title": "Goals and properties", "head": ["#", "property", "rules"], "rows": legend}],
        "runs": runs,
    }


def _matrix_columns(matrix: dict) -> list[dict]:
    """The fault columns and the client strategies as report tables (each cell's assumptions in its tip)."""
    from .matrix_report import _fault_mark

    names = [f["name"] for f in matrix.get("fault_columns", [])]
    out = []
    if matrix.get("faults"):
        rows = [[row] + [{"text": _fault_mark(cells[n]), "title": cells[n].get("reason") or "; ".join(
            f"{g}: {d['explanation']}" for g, d in cells[n].get("goals", {}).items()) or "no goal lost"}
            for n in names] for row, cells in matrix["faults"].items()]
        out.append({"title": "Faults as columns", "head": ["row"] + names, "rows": rows,
                    "note": "the goals each fault adds to the row (the same scenario without it is the baseline); "
                            "– the row has no such obligation"})
    from .matrix_columns import joined

    extra = joined(matrix)
    if extra is not None:  # the extra columns (costs, spec surface, ...), as the terminal and matrix.md show them
        out.append({"title": extra.title[0].upper() + extra.title[1:], "head": ["spec", *extra.fields.values()],
                    "rows": [[name, *row.values()] for name, row in extra.cells.items()], "note": extra.intro})
    if matrix.get("strategies"):
        out.append({"title": "Client strategies", "head": ["design", "best", "worst", "goals violated"],
                    "rows": [[d, s["best"], s["worst"], "; ".join(f"{n}: {', '.join(g) or 'none'}"
                                                                  for n, g in s["violated"].items())]
                             for d, s in matrix["strategies"].items()]})
    return out


def _matrix_table(matrix, title, ident, props, rows, symbols, by_cell, lead) -> dict:
    from .matrix_report import assumption_text

    every = matrix["goals"] + matrix["properties"] + matrix["bridge_properties"]
    head = ["variant"] + [{"text": f"{every.index(p) + 1}", "title": f"{p} [{', '.join(matrix['rules'][p])}]"}
                          for p in props]
    body = []
    for name in rows:
        row = [name]
        for p in props:
            cell = matrix["cells"][name][p]
            detail = matrix["details"][name].get(p, {})
            text = symbols[cell]
            if "trace_length" in detail:
                text = f"{text} {detail['trace_length']}" + (" †" if detail.get("known_limitation") else "")
            tip = detail.get("explanation") or detail.get("reason") or f"{p}: {cell}"
            if cell == "by design":
                tip = f"by design: {detail['reason']}"
            if assumption_text(detail):
                tip += f" · assumes {assumption_text(detail)}"
            row.append({"text": text, "class": "na" if cell == "n/a" else cell.replace(" ", "-"), "title": tip,
                        "run": by_cell.get((name, p))})
        body.append(row)
    return {"title": title, "id": ident, "lead": lead, "head": head, "rows": body,
            "note": "✓ holds · ✗ n violated, shortest counterexample of n steps (click to step through) · † a "
                    "limitation the RFD declares · ⊘ n by design (not a finding) · ? incomplete · – not applicable "
                    "(hover for the reason)"}


def simulate_page(result, summary: dict) -> dict:
    """The report of ``acplab simulate``: parameters, metrics, coverage, and each monitor's first violating run."""
    from acplab.model.acp.monitor_set import monitor_properties
    from acplab.model.render.mermaid import mermaid
    from acplab.model.render.runview import acp_steps, run_view, sequence_svg
    from acplab.simulations.fault_windows import window_warning
    from acplab.simulations.simulate import example_states, fmt, headline

    rules = {m.name: m.rules for m in monitor_properties()}
    runs = []
    for name, (run, v) in sorted(result.examples.items()):
        model = result.model
        timed = run.steps[: v.step]
        steps = [(a, e) for _t, a, e in timed]
        title = (f"{name} [{', '.join(rules.get(name, ()))}] violated in simulated run {run.index} (seed {run.seed}) "
                 f"at {v.t * 1000.0:.1f} ms, step {v.step} (spec {model.spec.name})")
        violation = (name, v.sentence)
        files = summary["violations"]["files"].get(name, [])
        view = run_view(f"run{len(runs) + 1}", "simulated run", name, title,
                        acp_steps(model, example_states(model, run, v), steps, [t * 1000.0 for t, _a, _e in timed]),
                        rules=rules.get(name, ()), sentence=v.sentence, files=files,
                        svg=sequence_svg(steps, model.bounds.clients, title, violation, rules.get(name, ())),
                        mermaid_text=mermaid(steps, model.bounds.clients, title, violation, rules.get(name, ())))
        runs.append(view)
    by_name = {r["name"]: r["id"] for r in runs}
    metrics = []
    for name, row in summary["metrics"].items():
        if row.get("n/a"):
            metrics.append([name, {"text": "n/a", "class": "na", "title": row["n/a"]}, "", "", "", "", row["unit"],
                            row["n/a"]])
            continue
        lo, hi = row["ci"]
        interval = "–" if lo is None else f"{fmt(lo)} .. {fmt(hi)}"
        latency = name.endswith("_ms")
        metrics.append([name, fmt(row["mean"]), interval, fmt(row.get("p50")) if latency else "",
                        fmt(row.get("p95")) if latency else "", row["n"], row["unit"], row["description"]])
    v = summary["violations"]
    monitors = [[name, n, {"text": f"run {v['first'][name]['run']} at {v['first'][name]['t_ms']:.1f} ms",
                           "run": by_name.get(name)}, v["first"][name]["sentence"]]
                for name, n in v["per_monitor"].items()]
    cov = summary.get("coverage") or {}
    windows = [[w, c["runs"], c["count"], "needed" if w in cov.get("needed", []) else ""]
               for w, c in cov.get("windows", {}).items()]
    params = summary["params"]
    return {
        "title": f"acplab simulate: spec {summary['spec']}",
        "verdict": summary["verdict"],
        "lines": [headline(summary), f"metrics from {summary['metrics_from']['basis']}"]
                 + [f"coverage warning: {'window never opened: ' if window_warning(w) else ''}{w}"
                    for w in cov.get("warnings", [])],
        "facts": [("spec", summary["spec"]), ("parameters", " ".join(f"{k}={_param(val)}" for k, val in params.items()
                                                                        if k != "spec")),
                  ("metrics from", summary["metrics_from"]["basis"])],
        "tables": [
            {"title": "Metrics", "id": "metrics", "lead": True, "head": ["metric", "mean", "95% interval", "p50", "p95", "n", "per",
                                                            "what"],
             "rows": metrics, "note": "Wilson intervals for proportions, t intervals for means, none below two "
                                      "samples; samples treated as independent."},
            {"title": "Violations", "id": "violations", "lead": True, "head": ["monitor", "count", "first", "what happened"],
             "rows": monitors, "note": "Click a first violation to step through that run up to it."},
        ],
        "coverage": {"warnings": cov.get("warnings", []),
                     "tables": [{"title": "Fault windows", "id": "windows",
                                 "head": ["window", "runs that opened it", "times", "needed"], "rows": windows}]
                     + _coverage_tables(cov, "step")},
        "runs": runs,
    }


def _param(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ",".join(map(str, value)) or "none"
    return f"{value:g}" if isinstance(value, float) else str(value)
