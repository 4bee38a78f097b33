"""The project's own OpenAI-compatible test server, started as a separate process by the tests and
``benchmarks/bench_server.py``.

``python tests/chat_server.py [--mode MODE] [--latency-ms N] [--smol]`` listens on a free loopback
port, prints ``port N`` on its first line, and answers ``POST /v1/chat/completions``:

* ``--smol``: the offline SmolLM2-135M-Instruct through transformers, greedy, the request's chat
  template arguments (``chat_template_kwargs``) and ``max_tokens`` honoured, ``usage`` counting the
  token ids it read and wrote: what a vLLM server of the same model answers, on 2 cores;
* otherwise a fixed reply (``stub_chat_server.REPLY``), after ``--latency-ms`` (no model: the
  benchmark's server);
* ``--mode`` one of :data:`MODES`, a broken answer (the reliability tests, one row each);
  ``ok-after-N`` answers N requests and then fails with HTTP 400.

``GET /v1/stats`` answers ``{"requests": n}``: the chat requests answered so far.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from stub_chat_server import REPLY, send_json, usage_of

#: Broken answers, by name: what each sends.
MODES = {
    "ok": "the fixed reply",
    "status-400": "HTTP 400 with an OpenAI-style error body",
    "status-500": "HTTP 500, every time",
    "slow": "the reply after 3 s",
    "drip": "headers at once, then one byte of the body every 0.3 s, forever",
    "open": "HTTP 200 headers, no Content-Length, the start of the body, then silence with the connection open",
    "header-drip": "the status line and headers one byte every 0.3 s, forever (each read within any timeout)",
    "truncated": "HTTP 200, JSON content type, half of the JSON body (its Content-Length honest)",
    "not-json": "HTTP 200, JSON content type, a body that is not JSON",
    "html": "HTTP 200 with an HTML page (content type text/html)",
    "null-content": "HTTP 200, choices[0].message.content null",
    "liar-usage": "the fixed reply with prompt_tokens -5,000,000 and completion_tokens 10^15",
    "huge": "HTTP 200 with a 120 MB JSON reply",
}


def completion(model, text: str, usage: dict) -> dict:
    return {"id": "chatcmpl-test", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": usage}


class SmolLM:
    """SmolLM2 (the offline profile's LM), greedy, one request at a time."""

    def __init__(self):
        from glong_lib.generation import chat_token_ids
        from glong_lib.models import BUNDLED_SMOLLM2, load_causal_lm

        self.tok, self.model = load_causal_lm(BUNDLED_SMOLLM2)
        self.chat_token_ids = chat_token_ids
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> tuple[str, dict]:
        import torch

        kwargs = body.get("chat_template_kwargs") or {}
        if kwargs:  # rendered as text, then tokenized: as vLLM does, and as the local extractor does
            text = self.tok.apply_chat_template(body["messages"], tokenize=False, add_generation_prompt=True, **kwargs)
            ids = self.tok(text, add_special_tokens=False)["input_ids"]
        else:
            ids = self.chat_token_ids(self.tok, body["messages"])
        limit = int(body.get("max_tokens") or 64)
        with self.lock, torch.no_grad():
            x = torch.tensor([ids])
            out = self.model.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=limit,
                                      do_sample=False, pad_token_id=self.tok.pad_token_id,
                                      eos_token_id=self.tok.eos_token_id)
        new = out[0, len(ids):].tolist()
        if self.tok.eos_token_id in new:
            new = new[: new.index(self.tok.eos_token_id) + 1]
        reply = self.tok.decode(new, skip_special_tokens=True)
        return reply, {"prompt_tokens": len(ids), "completion_tokens": len(new), "total_tokens": len(ids) + len(new)}


def make_handler(mode: str, latency_s: float, model):
    state = {"requests": 0, "lock": threading.Lock()}
    limit = int(mode.split("-")[-1]) if mode.startswith("ok-after-") else None

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms wait between them

        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path == "/v1/stats":
                return send_json(self, 200, {"requests": state["requests"]})
            return send_json(self, 404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/chat/completions":
                return send_json(self, 404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            with state["lock"]:
                state["requests"] += 1
                n = state["requests"]
            if limit is not None and n > limit:
                return send_json(self, 400, {"error": {"message": f"only {limit} requests", "type": "test_limit"}})
            if latency_s:
                time.sleep(latency_s)
            if model is not None:
                text, usage = model(body)
                return send_json(self, 200, completion(body.get("model"), text, usage))
            ok = completion(body.get("model"), REPLY, usage_of(body["messages"]))
            if mode in ("ok", "") or mode.startswith("ok-after-"):
                return send_json(self, 200, ok)
            return getattr(self, "mode_" + mode.replace("-", "_"))(body, ok)

        def raw(self, status: int, ctype: str, data: bytes, length=None):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data) if length is None else length))
            self.end_headers()
            self.wfile.write(data)

        def mode_status_400(self, body, ok):
            send_json(self, 400, {"error": {"message": "bad request from the test server", "type": "invalid_request"}})

        def mode_status_500(self, body, ok):
            send_json(self, 500, {"error": {"message": "the test server broke", "type": "server_error"}})

        def mode_slow(self, body, ok):
            time.sleep(3)
            send_json(self, 200, ok)

        def mode_drip(self, body, ok):
            data = json.dumps(ok).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data) * 1000))
            self.end_headers()
            try:
                for i in range(10_000):
                    self.wfile.write(data[i % len(data):i % len(data) + 1])
                    self.wfile.flush()
                    time.sleep(0.3)
            except OSError:
                return

        def mode_open(self, body, ok):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                self.wfile.write(json.dumps(ok).encode()[:20])
                self.wfile.flush()
                time.sleep(30)
            except OSError:
                return

        def mode_header_drip(self, body, ok):
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"x" * 100_000
            try:
                for i in range(len(head)):
                    self.wfile.write(head[i:i + 1])
                    self.wfile.flush()
                    time.sleep(0.3)
            except OSError:
                return

        def mode_truncated(self, body, ok):
            data = json.dumps(ok).encode()
            self.raw(200, "application/json", data[: len(data) // 2])

        def mode_not_json(self, body, ok):
            self.raw(200, "application/json", b"upstream said: <<<not json at all>>>")

        def mode_html(self, body, ok):
            self.raw(200, "text/html", b"<html><body>gateway says hi</body></html>")

        def mode_null_content(self, body, ok):
            ok["choices"][0]["message"]["content"] = None
            ok["choices"][0]["finish_reason"] = "content_filter"
            send_json(self, 200, ok)

        def mode_liar_usage(self, body, ok):
            ok["usage"] = {"prompt_tokens": -5_000_000, "completion_tokens": 10 ** 15, "total_tokens": 0}
            send_json(self, 200, ok)

        def mode_huge(self, body, ok):
            chunk = b"a" * (1 << 20)
            head, tail = b'{"choices": [{"message": {"role": "assistant", "content": "', b'"}}]}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(head) + 120 * len(chunk) + len(tail)))
            self.end_headers()
            try:
                self.wfile.write(head)
                for _ in range(120):
                    self.wfile.write(chunk)
                self.wfile.write(tail)
            except OSError:
                return

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the benchmark's 64 requests in flight connect at once

    def handle_error(self, request, client_address):  # a client that gave up (the drip, the huge reply)
        pass


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", default="ok", help=f"one of {', '.join(MODES)}, or ok-after-N")
    p.add_argument("--latency-ms", type=float, default=0.0, help="sleep this long before each answer")
    p.add_argument("--smol", action="store_true", help="answer with SmolLM2 (greedy) instead of the fixed reply")
    args = p.parse_args()
    if args.mode not in MODES and not args.mode.startswith("ok-after-"):
        p.error(f"unknown mode {args.mode}")
    model = SmolLM() if args.smol else None
    server = _Server(("127.0.0.1", 0), make_handler(args.mode, args.latency_ms / 1000, model))
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
