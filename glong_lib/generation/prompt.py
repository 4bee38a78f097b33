"""The generation prompt ``P = [I; M_Long; C_current]`` (paper section 3.5, Figure 8): instruction,
retrieved memories, current context, fitted to the generator's window.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, replace
from typing import Callable, Optional, Sequence, Union

from ..config import MEMORY_FORMATS, PAPER_MEMORY_FORMAT  # noqa: F401  (MEMORY_FORMATS: re-exported)
from ..errors import DataError, GenerationError  # noqa: F401  (GenerationError: re-exported)
from ..schema import MemoryEdge, Triple

#: The system line of the paper's prompt (Figure 8).
SYSTEM_TEMPLATE = ("As a communication expert with outstanding communication habits, you embody the role of "
                   "{agent} throughout the following dialogues.")
CONTEXT_HEADER = "<CONTEXT>\nDrawing from your recent conversation with {user}:"
MEMORY_HEADER = "<MEMORY>\nThe memories linked to the ongoing conversation are:"
INSTRUCTION_TEMPLATE = ("Now, please role-play as {agent} to continue the dialogue between {agent} and {user}. "
                        "{user} said: {utterance} Please respond to {user}'s statement:")
NO_MEMORIES = "No relevant Memories."
PLAIN_CONTEXT_HEADER = "Your conversation with {user} so far:"
PLAIN_MEMORY_HEADER = "What you remember about {user} and yourself from earlier conversations:"

Messages = list[dict[str, str]]
MemoryItem = Union[MemoryEdge, Triple, tuple, str]


@dataclass
class Generation:
    """One reply and what it cost: tokens in (the whole templated prompt) and tokens out."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float = 0.0
    cached: bool = False

# --------------------------------------------------------------------------- the prompt

def format_elapsed(seconds: float) -> str:
    """The reference code's "X days Y hours Z minutes" label (floats, as it prints them).

    >>> format_elapsed(13 * 86400 + 3600 + 120)
    '13.0 days 1.0 hours 2.0 minutes'
    >>> format_elapsed(-5)
    '0.0 days 0.0 hours 0.0 minutes'
    """
    s = max(0.0, float(seconds))
    days, rest = divmod(s, 86400)
    hours, rest = divmod(rest, 3600)
    return f"{days:.1f} days {hours:.1f} hours {rest // 60:.1f} minutes"


def _parts(item: MemoryItem) -> tuple[str, str, str]:
    if isinstance(item, (MemoryEdge, Triple)):
        return item.subject, item.relation, item.object
    if isinstance(item, tuple) and len(item) == 3:
        return tuple(str(x) for x in item)  # type: ignore[return-value]
    raise DataError(f"a memory must be a MemoryEdge, Triple, (s, r, o) tuple or string, got {type(item).__name__}")


def format_memory(item: MemoryItem, memory_format: str = PAPER_MEMORY_FORMAT, rank: int = 1,
                  now_s: Optional[float] = None) -> str:
    """One memory line. Strings (raw turns of the RAG baselines) pass through unchanged in the
    arrow format, get the rank prefix in the ranked one and a dash in the plain one. The ranked
    format's "ago" counts from the edge's *creation* time, as in the reference code (Eq. 4 uses the
    last access instead). The plain format writes a triple as words: no arrows, no underscores.

    >>> format_memory(("Maya", "has_pet", "cat"))
    'Maya -has_pet-> cat'
    >>> format_memory(("Maya", "has_pet", "cat"), "plain")
    '- Maya has pet cat'
    >>> e = MemoryEdge("Maya", "has_pet", "cat", 1.0, created_s=0.0, last_access_s=0.0)
    >>> format_memory(e, "ranked", rank=2, now_s=2 * 86400 + 300)
    '[Rank 2] (Active 2.0 days 0.0 hours 5.0 minutes ago) Maya has_pet cat'
    """
    if memory_format not in MEMORY_FORMATS:
        raise DataError(f"unknown memory format '{memory_format}' (choose from {', '.join(MEMORY_FORMATS)})")
    if isinstance(item, str):
        return {"arrow": item, "plain": f"- {item}"}.get(memory_format, f"[Rank {rank}] {item}")
    s, r, o = _parts(item)
    if memory_format == "arrow":
        return f"{s} -{r}-> {o}"
    if memory_format == "plain":
        return f"- {s} {r.replace('_', ' ')} {o}"
    label = ""
    if isinstance(item, MemoryEdge) and now_s is not None:
        label = f"(Active {format_elapsed(now_s - item.created_s)} ago) "
    return f"[Rank {rank}] {label}{s} {r} {o}"


def format_memories(memories: Sequence[MemoryItem], memory_format: str = PAPER_MEMORY_FORMAT,
                    now_s: Optional[float] = None) -> str:
    """All memory lines, or the paper's ``No relevant Memories.`` when there are none."""
    if not memories:
        return NO_MEMORIES
    return "\n".join(format_memory(m, memory_format, i, now_s) for i, m in enumerate(memories, start=1))


def build_prompt(agent_name: str, user_name: str, context_lines: Sequence[str], memories: Sequence[MemoryItem],
                 utterance: str, memory_format: str = PAPER_MEMORY_FORMAT, now_s: Optional[float] = None) -> Messages:
    """The paper's prompt as chat messages: the system line, then one user message with
    ``<CONTEXT>`` (the recent dialogue), ``<MEMORY>`` (the retrieved memories) and the
    role-play instruction carrying the user's utterance (see the module docstring).

    ``memory_format="plain"`` keeps the words and drops the markup: no ``<CONTEXT>``/``<MEMORY>``
    tags, memory lines as dashed phrases under a plain header, and a block left out when it is empty
    (the paper's ``No relevant Memories.``, like its tags, is text a 135M model copies as its reply).

    >>> print(build_prompt("Leo", "Maya", [], [("maya", "has_pet", "cat")], "Hi!", "plain")[1]["content"])
    What you remember about Maya and yourself from earlier conversations:
    - maya has pet cat
    Now, please role-play as Leo to continue the dialogue between Leo and Maya. Maya said: Hi! Please respond to Maya's statement:
    """  # noqa: E501 (a doctest's expected output line)
    if not str(utterance).strip():
        raise DataError("the user's utterance is empty")
    instruction = INSTRUCTION_TEMPLATE.format(agent=agent_name, user=user_name, utterance=str(utterance).strip())
    if memory_format == "plain":
        blocks = [[PLAIN_CONTEXT_HEADER.format(user=user_name), *context_lines] if context_lines else [],
                  [PLAIN_MEMORY_HEADER.format(user=user_name), format_memories(memories, memory_format, now_s)]
                  if memories else []]
        user = "\n".join([*blocks[0], *blocks[1], instruction])
    else:
        user = "\n".join([CONTEXT_HEADER.format(user=user_name), *context_lines,
                          MEMORY_HEADER, format_memories(memories, memory_format, now_s), instruction])
    return [{"role": "system", "content": SYSTEM_TEMPLATE.format(agent=agent_name)},
            {"role": "user", "content": user}]


def fit_prompt(make_messages: Callable[[Sequence[str]], Messages], context_lines: Sequence[str],
               count_tokens: Callable[[Messages], int], budget: int) -> tuple[Messages, int]:
    """Drop the *oldest* context lines until the prompt fits ``budget`` tokens; return the
    messages and how many lines were dropped. Cutting whole lines from the left keeps the
    instruction (and the user's utterance) at the end intact.

    >>> make = lambda lines: [{"role": "user", "content": " ".join(["go"] + list(lines))}]
    >>> words = lambda msgs: len(msgs[0]["content"].split())
    >>> fit_prompt(make, ["a b", "c d", "e"], words, budget=4)
    ([{'role': 'user', 'content': 'go c d e'}], 1)
    """
    lines = list(context_lines)
    if count_tokens(make_messages(lines)) <= budget:
        return make_messages(lines), 0
    lo, hi = 1, len(lines)  # binary search for the fewest lines to drop
    while lo < hi:
        mid = (lo + hi) // 2
        if count_tokens(make_messages(lines[mid:])) <= budget:
            hi = mid
        else:
            lo = mid + 1
    return make_messages(lines[lo:]), lo


def clean_reply(text: str, agent_name: Optional[str] = None, first_line: bool = True) -> str:
    """The reply as one utterance: an echoed ``Agent:`` prefix removed (small chat models often
    start their turn with the speaker's name), then, with ``first_line``, its first non-empty line.

    Why the cut exists: the bundled 135M model never ends its turn. Given 160 tokens on real MSC
    prompts it used all 160 every time, went on to write the user's next turn or re-printed the
    prompt's ``<MEMORY>`` block (``benchmarks/bench_msc.py --reply-probe``). A model that ends its
    own turn (an API model, ``first_line_only = False``) keeps its whole reply, as in the paper.

    >>> clean_reply("  Leo: Nice to hear!  \\nMaya: Thanks", "Leo")
    'Nice to hear!'
    >>> clean_reply("Leo:\\nSure thing.", "Leo")
    'Sure thing.'
    >>> clean_reply("Leo: Nice!\\nSee you.", "Leo", first_line=False)
    'Nice!\\nSee you.'
    """
    text = text.strip()
    if agent_name:
        text = re.sub(rf"^\s*{re.escape(agent_name)}\s*:\s*", "", text)
    if not first_line:
        return text.strip()
    return next((line.strip() for line in text.split("\n") if line.strip()), "")


def _bare(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lstrip("-").strip().rstrip(".!?:").lower())


def echo_kind(reply: str, memory_lines: Sequence[str] = (), utterance: Optional[str] = None) -> Optional[str]:
    """What a reply copied from its prompt instead of answering, or None when it copied nothing:

    * ``"markup"``: it starts with a ``<TAG>``, or it is (case, a leading dash and end punctuation
      aside) a header of either memory format or ``No relevant Memories.``;
    * ``"memory line"``: it is one of ``memory_lines``;
    * ``"system/instruction"``: it repeats :data:`COPY_RUN` consecutive words of the system line or
      the role-play instruction ("a communication expert with outstanding ...");
    * ``"user's words"``: it repeats :data:`COPY_RUN` consecutive words of the user's ``utterance``.

    >>> [echo_kind(r) for r in ("<MEMORY>", "No relevant memories", "Sure, I remember!")]
    ['markup', 'markup', None]
    >>> echo_kind("maya has pet cat.", ["- maya has pet cat"])
    'memory line'
    >>> echo_kind("Hi, I'm Leo, a communication expert with outstanding communication habits.")
    'system/instruction'
    >>> echo_kind("Oh, I actually tried the carbonara too!", utterance="Leo! I actually tried the carbonara.")
    "user's words"
    >>> echo_kind("Did you like the carbonara?", utterance="Leo! I actually tried the carbonara.") is None
    True
    """
    bare = _bare(reply)
    if re.match(r"\s*<[A-Z]+>", reply) or (bare and bare.startswith(_ECHO_PREFIXES)):
        return "markup"
    if bare and bare in {_bare(m) for m in memory_lines}:
        return "memory line"
    runs = _word_runs(reply)
    if runs & _FIXED_RUNS:
        return "system/instruction"
    if utterance and runs & _word_runs(utterance):
        return "user's words"
    return None


def is_prompt_echo(reply: str, memory_lines: Sequence[str] = (), utterance: Optional[str] = None) -> bool:
    """Whether a reply copies its prompt instead of answering (:func:`echo_kind` says what it copied).

    >>> [is_prompt_echo(r) for r in ("<MEMORY>", "No relevant memories", "Sure, I remember!")]
    [True, True, False]
    >>> is_prompt_echo("maya has pet cat.", ["- maya has pet cat"])
    True
    """
    return echo_kind(reply, memory_lines, utterance) is not None


#: What :func:`echo_kind` can say a reply copied, in the order it checks.
ECHO_KINDS = ("markup", "memory line", "system/instruction", "user's words")

#: Consecutive words a reply must share with the system line, the instruction or the user's
#: utterance to count as copying it (five: longer than the stock phrases replies share by chance).
COPY_RUN = 5


def _word_runs(text: str, n: int = COPY_RUN) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


#: The prompt's fixed lines of both formats as :func:`echo_kind` compares them (up to the user's name).
_ECHO_PREFIXES = tuple(sorted({_bare(line.split("{user}")[0]) for h in (MEMORY_HEADER, CONTEXT_HEADER, NO_MEMORIES,
                                                                       PLAIN_CONTEXT_HEADER, PLAIN_MEMORY_HEADER)
                               for line in h.split("\n")} - {""}))
#: Word runs of the system line and the instruction, each stretch between two placeholders on its own.
_FIXED_RUNS = {run for template in (SYSTEM_TEMPLATE, INSTRUCTION_TEMPLATE)
               for piece in re.split(r"\{[a-z]+\}", template) for run in _word_runs(piece)}


def messages_key(messages: Messages) -> str:
    return json.dumps(messages, sort_keys=True, ensure_ascii=False)


class ReplyCache:
    """Replies to prompts already answered (greedy decoding repeats them exactly), keyed by the
    messages and the token limit they were generated under (a longer limit is another reply). A hit
    comes back with ``cached=True`` and zero seconds, its token counts kept, so accounting stays exact."""

    def __init__(self):
        self._replies: dict[tuple[str, int], Generation] = {}

    def get(self, messages: Messages, limit: int) -> Optional[Generation]:
        hit = self._replies.get((messages_key(messages), limit))
        return None if hit is None else Generation(hit.text, hit.prompt_tokens, hit.completion_tokens, 0.0,
                                                   cached=True)

    def put(self, messages: Messages, limit: int, result: Generation) -> Generation:
        self._replies[(messages_key(messages), limit)] = result
        return result

    def __len__(self) -> int:
        return len(self._replies)


class CachingGenerator:
    """What the model-backed generators share: ``generate`` answers a prompt already answered
    under the same token limit from ``self.cache`` (a :class:`ReplyCache`, or None for none) and
    times a fresh reply, which a backend writes in ``_complete(messages, limit) -> Generation``.

    >>> class Shout(CachingGenerator):
    ...     max_new_tokens, cache, calls = 8, ReplyCache(), 0
    ...     def _complete(self, messages, limit):
    ...         self.calls += 1
    ...         return Generation(messages[-1]["content"].upper(), 1, 1)
    >>> g, hi = Shout(), [{"role": "user", "content": "hi"}]
    >>> [(r.text, r.cached) for r in (g.generate(hi), g.generate(hi), g.generate(hi, max_new_tokens=4))], g.calls
    ([('HI', False), ('HI', True), ('HI', False)], 2)
    """

    cache: Optional[ReplyCache] = None
    max_new_tokens: int = 48

    def generate(self, messages: Messages, max_new_tokens: Optional[int] = None) -> Generation:
        """The reply to ``messages``; ``max_new_tokens`` overrides the generator's limit for this call
        (memory-writing calls such as session summaries need more room than a reply). A limit of
        None (an API generator's default) sends no cap."""
        limit = max_new_tokens or self.max_new_tokens
        limit = None if limit is None else int(limit)
        hit = self.cache.get(messages, limit) if self.cache is not None else None
        if hit is not None:
            return hit
        start = time.perf_counter()
        result = replace(self._complete(messages, limit), seconds=time.perf_counter() - start)
        return self.cache.put(messages, limit, result) if self.cache is not None else result

    def generate_many(self, prompts: Sequence[Messages], max_new_tokens: Optional[int] = None,
                      progress: bool = False) -> list[Generation]:
        """The replies to ``prompts`` in their order (one at a time here; a remote backend keeps
        several requests in flight)."""
        return [self.generate(m, max_new_tokens) for m in prompts]

    def _complete(self, messages: Messages, limit: Optional[int]) -> Generation:
        raise NotImplementedError


def chat_token_ids(tokenizer, messages: Messages) -> list[int]:
    """The token ids a chat model reads for ``messages`` (its chat template, generation prompt added)."""
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):  # transformers 5 may return a BatchEncoding
        ids = ids["input_ids"]
    return list(ids)



