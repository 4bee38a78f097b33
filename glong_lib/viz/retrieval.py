"""Pictures of associative retrieval: the retrieved subgraph highlighted on the memory graph
(anchors, expanded edges, semantic pool, final top-K), the Eq. 4 terms of each candidate as
stacked bars, and Recall@k curves per method (with the paper's LongMemEval curves for context)."""

from __future__ import annotations

import math
from typing import Collection, Mapping, Optional, Sequence

import matplotlib.pyplot as plt
import networkx as nx
from matplotlib.lines import Line2D

from ..retrieval import RetrievalTrace
from .graph import NODE_COLOUR, SPEAKER_COLOUR, draw_memory, layout, select_edges

ANCHOR_COLOUR = "#c0392b"
POOL_COLOUR = "#f39c12"
FINAL_COLOUR = "#c0392b"
TERM_COLOURS = ("#3b6ea8", "#f2c14e", "#2a9d3f")  # semantic, weight, recency
HUB_LABEL_REACH = 2.2  # an anchor hub's name sits this many label offsets out: past its ring


def _short(text: str, width: int = 38) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _free_direction(x: float, y: float, neighbours: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The unit vector from ``(x, y)`` into the widest angle between the directions to its
    ``neighbours``: where a label next to the node crosses none of the node's own edges (straight
    down when it has none; opposite its one edge for a leaf).

    >>> [round(v, 6) + 0.0 for v in _free_direction(0.0, 0.0, [(1.0, 0.0)])]
    [-1.0, 0.0]
    >>> [round(v, 6) + 0.0 for v in _free_direction(0.0, 0.0, [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0)])]
    [0.0, -1.0]
    """
    angles = sorted(math.atan2(ny - y, nx_ - x) for nx_, ny in neighbours if (nx_, ny) != (x, y))
    if not angles:
        return 0.0, -1.0
    gaps = [((angles[(i + 1) % len(angles)] - a) % (2 * math.pi)) or 2 * math.pi for i, a in enumerate(angles)]
    widest = max(range(len(gaps)), key=gaps.__getitem__)
    middle = angles[widest] + gaps[widest] / 2
    return math.cos(middle), math.sin(middle)


def draw_retrieval(memory, trace: RetrievalTrace, ax=None, max_nodes: int = 40, seed: int = 42,
                   speakers: Sequence[str] = (), title: Optional[str] = None, label_outward: bool = False,
                   label_size: float = 8, nudge: Optional[Mapping[str, tuple[float, float]]] = None,
                   clear_hubs: bool = False):
    """The expanded neighbourhood of the anchors (blue, drawn by ``viz.graph.draw_memory``), with the
    anchors outlined red and labelled with their cosine, the semantic pool in orange and the final
    top-K in thick red; edges a bridge added (``bridges``) are dashed, and the far end of a pool
    edge outside the drawn neighbourhood gets its own node. Returns the figure.

    By default a node's name sits just above it and an anchor's cosine just below, where edges can
    run through them. With ``label_outward`` each name is written beside its node, in the widest gap
    between the node's drawn edges and on a white box, and an anchor's cosine is the second line of
    its (red) name, so no label sits on an edge or a node marker. ``label_size`` is the names' font
    size; ``nudge`` moves chosen names by ``(dx, dy)`` label offsets where a dense drawing crowds them;
    ``clear_hubs`` puts an anchor hub's name where it lies farthest from every node and edge (the widest
    gap can end beside another node, whose name then reads as the anchor's). Both need ``label_outward``;
    :func:`viz.legends.legend_below` moves the legend under the graph."""
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 7.5))
    anchors = [e for e, _ in trace.anchors]
    hops = int(trace.params.get("hops", 1))
    eids = select_edges(memory, anchors, hops=hops, max_nodes=max_nodes)
    extra = [e for e in trace.pool if e not in eids]  # the pool is always drawn, even past max_nodes
    pos = layout(memory, eids + extra, seed=seed)
    draw_memory(memory, ax=ax, entities=anchors, hops=hops, max_nodes=max_nodes, pos=pos,
                edge_labels=False, speakers=speakers, seed=seed, title="",
                label_nodes=set() if label_outward else None)  # outward: _label_outward names them
    g = nx.MultiDiGraph()
    for e in trace.pool:
        m = memory.edge(e)
        g.add_edge(m.subject, m.object, key=e)
    drawn = {n for e in eids for n in (memory.edge(e).subject, memory.edge(e).object)}
    missing = [n for n in g.nodes if n not in drawn and n in pos]  # ends of pool edges past the drawn part
    nx.draw_networkx_nodes(g, pos, nodelist=missing, ax=ax, node_size=210, node_color=NODE_COLOUR,
                           edgecolors="#555555", linewidths=0.6)
    bridged = {e for e, how in trace.added if how == "bridge"}  # a second hop from the found facts
    for group, colour, width in ((set(trace.pool) - set(trace.final), POOL_COLOUR, 3.0),
                                 (set(trace.final), FINAL_COLOUR, 4.5)):
        for style, part in (("solid", group - bridged), ("dashed", group & bridged)):
            edges = [(memory.edge(e).subject, memory.edge(e).object) for e in trace.pool if e in part]
            nx.draw_networkx_edges(g, pos, edgelist=edges, ax=ax, edge_color=colour, width=width, arrows=True,
                                   arrowsize=14, node_size=300, alpha=0.9, style=style)
    shown = [a for a in anchors if a in pos]
    nx.draw_networkx_nodes(g, pos, nodelist=shown, ax=ax, node_size=520, node_color="none",
                           edgecolors=ANCHOR_COLOUR, linewidths=2.5)
    ys = [y for _, y in pos.values()] or [0.0]
    dy = 0.07 * ((max(ys) - min(ys)) or 1.0)
    if label_outward:
        _label_outward(memory, eids + extra, pos, dict(trace.anchors), ax, {memory.resolve(s) for s in speakers},
                       label_size=label_size, nudge=nudge or {}, clear_hubs=clear_hubs)
    else:
        for name, score in trace.anchors:
            if name in pos:
                ax.text(pos[name][0], pos[name][1] - dy, f"anchor {score:.2f}", color=ANCHOR_COLOUR, fontsize=7,
                        ha="center", va="top")
    blue = len(set(trace.candidates) - set(trace.pool))  # expanded edges drawn blue: the pool is drawn over them
    handles = [Line2D([], [], marker="o", ls="", mfc="none", mec=ANCHOR_COLOUR, mew=2, ms=10, label="anchor"),
               Line2D([], [], color="#3b6ea8", lw=1.5,
                      label=f"expanded, not in the pool ({blue} of {len(trace.candidates)} candidate edges)"),
               Line2D([], [], color=POOL_COLOUR, lw=3,
                      label=f"pool, not returned (pool of {len(trace.pool)} minus the final {len(trace.final)})"),
               Line2D([], [], color=FINAL_COLOUR, lw=4.5, label=f"final top-{len(trace.final)} (Eq. 4)")]
    if bridged:  # the handle takes the colour the bridged edges are drawn in: red once one is returned
        handles.append(Line2D([], [], color=FINAL_COLOUR if bridged & set(trace.final) else POOL_COLOUR,
                              lw=2.5, ls="--",
                              label=f"dashed: added by the bridge ({len(bridged)}, 2nd hop)"))
    if speakers:
        handles.append(Line2D([], [], ls="", marker="o", ms=10, mfc=SPEAKER_COLOUR, mec="#555555", label="speaker"))
    ax.legend(handles=handles, loc="lower left", fontsize=8, framealpha=0.85)
    ax.set_title(title if title is not None else f"query: {_short(trace.query, 70)!r}", fontsize=10)
    return ax.figure


def _clearest_direction(x: float, y: float, reach: float, obstacles: Sequence[tuple[float, float]],
                        away_from: Optional[tuple[float, float]] = None) -> tuple[float, float]:
    """Of 24 unit vectors (those within 60 degrees of the way from ``away_from`` to ``(x, y)``, when
    given: a label pointing into the drawing would sit among the other nodes), the one whose point
    ``reach`` away from ``(x, y)`` lies farthest from every obstacle (no node, no edge under the label).

    >>> [round(v, 6) + 0.0 for v in _clearest_direction(0.0, 0.0, 1.0, [(1.0, 0.0), (0.0, 1.0), (0.0, -1.0)])]
    [-1.0, 0.0]
    """
    directions = [(math.cos(2 * math.pi * i / 24), math.sin(2 * math.pi * i / 24)) for i in range(24)]
    if away_from is not None and (x, y) != tuple(away_from):
        norm = math.hypot(x - away_from[0], y - away_from[1])
        out = ((x - away_from[0]) / norm, (y - away_from[1]) / norm)
        directions = [d for d in directions if d[0] * out[0] + d[1] * out[1] >= 0.5 - 1e-9]
    return max(directions, key=lambda d: min((math.hypot(x + reach * d[0] - ox, y + reach * d[1] - oy)
                                              for ox, oy in obstacles), default=0.0))


def _label_outward(memory, eids: Sequence[int], pos: dict, anchor_scores: Mapping[str, float], ax,
                   on_node: Collection[str] = (), label_size: float = 8,
                   nudge: Optional[Mapping[str, tuple[float, float]]] = None, clear_hubs: bool = False) -> None:
    """Each node's name beside it on a white box, an anchor's in red with ``anchor <cosine>`` as its
    second line: a node with several edges in the widest gap between them (:func:`_free_direction`);
    a leaf above or below, on the side away from its one edge (a name written sideways would run
    into the next part of the graph). A hub in ``on_node`` (a speaker with three or more drawn edges: no gap
    wide enough) has its name written on it instead, as the memory drawings write the speakers', unless it
    is an anchor: then the name goes in its widest gap, past the ring, so the red ring stays visible."""
    neighbours: dict[str, set[str]] = {}
    for e in eids:
        m = memory.edge(e)
        neighbours.setdefault(m.subject, set()).add(m.object)
        neighbours.setdefault(m.object, set()).add(m.subject)
    xs, ys = [x for x, _ in pos.values()] or [0.0], [y for _, y in pos.values()] or [0.0]
    off = 0.05 * max((max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0)
    box = {"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.9}
    obstacles = list(pos.values()) + [  # nodes, and points along every drawn edge
        (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])) for e in eids
        for a, b in [(pos.get(memory.edge(e).subject), pos.get(memory.edge(e).object))] if a and b
        for t in (0.2, 0.35, 0.5, 0.65, 0.8)]
    centre = (sum(xs) / len(xs), sum(ys) / len(ys))
    for node, (x, y) in pos.items():
        around = [pos[n] for n in neighbours.get(node, ()) if n in pos and n != node]
        ux, uy = _free_direction(x, y, around)
        if len(around) <= 1:  # a leaf: straight above or below
            ux, uy = 0.0, (1.0 if uy >= -1e-9 else -1.0)
        anchor = node in anchor_scores
        reach, leader = off, None
        if node in on_node and len(around) > 2:
            if anchor:  # an anchor hub: out in its widest gap, a thin line back to the ring, which stays visible
                if clear_hubs:  # pointing away from the drawing's centre, the clearest of nodes and edges
                    ux, uy = _clearest_direction(x, y, HUB_LABEL_REACH * off, obstacles, away_from=centre)
                reach, leader = HUB_LABEL_REACH * off, {"arrowstyle": "-", "color": ANCHOR_COLOUR, "lw": 0.8,
                                                        "shrinkA": 0, "shrinkB": 14}
            else:
                ux = uy = 0.0
        name = node                                    # as stored: the spelling the text and outputs use
        nx_off, ny_off = (nudge or {}).get(node, (0.0, 0.0))   # a caller's shift, in label offsets
        ax.annotate(f"{name}\nanchor {anchor_scores[node]:.2f}" if anchor else name, xy=(x, y),
                    xytext=(x + reach * ux + nx_off * off, y + reach * uy + ny_off * off), arrowprops=leader,
                    color=ANCHOR_COLOUR if anchor else "black", fontsize=label_size, bbox=box, zorder=6,
                    multialignment="center", ha="left" if ux > 0.35 else "right" if ux < -0.35 else "center",
                    va="bottom" if uy > 0.35 else "top" if uy < -0.35 else "center")
    ax.margins(x=0.2, y=0.16)  # room for the names of the outermost nodes


def plot_rerank_terms(trace: RetrievalTrace, ax=None, title: Optional[str] = None):
    """One horizontal bar per candidate of the semantic pool, split into Eq. 4's three weighted
    terms (b1*S_sem, b2*w, b3*recency), best first; the final top-K are marked with a star."""
    rows = trace.rerank
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.55 * max(3, len(rows)) + 1.2))
    labels = [("★ " if t.eid in trace.final else "   ") + _short(t.text) for t in rows]
    y = list(range(len(rows)))[::-1]
    left = [0.0] * len(rows)
    b1, b2, b3 = trace.params.get("betas", (0.5, 0.3, 0.2))
    names = (f"{b1:g}·S_sem", f"{b2:g}·weight", f"{b3:g}·recency")
    for i, (name, colour) in enumerate(zip(names, TERM_COLOURS)):
        values = [t.parts[i] for t in rows]
        ax.barh(y, values, left=left, color=colour, label=name, edgecolor="white")
        left = [a + b for a, b in zip(left, values)]
    for yi, t in zip(y, rows):
        ax.text(t.score + 0.01, yi, f"{t.score:.3f}", va="center", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlim(0, max([t.score for t in rows] + [0.1]) * 1.15)
    ax.set_xlabel("S_final (Eq. 4)")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title or "Rerank terms of the semantic pool (★ = returned)", fontsize=10)
    return ax.figure


def plot_recall_curves(curves: Mapping[str, Mapping[int, float]], ax=None, paper: Optional[Mapping] = None,
                       title: str = "Evidence Recall@k", paper_label: str = "paper, LME", distinct: bool = False,
                       xlabel: str = "k (distinct evidence turns retrieved)", ylabel: str = "Recall@k"):
    """Recall@k per method (``{method: {k: recall}}``, solid), and optionally the paper's curves
    (dashed, grey tones) for context. ``distinct`` gives each method its own marker and line style, the
    first line wide under the others, so curves that coincide stay visible, and puts a tick at every k."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    looks = zip("*osv^Dp", ["-", "--", "-.", ":", "-", "--", "-."], [5, 2, 2, 2, 2, 2, 2])
    for method, points in curves.items():
        ks = sorted(points)
        marker, style, width = next(looks, ("o", "-", 2)) if distinct else ("o", "-", 2)
        ax.plot(ks, [points[k] for k in ks], marker=marker, ls=style, lw=width, label=method,
                markersize=9 if distinct else None)
    greys = ("#555555", "#888888", "#aaaaaa", "#cccccc")
    for (method, points), colour in zip((paper or {}).items(), greys * 3):
        ks = sorted(points)
        ax.plot(ks, [points[k] for k in ks], ls="--", marker=".", color=colour, label=f"{method} ({paper_label})")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if distinct:
        ax.set_xticks(sorted({k for points in [*curves.values(), *(paper or {}).values()] for k in points}))
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title, fontsize=10)
    return ax.figure


def curves_from(evaluation) -> dict[str, dict[int, float]]:
    """``{method: {k: Recall@k}}`` from a ``retrieval.EvidenceEvaluation``."""
    return {m: dict(zip(*evaluation.recall_curve(m))) for m in evaluation.metrics}


__all__ = ["draw_retrieval", "plot_rerank_terms", "plot_recall_curves", "curves_from"]
