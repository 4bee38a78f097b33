"""Figures for triple extraction: the LoRA loss curve, zero-shot vs fine-tuned scores, and the
relation confusion matrix. Each function returns the matplotlib figure (save it with
``glong_lib.viz.save_figure``)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Optional, Sequence

#: The bars of ``plot_scores``: (label, key in an ``evaluate_extraction`` report).
SCORE_BARS = (("P exact", "precision exact"), ("R exact", "recall exact"), ("F1 exact", "f1 exact"),
              ("F1 norm.", "f1 norm"), ("F1 partial", "f1 partial"), ("fact detect. F1", "fact detection f1"),
              ("relation acc.", "relation accuracy"), ("unparseable", "unparseable rate"))


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


def plot_scores(reports: dict[str, dict[str, Any]], title: str = "Triple extraction on the gold turns"):
    """Grouped bars of the main measures, one colour per model (e.g. zero-shot, fine-tuned)."""
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(reports)
    x = np.arange(len(SCORE_BARS))
    width = 0.8 / max(1, len(names))
    fig, ax = plt.subplots(figsize=(8, 3.5))
    for i, name in enumerate(names):
        values = [float(reports[name].get(key, 0.0)) for _, key in SCORE_BARS]
        bars = ax.bar(x + (i - (len(names) - 1) / 2) * width, values, width, label=name)
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
    ax.set_xticks(x, [label for label, _ in SCORE_BARS])
    ax.set_ylim(0, 1.1)
    ax.set_title(title)
    ax.legend()
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
    predicted) are outlined, with a legend, so a right cell never looks like a wrong one."""
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
        ax.add_patch(Rectangle((i - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="tab:orange", linewidth=2.2,
                               clip_on=False))
    fig.legend(handles=[Patch(facecolor="none", edgecolor="tab:orange", linewidth=2.2,
                              label="gold = predicted (right relation); any other cell is a confusion")],
               loc="lower center", fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.35 / fig.get_size_inches()[1], 1, 1))
    return fig


__all__ = ["plot_loss_curve", "plot_scores", "confusion_counts", "plot_confusions", "SCORE_BARS"]
