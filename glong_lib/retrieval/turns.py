"""Baselines over raw turns: dense (MiniLM + faiss) and BM25."""

from __future__ import annotations

import re
from typing import Callable, Iterable, Optional, Sequence

import numpy as np

from ..config import PAPER_RETRIEVAL
from ..errors import DataError
from ..models import load_encoder
from ..schema import Turn
from ..text import turn_line
from ..vectors import unit_vectors
from .results import RetrievalResult

# --------------------------------------------------------------------------- turn baselines

def _turn_result(turns: list[Turn], order: Iterable[int], scores: Iterable[float]) -> RetrievalResult:
    picked = [turns[i] for i in order]
    return RetrievalResult([], [], [float(s) for s in scores], [t.id for t in picked],
                           [turn_line(t) for t in picked])


def _turn_k(query: str, k: int, n_turns: int) -> int:
    """Check a turn-baseline query and clamp ``k`` to the number of turns indexed."""
    if not isinstance(query, str) or not query.strip():
        raise DataError("query is empty")
    return min(int(k), n_turns)


class DenseTurnRetriever:
    """Dense retrieval over raw turns: MiniLM embeddings in a faiss inner-product index (cosine)."""

    def __init__(self, turns: Sequence[Turn], encoder=None, k: int = PAPER_RETRIEVAL.k):
        import faiss

        if encoder is None:
            encoder = load_encoder()
        self.turns, self.encoder, self.k = list(turns), encoder, int(k)
        vecs = unit_vectors(encoder, [turn_line(t) for t in self.turns]) if self.turns else None
        self.index = faiss.IndexFlatIP(vecs.shape[1]) if vecs is not None else None
        if vecs is not None:
            self.index.add(np.ascontiguousarray(vecs, dtype=np.float32))

    def retrieve(self, query: str, now_s: float = 0.0, k: Optional[int] = None) -> RetrievalResult:
        k = _turn_k(query, self.k if k is None else k, len(self.turns))
        if k == 0:
            return RetrievalResult([], [], [], [], [])
        qvec = unit_vectors(self.encoder, [query]).astype(np.float32)
        scores, idx = self.index.search(qvec, k)
        return _turn_result(self.turns, idx[0].tolist(), scores[0].tolist())


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def bm25_tokens(text: str) -> list[str]:
    """Lower-cased word tokens for BM25 (no stemming, no stop list: BM25's IDF discounts
    frequent words).

    >>> bm25_tokens("Leo's puppy, Biscuit!")
    ["leo's", 'puppy', 'biscuit']
    """
    return _WORD.findall(text.lower())


class BM25TurnRetriever:
    """BM25 (Okapi, ``rank_bm25``) over raw turns."""

    def __init__(self, turns: Sequence[Turn], k: int = PAPER_RETRIEVAL.k,
                 tokenizer: Callable[[str], list[str]] = bm25_tokens):
        from rank_bm25 import BM25Okapi

        self.turns, self.k, self.tokenizer = list(turns), int(k), tokenizer
        docs = [tokenizer(turn_line(t)) or ["<empty>"] for t in self.turns]
        self.bm25 = BM25Okapi(docs) if docs else None

    def retrieve(self, query: str, now_s: float = 0.0, k: Optional[int] = None) -> RetrievalResult:
        k = _turn_k(query, self.k if k is None else k, len(self.turns))
        if k == 0:
            return RetrievalResult([], [], [], [], [])
        scores = self.bm25.get_scores(self.tokenizer(query))
        order = np.argsort(-scores, kind="stable")[:k]
        return _turn_result(self.turns, order.tolist(), scores[order].tolist())



