"""The variant matrix as text: the Markdown review of the RFD's FAQ, the terminal tables and the heat map.

Pure functions of the matrix dictionary :func:`.matrix.run_matrix` returns.
The Markdown has the goals table first, then the RFD's rules, then the
bridges' rules, then one paragraph per alternative: the RFD's claim,
whether the model confirms it, refutes it or cannot speak to it, the
shortest counterexample per violated goal, and what the alternative does
better.
"""

from __future__ import annotations

import os
from pathlib import Path

from acplab.model.acp.goals import GOALS
from acplab.model.acp.spec import SPECS

SYMBOL = {"holds": "✓", "violated": "✗", "incomplete": "?", "n/a": "–", "by design": "⊘"}
COLOURS = {"holds": "#cfe8cf", "violated": "#f4b6b6", "incomplete": "#f6e3a1", "n/a": "#e4e4e4",
           "by design": "#dcdcf0", "known": "#f6d7b0"}
LEGEND = ("✓ holds (exhaustive within the matrix scenarios' bounds) · ✗ *n* violated: a finding, shortest "
          "counterexample of *n* steps (linked) · ✗ *n* † violated, a limitation the RFD itself declares · "
          "⊘ *n* a rule the variant breaks by design (its definition), never a finding · ? incomplete · "
          "– not applicable (reason below)")


def cell_text(matrix: dict, row: str, prop: str, link_base: str | None = None) -> str:
    """The mark of one cell (``link_base``: link violated cells to their Mermaid diagram, relative to it)."""
    cell = matrix["cells"][row][prop]
    detail = matrix["details"][row].get(prop, {})
    if "trace_length" not in detail:
        return SYMBOL[cell]
    text = f"{SYMBOL[cell]} {detail['trace_length']}" + (" †" if detail.get("known_limitation") else "")
    mmd = next((f for f in detail.get("files", []) if f.endswith(".mmd")), None)
    if link_base is not None and mmd:
        text = f"[{text}]({_relative(mmd, link_base)})"
    return text


def _relative(path: str, base: str) -> str:
    return os.path.relpath(path, base) if base else path


def _table(matrix: dict, rows: list[str], props: list[str], link_base: str, first: str = "variant") -> list[str]:
    head = f"| {first} | " + " | ".join(f"{p}<br>({', '.join(matrix['rules'][p][:3])})" for p in props) + " |"
    lines = [head, "|" + "---|" * (len(props) + 1)]
    for row in rows:
        lines.append(f"| `{row}` | " + " | ".join(cell_text(matrix, row, p, link_base) for p in props) + " |")
    return lines


def _acp_rows(matrix: dict) -> list[str]:
    return [r for r in matrix["specs"] if matrix["rows"][r]["model"] == "acp"]


def _bridge_rows(matrix: dict) -> list[str]:
    return [r for r in matrix["specs"] if matrix["rows"][r]["model"] != "acp"]


def markdown(matrix: dict, link_base: str = "") -> str:
    """The matrix for the RFD: three tables, then an honest paragraph per alternative."""
    goals = {g.name: g for g in GOALS}
    out = ["# Variant matrix", "", LEGEND, "", "## Goals", "",
           "What any design of the prompt lifecycle should achieve, judged without the RFD's mechanisms "
           "(`model/acp/goals.py`; the rule IDs are context only). Bridge rows judge the goals a one-prompt "
           "bridge model can speak to.", ""]
    out += _table(matrix, matrix["specs"], matrix["goals"], link_base)
    out += [""] + [f"- **{g}**: {goals[g].description}." for g in matrix["goals"]]
    out += ["", "Limitations the RFD declares (†): " + "; ".join(
        f"**{g}**: {text}" for g, text in matrix["known_limitations"].items()) + "."]
    if matrix["findings"]:
        out += ["", "Findings for the RFD (goals an `rfd` row violates that the RFD does not declare): " + "; ".join(
            f"`{f['row']}` {f['goal']}: {matrix['details'][f['row']][f['goal']]['explanation']}"
            for f in matrix["findings"]) + "."]
    out += ["", "## The RFD's rules", "", "Each column checks one rule of the RFD (or the schema it cites). An "
            "alternative that replaces the RFD's mechanism breaks some by definition (⊘): those cells restate "
            "its design and are not findings.", ""]
    out += _table(matrix, _acp_rows(matrix), matrix["properties"], link_base)
    unlisted = matrix.get("unlisted", {})
    out += ["", "The other rule monitors (JSON-RPC framing, session/close, background work, notices, v1's and the "
            "bridges' wire rules) run on every ACP row too; " + (
                "rows that break one: " + "; ".join(f"`{r}` {', '.join(names)}" for r, names in unlisted.items())
                if unlisted else "no row breaks one") + "."]
    bridges = _bridge_rows(matrix)
    if bridges:
        out += ["", "## The bridges' rules", "", "The v1<->v2 bridges of the RFD (`model/acp/bridges.py`), each "
                "row a bridge model with the agent's failure carrying a code and `data`; `+B5` streams an agent "
                "message the agent then replaces, `+B8` lets the agent run work of its own while the prompt waits.",
                ""]
        out += _table(matrix, bridges, matrix["bridge_properties"], link_base, "row")
    if matrix["no_difference"]:
        out += ["", "## No difference on the goals", ""]
        out += [f"- `{name}`: {reason}." for name, reason in matrix["no_difference"].items()]
    out += ["", "## The RFD's FAQ, alternative by alternative", ""]
    out += rfd_paragraph(matrix)
    for name in dict.fromkeys(matrix["rows"][r]["spec"] for r in matrix["specs"]):
        if name != "rfd":
            out += paragraph(matrix, name, link_base)
    return "\n".join(out) + "\n"


def rfd_paragraph(matrix: dict) -> list[str]:
    """The RFD's own rows: its declared limitations, and what the goals find beyond them."""
    if "rfd" not in matrix["cells"]:
        return []
    cells = matrix["cells"]["rfd"]
    declared = [g for g in matrix["goals"] if cells[g] == "violated" and g in matrix["known_limitations"]]
    undeclared = [g for g in matrix["goals"] if cells[g] == "violated" and g not in matrix["known_limitations"]]
    limits = f" except {', '.join(declared)}, which it declares it does not meet" if declared else ""
    text = [f"The baseline. On the ACP model it meets every goal{limits}." if not undeclared else
            f"The baseline. On the ACP model it violates {', '.join(undeclared)}."]
    bridges = [f for f in matrix["findings"] if f["row"] != "rfd"]
    if bridges:
        text.append("On the bridges the model finds: " + "; ".join(
            f"{f['goal']} on `{f['row']}` ({matrix['details'][f['row']][f['goal']]['explanation']})"
            for f in bridges) + ".")
    return ["### `rfd`", "", " ".join(text), ""]


def paragraph(matrix: dict, name: str, link_base: str = "") -> list[str]:
    """One alternative: the claim, the verdict, the shortest counterexample per violated goal, what it does better."""
    v = matrix["verdicts"][name]
    rows = [r for r in matrix["specs"] if matrix["rows"][r]["spec"] == name]
    claim = v["claim"] or f"no claim on record for this variant ({SPECS[name].description})"
    text = [f"*The RFD:* {claim}.", f"*The model:* **{v['verdict']}**. {v['sentence'][:1].upper()}{v['sentence'][1:]}"]
    if v.get("note"):
        text.append(f"*How it is rendered:* {v['note']}.")
    shortest = _shortest_goal_counterexamples(matrix, rows, link_base)
    if shortest:
        text.append("Shortest counterexamples: " + "; ".join(shortest) + ".")
    better = f"better than rfd on {', '.join(v['better'])}" if v["better"] else "nothing a goal measures better"
    also = f"; beyond the goals, {v['also']}" if v["also"] else ""
    worse = f" It is worse on {', '.join(v['worse'])}." if v["worse"] else ""
    text.append(f"*Does better:* {better}{also}.{worse}")
    designed = {p: matrix["details"][r][p]["reason"] for r in rows for p in matrix["details"][r]
                if matrix["cells"][r][p] == "by design"}
    if designed:
        text.append("*By design, not findings:* " + "; ".join(f"{p} ({why})" for p, why in designed.items()) + ".")
    if v["rule_findings"]:
        text.append(f"*Rules it also breaks:* {', '.join(v['rule_findings'])}.")
    if name in matrix["no_difference"]:
        text.append(f"*No difference on the goals:* {matrix['no_difference'][name]}.")
    head = f"### `{name}`" + (f" (rows: {', '.join(f'`{r}`' for r in rows)})" if len(rows) > 1 else "")
    return [head, "", " ".join(text), ""]


def _shortest_goal_counterexamples(matrix: dict, rows: list[str], link_base: str) -> list[str]:
    best: dict = {}
    for r in rows:
        for g in matrix["goals"]:
            d = matrix["details"][r].get(g)
            if matrix["cells"][r][g] == "violated" and (g not in best or d["trace_length"] < best[g][1]["trace_length"]):
                best[g] = (r, d)
    out = []
    for g, (r, d) in sorted(best.items(), key=lambda kv: bool(kv[1][1].get("known_limitation"))):
        where = d["scenario"] + (f" on `{r}`" if "@" in r else "")
        mark = " (as in rfd: a limitation the RFD declares)" if d.get("known_limitation") else ""
        out.append(f"{g}{mark} in {d['trace_length']} steps ({where}): {d['explanation']}"
                   + _link(d, link_base))
    return out


def _link(detail: dict, link_base: str) -> str:
    mmd = next((f for f in detail.get("files", []) if f.endswith(".mmd")), None)
    return f" [diagram]({_relative(mmd, link_base)})" if mmd else ""


def table_text(matrix: dict) -> str:
    """Compact terminal tables: goals for every row, then the rules for the ACP rows (numbered columns)."""
    width = max(len(n) for n in matrix["specs"])
    out = []
    for title, rows, props in (("goals", matrix["specs"], matrix["goals"]),
                               ("rules", _acp_rows(matrix), matrix["properties"]),
                               ("bridge rules", _bridge_rows(matrix), matrix["bridge_properties"])):
        if not rows:
            continue
        out.append(f"{title}:")
        out.append(" " * (width + 2) + " ".join(f"{i + 1:>3}" for i in range(len(props))))
        for name in rows:
            marks = []
            for p in props:
                d = matrix["details"][name].get(p, {})
                mark = SYMBOL[matrix["cells"][name][p]] + ("†" if d.get("known_limitation") else "")
                marks.append(f"{mark:>3}")
            out.append(f"{name:<{width}}  " + " ".join(marks))
        out += [f"{i + 1:>3} {p} [{', '.join(matrix['rules'][p])}]" for i, p in enumerate(props)] + [""]
    return "\n".join(out).rstrip()


def draw_heatmap(matrix: dict, path_svg: Path) -> None:
    """The goals (every row) and the RFD's rules (ACP rows) as two heat-map tables side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from acplab.model.render.style import save_deterministic, setup_rcparams

    with matplotlib.rc_context():
        matplotlib.rcdefaults()  # independent of whatever the process drew before
        setup_rcparams()
        rows = matrix["specs"]
        fig, axes = plt.subplots(1, 2, figsize=(4.0 + 0.5 * (len(matrix["goals"]) + len(matrix["properties"])),
                                                2.2 + 0.36 * len(rows)),
                                 gridspec_kw={"width_ratios": [len(matrix["goals"]), len(matrix["properties"])]})
        _panel(axes[0], matrix, rows, matrix["goals"], "goals (design-neutral)", plt)
        _panel(axes[1], matrix, _acp_rows(matrix), matrix["properties"], "the RFD's rules", plt, rows)
        fig.suptitle("Variants x goals and rules: ✓ holds, ✗n violated (n steps), † declared by the RFD, "
                     "⊘ by design, – n/a", fontsize=9)
        fig.tight_layout()
        path_svg.parent.mkdir(parents=True, exist_ok=True)
        save_deterministic(fig, path_svg)
        plt.close(fig)


def _panel(ax, matrix: dict, rows: list[str], props: list[str], title: str, plt, all_rows=None) -> None:
    all_rows = all_rows or rows
    for name in rows:
        r = all_rows.index(name)
        for c, prop in enumerate(props):
            cell = matrix["cells"][name][prop]
            detail = matrix["details"][name].get(prop, {})
            colour = COLOURS["known"] if detail.get("known_limitation") else COLOURS[cell]
            ax.add_patch(plt.Rectangle((c, r), 1, 1, facecolor=colour, edgecolor="white", linewidth=1.5))
            ax.text(c + 0.5, r + 0.55, cell_text(matrix, name, prop), ha="center", va="center", fontsize=7)
    ax.set_xlim(0, len(props))
    ax.set_ylim(len(all_rows), 0)
    if all_rows is rows:
        ax.set_yticks([r + 0.5 for r in range(len(all_rows))], all_rows, fontsize=7)
    else:  # aligned with the goals panel's rows; rows it does not have are said to be elsewhere
        ax.set_yticks([])
        if len(all_rows) > len(rows):
            ax.text(len(props) / 2, (len(rows) + len(all_rows)) / 2, "bridge rows: their rules are in matrix.md",
                    ha="center", va="center", fontsize=8, color="#555555")
    ax.set_xticks([c + 0.5 for c in range(len(props))], props, rotation=60, ha="right", fontsize=7)
    ax.tick_params(length=0)
    ax.set_title(title, fontsize=9)
    for side in ax.spines.values():
        side.set_visible(False)
