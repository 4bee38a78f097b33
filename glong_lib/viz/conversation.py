"""Pictures of a conversation itself: its sessions on the conversation clock."""

from __future__ import annotations

import matplotlib.pyplot as plt

from ..schema import Conversation

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


def plot_session_timeline(conv: Conversation, ax=None):
    """Each session as a dot at its start (days since the conversation began), gaps labelled,
    assumed gaps (unknown in the data) drawn hollow."""
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 2.2))
    days = [s.start_s / DAY_S for s in conv.sessions]
    ax.plot(days, [0] * len(days), color="0.7", zorder=1)
    for i, (s, d) in enumerate(zip(conv.sessions, days)):
        ax.scatter([d], [0], s=30 + 6 * len(s.turns), zorder=2,
                   facecolor="tab:blue" if s.gap_known else "white", edgecolor="tab:blue")
        ax.annotate(f"S{s.index}\n{len(s.turns)} turns", (d, 0), xytext=(0, 10 + 22 * (i % 2)),
                    textcoords="offset points", ha="center", fontsize=8)  # alternate so close sessions stay legible
    for prev, s, d0, d1 in zip(conv.sessions, conv.sessions[1:], days, days[1:]):
        gap = s.start_s - prev.start_s
        label = format_gap(gap) + ("" if s.gap_known else " (assumed)")
        ax.annotate(label, ((d0 + d1) / 2, 0), xytext=(0, -16), textcoords="offset points", ha="center",
                    fontsize=7, color="0.3")
    ax.set_yticks([])
    ax.set_ylim(-1, 1.6)
    ax.set_xlabel("days since the conversation began (conversation clock)")
    ax.set_title(f"{conv.id}: {' & '.join(conv.speakers)}", fontsize=10)
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    return ax
