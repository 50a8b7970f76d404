"""Figures of simulations and sweeps (matplotlib, Agg), as SVG and PNG with deterministic bytes.

* ``latency_cdf``: CDFs of submit -> response / own user_message / idle ending
  the work (ms), per spec.
* ``ambiguous_vs_drop``: ambiguous-outcome rate against the drop probability.
* ``misattribution``: wrong bindings per submission by client correlation strategy.
* ``wire_cost``: messages and bytes per submission, per spec.

Sample sizes are in the legends; files carry no dates or software versions.
"""

from __future__ import annotations

import json
from pathlib import Path

LABELS = {"response_ms": "prompt response", "user_message_ms": "own user_message (v2 receipt)",
          "work_end_ms": "idle ending the work (v1 response)"}


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
    fig.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    fig.savefig(png, format="png", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return [str(svg), str(png)]


def plot_simulation(result, out) -> list[str]:
    """Latency CDFs of one simulation (exact empirical CDFs of every sample)."""
    plt = _mpl()
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
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
    return _save(fig, folder, f"latency-cdf-{p.spec}")


def plot_sweep(rows: list[dict], out) -> list[str]:
    """The sweep's figures from its summary rows (``summary.json`` ``points``)."""
    plt = _mpl()
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    rows = sorted(rows, key=lambda r: r["key"])
    specs = sorted({r["point"]["spec"] for r in rows})
    files: list[str] = []

    # latency CDFs per spec (from the 5%-step quantiles, pooled over the spec's points by median point)
    fig, axes = plt.subplots(1, len(specs), figsize=(4.0 * len(specs), 3.6), squeeze=False)
    for ax, spec in zip(axes[0], specs):
        mine = [r for r in rows if r["point"]["spec"] == spec]
        pick = mine[0]
        for name, label in LABELS.items():
            m = pick["result"]["metrics"][name]
            if not m.get("quantiles"):
                continue
            qs = m["quantiles"]
            ax.plot(qs, [k / (len(qs) - 1) for k in range(len(qs))], marker=".", label=f"{label} (n={m['n']})")
        ax.set_title(f"{spec}\n{_point_text(pick['point'])}", fontsize=8)
        ax.set_xlabel("time since submit (simulated ms)")
        ax.set_ylabel("fraction of submissions")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    files += _save(fig, folder, "latency-cdf")

    # ambiguous outcome rate vs drop
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for series, pts in _series(rows, "drop").items():
        xs = [x for x, _ in pts]
        ms = [r["result"]["metrics"]["ambiguous_rate"] for _, r in pts]
        ys = [m["mean"] or 0.0 for m in ms]
        err = _error_bars(ys, ms)
        n = sum(m["n"] for m in ms)
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=f"{series} (n={n} submissions)")
    ax.set_xlabel("drop probability per message")
    ax.set_ylabel("ambiguous outcomes per submission (95% Wilson)")
    ax.set_title("submissions whose outcome the client never learned")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    files += _save(fig, folder, "ambiguous-vs-drop")

    # misattribution by client strategy
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    strategies = ("message_id", "content", "order")
    labels = [f"{r['point']['spec']}\n{_point_text(r['point'])}" for r in rows]
    width = 0.8 / len(strategies)
    for k, how in enumerate(strategies):
        ms = [r["result"]["metrics"][f"misattributed_{how}"] for r in rows]
        ys = [m["mean"] or 0.0 for m in ms]
        n = sum(m["n"] for m in ms)
        ax.bar([i + k * width for i in range(len(rows))], ys, width, label=f"by {how} (n={n} submissions)")
    ax.set_xticks([i + width for i in range(len(rows))], labels, fontsize=6, rotation=45, ha="right")
    ax.set_ylabel("misattributed submissions (fraction)")
    ax.set_title("submission bound to another submission's message, by correlation")
    ax.legend(fontsize=7)
    fig.tight_layout()
    files += _save(fig, folder, "misattribution")

    # wire cost per prompt
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8.0, 4.0))
    for ax, metric, unit in ((a1, "wire_messages_per_prompt", "messages per submission"),
                             (a2, "wire_bytes_per_prompt", "JSON bytes per submission")):
        ms = [r["result"]["metrics"][metric] for r in rows]
        ys = [m["mean"] or 0.0 for m in ms]
        err = _error_bars(ys, ms)
        ax.bar(range(len(rows)), ys, yerr=err, capsize=2)
        ax.set_xticks(range(len(rows)), labels, fontsize=6, rotation=45, ha="right")
        ax.set_ylabel(unit)
        ax.set_title(f"{unit} (n={sum(m['n'] for m in ms)} runs)", fontsize=8)
    fig.tight_layout()
    files += _save(fig, folder, "wire-cost")
    return files


def _error_bars(ys: list[float], ms: list[dict]) -> list[list[float]]:
    """Lower and upper error-bar lengths from each metric's interval (none drawn where it has none)."""
    lower = [0.0 if m["ci"][0] is None else y - m["ci"][0] for y, m in zip(ys, ms)]
    upper = [0.0 if m["ci"][1] is None else m["ci"][1] - y for y, m in zip(ys, ms)]
    return [lower, upper]


def _point_text(point: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(point.items()) if k != "spec")


def _series(rows, x: str) -> dict[str, list]:
    """Rows grouped by everything but ``x`` (and the x value), each sorted by ``x``."""
    out: dict[str, list] = {}
    for r in rows:
        point = dict(r["point"])
        xv = point.pop(x, r["result"]["params"].get(x))
        name = json.dumps(point, sort_keys=True).strip("{}").replace('"', "")
        out.setdefault(name, []).append((xv, r))
    return {k: sorted(v, key=lambda t: t[0]) for k, v in sorted(out.items())}
