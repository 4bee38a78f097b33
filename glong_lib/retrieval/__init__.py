"""Retrieval (paper section 3.4): G-Long's associative retrieval over the graph memory and the
baselines it is compared with, all behind ``.retrieve(query, now_s, k) -> RetrievalResult``.

* ``scoring``: Eq. 4 (the rerank score) and its recency term;
* ``results``: results, the stage-by-stage trace, embedding caches;
* ``graph``: ``AssociativeRetriever`` (anchors -> L-hop expansion -> semantic top-N -> Eq. 4),
  ``FlatEdgeRetriever`` (the same without the graph: every edge a candidate) and
  ``PPRRetriever`` (HippoRAG-style Personalized PageRank over the same graph);
* ``turns``: dense and BM25 retrieval over raw turns.

The evidence evaluation (Recall@k, MRR) lives in ``glong_lib.evaluation.retrieval``.
"""

from .graph import (  # noqa: F401
    HUB_POLICIES,
    AssociativeRetriever,
    FlatEdgeRetriever,
    PPRRetriever,
    dedup_edges,
    hub_nodes,
)
from .results import (  # noqa: F401
    EDGE_TEXTS,
    CachingEncoder,
    EdgeEmbeddingCache,
    RerankTerms,
    RetrievalResult,
    RetrievalTrace,
    edge_text,
)
from .scoring import (  # noqa: F401
    PAPER_LAMBDA,
    recency,
    rerank_score,
)
from .turns import (  # noqa: F401
    BM25TurnRetriever,
    DenseTurnRetriever,
    bm25_tokens,
)
