"""Sequence diagrams drawn with matplotlib (SVG, optionally PNG), deterministic to the byte.

In the ACP docs' style, as the Mermaid text (:mod:`.mermaid`): one lifeline
per client (``Client``, or ``Client c1``, ``Client c2``, ...) and one for the
``Agent`` (adapter + runtime); responses dashed, requests and notifications
solid; messages written as the docs write them (:func:`.labels.docs_label`).  Time runs downwards.  A message is an arrow from its sender at the
step it was sent to its receiver at the step it was delivered: horizontal when
it was delivered at the very next step, slanted when something else happened
in between.  Sends are paired with deliveries through per-channel FIFO queues
(the first queued equal message, which on a FIFO channel is its oldest).  A message lost in the network (a ``Drop``),
in flight when its connection was cut, or sent on a connection that was
already closed ends in a red cross.  Cuts and reconnects are dashed lines
across the client's and the agent's lifelines; internal events (insertion,
failure, a client binding its prompt to an ID, ...) are small notes on the
lifeline of the actor that knows them.  The violated rule, if any, closes the
diagram in a red box.

Long traces stay legible: runs of identical consecutive chunk messages
collapse into one arrow marked ``×n``, labels wrap, and the figure's height
grows with the number of rows.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field

from acplab.model.acp.events import C2A
from acplab.model.wire.capture import conn_label

from .flow import send_endings
from .labels import docs_event, docs_label, is_response
from .style import pyplot, save_deterministic, setup_rcparams

NOTE_KINDS = ("insert", "reject", "fail", "work_end", "execute", "restart", "replayed")

LIFELINE_GAP = 3.4  # data units (inches) between lifelines
ROW = 0.34  # inches per row of one text line
LINE = 0.15  # inches per extra wrapped line
LABEL_WIDTH = 42  # characters before a label wraps
NOTE_WIDTH = 38


# -- layout ------------------------------------------------------------


@dataclass
class Item:
    """One drawn thing.

    ``kind``: "arrow" (``x0,y0 -> x1,y1``), "lost" (arrow ending in a cross at
    ``x1,y1``), "inflight" (open arrow to the bottom), "line" (cut / connect
    across ``x0..x1``), "note" (at ``x0``), "dot" (a send whose arrow starts later).
    """

    kind: str
    x0: float
    y0: int
    x1: float = 0.0
    y1: int = 0
    label: str = ""
    colour: str = "#1a1a1a"
    dashed: bool = False
    count: int = 1
    xm: float | None = None  # where a label is centred, if not at the middle of x0..x1
    y_shift: float = 0.0


@dataclass
class Layout:
    rows: list[list[Item]] = field(default_factory=list)  # row index -> items drawn on it
    step_rows: dict[int, int] = field(default_factory=dict)  # step number -> first row
    slanted: list[Item] = field(default_factory=list)  # items spanning rows
    inflight: list[Item] = field(default_factory=list)

    def new_row(self, step: int) -> int:
        self.rows.append([])
        self.step_rows.setdefault(step, len(self.rows) - 1)
        return len(self.rows) - 1


def _completion_steps(steps) -> dict[tuple[int, int], tuple[int, str, bool]]:
    """For each send (step, event index): the step and kind ("deliver", "drop", "cut") that ends it,
    and whether it was delayed (``"...", True``).

    A message is *not* delayed when every step between its send and its
    delivery only delivered (or dropped) the messages ahead of it on the same
    channel: it is drawn horizontally, at its delivery.
    """
    done = {}
    for sent, (n, kind) in send_endings(steps).items():
        e = steps[sent[0]][1][sent[1]]
        done[sent] = (n, kind, kind == "cut" or _delayed(steps, sent[0], n, (e.conn, e.dir)))
    return done


def _delayed(steps, sent: int, arrived: int, channel) -> bool:
    for _action, events in steps[sent + 1:arrived]:
        first = events[0] if events else None
        if first is None or first.kind not in ("deliver", "drop") or (first.conn, first.dir) != channel:
            return True
    return False


def layout(steps, clients: int) -> Layout:
    """Turn steps (action, events) into rows of drawable items."""
    agent_x = clients * LIFELINE_GAP
    xs = lambda c: c * LIFELINE_GAP  # noqa: E731
    done = _completion_steps(steps)
    out = Layout()
    # per channel: FIFO of (row the arrow starts at, or None when it is drawn at its delivery row;
    # whether the message is a response, drawn dashed)
    pending: dict = {}
    for n, (_action, events) in enumerate(steps):
        step_row: int | None = None

        def row() -> int:
            nonlocal step_row
            if step_row is None:
                step_row = out.new_row(n)
            return step_row

        def fresh() -> int:
            nonlocal step_row
            step_row = out.new_row(n)
            return step_row

        for i, e in enumerate(events):
            k = e.kind
            if k == "send":
                c = e.conn[0]
                src, dst = (xs(c), agent_x) if e.dir == C2A else (agent_x, xs(c))
                if e.lost:
                    r = fresh()
                    out.rows[r].append(Item("lost", src, r, src + (dst - src) * 0.45, r,
                                            f"{docs_label(e.msg)} (connection {conn_label(e.conn)} closed)", "#a40000",
                                            dashed=is_response(e.msg), xm=(src + dst) / 2))
                    continue
                end = done.get((n, i))
                if end is not None and not end[2]:
                    pending.setdefault((e.conn, e.dir), []).append((None, is_response(e.msg)))
                else:
                    r = row()
                    pending.setdefault((e.conn, e.dir), []).append((r, is_response(e.msg)))
                    if end is None:  # still in flight at the end: marked here, drawn after the last step
                        out.rows[r].append(Item("mark", src, r, colour="#555555"))
                        out.inflight.append(Item("inflight", src, r, dst - (dst - src) * 0.06, -1,
                                                 f"{docs_label(e.msg)} (in flight since step {n + 1})",
                                                 "#555555", dashed=True, xm=(src + dst) / 2))
            elif k in ("deliver", "drop"):
                c = e.conn[0]
                src, dst = (xs(c), agent_x) if e.dir == C2A else (agent_x, xs(c))
                q = pending.get((e.conn, e.dir))
                start = q.pop(0)[0] if q else None
                r = fresh()
                y0 = r if start is None else start
                if k == "deliver":
                    item = Item("arrow", src, y0, dst, r, docs_label(e.msg), dashed=is_response(e.msg))
                else:
                    item = Item("lost", src, y0, src + (dst - src) * 0.6, r, docs_label(e.msg) + " (dropped)",
                                "#a40000", dashed=is_response(e.msg), xm=(src + dst) / 2)
                (out.rows[r] if y0 == r else out.slanted).append(item)
                if y0 != r:
                    out.rows[r].append(Item("dot", dst, r))  # reserve the row
            elif k == "cut":
                c = e.conn[0]
                r = fresh()
                for key in [key for key in pending if key[0] == e.conn]:
                    for start, response in pending.pop(key):
                        msg_dir = key[1]
                        src, dst = (xs(c), agent_x) if msg_dir == C2A else (agent_x, xs(c))
                        y0 = r if start is None else start
                        out.slanted.append(Item("lost", src, y0, src + (dst - src) * 0.5, r, "", "#a40000",
                                                dashed=response))
                lost = len(e.lost)
                text = f"connection {conn_label(e.conn)} cut" + (f": {lost} message(s) in flight lost" if lost else "")
                out.rows[r].append(Item("line", xs(c), r, agent_x, r, text, "#a40000", dashed=True))
            elif k == "connect":
                c = e.conn[0]
                r = fresh()
                out.rows[r].append(Item("line", xs(c), r, agent_x, r, f"connection {conn_label(e.conn)} opened",
                                        "#1b7f3b", dashed=True))
            elif k in NOTE_KINDS or k == "bind":
                text = docs_event(e)
                if not text:
                    continue
                x = xs(e.client) if k == "bind" else agent_x
                shared = step_row is not None and out.rows[step_row] and all(
                    it.kind == "mark" for it in out.rows[step_row])
                r = step_row if shared else fresh()
                out.rows[r].append(Item("note", x, r, label=text, colour="#6b4e00" if k != "fail" else "#a40000"))
    for it in out.inflight:
        r = len(out.rows)
        out.rows.append([it])
        it.y0 = it.y1 = r
    out.inflight = []
    _collapse_chunks(out)
    return out


def _collapse_chunks(out: Layout) -> None:
    """Merge runs of identical consecutive horizontal chunk arrows into one row marked ×n."""
    rows: list[list[Item]] = []
    remap: dict[int, int] = {}
    for r, items in enumerate(out.rows):
        prev = rows[-1] if rows else None
        if (
            prev is not None and len(items) == 1 and len(prev) == 1
            and items[0].kind == "arrow" and prev[0].kind == "arrow"
            and items[0].y0 == r and prev[0].y0 == prev[0].y1
            and "_chunk" in items[0].label and items[0].label == prev[0].label
            and (items[0].x0, items[0].x1) == (prev[0].x0, prev[0].x1)
            and r not in [it.y0 for it in out.slanted + out.inflight]
        ):
            prev[0].count += 1
            remap[r] = len(rows) - 1
            continue
        remap[r] = len(rows)
        rows.append(items)
    if len(rows) == len(out.rows):
        return
    for items in rows:
        for it in items:
            it.y0, it.y1 = remap[it.y0], remap[it.y1]
    for it in out.slanted:
        it.y0, it.y1 = remap[it.y0], remap[it.y1]
    for it in out.inflight:
        it.y0 = remap[it.y0]
    out.step_rows = {s: remap[r] for s, r in out.step_rows.items()}
    out.rows = rows


def _wrap(text: str, width: int = LABEL_WIDTH) -> str:
    return "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False)) or text


# -- drawing ------------------------------------------------------------


def draw_sequence(steps, clients: int, title: str = "", violation=None, rules=(), path_svg=None, path_png=None):
    """Draw ``steps`` (``[(action, events)]``) as a sequence diagram; write SVG (and PNG)."""
    from matplotlib.patches import FancyBboxPatch

    plt = pyplot()
    setup_rcparams()
    lay = layout(steps, clients)
    agent_x = clients * LIFELINE_GAP
    names = (["Client"] if clients == 1 else [f"Client c{c + 1}" for c in range(clients)]) + ["Agent\n(adapter + runtime)"]
    xs = [c * LIFELINE_GAP for c in range(clients)] + [agent_x]

    # vertical positions (inches from the top): rows grow with their wrapped labels
    heights = []
    for items in lay.rows:
        lines = 1
        for it in items:
            if it.label:
                lines = max(lines, _wrap(_label(it), _width(it)).count("\n") + 1)
        heights.append(ROW + LINE * (lines - 1) + (0.12 if lines > 1 else 0))
    top = 1.15 if title else 0.75
    ys, y = [], top + 0.35
    for h in heights:
        y += h
        ys.append(y)
    y_end = y + 0.45
    extra = 0.0
    box_text = ""
    if violation is not None:
        name, sentence = violation
        rule_text = f" [{', '.join(rules)}]" if rules else ""
        box_text = _wrap(f"✗ {name}{rule_text}: {sentence}", max(40, int((agent_x + 2.2) * 11)))
        extra = 0.45 + 0.19 * (box_text.count("\n") + 1)
    height = y_end + extra + 0.35
    width = agent_x + 3.4
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-1.7, agent_x + 1.7)
    ax.set_ylim(height, 0)
    ax.axis("off")
    yof = lambda r: ys[r] if r >= 0 else y_end  # noqa: E731

    if title:
        ax.text((agent_x) / 2, 0.35, _wrap(title, int(width * 11)), ha="center", va="center", fontsize=10.5,
                weight="bold")
    head_y = top
    bottom = y_end + (extra if violation is not None else 0)
    for x, name in zip(xs, names):
        ax.plot([x, x], [head_y, bottom], color="#9aa5b1", lw=1.0, zorder=1)
        ax.add_patch(FancyBboxPatch((x - 0.75, head_y - 0.24), 1.5, 0.48, boxstyle="round,pad=0.02",
                                    fc="#e8f0fe", ec="#1f3b73", lw=1.1, zorder=3))
        ax.text(x, head_y, name, ha="center", va="center", fontsize=8.5 if "\n" in name else 9.5, zorder=4)

    # step numbers (as in the text trace) in the left margin
    for step, r in sorted(lay.step_rows.items()):
        ax.text(-1.6, ys[r], str(step + 1), ha="left", va="center", fontsize=7, color="#8a8a8a",
                gid=f"step-{step + 1}")  # the HTML report highlights the current step by this id

    for r, items in enumerate(lay.rows):
        for it in items:
            if it.kind == "note":  # centred in its row, whose height follows the wrapped text
                it.y_shift = -(heights[r] - ROW) / 2
            _draw_item(ax, it, yof)
    for it in lay.slanted:
        _draw_item(ax, it, yof)
    for it in lay.inflight:
        _draw_item(ax, it, yof)

    if violation is not None:
        y0 = y_end + 0.15
        h = extra - 0.25
        ax.add_patch(FancyBboxPatch((-1.4, y0), agent_x + 2.8, h, boxstyle="round,pad=0.03", fc="#fde2e2",
                                    ec="#c00000", lw=1.6, zorder=5))
        ax.text(agent_x / 2, y0 + h / 2, box_text, ha="center", va="center", fontsize=9, color="#8b0000", zorder=6,
                weight="bold")
    if path_svg is not None:
        save_deterministic(fig, path_svg, path_png)
    plt.close(fig)
    return lay


def _label(it: Item) -> str:
    return it.label + (f"  ×{it.count}" if it.count > 1 else "")


def _width(it: Item) -> int:
    if it.kind == "note":
        return NOTE_WIDTH
    if it.kind in ("line", "inflight"):
        return 75
    span = abs(it.x1 - it.x0) if it.xm is None else 2 * abs(it.xm - it.x0)
    return max(18, min(LABEL_WIDTH + 20, int(span * 12)))


def _draw_item(ax, it: Item, yof) -> None:
    style = (0, (4, 2.5)) if it.dashed else "-"
    if it.kind == "inflight":
        style = (0, (1, 2))
    if it.kind == "dot":
        return
    if it.kind == "mark":  # a send whose message is still in flight at the end
        ax.plot([it.x0], [yof(it.y0)], marker="o", color=it.colour, markersize=4, zorder=2)
        return
    if it.kind == "note":
        ax.text(it.x0, yof(it.y0) + it.y_shift, _wrap(it.label, NOTE_WIDTH), ha="center", va="center", fontsize=7.2, color=it.colour,
                zorder=4, bbox=dict(boxstyle="round,pad=0.25", fc="#fff6d5", ec="#c9a227", lw=0.7))
        return
    if it.kind == "line":
        y = yof(it.y0)
        ax.plot([it.x0 - 0.5, it.x1 + 0.5], [y, y], color=it.colour, lw=1.4, ls=(0, (5, 3)), zorder=2)
        ax.text((it.x0 + it.x1) / 2, y - 0.06, it.label, ha="center", va="bottom", fontsize=7.8, color=it.colour,
                zorder=4, bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none"))
        return
    x0, y0, x1, y1 = it.x0, yof(it.y0), it.x1, yof(it.y1)
    if it.kind in ("arrow", "inflight"):
        head = "-|>" if it.kind == "arrow" else "->"
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0), zorder=3,
                    arrowprops=dict(arrowstyle=head, color=it.colour, lw=1.1, linestyle=style, shrinkA=0, shrinkB=0,
                                    mutation_scale=11))
    else:  # lost: a line ending in a red cross
        ax.plot([x0, x1], [y0, y1], color=it.colour, lw=1.1, ls=style, zorder=3)
        ax.plot([x1], [y1], marker="x", color="#c00000", markersize=9, mew=2.2, zorder=4)
    if not it.label:
        return
    if y0 == y1:
        tx = (x0 + x1) / 2 if it.xm is None else it.xm
        ax.text(tx, y0 - 0.045, _wrap(_label(it), _width(it)), ha="center", va="bottom", fontsize=8,
                color=it.colour, zorder=4, linespacing=1.05,
                bbox=dict(boxstyle="square,pad=0.04", fc="white", ec="none"))
        return
    # a slanted arrow: one line of text along it (data units are inches both ways, y downwards)
    angle = math.degrees(math.atan2(-(y1 - y0), x1 - x0))
    if angle > 90 or angle < -90:
        angle += 180
    ax.text((x0 + x1) / 2, (y0 + y1) / 2, _label(it), ha="center", va="bottom", fontsize=7.5, color=it.colour,
            rotation=angle, rotation_mode="anchor", zorder=4,
            bbox=dict(boxstyle="square,pad=0.03", fc="white", ec="none", alpha=0.8))

