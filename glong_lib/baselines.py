"""The baseline agents G-Long is compared with (paper section 4.1.2, Tables 1 and 6): no history,
the long raw context, retrieval over raw past turns (dense and BM25), and a memory of session
summaries the generator writes. Each fills ``<CONTEXT>`` and ``<MEMORY>`` its own way (the table
in :mod:`glong_lib.agent`) and otherwise runs the shared loop of :class:`~glong_lib.agent_base.Agent`.
"""

from __future__ import annotations

from typing import Optional

from .agent_base import Agent
from .models import load_encoder
from .retrieval import BM25TurnRetriever, DenseTurnRetriever
from .schema import Session, Turn
from .text import turn_line


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
