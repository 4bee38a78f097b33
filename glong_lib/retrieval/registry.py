"""The retrieval methods an evaluation compares, by name: G-Long (``AssociativeRetriever``), the same
edges ranked flat, personalised PageRank, and dense or BM25 over raw turns. One home for the names
and for the factories that build each method's retriever for a (conversation, session)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional, Sequence

from ..config import PAPER_RETRIEVAL, RetrievalSettings
from ..errors import DataError
from ..schema import Conversation, Turn
from .graph import AssociativeRetriever, FlatEdgeRetriever, PPRRetriever
from .turns import BM25TurnRetriever, DenseTurnRetriever

#: Retrieval methods ``make_retrievers`` knows, in display order: G-Long; the same edges with no
#: graph (``flat``); dense and BM25 over the units the memory was built from (raw turns, or fact
#: sentences); Personalized PageRank over the same graph; and dense and BM25 over the raw turns
#: (the reference every memory must beat; identical to ``dense``/``bm25`` when the units are turns).
METHODS = ("glong", "flat", "dense", "bm25", "ppr", "dense-turns", "bm25-turns")

#: The methods run when none are named (the turn references only when the units are not turns).
DEFAULT_METHODS = ("glong", "flat", "dense", "bm25", "ppr")

#: The methods that read a graph memory (the others index raw turns).
GRAPH_METHODS = ("glong", "flat", "ppr")


def turns_before(conv: Conversation, session: Optional[int]) -> list[Turn]:
    """The turns of the sessions before ``session`` (all of them when ``session`` is None)."""
    return [t for s in conv.sessions if session is None or s.index < session for t in s.turns]


def make_retrievers(methods: Sequence[str], memory_for: Callable[[Conversation, Optional[int]], Any],
                    encoder, depth: int = PAPER_RETRIEVAL.k, settings: Optional[RetrievalSettings] = None,
                    raw: Optional[dict[str, Conversation]] = None) -> dict[str, Callable]:
    """:func:`make_variant_retrievers` with one variant per method, all with ``settings``."""
    settings = settings or PAPER_RETRIEVAL
    return make_variant_retrievers({m: (m, settings) for m in methods}, memory_for, encoder, depth, raw)


def make_variant_retrievers(variants: dict[str, tuple[str, RetrievalSettings]],
                            memory_for: Callable[[Conversation, Optional[int]], Any], encoder,
                            depth: int = PAPER_RETRIEVAL.k,
                            raw: Optional[dict[str, Conversation]] = None) -> dict[str, Callable]:
    """Factories ``f(conversation, asked_in_session) -> retriever`` for :func:`evaluate_evidence`, one
    per variant ``{name: (method, settings)}`` (a method of :data:`METHODS` and the
    ``RetrievalSettings`` of G-Long, ``flat`` and PPR).

    ``memory_for(conversation, session)`` builds the graph memory (of what was said before
    ``session``); every graph variant of one (conversation, session) shares one memory. ``dense`` and
    ``bm25`` index the conversation's own turns (its units); ``dense-turns``/``bm25-turns`` index
    ``raw[conversation id]`` (the dialogue, when the units are fact sentences). The settings go to
    G-Long and ``flat`` with K set to ``depth`` (and their ``edge_text`` to PPR). Evaluation
    retrievers do not update access times, so every question sees the same memory.
    """
    unknown = sorted({m for m, _ in variants.values()} - set(METHODS))
    if unknown:
        raise DataError(f"unknown retrieval method(s) {', '.join(unknown)} (choose from {', '.join(METHODS)})")
    memories: dict = {}

    def memory(conv, session):
        if (conv.id, session) not in memories:
            memories[(conv.id, session)] = memory_for(conv, session)
        return memories[(conv.id, session)]

    def dialogue(conv):
        return (raw or {}).get(conv.id, conv)

    def factory(method: str, settings: RetrievalSettings) -> Callable:
        glong = replace(settings, k=depth)
        return {
            "glong": lambda c, s: AssociativeRetriever(memory(c, s), glong, update_access=False),
            "flat": lambda c, s: FlatEdgeRetriever(memory(c, s), glong, update_access=False),
            "ppr": lambda c, s: PPRRetriever(memory(c, s), k=depth, edge_text=glong.edge_text),
            "dense": lambda c, s: DenseTurnRetriever(turns_before(c, s), encoder, k=depth),
            "bm25": lambda c, s: BM25TurnRetriever(turns_before(c, s), k=depth),
            "dense-turns": lambda c, s: DenseTurnRetriever(turns_before(dialogue(c), s), encoder, k=depth),
            "bm25-turns": lambda c, s: BM25TurnRetriever(turns_before(dialogue(c), s), k=depth),
        }[method]

    return {name: factory(method, settings) for name, (method, settings) in variants.items()}
