"""Retrieval over the graph memory: G-Long's associative retrieval and Personalized PageRank."""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import numpy as np

from ..errors import DataError
from .results import EdgeEmbeddingCache, RerankTerms, RetrievalResult, RetrievalTrace, _encode, _graph_result
from .scoring import (
    PAPER_ANCHORS,
    PAPER_BETAS,
    PAPER_HOPS,
    PAPER_K,
    PAPER_LAMBDA,
    PAPER_SEMANTIC_TOP_N,
    recency,
    rerank_score,
)

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



