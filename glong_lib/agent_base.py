"""The interface every dialogue agent shares (:mod:`glong_lib.agent` lists the agents): the loop
that turns context lines and memories into the paper's prompt, fits it and generates.

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

from dataclasses import dataclass, field
from typing import Optional, Sequence, Union

from .config import PAPER_MEMORY_FORMAT
from .errors import DataError
from .generation import build_prompt, clean_reply, fit_prompt, format_memory
from .schema import Conversation, Session, Turn
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

    def __init__(self, generator, memory_format: str = PAPER_MEMORY_FORMAT, name: Optional[str] = None):
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

