"""One endpoint layer for every LM call that leaves the process (generation and extraction alike):
``POST {base_url}/chat/completions`` of an OpenAI-compatible server through the ``openai`` SDK
(the ``api`` extra), as :class:`config.EndpointSettings` describes it.

What a request can meet, and what comes of it (each a one-line :class:`GenerationError` naming the
endpoint, the status and what was wrong):

* connection refused or cut, HTTP 408/409/429/5xx, a timeout: retried by the SDK itself
  (``max_retries``, its backoff), then the error;
* a server that sends a byte now and then (each read within ``timeout``): ``deadline`` bounds the
  whole request, retries included (a guard on the HTTP transport, :mod:`.http_guard`, checks it at
  every chunk);
* a body longer than ``max_reply_bytes``: refused while it is read, never kept;
* HTTP 200 with a body that is not JSON (truncated, garbled), a content type that is not JSON, no
  ``choices[0].message.content``, or ``content: null`` (a refusal, a tool call);
* ``usage`` numbers that are not integers in [0, 10^7]: ignored with a warning (the tokens are then
  counted locally by the caller).

:meth:`Endpoint.complete_many` keeps ``concurrency`` requests in flight and returns the replies in
input order; every reply is kept in :class:`DiskReplyCache` (:mod:`.reply_cache`: sqlite under
``$GLONG_CACHE/replies``, keyed by model, messages and decoding settings), so an interrupted run that
is started again asks only what it had not yet been answered.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Optional, Sequence

from .config import EndpointSettings
from .errors import DataError, GenerationError
from .http_guard import guarded_transport, http_module, stop_errors
from .reply_cache import DiskReplyCache, Reply, default_cache_path, request_key  # noqa: F401  (re-exported)

#: Token counts a server reports outside this range are ignored (with a warning).
MAX_USAGE = 10_000_000


class Endpoint:
    """Chat completions at ``settings.base_url`` (see the module docstring). ``cache``: a
    :class:`DiskReplyCache`, None for the default one (when ``settings.reply_cache``), or False."""

    def __init__(self, settings: EndpointSettings, cache=None):
        if not settings.base_url:
            raise DataError("an endpoint needs a base URL (--base-url)")
        if not settings.model:
            raise DataError(f"an endpoint needs a model name (--model): the name {settings.base_url} serves")
        try:
            import openai
        except ImportError:
            raise GenerationError("an OpenAI-compatible endpoint needs the openai package: "
                                  "pip install 'glong-lib[api]'") from None
        self.settings = settings
        self.base_url = settings.base_url.rstrip("/")
        self.model = settings.model
        self._openai = openai
        self._local = threading.local()
        self._warned: set[str] = set()
        self._fresh: dict[str, Reply] = {}  # fetched ahead by complete_many, not yet handed out
        self._stop = stop_errors(openai)
        hx = http_module(openai)
        guard = guarded_transport(hx, openai, settings, self._local)
        http = openai.DefaultHttpxClient(transport=guard, timeout=hx.Timeout(settings.timeout))
        self.client = openai.OpenAI(base_url=self.base_url, api_key=os.environ.get(settings.api_key_env) or "no-key",
                                    timeout=settings.timeout, max_retries=settings.retries, http_client=http)
        if cache is None and settings.reply_cache:
            cache = DiskReplyCache(default_cache_path())
        self.cache: Optional[DiskReplyCache] = None if cache is False else cache

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    # -- one request
    def request(self, messages: list[dict], max_tokens: Optional[int] = None, temperature: float = 0.0,
                extra_body: Optional[dict] = None) -> dict:
        """The body of one chat request (the cache key is made from it)."""
        body: dict = {"model": self.model, "messages": messages, "temperature": float(temperature)}
        if max_tokens is not None:
            body["max_tokens"] = int(max_tokens)
        if extra_body:
            body["extra_body"] = extra_body
        return body

    def complete(self, body: dict) -> Reply:
        """The reply to one request body (:meth:`request`): from the cache, else from the server."""
        key = request_key(body)
        fresh = self._fresh.pop(key, None)
        if fresh is not None:
            return fresh
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            return hit
        reply = self._ask(body)
        if self.cache is not None:
            self.cache.put(key, reply)
        return reply

    def complete_many(self, bodies: Sequence[dict], progress: bool = False, desc: str = "requests",
                      keep: bool = False) -> list[Reply]:
        """The replies to ``bodies`` in their order, ``settings.concurrency`` requests in flight. The
        first failure stops the dispatch (requests in flight finish, each within the deadline) and
        is raised; every reply received before it stays in the cache. ``keep``: also hold the fresh
        replies for the next :meth:`complete` of each (:meth:`prefetch`)."""
        from tqdm.auto import tqdm

        keys = [request_key(b) for b in bodies]
        out: list[Optional[Reply]] = [None] * len(bodies)
        todo: dict[str, int] = {}
        got: dict[str, Reply] = {}
        for i, key in enumerate(keys):
            hit = self._fresh.get(key) or (self.cache.get(key) if self.cache is not None else None)
            if hit is not None:
                out[i] = hit
            elif key not in todo:
                todo[key] = i
        bar = tqdm(total=len(todo), desc=desc, disable=not progress or len(todo) < 2)
        with ThreadPoolExecutor(max_workers=self.settings.concurrency) as pool:
            futures = {pool.submit(self._ask, bodies[i]): key for key, i in todo.items()}
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                for f in done:
                    if f.exception() is not None:
                        for p in pending:
                            p.cancel()
                        bar.close()
                        raise f.exception()
                    reply = f.result()
                    if self.cache is not None:
                        self.cache.put(futures[f], reply)
                    got[futures[f]] = reply
                    bar.update(1)
        bar.close()
        if keep:
            self._fresh.update(got)
        return [r if r is not None else got[k] for r, k in zip(out, keys)]

    def prefetch(self, bodies: Sequence[dict], progress: bool = False) -> None:
        """Ask ``bodies`` concurrently now; the next :meth:`complete` of each is answered from here."""
        self.complete_many(bodies, progress, desc=f"prefetch ({self.model})", keep=True)

    # -- the HTTP exchange and its checks
    def _ask(self, body: dict) -> Reply:
        """:meth:`_exchange` with a wall-clock guard: the transport bounds every read and the body,
        but a server that sends its status line and headers a byte at a time keeps each read within
        its timeout inside the HTTP library. The exchange runs in a daemon thread; past the deadline
        (and a second of grace for the transport's own message) the request is given up in one line
        and the thread is left to die with the process."""
        box: dict = {}

        def run() -> None:
            try:
                box["reply"] = self._exchange(body)
            except BaseException as e:  # handed to the caller's thread
                box["error"] = e

        worker = threading.Thread(target=run, name="glong-endpoint-request", daemon=True)
        worker.start()
        worker.join(self.settings.deadline + 1.0)
        if worker.is_alive():
            raise GenerationError(f"{self.url}: no complete answer within the {self.settings.deadline:g} s deadline "
                                  f"(the server keeps sending its reply too slowly)")
        if "error" in box:
            raise box["error"]
        return box["reply"]

    def _exchange(self, body: dict) -> Reply:
        openai = self._openai
        start = time.perf_counter()
        self._local.deadline = time.monotonic() + self.settings.deadline
        extra = body.get("extra_body")
        args = {k: v for k, v in body.items() if k != "extra_body"}
        try:
            create = self.client.chat.completions.with_raw_response.create
            raw = create(**args, **({"extra_body": extra} if extra else {}))
            http = raw.http_response
            content = http.content
        except self._stop as e:
            raise GenerationError(f"{self.url}: {e}") from None
        except openai.OpenAIError as e:
            raise GenerationError(self._describe(e)) from None
        finally:
            self._local.deadline = None
        return self._read(http.status_code, http.headers.get("content-type", ""), content,
                          time.perf_counter() - start)

    def _read(self, status: int, ctype: str, content: bytes, seconds: float) -> Reply:
        where = f"{self.url} answered HTTP {status}"
        if "json" not in ctype.lower():
            raise GenerationError(f"{where} with content type '{ctype or 'none'}', not JSON")
        try:
            data = json.loads(content)
        except (ValueError, UnicodeDecodeError):
            raise GenerationError(f"{where} with a body that is not JSON ({len(content)} bytes: truncated or "
                                  "garbled)") from None
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise GenerationError(f"{where} without choices[0].message.content") from None
        if text is None:
            reason = choice.get("finish_reason") if isinstance(choice, dict) else None
            raise GenerationError(f"{where} with content null (finish_reason {reason!r}: a refusal or a tool call)")
        if not isinstance(text, str):
            raise GenerationError(f"{where} with content of type {type(text).__name__}, not text")
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        return Reply(text, self._usage(usage, "prompt_tokens"), self._usage(usage, "completion_tokens"), seconds)

    def _usage(self, usage: dict, name: str) -> Optional[int]:
        value = usage.get(name)
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_USAGE:
            return value
        if name not in self._warned:
            self._warned.add(name)
            print(f"warning: {self.url} reported usage.{name} = {str(value)[:40]}, outside [0, {MAX_USAGE:.0e}]: "
                  "ignored, counted locally", file=sys.stderr)
        return None

    def _describe(self, error: Exception) -> str:
        openai = self._openai
        if isinstance(error, openai.APITimeoutError):
            status = getattr(self._local, "status", None)  # set when the status line and headers arrived
            if status is not None:
                return (f"{self.url} answered HTTP {status} but sent no more of its reply for "
                        f"{self.settings.timeout:g} s (a connection left open)")
            return f"{self.url} did not answer within {self.settings.timeout:g} s"
        if isinstance(error, openai.APIConnectionError):
            cause = error.__cause__ or error
            return f"cannot reach {self.url} ({type(cause).__name__}: {str(cause)[:120] or 'connection failed'})"
        status = getattr(error, "status_code", None)
        if status is not None:
            body = getattr(error, "body", None)
            message = body.get("message") if isinstance(body, dict) else None
            kind = body.get("type") if isinstance(body, dict) else None
            detail = f"{message} ({kind})" if message and kind else (message or str(error)[:200])
            return f"{self.url} answered HTTP {status}: {' '.join(str(detail).split())[:300]}"
        return f"{self.url}: {type(error).__name__}: {' '.join(str(error).split())[:200]}"
