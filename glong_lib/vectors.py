"""Sentence-encoder output as unit vectors: the one place the memory and the retrievers turn texts
into the vectors they compare by inner product (which is then the cosine similarity)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def unit_vectors(encoder, texts: Sequence[str], **kwargs: Any) -> np.ndarray:
    """``encoder``'s vectors for ``texts``, one float32 row of length 1 per text (C-contiguous, as
    faiss wants); an all-zero row stays zero, and no texts give a ``(0, 1)`` array. Rows are divided
    by their norm here again because an encoder may ignore ``normalize_embeddings``.

    >>> class Raw:  # an encoder that does not normalise
    ...     def encode(self, texts, normalize_embeddings=True):
    ...         return np.array([[3.0, 4.0], [0.0, 0.0]])[:len(texts)]
    >>> unit_vectors(Raw(), ["a", "b"]).astype(float).round(3).tolist(), unit_vectors(Raw(), []).shape
    ([[0.6, 0.8], [0.0, 0.0]], (0, 1))
    """
    if not len(texts):
        return np.zeros((0, 1), dtype=np.float32)
    vecs = np.asarray(encoder.encode(list(texts), normalize_embeddings=True, **kwargs), dtype=np.float32)
    vecs = vecs.reshape(len(texts), -1)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return np.ascontiguousarray(vecs / np.where(norms == 0, 1.0, norms), dtype=np.float32)
