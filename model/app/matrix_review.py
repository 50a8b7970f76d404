"""The published review of the RFD's FAQ: per alternative, its strongest build against rfd.

Pure functions of the matrix dictionary.  Per alternative: the strongest
build and its mechanisms (each with the sentence it comes from), where it
is better than, equal to or worse than rfd on the goals and under each
fault both can suffer, its client strategies (best and worst), its naive
build's difference, what it costs (the mechanisms it adds to the spec,
and any extra columns), and the RFD's claim with the model's verdict;
"cannot speak to it" where no goal tells the two apart.
"""

from __future__ import annotations

from acplab.model.acp.mechanisms import MECHANISMS, design_of



_MD_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "[": "\\[", "]": "\\]", "|": "\\|"}


def md_text(text: str) -> str:
    """``text`` safe inside a Markdown paragraph or table cell: one line (whitespace runs become one space),
    ``& < >`` as HTML entities (no raw HTML), ``[ ] |`` backslash-escaped (no links, no new table cells).
    Code spans and emphasis are left as written: the presets use them.

    >>> md_text("<script>x</script> [a](b)\\nc")
    '&lt;script&gt;x&lt;/script&gt; \\\\[a\\\\](b) c'
    """
    return "".join(_MD_ESCAPES.get(c, c) for c in " ".join(str(text).split()))


def assumption_text(detail: dict) -> str:
    """What a cell's verdict depends on, in words: the bound values and the switches (differing from rfd's)
    that every run violating it has; "" when it records none (a bridge row)."""
    assumes = detail.get("assumes")
    if not assumes:
        return ""
    bounds = ", ".join(f"{k}={_value(v)}" for k, v in assumes["bounds"].items())
    switches = ", ".join(f"{k}={_value(v)}" for k, v in assumes["switches"].items())
    return "; ".join(x for x in (bounds, switches and f"switches {switches}") if x) or "nothing beyond one prompt"


def _value(v) -> str:
    return "/".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v).lower() if isinstance(v, bool) else str(v)


def review(matrix: dict, link_base: str = "") -> list[str]:
    """One section per alternative, in row order; its naive build inside its section."""
    out: list[str] = []
    for name in dict.fromkeys(matrix["rows"][r]["spec"] for r in matrix["specs"]):
        if name == "rfd" or (name != design_of(name) and design_of(name) in matrix["verdicts"]):
            continue  # a naive build is told inside its design's section
        out += _section(matrix, name, link_base)
    return out


def _section(matrix: dict, design: str, link_base: str) -> list[str]:
    v = matrix["verdicts"][design]
    naive = f"{design}-naive" if f"{design}-naive" in matrix["verdicts"] else None
    lines = [f"### `{design}`", ""]
    mechanisms = MECHANISMS.get(design, ())
    build = md_text(matrix.get("descriptions", {}).get(design, ""))
    label = "Strongest build" if design == design_of(design) else "Build"
    lines.append(f"*{label}* (`{design}`): {build}." + (
        " Mechanisms: " + "; ".join(f"{md_text(m)} ({md_text(src)})" for m, src in mechanisms) + "."
        if mechanisms else ""))
    lines.append("")
    lines.append("*Against rfd, on the goals:* " + _comparison(matrix, design, "rfd") + ".")
    faults = _under_faults(matrix, design)
    if faults:
        lines += ["", "*Under faults* (each applied to both rows where both have the obligation): " + faults + "."]
    strategies = matrix.get("strategies", {}).get(design)
    if strategies:
        lines += ["", "*Client strategies:* " + strategy_words(strategies) + "."]
    if naive:
        lines += ["", f"*Naive build* (`{naive}`, {md_text(matrix.get('descriptions', {}).get(naive, ''))}): "
                  + _comparison(matrix, naive, design, "the strongest build") + "."]
    identical = matrix.get("identical_runs", {}).get(design)
    if identical:
        lines += ["", f"*= `{identical['as']}` on the ACP model:* switch(es) {', '.join(identical['switches'])} "
                      f"not read by any of its runs there."]
    lines += ["", "*Cost:* " + _cost(matrix, design, mechanisms) + "."]
    claim = md_text(v["claim"] or "no claim on record")
    lines += ["", f"*The RFD's claim:* {claim}. *The model:* **{v['verdict']}**. "
                  f"{v['sentence'][:1].upper()}{v['sentence'][1:]}"
              + (f" *How it is rendered:* {md_text(v['note'])}." if v.get("note") else "")
              + (f" *Beyond the goals:* {md_text(v['also'])}." if v.get("also") else "")]
    designed = _by_design(matrix, design)
    if designed:
        lines += ["", "*By design, not findings:* " + designed + "."]
    if v["rule_findings"]:
        lines += ["", f"*Rules of the RFD it also breaks:* {', '.join(v['rule_findings'])}."]
    return lines + [""]


def _rows_of(matrix: dict, spec: str) -> list[tuple[str, str]]:
    """(row, its baseline row) for every row of ``spec`` (ACP and bridges)."""
    return [(r, r.replace(spec, "rfd", 1)) for r in matrix["specs"] if matrix["rows"][r]["spec"] == spec]


def _comparison(matrix: dict, spec: str, against: str, label: str = "rfd") -> str:
    """Better / equal / worse than ``against`` goal by goal, each difference with its shortest counterexample."""
    cells = matrix["cells"]
    better, worse, equal = [], [], 0
    for row, base in _rows_of(matrix, spec):
        base = row.replace(spec, against, 1)
        if base not in cells:
            continue
        for g in matrix["goals"]:
            mine, theirs = cells[row][g], cells[base][g]
            if mine == theirs or "n/a" in (mine, theirs):
                equal += 1
            elif mine == "holds" and theirs == "violated":
                better.append(f"{g}{_where(row)} (where {label} fails: {_shortest(matrix, base, g)})")
            elif mine == "violated":
                worse.append(f"{g}{_where(row)} ({_shortest(matrix, row, g)})")
            else:
                equal += 1
    if not better and not worse:
        return f"equal to {label} on every goal the model judges here; the goals cannot speak to a difference"
    parts = [f"better on {'; '.join(better)}" if better else f"better than {label} on no goal"]
    parts.append(f"worse on {'; '.join(worse)}" if worse else "worse on none")
    return ", ".join(parts) + f"; equal on the other {equal} cells"


def _where(row: str) -> str:
    return f" on `{row}`" if "@" in row else ""


def _shortest(matrix: dict, row: str, goal: str) -> str:
    d = matrix["details"][row].get(goal, {})
    if "trace_length" not in d:
        return matrix["cells"][row][goal]
    assumes = assumption_text(d)
    return (f"{d['trace_length']} steps, {d['scenario']}: {md_text(d['explanation'])}"
            + (f"; assumes {assumes}" if assumes else ""))


def _under_faults(matrix: dict, design: str) -> str:
    faults = matrix.get("faults", {})
    mine, rfd = faults.get(design, {}), faults.get("rfd", {})
    out = []
    for name, cell in mine.items():
        theirs = rfd.get(name, {"cell": "n/a", "reason": "no rfd row"})
        out.append(f"{name}: {_fault_words(cell)} here, {_fault_words(theirs)} on rfd")
    return "; ".join(out)


def _fault_words(cell: dict) -> str:
    if cell["cell"] == "n/a":
        return f"n/a ({md_text(cell['reason'])})"
    if cell["cell"] == "holds":
        return "no goal lost" + (f" (already violated without it: {', '.join(cell['already'])})"
                                 if cell.get("already") else "")
    if cell["cell"] == "incomplete":
        return "incomplete"
    return "loses " + ", ".join(f"{g} ({d['length']} steps: {md_text(d['explanation'])})"
                                for g, d in cell["goals"].items())


def strategy_words(summary: dict) -> str:
    """Best and worst strategy (with any tied), then what each violates, on the goals and under faults."""
    def named(first: str, tied: list[str]) -> str:
        return " = ".join(f"**{n}**" for n in [first, *tied])

    listed = "; ".join(f"{n}: {', '.join(summary['violated'][n] + summary['under_faults'][n]) or 'no goal violated'}"
                       for n in summary["violated"])
    return f"best {named(summary['best'], summary['tied_best'])}, worst {named(summary['worst'], summary['tied_worst'])}" \
           f" (goals violated, and lost under a fault: {listed})"


def _cost(matrix: dict, design: str, mechanisms) -> str:
    surface = (f"{len(mechanisms)} mechanism(s) the spec would have to define (listed above)" if mechanisms
               else "nothing listed beyond its description")
    from .matrix_columns import tables

    extra = [_column_words(t, t.cells[design]) for t in tables(matrix) if design in t.cells]
    return surface + ("; " + "; ".join(extra) if extra else
                      "; costs a client cannot observe as a goal (latency, duplicates under retry) are not measured "
                      "by this table")


def _column_words(table, cells: dict) -> str:
    """One extra column's values for a design, in a sentence (a one-field column by its heading alone)."""
    if len(cells) == 1:
        (field, value), = cells.items()
        return f"{md_text(table.fields[field])}: {md_text(value)}"
    return f"{md_text(table.title[0].lower() + table.title[1:])}: " + ", ".join(
        f"{md_text(table.fields[k])} {md_text(v)}" for k, v in cells.items())


def _by_design(matrix: dict, design: str) -> str:
    found = {}
    for row, _ in _rows_of(matrix, design):
        for p, d in matrix["details"][row].items():
            if matrix["cells"][row][p] == "by design":
                found[p] = d["reason"]
    return "; ".join(f"{p} ({md_text(why)})" for p, why in found.items())
