"""Figures of simulations and sweeps (matplotlib, Agg), as SVG and PNG with deterministic bytes.

* ``latency_cdf``: CDFs of submit -> response / own user_message / idle ending
  the work (ms): one panel per spec and per point of the grid (every axis
  with more than one value), so no point is hidden behind another;
* ``ambiguous_vs_drop``: ambiguous-outcome rate against the drop probability
  (or the first varying axis), one line per spec and other axes;
* ``misattribution``: wrong bindings per submission by client correlation
  strategy, one panel per spec, bars per grid point; content and order are
  **counterfactuals** (what clients matching that way would have done), and
  say so in the legend;
* ``wire_cost``: messages and bytes per submission, bars per spec and grid point.

Every figure explains itself: a caption under the plots says what the metric
means (:data:`.metrics.METRICS`) and gives the base parameters (those every
point shares); layout is matplotlib's constrained layout, and labels carry
only the axes that vary, so they do not overlap (a test compares the text
bounding boxes).  Sample sizes are in the legends; files carry no dates or
software versions.
"""

from __future__ import annotations

import itertools
import json
import textwrap
from pathlib import Path

from .metrics import METRICS

LABELS = {"response_ms": "prompt response", "user_message_ms": "own user_message (v2 receipt)",
          "work_end_ms": "idle ending the work (v1 response)"}
#: the strategies of the misattribution figure and their legend words
STRATEGIES = {"message_id": "by messageId (the real clients)",
              "content": "if matched by content (counterfactual)",
              "order": "if matched by arrival order (counterfactual)"}
#: parameters always named in a caption (the rest only where they differ from the defaults)
ALWAYS_SHOWN = ("clients", "prompts", "sessions", "seed", "latency_ms", "drop", "disconnect_rate")


def _mpl():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from acplab.model.render.style import setup_rcparams

    setup_rcparams()  # the same fixed ids, fonts and text handling as every other figure
    matplotlib.rcParams.update({"figure.dpi": 100, "font.size": 9})
    return plt


def _save(fig, folder: Path, stem: str) -> list[str]:
    svg, png = folder / f"{stem}.svg", folder / f"{stem}.png"
    from acplab.model.render.atomic import replacing  # every file written atomically

    with replacing(svg) as tmp:
        fig.savefig(tmp, format="svg", metadata={"Date": None, "Creator": None})
    with replacing(png) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return [str(svg), str(png)]


def base_text(params: list[dict], varying=()) -> str:
    """The parameters every point shares, for a caption: the usual ones always, others where not the default.

    >>> base_text([{"clients": 3, "seed": 7, "fail": 0.05}], ())
    'base: clients=3, seed=7, fail=0.05'
    """
    from .params import SimParams

    defaults = SimParams().to_json()
    shared = {k: v for k, v in params[0].items()
              if k not in varying and k != "spec" and all(p.get(k) == v for p in params)}
    shown = [k for k in ALWAYS_SHOWN if k in shared]
    shown += [k for k in sorted(shared) if k not in ALWAYS_SHOWN and shared[k] != defaults.get(k)]
    return "base: " + ", ".join(f"{k}={shared[k]:g}" if isinstance(shared[k], float) else f"{k}={shared[k]}"
                                for k in shown)


def _caption(fig, lines: list[str], width_in: float) -> None:
    """The caption under the plots (constrained layout makes room for it)."""
    chars = max(40, int(width_in * 15))
    text = "\n".join(textwrap.fill(line, chars) for line in lines)
    fig.supxlabel(text, fontsize=7, ha="left", x=0.01, multialignment="left")


def plot_simulation(result, out) -> list[str]:
    """Latency CDFs of one simulation (exact empirical CDFs of every sample)."""
    plt = _mpl()
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.6), layout="constrained")
    for name, label in LABELS.items():
        values = sorted(result.samples[name])
        if not values:
            continue
        n = len(values)
        ax.step(values, [(k + 1) / n for k in range(n)], where="post", label=f"{label} (n={n})")
    p = result.params
    ax.set_xlabel("time since submit (simulated ms)")
    ax.set_ylabel("fraction of submissions")
    ax.set_title(f"{p.spec}: {len(result.runs)} runs, {p.clients} clients, drop {p.drop:g}, latency {p.latency_ms:g} ms")
    ax.grid(alpha=0.3)
    if ax.get_lines():
        ax.legend(loc="lower right")
    else:  # no latency was measured (say, no prompt submitted): say so rather than draw an empty legend
        ax.text(0.5, 0.5, "no latency samples in these runs", ha="center", va="center", transform=ax.transAxes)
    _caption(fig, [f"{METRICS['response_ms'].question} Each curve: the share of submissions answered, shown or "
                   "finished within x ms of being sent.", base_text([p.to_json()])], 6.4)
    return _save(fig, folder, f"latency-cdf-{p.spec}")


def plot_sweep(rows: list[dict], out) -> list[str]:
    """The sweep's figures from its summary rows (``summary.json`` ``points``), as SVG and PNG."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    files: list[str] = []
    for stem, fig in sweep_figures(rows):
        files += _save(fig, folder, stem)
    return files


def varying_axes(rows: list[dict]) -> list[str]:
    """The grid axes with more than one value (sorted); the others are base parameters."""
    keys = sorted({k for r in rows for k in r["point"] if k != "spec"})
    return [k for k in keys if len({json.dumps(r["point"].get(k)) for r in rows}) > 1]


def _grid_points(rows: list[dict], axes: list[str]) -> list[tuple]:
    """The grid's points in order (numbers by value, then anything else by its JSON text)."""
    values = {tuple(r["point"].get(k) for k in axes) for r in rows}
    try:
        return sorted(values)
    except TypeError:  # values of mixed types on one axis
        return sorted(values, key=json.dumps)


def _point_label(axes: list[str], values: tuple, sep: str = "\n") -> str:
    return sep.join(f"{k}={v}" for k, v in zip(axes, values)) or "one point"


def sweep_figures(rows: list[dict]):
    """``(stem, figure)`` for each figure of a sweep, drawn but not saved (the tests measure their labels)."""
    plt = _mpl()
    rows = sorted(rows, key=lambda r: r["key"])
    specs = sorted({r["point"]["spec"] for r in rows})
    axes = varying_axes(rows)
    grid = _grid_points(rows, axes)
    at = {(r["point"]["spec"], tuple(r["point"].get(k) for k in axes)): r for r in rows}
    base = base_text([r["result"]["params"] for r in rows], axes)
    split = f"split by {', '.join(axes)}" if axes else "one grid point"
    out = []

    # latency CDFs: a panel per spec (rows) and grid point (columns)
    width = max(4.2, 3.0 * len(grid))
    fig, panels = plt.subplots(len(specs), len(grid), figsize=(width, 2.6 * len(specs) + 1.2), squeeze=False,
                               sharex=True, sharey=True, layout="constrained")
    for (i, spec), (j, values) in itertools.product(enumerate(specs), enumerate(grid)):
        ax = panels[i][j]
        r = at.get((spec, values))
        for name, label in LABELS.items():
            m = r["result"]["metrics"][name] if r else {}
            if m.get("quantiles"):
                qs = m["quantiles"]
                ax.plot(qs, [k / (len(qs) - 1) for k in range(len(qs))], marker=".", ms=3,
                        label=f"{label} (n={m['n']})")
        ax.set_title(f"{spec}: {_point_label(axes, values, ', ')}", fontsize=7)
        ax.grid(alpha=0.3)
        if ax.get_lines():
            ax.legend(fontsize=5.5, loc="lower right")
    for ax in panels[-1]:
        ax.set_xlabel("ms since submit", fontsize=7)
    for row in panels:
        row[0].set_ylabel("fraction of submissions", fontsize=7)
    _caption(fig, [f"Latency CDFs, {split}. {METRICS['response_ms'].question} "
                   f"{METRICS['user_message_ms'].question} {METRICS['work_end_ms'].question}", base], width)
    out.append(("latency-cdf", fig))

    # ambiguous outcome rate against drop (or the first varying axis)
    x = "drop" if "drop" in axes or not axes else axes[0]
    fig, ax = plt.subplots(figsize=(6.4, 4.6), layout="constrained")
    for series, pts in _series(rows, x, axes).items():
        ms = [r["result"]["metrics"]["ambiguous_rate"] for _, r in pts]
        ys = [m["mean"] or 0.0 for m in ms]
        ax.errorbar([xv for xv, _ in pts], ys, yerr=_error_bars(ys, ms), marker="o", capsize=3,
                    label=f"{series} (n={sum(m['n'] for m in ms)} submissions)")
    ax.set_xlabel(f"{x}" + (" (probability a message is lost)" if x == "drop" else ""))
    ax.set_ylabel("ambiguous outcomes per submission")
    ax.set_title("submissions whose outcome the client never learned", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)
    m = METRICS["ambiguous_rate"]
    _caption(fig, [f"{m.question} {m.meaning[0].upper() + m.meaning[1:]} ({m.measured_in}; bars: 95% Wilson "
                   "intervals).", base], 6.4)
    out.append(("ambiguous-vs-drop", fig))

    # misattribution: a panel per spec, bars per grid point and strategy
    labels = [_point_label(axes, values) for values in grid]
    width = max(6.4, 1.2 * len(grid) * len(specs) + 1.5)
    fig, panels = plt.subplots(1, len(specs), figsize=(width, 4.8), squeeze=False, sharey=True,
                               layout="constrained")
    bar = 0.8 / len(STRATEGIES)
    for ax, spec in zip(panels[0], specs):
        for k, (how, legend) in enumerate(STRATEGIES.items()):
            ms = [at[(spec, v)]["result"]["metrics"][f"misattributed_{how}"] if (spec, v) in at else
                  {"mean": None, "n": 0} for v in grid]
            ax.bar([i + k * bar for i in range(len(grid))], [m["mean"] or 0.0 for m in ms], bar,
                   label=f"{legend} (n={sum(m['n'] for m in ms)})", hatch="//" if how != "message_id" else None)
        ax.set_xticks([i + bar for i in range(len(grid))], labels, fontsize=6)
        ax.set_title(spec, fontsize=8)
        ax.legend(fontsize=5.5, loc="upper left")
    panels[0][0].set_ylabel("submissions bound to another's message (fraction)", fontsize=7)
    _caption(fig, [f"Misattribution, {split}. The hatched bars are counterfactuals: "
                   f"{METRICS['misattributed_content'].question} {METRICS['misattributed_order'].question} They are "
                   "measured by shadow clients and are not failures of the spec; the solid bar is what the real "
                   "clients (correlating by the returned messageId) did.", base], width)
    out.append(("misattribution", fig))

    # wire cost: bars per spec and grid point
    width = max(6.4, 1.2 * len(grid) + 1.5)
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(width, 6.4), layout="constrained")
    bar = 0.8 / len(specs)
    for ax, metric in ((a1, "wire_messages_per_prompt"), (a2, "wire_bytes_per_prompt")):
        for k, spec in enumerate(specs):
            ms = [at[(spec, v)]["result"]["metrics"][metric] if (spec, v) in at else
                  {"mean": None, "n": 0, "ci": [None, None]} for v in grid]
            ys = [m["mean"] or 0.0 for m in ms]
            ax.bar([i + k * bar for i in range(len(grid))], ys, bar, yerr=_error_bars(ys, ms), capsize=2,
                   label=f"{spec} (n={sum(m['n'] for m in ms)} runs)")
        ax.set_xticks([i + bar * (len(specs) - 1) / 2 for i in range(len(grid))], labels, fontsize=6)
        ax.set_ylabel(METRICS[metric].measured_in, fontsize=7)
        ax.legend(fontsize=6, loc="lower right")
    _caption(fig, [f"Wire cost, {split}. {METRICS['wire_messages_per_prompt'].question} "
                   f"{METRICS['wire_bytes_per_prompt'].question} Every message put on a live connection counts, "
                   "dropped or not.", base], width)
    out.append(("wire-cost", fig))
    return out


def _error_bars(ys: list[float], ms: list[dict]) -> list[list[float]]:
    """Lower and upper error-bar lengths from each metric's interval (none drawn where it has none)."""
    lower = [0.0 if m["ci"][0] is None else y - m["ci"][0] for y, m in zip(ys, ms)]
    upper = [0.0 if m["ci"][1] is None else m["ci"][1] - y for y, m in zip(ys, ms)]
    return [lower, upper]


def _series(rows, x: str, axes=()) -> dict[str, list]:
    """Rows grouped by spec and the varying ``axes`` but ``x``, each sorted by ``x`` (its value, then the row)."""
    out: dict[str, list] = {}
    for r in rows:
        point = r["point"]
        xv = point.get(x, r["result"]["params"].get(x))
        name = ", ".join([point["spec"]] + [f"{k}={point.get(k)}" for k in axes if k != x])
        out.setdefault(name, []).append((xv, r))
    return {k: sorted(v, key=lambda t: t[0]) for k, v in sorted(out.items())}
