"""Pictures of the graph memory: the graph itself (node size by degree, edge width by weight,
superseded edges dashed and grey), its stages session by session, and its growth."""

from __future__ import annotations

import math
from typing import Iterable, Optional, Sequence, Union

import matplotlib.pyplot as plt
import networkx as nx

from ..memory import GraphMemory
from .labels import edge_gid, label_collisions, node_gid, repel_labels  # noqa: F401  (label_collisions: re-exported)

CURRENT_COLOUR = "#3b6ea8"
SUPERSEDED_COLOUR = "#9a9a9a"
NODE_COLOUR = "#f2c14e"
NEW_COLOUR = "#2a9d3f"
SPEAKER_COLOUR = "#e07a5f"
SUPERSEDED_MIN_WIDTH = 1.2


def edge_width(weight: float) -> float:
    """Line width of an edge of weight ``weight`` (clipped to [0, 1]): 0.6 at 0, 3.0 at 1."""
    return 0.6 + 2.4 * max(0.0, min(1.0, weight))


def legend_handles(speakers: bool = True, new: bool = False, superseded: bool = False,
                   weights: Sequence[float] = (0.0, 0.5, 1.0)) -> list:
    """Legend entries for the memory drawings: speaker and entity nodes, the green outline of
    entities new in a session (``new``), one edge per weight in ``weights`` drawn at its width,
    and the grey dashed superseded edge (``superseded``). Pass them to ``ax.legend(handles=...)``."""
    from matplotlib.lines import Line2D

    handles = []
    if speakers:
        handles.append(Line2D([], [], ls="", marker="o", ms=10, mfc=SPEAKER_COLOUR, mec="#555555", label="speaker"))
    handles.append(Line2D([], [], ls="", marker="o", ms=7, mfc=NODE_COLOUR, mec="#555555",
                          label="entity (size grows with its facts)"))
    if new:
        handles.append(Line2D([], [], ls="", marker="o", ms=7, mfc=NODE_COLOUR, mec=NEW_COLOUR, mew=2.0,
                              label="entity first seen in this session (named)"))
    for w in weights:
        handles.append(Line2D([], [], color=CURRENT_COLOUR, lw=edge_width(w), label=f"fact of weight {w:g} (width)"))
    if superseded:
        handles.append(Line2D([], [], color=SUPERSEDED_COLOUR, lw=1.5, ls="--", alpha=0.8,
                              label="superseded fact (kept, not current)"))
    return handles


def select_edges(mem: GraphMemory, entities: Union[str, Iterable[str], None] = None, hops: int = 1,
                 max_nodes: int = 40, upto_session: Optional[int] = None) -> list[int]:
    """The edges to draw: the ``hops`` neighbourhood of ``entities`` (an ego view) or, with no
    entities, every edge among the ``max_nodes`` best-connected nodes; only edges from sessions
    up to ``upto_session`` when given."""
    eids = mem.incident_edges(entities, hops=hops) if entities is not None else mem.edge_ids()
    if upto_session is not None:
        eids = [e for e in eids if (mem.edge(e).session or 0) <= upto_session]
    nodes = {n for e in eids for n in (mem.edge(e).subject, mem.edge(e).object)}
    if len(nodes) > max_nodes:
        degree = dict(mem.graph.degree())
        keep = set(sorted(nodes, key=lambda n: (-degree[n], n))[:max_nodes])
        eids = [e for e in eids if mem.edge(e).subject in keep and mem.edge(e).object in keep]
    return eids


def superseded_at(mem: GraphMemory, eid: int, upto_session: Optional[int] = None) -> bool:
    """Whether edge ``eid`` is superseded by the end of ``upto_session`` (or now, with None)."""
    new = mem.superseded_by.get(eid)
    if new is None:
        return False
    return upto_session is None or (mem.edge(new).session or 0) <= upto_session


def _ordered(g: nx.Graph, nodes) -> nx.Graph:
    """The subgraph of ``g`` on ``nodes`` as a new graph with nodes and edges in sorted order.
    A networkx subgraph *view* of a few nodes iterates them in set order, which changes with
    Python's string hashing from one process to the next, and a seeded spring layout depends on
    node order: without this the same memory is drawn differently in every kernel."""
    keep = set(nodes)
    out = nx.Graph()
    out.add_nodes_from(sorted(keep))
    out.add_edges_from(sorted(tuple(sorted((u, v))) for u, v in g.edges() if u in keep and v in keep))
    return out


def _fan_layout(part: nx.Graph, seed: int) -> dict[str, tuple[float, float]]:
    """Positions for one connected part: the core (nodes of degree > 1) by a seeded spring
    layout, and each hub's leaves fanned evenly around it on a circle big enough for their
    labels (a plain spring layout piles a speaker's twenty facts on top of each other)."""
    leaves: dict[str, list[str]] = {}
    for n in sorted(part):
        nbrs = list(part.neighbors(n))
        if part.degree(n) == 1 and part.degree(nbrs[0]) > 1:
            leaves.setdefault(nbrs[0], []).append(n)
    core = [n for n in part if not any(n in ls for ls in leaves.values())]
    radius = {h: max(2.0, 0.2 * len(ls)) for h, ls in leaves.items()}   # room for the hub's disc and the names
    spread = 2.6 * max(radius.values(), default=1.0)
    if len(core) == 1:
        pos = {core[0]: (0.0, 0.0)}
    else:
        raw = nx.spring_layout(_ordered(part, core), iterations=200, seed=seed)
        scale = spread * 0.5 * math.sqrt(len(core) / 2)  # two core nodes end up one `spread` apart
        pos = {n: (float(x) * scale, float(y) * scale) for n, (x, y) in raw.items()}
    for hub, ls in leaves.items():
        hx, hy = pos[hub]
        for i, leaf in enumerate(ls):
            angle = 2 * math.pi * i / len(ls) + 0.3
            r = radius[hub] * (1.0 + 0.22 * (i % 2))  # stagger so that neighbouring labels clear
            pos[leaf] = (hx + r * math.cos(angle), hy + r * math.sin(angle))
    return pos


def layout(mem: GraphMemory, eids: Sequence[int], seed: int = 42) -> dict[str, tuple[float, float]]:
    """Node positions for the edges ``eids``: each connected part laid out on its own (see
    ``_fan_layout``) and the parts packed in rows, biggest first."""
    g = nx.Graph()
    for e in eids:
        m = mem.edge(e)
        g.add_edge(m.subject, m.object)
    parts = [_fan_layout(_ordered(g, c), seed)
             for c in sorted(nx.connected_components(g), key=lambda c: (-len(c), min(c)))]
    boxes = [(min(x for x, _ in p.values()), max(x for x, _ in p.values()),
              min(y for _, y in p.values()), max(y for _, y in p.values())) for p in parts]
    # rows about as wide as the parts are tall in total, so the picture comes out roughly square
    area = sum((b[1] - b[0] + 1.0) * (b[3] - b[2] + 1.0) for b in boxes)
    width = max(max((b[1] - b[0] for b in boxes), default=0.0), 1.3 * math.sqrt(area)) + 1.0
    pos: dict[str, tuple[float, float]] = {}
    x = y = row_height = 0.0
    for part, (x0, x1, y0, y1) in zip(parts, boxes):
        if x > 0 and x + (x1 - x0) > width:
            x, y, row_height = 0.0, y - row_height - 1.0, 0.0
        for node, (px, py) in part.items():
            pos[node] = (px - x0 + x, py - y1 + y)
        x += (x1 - x0) + 1.0
        row_height = max(row_height, y1 - y0)
    return pos


def draw_memory(mem: GraphMemory, ax=None, entities=None, hops: int = 1, max_nodes: int = 40,
                upto_session: Optional[int] = None, pos: Optional[dict] = None, edge_labels: Optional[bool] = None,
                title: Optional[str] = None, seed: int = 42, speakers: Sequence[str] = (),
                node_scale: float = 1.0, font_size: float = 8, label_nodes: Optional[Iterable[str]] = None,
                new_nodes: Iterable[str] = (), label_outward: bool = False, speaker_names_beside: bool = False):
    """Draw (part of) the memory on ``ax`` and return the figure.

    Node area grows with degree (in the drawn part), edge width with weight; current edges are
    blue arrows, superseded ones grey and dashed; parallel edges bend apart. ``entities``/``hops``
    give an ego view, ``upto_session`` the memory as it was after that session, ``pos`` fixed
    positions (to compare stages). Relation names are written on the edges when the drawing is
    small enough to read them (``edge_labels`` forces it either way). ``label_nodes`` limits
    which nodes get a name; ``new_nodes`` are outlined in green. With ``label_outward`` a name is
    written beside its node on the side away from its neighbours (so it does not sit on the node's
    own edges) instead of just above it. With ``speaker_names_beside`` a speaker's name is placed like
    any other (beside its node) instead of on it, so a small speaker node is not hidden under its name."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 7))
    eids = select_edges(mem, entities, hops, max_nodes, upto_session)
    pos = pos if pos is not None else layout(mem, eids, seed)
    g = nx.MultiDiGraph()
    for e in eids:
        m = mem.edge(e)
        g.add_edge(m.subject, m.object, key=e)
    degree = dict(g.degree())
    speaker_nodes = {mem.resolve(s) for s in speakers}
    written_on = set() if speaker_names_beside else speaker_nodes   # names written on their own node
    nodes = list(g.nodes)
    new = set(new_nodes)
    nx.draw_networkx_nodes(g, pos, nodelist=nodes, ax=ax,
                           node_size=[node_scale * (120 + 90 * degree[n]) for n in nodes],
                           node_color=[SPEAKER_COLOUR if n in speaker_nodes else NODE_COLOUR for n in nodes],
                           edgecolors=[NEW_COLOUR if n in new else "#555555" for n in nodes],
                           linewidths=[2.0 if n in new else 0.6 for n in nodes])
    _draw_edges(mem, g, pos, ax, upto_session)
    shown = set(nodes) if label_nodes is None else set(label_nodes) & set(nodes)
    labels = {n: n for n in nodes if n in shown}   # names as stored, the spelling the text and outputs use
    # names sit just above their node (speakers on it), so the node's outline stays visible
    ys = [y for _, y in pos.values()] or [0.0]
    dy = 0.035 * ((max(ys) - min(ys)) or 1.0)
    box = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.75}
    if label_outward:
        xs = [x for x, _ in pos.values()] or [0.0]
        off = 0.03 * max((max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0)
        for n, name in labels.items():
            x, y = pos[n]
            nbrs = [pos[m] for m in set(g.predecessors(n)) | set(g.successors(n)) if m != n]
            cx = sum(p[0] for p in nbrs) / len(nbrs) if nbrs else x   # away from the neighbours' centre
            cy = sum(p[1] for p in nbrs) / len(nbrs) if nbrs else y - 1
            ux, uy = x - cx, y - cy
            norm = math.hypot(ux, uy)
            ux, uy = (ux / norm, uy / norm) if norm and n not in written_on else (0.0, 0.0)
            text = ax.text(x + off * ux, y + off * uy, name, fontsize=font_size, bbox=box, zorder=5,
                           ha="left" if ux > 0.35 else "right" if ux < -0.35 else "center",
                           va="bottom" if uy > 0.35 else "top" if uy < -0.35 else "center")
            text.set_gid(node_gid(pos[n]))
    else:
        label_pos = {n: (pos[n][0], pos[n][1] + (0 if n in written_on else dy)) for n in labels}
        drawn = nx.draw_networkx_labels(g, label_pos, labels=labels, ax=ax, font_size=font_size, bbox=box)
        for n, text in drawn.items():
            text.set_gid(node_gid(pos[n]))
    if edge_labels if edge_labels is not None else len(eids) <= 30:
        _draw_relation_labels(mem, g, pos, ax)
    ax.set_title(title if title is not None else f"{len(nodes)} entities, {len(eids)} facts", fontsize=10)
    ax.margins(x=0.14, y=0.06)  # room for the labels of the outermost nodes
    ax.axis("off")
    return ax.figure


def _draw_edges(mem: GraphMemory, g: nx.MultiDiGraph, pos: dict, ax, upto_session: Optional[int]) -> None:
    """Each edge on its own so that parallel ones can bend apart and superseded ones be dashed."""
    seen: dict[tuple[str, str], int] = {}
    for u, v, e in g.edges(keys=True):
        m = mem.edge(e)
        pair = tuple(sorted((u, v)))
        nth = seen.get(pair, 0)
        seen[pair] = nth + 1
        old = superseded_at(mem, e, upto_session)
        # a superseded edge keeps a visible width whatever its weight: it is the point of the dashing
        width = max(edge_width(m.weight), SUPERSEDED_MIN_WIDTH) if old else edge_width(m.weight)
        drawn = nx.draw_networkx_edges(
            g, pos, edgelist=[(u, v)], ax=ax, width=width,
            edge_color=SUPERSEDED_COLOUR if old else CURRENT_COLOUR, style="dashed" if old else "solid",
            alpha=0.7 if old else 0.9, arrows=True, arrowsize=10,
            connectionstyle=f"arc3,rad={0.12 * nth * (-1) ** nth}", node_size=300)
        for arrow in drawn if isinstance(drawn, list) else [drawn]:   # where the line runs, for the label checks
            arrow.set_gid(edge_gid(pos[u], pos[v]))


def _draw_relation_labels(mem: GraphMemory, g: nx.MultiDiGraph, pos: dict, ax) -> None:
    """Relation names at edge midpoints (parallel edges share one label, joined by '/')."""
    text: dict[tuple[str, str], list[str]] = {}
    for u, v, e in g.edges(keys=True):
        rel = mem.edge(e).relation
        if rel not in text.setdefault((u, v), []):
            text[(u, v)].append(rel)
    for (u, v), rels in text.items():
        (x1, y1), (x2, y2) = pos[u], pos[v]
        ax.text((x1 + x2) / 2, (y1 + y2) / 2, " / ".join(rels), fontsize=6, color="#333333",
                ha="center", va="center", bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.6})


def draw_stages(mem: GraphMemory, sessions: Optional[Sequence[int]] = None, max_nodes: int = 40, seed: int = 42,
                speakers: Sequence[str] = (), ncols: int = 2, panel_size: float = 4.6, legend: bool = True,
                font_size: float = 8, label_outward: bool = True, repel: bool = True, named: Sequence[str] = (),
                speaker_names_beside: bool = False):
    """One panel per session: the memory as it stood after it, on fixed positions (from the
    final graph) so that growth is easy to follow; each title gives what the session added (facts
    drawn, entities first seen) and the facts drawn in all. Only the speakers and the entities new in
    that session are named (outlined in green), so each panel shows what the session added.
    With ``legend`` a key (outline, node kinds, edge width by weight, superseded edges when there
    are any) fills the first empty panel, or sits under the panels when none is empty;
    ``label_outward`` writes each name on the side of its node away from its edges, and ``repel``
    then moves names off other nodes and names (``repel_labels``). The entities in ``named`` are named
    in every panel that draws them, so a reader can follow them from panel to panel;
    ``speaker_names_beside`` places the speakers' names beside their nodes (see ``draw_memory``)."""
    if sessions is None:
        sessions = [r["session"] for r in mem.growth()]
    pos = layout(mem, select_edges(mem, max_nodes=max_nodes), seed)
    rows = max(1, math.ceil(len(sessions) / ncols))
    cols = min(ncols, max(1, len(sessions)))
    fig, axes = plt.subplots(rows, cols, figsize=(panel_size * cols, panel_size * rows), squeeze=False)
    shown_before = 0
    for ax, s in zip(axes.flat, sessions):
        eids = select_edges(mem, max_nodes=max_nodes, upto_session=s)
        new = [n for n in mem.graph if mem.graph.nodes[n].get("first_session") == s]
        draw_memory(mem, ax=ax, max_nodes=max_nodes, upto_session=s, pos=pos, edge_labels=False,
                    speakers=speakers, node_scale=0.45, font_size=font_size, new_nodes=new,
                    label_nodes=set(new) | {mem.resolve(x) for x in (*speakers, *named)}, label_outward=label_outward,
                    speaker_names_beside=speaker_names_beside,
                    title=f"after session {s}: +{len(eids) - shown_before} facts, +{len(new)} entities "
                          f"({len(eids)} facts in all)")
        shown_before = len(eids)
    xs, ys = [x for x, _ in pos.values()] or [0.0], [y for _, y in pos.values()] or [0.0]
    padx, pady = 0.15 * ((max(xs) - min(xs)) or 1.0), 0.08 * ((max(ys) - min(ys)) or 1.0)
    for ax in list(axes.flat)[:len(sessions)]:  # one frame for all panels: nodes stay put
        ax.set_xlim(min(xs) - padx, max(xs) + padx)
        ax.set_ylim(min(ys) - pady, max(ys) + 2 * pady)
    spare = list(axes.flat)[len(sessions):]
    for ax in spare:
        ax.axis("off")
    if not legend:
        fig.tight_layout()
        return repel_labels(fig) if repel else fig
    handles = legend_handles(speakers=bool(speakers), new=True,
                             superseded=any(superseded_at(mem, e) for e in select_edges(mem, max_nodes=max_nodes)))
    if spare:
        spare[0].legend(handles=handles, loc="center", fontsize=9, frameon=False, title="key", title_fontsize=9)
        fig.tight_layout()
    else:
        fig.legend(handles=handles, loc="lower center", ncol=min(4, len(handles)), fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0.7 / fig.get_size_inches()[1], 1, 1))
    return repel_labels(fig) if repel else fig


def plot_growth(growth: Union[Sequence[dict], dict[str, Sequence[dict]]], ax=None, title: str = "Memory growth"):
    """Nodes, edges and current edges after each session (``GraphMemory.growth()`` rows), for one
    memory or several (a dict name -> rows, drawn with one line style each). A line equal to one
    already drawn is not drawn again: the drawn one's legend names both ("nodes (a = b)")."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.6))
    series = growth if isinstance(growth, dict) else {"": growth}
    styles = ["-", "--", ":", "-."]
    drawn: dict = {}  # (quantity, x, values) -> its line; an equal series is named on it, not hidden under it

    def draw(what, x, values, style, marker, colour, name):
        key = (what, tuple(x), tuple(values))
        if key in drawn:
            drawn[key].set_label(drawn[key].get_label()[:-1] + f" = {name})")
            return
        (drawn[key],) = ax.plot(x, values, style, marker=marker, color=colour,
                                label=f"{what} ({name})" if name else what)

    for i, (name, rows) in enumerate(series.items()):
        x = [r["session"] for r in rows]
        style = styles[i % len(styles)]
        draw("nodes", x, [r["nodes"] for r in rows], style, "o", NODE_COLOUR, name)
        draw("edges", x, [r["edges"] for r in rows], style, "s", CURRENT_COLOUR, name)
        if any(r["current edges"] != r["edges"] for r in rows):
            draw("current edges", x, [r["current edges"] for r in rows], style, "^", SPEAKER_COLOUR, name)
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_xlabel("after session")
    ax.set_ylabel("count")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax.figure
