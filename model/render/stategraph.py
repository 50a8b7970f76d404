"""State diagrams from the explored state graph, quotiented onto a projection.

:func:`explore_graph` runs the explorer over a small :class:`~model.acp.AcpModel`
with a visitor that keeps every state and every transition (with the step's events) in a
``networkx.MultiDiGraph``.  :func:`quotient` maps each state to a label
(its projection) and keeps one edge per ``(projected source, projected
target, label)``.  Two projections are provided:

* :func:`agent_projection`: the agent's foreground state ``idle`` /
  ``running`` / ``requires_action``; a transition into ``idle`` is labelled
  with the ``stopReason`` of the idle ``state_update`` the agent sends on it;
* :func:`client_projection`: the client's view of its first submission,
  ``not submitted`` / ``pending`` / ``accepted`` / ``rejected`` /
  ``cancelled`` / ``ambiguous``, labelled with what caused the change.

Both render as Mermaid ``stateDiagram-v2`` text (:func:`.mermaid.mermaid_states`)
and as an SVG drawn by matplotlib at fixed positions (:func:`draw_states`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from acplab.model.acp.model import AcpModel, Bounds
from acplab.model.engine import Limits, Visitor, explore
from .labels import describe
from acplab.model.acp.spec import RFD, Spec

#: the bound on stored states; a larger graph is cut off and reported as incomplete
MAX_NODES = 200_000

#: bounds whose graph reaches the three stop reasons end_turn, cancelled and error
#: (the union of the scenarios cancellation, failure-after-insertion and permission-cancel)
AGENT_BOUNDS = Bounds(clients=1, prompts=1, cancels=1, failures=1, tools=True, permission=True)
#: bounds for the client's view of one submission: a drop, a disconnect, a cancel and a failure
CLIENT_BOUNDS = Bounds(clients=1, prompts=1, drops=1, disconnects=1, cancels=1, failures=1)

AGENT_ORDER = ("idle", "running", "requires_action")
CLIENT_ORDER = ("not submitted", "pending", "accepted", "rejected", "cancelled", "ambiguous")


@dataclass
class StateGraph:
    """The explored graph: node ``i`` has attribute ``state``; edges carry ``action`` and ``events``."""

    graph: nx.MultiDiGraph
    complete: bool
    limit: int
    notes: list[str] = field(default_factory=list)


class _GraphBuilder(Visitor):
    """Keeps every state the explorer stores and every transition it finds, with the step's events."""

    def __init__(self) -> None:
        self.graph = nx.MultiDiGraph()

    def state(self, idx: int, state) -> None:
        self.graph.add_node(idx, state=state)

    def edge(self, src: int, dst: int, successor: tuple) -> None:
        action, _next, events = successor
        self.graph.add_edge(src, dst, action=action, events=tuple(events))


def explore_graph(model: AcpModel, max_nodes: int = MAX_NODES) -> StateGraph:
    """The explorer's own breadth-first search over ``model``, keeping states and transitions."""
    builder = _GraphBuilder()
    result = explore(model, Limits(max_states=max_nodes), visitor=builder)
    notes = [] if result.complete else [f"state graph cut off at {max_nodes:,} states: the diagram may miss transitions"]
    return StateGraph(builder.graph, result.complete, max_nodes, notes)


# -- projections ------------------------------------------------------------


def agent_projection(w) -> str:
    return w.agent.fg


def idle_stop_reasons(events) -> list[str]:
    """The stop reasons of the idle ``state_update`` notifications sent in a step (deduplicated)."""
    out: list[str] = []
    for e in events:
        if e.kind == "send" and e.msg.kind == "update" and e.msg.update.kind == "state_update":
            u = e.msg.update
            if u.state == "idle" and u.stop_reason and u.stop_reason not in out:
                out.append(u.stop_reason)
    return out


def agent_label(before, after, action, events) -> str:
    """Into idle: the stop reason sent (or the internal reason, marked unreported); else the work step."""
    if after.agent.fg == "idle":
        reasons = idle_stop_reasons(events)
        if reasons:
            return ", ".join(reasons)
        ends = [e for e in events if e.kind == "work_end"]
        return f"{ends[0].reason} (no idle sent)" if ends else "idle"
    if action.actor == "agent":
        return {"insert": "prompt inserted", "ask_permission": "request_permission"}.get(action.name, action.name)
    delivered = [e for e in events if e.kind == "deliver"]
    if delivered:
        msg = delivered[0].msg
        return "permission answered" if msg.kind == "permission_result" else describe(msg).split(" #")[0]
    return action.name


def client_projection(w) -> str:
    subs = w.clients[0].subs
    return subs[0].status if subs else "not submitted"


def client_label(before, after, action, events) -> str:
    """What changed the first submission's status: the message delivered, the cut, the submit."""
    for e in events:
        if e.kind == "deliver" and e.dir == "agent->client":
            m = e.msg
            if m.kind == "prompt_result":
                return "result {messageId}" if m.message_id else "result {}"
            if m.kind == "error_response":
                return f"error {m.error.code}"
            if m.kind == "update":
                return m.update.kind + (" (bound by ID)" if any(x.kind == "bind" for x in events) else "")
            return m.kind
        if e.kind == "cut":
            return "connection cut"
    if action.name == "submit":
        return "session/prompt"
    return action.name


@dataclass
class Quotient:
    """The projected graph: states in display order, the initial state, labelled edges."""

    title: str
    states: list[str]
    initial: str
    edges: dict[tuple[str, str], list[str]]  # (src, dst) -> sorted labels
    notes: list[str] = field(default_factory=list)

    def labels_into(self, dst: str) -> set[str]:
        return {lab for (s, d), labs in self.edges.items() if d == dst and s != dst for lab in labs}


def quotient(sg: StateGraph, project, label, order=(), title: str = "") -> Quotient:
    """Project every state with ``project``; keep each distinct ``(src, dst, label)`` change (no self-loops)."""
    g = sg.graph
    seen_states = {project(g.nodes[n]["state"]) for n in g.nodes}
    init = project(g.nodes[0]["state"])
    edges: dict[tuple[str, str], set[str]] = {}
    for u, v, data in g.edges(data=True):
        a, b = g.nodes[u]["state"], g.nodes[v]["state"]
        pa, pb = project(a), project(b)
        if pa == pb:
            continue
        edges.setdefault((pa, pb), set()).add(label(a, b, data["action"], data["events"]))
    rank = {s: i for i, s in enumerate(order)}
    states = sorted(seen_states, key=lambda s: (rank.get(s, len(rank)), s))
    ordered = {k: sorted(edges[k]) for k in sorted(edges, key=lambda k: (rank.get(k[0], 99), rank.get(k[1], 99), k))}
    return Quotient(title, states, init, ordered, list(sg.notes))


def agent_state_diagram(spec: Spec = RFD, bounds: Bounds = AGENT_BOUNDS, max_nodes: int = MAX_NODES) -> tuple[Quotient, StateGraph]:
    sg = explore_graph(AcpModel(spec, bounds), max_nodes)
    q = quotient(sg, agent_projection, agent_label, AGENT_ORDER,
                 f"agent foreground state ({sg.graph.number_of_nodes():,} explored states, spec {spec.name})")
    return q, sg


def client_state_diagram(spec: Spec = RFD, bounds: Bounds = CLIENT_BOUNDS, max_nodes: int = MAX_NODES) -> tuple[Quotient, StateGraph]:
    sg = explore_graph(AcpModel(spec, bounds), max_nodes)
    q = quotient(sg, client_projection, client_label, CLIENT_ORDER,
                 f"client c1's view of its first submission ({sg.graph.number_of_nodes():,} explored states, spec {spec.name})")
    return q, sg


# -- output ------------------------------------------------------------


def layered_positions(q: Quotient) -> dict[str, tuple[float, float]]:
    """Fixed positions: one row per breadth-first distance from the initial state, display order within a row."""
    dist = {q.initial: 0}
    frontier = [q.initial]
    while frontier:
        nxt = []
        for s in frontier:
            for (a, b) in q.edges:
                if a == s and b not in dist:
                    dist[b] = dist[s] + 1
                    nxt.append(b)
        frontier = nxt
    depth = max(dist.values(), default=0)
    for s in q.states:  # unreachable in the projection (should not happen): one row below
        dist.setdefault(s, depth + 1)
    pos = {}
    for layer in sorted(set(dist.values())):
        row = [s for s in q.states if dist[s] == layer]
        for i, s in enumerate(row):
            pos[s] = ((i - (len(row) - 1) / 2) * BOX_GAP, -layer * LAYER_GAP)
    return pos


BOX_W, BOX_H = 1.9, 0.55
BOX_GAP, LAYER_GAP = 2.9, 2.0


def _clip(p, q):
    """Where the segment from box centre ``p`` towards ``q`` leaves the box around ``p``."""
    (x0, y0), (x1, y1) = p, q
    dx, dy = x1 - x0, y1 - y0
    scale = min((BOX_W / 2 + 0.06) / abs(dx) if dx else float("inf"),
                (BOX_H / 2 + 0.06) / abs(dy) if dy else float("inf"))
    return (x0 + dx * scale, y0 + dy * scale)


def draw_states(q: Quotient, path_svg, path_png=None) -> None:
    """The projected graph in layers from the initial state, at fixed positions, drawn with matplotlib."""
    import math

    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from .style import pyplot, save_deterministic, setup_rcparams

    plt = pyplot()

    setup_rcparams()
    pos = layered_positions(q)
    xs = [x for x, _ in pos.values()]
    ys = [y for _, y in pos.values()]
    skips = any(pos[a][0] == pos[b][0] and abs(pos[a][1] - pos[b][1]) > LAYER_GAP * 1.5 for a, b in q.edges)
    x_lo, x_hi = min(xs) - BOX_W / 2 - 2.0, max(xs) + BOX_W / 2 + (3.0 if skips else 2.0)
    y_lo, y_hi = min(ys) - 0.9, max(ys) + 1.0
    fig = plt.figure(figsize=(x_hi - x_lo, y_hi - y_lo))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.axis("off")
    ax.text((x_lo + x_hi) / 2, y_hi - 0.3, q.title, ha="center", va="center", fontsize=10, weight="bold")
    for s, (x, y) in pos.items():
        face = "#d9f2d9" if s == q.initial else "#e8f0fe"
        ax.add_patch(FancyBboxPatch((x - BOX_W / 2, y - BOX_H / 2), BOX_W, BOX_H, boxstyle="round,pad=0.04",
                                    fc=face, ec="#1f3b73", lw=1.4, zorder=3))
        ax.text(x, y, s, ha="center", va="center", fontsize=11, zorder=4, weight="bold")
    ix, iy = pos[q.initial]
    ax.plot([ix - BOX_W / 2 - 0.55], [iy], marker="o", markersize=9, color="black", zorder=3)
    ax.add_patch(FancyArrowPatch((ix - BOX_W / 2 - 0.5, iy), (ix - BOX_W / 2 - 0.06, iy), arrowstyle="-|>",
                                 mutation_scale=14, color="black", zorder=3, shrinkA=0, shrinkB=0))
    for (a, b), labels in q.edges.items():
        pa, pb = pos[a], pos[b]
        text = "\n".join(_wrap_labels(labels))
        colour = "#a40000" if b in ("idle", "ambiguous") else "#1a1a1a"
        box = dict(boxstyle="round,pad=0.2", fc="white", ec="#bbbbbb", lw=0.6)
        layers = round(abs(pa[1] - pb[1]) / LAYER_GAP)
        if pa[0] == pb[0] and layers > 1:
            # skips a layer: around the right-hand side of the boxes in between
            start, end = (pa[0] + BOX_W / 2, pa[1]), (pb[0] + BOX_W / 2, pb[1])
            rad = 0.7 if pb[1] > pa[1] else -0.7
            ax.add_patch(FancyArrowPatch(start, end, connectionstyle=f"arc3,rad={rad}", arrowstyle="-|>",
                                         mutation_scale=16, lw=1.2, color="#333333", shrinkA=0, shrinkB=0, zorder=2))
            dy = end[1] - start[1]
            lx, ly = start[0] + rad * dy / 2 + 0.08, (start[1] + end[1]) / 2
            ax.text(lx, ly, text, ha="left", va="center", fontsize=8.5, color=colour, zorder=5, bbox=box)
            continue
        # straight, shifted sideways when the opposite edge exists too
        dx, dy = pb[0] - pa[0], pb[1] - pa[1]
        length = math.hypot(dx, dy)
        nx_, ny_ = dy / length, -dx / length  # right-hand normal of the direction a -> b
        shift = 0.3 if (b, a) in q.edges else 0.0
        sa = (pa[0] + nx_ * shift, pa[1] + ny_ * shift)
        sb = (pb[0] + nx_ * shift, pb[1] + ny_ * shift)
        start, end = _clip(sa, sb), _clip(sb, sa)
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=16, lw=1.2, color="#333333",
                                     shrinkA=0, shrinkB=0, zorder=2))
        t = 0.5 if shift or pa[0] == pb[0] else 0.62
        lx, ly = start[0] + (end[0] - start[0]) * t, start[1] + (end[1] - start[1]) * t
        if shift:
            ha = "left" if nx_ > 0 else "right"
            lx += 0.1 if nx_ > 0 else -0.1
        else:
            ha = "center"
        ax.text(lx, ly, text, ha=ha, va="center", fontsize=8.5, color=colour, zorder=5, bbox=box)
    if q.notes:
        ax.text((x_lo + x_hi) / 2, y_lo + 0.2, "; ".join(q.notes), ha="center", fontsize=9, color="#a40000")
    save_deterministic(fig, path_svg, path_png)
    plt.close(fig)


def _wrap_labels(labels, width: int = 28) -> list[str]:
    lines, cur = [], ""
    for lab in labels:
        piece = lab if not cur else cur + ", " + lab
        if cur and len(piece) > width:
            lines.append(cur + ",")
            cur = lab
        else:
            cur = piece
    if cur:
        lines.append(cur)
    return lines
