"""A stand-alone stub of an OpenAI-compatible chat server, for tests that start it as a process.

``python tests/stub_chat_server.py [--fail CODE]`` listens on a free loopback port, prints
``port N`` on its first line, and answers ``POST /v1/chat/completions`` (streaming off) with a fixed
reply and a ``usage`` block that counts the request's words: prompt tokens = the words of every
message's content, completion tokens = the reply's words. With ``--fail CODE`` every request is
answered with that HTTP status and an OpenAI-style error body.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY = "Nice to hear that, tell me more!"


def usage_of(messages: list[dict]) -> dict:
    prompt = sum(len(str(m.get("content", "")).split()) for m in messages)
    completion = len(REPLY.split())
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def send_json(handler: BaseHTTPRequestHandler, code: int, obj) -> None:
    """Answer ``handler``'s request with status ``code`` and ``obj`` as a JSON body (an error status
    with ``retry-after-ms: 10``, so the openai SDK's retries wait 10 ms, not its backoff)."""
    data = json.dumps(obj).encode()
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    if code >= 400:
        handler.send_header("retry-after-ms", "10")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def make_handler(fail: int | None):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep the test's output clean
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/chat/completions":
                return self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            if body.get("stream"):
                return self._send(400, {"error": {"message": "streaming is not supported", "type": "invalid_request"}})
            if fail:
                return self._send(fail, {"error": {"message": f"stub failure {fail}", "type": "server_error"}})
            return self._send(200, {"id": "stub", "object": "chat.completion", "model": body.get("model"),
                                    "choices": [{"index": 0, "finish_reason": "stop",
                                                 "message": {"role": "assistant", "content": REPLY}}],
                                    "usage": usage_of(body["messages"])})

        def _send(self, code, obj):
            send_json(self, code, obj)

    return Handler


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--fail", type=int, default=None)
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(args.fail))
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
