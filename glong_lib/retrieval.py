"""Associative retrieval (paper section 3.4), the baselines it is compared with, and the evidence
evaluation (Recall@k, MRR) that compares them.

G-Long retrieves in a coarse-to-fine pipeline over the graph memory:

1. **anchors**: the ``anchors`` (5) entity nodes most similar to the query (faiss, cosine);
2. **expansion**: every edge within ``hops`` (1) of an anchor, in- and out-edges alike;
3. **semantic ranking**: the ``semantic_top_n`` (5) candidates most similar to the query,
   ``S_sem = max(0, cos(E(query), E("s r o")))``;
4. **rerank** by Eq. 4, ``S = b1*S_sem + b2*w + b3*exp(-lam*(now - last_access))``, keep ``k`` (3);
5. the returned edges get ``last_access_s = now`` on the conversation clock.

Every stage is recorded in a :class:`RetrievalTrace` for teaching and debugging.

Baselines share ``.retrieve(query, now_s, k) -> RetrievalResult``: dense retrieval over raw turns
(:class:`DenseTurnRetriever`, MiniLM + faiss), BM25 over raw turns (:class:`BM25TurnRetriever`,
rank_bm25), and Personalized PageRank over the same graph (:class:`PPRRetriever`, HippoRAG-style).
Every result carries the source turn id of each item, which is what :func:`evaluate_evidence`
scores against a question's evidence turns.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np

from .errors import DataError
from .schema import QA, Conversation, MemoryEdge, Triple, Turn

#: The paper's hyperparameters (Appendix B).
PAPER_ANCHORS = 5
PAPER_HOPS = 1
PAPER_SEMANTIC_TOP_N = 5
PAPER_BETAS = (0.5, 0.3, 0.2)
PAPER_LAMBDA = 1e-7  # per second
PAPER_K = 3

#: The paper's LongMemEval retrieval numbers, for context beside ours (a different data set:
#: LME sessions, LLM-built memories and gpt-4o-mini; not comparable number for number).
#: Figure 4 (N = 500), read off the plot (about +-0.01): Recall@K per method.
PAPER_LME_FIGURE4 = {
    "G-Long": {1: 0.33, 3: 0.62, 5: 0.72, 10: 0.83, 15: 0.90, 20: 0.93},
    "MemoryBank": {1: 0.24, 3: 0.44, 5: 0.57, 10: 0.73, 15: 0.81, 20: 0.86},
    "LD-Agent": {1: 0.23, 3: 0.44, 5: 0.55, 10: 0.67, 15: 0.735, 20: 0.765},
}
#: Table 4 (N = 500) Recall@3/5, Table 5 (N = 50 subset) Recall@1/3/5, Table 7 (hops) Recall@3/5.
PAPER_LME_TABLE4 = {"MemoryBank": {3: 0.4422, 5: 0.5693}, "LD-Agent": {3: 0.4462, 5: 0.5519},
                    "G-Long": {3: 0.6286, 5: 0.7220}}
PAPER_LME_TABLE5 = {"MemoryBank": {1: 0.40, 3: 0.62, 5: 0.77}, "LD-Agent": {1: 0.47, 3: 0.68, 5: 0.80},
                    "FraCom": {1: 0.19, 3: 0.40, 5: 0.42}, "HippoRAG": {1: 0.12, 3: 0.36, 5: 0.46},
                    "HippoRAG + G-Long triplets": {1: 0.17, 3: 0.66, 5: 0.86},
                    "G-Long": {1: 0.71, 3: 0.90, 5: 0.92}}
PAPER_LME_TABLE7 = {"G-Long (L = 1)": {3: 0.6286, 5: 0.7220}, "G-Long (L = 2)": {3: 0.5314, 5: 0.6042}}


# --------------------------------------------------------------------------- Eq. 4

def recency(delta_s, lam: float = PAPER_LAMBDA):
    """The recency term of Eq. 4, ``exp(-lam * delta_s)``; ``delta_s`` in seconds.

    A negative gap (an edge touched "after" the query time) is treated as 0, so recency <= 1.

    >>> round(recency(7 * 24 * 3600), 4)   # one week: barely decayed at the paper's lambda
    0.9413
    >>> round(recency(math.log(2) / 1e-7), 3)   # the half-life: about 80 days
    0.5
    """
    delta = np.maximum(np.asarray(delta_s, dtype=float), 0.0)
    out = np.exp(-float(lam) * delta)
    return float(out) if out.ndim == 0 else out


def rerank_score(semantic, weight, delta_s, betas: Sequence[float] = PAPER_BETAS, lam: float = PAPER_LAMBDA):
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


# --------------------------------------------------------------------------- results and trace

@dataclass
class RerankTerms:
    """The three weighted terms of Eq. 4 for one candidate (they sum to ``score``)."""

    eid: int
    text: str
    semantic: float  # S_sem, clamped at 0
    weight: float
    delta_s: float
    recency: float
    score: float
    betas: tuple = PAPER_BETAS

    @property
    def parts(self) -> tuple[float, float, float]:
        b1, b2, b3 = self.betas
        return b1 * self.semantic, b2 * self.weight, b3 * self.recency


@dataclass
class RetrievalTrace:
    """Every stage of one associative retrieval, best first where there is an order."""

    query: str
    now_s: float
    params: dict[str, Any]
    anchors: list[tuple[str, float]] = field(default_factory=list)   # (entity, cosine)
    candidates: list[int] = field(default_factory=list)               # eids after expansion
    semantic: list[tuple[int, float]] = field(default_factory=list)   # (eid, S_sem) all candidates, sorted
    pool: list[int] = field(default_factory=list)                     # the semantic top-N
    rerank: list[RerankTerms] = field(default_factory=list)           # pool, sorted by Eq. 4
    final: list[int] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)           # time per stage

    def sizes(self) -> dict[str, int]:
        return {"anchors": len(self.anchors), "candidates": len(self.candidates),
                "pool": len(self.pool), "final": len(self.final)}

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["anchors"] = [[e, round(s, 4)] for e, s in self.anchors]
        d["semantic"] = [[e, round(s, 4)] for e, s in self.semantic]
        return d


@dataclass
class RetrievalResult:
    """What any retriever returns, best first. ``edges``/``triples`` are filled by graph
    retrievers; ``turn_ids`` and ``texts`` by every retriever (the source turn of each item)."""

    edges: list[int]
    triples: list[MemoryEdge]
    scores: list[float]
    turn_ids: list[Optional[str]]
    texts: list[str]
    trace: Optional[RetrievalTrace] = None

    def __len__(self) -> int:
        return len(self.texts)

    def rows(self) -> list[dict[str, Any]]:
        return [{"rank": i + 1, "score": round(s, 4), "turn": t or "", "text": x}
                for i, (s, t, x) in enumerate(zip(self.scores, self.turn_ids, self.texts))]


def _graph_result(memory, eids: list[int], scores: list[float], trace=None) -> RetrievalResult:
    edges = [memory.edge(e) for e in eids]
    return RetrievalResult(list(eids), edges, [float(s) for s in scores], [e.turn_id for e in edges],
                           [e.text() for e in edges], trace)


def _normalise(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.maximum(norms, 1e-12)


def _encode(encoder, texts: list[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    return _normalise(encoder.encode(list(texts), normalize_embeddings=True))


class CachingEncoder:
    """Wraps an encoder so each distinct text is encoded once (evaluation builds one memory per
    question session, and those memories share most of their entities, edges and turns).

    >>> class Count:
    ...     n = 0
    ...     def encode(self, texts, normalize_embeddings=True):
    ...         Count.n += len(texts)
    ...         return np.ones((len(texts), 2))
    >>> enc = CachingEncoder(Count())
    >>> enc.encode(["a", "b"]).shape, enc.encode(["b", "a", "c"]).shape, Count.n
    ((2, 2), (3, 2), 3)
    """

    def __init__(self, encoder, batch_size: int = 64):
        self.encoder, self.batch_size = encoder, batch_size
        self.vectors: dict[str, np.ndarray] = {}

    def get_sentence_embedding_dimension(self):
        return self.encoder.get_sentence_embedding_dimension()

    def prime(self, texts: Iterable[str]) -> None:
        """Encode ``texts`` now, in large batches (one call per text is far slower on a CPU)."""
        self.encode(list(texts))

    def encode(self, texts, normalize_embeddings: bool = True, **kwargs) -> np.ndarray:
        texts = [str(t) for t in texts]
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            extra = {"batch_size": self.batch_size, **kwargs} if kwargs or hasattr(self.encoder, "tokenizer") else {}
            vecs = _normalise(self.encoder.encode(missing, normalize_embeddings=True, **extra))
            self.vectors.update(zip(missing, vecs))
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self.vectors[t] for t in texts])


class EdgeEmbeddingCache:
    """Embeddings of edge texts keyed by edge id, computed once (in batches) and then reused.

    Rows live in one growing matrix so a query's candidates are gathered with one fancy index.
    """

    def __init__(self, memory, batch_size: int = 256):
        self.memory = memory
        self.batch_size = batch_size
        self.row: dict[int, int] = {}
        self.matrix: Optional[np.ndarray] = None
        self.encoded = 0  # how many texts this cache has encoded (for tests and stats)

    def _grow(self, vectors: np.ndarray) -> None:
        self.matrix = vectors if self.matrix is None else np.vstack([self.matrix, vectors])

    def ensure(self, eids: Iterable[int]) -> None:
        missing = [e for e in dict.fromkeys(eids) if e not in self.row]
        for start in range(0, len(missing), self.batch_size):
            chunk = missing[start:start + self.batch_size]
            vecs = _encode(self.memory.encoder, [self.memory.edge(e).text() for e in chunk])
            base = 0 if self.matrix is None else self.matrix.shape[0]
            self._grow(vecs.astype(np.float32))
            self.row.update({e: base + i for i, e in enumerate(chunk)})
            self.encoded += len(chunk)

    def get(self, eids: Sequence[int]) -> np.ndarray:
        self.ensure(eids)
        if not eids:
            return np.zeros((0, 0 if self.matrix is None else self.matrix.shape[1]), dtype=np.float32)
        return self.matrix[[self.row[e] for e in eids]]


# --------------------------------------------------------------------------- G-Long

class AssociativeRetriever:
    """G-Long's associative retriever over a ``GraphMemory`` (every paper hyperparameter a parameter).

    ``current_only`` skips edges a memory with the ``update`` policy marked superseded (the paper
    stores everything, so the default keeps them). ``update_access`` writes ``last_access_s = now_s``
    on the returned edges, on the conversation clock (the reference code used the wall clock, which
    makes the recency term a constant).
    """

    def __init__(self, memory, anchors: int = PAPER_ANCHORS, hops: int = PAPER_HOPS,
                 semantic_top_n: int = PAPER_SEMANTIC_TOP_N, betas: Sequence[float] = PAPER_BETAS,
                 lam: float = PAPER_LAMBDA, k: int = PAPER_K, update_access: bool = True,
                 current_only: bool = False):
        for name, value in (("anchors", anchors), ("semantic_top_n", semantic_top_n), ("k", k)):
            if int(value) < 1:
                raise DataError(f"{name} should be at least 1, got {value}")
        if int(hops) < 1:
            raise DataError(f"hops should be 1 or more, got {hops}")
        if len(betas) != 3:
            raise DataError(f"betas should be three numbers, got {len(betas)}")
        self.memory = memory
        self.anchors, self.hops, self.semantic_top_n = int(anchors), int(hops), int(semantic_top_n)
        self.betas, self.lam, self.k = tuple(float(b) for b in betas), float(lam), int(k)
        self.update_access, self.current_only = update_access, current_only
        self.cache = EdgeEmbeddingCache(memory)

    def params(self) -> dict[str, Any]:
        return {"anchors": self.anchors, "hops": self.hops, "semantic_top_n": self.semantic_top_n,
                "betas": list(self.betas), "lam": self.lam, "k": self.k}

    def warm(self) -> int:
        """Embed every edge now (so the first queries are as fast as the rest); returns the count."""
        self.cache.ensure(self.memory.edge_ids())
        return len(self.cache.row)

    def retrieve(self, query: str, now_s: float, k: Optional[int] = None) -> RetrievalResult:
        if not isinstance(query, str) or not query.strip():
            raise DataError("query is empty")
        k = self.k if k is None else int(k)
        trace = RetrievalTrace(query, float(now_s), {**self.params(), "k": k})
        clock = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            trace.seconds[stage] = now - clock
            clock = now

        qvec = _encode(self.memory.encoder, [query])[0]
        lap("encode")
        trace.anchors = [(e, float(s)) for e, s in self.memory.nearest_entities(qvec, k=self.anchors)]
        lap("anchors")
        trace.candidates = list(self.memory.incident_edges([e for e, _ in trace.anchors], hops=self.hops,
                                                           current_only=self.current_only))
        lap("expand")
        self._semantic(trace, qvec)
        lap("semantic")
        self._rerank(trace)
        trace.final = [t.eid for t in trace.rerank[:k]]
        lap("rerank")
        if self.update_access and trace.final:
            self.memory.touch(trace.final, float(now_s))
        return _graph_result(self.memory, trace.final, [t.score for t in trace.rerank[:k]], trace)

    def _semantic(self, trace: RetrievalTrace, qvec: np.ndarray) -> None:
        """Coarse stage: S_sem = max(0, cosine) for every candidate; keep the top N."""
        if not trace.candidates:
            return
        sims = np.maximum(self.cache.get(trace.candidates) @ qvec, 0.0)
        order = np.argsort(-sims, kind="stable")  # ties keep the expansion order
        trace.semantic = [(trace.candidates[i], float(sims[i])) for i in order]
        trace.pool = [e for e, _ in trace.semantic[:self.semantic_top_n]]

    def _rerank(self, trace: RetrievalTrace) -> None:
        """Fine stage: Eq. 4 on the pool; stable sort, so ties keep the semantic order."""
        sem = dict(trace.semantic)
        edges = [self.memory.edge(e) for e in trace.pool]
        deltas = np.array([trace.now_s - e.last_access_s for e in edges], dtype=float)
        sems = np.array([sem[e] for e in trace.pool], dtype=float)
        weights = np.array([e.weight for e in edges], dtype=float)
        scores = np.atleast_1d(rerank_score(sems, weights, deltas, self.betas, self.lam))
        recs = np.atleast_1d(recency(deltas, self.lam))
        terms = [RerankTerms(eid, e.text(), float(s), float(w), float(d), float(r), float(sc), self.betas)
                 for eid, e, s, w, d, r, sc in zip(trace.pool, edges, sems, weights, deltas, recs, scores)]
        trace.rerank = sorted(terms, key=lambda t: -t.score)


# --------------------------------------------------------------------------- PPR (HippoRAG-style)

class PPRRetriever:
    """Personalized PageRank over the memory graph, seeded on the query's anchor entities.

    As in HippoRAG: find the ``anchors`` entities most similar to the query, run PageRank with the
    restart distribution on them (weighted by their cosine, clamped at a small positive floor)
    over the graph taken as undirected (parallel edges add up), then rank edges by the PPR mass of
    their two endpoints. Edges between the same two nodes tie on mass; the tie is broken by the
    edge's cosine to the query so the order is not arbitrary.
    """

    def __init__(self, memory, anchors: int = PAPER_ANCHORS, damping: float = 0.5,
                 k: int = PAPER_K, current_only: bool = False):
        self.memory, self.anchors, self.damping, self.k = memory, int(anchors), float(damping), int(k)
        self.current_only = current_only
        self.cache = EdgeEmbeddingCache(memory)
        self._graph = None
        self._graph_size = -1

    def _undirected(self):
        import networkx as nx

        eids = self.memory.edge_ids(current_only=self.current_only)
        if self._graph is None or self._graph_size != len(eids):
            g = nx.Graph()
            g.add_nodes_from(self.memory.graph.nodes)
            ends = [(e.subject, e.object) for e in map(self.memory.edge, eids)]
            for u, v in ends:
                g.add_edge(u, v, weight=g.get_edge_data(u, v, {"weight": 0.0})["weight"] + 1.0)
            self._graph, self._graph_size, self._eids, self._ends = g, len(eids), eids, ends
        return self._graph

    def retrieve(self, query: str, now_s: float = 0.0, k: Optional[int] = None) -> RetrievalResult:
        import networkx as nx

        if not isinstance(query, str) or not query.strip():
            raise DataError("query is empty")
        k = self.k if k is None else int(k)
        g = self._undirected()
        if not self._eids:
            return RetrievalResult([], [], [], [], [])
        qvec = _encode(self.memory.encoder, [query])[0]
        anchors = self.memory.nearest_entities(qvec, k=self.anchors)
        seeds = {e: max(float(s), 1e-3) for e, s in anchors if e in g}
        mass = nx.pagerank(g, alpha=self.damping, personalization=seeds or None, weight="weight")
        ppr = np.array([mass.get(u, 0.0) + mass.get(v, 0.0) for u, v in self._ends])
        cos = self.cache.get(self._eids) @ qvec
        order = np.lexsort((-cos, -ppr))[:k]  # primary key: PPR mass; tie-break: cosine
        return _graph_result(self.memory, [self._eids[i] for i in order], [float(ppr[i]) for i in order])


# --------------------------------------------------------------------------- turn baselines

def turn_text(turn: Turn) -> str:
    """How a raw turn is indexed by the turn baselines: ``"Speaker: text"``."""
    return f"{turn.speaker}: {turn.text}"


def _turn_result(turns: list[Turn], order: Iterable[int], scores: Iterable[float]) -> RetrievalResult:
    picked = [turns[i] for i in order]
    return RetrievalResult([], [], [float(s) for s in scores], [t.id for t in picked],
                           [turn_text(t) for t in picked])


def _turn_k(query: str, k: int, n_turns: int) -> int:
    """Check a turn-baseline query and clamp ``k`` to the number of turns indexed."""
    if not isinstance(query, str) or not query.strip():
        raise DataError("query is empty")
    return min(int(k), n_turns)


class DenseTurnRetriever:
    """Dense retrieval over raw turns: MiniLM embeddings in a faiss inner-product index (cosine)."""

    def __init__(self, turns: Sequence[Turn], encoder=None, k: int = PAPER_K):
        import faiss

        if encoder is None:
            from .models import load_encoder

            encoder = load_encoder()
        self.turns, self.encoder, self.k = list(turns), encoder, int(k)
        vecs = _encode(encoder, [turn_text(t) for t in self.turns]) if self.turns else None
        self.index = faiss.IndexFlatIP(vecs.shape[1]) if vecs is not None else None
        if vecs is not None:
            self.index.add(np.ascontiguousarray(vecs, dtype=np.float32))

    def retrieve(self, query: str, now_s: float = 0.0, k: Optional[int] = None) -> RetrievalResult:
        k = _turn_k(query, self.k if k is None else k, len(self.turns))
        if k == 0:
            return RetrievalResult([], [], [], [], [])
        qvec = _encode(self.encoder, [query]).astype(np.float32)
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

    def __init__(self, turns: Sequence[Turn], k: int = PAPER_K, tokenizer: Callable[[str], list[str]] = bm25_tokens):
        from rank_bm25 import BM25Okapi

        self.turns, self.k, self.tokenizer = list(turns), int(k), tokenizer
        docs = [tokenizer(turn_text(t)) or ["<empty>"] for t in self.turns]
        self.bm25 = BM25Okapi(docs) if docs else None

    def retrieve(self, query: str, now_s: float = 0.0, k: Optional[int] = None) -> RetrievalResult:
        k = _turn_k(query, self.k if k is None else k, len(self.turns))
        if k == 0:
            return RetrievalResult([], [], [], [], [])
        scores = self.bm25.get_scores(self.tokenizer(query))
        order = np.argsort(-scores, kind="stable")[:k]
        return _turn_result(self.turns, order.tolist(), scores[order].tolist())


# --------------------------------------------------------------------------- evidence metrics

def unique_turns(turn_ids: Sequence[Optional[str]]) -> list[Optional[str]]:
    """Collapse repeated source turns to their first rank (an item with no turn keeps its rank).

    >>> unique_turns(["S1:2", "S1:2", None, "S2:1", "S1:2"])
    ['S1:2', None, 'S2:1']
    """
    seen, out = set(), []
    for t in turn_ids:
        if t is None:
            out.append(None)
        elif t not in seen:
            seen.add(t)
            out.append(t)
    return out


def recall_at_k(ranked_turns: Sequence[Optional[str]], evidence: Sequence[str], k: int) -> float:
    """Fraction of the evidence turns found among the first ``k`` (collapsed) ranks.

    >>> recall_at_k(["S1:1", "S1:3", "S2:4"], ["S2:4", "S3:1"], 3)
    0.5
    >>> recall_at_k(["S1:1", "S1:3", "S2:4"], ["S2:4"], 2)
    0.0
    """
    gold = set(evidence)
    if not gold:
        raise DataError("a question with no evidence turns cannot be scored")
    return len(gold & set(ranked_turns[:k])) / len(gold)


def reciprocal_rank(ranked_turns: Sequence[Optional[str]], evidence: Sequence[str]) -> float:
    """1 / rank of the first evidence turn (0 when none was retrieved).

    >>> reciprocal_rank(["S1:1", "S1:3", "S2:4"], ["S2:4", "S1:3"])
    0.5
    """
    gold = set(evidence)
    for rank, t in enumerate(ranked_turns, start=1):
        if t in gold:
            return 1.0 / rank
    return 0.0


@dataclass
class EvidenceEvaluation:
    """Per-method Recall@k and MRR, the per-question rows behind them, and what was left out."""

    metrics: dict[str, dict[str, float]]
    rows: list[dict[str, Any]]
    ks: tuple[int, ...]
    excluded: dict[str, int] = field(default_factory=dict)

    def table(self) -> list[dict[str, Any]]:
        return [{"method": m, **{k: round(v, 3) if isinstance(v, float) else v for k, v in d.items()}}
                for m, d in self.metrics.items()]

    def recall_curve(self, method: str) -> tuple[list[int], list[float]]:
        return list(self.ks), [self.metrics[method][f"Recall@{k}"] for k in self.ks]


def question_time(conv: Conversation, q: QA) -> float:
    """When a question is asked on the conversation clock: the start of ``asked_in_session``, or
    (LoCoMo, asked after the conversation) just after its last turn."""
    if q.asked_in_session is not None:
        for s in conv.sessions:
            if s.index == q.asked_in_session:
                return s.start_s
    last = conv.sessions[-1].turns[-1]
    return last.time_s + 30.0


def turns_before(conv: Conversation, session: Optional[int]) -> list[Turn]:
    """The turns of the sessions before ``session`` (all of them when ``session`` is None)."""
    return [t for s in conv.sessions if session is None or s.index < session for t in s.turns]


RetrieverSpec = Union[Any, dict, Callable[[Conversation, Optional[int]], Any]]


def _resolve(spec: RetrieverSpec, conv: Conversation, session: Optional[int], cache: dict, name: str):
    """A retriever for one (conversation, session): a shared object, a per-conversation dict, or a
    factory ``f(conversation, asked_in_session)`` whose results are cached."""
    if hasattr(spec, "retrieve"):
        return spec
    if isinstance(spec, dict):
        if conv.id not in spec:
            raise DataError(f"method '{name}' has no retriever for conversation '{conv.id}'")
        return spec[conv.id]
    key = (name, conv.id, session)
    if key not in cache:
        cache[key] = spec(conv, session)
    return cache[key]


def evaluate_evidence(retrievers: dict[str, RetrieverSpec], questions: Sequence[QA],
                      conversations: Sequence[Conversation], ks: Sequence[int] = (1, 3, 5, 10),
                      progress: bool = True) -> EvidenceEvaluation:
    """Recall@k (fraction of evidence turns in the first k distinct source turns) and MRR, for every
    method on the same questions. Each method retrieves ``max(ks)`` items; retrieved triples count
    as their source turn, and repeats of one turn collapse to its first rank, so a triple retriever
    can show fewer than ``max(ks)`` distinct turns (a disadvantage it carries, not hides).
    Questions whose conversation is missing raise; those with no evidence are skipped and counted.
    """
    from tqdm.auto import tqdm

    if not retrievers:
        raise DataError("no retrieval methods to evaluate")
    ks = tuple(sorted({int(k) for k in ks}))
    if not ks or ks[0] < 1:
        raise DataError(f"k values should be positive integers, got {ks}")
    by_id = {c.id: c for c in conversations}
    depth, cache, rows = max(ks), {}, []
    excluded = {"no evidence": 0}
    for q in tqdm(questions, desc="questions", disable=not progress):
        conv = by_id.get(q.conversation)
        if conv is None:
            raise DataError(f"question '{q.id}' refers to unknown conversation '{q.conversation}'")
        if not q.evidence:
            excluded["no evidence"] += 1
            continue
        now = question_time(conv, q)
        for name, spec in retrievers.items():
            retriever = _resolve(spec, conv, q.asked_in_session, cache, name)
            ranked = unique_turns(retriever.retrieve(q.question, now_s=now, k=depth).turn_ids)
            row = {"method": name, "question": q.id, "category": q.category, "rr": reciprocal_rank(ranked, q.evidence)}
            row.update({f"Recall@{k}": recall_at_k(ranked, q.evidence, k) for k in ks})
            rows.append(row)
    metrics = {}
    for name in retrievers:
        mine = [r for r in rows if r["method"] == name]
        n = max(1, len(mine))
        metrics[name] = {f"Recall@{k}": sum(r[f"Recall@{k}"] for r in mine) / n for k in ks}
        metrics[name]["MRR"] = sum(r["rr"] for r in mine) / n
        metrics[name]["questions"] = len(mine)
    return EvidenceEvaluation(metrics, rows, ks, {k: v for k, v in excluded.items() if v})


# --------------------------------------------------------------------------- memories for evaluation

#: Retrieval methods ``make_retrievers`` knows, in display order.
METHODS = ("glong", "dense", "bm25", "ppr")


def gold_triples(conv: Conversation, before_session: Optional[int] = None) -> list[Triple]:
    """The gold triples of the turns before ``before_session`` (the shipped samples have them)."""
    return [tr for t in turns_before(conv, before_session) for tr in t.triples]


def memory_before(conv: Conversation, session: Optional[int], encoder, triples: Optional[Sequence[Triple]] = None):
    """``memory.build_memory`` over the sessions before ``session`` (all when None), from
    ``triples`` or, when None, the conversation's gold triples."""
    from .memory import build_memory

    sessions = None if session is None else [s.index for s in conv.sessions if s.index < session]
    return build_memory(conv, triples, encoder=encoder, sessions=sessions)


def make_retrievers(methods: Sequence[str], memory_for: Callable[[Conversation, Optional[int]], Any],
                    encoder, depth: int = PAPER_K, glong_params: Optional[dict] = None) -> dict[str, Callable]:
    """Factories ``f(conversation, asked_in_session) -> retriever`` for :func:`evaluate_evidence`.

    ``memory_for(conversation, session)`` builds the graph memory (of what was said before
    ``session``); the graph methods of one (conversation, session) share one memory.
    To score ranks up to ``depth``, G-Long's final K is
    ``depth`` and its semantic pool ``max(paper's 5, depth)`` (the paper's pool of 5 cannot rank 10).
    Evaluation retrievers do not update access times, so every question sees the same memory.
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise DataError(f"unknown retrieval method(s) {', '.join(unknown)} (choose from {', '.join(METHODS)})")
    memories: dict = {}

    def memory(conv, session):
        if (conv.id, session) not in memories:
            memories[(conv.id, session)] = memory_for(conv, session)
        return memories[(conv.id, session)]

    params = {"semantic_top_n": max(PAPER_SEMANTIC_TOP_N, depth), **(glong_params or {})}
    params.update(k=depth, update_access=False)
    factories = {
        "glong": lambda c, s: AssociativeRetriever(memory(c, s), **params),
        "ppr": lambda c, s: PPRRetriever(memory(c, s), k=depth),
        "dense": lambda c, s: DenseTurnRetriever(turns_before(c, s), encoder, k=depth),
        "bm25": lambda c, s: BM25TurnRetriever(turns_before(c, s), k=depth),
    }
    return {m: factories[m] for m in methods}


def _primed(encoder, questions: Sequence[QA], conversations: Sequence[Conversation],
            triples: Sequence[Triple] = ()):
    """A caching wrapper around ``encoder`` that already holds every question, turn, and the
    entity names and edge texts the memory will make of ``triples``."""
    if encoder is None:
        return None
    from .memory import normalise_entity, normalise_relation

    cached = CachingEncoder(encoder)
    texts = [q.question for q in questions] + [turn_text(t) for c in conversations for t in c.turns()]
    for t in triples:
        s, o = normalise_entity(t.subject, t.speaker), normalise_entity(t.object, t.speaker)
        texts += [s, o, f"{s} {normalise_relation(t.relation)} {o}"]
    cached.prime(texts)
    return cached


def evaluate_probes(probes: Sequence[QA], conversations: Sequence[Conversation], encoder,
                    methods: Sequence[str] = METHODS, ks: Sequence[int] = (1, 3, 5, 10), scorer=None,
                    glong_params: Optional[dict] = None, progress: bool = True) -> EvidenceEvaluation:
    """Evidence retrieval on the samples' probes: memory from the gold triples of the sessions
    before the probe's session, with uniform weights, or Eq. 3 weights when a salience ``scorer``
    (``salience.load_scorer()``) is given."""

    asked = {q.conversation for q in probes}
    conversations = [c for c in conversations if c.id in asked]  # encode only what is asked about
    encoder = _primed(encoder, probes, conversations, [t for c in conversations for t in gold_triples(c)])

    def memory_for(conv, session):
        triples = gold_triples(conv, session)
        if scorer is not None:
            from .salience import score_conversation

            triples = score_conversation(triples, scorer)
        return memory_before(conv, session, encoder, triples)

    retrievers = make_retrievers(methods, memory_for, encoder, max(ks), glong_params)
    return evaluate_evidence(retrievers, probes, conversations, ks, progress)


# --------------------------------------------------------------------------- LoCoMo

def locomo_questions(questions: Sequence[QA]) -> tuple[list[QA], dict[str, int]]:
    """LoCoMo categories 1-4; category 5 (adversarial: unanswerable by design, its evidence points
    at turns that do not hold the answer) is excluded, and counted."""
    kept = [q for q in questions if q.category != "adversarial"]
    return kept, {"adversarial (category 5)": len(questions) - len(kept)}


def truncate_conversation(conv: Conversation, max_turns: Optional[int]) -> Conversation:
    """The conversation cut after its first ``max_turns`` turns (whole sessions kept while they fit,
    the last one cut), for quick runs."""
    if not max_turns or max_turns >= len(conv.turns()):
        return conv
    from copy import deepcopy

    out, left = deepcopy(conv), int(max_turns)
    sessions = []
    for s in out.sessions:
        if left <= 0:
            break
        s.turns = s.turns[:left]
        left -= len(s.turns)
        sessions.append(s)
    out.sessions = sessions
    return out


def extraction_cache_path(conv: Conversation, extractor_name: str) -> Path:
    """Where one conversation's extracted triples are cached, keyed by everything that changes them
    (conversation id, its turn texts, the extractor)."""
    import hashlib

    from .models import cache_dir

    digest = hashlib.sha256("\n".join(turn_text(t) for t in conv.turns()).encode()).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{conv.id}-{extractor_name}")
    return cache_dir("retrieval", "extracted") / f"{safe}-{digest}.json"


def extractor_key(extractor) -> str:
    """What names an extractor in cache keys: its adapter folder (which is keyed by base model,
    data and steps), else its name."""
    adapter = getattr(extractor, "adapter_dir", None)
    return Path(adapter).name if adapter else str(getattr(extractor, "name", "extractor"))


def extracted_triples(conv: Conversation, extractor, extractor_name: Optional[str] = None) -> list[Triple]:
    """Triples of every turn of ``conv`` from ``extraction.extract_conversation``, cached on disk
    (extraction runs at a few utterances per second on a CPU; a LoCoMo conversation has ~500 turns)."""
    path = extraction_cache_path(conv, extractor_name or extractor_key(extractor))
    if path.is_file():
        return [Triple.from_dict(d) for d in json.loads(path.read_text())]
    from .extraction import extract_conversation

    triples = extract_conversation(conv, extractor)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([t.to_dict() for t in triples]))
    tmp.replace(path)  # atomic: a half-written cache never stands in for a full one
    return triples


def evaluate_locomo(path, encoder, methods: Sequence[str] = METHODS, ks: Sequence[int] = (1, 3, 5, 10),
                    conversations: Optional[int] = None, max_turns: Optional[int] = None,
                    extractor=None, extractor_name: Optional[str] = None, glong_params: Optional[dict] = None,
                    progress: bool = True) -> EvidenceEvaluation:
    """Evidence retrieval on LoCoMo (categories 1-4), every method in one run. The graph methods
    need extracted triples (LoCoMo has no gold triples): pass an ``extractor`` or leave them out.
    Questions are asked after the last session; questions whose evidence falls outside a
    ``max_turns`` cut are left out and counted."""
    from .loaders import load_locomo

    convs, qas = load_locomo(path)
    convs = [truncate_conversation(c, max_turns) for c in convs[:conversations or len(convs)]]
    kept_ids = {c.id for c in convs}
    qas, excluded = locomo_questions([q for q in qas if q.conversation in kept_ids])
    present = {c.id: {t.id for t in c.turns()} for c in convs}
    inside = [q for q in qas if q.evidence and set(q.evidence) <= present[q.conversation]]
    if len(inside) < len(qas):
        excluded["evidence outside the turns kept (or none)"] = len(qas) - len(inside)
    needs_graph = any(m in ("glong", "ppr") for m in methods)
    if extractor is None and needs_graph:
        raise DataError("graph methods on LoCoMo need an extractor (LoCoMo has no gold triples)")
    triples = {c.id: extracted_triples(c, extractor, extractor_name) for c in convs} if needs_graph else {}
    encoder = _primed(encoder, inside, convs, [t for ts in triples.values() for t in ts])

    def memory_for(conv, session):
        return memory_before(conv, session, encoder, triples[conv.id])

    retrievers = make_retrievers(methods, memory_for, encoder, max(ks), glong_params)
    result = evaluate_evidence(retrievers, inside, convs, ks, progress)
    result.excluded.update(excluded)
    return result
