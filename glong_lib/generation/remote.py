"""A generator behind an OpenAI-compatible chat endpoint (the paper's gpt-4o-mini, or a local server).
"""

from __future__ import annotations

import os
import time
from typing import Optional

from ..models import BUNDLED_SMOLLM2, causal_lm_path
from .prompt import CachingGenerator, Generation, GenerationError, Messages, ReplyCache

# --------------------------------------------------------------------------- OpenAI-compatible backend

class OpenAICompatibleGenerator(CachingGenerator):
    """Any OpenAI-compatible chat endpoint, through the ``openai`` SDK (``pip install glong-lib[api]``).

    The key comes from the environment variable ``api_key_env`` (a placeholder when it is unset, for
    local servers that need none). Replies are uncapped by default, the paper's setting (the reference
    code sends no ``max_tokens``); ``max_new_tokens=N`` caps them at N tokens. Token counts come from
    the reply's ``usage``; when a server
    leaves it out they are counted locally with ``tokenizer`` (anything with ``.encode(text)``;
    by default the bundled SmolLM2 tokenizer, an approximation of the server's own).

    Transient failures (connection refused or reset, a reply cut short, a timeout, HTTP 408, 409, 429
    and 5xx) are retried ``retries`` times, waiting ``backoff_s * 2**attempt`` seconds (at most
    ``max_backoff_s``); every other failure, and the last transient one, raises
    :class:`GenerationError` naming the endpoint and the status or cause. The SDK's own retries are
    off, so this policy is the only one.
    """

    backend = "openai"

    def __init__(self, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", timeout: float = 30,
                 max_new_tokens: Optional[int] = None, temperature: float = 0.0, context_window: int = 128_000,
                 retries: int = 3, backoff_s: float = 1.0, max_backoff_s: float = 30.0, tokenizer=None,
                 cache: bool = True):
        try:
            import openai
        except ImportError:
            raise GenerationError("the OpenAI-compatible backend needs the openai package: "
                                  "pip install 'glong-lib[api]'") from None
        self._openai = openai
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.max_new_tokens = None if max_new_tokens is None else int(max_new_tokens)
        self.temperature = float(temperature)
        self.context_window = int(context_window)
        self.retries = int(retries)
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self._tokenizer = tokenizer
        self.cache: Optional[ReplyCache] = ReplyCache() if cache else None
        self.client = openai.OpenAI(base_url=self.base_url, api_key=os.environ.get(api_key_env) or "no-key",
                                    timeout=self.timeout, max_retries=0)

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

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

    def _transient(self, error: Exception) -> bool:
        if isinstance(error, self._openai.APIConnectionError):  # refused, reset, cut short, timed out
            return True
        status = getattr(error, "status_code", None)
        return isinstance(status, int) and (status in (408, 409, 429) or status >= 500)

    def _describe(self, error: Exception) -> str:
        if isinstance(error, self._openai.APITimeoutError):
            return f"{self.url} did not answer within {self.timeout:g} s"
        if isinstance(error, self._openai.APIConnectionError):
            cause = error.__cause__ or error
            return f"cannot reach {self.url} ({type(cause).__name__}: {str(cause)[:120] or 'connection failed'})"
        status = getattr(error, "status_code", None)
        if status is not None:
            body = getattr(error, "body", None)
            message = body.get("message") if isinstance(body, dict) else None
            kind = body.get("type") if isinstance(body, dict) else None
            detail = f"{message} ({kind})" if message and kind else (message or str(error)[:200])
            return f"{self.url} answered HTTP {status}: {detail}"
        return f"{self.url}: {type(error).__name__}: {str(error)[:200]}"

    #: A remote chat model ends its turn itself: its whole reply is kept (see :func:`clean_reply`).
    first_line_only = False

    def _request(self, messages: Messages, max_tokens: Optional[int]):
        """The SDK's reply to one chat request, retried on transient failures (see the class)."""
        cap = {} if max_tokens is None else {"max_tokens": max_tokens}  # None: no cap sent, as in the paper
        for attempt in range(self.retries + 1):
            try:
                return self.client.chat.completions.create(model=self.model, messages=messages,
                                                           temperature=self.temperature, **cap)
            except self._openai.OpenAIError as e:
                if self._transient(e) and attempt < self.retries:
                    time.sleep(min(self.max_backoff_s, self.backoff_s * 2 ** attempt))
                    continue
                raise GenerationError(self._describe(e)) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _complete(self, messages: Messages, limit: Optional[int]) -> Generation:
        """The endpoint's reply in at most ``limit`` tokens (None: no cap, the paper's setting), with
        its token counts (``generate`` caches it)."""
        reply = self._request(messages, limit)
        try:
            text = reply.choices[0].message.content or ""
            if not isinstance(text, str):
                raise TypeError(type(text).__name__)
        except (AttributeError, IndexError, KeyError, TypeError):
            raise GenerationError(f"{self.url} answered without choices[0].message.content") from None
        usage = getattr(reply, "usage", None)
        prompt = getattr(usage, "prompt_tokens", None)
        completion = getattr(usage, "completion_tokens", None)
        return Generation(text, int(prompt) if isinstance(prompt, int) else self.count_tokens(messages),
                          int(completion) if isinstance(completion, int) else self._count(text))
