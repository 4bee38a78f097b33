"""Associative retrieval's settings (paper section 3.4, Appendix B) and the named presets built from
them: the paper's, and the ones the LoCoMo ladder supports for extracted memories."""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..errors import DataError
from .knobs import check_field, knob

#: What an edge can be embedded as (``retrieval.edge_text``): its triple "s r o", the sentence it
#: came from, or both.
EDGE_TEXTS = ("triple", "source", "both")

#: What an anchor that is a hub does: expand every edge as the paper does, or be skipped in favour of
#: the next-nearest entity that is not a hub.
HUB_POLICIES = ("expand", "skip")

#: Where G-Long's semantic pool comes from: the graph neighbourhood of the anchors (the paper), or the
#: flat top-N of every edge plus the neighbourhood's own top-N, so that the graph can only add.
POOL_SOURCES = ("graph", "flat+graph")


@dataclass(frozen=True)
class RetrievalSettings:
    """Associative retrieval (paper section 3.4, Appendix B): anchors, hops L, semantic pool,
    Eq. 4 weights (semantic, importance, recency), recency rate lambda per second, final K; and
    the choices the paper fixes implicitly: what an edge is embedded as (``edge_text``), what a
    hub anchor does (``hubs``, ``hub_share``), whether repeated facts are one candidate
    (``dedup``, the reference code's rule) and whether Eq. 4 reorders the pool (``rerank``).
    Three fields go beyond the paper, off in its settings: anchors on the entities the question
    names (``named``), a pool that adds the graph's candidates to the flat ones (``pool``), and a
    second hop from what was found (``bridges``).

    This object is what travels: ``AssociativeRetriever(memory, settings)``, variants as
    ``dataclasses.replace(PAPER_RETRIEVAL, hops=2)``, presets by name (``RETRIEVAL_PRESETS``), and
    ``glong query``/``eval-retrieval`` options made from these fields (``commands.common``).
    A value out of range is refused when the object is made:

    >>> from dataclasses import replace
    >>> replace(PAPER_RETRIEVAL, hops=2).hops
    2
    >>> RetrievalSettings(k=0)
    Traceback (most recent call last):
    glong_lib.errors.DataError: RetrievalSettings.k should be in [1, 1000], got 0
    """

    anchors: int = knob(5, "anchor entities nearest the query", 1, 1000)
    hops: int = knob(1, "expansion hops L from the anchors", 1, 5)
    semantic_top_n: int = knob(5, "semantic pool: candidates most similar to the query that reach the Eq. 4 "
                                  "rerank", 1, 1000, option="top-n")
    betas: tuple[float, float, float] = knob((0.5, 0.3, 0.2), "Eq. 4 weights of semantic similarity, importance "
                                             "and recency, comma-separated", 0.0, 1.0)
    lam: float = knob(1e-7, "recency decay per second of Eq. 4 (1e-7: a half-life of 80 days; 0: off)",
                      0.0, 1.0)
    k: int = knob(3, "memories returned", 1, 1000)
    edge_text: str = knob("triple", "what an edge is embedded as", choices=EDGE_TEXTS)
    hubs: str = knob("expand", "an anchor that is a hub: expand it, or skip to the next entity that is not",
                     choices=HUB_POLICIES)
    hub_share: float = knob(0.1, "a node is a hub when more than this share of the edges touch it", 1e-9, 1.0)
    dedup: bool = knob(True, "one candidate per embedded text (the reference code drops repeated facts)")
    rerank: bool = knob(True, "reorder the semantic pool by Eq. 4 (off: the paper's Table 14 'no rerank')")
    named: bool = knob(False, "also anchor on the memory entities the question names (its words, normalised "
                              "as the memory's entities), before the nearest ones")
    pool: str = knob("graph", "where the semantic pool comes from: the anchors' neighbourhood (paper), or the flat "
                              "top-N of every edge plus the neighbourhood's top-N (the graph can only add)",
                     choices=POOL_SOURCES)
    bridges: int = knob(0, "also expand from the entities of the first N pool edges (multi-hop bridges; hubs "
                           "never bridge); 0: off", 0, 50)

    def __post_init__(self):
        betas = self.betas
        if isinstance(betas, (str, bytes)) or not hasattr(betas, "__len__") or len(betas) != 3:
            raise DataError(f"RetrievalSettings.betas should be three numbers, got {betas!r}")
        try:  # a list from JSON or the command line becomes the tuple the dataclass promises
            object.__setattr__(self, "betas", tuple(float(b) for b in betas))
        except (TypeError, ValueError):
            raise DataError(f"RetrievalSettings.betas should be three numbers, got {betas!r}") from None
        for f in fields(self):
            check_field(type(self).__name__, f, getattr(self, f.name))


#: The paper's retrieval settings (Appendix B): one home, read by retrieval, the agent and notebooks.
PAPER_RETRIEVAL = RetrievalSettings()

#: The settings the LoCoMo ladder supports for memories of *extracted* triples
#: (``benchmarks/bench_retrieval.py``; its LoCoMo run is listed in docs/results.md): edges
#: embedded as the sentence they came from (the small extractor keeps a few words of a fact; the
#: sentence keeps all of it), and no recency term (LoCoMo asks about any point of a months-long
#: history; at the paper's lambda a 3-month-old fact loses 0.2 * (1 - 0.46) = 0.11 of score, more
#: than most semantic gaps). With gold triples (the probes) the paper's settings measure better,
#: so the paper's stay the default there and in the agent. ``named``: the entities the question names
#: anchor first (chosen on three LoCoMo conversations by ``benchmarks/bench_graph.py`` among six graph
#: variants; on the other two, Hit@5 0.516 -> 0.596, level with the same edges with no graph: a
#: question names a speaker, whose neighbourhood holds most of the memory).
RECOMMENDED_RETRIEVAL = RetrievalSettings(edge_text="source", lam=0.0, named=True)

#: The same for a memory of triples extracted from raw dialogue turns: there the triple's words help
#: once the turn is there too (edge text "both": Hit@5 0.434 against 0.406 for "source" on LoCoMo, 5 conversations).
#: ``pool="flat+graph"`` and ``named``: chosen on the selection split by ``benchmarks/bench_graph.py``
#: (Hit@5 0.455 against 0.445 for the plain graph step, level with no graph step); on the report split it
#: equals the same edges with no graph step on every question (``benchmarks/bench_graph.py``; docs/results.md).
RECOMMENDED_RETRIEVAL_TURNS = RetrievalSettings(edge_text="both", lam=0.0, named=True, pool="flat+graph")

#: The presets by the name ``--preset`` takes.
RETRIEVAL_PRESETS: dict[str, RetrievalSettings] = {
    "paper": PAPER_RETRIEVAL, "recommended": RECOMMENDED_RETRIEVAL, "recommended-turns": RECOMMENDED_RETRIEVAL_TURNS}


def retrieval_preset(name: str) -> RetrievalSettings:
    """The retrieval preset called ``name``; an unknown name is refused with the list.

    >>> retrieval_preset("recommended").edge_text
    'source'
    """
    try:
        return RETRIEVAL_PRESETS[name]
    except (KeyError, TypeError):
        raise DataError(f"unknown retrieval preset '{name}' (choose from {', '.join(RETRIEVAL_PRESETS)})") from None
