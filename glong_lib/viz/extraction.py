"""Figures for triple extraction: the LoRA loss curve, zero-shot vs fine-tuned scores, and the
relation confusion matrix. Each function returns the matplotlib figure (save it with
``glong_lib.viz.save_figure``)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Optional, Sequence

#: The bars of ``plot_scores``: (label, key in an ``evaluate_extraction`` report).
#: Every bar is a score where higher is better (the unparseable rate is left to tables).
SCORE_BARS = (("precision\n(exact)", "precision exact"), ("recall\n(exact)", "recall exact"),
              ("F1\n(exact)", "f1 exact"), ("F1\n(normalised)", "f1 norm"), ("F1\n(partial)", "f1 partial"),
              ("fact\ndetection F1", "fact detection f1"), ("relation\naccuracy", "relation accuracy"))


def plot_loss_curve(log_history: Sequence[dict[str, Any]], title: str = "LoRA fine-tuning"):
    """Training loss per logged step and dev loss at each evaluation (from Trainer's log)."""
    import matplotlib.pyplot as plt

    train = [(r["step"], r["loss"]) for r in log_history if "loss" in r and "step" in r]
    dev = [(r["step"], r["eval_loss"]) for r in log_history if "eval_loss" in r]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    if train:
        ax.plot(*zip(*train), label="train loss (answer tokens)", color="tab:blue")
    if dev:
        ax.plot(*zip(*dev), "o--", label="dev loss", color="tab:orange")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def undefined_score(report: dict[str, Any], key: str) -> bool:
    """Whether measure ``key`` of an ``evaluate_extraction`` report has nothing to score: relation
    accuracy when no gold triple is aligned with a prediction (the report stores 0.0 there), or a
    value given as None or NaN. Tables and charts should show such a measure as "n/a", not 0.

    >>> undefined_score({"relation accuracy": 0.0, "aligned": 0}, "relation accuracy")
    True
    >>> undefined_score({"relation accuracy": 0.0, "aligned": 3}, "relation accuracy"), undefined_score({}, "f1 exact")
    (False, False)
    """
    if key == "relation accuracy" and report.get("aligned", 1) == 0:
        return True
    value = report.get(key, 0.0)
    return value is None or (isinstance(value, float) and math.isnan(value))


def plot_scores(reports: dict[str, dict[str, Any]], title: str = "Triple extraction on the gold turns",
                bars: Sequence[tuple[str, str]] = SCORE_BARS,
                intervals: Optional[dict[str, dict[str, tuple[float, float]]]] = None, label_zeros: bool = True,
                ymax: float = 1.1, decimals: int = 2):
    """Grouped bars of the main measures, one colour per model (e.g. zero-shot, fine-tuned).
    ``bars`` chooses the measures ((label, report key) pairs, default :data:`SCORE_BARS`);
    ``intervals`` (model -> report key -> (low, high), e.g. bootstrap 95% intervals) draws a
    whisker on each bar that has one (NaN or zero width: none), with the value written above it. A measure with
    nothing to score (:func:`undefined_score`: relation accuracy with no aligned triple) gets no bar
    and the label "n/a" instead of a value. ``label_zeros=False`` leaves bars at 0 unlabelled, so a
    chart with many zero scores does not carry a row of "0" along its baseline; ``ymax`` caps the
    y axis lower when every whisker is short, so small bars stay visible; ``decimals`` sets the labels'
    precision, so a chart can show the values as the prose beside it quotes them."""
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(reports)
    x = np.arange(len(bars))
    width = 0.8 / max(1, len(names))
    fig, ax = plt.subplots(figsize=(9, 3.8))
    for i, name in enumerate(names):
        missing = [undefined_score(reports[name], key) for _, key in bars]
        values = [0.0 if na else float(reports[name].get(key, 0.0)) for na, (_, key) in zip(missing, bars)]
        xs = x + (i - (len(names) - 1) / 2) * width
        bars_drawn = ax.bar(xs, values, width, label=name)
        given = (intervals or {}).get(name)
        if not given:
            ax.bar_label(bars_drawn, labels=["n/a" if na else f"{v:.{decimals}f}" for v, na in zip(values, missing)],
                         fontsize=8.5, padding=1)
            continue
        for xi, v, na, (_, key) in zip(xs, values, missing, bars):
            lo, hi = given.get(key, (float("nan"), float("nan")))
            top = v
            if not na and np.isfinite(lo) and np.isfinite(hi) and hi > lo:  # a zero-width one: no stray tick
                ax.errorbar([xi], [v], yerr=[[max(0.0, v - lo)], [max(0.0, hi - v)]], fmt="none", ecolor="black",
                            elinewidth=0.9, capsize=2)
                top = max(v, hi)
            label = "n/a" if na else "0" if v == 0 else f"{v:.{decimals}f}"  # "0": narrow, neighbours clear
            if v != 0 or na or label_zeros:
                ax.text(xi, top + 0.015, label, ha="center", va="bottom", fontsize=8.5)
    ax.set_xticks(x, [label for label, _ in bars], fontsize=9)
    ax.set_ylim(0, ymax)
    ax.set_xlabel("measure" if label_zeros else "measure (no bar, no label: a score of 0)")
    ax.set_ylabel("score (0 to 1)")
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=9)
    fig.tight_layout()
    return fig


def confusion_counts(pairs: Sequence[tuple[str, str]], top: int = 10) -> tuple[list[str], list[str], list[list[int]]]:
    """Rows: the ``top`` most frequent gold relations; columns: the relations predicted for them
    (the same names first, then the other predictions, most frequent first); cells: counts.

    >>> confusion_counts([("a", "a"), ("a", "b"), ("c", "b")], top=2)
    (['a', 'c'], ['a', 'c', 'b'], [[1, 0, 1], [0, 0, 1]])
    """
    rows = [g for g, _ in Counter(g for g, _ in pairs).most_common(top)]
    kept = [(g, p) for g, p in pairs if g in rows]
    others = [p for p, _ in Counter(p for _, p in kept).most_common() if p not in rows]
    cols = rows + others[:top]
    counts = Counter(kept)
    return rows, cols, [[counts[(g, p)] for p in cols] for g in rows]


def plot_confusions(pairs: Sequence[tuple[str, str]], top: int = 10, title: Optional[str] = None,
                    mark_right: bool = True):
    """Heat map of gold relation (rows) against predicted relation (columns) for aligned triples
    (``evaluation.extraction.align_relations``); the diagonal block is what the model got right.
    With ``mark_right`` (the default) a colorbar gives the counts and the diagonal cells (gold =
    predicted) that hold a count are outlined, with a legend, so a right cell never looks like a
    wrong one (and an outline always marks right triples)."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.patches import Patch, Rectangle
    from matplotlib.ticker import MaxNLocator

    rows, cols, cells = confusion_counts(pairs, top)
    fig, ax = plt.subplots(figsize=(max(5, 0.45 * len(cols) + 2), max(3, 0.4 * len(rows) + 1.5)))
    if not rows:
        ax.text(0.5, 0.5, "no aligned triples", ha="center", va="center")
        ax.set_axis_off()
        return fig
    data = np.array(cells)
    image = ax.imshow(data, cmap="Blues", vmin=0)
    ax.set_xticks(range(len(cols)), cols, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    for i in range(len(rows)):
        for j in range(len(cols)):
            if data[i, j]:
                ax.text(j, i, str(data[i, j]), ha="center", va="center", fontsize=7,
                        color="white" if data[i, j] > data.max() / 2 else "black")
    ax.set_xlabel("predicted relation")
    ax.set_ylabel("gold relation")
    ax.set_title(title or "Relations of aligned triples (fine-tuned)")
    if not mark_right:
        fig.tight_layout()
        return fig
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03)
    bar.set_label("aligned triples", fontsize=8)
    bar.ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    bar.ax.tick_params(labelsize=7)
    for i in range(len(rows)):  # columns start with the rows' own names: cell (i, i) is the right relation
        if data[i, i]:  # outlined only where some triple got it right: an empty diagonal cell holds no one
            ax.add_patch(Rectangle((i - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="tab:orange", linewidth=2.2,
                                   clip_on=False))
    fig.legend(handles=[Patch(facecolor="none", edgecolor="tab:orange", linewidth=2.2,
                              label="gold = predicted (right relation); any other cell is a confusion")],
               loc="lower center", fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.35 / fig.get_size_inches()[1], 1, 1))
    return fig


__all__ = ["plot_loss_curve", "plot_scores", "undefined_score", "confusion_counts", "plot_confusions",
           "SCORE_BARS"]
