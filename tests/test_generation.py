"""Generation: the paper's prompt, prompt fitting, token accounting, and the OpenAI-compatible
backend against a real HTTP server on loopback (success, error replies, a timeout)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from stub_chat_server import send_json

from glong_lib.errors import DataError
from glong_lib.generation import (
    NO_MEMORIES,
    GenerationError,
    LocalChatGenerator,
    MemoryEchoGenerator,
    OpenAICompatibleGenerator,
    build_prompt,
    clean_reply,
    fit_prompt,
    format_elapsed,
    format_memories,
    format_memory,
    is_prompt_echo,
    make_generator,
)
from glong_lib.schema import MemoryEdge, Triple

# --------------------------------------------------------------------------- the prompt


def test_prompt_is_the_papers_figure_8():
    msgs = build_prompt("Leo", "Maya", ["Maya: hi", "Leo: hey"], [Triple("Maya", "has_pet", "cat")], "I got a cat!")
    assert msgs[0] == {"role": "system", "content": "As a communication expert with outstanding communication "
                       "habits, you embody the role of Leo throughout the following dialogues."}
    assert msgs[1]["role"] == "user"
    assert msgs[1]["content"].split("\n") == [
        "<CONTEXT>", "Drawing from your recent conversation with Maya:", "Maya: hi", "Leo: hey",
        "<MEMORY>", "The memories linked to the ongoing conversation are:", "Maya -has_pet-> cat",
        "Now, please role-play as Leo to continue the dialogue between Leo and Maya. Maya said: I got a cat! "
        "Please respond to Maya's statement:"]


def test_no_memories_line_and_ranked_format():
    assert NO_MEMORIES in build_prompt("A", "U", [], [], "hello")[1]["content"]
    edge = MemoryEdge("Speaker 2", "family_from", "Alaska", 0.7, created_s=100.0, last_access_s=5000.0)
    line = format_memory(edge, "ranked", rank=1, now_s=100 + 13 * 86400 + 3600 + 120)
    # Figure 6's label, counted from the creation time (not the last access)
    assert line == "[Rank 1] (Active 13.0 days 1.0 hours 2.0 minutes ago) Speaker 2 family_from Alaska"
    assert format_memories(["Maya: I moved.", "Leo: Nice."], "ranked").split("\n") == [
        "[Rank 1] Maya: I moved.", "[Rank 2] Leo: Nice."]


def test_elapsed_label_by_hand():
    assert format_elapsed(0) == "0.0 days 0.0 hours 0.0 minutes"
    assert format_elapsed(86400 + 2 * 3600 + 59 * 60 + 59) == "1.0 days 2.0 hours 59.0 minutes"


def test_bad_input_is_a_data_error():
    with pytest.raises(DataError):
        build_prompt("A", "U", [], [], "   ")
    with pytest.raises(DataError):
        format_memory(("a", "b", "c"), "bullets")
    with pytest.raises(DataError):
        format_memory(42)


def test_fit_prompt_drops_oldest_lines_and_keeps_the_instruction():
    lines = [f"line {i} " + "w " * 5 for i in range(10)]  # 7 words each
    make = lambda kept: build_prompt("A", "U", kept, [], "the question")  # noqa: E731
    words = lambda msgs: sum(len(m["content"].split()) for m in msgs)  # noqa: E731
    full = words(make(lines))
    messages, dropped = fit_prompt(make, lines, words, budget=full - 10)
    assert dropped == 2  # 10 words over: two 7-word lines must go, the oldest ones
    content = messages[1]["content"]
    assert "line 0 " not in content and "line 1 " not in content and "line 2 " in content
    assert content.endswith("U said: the question Please respond to U's statement:")
    assert fit_prompt(make, lines, words, budget=full) == (make(lines), 0)


def test_clean_reply_removes_echoed_name_only_at_start():
    assert clean_reply("Leo: Leo: hi", "Leo") == "Leo: hi"
    assert clean_reply("\n\nLeo:  Great!\nMaya: yes", "Leo") == "Great!"
    assert clean_reply("   ", "Leo") == ""
    assert clean_reply("Ask Leo: he knows", "Leo") == "Ask Leo: he knows"


def test_memory_echo_generator_counts_words():
    g = MemoryEchoGenerator()
    msgs = build_prompt("A", "U", [], [], "hello there")
    r = g.generate(msgs)
    assert r.text == "I see." and r.completion_tokens == 2
    assert r.prompt_tokens == sum(len(m["content"].split()) for m in msgs)


def test_plain_format_keeps_the_words_and_drops_the_markup():
    memories = [("maya", "has_pet", "cat"), "Maya: I moved to Denver."]
    content = build_prompt("Leo", "Maya", ["Maya: hi"], memories, "Guess what!", "plain")[1]["content"]
    assert content.split("\n") == [
        "Your conversation with Maya so far:", "Maya: hi",
        "What you remember about Maya and yourself from earlier conversations:",
        "- maya has pet cat", "- Maya: I moved to Denver.",
        "Now, please role-play as Leo to continue the dialogue between Leo and Maya. Maya said: Guess what! "
        "Please respond to Maya's statement:"]
    assert "<" not in content and "->" not in content
    # nothing to remember and no context: neither block is written (the paper's words would be copied)
    bare = build_prompt("Leo", "Maya", [], [], "Hi", "plain")[1]["content"]
    assert bare.startswith("Now, please role-play") and NO_MEMORIES not in bare


def test_echo_generator_reads_the_plain_block_and_extra_headers():
    plain = build_prompt("Leo", "Maya", [], [("maya", "has_pet", "cat")], "Hi", "plain")
    assert MemoryEchoGenerator().generate(plain).text == "- maya has pet cat"
    other = [{"role": "user", "content": "Memories:\n- (1 May) Tea\nQuestion?"}]
    assert MemoryEchoGenerator().generate(other).text == "I see."
    assert MemoryEchoGenerator(headers=("Memories:",)).generate(other).text == "- (1 May) Tea"


@pytest.mark.parametrize("reply, lines, echo", [
    ("<MEMORY>", [], True), ("  <CONTEXT> Drawing", [], True),
    ("The memories linked to the ongoing conversation are:", [], True),
    ("No relevant Memories.", [], True), ("Drawing from your recent conversation with Maya:", [], True),
    ("What you remember about Maya and yourself", [], True),
    ("maya -has_pet-> cat", ["maya -has_pet-> cat"], True), ("Maya has pet cat!", ["- maya has pet cat"], True),
    ("Your cat is lovely!", ["- maya has pet cat"], False), ("I remember <3", [], False), ("", [], False),
])
def test_prompt_echo_is_markup_or_a_memory_line_copied_back(reply, lines, echo):
    assert is_prompt_echo(reply, lines) is echo


def test_paper_profile_needs_an_endpoint():
    with pytest.raises(DataError, match="base_url"):
        make_generator("paper")
    g = make_generator("paper", base_url="http://127.0.0.1:1/v1")
    assert isinstance(g, OpenAICompatibleGenerator) and g.model == "gpt-4o-mini"


# --------------------------------------------------------------------------- a loopback OpenAI-compatible server

class _Handler(BaseHTTPRequestHandler):
    """Speaks ``POST /v1/chat/completions``; behaviour chosen by the server's ``plan`` list."""

    def log_message(self, *args):  # keep test output clean
        pass

    def do_POST(self):
        server = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        mode = server.plan.pop(0) if server.plan else "ok"
        if self.path != "/v1/chat/completions":
            return self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        if mode == "sleep":
            time.sleep(1.5)
            return self._send(200, _completion("too late"))
        if mode in (429, 500):
            kind = "rate_limit_exceeded" if mode == 429 else "server_error"
            return self._send(mode, {"error": {"message": f"simulated {mode}", "type": kind}})
        if mode == "no-usage":
            reply = _completion("hello there friend")
            del reply["usage"]
            return self._send(200, reply)
        if mode == "garbage":
            return self._send(200, {"object": "chat.completion"})
        if mode == "disconnect":  # RemoteDisconnected on the client: the connection closes, no reply
            self.close_connection = True
            self.connection.shutdown(2)
            return None
        if mode == "incomplete":  # IncompleteRead: fewer bytes than Content-Length promises
            data = json.dumps(_completion("cut")).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data) + 50))
            self.end_headers()
            self.wfile.write(data[:20])
            self.close_connection = True
            return None
        if mode == "html":
            data = b"<html>gateway says hi</html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        if mode == "shape":
            return self._send(200, {"choices": "not a list", "usage": {"prompt_tokens": "many"}})
        if mode == 503:
            return self._send(503, {"error": {"message": "overloaded", "type": "server_error"}})
        return self._send(200, _completion(f"reply to: {body['messages'][-1]['content'][-20:]}"))

    def _send(self, code, obj):
        send_json(self, code, obj)


def _completion(text):
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "tiny",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 57, "completion_tokens": 9, "total_tokens": 66}}


@pytest.fixture(autouse=True)
def _own_reply_cache(own_cache):
    """Each test its own $GLONG_CACHE (conftest.own_cache): the endpoint keeps every reply on disk there."""


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.plan, srv.requests = [], []
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    srv.base_url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    yield srv
    srv.shutdown()
    srv.server_close()


class _Words:
    """A whitespace tokenizer (anything with ``.encode`` counts tokens for the backend)."""

    def encode(self, text):
        return text.split()


def _messages():
    return build_prompt("Leo", "Maya", ["Maya: hi"], [("Maya", "has_pet", "cat")], "How are you?")


def test_openai_backend_success_reads_usage_and_sends_the_key(server, monkeypatch):
    monkeypatch.setenv("GLONG_TEST_KEY", "sk-test-123")
    g = OpenAICompatibleGenerator(server.base_url, "tiny", api_key_env="GLONG_TEST_KEY", timeout=5,
                                  max_new_tokens=16)
    r = g.generate(_messages())
    assert r.text.startswith("reply to:") and (r.prompt_tokens, r.completion_tokens) == (57, 9)
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test-123"
    assert req["body"]["model"] == "tiny" and req["body"]["temperature"] == 0.0
    assert req["body"]["max_tokens"] == 16 and req["body"]["messages"] == _messages()
    again = g.generate(_messages())  # identical prompt: cached, still counted
    assert again.cached and (again.prompt_tokens, again.completion_tokens) == (57, 9) and len(server.requests) == 1


def test_api_replies_are_uncapped_by_default_as_in_the_paper(server):
    """The reference code sends no max_tokens: neither does the default generator, nor make_generator
    for an endpoint, nor eval-msc's openai generator; a cap is an explicit option."""
    import argparse

    from glong_lib.commands.evaluate import build_generator, register
    from glong_lib.config import PROFILES

    g = make_generator("paper", base_url=server.base_url)
    assert g.max_new_tokens is None
    g.generate(_messages())
    assert "max_tokens" not in server.requests[-1]["body"]
    g.generate(_messages(), max_new_tokens=7)  # a per-call cap still reaches the server
    assert server.requests[-1]["body"]["max_tokens"] == 7
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    uncapped = build_generator(parser.parse_args(["eval-msc", "--generator", "openai", "--base-url", server.base_url]))
    capped = build_generator(parser.parse_args(["eval-msc", "--generator", "openai", "--base-url", server.base_url,
                                                "--max-new-tokens", "32"]))
    echo = build_generator(parser.parse_args(["eval-msc", "--generator", "echo"]))
    smoke = build_generator(parser.parse_args(["eval-msc", "--generator", "echo", "--smoke"]))
    # a local (here model-free) generator: the profile's GeneratorSettings.max_new_tokens, its one home
    assert (uncapped.max_new_tokens, capped.max_new_tokens, echo.max_new_tokens, smoke.max_new_tokens) == (
        None, 32, PROFILES["offline"].generator.max_new_tokens, PROFILES["offline"].smoke().generator.max_new_tokens)


def test_openai_backend_counts_locally_when_usage_is_missing(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.plan = ["no-usage"]
    g = OpenAICompatibleGenerator(server.base_url, "tiny", timeout=5, tokenizer=_Words())
    r = g.generate(_messages())
    assert r.completion_tokens == 3  # "hello there friend"
    assert r.prompt_tokens == sum(len(m["content"].split()) + 4 for m in _messages())
    assert server.requests[0]["auth"] == "Bearer no-key"  # no key in the environment: a placeholder


@pytest.mark.parametrize("code", [429, 500])
def test_openai_backend_error_reply_is_a_clear_error(server, code):
    server.plan = [code]
    g = OpenAICompatibleGenerator(server.base_url, "tiny", timeout=5, retries=0)
    with pytest.raises(GenerationError, match=rf"HTTP {code}: simulated {code}"):
        g.generate(_messages())


def test_openai_backend_retries_a_rate_limit_then_succeeds(server):
    server.plan = [429, 500, "ok"]
    g = OpenAICompatibleGenerator(server.base_url, "tiny", timeout=5, retries=2)
    assert g.generate(_messages()).completion_tokens == 9
    assert len(server.requests) == 3


def test_openai_backend_timeout(server):
    server.plan = ["sleep"] * 3  # each reply comes 1.5 s late: only a client that gives up sees the error
    g = OpenAICompatibleGenerator(server.base_url, "tiny", timeout=0.3, retries=0)
    with pytest.raises(GenerationError, match="did not answer within 0.3 s"):
        g.generate(_messages())
    assert len(server.requests) == 1  # one attempt: retries=0, and the SDK's own retries are off


def test_openai_backend_malformed_reply_and_wrong_route(server):
    server.plan = ["garbage"]
    g = OpenAICompatibleGenerator(server.base_url, "tiny", timeout=5, retries=0)
    with pytest.raises(GenerationError, match="choices"):
        g.generate(_messages())
    bad = OpenAICompatibleGenerator(server.base_url.replace("/v1", "/nope"), "tiny", timeout=5, retries=0)
    with pytest.raises(GenerationError, match="HTTP 404: no route"):
        bad.generate(_messages())


def test_openai_backend_unreachable():
    g = OpenAICompatibleGenerator("http://127.0.0.1:9/v1", "tiny", timeout=2, retries=0)
    with pytest.raises(GenerationError, match="cannot reach|did not answer"):
        g.generate(_messages())


# --------------------------------------------------------------------------- the local model


@pytest.mark.slow
def test_local_generator_token_accounting_and_truncation():
    g = LocalChatGenerator(max_new_tokens=6)
    msgs = _messages()
    r = g.generate(msgs)
    # prompt tokens are exactly the templated ids the model read
    ids = g.tokenizer.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True)
    ids = ids["input_ids"] if hasattr(ids, "keys") else ids
    assert r.prompt_tokens == len(ids) == g.count_tokens(msgs)
    # the model-free generator with the same tokenizer counts the very same prompt tokens
    assert MemoryEchoGenerator(tokenizer=g.tokenizer).generate(msgs).prompt_tokens == r.prompt_tokens
    assert 1 <= r.completion_tokens <= 6 and isinstance(r.text, str)
    # a window smaller than the prompt: cut from the left, so the instruction at the end survives
    small = LocalChatGenerator(max_new_tokens=6, context_window=40, tokenizer=g.tokenizer, model=g._model)
    cut = small.generate(msgs)
    assert cut.prompt_tokens == 40 - 6
    assert small.max_prompt_tokens == 34 and g.context_window >= 2048
    # a per-call limit (memory-writing calls): its own cache entry, never the reply's
    whole = LocalChatGenerator(max_new_tokens=6, stop_at_line_end=False, tokenizer=g.tokenizer, model=g._model)
    longer = whole.generate(msgs, max_new_tokens=12)
    assert longer.completion_tokens > 6 and not whole.first_line_only and g.first_line_only
    assert whole.generate(msgs).completion_tokens <= 6 and whole.generate(msgs, max_new_tokens=12).cached


@pytest.mark.parametrize("failure", ["disconnect", "incomplete", 503])
def test_openai_backend_retries_transient_network_failures(server, failure):
    """A connection dropped without a reply, a reply cut short, a 503: retried, then the reply."""
    server.plan = [failure, "ok"]
    g = OpenAICompatibleGenerator(server.base_url, "tiny", timeout=5, retries=2)
    assert g.generate([{"role": "user", "content": "hi"}]).text.startswith("reply to")
    assert len(server.requests) == 2
    assert g.first_line_only is False  # an API model ends its own turn: its whole reply is kept


@pytest.mark.parametrize("failure, message", [("disconnect", "cannot reach"), ("incomplete", "cannot reach"),
                                              ("html", "choices|JSON|content|html"), ("shape", "choices"),
                                              (503, "HTTP 503: overloaded")])
def test_openai_backend_failures_become_one_line_generation_errors(server, failure, message):
    server.plan = [failure] * 3
    g = OpenAICompatibleGenerator(server.base_url, "tiny", timeout=5, retries=1)
    with pytest.raises(GenerationError, match=message) as info:
        g.generate([{"role": "user", "content": "hi"}])
    assert server.base_url in str(info.value) and "\n" not in str(info.value)


def test_openai_backend_retries_are_the_sdks_own_and_capped(server):
    """The SDK retries (its backoff; the test server's retry-after-ms keeps it short): ``retries`` of them,
    then the error."""
    server.plan = [503] * 5 + ["ok"]
    g = OpenAICompatibleGenerator(server.base_url, "tiny", timeout=5, retries=2)
    assert g.client.max_retries == 2
    with pytest.raises(GenerationError, match="HTTP 503"):
        g.generate([{"role": "user", "content": "hi"}])
    assert len(server.requests) == 3
