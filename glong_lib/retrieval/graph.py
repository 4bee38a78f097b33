"""Retrieval over the graph memory: G-Long's associative retrieval and Personalized PageRank."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any, Optional, Sequence

import numpy as np

from ..config import HUB_POLICIES, PAPER_RETRIEVAL, RetrievalSettings  # noqa: F401  (HUB_POLICIES re-exported)
from ..errors import DataError
from ..text import entity_mentions
from ..vectors import unit_vectors
from .results import EdgeEmbeddingCache, RerankTerms, RetrievalResult, RetrievalTrace, _graph_result, edge_text
from .scoring import recency, rerank_score

# --------------------------------------------------------------------------- G-Long


def dedup_edges(memory, eids: Sequence[int], mode: str = "triple") -> list[int]:
    """``eids`` with repeats of one embedded text (``edge_text(edge, mode)``) removed; the first
    occurrence wins. With ``mode="triple"`` that is the reference code's rule, one candidate per
    (subject, relation, object); with ``"source"``, the triples of one sentence embed identically
    and become one candidate, so they cannot fill the pool with one fact.

    >>> from glong_lib.memory import GraphMemory, HashEncoder
    >>> from glong_lib.schema import Triple
    >>> m = GraphMemory(encoder=HashEncoder(dim=8))
    >>> ids = m.add_triples([Triple("Ana", "like", "tea"), Triple("Ana", "like", "tea"),
    ...                      Triple("Ana", "like", "jazz")], 0.0, 1)
    >>> ids, dedup_edges(m, ids)
    ([0, 1, 2], [0, 2])
    """
    seen, out = set(), []
    for eid in eids:
        key = edge_text(memory.edge(eid), mode)
        if key not in seen:
            seen.add(key)
            out.append(eid)
    return out


def hub_nodes(memory, share: float = PAPER_RETRIEVAL.hub_share, current_only: bool = False) -> set[str]:
    """Nodes touched by more than ``share`` of the memory's edges (self-loops count once).

    >>> from glong_lib.memory import GraphMemory, HashEncoder
    >>> from glong_lib.schema import Triple
    >>> m = GraphMemory(encoder=HashEncoder(dim=8))
    >>> _ = m.add_triples([Triple("Ana", "like", x) for x in ("tea", "jazz", "cats")]
    ...                   + [Triple("Bo", "like", "tea")], 0.0, 1)
    >>> sorted(hub_nodes(m, share=0.5)), sorted(hub_nodes(m, share=0.25))
    (['ana'], ['ana', 'tea'])
    """
    eids = memory.edge_ids(current_only=current_only)
    count: dict[str, int] = {}
    for e in map(memory.edge, eids):
        for node in {e.subject, e.object}:
            count[node] = count.get(node, 0) + 1
    return {n for n, c in count.items() if c > share * len(eids)}


class AssociativeRetriever:
    """G-Long's associative retriever over a ``GraphMemory``; every hyperparameter is a field of
    ``settings`` (a ``config.RetrievalSettings``, default ``PAPER_RETRIEVAL``; a variant is
    ``dataclasses.replace(PAPER_RETRIEVAL, hops=2)``).

    Stages: the ``anchors`` entities nearest the query -> every edge within ``hops`` of them
    (``dedup``: one per embedded text, i.e. per (subject, relation, object) as the reference code
    when edges are embedded as triples; ``dedup_edges``) -> the semantic pool,
    the ``max(semantic_top_n, k)`` candidates most similar to the query -> Eq. 4 rerank -> top ``k``.
    The pool grows with ``k`` so that asking for k items never returns fewer than k (the paper's
    pool of 5 with K = 3 is unchanged).

    Beyond the paper, each a measured setting: ``edge_text`` (what an edge is embedded as,
    ``config.EDGE_TEXTS``) and ``hubs="skip"``, which replaces an anchor that is a hub (a node
    touching more than ``hub_share`` of the edges, usually a speaker) by the next-nearest entity
    that is not, so one anchor cannot pull in half the memory. ``rerank=False`` keeps the semantic
    order instead of Eq. 4 (the paper's Table 14 ablation, fed the top 5).

    Steps that let the graph add rather than filter (issue 27; ``benchmarks/bench_graph.py`` measures
    them on LoCoMo): ``named`` anchors on the entities the question names before the nearest ones;
    ``pool="flat+graph"`` draws the pool from the flat top-N of every edge plus the neighbourhood's
    top-N; ``bridges=N`` adds a second hop from the entities of the first N pool edges. What each
    added is in ``trace.added``.

    ``current_only`` skips edges a memory with the ``update`` policy marked superseded (the paper
    stores everything, so the default keeps them). ``update_access`` writes ``last_access_s = now_s``
    on the returned edges, on the conversation clock (the reference code used the wall clock, which
    makes the recency term a constant).
    """

    def __init__(self, memory, settings: Optional[RetrievalSettings] = None, *, update_access: bool = True,
                 current_only: bool = False):
        if settings is not None and not isinstance(settings, RetrievalSettings):
            raise DataError(f"settings should be a RetrievalSettings, got {type(settings).__name__}")
        self.settings = settings = settings or PAPER_RETRIEVAL  # checked when it was made
        self.memory = memory
        self.update_access, self.current_only = update_access, current_only
        self.cache = EdgeEmbeddingCache(memory, mode=settings.edge_text)
        self._hubs: tuple[int, set[str]] = (-1, set())  # (edge count it was computed at, hub nodes)
        self._flat: tuple = (None, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))  # see _flat_edges

    def params(self) -> dict[str, Any]:
        """The settings as a plain dict (for traces and JSON output)."""
        return {**asdict(self.settings), "betas": list(self.settings.betas)}

    def pool_size(self, k: int) -> int:
        """How many candidates reach the Eq. 4 rerank when ``k`` are asked for."""
        return max(self.settings.semantic_top_n, int(k))

    def warm(self) -> int:
        """Embed every edge now (so the first queries are as fast as the rest); returns the count."""
        self.cache.ensure(self.memory.edge_ids())
        return len(self.cache.row)

    def retrieve(self, query: str, now_s: float, k: Optional[int] = None) -> RetrievalResult:
        if not isinstance(query, str) or not query.strip():
            raise DataError("query is empty")
        k = self.settings.k if k is None else int(k)
        trace = RetrievalTrace(query, float(now_s), {**self.params(), "k": k})
        clock = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            trace.seconds[stage] = now - clock
            clock = now

        qvec = unit_vectors(self.memory.encoder, [query])[0]
        lap("encode")
        trace.anchors = self._anchors(qvec, query)
        lap("anchors")
        trace.candidates = self._candidates([e for e, _ in trace.anchors])
        if self.settings.dedup:
            trace.candidates = dedup_edges(self.memory, trace.candidates, self.settings.edge_text)
        lap("expand")
        self._semantic(trace, qvec, self.pool_size(k))
        if self.settings.pool == "flat+graph" or self.settings.bridges:
            self._add_to_pool(trace, qvec, self.pool_size(k))
        lap("semantic")
        self._rerank(trace)
        trace.final = [t.eid for t in trace.rerank[:k]]
        lap("rerank")
        if self.update_access and trace.final:
            self.memory.touch(trace.final, float(now_s))
        return _graph_result(self.memory, trace.final, [t.score for t in trace.rerank[:k]], trace)

    def _anchors(self, qvec: np.ndarray, query: str = "") -> list[tuple[str, float]]:
        """The ``anchors`` entities nearest the query (hubs skipped under ``hubs="skip"``); with
        ``named``, the entities the question names come first, at similarity 1 (``text.entity_mentions``)."""
        hubs = self._hub_set() if self.settings.hubs == "skip" else set()
        named = []
        if self.settings.named:
            named = [(e, 1.0) for e in entity_mentions(query, self.memory.graph.nodes) if e not in hubs]
        ranked = self.memory.nearest_entities(qvec, k=self.settings.anchors + len(hubs))
        nearest = [(e, float(s)) for e, s in ranked if e not in hubs][:self.settings.anchors]
        seen = {e for e, _ in named}
        return named + [(e, s) for e, s in nearest if e not in seen]

    def _hub_set(self) -> set[str]:
        """``hub_nodes`` of the memory, recomputed only when edges were added or superseded since."""
        size = len(self.memory.edge_ids(current_only=self.current_only))
        if self._hubs[0] != size:
            self._hubs = (size, hub_nodes(self.memory, self.settings.hub_share, self.current_only))
        return self._hubs[1]

    def _candidates(self, anchors: list[str]) -> list[int]:
        """Every edge within ``hops`` of the anchors."""
        return list(self.memory.incident_edges(anchors, hops=self.settings.hops, current_only=self.current_only))

    def _semantic(self, trace: RetrievalTrace, qvec: np.ndarray, pool: int) -> None:
        """Coarse stage: S_sem = max(0, cosine) for every candidate; keep the top ``pool``."""
        if not trace.candidates:
            return
        sims = np.maximum(self.cache.get(trace.candidates) @ qvec, 0.0)
        order = np.argsort(-sims, kind="stable")  # ties keep the expansion order
        trace.semantic = [(trace.candidates[i], float(sims[i])) for i in order]
        trace.pool = [e for e, _ in trace.semantic[:pool]]

    def _add_to_pool(self, trace: RetrievalTrace, qvec: np.ndarray, pool: int) -> None:
        """Beyond the paper: more candidates for the Eq. 4 rerank, each recorded in ``trace.added``.
        ``pool="flat+graph"``: the flat top ``pool`` of every edge joins the neighbourhood's top
        ``pool`` (the graph's contribution is then what the flat list lacks); ``bridges=N``: the edges
        one hop from the entities of the first N pool edges (not hubs, not anchors), their top
        ``pool`` by similarity: a second hop that starts from what was found, not from the question."""
        s = self.settings
        sims = dict(trace.semantic)
        in_pool = set(trace.pool)

        def add(eids: list[int], how: str) -> None:
            if s.dedup:
                eids = dedup_edges(self.memory, eids, s.edge_text)
            fresh = [e for e in eids if e not in in_pool]
            if not fresh:
                return
            scores = np.maximum(self.cache.get(fresh) @ qvec, 0.0)
            for i in np.argsort(-scores, kind="stable")[:pool]:
                eid = fresh[int(i)]
                sims[eid] = float(scores[i])
                in_pool.add(eid)
                trace.pool.append(eid)
                trace.added.append((eid, how))

        if s.pool == "flat+graph":
            graph_pool = list(trace.pool)
            trace.pool.clear()
            in_pool.clear()
            for eid, sim in zip(*self.flat_top(qvec, pool)):
                sims[eid] = sim
                in_pool.add(eid)
                trace.pool.append(eid)
                trace.added.append((eid, "flat"))
            for eid in graph_pool:
                if eid not in in_pool:
                    in_pool.add(eid)
                    trace.pool.append(eid)
                    trace.added.append((eid, "graph"))
        if s.bridges:
            anchors = {e for e, _ in trace.anchors} | self._hub_set()
            seeds = [trace.pool[i] for i in range(min(s.bridges, len(trace.pool)))]
            bridge = list(dict.fromkeys(n for e in map(self.memory.edge, seeds) for n in (e.subject, e.object)
                                        if n not in anchors))
            trace.bridges = bridge
            if bridge:
                add(self.memory.incident_edges(bridge, hops=1, current_only=self.current_only), "bridge")
        trace.semantic = sorted(sims.items(), key=lambda x: -x[1])

    def _flat_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """Every edge a flat search ranks (current ones with ``current_only``; the first of each
        embedded text with ``dedup``), as edge ids and their rows in the embedding cache, in id
        order. Kept until the memory gains or supersedes an edge: deduplicating 100k edges takes
        longer than ranking them."""
        key = (self.memory.edge_count(), len(self.memory.superseded_by), self.current_only, self.settings.dedup)
        if self._flat[0] != key:
            eids = self.memory.edge_ids(current_only=self.current_only)
            if self.settings.dedup:
                eids = dedup_edges(self.memory, eids, self.settings.edge_text)
            self.cache.ensure(eids)
            self._flat = (key, np.asarray(eids, dtype=np.int64),
                          np.asarray([self.cache.row[e] for e in eids], dtype=np.int64))
        return self._flat[1], self._flat[2]

    def flat_top(self, qvec: np.ndarray, n: int) -> tuple[list[int], list[float]]:
        """The ``n`` edges of the whole memory with the highest S_sem = max(0, cosine), best first,
        ties in id order: what a stable sort of every (deduplicated) edge would keep, found by one
        matrix-vector product and a partial sort (the flat half of ``pool="flat+graph"``)."""
        eids, rows = self._flat_edges()
        if not len(eids) or n <= 0:
            return [], []
        sims = np.maximum(self.cache.matrix @ qvec, 0.0)[rows]
        n = min(int(n), len(sims))
        nth = -np.partition(-sims, n - 1)[n - 1]                  # the n-th highest score
        at_least = np.flatnonzero(sims >= nth)                    # every edge scoring that much, ties too, in id order
        best = at_least[np.argsort(-sims[at_least], kind="stable")][:n]
        return [int(e) for e in eids[best]], [float(x) for x in sims[best]]

    def _rerank(self, trace: RetrievalTrace) -> None:
        """Fine stage: Eq. 4 on the pool; stable sort, so ties keep the semantic order."""
        sem = dict(trace.semantic)
        edges = [self.memory.edge(e) for e in trace.pool]
        deltas = np.array([trace.now_s - e.last_access_s for e in edges], dtype=float)
        sems = np.array([sem[e] for e in trace.pool], dtype=float)
        weights = np.array([e.weight for e in edges], dtype=float)
        scores = np.atleast_1d(rerank_score(sems, weights, deltas, self.settings.betas, self.settings.lam))
        recs = np.atleast_1d(recency(deltas, self.settings.lam))
        terms = [RerankTerms(eid, e.text(), float(s), float(w), float(d), float(r), float(sc), self.settings.betas)
                 for eid, e, s, w, d, r, sc in zip(trace.pool, edges, sems, weights, deltas, recs, scores)]
        # rerank=False is the paper's "No Rerank" ablation (Table 14): the semantic order is kept
        trace.rerank = sorted(terms, key=lambda t: -t.score) if self.settings.rerank else terms


class FlatEdgeRetriever(AssociativeRetriever):
    """The same edges, texts and Eq. 4 rerank as ``AssociativeRetriever``, with no graph: every
    edge is a candidate. The controlled comparison for "does the graph expansion add anything?"
    (anything G-Long gains or loses against it is the anchors-and-hops step alone)."""

    def _anchors(self, qvec: np.ndarray, query: str = "") -> list[tuple[str, float]]:
        return []

    def _candidates(self, anchors: list[str]) -> list[int]:
        return self.memory.edge_ids(current_only=self.current_only)


# --------------------------------------------------------------------------- PPR (HippoRAG-style)

class PPRRetriever:
    """Personalized PageRank over the memory graph, seeded on the query's anchor entities.

    As in HippoRAG: find the ``anchors`` entities most similar to the query, run PageRank with the
    restart distribution on them (weighted by their cosine, clamped at a small positive floor)
    over the graph taken as undirected (parallel edges add up), then rank edges by the PPR mass of
    their two endpoints. Edges between the same two nodes tie on mass; the tie is broken by the
    edge's cosine to the query so the order is not arbitrary.
    """

    def __init__(self, memory, anchors: int = PAPER_RETRIEVAL.anchors, damping: float = 0.5,
                 k: int = PAPER_RETRIEVAL.k, current_only: bool = False, edge_text: str = "triple"):
        self.memory, self.anchors, self.damping, self.k = memory, int(anchors), float(damping), int(k)
        self.current_only = current_only
        self.cache = EdgeEmbeddingCache(memory, mode=edge_text)
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
        qvec = unit_vectors(self.memory.encoder, [query])[0]
        anchors = self.memory.nearest_entities(qvec, k=self.anchors)
        seeds = {e: max(float(s), 1e-3) for e, s in anchors if e in g}
        mass = nx.pagerank(g, alpha=self.damping, personalization=seeds or None, weight="weight")
        ppr = np.array([mass.get(u, 0.0) + mass.get(v, 0.0) for u, v in self._ends])
        cos = self.cache.get(self._eids) @ qvec
        order = np.lexsort((-cos, -ppr))[:k]  # primary key: PPR mass; tie-break: cosine
        return _graph_result(self.memory, [self._eids[i] for i in order], [float(ppr[i]) for i in order])



