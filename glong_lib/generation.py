"""Response generation (paper section 3.5): the prompt ``P = [I; M_Long; C_current]`` and the
generator backends that turn it into a reply, counting every prompt and completion token.

The prompt is the paper's (Figure 8, adopted from LD-Agent with its user-traits block removed):
a system line that casts the model as the agent, then a user message with the recent dialogue
(``<CONTEXT>``), the retrieved memories (``<MEMORY>``) and the role-play instruction holding the
user's utterance. Memories are written one per line, either in the paper's arrow format
``s -r-> o`` or in the reference code's ranked format
``[Rank i] (Active X days Y hours Z minutes ago) h r t``; with none, ``No relevant Memories.``

Two backends share one interface, ``.generate(messages) -> Generation``:

* :class:`LocalChatGenerator`: any chat model through transformers (offline default: the bundled
  SmolLM2-135M-Instruct), greedy decoding (the paper's temperature 0), prompts cut from the left
  to the model's context window so the instruction at the end always survives;
* :class:`OpenAICompatibleGenerator`: ``POST {base_url}/chat/completions`` of any
  OpenAI-compatible server (OpenAI itself, vLLM, llama.cpp, Ollama ...), with the key read from an
  environment variable, using only the standard library (urllib).

>>> msgs = build_prompt("Leo", "Maya", ["Maya: I moved to Denver."], [("Maya", "live_in", "Denver")],
...                     "Guess what, I got a cat!")
>>> print(msgs[1]["content"])
<CONTEXT>
Drawing from your recent conversation with Maya:
Maya: I moved to Denver.
<MEMORY>
The memories linked to the ongoing conversation are:
Maya -live_in-> Denver
Now, please role-play as Leo to continue the dialogue between Leo and Maya. Maya said: Guess what, I got a cat! Please respond to Maya's statement:
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

from .errors import DataError
from .models import BUNDLED_SMOLLM2, load_causal_lm
from .schema import MemoryEdge, Triple

#: The system line of the paper's prompt (Figure 8).
SYSTEM_TEMPLATE = ("As a communication expert with outstanding communication habits, you embody the role of "
                   "{agent} throughout the following dialogues.")
CONTEXT_HEADER = "<CONTEXT>\nDrawing from your recent conversation with {user}:"
MEMORY_HEADER = "<MEMORY>\nThe memories linked to the ongoing conversation are:"
INSTRUCTION_TEMPLATE = ("Now, please role-play as {agent} to continue the dialogue between {agent} and {user}. "
                        "{user} said: {utterance} Please respond to {user}'s statement:")
NO_MEMORIES = "No relevant Memories."
MEMORY_FORMATS = ("arrow", "ranked")

Messages = list[dict[str, str]]
MemoryItem = Union[MemoryEdge, Triple, tuple, str]


class GenerationError(RuntimeError):
    """A generator backend could not produce a reply (HTTP error, timeout, malformed answer)."""


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


def format_memory(item: MemoryItem, memory_format: str = "arrow", rank: int = 1,
                  now_s: Optional[float] = None) -> str:
    """One memory line. Strings (raw turns of the RAG baselines) pass through unchanged in the
    arrow format and get the rank prefix in the ranked one. The ranked format's "ago" counts from
    the edge's *creation* time, as in the reference code (Eq. 4 uses the last access instead).

    >>> format_memory(("Maya", "has_pet", "cat"))
    'Maya -has_pet-> cat'
    >>> e = MemoryEdge("Maya", "has_pet", "cat", 1.0, created_s=0.0, last_access_s=0.0)
    >>> format_memory(e, "ranked", rank=2, now_s=2 * 86400 + 300)
    '[Rank 2] (Active 2.0 days 0.0 hours 5.0 minutes ago) Maya has_pet cat'
    """
    if memory_format not in MEMORY_FORMATS:
        raise DataError(f"unknown memory format '{memory_format}' (choose from {', '.join(MEMORY_FORMATS)})")
    if isinstance(item, str):
        return item if memory_format == "arrow" else f"[Rank {rank}] {item}"
    s, r, o = _parts(item)
    if memory_format == "arrow":
        return f"{s} -{r}-> {o}"
    label = ""
    if isinstance(item, MemoryEdge) and now_s is not None:
        label = f"(Active {format_elapsed(now_s - item.created_s)} ago) "
    return f"[Rank {rank}] {label}{s} {r} {o}"


def format_memories(memories: Sequence[MemoryItem], memory_format: str = "arrow",
                    now_s: Optional[float] = None) -> str:
    """All memory lines, or the paper's ``No relevant Memories.`` when there are none."""
    if not memories:
        return NO_MEMORIES
    return "\n".join(format_memory(m, memory_format, i, now_s) for i, m in enumerate(memories, start=1))


def build_prompt(agent_name: str, user_name: str, context_lines: Sequence[str], memories: Sequence[MemoryItem],
                 utterance: str, memory_format: str = "arrow", now_s: Optional[float] = None) -> Messages:
    """The paper's prompt as chat messages: the system line, then one user message with
    ``<CONTEXT>`` (the recent dialogue), ``<MEMORY>`` (the retrieved memories) and the
    role-play instruction carrying the user's utterance (see the module docstring)."""
    if not str(utterance).strip():
        raise DataError("the user's utterance is empty")
    user = "\n".join([
        CONTEXT_HEADER.format(user=user_name), *context_lines,
        MEMORY_HEADER, format_memories(memories, memory_format, now_s),
        INSTRUCTION_TEMPLATE.format(agent=agent_name, user=user_name, utterance=str(utterance).strip()),
    ])
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


def clean_reply(text: str, agent_name: Optional[str] = None) -> str:
    """The reply as one utterance: an echoed ``Agent:`` prefix removed (small chat models often
    start their turn with the speaker's name), then its first non-empty line (what follows a line
    break is the model writing further turns of the dialogue, not its reply).

    >>> clean_reply("  Leo: Nice to hear!  \\nMaya: Thanks", "Leo")
    'Nice to hear!'
    >>> clean_reply("Leo:\\nSure thing.", "Leo")
    'Sure thing.'
    """
    text = text.strip()
    if agent_name:
        text = re.sub(rf"^\s*{re.escape(agent_name)}\s*:\s*", "", text)
    return next((line.strip() for line in text.split("\n") if line.strip()), "")


def messages_key(messages: Messages) -> str:
    return json.dumps(messages, sort_keys=True, ensure_ascii=False)


class ReplyCache:
    """Replies to prompts already answered (greedy decoding repeats them exactly). A hit comes back
    with ``cached=True`` and zero seconds, its token counts kept, so accounting stays exact."""

    def __init__(self):
        self._replies: dict[str, Generation] = {}

    def get(self, messages: Messages) -> Optional[Generation]:
        hit = self._replies.get(messages_key(messages))
        return None if hit is None else Generation(hit.text, hit.prompt_tokens, hit.completion_tokens, 0.0,
                                                   cached=True)

    def put(self, messages: Messages, result: Generation) -> Generation:
        self._replies[messages_key(messages)] = result
        return result

    def __len__(self) -> int:
        return len(self._replies)


def chat_token_ids(tokenizer, messages: Messages) -> list[int]:
    """The token ids a chat model reads for ``messages`` (its chat template, generation prompt added)."""
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):  # transformers 5 may return a BatchEncoding
        ids = ids["input_ids"]
    return list(ids)


# --------------------------------------------------------------------------- local backend

class LocalChatGenerator:
    """A chat model run locally through transformers, greedy (temperature 0).

    ``context_window`` defaults to the model's ``max_position_embeddings``; prompts longer than
    ``context_window - max_new_tokens`` lose tokens from the left (the instruction is at the end).
    Agents avoid that by fitting whole context lines with :func:`fit_prompt`. With
    ``stop_at_line_end`` decoding stops once the reply has a complete first line (a small model
    otherwise goes on writing both sides of the dialogue; :func:`clean_reply` keeps that first
    line anyway, so stopping only saves time). ``cache`` remembers
    replies to identical prompts (greedy decoding is deterministic): the tokens are still
    counted, only the compute is saved, and ``Generation.cached`` says so.
    """

    backend = "local"

    def __init__(self, ref: str = BUNDLED_SMOLLM2, max_new_tokens: int = 48, device: Optional[str] = None,
                 context_window: Optional[int] = None, cache: bool = True, stop_at_line_end: bool = True,
                 tokenizer=None, model=None):
        self.ref = ref
        self.stop_at_line_end = stop_at_line_end
        self.max_new_tokens = int(max_new_tokens)
        self.device = device
        self._context_window = context_window
        self.cache: Optional[ReplyCache] = ReplyCache() if cache else None
        self._tok, self._model = tokenizer, model
        self.name = "SmolLM2-135M-Instruct" if ref == BUNDLED_SMOLLM2 else str(ref)

    def _load(self) -> None:
        if self._model is None:
            self._tok, self._model = load_causal_lm(self.ref, device=self.device)

    @property
    def tokenizer(self):
        self._load()
        return self._tok

    @property
    def context_window(self) -> int:
        if self._context_window is None:
            self._load()
            self._context_window = int(getattr(self._model.config, "max_position_embeddings", 2048))
        return self._context_window

    @property
    def max_prompt_tokens(self) -> int:
        return self.context_window - self.max_new_tokens

    def _encode(self, messages: Messages) -> list[int]:
        return chat_token_ids(self.tokenizer, messages)

    def count_tokens(self, messages: Messages) -> int:
        """Tokens of the templated prompt, exactly what ``generate`` feeds the model."""
        return len(self._encode(messages))

    def generate(self, messages: Messages) -> Generation:
        import torch

        hit = self.cache.get(messages) if self.cache is not None else None
        if hit is not None:
            return hit
        start = time.perf_counter()
        ids = self._encode(messages)[-self.max_prompt_tokens:]  # left truncation keeps the instruction
        input_ids = torch.tensor([ids], device=self._model.device)
        stop = [_FirstLineDone(self._tok, len(ids))] if self.stop_at_line_end else []
        with torch.no_grad():
            out = self._model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                       max_new_tokens=self.max_new_tokens, do_sample=False,
                                       pad_token_id=self._tok.pad_token_id, stopping_criteria=stop)
        new = out[0, len(ids):].tolist()
        eos = self._tok.eos_token_id
        if eos in new:  # count the reply up to and including its end-of-turn token
            new = new[: new.index(eos) + 1]
        text = self._tok.decode(new, skip_special_tokens=True)
        result = Generation(text, len(ids), len(new), time.perf_counter() - start)
        return self.cache.put(messages, result) if self.cache is not None else result


_SPEAKER_TAG = re.compile(r"^\s*[^\n:]{1,40}:[ \t]*")


class _FirstLineDone:
    """Stopping criterion: the new text (after any ``Name:`` tag) holds a non-empty line that a
    line break has closed. Called by ``generate`` after each token; batch size 1."""

    def __init__(self, tokenizer, start: int):
        self.tokenizer, self.start = tokenizer, start

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        text = self.tokenizer.decode(input_ids[0, self.start:], skip_special_tokens=True)
        done = re.search(r"\S[^\n]*\n", _SPEAKER_TAG.sub("", text, count=1)) is not None
        return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)


# --------------------------------------------------------------------------- model-free backend

class MemoryEchoGenerator:
    """A model-free generator for pipeline checks and tests: it answers with the first memory line
    of the prompt (or ``fallback`` when there is none), so runs take milliseconds and every
    number downstream (tokens, context handling, scores) is still computed for real.

    Tokens are counted with ``tokenizer`` when given (through its chat template when it has one:
    then prompt counts equal what :class:`LocalChatGenerator` with that tokenizer reports, since a
    prompt never depends on earlier generated replies), else as whitespace-separated words.

    >>> g = MemoryEchoGenerator()
    >>> r = g.generate(build_prompt("Leo", "Maya", [], [("Maya", "has_pet", "cat")], "Hi!"))
    >>> r.text, r.completion_tokens
    ('Maya -has_pet-> cat', 3)
    """

    backend = "echo"
    name = "memory-echo (no model)"

    def __init__(self, fallback: str = "I see.", context_window: int = 8192, max_new_tokens: int = 48,
                 tokenizer=None):
        self.fallback = fallback
        self.context_window = int(context_window)
        self.max_new_tokens = int(max_new_tokens)
        self.tokenizer = tokenizer

    @property
    def max_prompt_tokens(self) -> int:
        return self.context_window - self.max_new_tokens

    def _count(self, text: str) -> int:
        return len(self.tokenizer.encode(text)) if self.tokenizer is not None else len(text.split())

    def count_tokens(self, messages: Messages) -> int:
        if hasattr(self.tokenizer, "apply_chat_template"):
            return len(chat_token_ids(self.tokenizer, messages))
        return sum(self._count(m["content"]) for m in messages)

    def generate(self, messages: Messages) -> Generation:
        lines = messages[-1]["content"].split("\n")
        header = MEMORY_HEADER.split("\n")[-1]
        first = lines[lines.index(header) + 1] if header in lines else NO_MEMORIES
        text = self.fallback if first == NO_MEMORIES else first
        return Generation(text, self.count_tokens(messages), self._count(text))


# --------------------------------------------------------------------------- OpenAI-compatible backend

class OpenAICompatibleGenerator:
    """Any OpenAI-compatible chat endpoint: ``POST {base_url}/chat/completions``.

    The key comes from the environment variable ``api_key_env`` (no header when it is unset, for
    local servers that need none). Token counts come from the reply's ``usage``; when a server
    leaves it out they are counted locally with ``tokenizer`` (anything with ``.encode(text)``;
    by default the bundled SmolLM2 tokenizer, an approximation of the server's own). HTTP error
    replies and timeouts raise :class:`GenerationError` with the server's message; 429 and 5xx
    are retried ``retries`` times with exponential back-off first.
    """

    backend = "openai"

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", timeout: float = 30,
                 max_new_tokens: int = 48, temperature: float = 0.0, context_window: int = 128_000,
                 retries: int = 2, backoff_s: float = 1.0, tokenizer=None, cache: bool = True):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = float(temperature)
        self.context_window = int(context_window)
        self.retries = int(retries)
        self.backoff_s = float(backoff_s)
        self._tokenizer = tokenizer
        self.cache: Optional[ReplyCache] = ReplyCache() if cache else None

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    @property
    def max_prompt_tokens(self) -> int:
        return self.context_window - self.max_new_tokens

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            from .models import causal_lm_path

            self._tokenizer = AutoTokenizer.from_pretrained(causal_lm_path(BUNDLED_SMOLLM2))
        return self._tokenizer

    def _count(self, text: str) -> int:
        return len(self.tokenizer.encode(text))

    def count_tokens(self, messages: Messages) -> int:
        """A local estimate of the prompt's tokens (the server's own count arrives with the reply)."""
        return sum(self._count(m["content"]) + 4 for m in messages)  # ~4 tokens of chat framing each

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url, data=json.dumps(payload).encode(), headers=headers, method="POST")
        for attempt in range(self.retries + 1):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                    return json.loads(reply.read().decode("utf-8"))
            except urllib.error.HTTPError as e:
                if (e.code == 429 or e.code >= 500) and attempt < self.retries:
                    time.sleep(self.backoff_s * 2 ** attempt)
                    continue
                raise GenerationError(f"{self.url} answered HTTP {e.code}: {_error_message(e)}") from None
            except (socket.timeout, TimeoutError):
                raise GenerationError(f"{self.url} did not answer within {self.timeout:g} s") from None
            except urllib.error.URLError as e:
                if isinstance(e.reason, (socket.timeout, TimeoutError)):
                    raise GenerationError(f"{self.url} did not answer within {self.timeout:g} s") from None
                raise GenerationError(f"cannot reach {self.url}: {e.reason}") from None
            except json.JSONDecodeError:
                raise GenerationError(f"{self.url} answered with something that is not JSON") from None
        raise GenerationError(f"{self.url}: no reply after {self.retries + 1} attempts")  # pragma: no cover

    def generate(self, messages: Messages) -> Generation:
        hit = self.cache.get(messages) if self.cache is not None else None
        if hit is not None:
            return hit
        start = time.perf_counter()
        body = self._post({"model": self.model, "messages": messages, "temperature": self.temperature,
                           "max_tokens": self.max_new_tokens})
        try:
            text = body["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise GenerationError(f"{self.url} answered without choices[0].message.content") from None
        usage = body.get("usage") or {}
        prompt = usage.get("prompt_tokens")
        completion = usage.get("completion_tokens")
        result = Generation(text, int(prompt) if prompt is not None else self.count_tokens(messages),
                            int(completion) if completion is not None else self._count(text),
                            time.perf_counter() - start)
        return self.cache.put(messages, result) if self.cache is not None else result


def _error_message(error: urllib.error.HTTPError) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the raw body (shortened)."""
    try:
        raw = error.read().decode("utf-8", "replace")
    except Exception:  # the body may already be closed
        return error.reason or "no body"
    try:
        err = json.loads(raw).get("error")
        if isinstance(err, dict) and err.get("message"):
            kind = f" ({err['type']})" if err.get("type") else ""
            return f"{err['message']}{kind}"
    except (json.JSONDecodeError, AttributeError):
        pass
    return raw.strip()[:200] or str(error.reason)


def make_generator(profile: str = "offline", max_new_tokens: int = 48, base_url: Optional[str] = None,
                   model: Optional[str] = None, api_key_env: str = "OPENAI_API_KEY", **kwargs):
    """The generator of a profile, or an OpenAI-compatible one when ``base_url`` is given.

    The ``paper`` profile's ``openai:gpt-4o-mini`` needs ``base_url`` (e.g. https://api.openai.com/v1).
    """
    from .models import get_profile

    ref = get_profile(profile).generator
    if base_url or ref.startswith("openai:"):
        if not base_url:
            raise DataError(f"profile '{profile}' generates with {ref}: give base_url (an OpenAI-compatible endpoint)")
        name = model or (ref.split(":", 1)[1] if ref.startswith("openai:") else "gpt-4o-mini")
        return OpenAICompatibleGenerator(base_url, name, api_key_env=api_key_env, max_new_tokens=max_new_tokens,
                                         **kwargs)
    return LocalChatGenerator(model or ref, max_new_tokens=max_new_tokens, **kwargs)


__all__ = [
    "SYSTEM_TEMPLATE", "NO_MEMORIES", "MEMORY_FORMATS", "Generation", "GenerationError", "format_elapsed",
    "format_memory", "format_memories", "build_prompt", "fit_prompt", "clean_reply", "LocalChatGenerator",
    "MemoryEchoGenerator", "OpenAICompatibleGenerator", "make_generator", "chat_token_ids",
]
