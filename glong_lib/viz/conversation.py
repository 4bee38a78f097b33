"""Pictures of a conversation on its clock: notebook 00 draws its session timeline with ``plot_session_timeline``."""

from __future__ import annotations

from typing import Optional, Sequence

from ..schema import TURN_SPACING_S

DAY_S = 86400.0


def format_gap(seconds: float) -> str:
    """A gap in the largest sensible unit.

    >>> [format_gap(s) for s in (5400, 3 * 86400, 45 * 86400)]
    ['1.5 h', '3.0 d', '1.5 mo']
    """
    if seconds < DAY_S:
        return f"{seconds / 3600:.1f} h"
    if seconds < 30 * DAY_S:
        return f"{seconds / DAY_S:.1f} d"
    return f"{seconds / (30 * DAY_S):.1f} mo"


def session_gaps_s(conversation) -> list[float]:
    """The gap the clock put before each session after the first: its start, less the previous start
    and the previous session's turns (``TURN_SPACING_S`` apart). Read back from ``start_s``, so it is the
    gap actually used, the assumed default included."""
    s = conversation.sessions
    return [b.start_s - a.start_s - len(a.turns) * TURN_SPACING_S for a, b in zip(s, s[1:])]


def plot_session_timeline(conversations, span_days: Optional[float] = None, titles: Optional[Sequence[str]] = None,
                          close: float = 0.09, width: float = 8.0, label_size: float = 8):
    """One row per conversation: each session a dot at its start on the conversation clock (days), solid
    where the data gives the gap before it, hollow where the gap is assumed; above it ``S<i>`` and its
    turns; below the axis each gap, centred between its two sessions.

    Two dots closer than ``close`` of the axis have their session labels pulled apart (the earlier to the
    left, the later to the right), and the gap between them is written one row lower as ``S<i>-S<j>: gap``,
    with a short line up to the midpoint, so it cannot be read as either dot's. ``span_days`` puts every
    row on one scale; ``titles`` replaces the default ``id: speakers``; ``label_size`` is the font size of
    the session labels and the legend (a close pair is pushed apart in proportion). Returns the figure (with a legend).
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    convs = list(conversations)
    fig, axes = plt.subplots(len(convs), 1, figsize=(width, 0.5 + 2.25 * len(convs)), squeeze=False)
    for row, (ax, c) in enumerate(zip(axes[:, 0], convs)):
        days = [s.start_s / DAY_S for s in c.sessions]
        span = span_days or max(days) or 1.0
        near = [False] + [b - a < close * span for a, b in zip(days, days[1:])]  # near[i]: dot i is near dot i-1
        ax.axhline(0, color="0.7", zorder=1)
        for i, (s, d) in enumerate(zip(c.sessions, days)):
            side = 1 if near[i] else -1 if i + 1 < len(days) and near[i + 1] else 0
            ax.scatter([d], [0], s=90, zorder=2, color="tab:blue", facecolor="tab:blue" if s.gap_known else "white")
            ax.annotate(f"S{s.index}\n{len(s.turns)} turns", (d, 0), xytext=(label_size / 2 * side, 12),
                        textcoords="offset points", ha={1: "left", -1: "right", 0: "center"}[side],
                        fontsize=label_size)
        for prev, s, gap_s, d0, d1, tight in zip(c.sessions, c.sessions[1:], session_gaps_s(c), days, days[1:],
                                                 near[1:]):
            gap = format_gap(gap_s) + ("" if s.gap_known else " (assumed)")
            if tight:  # one row lower, named, with a line up to the midpoint
                ax.annotate(f"S{prev.index}-S{s.index}: {gap}", ((d0 + d1) / 2, 0), xytext=(0, -30),
                            textcoords="offset points", ha="center", va="top", fontsize=9, color="0.15",
                            arrowprops={"arrowstyle": "-", "color": "0.5", "lw": 0.8, "shrinkA": 0, "shrinkB": 5})
            else:
                ax.annotate(gap, ((d0 + d1) / 2, 0), xytext=(0, -8), textcoords="offset points", ha="center",
                            va="top", fontsize=9, color="0.15")
        ax.set_xlim(-0.08 * span, 1.08 * span)  # room for S1's label; the clock itself starts at 0
        ax.set_xticks([t for t in ax.get_xticks() if 0 <= t <= 1.08 * span])
        ax.spines["bottom"].set_bounds(0, 1.08 * span)
        ax.set_ylim(-1.6, 2)
        ax.set_yticks([])
        ax.set_xlabel("days since the conversation began (conversation clock)")
        ax.set_title(titles[row] if titles else f"{c.id}: {' & '.join(c.speakers)}", fontsize=10)
        for spine in ("left", "right", "top"):
            ax.spines[spine].set_visible(False)
    key = [Line2D([], [], marker="o", ls="", color="tab:blue",
                  label="gap before it given by the data (or first session)"),
           Line2D([], [], marker="o", ls="", mfc="white", color="tab:blue", label="gap before it unknown, so assumed")]
    fig.legend(handles=key, loc="lower center", ncol=2, fontsize=label_size, frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig
