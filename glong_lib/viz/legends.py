"""Legend helpers for figures drawn elsewhere in ``viz`` (kept apart from the drawing code itself)."""

from __future__ import annotations

from typing import Sequence

from matplotlib.lines import Line2D

from glong_lib.viz.graph import CURRENT_COLOUR, edge_width


def legend_below(ax, weights: Sequence[float] = (0, 1), ncol: int = 3, fontsize: int = 9,
                 weight_label: str = "expanded fact of weight {w} (width)"):
    """Move ``ax``'s legend under the axes, where it hides no node, and add one blue line per Eq. 3
    weight in ``weights``, as wide as an expanded fact of that weight is drawn
    (:func:`viz.graph.edge_width`), labelled ``weight_label.format(w=w)`` (a notebook may say it
    in its own words). Returns the new legend.

    >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    >>> _, ax = plt.subplots(); _ = ax.plot([0, 1], label="anchor"); _ = ax.legend()
    >>> [t.get_text() for t in legend_below(ax).get_texts()]
    ['anchor', 'expanded fact of weight 0 (width)', 'expanded fact of weight 1 (width)']
    >>> [t.get_text() for t in legend_below(ax, weights=(1,), weight_label="w = {w}").get_texts()][-1]
    'w = 1'
    >>> plt.close("all")
    """
    old = ax.get_legend()
    handles = list(getattr(old, "legend_handles", None) or getattr(old, "legendHandles", [])) if old else []
    labels = [t.get_text() for t in old.get_texts()] if old else []
    for w in weights:
        handles.append(Line2D([], [], color=CURRENT_COLOUR, lw=edge_width(w)))
        labels.append(weight_label.format(w=w))
    return ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol,
                     fontsize=fontsize, frameon=False)
