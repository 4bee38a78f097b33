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

Interface: ``start(conversation)`` (new conversation: empty memory, names from its speakers),
``observe_session(session, conversation)`` (after a session: update memory), and
``respond(utterance, context, now_s) -> AgentReply``. ``memory_prompt_tokens`` and
``memory_completion_tokens`` count LLM calls made to *maintain* memory (summaries and the like):
zero for every agent but ``SummaryMemoryAgent`` (the generator writes its memories), G-Long
included, since its extractor and scorer are local models.

The context is the current session so far, the paper's C_current. The released reference code
never resets it between sessions; :func:`glong_lib.evaluation.msc.run_msc_evaluation` offers that
behaviour as ``context_scope="dialogue"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional, Sequence, Union

from .config import AGENT_METHODS, ALL_AGENT_METHODS, PAPER_RETRIEVAL, RetrievalSettings
from .errors import DataError
from .generation import build_prompt, clean_reply, fit_prompt, format_memory
from .memory import GraphMemory
from .models import load_encoder
from .pipeline import TripleSource
from .retrieval import AssociativeRetriever, BM25TurnRetriever, DenseTurnRetriever, FlatEdgeRetriever
from .schema import Conversation, MemoryEdge, Session, Turn
from .text import turn_line


@dataclass
class AgentReply:
    """A generated reply, its token counts, and the memory lines that went into the prompt."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    memories: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cached: bool = False
    dropped_context_lines: int = 0
    messages: list[dict[str, str]] = field(default_factory=list)


def memory_lines(memories: Sequence, memory_format: str, now_s: Optional[float] = None) -> list[str]:
    """The memory lines as the prompt shows them (for inspection, the records and the notebook)."""
    return [format_memory(m, memory_format, i, now_s) for i, m in enumerate(memories, start=1)]


class Agent:
    """The shared loop: pick context lines and memories, build the prompt, fit it, generate."""

    name = "agent"

    def __init__(self, generator, memory_format: str = "arrow", name: Optional[str] = None):
        self.generator = generator
        self.memory_format = memory_format
        if name:
            self.name = name
        self.agent_name = "Assistant"
        self.user_name = "User"
        self.memory_prompt_tokens = 0
        self.memory_completion_tokens = 0

    # -- the interface
    def start(self, conversation: Conversation, agent_name: Optional[str] = None,
              user_name: Optional[str] = None) -> None:
        """Begin a conversation: forget everything; the user is ``speakers[0]``, the agent ``speakers[1]``."""
        if len(conversation.speakers) < 2 and (agent_name is None or user_name is None):
            raise DataError(f"conversation {conversation.id} has fewer than two speakers")
        self.user_name = user_name or conversation.speakers[0]
        self.agent_name = agent_name or conversation.speakers[1]
        self.reset()

    def reset(self) -> None:
        """Clear memory (subclasses)."""

    def observe_session(self, session: Session, conversation: Conversation) -> None:
        """Take in a finished session (subclasses)."""

    def respond(self, utterance: str, context: Sequence[Union[Turn, str]], now_s: float) -> AgentReply:
        lines = self.context_lines(context)
        memories = self.memories(utterance, now_s)

        def make(kept: Sequence[str]):
            return build_prompt(self.agent_name, self.user_name, kept, memories, utterance,
                                self.memory_format, now_s)

        messages, dropped = fit_prompt(make, lines, self.generator.count_tokens, self.prompt_budget())
        gen = self.generator.generate(messages)
        text = clean_reply(gen.text, self.agent_name, getattr(self.generator, "first_line_only", True))
        return AgentReply(text, gen.prompt_tokens, gen.completion_tokens,
                          memory_lines(memories, self.memory_format, now_s), gen.seconds, gen.cached, dropped, messages)

    def prompt_budget(self) -> int:
        """Most prompt tokens the generator takes (its window less the reply's tokens)."""
        return self.generator.max_prompt_tokens

    # -- what differs between agents
    def context_lines(self, context: Sequence[Union[Turn, str]]) -> list[str]:
        return [turn_line(t) for t in context]

    def memories(self, utterance: str, now_s: float) -> list:
        return []


class NoHistoryAgent(Agent):
    """The lower bound: no memory. By default also no context (the paper: "current utterance
    only"); ``include_context=True`` keeps the current session, isolating what memory adds."""

    name = "No history"

    def __init__(self, generator, include_context: bool = False, **kwargs):
        super().__init__(generator, **kwargs)
        self.include_context = include_context

    def context_lines(self, context):
        return super().context_lines(context) if self.include_context else []


class LongContextAgent(Agent):
    """The full raw history in the prompt, limited only by the generator's context window
    (``max_context_tokens`` emulates a smaller one). Oldest lines go first when it overflows."""

    name = "Long context"

    def __init__(self, generator, max_context_tokens: Optional[int] = None, **kwargs):
        super().__init__(generator, **kwargs)
        self.max_context_tokens = max_context_tokens
        self.reset()

    def reset(self) -> None:
        self.history = []
        self.seen: set[str] = set()

    def observe_session(self, session, conversation) -> None:
        self.history.append(f"[Session {session.index}]")
        self.history.extend(turn_line(t) for t in session.turns)
        self.seen.update(t.id for t in session.turns)

    def context_lines(self, context):
        # turns already in the history (a context carried across sessions) are not repeated
        current = super().context_lines([t for t in context if isinstance(t, str) or t.id not in self.seen])
        return self.history + (["[Session current]"] if self.history else []) + current

    def prompt_budget(self) -> int:
        budget = super().prompt_budget()
        return budget if self.max_context_tokens is None else min(budget, self.max_context_tokens)


class _TurnRAGAgent(Agent):
    """Retrieval over the raw turns of earlier sessions; the top-k turns become the memories."""

    def __init__(self, generator, k: int = 3, **kwargs):
        super().__init__(generator, **kwargs)
        self.k = k
        self.turns: list[Turn] = []
        self.retriever = None

    def reset(self) -> None:
        self.turns, self.retriever = [], None

    def observe_session(self, session, conversation) -> None:
        self.turns.extend(session.turns)
        self.retriever = self.build_retriever(self.turns)

    def build_retriever(self, turns: list[Turn]):
        raise NotImplementedError

    def memories(self, utterance, now_s) -> list[str]:
        if self.retriever is None:
            return []
        # each item is a past turn written "Speaker: text" (text.turn_line)
        return list(self.retriever.retrieve(utterance, now_s, k=self.k).texts)


class DenseRAGAgent(_TurnRAGAgent):
    """Dense retrieval (MiniLM + faiss) over raw past turns: ``retrieval.DenseTurnRetriever``."""

    name = "Dense RAG"

    def __init__(self, generator, encoder=None, **kwargs):
        super().__init__(generator, **kwargs)
        self.encoder = encoder

    def build_retriever(self, turns):
        if self.encoder is None:
            self.encoder = load_encoder()
        return DenseTurnRetriever(turns, self.encoder)


class BM25RAGAgent(_TurnRAGAgent):
    """BM25 (rank_bm25) over raw past turns: ``retrieval.BM25TurnRetriever``."""

    name = "BM25 RAG"

    def build_retriever(self, turns):
        return BM25TurnRetriever(turns)


#: The summary request of :class:`SummaryMemoryAgent` (the project's wording, in the spirit of
#: MemoryBank's and LD-Agent's session summaries: facts about both speakers, kept short).
SUMMARY_SYSTEM = "You write short, factual summaries of conversations."
SUMMARY_REQUEST = ("Summarize what this conversation between {user} and {agent} says about each of them "
                   "(facts, events, plans, preferences) in two or three sentences.\n\n{dialogue}\n\nSummary:")


def summary_messages(session: Session, user: str, agent: str) -> list[dict[str, str]]:
    """The chat messages that ask the generator to summarise one session.

    >>> s = Session(1, [Turn("a", "Maya", "I got a cat."), Turn("b", "Leo", "Nice!")])
    >>> summary_messages(s, "Maya", "Leo")[1]["content"].splitlines()[2:4]
    ['Maya: I got a cat.', 'Leo: Nice!']
    """
    dialogue = "\n".join(turn_line(t) for t in session.turns)
    return [{"role": "system", "content": SUMMARY_SYSTEM},
            {"role": "user", "content": SUMMARY_REQUEST.format(user=user, agent=agent, dialogue=dialogue)}]


class SummaryMemoryAgent(DenseRAGAgent):
    """The summary-memory baseline, in the style of MemoryBank and LD-Agent (the paper's Tables 1
    and 6): after each session the *generator* writes a summary of it; a reply retrieves the top-k
    summaries by MiniLM similarity (all of them while there are at most k). The summary calls are
    the memory cost the paper's Table 6 counts: their prompt tokens go to ``memory_prompt_tokens``,
    their generated tokens to ``memory_completion_tokens``.

    Simpler than either system on purpose (one summary per session, no personality or topic
    terms, no decay): it isolates "memory written by the LLM" against G-Long's extracted triples.
    """

    name = "Summary memory"

    def __init__(self, generator, summary_tokens: int = 64, **kwargs):
        super().__init__(generator, **kwargs)
        self.summary_tokens = int(summary_tokens)

    @property
    def summaries(self) -> list[str]:
        """The summaries written so far, oldest first (the units the retriever indexes)."""
        return [t.text for t in self.turns]

    def observe_session(self, session, conversation) -> None:
        gen = self.generator.generate(summary_messages(session, self.user_name, self.agent_name),
                                      max_new_tokens=self.summary_tokens)
        self.memory_prompt_tokens += gen.prompt_tokens
        self.memory_completion_tokens += gen.completion_tokens
        text = " ".join(gen.text.split()) or "(empty summary)"
        end = session.turns[-1].time_s if session.turns else 0.0
        # a summary is a unit to retrieve, written "Session N summary: ..." like a turn line
        self.turns.append(Turn(f"summary-{session.index}", f"Session {session.index} summary", text, time_s=end))
        self.retriever = self.build_retriever(self.turns)


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
                 update_access: bool = True, memory_format: str = "arrow", name: Optional[str] = None):
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
                    memory_format: str = "arrow") -> dict[str, GLongAgent]:
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


#: The agent keys (their home is ``config``, where the command line reads them without torch).


def make_agents(generator, methods: Sequence[str] = AGENT_METHODS, source: Optional[TripleSource] = None,
                encoder=None, memory_format: str = "arrow",
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
