"""The variant matrix as text: the Markdown review of the RFD's FAQ, the terminal tables and the heat map.

Pure functions of the matrix dictionary :func:`.matrix.run_matrix` returns.
The Markdown has the goals table first (each ✗ with the code of what it
assumes, explained below the table), then the RFD's rules, then the
bridges' rules, the fault columns, the client strategies, what the runs
read, any extra columns, and the review of the FAQ alternative by
alternative (:mod:`.matrix_review`).

Text that comes from a spec (a description, a reason, a claim: a spec file
can set them) goes through :func:`md_text`, so the document cannot carry raw
HTML, links or table breaks of the file's author.
"""

from __future__ import annotations

import os
from pathlib import Path

from acplab.model.acp.goals import GOALS
from acplab.model.acp.spec import SPECS

from .matrix_review import assumption_text, md_text, review, strategy_words  # noqa: F401 - md_text: part of this module's face

SYMBOL = {"holds": "✓", "violated": "✗", "incomplete": "?", "n/a": "–", "by design": "⊘"}
COLOURS = {"holds": "#cfe8cf", "violated": "#f4b6b6", "incomplete": "#f6e3a1", "n/a": "#e4e4e4",
           "by design": "#dcdcf0", "known": "#f6d7b0"}
LEGEND = ("✓ holds (exhaustive within the matrix scenarios' bounds) · ✗ *n* violated: a finding, shortest "
          "counterexample of *n* steps (linked) · ✗ *n* † violated, a limitation the RFD itself declares · "
          "⊘ *n* a rule the variant breaks by design (its definition), never a finding · ? incomplete · "
          "– not applicable (reason below)")


def assumption_codes(matrix: dict) -> dict[str, str]:
    """A short code (A1, A2, ...) for each distinct assumption of a violated or by-design cell, in table order."""
    codes: dict[str, str] = {}
    for row in matrix["specs"]:
        for prop in matrix["goals"] + matrix["properties"] + matrix["bridge_properties"]:
            text = assumption_text(matrix["details"][row].get(prop, {}))
            if text and text not in codes:
                codes[text] = f"A{len(codes) + 1}"
    return codes


def cell_text(matrix: dict, row: str, prop: str, link_base: str | None = None, codes: dict | None = None) -> str:
    """The mark of one cell (``link_base``: link violated cells to their Mermaid diagram, relative to it;
    ``codes``: add the code of the cell's assumptions, :func:`assumption_codes`)."""
    cell = matrix["cells"][row][prop]
    detail = matrix["details"][row].get(prop, {})
    if "trace_length" not in detail:
        return SYMBOL[cell]
    text = f"{SYMBOL[cell]} {detail['trace_length']}" + (" †" if detail.get("known_limitation") else "")
    if codes and assumption_text(detail):
        text += f" {codes[assumption_text(detail)]}"
    mmd = next((f for f in detail.get("files", []) if f.endswith(".mmd")), None)
    if link_base is not None and mmd:
        text = f"[{text}]({_relative(mmd, link_base)})"
    return text


def _relative(path: str, base: str) -> str:
    return os.path.relpath(path, base) if base else path


def _table(matrix: dict, rows: list[str], props: list[str], link_base: str, first: str = "variant") -> list[str]:
    head = f"| {first} | " + " | ".join(f"{p}<br>({', '.join(matrix['rules'][p][:3])})" for p in props) + " |"
    lines = [head, "|" + "---|" * (len(props) + 1)]
    codes = assumption_codes(matrix)
    for row in rows:
        lines.append(f"| `{row}` | " + " | ".join(cell_text(matrix, row, p, link_base, codes) for p in props) + " |")
    return lines


def assumptions_legend(matrix: dict) -> list[str]:
    """Each assumption code with what it stands for."""
    return [f"- **{code}**: {md_text(text)}" for text, code in assumption_codes(matrix).items()]


def columns_sections(matrix: dict) -> list[str]:
    """Faults as columns, client strategies, rows identical to another's, unread switches, extra columns."""
    out: list[str] = []
    faults = matrix.get("faults", {})
    if faults:
        names = [f["name"] for f in matrix["fault_columns"]]
        out += ["## Faults as columns", "", "Each fault is applied to every row that has the obligation it breaks and "
                "compared with the same row on the same scenario without it: a cell lists the goals the fault "
                "adds (✗ goal *n*), ✓ if it adds none, – if the row has no such obligation.", ""]
        out += [f"- **{f['name']}** ({f['scenario']}): {md_text(f['meaning'])}; breaks: {md_text(f['obligation'])}."
                for f in matrix["fault_columns"]]
        out += ["", "| row | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
        for row, cells in faults.items():
            out.append(f"| `{row}` | " + " | ".join(_fault_mark(cells[n]) for n in names) + " |")
        reasons = sorted({c["reason"] for cells in faults.values() for c in cells.values() if c["cell"] == "n/a"})
        out += ["", "Not applicable (–): " + "; ".join(md_text(r) for r in reasons) + "." if reasons else ""]
    strategies = matrix.get("strategies", {})
    if strategies:
        out += ["## Client strategies", "", "Per design, the sane strategies its client authors could choose "
                "(`model/acp/client_strategies.py`), each explored on every matrix scenario; best and worst by the "
                "goals they violate.", ""]
        for design, summary in strategies.items():
            out.append(f"- `{design}`: {strategy_words(summary)}.")
        out.append("")
    same = matrix.get("identical_runs", {})
    unread = matrix.get("unread_switches", {})
    models = {row: found for row, found in matrix.get("same_models", {}).items() if row not in same}
    if same or unread or models:
        out += ["## What the runs read", ""]
        out += [f"- `{row}` = `{s['as']}`: its runs are that row's (switch {', '.join(s['switches']) or 'none'} not "
                f"read by the ACP model within the matrix's bounds)." for row, s in same.items()]
        out += [_same_model_line(row, found) for row, found in models.items()]
        out += [f"- switch `{name}` is read by no matrix run: {md_text(why)}." for name, why in unread.items()]
        out.append("")
    return out


def columns_markdown(matrix: dict) -> str:
    """The extra columns (:mod:`.matrix_columns`) as one table, their sources below it ("" without any)."""
    from .matrix_columns import joined

    table = joined(matrix)
    if table is None:
        return ""
    lines = ["", f"## {table.title[0].upper()}{table.title[1:]}", "", table.intro, "",
             "| spec | " + " | ".join(table.fields.values()) + " |", "|" + "---|" * (len(table.fields) + 1)]
    lines += [f"| {name} | " + " | ".join(md_text(v) for v in row.values()) + " |" for name, row in table.cells.items()]
    lines += ["", *table.notes] if table.notes else []
    return "\n".join(lines) + "\n"


def _same_model_line(row: str, found: list[dict]) -> str:
    """A row some of whose runs are another row's model (``same_models``), in one line."""
    scenarios = ", ".join(m["scenario"] for m in found)
    others = ", ".join(f"`{name}`" for name in dict.fromkeys(m["as"] for m in found))
    switches = ", ".join(sorted({s for m in found for s in m["switches"]})) or "none"
    return (f"- `{row}` on {scenarios}: the same model as {others} there (switch {switches} read by no step of "
            f"those runs), explored once.")


def _fault_mark(cell: dict) -> str:
    if cell.get("already"):
        return f"{SYMBOL[cell['cell']]} (already ✗ without it: {', '.join(cell['already'])})"
    if cell["cell"] != "violated":
        return SYMBOL[cell["cell"]]
    return "✗ " + ", ".join(f"{g} {d['length']}" for g, d in cell["goals"].items())


def _acp_rows(matrix: dict) -> list[str]:
    return [r for r in matrix["specs"] if matrix["rows"][r]["model"] == "acp"]


def _bridge_rows(matrix: dict) -> list[str]:
    return [r for r in matrix["specs"] if matrix["rows"][r]["model"] != "acp"]


def markdown(matrix: dict, link_base: str = "") -> str:
    """The matrix for the RFD: the tables, the columns beyond them, then the review alternative by alternative."""
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
    if matrix.get("findings_as_written"):
        out += ["", "Findings for the RFD as written (`rfd-as-written`: every goal and rule it fails that the RFD "
                "does not declare): " + "; ".join(
                    f"{f['property']}: {md_text(matrix['details'][f['row']][f['property']]['explanation'])} "
                    f"({assumption_text(matrix['details'][f['row']][f['property']]) or 'a bridge row'})"
                    for f in matrix["findings_as_written"]) + "."]
    if assumption_codes(matrix):
        out += ["", "Assumptions (the code after a ✗ or ⊘: the bound values and switches, differing from rfd's, "
                "that every run violating the cell has; every run without one of them meets it):", ""]
        out += assumptions_legend(matrix)
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
        out += [f"- `{name}`: {md_text(reason)}." for name, reason in matrix["no_difference"].items()]
    out += [""] + columns_sections(matrix)
    extra = columns_markdown(matrix)
    out += [extra, ""] if extra else []
    out += ["## The RFD's FAQ, alternative by alternative", ""]
    out += rfd_paragraph(matrix)
    out += review(matrix, link_base)
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
    return "\n".join(out + columns_text(matrix)).rstrip()


def columns_text(matrix: dict) -> list[str]:
    """The extra columns (:mod:`.matrix_columns`) as a terminal table: one line per spec, numbered fields."""
    from .matrix_columns import joined

    table = joined(matrix)
    if table is None:
        return []
    width = max(len(n) for n in table.cells)
    widths = [max(len(str(i + 1)), *(len(row[f]) for row in table.cells.values())) for i, f in enumerate(table.fields)]
    out = [f"{table.title}:", " " * (width + 2) + " ".join(f"{i + 1:>{w}}" for i, w in enumerate(widths))]
    out += [f"{name:<{width}}  " + " ".join(f"{v:>{w}}" for v, w in zip(row.values(), widths))
            for name, row in table.cells.items()]
    return out + [f"{i + 1:>3} {heading}" for i, heading in enumerate(table.fields.values())] + [""]


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
        codes = assumption_codes(matrix)
        legend = [f"{code}: {text}" for text, code in codes.items()]
        from .matrix_columns import joined

        extra = joined(matrix)
        widths = [len(matrix["goals"]), len(matrix["properties"])] + ([_EXTRA_WIDTH * len(extra.fields)] if extra else [])
        fig, axes = plt.subplots(1, len(widths), figsize=(4.0 + 0.5 * sum(widths),
                                                          2.2 + 0.36 * len(rows) + 0.16 * len(legend)),
                                 gridspec_kw={"width_ratios": widths})
        _panel(axes[0], matrix, rows, matrix["goals"], "goals (design-neutral)", plt, codes=codes)
        _panel(axes[1], matrix, _acp_rows(matrix), matrix["properties"], "the RFD's rules", plt, rows, codes)
        if extra:
            _columns_panel(axes[2], extra, rows, plt)
        fig.suptitle("Variants x goals and rules: ✓ holds, ✗n violated (n steps), † declared by the RFD, "
                     "⊘ by design, – n/a; An: what the verdict assumes (below)", fontsize=9)
        if legend:
            fig.text(0.01, 0.005, "\n".join(legend), fontsize=6, va="bottom", ha="left")
        fig.tight_layout(rect=(0, 0.16 * len(legend) / (2.2 + 0.36 * len(rows) + 0.16 * len(legend)), 1, 1))
        path_svg.parent.mkdir(parents=True, exist_ok=True)
        save_deterministic(fig, path_svg)
        plt.close(fig)


#: the width of one extra column's field in the heat map, in goal-column widths (a number, not a mark)
_EXTRA_WIDTH = 1.6


def _columns_panel(ax, table, all_rows: list[str], plt) -> None:
    """The extra columns (costs, surface, ...) beside the rules: their text on the rows that have them."""
    fields = list(table.fields)
    for r, name in enumerate(all_rows):
        for c, field in enumerate(fields):
            if name not in table.cells:
                continue
            ax.add_patch(plt.Rectangle((c * _EXTRA_WIDTH, r), _EXTRA_WIDTH, 1, facecolor="#f4f4f4", edgecolor="white",
                                       linewidth=1.5))
            ax.text((c + 0.5) * _EXTRA_WIDTH, r + 0.55, table.cells[name][field], ha="center", va="center", fontsize=6)
    ax.set_xlim(0, len(fields) * _EXTRA_WIDTH)
    ax.set_ylim(len(all_rows), 0)
    ax.set_yticks([])
    ax.set_xticks([(c + 0.5) * _EXTRA_WIDTH for c in range(len(fields))], list(table.fields.values()), rotation=60,
                  ha="right", fontsize=7)
    ax.tick_params(length=0)
    ax.set_title(table.title, fontsize=9)
    for side in ax.spines.values():
        side.set_visible(False)


def _panel(ax, matrix: dict, rows: list[str], props: list[str], title: str, plt, all_rows=None,
           codes: dict | None = None) -> None:
    all_rows = all_rows or rows
    for name in rows:
        r = all_rows.index(name)
        for c, prop in enumerate(props):
            cell = matrix["cells"][name][prop]
            detail = matrix["details"][name].get(prop, {})
            colour = COLOURS["known"] if detail.get("known_limitation") else COLOURS[cell]
            ax.add_patch(plt.Rectangle((c, r), 1, 1, facecolor=colour, edgecolor="white", linewidth=1.5))
            ax.text(c + 0.5, r + 0.55, cell_text(matrix, name, prop, codes=codes), ha="center", va="center",
                    fontsize=6 if codes else 7)
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
