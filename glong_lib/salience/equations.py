"""Eq. 1-3 of the paper as pure functions, and the token bookkeeping around them.

* Eq. 1  ``A[i, j] = mean_h Attn_h(x_i, y_j)``                     -> :func:`head_average`
* Eq. 2  ``S(t_k) = sum_{i in tokens(t_k)} sum_j A[i, j]``         -> :func:`triple_saliency`
* Eq. 3  ``w_k = S(t_k) / max_k' S(t_k')``                          -> :func:`normalise_by_max`

:func:`token_spans` maps each triple's characters to its tokens through a fast tokenizer's
offsets; :func:`position_saliency` is Eq. 2 over any set of token positions (the decoder-only
source reads a triple's words where they were said, which need not be one contiguous span),
with the per-token mean as an explicit, documented alternative to the paper's sum;
:func:`layer_saliency` is Eq. 2 under every layer of a reading, and :func:`normalise_by_group`
Eq. 3 inside each of several groups at once.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch

from ..errors import DataError

AGGREGATES = ("sum", "mean")


def head_average(cross_attn: torch.Tensor) -> torch.Tensor:
    """Eq. 1: average one decoder layer's cross-attention over its heads.

    ``cross_attn`` has the shape transformers returns for one example, ``(H, M, N)`` (heads,
    summary tokens, input tokens), optionally with a leading batch dimension of 1. The result
    ``A`` is indexed as in the paper, ``A[i, j]`` = input token ``i``, summary token ``j``: shape
    ``(N, M)``.

    Two heads, one summary token, three input tokens:

    >>> attn = torch.tensor([[[0.6, 0.2, 0.2]], [[0.2, 0.2, 0.6]]])
    >>> head_average(attn)
    tensor([[0.4000],
            [0.2000],
            [0.4000]])
    """
    attn = torch.as_tensor(cross_attn, dtype=torch.float32)
    if attn.dim() == 4 and attn.shape[0] == 1:
        attn = attn[0]
    if attn.dim() != 3:
        raise DataError(f"cross-attention should be (heads, summary, input), got shape {tuple(attn.shape)}")
    return attn.mean(dim=0).transpose(0, 1)


def triple_saliency(A: torch.Tensor, spans: Sequence[tuple[int, int]]) -> torch.Tensor:
    """Eq. 2: raw saliency of each triple, the attention mass on its tokens summed over the summary.

    ``A`` is ``(N, M)`` from :func:`head_average`; ``spans[k] = (start, end)`` are the half-open
    input-token positions of triple ``k``. An empty span (a triple cut off by truncation) scores 0.

    Input tokens 0-1 are triple 0, tokens 2-4 triple 1; two summary tokens:

    >>> A = torch.tensor([[0.5, 0.1], [0.2, 0.1], [0.1, 0.4], [0.1, 0.2], [0.1, 0.2]])
    >>> triple_saliency(A, [(0, 2), (2, 5)])
    tensor([0.9000, 1.1000])
    """
    A = torch.as_tensor(A, dtype=torch.float32)
    if A.dim() != 2:
        raise DataError(f"A should be (input, summary), got shape {tuple(A.shape)}")
    n = A.shape[0]
    per_token = A.sum(dim=1)  # sum over summary tokens j
    scores = []
    for k, (start, end) in enumerate(spans):
        if not 0 <= start <= end <= n:
            raise DataError(f"span {k} ({start}, {end}) is outside the {n} input tokens")
        scores.append(per_token[start:end].sum())
    return torch.stack(scores) if scores else torch.zeros(0)


def normalise_by_max(scores: torch.Tensor, maximum: Optional[float] = None) -> torch.Tensor:
    """Eq. 3: divide raw scores by their maximum, so the top triple weighs 1 and all lie in (0, 1].

    ``maximum`` overrides the divisor: the dialogue-wide maximum of the reference code.

    >>> normalise_by_max(torch.tensor([0.9, 1.1, 0.55]))
    tensor([0.8182, 1.0000, 0.5000])
    >>> normalise_by_max(torch.tensor([0.9, 1.1]), maximum=2.2)
    tensor([0.4091, 0.5000])
    """
    scores = torch.as_tensor(scores, dtype=torch.float32)
    if scores.numel() == 0:
        return scores
    top = float(scores.max()) if maximum is None else float(maximum)
    if not top > 0:
        raise DataError(f"cannot normalise: the maximum raw score is {top} (must be > 0)")
    return scores / top


def token_spans(offsets: Sequence[tuple[int, int]], char_ranges: Sequence[tuple[int, int]],
                text: str) -> list[tuple[int, int]]:
    """Map character ranges to half-open token ranges using a fast tokenizer's offset mapping.

    A token belongs to the triple that holds its first non-space character, so tokenizers that
    glue a leading space (or "▁") onto a word still land in the right triple; special tokens
    (offsets ``(0, 0)``) belong to none. Triples with no token (truncated away) get ``(n, n)``.

    >>> token_spans([(0, 4), (5, 8), (8, 10), (10, 11), (11, 15)], [(0, 10), (11, 16)], "Maya likes Tea .")
    [(0, 3), (4, 5)]
    """
    owner = []
    for start, end in offsets:
        while start < end and text[start].isspace():
            start += 1
        owner.append(next((k for k, (a, b) in enumerate(char_ranges) if a <= start < b), None)
                     if end > start else None)
    n = len(offsets)
    spans = []
    for k in range(len(char_ranges)):
        positions = [i for i, o in enumerate(owner) if o == k]
        spans.append((positions[0], positions[-1] + 1) if positions else (n, n))
    return spans


def position_saliency(A: torch.Tensor, positions: Sequence[Sequence[int]], aggregate: str = "sum") -> torch.Tensor:
    """Eq. 2 over arbitrary token positions: ``aggregate="sum"`` is the paper (mass on the triple's
    tokens, summed over summary rows); ``"mean"`` divides by the number of positions, so a triple
    is not heavier just for having more tokens. No positions scores 0.

    >>> A = torch.tensor([[0.5, 0.1], [0.2, 0.1], [0.1, 0.4], [0.1, 0.2], [0.1, 0.2]])
    >>> position_saliency(A, [[0, 1], [2, 4]])
    tensor([0.9000, 0.8000])
    >>> position_saliency(A, [[0, 1], [2, 4]], aggregate="mean")
    tensor([0.4500, 0.4000])
    """
    if aggregate not in AGGREGATES:
        raise DataError(f"unknown aggregate '{aggregate}' (choose from {', '.join(AGGREGATES)})")
    A = torch.as_tensor(A, dtype=torch.float32)
    per_token = A.sum(dim=1)
    out = []
    for k, pos in enumerate(positions):
        pos = list(pos)
        if any(not 0 <= p < len(per_token) for p in pos):
            raise DataError(f"triple {k} has a token position outside the {len(per_token)} input tokens")
        total = per_token[pos].sum() if pos else torch.tensor(0.0)
        out.append(total / len(pos) if aggregate == "mean" and pos else total)
    return torch.stack(out) if out else torch.zeros(0)


def layer_saliency(layers: np.ndarray, positions: Sequence[Sequence[int]], aggregate: str = "sum") -> np.ndarray:
    """Eq. 2 (:func:`position_saliency`) under every layer at once: ``layers`` holds one Eq. 1
    matrix per layer, ``(layers, input tokens, summary tokens)``; a layer that was not read is NaN
    and gives a NaN row. Returns ``(layers, triples)``. Eq. 2 only needs each input token's mass
    summed over the summary rows, so ``(layers, input tokens, 1)`` of such sums gives the same
    scores (what a cached reading keeps).

    >>> A = np.array([[[0.5, 0.1], [0.2, 0.1], [0.1, 0.4]], [[np.nan] * 2] * 3])
    >>> layer_saliency(A, [[0, 1], [2]]).round(3)
    array([[0.9, 0.5],
           [nan, nan]])
    >>> layer_saliency(A[:1].sum(axis=2, keepdims=True), [[0, 1], [2]], "mean").round(3)
    array([[0.45, 0.5 ]])
    """
    layers = np.asarray(layers, dtype=np.float32)
    out = np.full((len(layers), len(positions)), np.nan)
    for k, A in enumerate(layers):
        if not np.isnan(A).any():
            out[k] = position_saliency(torch.from_numpy(A), positions, aggregate).numpy()
    return out


def normalise_by_group(scores: Sequence[float], groups: Sequence) -> np.ndarray:
    """Eq. 3 inside each group (a session, a dialogue): every score divided by its group's maximum
    (:func:`normalise_by_max`). A group whose maximum is not positive (no triple drew any attention)
    weighs each of its triples 1, as the scorers do.

    >>> normalise_by_group([0.5, 1.0, 0.2, 0.0, 0.0], ["a", "a", "b", "c", "c"])
    array([0.5, 1. , 1. , 1. , 1. ])
    """
    scores, groups = np.asarray(scores, dtype=np.float64), np.asarray(groups)
    out = np.ones_like(scores)
    for g in dict.fromkeys(groups.tolist()):
        m = groups == g
        if scores[m].max() > 0:
            out[m] = normalise_by_max(torch.from_numpy(scores[m])).numpy()
    return out
