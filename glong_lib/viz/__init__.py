"""Figures, one module per pipeline stage (``viz.extraction``, ``viz.salience``, ``viz.graph``,
``viz.retrieval``, ``viz.evaluation``), plus ``save_figure`` shared by all of them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union


def save_figure(fig, name: str, folder: Optional[Union[str, Path]] = None, dpi: int = 120) -> Optional[Path]:
    """Save ``fig`` as ``folder/name.png`` (folder created) and return the path; no folder, no file.

    ``$GLONG_FIGURES_DIR``, when set, replaces ``folder``: test runs of the committed notebooks
    use it so that they never overwrite the committed ``figures/``.

    The figure gets an opaque white background first: Jupyter's inline backend makes figures
    transparent, and black labels on a transparent figure vanish in a dark theme. Every notebook
    figure passes through here before ``plt.show()``, so the shown and the saved image are both opaque.
    """
    fig.patch.set_facecolor("white")
    fig.patch.set_alpha(1.0)
    folder = os.environ.get("GLONG_FIGURES_DIR") or folder
    if folder is None:
        return None
    path = Path(folder) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return path
