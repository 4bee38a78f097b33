"""The endpoint layer against the project's test server as a process (tests/chat_server.py): every
broken answer of the reliability sweep (items 4, 6, 7, 14, O08) is one row of a table: one line
naming the endpoint, the status and what was wrong, exit 2, no output file; a resumed run continues
from the reply cache; requests in flight at once give the replies of one at a time."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path

import pytest
from testdata import serve

from glong_lib.cli import main as glong
from glong_lib.config import EndpointSettings
from glong_lib.endpoint import DiskReplyCache, Endpoint, Reply, request_key

pytest.importorskip("openai")
SERVER = Path(__file__).with_name("chat_server.py")


@pytest.fixture(autouse=True)
def _own_cache(own_cache, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


@pytest.fixture
def server():
    """``server(*args)``: start tests/chat_server.py, return its base URL; stopped after the test."""
    yield from serve(SERVER)


def requests_answered(base_url: str) -> int:
    with urllib.request.urlopen(base_url + "/stats", timeout=5) as r:
        return json.loads(r.read())["requests"]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RUN = ["eval-msc", "--generator", "openai", "--model", "m", "--conversations", "1", "--turns-per-session", "1",
       "--max-sessions", "2", "--methods", "no-history", "--triples", "gold", "--no-salience", "--retries", "1"]

#: (server mode, extra options, what the error line must say after "answered HTTP ..." or the URL)
BROKEN = [
    ("down", [], "cannot reach"),
    ("status-400", [], "answered HTTP 400: bad request from the test server"),
    ("status-500", [], "answered HTTP 500: the test server broke"),
    ("slow", ["--timeout", "0.5"], "did not answer within 0.5 s"),
    ("drip", ["--timeout", "1", "--deadline", "2"], "deadline"),
    ("open", ["--timeout", "1", "--deadline", "10"], "answered HTTP 200 but sent no more of its reply for 1 s"),
    ("header-drip", ["--timeout", "1", "--deadline", "2"], "deadline"),
    ("truncated", [], "answered HTTP 200 with a body that is not JSON"),
    ("not-json", [], "answered HTTP 200 with a body that is not JSON"),
    ("html", [], "answered HTTP 200 with content type 'text/html', not JSON"),
    ("null-content", [], "answered HTTP 200 with content null"),
    ("huge", [], "longer than 4000000 bytes"),
]


@pytest.mark.parametrize("mode, options, message", BROKEN, ids=[row[0] for row in BROKEN])
def test_a_broken_answer_is_one_line_exit_2_and_no_output(mode, options, message, server, tmp_path, capsys):
    url = f"http://127.0.0.1:{closed_port()}/v1" if mode == "down" else server("--mode", mode)
    out = tmp_path / "run.json"
    code = glong([*RUN, *options, "--base-url", url, "--out", str(out)])
    err = capsys.readouterr().err
    errors = [line[line.index("glong eval-msc: error:"):] for line in err.splitlines() if "error:" in line]
    assert code == 2 and not out.exists() and "Traceback" not in err
    assert len(errors) == 1 and f"{url}/chat/completions" in errors[0] and message in errors[0], errors


def test_absurd_usage_is_ignored_with_a_warning(server, tmp_path, capsys):
    out = tmp_path / "run.json"
    assert glong([*RUN, "--base-url", server("--mode", "liar-usage"), "--out", str(out)]) == 0
    assert "usage.prompt_tokens = -5000000, outside [0, 1e+07]: ignored" in capsys.readouterr().err
    for r in json.loads(out.read_text())["records"]:
        assert 0 < r["prompt_tokens"] < 10_000 and 0 < r["completion_tokens"] < 100  # counted locally


def test_a_resumed_run_asks_only_what_was_not_answered(server, tmp_path, capsys):
    """The server answers three requests, then fails: the run stops with one line, the finished
    (conversation, method) in its checkpoint and every reply in the reply cache. Resumed against a
    working server with more requests in flight (a transport option: the checkpoint takes it), only
    the one unanswered request is asked."""
    args = [*RUN, "--methods", "no-history", "long-context", "--max-sessions", "3", "--out", str(tmp_path / "r.json"),
            "--checkpoint", str(tmp_path / "ck.jsonl")]
    assert glong([*args, "--base-url", server("--mode", "ok-after-3")]) == 2
    assert "only 3 requests" in capsys.readouterr().err and not (tmp_path / "r.json").exists()
    url = server()
    assert glong([*args, "--resume", "--concurrency", "4", "--base-url", url]) == 0
    records = json.loads((tmp_path / "r.json").read_text())["records"]
    assert len(records) == 4 and requests_answered(url) == 1
    assert [r["cached"] for r in records if r["method"] == "Long context"] == [True, False]


def test_requests_in_flight_give_the_same_records_in_order(server, tmp_path, monkeypatch, make_cache):
    """--concurrency 8 prefetches every prompt of a conversation; the records equal a one-at-a-time run
    (same replies, order and token counts), and each prompt is asked once."""
    base = [*RUN, "--methods", "no-history", "long-context", "glong", "--max-sessions", "3",
            "--turns-per-session", "3"]
    runs = {}
    for n in (1, 8):
        monkeypatch.setenv("GLONG_CACHE", str(make_cache(tmp_path / f"cache{n}")))
        url = server("--latency-ms", "50")
        out = tmp_path / f"c{n}.json"
        assert glong([*base, "--base-url", url, "--concurrency", str(n), "--out", str(out)]) == 0
        runs[n] = [{k: r[k] for k in ("method", "turn_id", "reply", "prompt_tokens", "completion_tokens", "memories")}
                   for r in json.loads(out.read_text())["records"]]
        assert requests_answered(url) == len(runs[n])
    assert runs[1] == runs[8] and len(runs[1]) == 3 * 2 * 3


def test_complete_many_keeps_input_order_and_the_disk_cache(server, tmp_path):
    url = server("--latency-ms", "20")
    cache = DiskReplyCache(tmp_path / "r.sqlite")
    e = Endpoint(EndpointSettings(base_url=url, model="m", concurrency=4), cache=cache)
    bodies = [e.request([{"role": "user", "content": f"question {i}"}], 8) for i in range(10)]
    replies = e.complete_many(bodies)
    assert [r.prompt_tokens for r in replies] == [2] * 10 and len(cache) == 10 and requests_answered(url) == 10
    again = Endpoint(EndpointSettings(base_url=url, model="m"), cache=DiskReplyCache(tmp_path / "r.sqlite"))
    assert all(r.cached for r in again.complete_many(bodies)) and requests_answered(url) == 10
    assert again.cache.get(request_key(bodies[0])) == Reply(replies[0].text, 2, 7, 0.0, True)


def test_prefetch_stops_recording_at_a_memory_writing_request():
    """A summary's reply shapes the prompts after it: they are not asked ahead (they would be paid for
    and never used); the replies before it, and the summary request itself, are."""
    from testdata import DATA

    from glong_lib.evaluation.msc import prefetch_conversation
    from glong_lib.generation import Generation
    from glong_lib.loaders import load_conversations

    class Generator:
        concurrency, max_prompt_tokens, first_line_only = 4, 10_000, False

        def __init__(self):
            self.asked = []

        def prefetch(self, requests, progress=False):
            self.asked.extend(requests)

        def count_tokens(self, messages):
            return 1

        def generate(self, messages, max_new_tokens=None):
            return Generation("summary" if max_new_tokens else "reply", 1, 1)

    class Summarising:  # the summary memory's shape: a generated summary after each session
        def __init__(self, generator):
            self.generator = generator

        def start(self, conv):
            self.summaries = []

        def observe_session(self, session, conv):
            self.summaries.append(self.generator.generate([{"role": "user", "content": "sum"}], 64).text)

        def respond(self, text, context, now_s):
            from glong_lib.agent import AgentReply

            g = self.generator.generate([{"role": "user", "content": f"{self.summaries} {text}"}])
            return AgentReply(g.text, 1, 1)

    conv = load_conversations(DATA / "conversations" / "c01.json")[0]
    gen = Generator()
    n = prefetch_conversation({"s": Summarising(gen)}, conv, conv.sessions[:3], 2, "session")
    assert n == 1 and gen.asked == [([{"role": "user", "content": "sum"}], 64)]


def test_every_endpoint_field_is_an_option_where_an_lm_call_can_leave(capsys):
    import argparse
    from dataclasses import fields

    from glong_lib.commands import evaluate, extractor, retrieval

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    for module in (evaluate, extractor, retrieval):
        module.register(sub)
    flags = {name: {a for action in p._actions for a in action.option_strings} for name, p in sub.choices.items()}
    for f in fields(EndpointSettings):
        flag = f.name.replace("_", "-")
        assert f"--{flag}" in flags["extract"] and f"--{flag}" in flags["eval-msc"]
        assert f"--extractor-{flag}" in flags["eval-msc"] and f"--extractor-{flag}" in flags["eval-retrieval"]
    with pytest.raises(SystemExit):  # the option refuses what the dataclass refuses, before any work
        parser.parse_args(["extract", "x.json", "--out", "y", "--concurrency", "0"])
    assert "0 is outside [1, 256]" in capsys.readouterr().err
