"""Figures for the end-to-end evaluation: scores per session, tokens and cost per method, and
our relative changes beside the paper's."""

from __future__ import annotations

from typing import Optional, Sequence

import matplotlib.pyplot as plt
import numpy as np

from ..evaluation.msc import PAPER_TABLE1_MSC, PAPER_TABLE6_MSC

_LABELS = {"b1": "BLEU-1", "b2": "BLEU-2", "b3": "BLEU-3", "b4": "BLEU-4", "rougeL": "ROUGE-L",
           "nlg_b2": "BLEU-2", "nlg_b3": "BLEU-3", "nlg_rougeL": "ROUGE-L"}
_MARKERS = ("o", "s", "^", "v", "D")


def plot_per_session(per_session: Sequence[dict], metrics: Sequence[str] = ("b2", "rougeL"),
                     methods: Optional[Sequence[str]] = None, title: str = "Scores per session",
                     jitter: float = 0.0, highlight: Optional[str] = None):
    """One panel per metric: each method's score (x100) against the evaluated session.

    ``jitter`` spreads the methods' points sideways over that width (in sessions), so that tied
    scores stay visible; ``highlight`` draws one method thick, with stars, on top of the others.
    """
    methods = list(methods or dict.fromkeys(r["method"] for r in per_session))
    sessions = sorted({r["session"] for r in per_session})
    fig, axes = plt.subplots(1, len(metrics), figsize=(5.2 * len(metrics), 3.6), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        for i, method in enumerate(methods):
            rows = sorted((r for r in per_session if r["method"] == method), key=lambda r: r["session"])
            shift = jitter * (i / max(1, len(methods) - 1) - 0.5)
            if method == highlight:
                style = {"linestyle": "-", "linewidth": 2.8, "marker": "*", "markersize": 12, "zorder": 10}
            elif highlight is not None:
                style = {"linestyle": "--", "linewidth": 1.2, "marker": _MARKERS[i % len(_MARKERS)],
                         "markersize": 5, "alpha": 0.85}
            else:
                style = {"linestyle": "-" if method.startswith("G-Long") else "--", "marker": "o"}
            ax.plot([r["session"] + shift for r in rows], [r[metric] for r in rows], label=method,
                    color=plt.cm.tab10(i % 10), **style)
        ax.set_xlabel("session")
        ax.set_ylabel(f"{_LABELS.get(metric, metric)} (x100)")
        ax.set_xticks(sessions)
        if jitter and sessions:
            ax.set_xlim(sessions[0] - jitter / 2 - 0.35, sessions[-1] + jitter / 2 + 0.35)
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=9 if highlight else 8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_tokens(tokens: Sequence[dict], title: str = "Prompt tokens per reply and cost"):
    """Prompt tokens per reply (bars) with the paper-style cost per 1K conversations written on each."""
    names = [r["method"] for r in tokens]
    values = [r["prompt tokens / reply"] for r in tokens]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(names)), 3.8))
    colors = ["tab:green" if n.startswith("G-Long") else "tab:gray" for n in names]
    bars = ax.bar(range(len(names)), values, color=colors)
    for bar, row in zip(bars, tokens):
        ax.annotate(f"${row['Total cost ($/1K conv.)']:.3g}/1K", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=25, ha="right")
    ax.set_ylabel("prompt tokens per reply")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def relative_to_baseline(summary: Sequence[dict], baseline: str = "Long context",
                         metrics: Sequence[str] = ("b2", "rougeL")) -> dict[str, dict[str, float]]:
    """Each method's relative change against ``baseline`` per metric (0.1 = 10% higher).

    >>> relative_to_baseline([{"method": "A", "b2": 4.0}, {"method": "B", "b2": 5.0}], "A", ["b2"])
    {'A': {'b2': 0.0}, 'B': {'b2': 0.25}}
    """
    base = next(r for r in summary if r["method"] == baseline)
    return {r["method"]: {m: (r[m] / base[m] - 1.0) if base[m] else float("nan") for m in metrics} for r in summary}


def plot_vs_paper(summary: Sequence[dict], tokens: Sequence[dict], baseline: str = "Long context",
                  method: str = "G-Long", title: Optional[str] = None):
    """G-Long against long context, ours beside the paper's (MSC): relative BLEU-2, ROUGE-L and
    prompt tokens. Relative changes compare across scales where raw scores cannot."""
    ours = relative_to_baseline(summary, baseline)[method]
    tok = {r["method"]: r["Main (tokens / conv.)"] for r in tokens}
    ours_tokens = tok[method] / tok[baseline] - 1.0
    t1, t6 = PAPER_TABLE1_MSC, PAPER_TABLE6_MSC  # averages: index 12 = B-2, 14 = R-L; main tokens first
    paper_vals = [t1[method][12] / t1[baseline][12] - 1, t1[method][14] / t1[baseline][14] - 1,
                  t6[method][0] / t6[baseline][0] - 1]
    our_vals = [ours["b2"], ours["rougeL"], ours_tokens]
    x = np.arange(3)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.bar(x - 0.18, [100 * v for v in paper_vals], 0.36, label="paper (gpt-4o-mini, MSC, N=500)", color="tab:blue")
    ax.bar(x + 0.18, [100 * v for v in our_vals], 0.36, label="ours", color="tab:orange")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(["BLEU-2", "ROUGE-L", "prompt tokens"])
    ax.set_ylabel(f"{method} vs {baseline} (%)")
    ax.set_title(title or f"{method} relative to {baseline}")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


__all__ = ["plot_per_session", "plot_tokens", "relative_to_baseline", "plot_vs_paper"]
