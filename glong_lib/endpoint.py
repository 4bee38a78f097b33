"""One endpoint layer for every LM call that leaves the process (generation and extraction alike):
``POST {base_url}/chat/completions`` of an OpenAI-compatible server through the ``openai`` SDK
(the ``api`` extra), as :class:`config.EndpointSettings` describes it.

What a request can meet, and what comes of it (each a one-line :class:`GenerationError` naming the
endpoint, the status and what was wrong):

* connection refused or cut, HTTP 408/409/429/5xx, a timeout: retried by the SDK itself
  (``max_retries``, its backoff), then the error;
* a server that sends a byte now and then (each read within ``timeout``): ``deadline`` bounds the
  whole request, retries included (a guard on the HTTP transport checks it at every chunk);
* a body longer than ``max_reply_bytes``: refused while it is read, never kept;
* HTTP 200 with a body that is not JSON (truncated, garbled), a content type that is not JSON, no
  ``choices[0].message.content``, or ``content: null`` (a refusal, a tool call);
* ``usage`` numbers that are not integers in [0, 10^7]: ignored with a warning (the tokens are then
  counted locally by the caller).

:meth:`Endpoint.complete_many` keeps ``concurrency`` requests in flight and returns the replies in
input order; every reply is kept in :class:`DiskReplyCache` (sqlite under ``$GLONG_CACHE/replies``,
keyed by model, messages and decoding settings), so an interrupted run that is started again asks
only what it had not yet been answered.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sqlite3
import sys
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from .config import EndpointSettings
from .errors import DataError, GenerationError
from .models import cache_dir

#: Token counts a server reports outside this range are ignored (with a warning).
MAX_USAGE = 10_000_000


@dataclass
class Reply:
    """One answer: its text, the server's token counts (None when absent or absurd), the seconds it
    took, and whether it came from the reply cache."""

    text: str
    prompt_tokens: Optional[int]
    completion_tokens: Optional[int]
    seconds: float = 0.0
    cached: bool = False


def request_key(request: dict) -> str:
    """The reply cache's key of a request: its model, messages and decoding settings.

    >>> a = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0}
    >>> request_key(a) == request_key(dict(reversed(list(a.items()))))
    True
    >>> request_key(a) == request_key({**a, "max_tokens": 5})
    False
    """
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class DiskReplyCache:
    """Replies on disk, one sqlite row per request key; every put is its own committed transaction
    (atomic: a run killed mid-write loses at most the reply being written). Safe across threads."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.commit()
        except sqlite3.Error as e:
            raise DataError(f"the reply cache is damaged or unwritable ({e}): delete it", path=self.path) from None

    def get(self, key: str) -> Optional[Reply]:
        with self._lock:
            try:
                row = self._db.execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as e:
                raise DataError(f"the reply cache is damaged ({e}): delete it", path=self.path) from None
        if row is None:
            return None
        try:
            d = json.loads(row[0])
            return Reply(str(d["text"]), d.get("prompt_tokens"), d.get("completion_tokens"), 0.0, cached=True)
        except (ValueError, KeyError, TypeError):
            raise DataError("the reply cache holds a damaged row: delete it", path=self.path) from None

    def put(self, key: str, reply: Reply) -> None:
        value = json.dumps({"text": reply.text, "prompt_tokens": reply.prompt_tokens,
                            "completion_tokens": reply.completion_tokens}, ensure_ascii=False)
        with self._lock:
            try:
                with self._db:
                    self._db.execute("INSERT OR REPLACE INTO replies (key, value) VALUES (?, ?)", (key, value))
            except sqlite3.Error as e:
                raise DataError(f"cannot write the reply cache ({e})", path=self.path) from None

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]


def default_cache_path() -> Path:
    """``$GLONG_CACHE/replies/replies.sqlite``."""
    return cache_dir("replies") / "replies.sqlite"


def _http_module(openai):
    """The HTTP library this ``openai`` release is built on (``httpx``, or ``httpx2`` in newer ones)."""
    base = next(c for c in openai.DefaultHttpxClient.__mro__[1:] if c.__name__ == "Client")
    return importlib.import_module(base.__module__.split(".")[0])


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
        self._stop = _stop_errors(openai)
        hx = _http_module(openai)
        guard = _guarded_transport(hx, self)
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
    def _deadline(self) -> Optional[float]:
        return getattr(self._local, "deadline", None)

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


def _stop_errors(openai) -> tuple:
    """The two failures the transport guard raises. They are ``OpenAIError``s, which the SDK passes
    on without retrying: a request past its deadline, or a body past its byte cap, is final."""
    cached = getattr(openai, "_glong_stop_errors", None)
    if cached is None:
        cached = (type("DeadlinePassed", (openai.OpenAIError,), {}), type("ReplyTooLarge", (openai.OpenAIError,), {}))
        openai._glong_stop_errors = cached
    return cached


def _guarded_transport(hx, endpoint: Endpoint):
    """An HTTP transport that bounds each request by the endpoint's deadline (the time left caps every
    timeout of an attempt, and each body chunk is checked against it) and its byte cap."""
    deadline_error, size_error = _stop_errors(endpoint._openai)
    settings = endpoint.settings

    class GuardedStream(hx.SyncByteStream):
        def __init__(self, inner, deadline):
            self.inner, self.deadline = inner, deadline

        def __iter__(self):
            size = 0
            for chunk in self.inner:
                size += len(chunk)
                if size > settings.max_reply_bytes:
                    raise size_error(f"the reply is longer than {settings.max_reply_bytes} bytes (--max-reply-bytes)")
                if self.deadline is not None and time.monotonic() > self.deadline:
                    raise deadline_error(f"the reply did not finish within the {settings.deadline:g} s deadline "
                                         "(bytes kept coming, too slowly)")
                yield chunk

        def close(self):
            self.inner.close()

    class GuardedTransport(hx.HTTPTransport):
        def handle_request(self, request):
            deadline = endpoint._deadline()
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise deadline_error(f"no answer within the {settings.deadline:g} s deadline (retries included)")
                timeout = dict(request.extensions.get("timeout") or {})
                request.extensions["timeout"] = {k: min(left, timeout.get(k) or left)
                                                 for k in ("connect", "read", "write", "pool")}
            endpoint._local.status = None
            response = super().handle_request(request)
            endpoint._local.status = response.status_code  # a later timeout is then one inside the reply
            return hx.Response(response.status_code, headers=response.headers,
                               stream=GuardedStream(response.stream, deadline), extensions=response.extensions)

    return GuardedTransport()
