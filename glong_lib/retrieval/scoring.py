"""The paper's Eq. 4 rerank score and its recency term."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..config import PAPER_RETRIEVAL
from ..errors import DataError

#: The paper's recency rate (Appendix B, per second), the default of the pure functions below; its
#: home is ``config.PAPER_RETRIEVAL`` (notebook 04 reads it there, as ``PAPER_RETRIEVAL.lam``).
PAPER_LAMBDA = PAPER_RETRIEVAL.lam


# --------------------------------------------------------------------------- Eq. 4

def recency(delta_s, lam: float = PAPER_LAMBDA):
    """The recency term of Eq. 4, ``exp(-lam * delta_s)``; ``delta_s`` in seconds.

    A negative gap (an edge touched "after" the query time) is treated as 0, so recency <= 1.

    >>> import math
    >>> round(recency(7 * 24 * 3600), 4)   # one week: barely decayed at the paper's lambda
    0.9413
    >>> round(recency(math.log(2) / 1e-7), 3)   # the half-life: about 80 days
    0.5
    """
    delta = np.maximum(np.asarray(delta_s, dtype=float), 0.0)
    out = np.exp(-float(lam) * delta)
    return float(out) if out.ndim == 0 else out


def rerank_score(semantic, weight, delta_s, betas: Sequence[float] = PAPER_RETRIEVAL.betas, lam: float = PAPER_LAMBDA):
    """Eq. 4: ``S_final = b1 * S_sem + b2 * w + b3 * exp(-lam * delta_s)``.

    Works on scalars or NumPy arrays (element-wise). Worked example with the paper's settings:
    a triple with cosine 0.62 to the query, salience weight 0.8, last accessed 30 days ago::

        0.5 * 0.62 + 0.3 * 0.8 + 0.2 * exp(-1e-7 * 2_592_000)
      = 0.31       + 0.24      + 0.2 * 0.7717
      = 0.7043

    >>> round(rerank_score(0.62, 0.8, 30 * 86400), 4)
    0.7043
    >>> round(rerank_score(0.62, 0.8, 0.0), 4)        # just accessed: recency term is the full 0.2
    0.75
    >>> rerank_score(np.array([1.0, 0.0]), np.array([1.0, 0.0]), np.array([0.0, 0.0])).tolist()
    [1.0, 0.2]
    """
    if len(betas) != 3:
        raise DataError(f"betas should be three numbers (semantic, weight, recency), got {len(betas)}")
    b1, b2, b3 = (float(b) for b in betas)
    sem = np.asarray(semantic, dtype=float)
    w = np.asarray(weight, dtype=float)
    out = b1 * sem + b2 * w + b3 * np.asarray(recency(delta_s, lam))
    return float(out) if out.ndim == 0 else out



