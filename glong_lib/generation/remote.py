"""A generator behind an OpenAI-compatible chat endpoint (the paper's gpt-4o-mini, or a local server
such as vLLM), through the one endpoint layer (``glong_lib.endpoint``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional, Sequence

from ..config import EndpointSettings
from ..endpoint import Endpoint
from ..models import BUNDLED_SMOLLM2, causal_lm_path
from .prompt import CachingGenerator, Generation, GenerationError, Messages  # noqa: F401

# --------------------------------------------------------------------------- OpenAI-compatible backend

class OpenAICompatibleGenerator(CachingGenerator):
    """Any OpenAI-compatible chat endpoint (``pip install glong-lib[api]``), asked as
    :class:`endpoint.Endpoint` does: the key from the environment variable ``api_key_env`` (a
    placeholder when unset, for local servers that need none), the SDK's own retries (``retries``),
    a ``timeout`` per read and a ``deadline`` per request, ``concurrency`` requests in flight in
    :meth:`generate_many`, and every reply kept on disk (``cache``) so a resumed run asks once.

    Replies are uncapped by default, the paper's setting (the reference code sends no ``max_tokens``);
    ``max_new_tokens=N`` caps them at N tokens, and a reply body beyond ``max_reply_bytes`` is refused
    whatever its length in tokens. Token counts come from the reply's ``usage``; when a server leaves
    them out (or reports numbers outside [0, 10^7]) they are counted locally with ``tokenizer``
    (anything with ``.encode(text)``; by default the bundled SmolLM2 tokenizer, an approximation of
    the server's own). Every failure is one :class:`GenerationError` naming the endpoint.
    """

    backend = "openai"

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", timeout: float = 30,
                 max_new_tokens: Optional[int] = None, temperature: float = 0.0, context_window: int = 128_000,
                 retries: int = 3, tokenizer=None, cache: bool = True, deadline: float = 300.0,
                 concurrency: int = 1, max_reply_bytes: int = 4_000_000, endpoint: Optional[EndpointSettings] = None,
                 reply_cache=None):
        settings = endpoint or EndpointSettings(base_url=base_url, model=model, api_key_env=api_key_env,
                                                timeout=float(timeout), retries=int(retries), deadline=float(deadline),
                                                concurrency=int(concurrency), max_reply_bytes=int(max_reply_bytes),
                                                reply_cache=bool(cache))
        self.endpoint = Endpoint(settings, cache=reply_cache)
        self.settings = settings
        self.base_url = self.endpoint.base_url
        self.model = self.name = settings.model
        self.api_key_env = settings.api_key_env
        self.timeout = settings.timeout
        self.retries = settings.retries
        self.concurrency = settings.concurrency
        self.client = self.endpoint.client
        self.max_new_tokens = None if max_new_tokens is None else int(max_new_tokens)
        self.temperature = float(temperature)
        self.context_window = int(context_window)
        self._tokenizer = tokenizer

    @property
    def url(self) -> str:
        return self.endpoint.url

    @property
    def max_prompt_tokens(self) -> int:
        return self.context_window - (self.max_new_tokens or 0)

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(causal_lm_path(BUNDLED_SMOLLM2))
        return self._tokenizer

    def _count(self, text: str) -> int:
        return len(self.tokenizer.encode(text))

    def count_tokens(self, messages: Messages) -> int:
        """A local estimate of the prompt's tokens (the server's own count arrives with the reply)."""
        return sum(self._count(m["content"]) + 4 for m in messages)  # ~4 tokens of chat framing each

    #: A remote chat model ends its turn itself: its whole reply is kept (see :func:`clean_reply`).
    first_line_only = False

    def _body(self, messages: Messages, max_new_tokens: Optional[int]) -> dict:
        limit = max_new_tokens or self.max_new_tokens  # None: no cap sent, as in the paper
        return self.endpoint.request(messages, limit, self.temperature)

    def _generation(self, messages: Messages, reply) -> Generation:
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else self.count_tokens(messages)
        completion = reply.completion_tokens if reply.completion_tokens is not None else self._count(reply.text)
        return Generation(reply.text, prompt, completion, reply.seconds, reply.cached)

    def generate(self, messages: Messages, max_new_tokens: Optional[int] = None) -> Generation:
        """The reply to ``messages`` (from the reply cache when this request was answered before)."""
        return self._generation(messages, self.endpoint.complete(self._body(messages, max_new_tokens)))

    def generate_many(self, prompts: Sequence[Messages], max_new_tokens: Optional[int] = None,
                      progress: bool = False) -> list[Generation]:
        """The replies to ``prompts`` in their order, ``concurrency`` requests in flight."""
        replies = self.endpoint.complete_many([self._body(m, max_new_tokens) for m in prompts], progress)
        return [self._generation(m, r) for m, r in zip(prompts, replies)]

    def prefetch(self, requests: Sequence[tuple[Messages, Optional[int]]], progress: bool = False) -> None:
        """Ask every ``(messages, max_new_tokens)`` now, ``concurrency`` at a time; each next
        :meth:`generate` of one of them is answered from what came back."""
        self.endpoint.prefetch([self._body(m, limit) for m, limit in requests], progress)

    def _complete(self, messages: Messages, limit: Optional[int]) -> Generation:
        return replace(self.generate(messages, limit))
