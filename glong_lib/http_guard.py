"""The guard on an endpoint's HTTP transport: the SDK's retries and per-read timeouts bound no
whole request, so the transport itself enforces the endpoint's deadline (retries included) and its
cap on a reply's bytes, and says which of the two stopped a request.
"""

from __future__ import annotations

import importlib
import time


def http_module(openai):
    """The HTTP library this ``openai`` release is built on (``httpx``, or ``httpx2`` in newer ones)."""
    base = next(c for c in openai.DefaultHttpxClient.__mro__[1:] if c.__name__ == "Client")
    return importlib.import_module(base.__module__.split(".")[0])


def stop_errors(openai) -> tuple:
    """The two failures the transport guard raises. They are ``OpenAIError``s, which the SDK passes
    on without retrying: a request past its deadline, or a body past its byte cap, is final."""
    cached = getattr(openai, "_glong_stop_errors", None)
    if cached is None:
        cached = (type("DeadlinePassed", (openai.OpenAIError,), {}), type("ReplyTooLarge", (openai.OpenAIError,), {}))
        openai._glong_stop_errors = cached
    return cached


def guarded_transport(hx, openai, settings, local):
    """An HTTP transport that bounds each request by the endpoint's deadline (the time left caps every
    timeout of an attempt, and each body chunk is checked against it) and its byte cap. ``local``: the
    endpoint's per-thread state; the request's deadline is read from it, and its HTTP status written
    to it (a later timeout is then one inside the reply)."""
    deadline_error, size_error = stop_errors(openai)

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
            deadline = getattr(local, "deadline", None)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise deadline_error(f"no answer within the {settings.deadline:g} s deadline (retries included)")
                timeout = dict(request.extensions.get("timeout") or {})
                request.extensions["timeout"] = {k: min(left, timeout.get(k) or left)
                                                 for k in ("connect", "read", "write", "pool")}
            local.status = None
            response = super().handle_request(request)
            local.status = response.status_code  # a later timeout is then one inside the reply
            return hx.Response(response.status_code, headers=response.headers,
                               stream=GuardedStream(response.stream, deadline), extensions=response.extensions)

    return GuardedTransport()
