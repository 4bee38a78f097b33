"""Helpers for pictures of a conversation on its clock (notebook 00 draws the session timeline)."""

from __future__ import annotations

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
