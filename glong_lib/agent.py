"""Dialogue agents behind one interface, so one loop evaluates them all (paper section 4.1.2).

Every agent answers with the paper's prompt (:func:`glong_lib.generation.build_prompt`); they
differ only in what fills ``<CONTEXT>`` and ``<MEMORY>``:

================  =======================================================  ===========================
agent             <CONTEXT>                                                <MEMORY>
================  =======================================================  ===========================
NoHistoryAgent    nothing (the paper: "current utterance only")            none
LongContextAgent  every earlier session, raw, then the current one,        none
                  oldest lines dropped to fit the generator's window
DenseRAGAgent     the current session so far (C_current)                   top-k past turns, MiniLM
BM25RAGAgent      the current session so far                               top-k past turns, BM25
SummaryMemory-    the current session so far                               top-k session summaries the
Agent                                                                      generator wrote, MiniLM
GLongAgent        the current session so far                               top-k triples, Eq. 4
================  =======================================================  ===========================

The shared interface and loop are :class:`~glong_lib.agent_base.Agent`'s; the baselines live in
:mod:`glong_lib.baselines`, G-Long here. Every name is importable from this module.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional, Sequence

from .agent_base import Agent, AgentReply, memory_lines  # noqa: F401  (AgentReply, memory_lines: re-exported)
from .baselines import (  # noqa: F401  (re-exported: every agent is importable from here)
    SUMMARY_REQUEST,
    SUMMARY_SYSTEM,
    BM25RAGAgent,
    DenseRAGAgent,
    LongContextAgent,
    NoHistoryAgent,
    SummaryMemoryAgent,
    summary_messages,
)
from .config import AGENT_METHODS, ALL_AGENT_METHODS, PAPER_MEMORY_FORMAT, PAPER_RETRIEVAL, RetrievalSettings
from .errors import DataError
from .memory import GraphMemory
from .models import load_encoder
from .pipeline import TripleSource
from .retrieval import AssociativeRetriever, FlatEdgeRetriever
from .schema import MemoryEdge


class GLongAgent(Agent):
    """The G-Long agent. After each session: extract triples, weigh them (Eq. 1-3), insert them
    into the graph memory. For each reply: associative retrieval (anchors, expansion, semantic
    top-N, Eq. 4 rerank, top-K, all set by ``settings``, a ``config.RetrievalSettings``; default
    the paper's) fills ``<MEMORY>``; the current session fills ``<CONTEXT>``.

    Ablations are settings: ``replace(PAPER_RETRIEVAL, betas=(0.5, 0.0, 0.2))`` is G-Long without
    importance (``glong_ablations`` builds the paper's set).
    """

    name = "G-Long"
    retriever_class = AssociativeRetriever  # FlatTripleAgent: the same triples with no graph step

    def __init__(self, generator, source: Optional[TripleSource] = None, encoder=None,
                 settings: Optional[RetrievalSettings] = None, memory_policy: str = "append",
                 update_access: bool = True, memory_format: str = PAPER_MEMORY_FORMAT, name: Optional[str] = None):
        super().__init__(generator, memory_format=memory_format, name=name)
        self.source = source or TripleSource("gold")
        self.encoder = encoder
        self.memory_policy = memory_policy
        self.update_access = update_access
        self.settings = settings or PAPER_RETRIEVAL
        self.memory = None
        self.retriever = None
        self.last_result = None

    def variant(self, name: str, **changes) -> "GLongAgent":
        """A new agent equal to this one but for ``changes`` (constructor arguments): a comparison
        between the two then changes only what it names.

        >>> a = GLongAgent(None, memory_format="plain")
        >>> b = a.variant("ranked", memory_format="ranked")
        >>> (b.name, b.memory_format, b.settings == a.settings, b.source is a.source)
        ('ranked', 'ranked', True, True)
        """
        same = dict(source=self.source, encoder=self.encoder, settings=self.settings, memory_policy=self.memory_policy,
                    update_access=self.update_access, memory_format=self.memory_format)
        return GLongAgent(self.generator, **{**same, **changes}, name=name)

    def reset(self) -> None:
        if self.encoder is None:
            self.encoder = load_encoder()
        self.memory = GraphMemory(encoder=self.encoder, policy=self.memory_policy)
        self.retriever, self.last_result = None, None

    def observe_session(self, session, conversation) -> None:
        # each fact enters memory at the time of the turn it came from, on the conversation clock
        self.memory.add_session(session, self.source.session_triples(conversation, session))
        # a fresh retriever sees the grown memory (its candidate-embedding cache starts clean)
        self.retriever = self.retriever_class(self.memory, self.settings, update_access=self.update_access)

    def memories(self, utterance, now_s) -> list[MemoryEdge]:
        if self.retriever is None or not self.memory.edge_ids():
            return []
        self.last_result = self.retriever.retrieve(utterance, now_s)
        return list(self.last_result.triples)


class FlatTripleAgent(GLongAgent):
    """G-Long without its graph step: the same triples, weights and Eq. 4 rerank, but every stored
    triple is a candidate (``FlatEdgeRetriever``), not only those one hop from the query's anchors."""

    name = "Flat triples"
    retriever_class = FlatEdgeRetriever


def glong_ablations(generator, source: TripleSource, encoder=None, settings: Optional[RetrievalSettings] = None,
                    memory_format: str = PAPER_MEMORY_FORMAT) -> dict[str, GLongAgent]:
    """G-Long and its ablations (without importance, without recency, without the rerank, two
    hops), each a variant of ``settings`` (default the paper's), sharing one triple source (one
    extraction and scoring pass)."""
    base = settings or PAPER_RETRIEVAL
    b1, b2, b3 = base.betas
    variants = {
        "G-Long": base,
        "G-Long w/o importance": replace(base, betas=(b1, 0.0, b3)),
        "G-Long w/o recency": replace(base, betas=(b1, b2, 0.0)),
        "No rerank (top-5)": replace(base, rerank=False, k=5),
        "G-Long L=2": replace(base, hops=2),
    }
    return {name: GLongAgent(generator, source, encoder, s, memory_format=memory_format, name=name)
            for name, s in variants.items()}


def make_agents(generator, methods: Sequence[str] = AGENT_METHODS, source: Optional[TripleSource] = None,
                encoder=None, memory_format: str = PAPER_MEMORY_FORMAT,
                settings: Optional[RetrievalSettings] = None) -> dict[str, Agent]:
    """The agents for ``methods`` (keys of ``config.AGENT_METHODS``), named for tables, one generator shared;
    ``settings`` (default the paper's) set G-Long's retrieval and every baseline's K."""
    unknown = [m for m in methods if m not in ALL_AGENT_METHODS]
    if unknown:
        raise DataError(f"unknown method(s) {', '.join(unknown)} (choose from {', '.join(ALL_AGENT_METHODS)})")
    source = source or TripleSource("gold")
    settings = settings or PAPER_RETRIEVAL
    glong = glong_ablations(generator, source, encoder, settings, memory_format)
    build = {
        "no-history": lambda: NoHistoryAgent(generator, memory_format=memory_format),
        "long-context": lambda: LongContextAgent(generator, memory_format=memory_format),
        "dense-rag": lambda: DenseRAGAgent(generator, encoder=encoder, memory_format=memory_format,
                                           k=settings.k),
        "bm25-rag": lambda: BM25RAGAgent(generator, memory_format=memory_format, k=settings.k),
        "summary-memory": lambda: SummaryMemoryAgent(generator, encoder=encoder, memory_format=memory_format,
                                                     k=settings.k),
        "glong": lambda: glong["G-Long"],
        "glong-no-importance": lambda: glong["G-Long w/o importance"],
        "glong-no-recency": lambda: glong["G-Long w/o recency"],
        "glong-no-rerank": lambda: glong["No rerank (top-5)"],
        "glong-hops2": lambda: glong["G-Long L=2"],
    }
    agents = [build[m]() for m in methods]
    return {a.name: a for a in agents}


__all__ = [
    "AgentReply", "Agent", "NoHistoryAgent", "LongContextAgent", "DenseRAGAgent", "BM25RAGAgent",
    "SummaryMemoryAgent", "summary_messages",
    "GLongAgent", "FlatTripleAgent", "TripleSource", "glong_ablations", "make_agents",
]
