"""Generators that run here: a local chat LM (greedy, transformers) and a model-free echo generator
for tests and smoke runs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from ..artifacts import verify_artifact
from ..errors import DataError
from ..models import BUNDLED_SMOLLM2, load_causal_lm, loading
from .prompt import (
    MEMORY_HEADER,
    NO_MEMORIES,
    PLAIN_MEMORY_HEADER,
    CachingGenerator,
    Generation,
    Messages,
    ReplyCache,
    chat_token_ids,
)

# --------------------------------------------------------------------------- local backend

class LocalChatGenerator(CachingGenerator):
    """A chat model run locally through transformers, greedy (temperature 0).

    ``context_window`` defaults to the model's ``max_position_embeddings``; prompts longer than
    ``context_window - max_new_tokens`` lose tokens from the left (the instruction is at the end).
    Agents avoid that by fitting whole context lines with :func:`fit_prompt`. With
    ``stop_at_line_end`` decoding stops once the reply has a complete first line (a small model
    otherwise goes on writing both sides of the dialogue; :func:`clean_reply` keeps that first
    line anyway, so stopping only saves time). ``cache`` remembers
    replies to identical prompts (greedy decoding is deterministic): the tokens are still
    counted, only the compute is saved, and ``Generation.cached`` says so. ``adapter`` is a peft
    LoRA folder (e.g. the MSC responder of ``generation.responder``) merged into the model on load.
    """

    backend = "local"

    def __init__(self, ref: str = BUNDLED_SMOLLM2, max_new_tokens: int = 48, device: Optional[str] = None,
                 context_window: Optional[int] = None, cache: bool = True, stop_at_line_end: bool = True,
                 tokenizer=None, model=None, adapter: Optional[str] = None):
        self.ref = ref
        self.adapter = adapter
        self.stop_at_line_end = stop_at_line_end
        self.max_new_tokens = int(max_new_tokens)
        self.device = device
        self._context_window = context_window
        self.cache: Optional[ReplyCache] = ReplyCache() if cache else None
        self._tok, self._model = tokenizer, model
        self.name = "SmolLM2-135M-Instruct" if ref == BUNDLED_SMOLLM2 else str(ref)
        if adapter:
            if not (Path(adapter) / "adapter_config.json").is_file():
                raise DataError(f"no LoRA adapter in {adapter} (adapter_config.json missing)")
            self.name += f" + LoRA {Path(adapter).name}"

    def _load(self) -> None:
        if self._model is None:
            if self.adapter:  # as the extractor's: damage in place loads fine and answers wrongly
                verify_artifact(self.adapter, "responder adapter")
            tok, model = load_causal_lm(self.ref, device=self.device)
            if self.adapter:
                from peft import PeftModel

                with loading("responder adapter", str(self.adapter)):
                    model = PeftModel.from_pretrained(model, str(self.adapter)).merge_and_unload().eval()
            self._tok, self._model = tok, model

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

    @property
    def first_line_only(self) -> bool:
        """Whether a reply is its first line (see :func:`clean_reply`): what ``stop_at_line_end`` generates."""
        return self.stop_at_line_end

    def _complete(self, messages: Messages, limit: int) -> Generation:
        """Greedy reply to ``messages`` in at most ``limit`` new tokens (``generate`` caches it)."""
        import torch

        ids = self._encode(messages)[-(self.context_window - limit):]  # left truncation keeps the instruction
        input_ids = torch.tensor([ids], device=self._model.device)
        stop = [_FirstLineDone(self._tok, len(ids))] if self.stop_at_line_end else []
        with torch.no_grad():
            out = self._model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                       max_new_tokens=limit, do_sample=False,
                                       pad_token_id=self._tok.pad_token_id, stopping_criteria=stop)
        new = out[0, len(ids):].tolist()
        eos = self._tok.eos_token_id
        if eos in new:  # count the reply up to and including its end-of-turn token
            new = new[: new.index(eos) + 1]
        text = self._tok.decode(new, skip_special_tokens=True)
        return Generation(text, len(ids), len(new))


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
    of the prompt, the line after a memory header (the paper's, the plain one, or one of ``headers``),
    or ``fallback`` when there is none, so runs take milliseconds and every
    number downstream (tokens, context handling, scores) is still computed for real.

    Tokens are counted with ``tokenizer`` when given (through its chat template when it has one:
    then prompt counts equal what :class:`LocalChatGenerator` with that tokenizer reports, since a
    prompt never depends on earlier generated replies), else as whitespace-separated words.

    >>> from glong_lib.generation import build_prompt
    >>> g = MemoryEchoGenerator()
    >>> r = g.generate(build_prompt("Leo", "Maya", [], [("Maya", "has_pet", "cat")], "Hi!"))
    >>> r.text, r.completion_tokens
    ('Maya -has_pet-> cat', 3)
    """

    backend = "echo"
    name = "memory-echo (no model)"

    def __init__(self, fallback: str = "I see.", context_window: int = 8192, max_new_tokens: int = 48,
                 tokenizer=None, headers: tuple[str, ...] = ()):
        self.fallback = fallback
        self.headers = (MEMORY_HEADER.split("\n")[-1], PLAIN_MEMORY_HEADER.split("{")[0], *headers)
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

    first_line_only = True

    def generate(self, messages: Messages, max_new_tokens: Optional[int] = None) -> Generation:
        lines = messages[-1]["content"].split("\n")
        at = next((i for i, line in enumerate(lines) if line.startswith(self.headers)), None)
        first = NO_MEMORIES if at is None or at + 1 >= len(lines) else lines[at + 1]
        text = self.fallback if first == NO_MEMORIES else first
        return Generation(text, self.count_tokens(messages), self._count(text))



