"""Names on node drawings placed so that a class can read them: off the other nodes, names and
edge lines, each tied to its node by a leader line (``repel_labels``, with adjustText), and the
count of what still collides (``label_collisions``), so a figure's notice can say it.

A drawing marks what the checks need with gids: a node's name carries ``node_gid(xy)`` (where its
node is), an edge line ``edge@x1,y1,x2,y2`` (where it runs), a leader line ``leader``.
"""

from __future__ import annotations

import math
from typing import Optional


def _renderer(fig):
    """A renderer for ``fig`` with its layout drawn. A figure already shown by the inline backend
    keeps a bare canvas with no renderer, so it gets an Agg one (pixel sizes are the same)."""
    if not hasattr(fig.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        FigureCanvasAgg(fig)                # attaches itself as fig.canvas
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def repel_labels(fig, iterations: int = 300):
    """Move the entity names of every panel of ``fig`` apart from each other and off the nodes, with
    adjustText (the maintained label-placement package), each pulled towards its own node and tied
    to it by a thin grey leader line, so every name points at its node even in a crowded panel.
    A name adjustText leaves on another node is then moved to the first free spot around its own
    node (``_settle``). Names written on their node (the speakers') stay where they are. Call it
    last, once the panels' limits and layout are final. Deterministic: adjustText seeds its own
    shifts and ``iterations`` bounds the passes."""
    from adjustText import adjust_text
    from matplotlib.collections import PathCollection

    renderer = _renderer(fig)               # text extents need a renderer and the final layout
    for ax in fig.axes:
        texts, targets = [], []
        for t in ax.texts:
            own = _node_of(t)
            if own is None or not t.get_visible() or own == tuple(t.get_position()):
                continue                    # not a node name, or written on its node on purpose
            texts.append(t)
            targets.append(own)
        if not texts:
            continue
        nodes = [c for c in ax.collections if isinstance(c, PathCollection)]
        _, leaders = adjust_text(texts, objects=nodes[0] if nodes else None, ax=ax, iter_lim=iterations,
                                 target_x=[x for x, _ in targets], target_y=[y for _, y in targets],
                                 expand=(1.1, 1.3), ensure_inside_axes=True, min_arrow_len=0,
                                 arrowprops={"arrowstyle": "-", "color": "#777777", "lw": 0.6,
                                             "shrinkA": 1, "shrinkB": 4})
        leaders = list(leaders or [])
        for line in leaders:
            line.set_gid("leader")
        _settle(ax, texts, targets, leaders if len(leaders) == len(texts) else [None] * len(texts), renderer)
    return fig


def _discs(ax) -> list[tuple[float, float, float]]:
    """The node discs drawn on ``ax``: (x, y, radius) in pixels."""
    from matplotlib.collections import PathCollection

    discs = []
    for c in ax.collections:
        if isinstance(c, PathCollection) and len(c.get_offsets()):
            sizes = c.get_sizes()
            for k, xy in enumerate(ax.transData.transform(c.get_offsets())):
                area = sizes[k % len(sizes)] if len(sizes) else 36.0   # marker area in points^2
                discs.append((float(xy[0]), float(xy[1]), math.sqrt(area) / 2 * ax.figure.dpi / 72))
    return discs


def _segments(ax) -> list[tuple[float, float, float, float]]:
    """The edge lines drawn on ``ax`` (straight from node to node, in pixels), from their gids."""
    out = []
    for p in ax.patches:
        gid = p.get_gid() or ""
        if gid.startswith("edge@"):
            x1, y1, x2, y2 = (float(v) for v in gid[5:].split(","))
            (a, b), (c, d) = ax.transData.transform([(x1, y1), (x2, y2)])
            out.append((float(a), float(b), float(c), float(d)))
    return out


def _crosses(box, seg) -> bool:
    """Whether the segment ``seg`` (x1, y1, x2, y2; pixels) passes through the box, by clipping
    it to the box (Liang-Barsky)."""
    x1, y1, x2, y2 = seg
    dx, dy = x2 - x1, y2 - y1
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x1 - box.x0), (dx, box.x1 - x1), (-dy, y1 - box.y0), (dy, box.y1 - y1)):
        if p == 0:
            if q < 0:
                return False
        else:
            t = q / p
            if p < 0:
                lo = max(lo, t)
            else:
                hi = min(hi, t)
            if lo > hi:
                return False
    return True


def _segments_cross(a, b) -> bool:
    """Whether two segments (x1, y1, x2, y2) cross (proper intersection, by orientation signs)."""
    def side(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    p1, p2, q1, q2 = a[:2], a[2:], b[:2], b[2:]
    d1, d2, d3, d4 = side(q1, q2, p1), side(q1, q2, p2), side(p1, p2, q1), side(p1, p2, q2)
    return d1 * d2 < 0 and d3 * d4 < 0


def _covers(box, disc) -> bool:
    """Whether a text's pixel box reaches into a node's disc (x, y, radius)."""
    x, y, r = disc
    return (max(box.x0 - x, 0, x - box.x1) ** 2 + max(box.y0 - y, 0, y - box.y1) ** 2) < r * r


def _others(discs, own_px) -> list:
    """The discs of every node but the one at ``own_px`` (pixels; None: every node)."""
    return [d for d in discs if own_px is None or math.hypot(d[0] - own_px[0], d[1] - own_px[1]) > 0.5]


def _away(segments, own_px) -> list:
    """The edge lines that do not end at the node at ``own_px`` (pixels): those a name's leader line
    should not cross (its own node's edges meet it at the node)."""
    return [s for s in segments if min(math.hypot(s[0] - own_px[0], s[1] - own_px[1]),
                                       math.hypot(s[2] - own_px[0], s[3] - own_px[1])) > 0.5]


def _leader_crosses(box, own_px, away) -> bool:
    """Whether the line from the name's box centre to its node crosses one of the edge lines ``away``."""
    centre = ((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2)
    return any(_segments_cross((*centre, own_px[0], own_px[1]), seg) for seg in away)


#: pixels a name keeps clear of other nodes and names: names that touch read as one label
LABEL_GAP_PX = 8.0


def _settle(ax, texts, targets, leaders, renderer, gaps=(6, 14, 24, 36, 50), directions: int = 24) -> None:
    """For each name that still covers (or comes within ``LABEL_GAP_PX`` of) another node, another
    name or an edge line: the first spot
    around its own node (``directions`` angles at each of ``gaps`` pixels beyond the disc, nearest
    first) where it covers none of them; failing that, the first where it covers no node and no
    name; the leader line moves with it. A name with no such spot stays where it is."""
    discs, segments = _discs(ax), _segments(ax)
    for text, target, leader in zip(texts, targets, leaders):
        own = ax.transData.transform(target)
        foreign = _others(discs, own)
        boxes = [u.get_window_extent(renderer) for u in ax.texts
                 if u is not text and u.get_visible() and u.get_text().strip()]

        away = _away(segments, own)

        def free(edges: bool) -> bool:
            box = text.get_window_extent(renderer).padded(LABEL_GAP_PX)   # a gap, so each name reads as its node's
            if any(_covers(box, d) for d in foreign) or any(box.overlaps(b) for b in boxes):
                return False
            return not edges or not (any(_crosses(box, seg) for seg in segments) or _leader_crosses(box, own, away))

        if free(edges=True):
            continue
        radius = next((d[2] for d in discs if math.hypot(d[0] - own[0], d[1] - own[1]) <= 0.5), 0.0)
        before = text.get_position(), text.get_horizontalalignment(), text.get_verticalalignment()
        text.set_horizontalalignment("center")
        text.set_verticalalignment("center")
        size = text.get_window_extent(renderer)
        spots = [(own[0] + math.cos(a) * (radius + gap + size.width / 2),
                  own[1] + math.sin(a) * (radius + gap + size.height / 2))
                 for gap in gaps for a in (2 * math.pi * i / directions for i in range(directions))]

        def fits(centre, edges: bool) -> bool:
            text.set_position(ax.transData.inverted().transform(centre))
            return free(edges)

        # nearest spot clear of everything first, then nearest clear of nodes and names; any() stops there
        if any(fits(centre, edges) for edges in (True, False) for centre in spots):
            if leader is not None:
                leader.set_positions(text.get_position(), target)
        else:
            text.set_position(before[0])
            text.set_horizontalalignment(before[1])
            text.set_verticalalignment(before[2])


def node_gid(xy) -> str:
    """The gid a node's name carries: where its node is (data coordinates), so that
    ``label_collisions`` can tell a name's own node from the others."""
    return f"node@{float(xy[0])!r},{float(xy[1])!r}"


def edge_gid(start, end) -> str:
    """The gid an edge line carries: where it runs (data coordinates of its two nodes)."""
    return "edge@{!r},{!r},{!r},{!r}".format(*map(float, (*start, *end)))


def _node_of(text) -> Optional[tuple[float, float]]:
    """Where the node a name belongs to is (data coordinates), from its gid; None for other text."""
    gid = text.get_gid() or ""
    if not gid.startswith("node@"):
        return None
    x, y = gid[5:].split(",")
    return float(x), float(y)


def label_collisions(fig) -> dict[str, int]:
    """Count, over every panel of ``fig``, the node names whose box overlaps another name and those
    whose box covers the disc of a node other than their own (a speaker's name is written on its
    own node on purpose). What the figure notices of notebook 03 print, so "no name covers
    another node" is measured, not asserted."""
    renderer = _renderer(fig)
    names_overlap = names_on_nodes = names_on_edges = leaders_on_edges = 0
    for ax in fig.axes:
        texts = [t for t in ax.texts if t.get_visible() and t.get_text().strip()]
        boxes = [t.get_window_extent(renderer) for t in texts]
        discs, segments = _discs(ax), _segments(ax)
        names_overlap += sum(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
        for t, b in zip(texts, boxes):
            own = _node_of(t)
            foreign = _others(discs, ax.transData.transform(own) if own is not None else None)
            names_on_nodes += any(_covers(b, d) for d in foreign)
            if own is not None and own != tuple(t.get_position()):     # a speaker's name sits on its own spokes
                at = ax.transData.transform(own)
                names_on_edges += any(_crosses(b, seg) for seg in segments)
                leaders_on_edges += _leader_crosses(b, at, _away(segments, at))
    return {"names": sum(len([t for t in ax.texts if t.get_text().strip()]) for ax in fig.axes),
            "names overlapping a name": int(names_overlap), "names on a node": int(names_on_nodes),
            "names across an edge": int(names_on_edges), "leader lines across an edge": int(leaders_on_edges)}
