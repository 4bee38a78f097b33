"""A stand-in sentence encoder for tests and scale benchmarks: fast, deterministic, no model."""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np


class HashEncoder:
    """A stand-in for the sentence encoder with no semantics: each distinct string gets a fixed
    random unit vector seeded by its SHA-256. For tests and scale benchmarks only (two different
    strings are almost orthogonal, so nothing merges and nearest_entities finds exact matches).

    >>> enc = HashEncoder(dim=8)
    >>> v = enc.encode(["a", "b", "a"], normalize_embeddings=True)
    >>> v.shape, bool(np.allclose(v[0], v[2])), round(float(np.linalg.norm(v[1])), 6)
    ((3, 8), True, 1.0)
    """

    def __init__(self, dim: int = 64):
        self.dim = int(dim)

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    def encode(self, texts: Sequence[str], normalize_embeddings: bool = True, **_: Any) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(str(t).encode("utf-8")).digest()[:8], "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim)
        if normalize_embeddings:
            out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out
