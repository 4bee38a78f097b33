"""What a retriever returns (results and a stage-by-stage trace) and the embedding caches retrievers share."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from ..config import EDGE_TEXTS, PAPER_RETRIEVAL  # noqa: F401  (EDGE_TEXTS: what an edge is embedded as; re-exported)
from ..errors import DataError
from ..schema import MemoryEdge
from ..vectors import unit_vectors

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
    betas: tuple = PAPER_RETRIEVAL.betas

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
    added: list[tuple[int, str]] = field(default_factory=list)        # (eid, "flat"/"graph"/"bridge")
    bridges: list[str] = field(default_factory=list)                  # entities a second hop started from
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
            vecs = unit_vectors(self.encoder, missing, **extra)
            self.vectors.update(zip(missing, vecs))
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self.vectors[t] for t in texts])


def check_edge_text(mode: str) -> str:
    """``mode`` if it is one of ``EDGE_TEXTS``, else a one-line DataError."""
    if mode not in EDGE_TEXTS:
        raise DataError(f"unknown edge text '{mode}' (choose from {', '.join(EDGE_TEXTS)})")
    return mode


def edge_text(edge: MemoryEdge, mode: str = "triple") -> str:
    """The text of ``edge`` that retrieval embeds and compares with the query.

    ``triple`` is the paper's ("subject relation object"); ``source`` the utterance (or fact
    sentence) it was extracted from, prefixed by its speaker; ``both`` the two joined. An edge with
    no source falls back to its triple.

    >>> e = MemoryEdge("maya", "have_pet", "dog", 1.0, 0.0, 0.0, speaker="Maya", source_text="I adopted a puppy!")
    >>> edge_text(e), edge_text(e, "source"), edge_text(e, "both")
    ('maya have_pet dog', 'Maya: I adopted a puppy!', 'maya have_pet dog | Maya: I adopted a puppy!')
    """
    check_edge_text(mode)
    if mode == "triple" or not edge.source_text:
        return edge.text()
    source = f"{edge.speaker}: {edge.source_text}" if edge.speaker else edge.source_text
    return source if mode == "source" else f"{edge.text()} | {source}"


class EdgeEmbeddingCache:
    """Embeddings of edge texts (``edge_text(edge, mode)``) keyed by edge id, computed once (in
    batches) and then reused.

    Rows live in one growing matrix so a query's candidates are gathered with one fancy index.
    """

    def __init__(self, memory, batch_size: int = 256, mode: str = "triple"):
        self.memory, self.mode = memory, check_edge_text(mode)
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
            vecs = unit_vectors(self.memory.encoder, [edge_text(self.memory.edge(e), self.mode) for e in chunk])
            base = 0 if self.matrix is None else self.matrix.shape[0]
            self._grow(vecs.astype(np.float32))
            self.row.update({e: base + i for i, e in enumerate(chunk)})
            self.encoded += len(chunk)

    def get(self, eids: Sequence[int]) -> np.ndarray:
        self.ensure(eids)
        if not eids:
            return np.zeros((0, 0 if self.matrix is None else self.matrix.shape[1]), dtype=np.float32)
        return self.matrix[[self.row[e] for e in eids]]



