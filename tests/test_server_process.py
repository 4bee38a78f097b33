"""The OpenAI-compatible path end to end against a server *process* (issue 28): ``glong eval-msc
--generator openai`` talks to ``tests/stub_chat_server.py`` over loopback; the replies, the token
counts from the server's ``usage`` and a server error are checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import stub_chat_server
from testdata import serve

from glong_lib.cli import main as glong

pytest.importorskip("openai")
STUB = Path(stub_chat_server.__file__)


@pytest.fixture(autouse=True)
def _own_reply_cache(own_cache):
    """Each test its own $GLONG_CACHE (conftest.own_cache): the endpoint keeps every reply on disk there."""


@pytest.fixture
def server():
    """``server(*args)``: start the stub process, return its base URL; stopped after the test."""
    yield from serve(STUB)


ARGS = ["eval-msc", "--generator", "openai", "--model", "stub", "--conversations", "1", "--turns-per-session", "1",
        "--max-sessions", "2", "--methods", "no-history", "glong", "--triples", "gold", "--no-salience"]


def test_eval_msc_through_a_server_process_counts_the_servers_usage(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    out = tmp_path / "run.json"
    assert glong([*ARGS, "--base-url", server(), "--out", str(out)]) == 0
    records = json.loads(out.read_text())["records"]
    assert records and {r["method"] for r in records} == {"No history", "G-Long"}
    for r in records:
        # the whole reply is kept (an API model ends its own turn) and its tokens are the server's count
        assert r["reply"] == stub_chat_server.REPLY
        assert r["completion_tokens"] == len(stub_chat_server.REPLY.split())
        assert r["prompt_tokens"] > 10
    # the server counts each request's words: G-Long's prompt (memories, the paper's headers) is longer than
    # no history's on the same turn, so a count that did not come from each request's usage would show here
    by_turn = {(r["method"], r["turn_id"]): r["prompt_tokens"] for r in records}
    turns = {t for m, t in by_turn if m == "G-Long"}
    assert turns and all(by_turn[("G-Long", t)] > by_turn[("No history", t)] for t in turns)


def test_a_server_error_is_one_line_and_no_output_is_written(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    out = tmp_path / "run.json"
    code = glong([*ARGS, "--base-url", server("--fail", "400"), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code != 0 and not out.exists()
    # the progress bar shares stderr; the error itself is one line naming the endpoint, status and message
    errors = [line[line.index("glong eval-msc: error:"):] for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and "/v1/chat/completions answered HTTP 400: stub failure 400" in errors[0]
