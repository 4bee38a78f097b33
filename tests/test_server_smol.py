"""A real model behind the server: tests/chat_server.py --smol serves the offline SmolLM2 through
transformers (greedy) as a separate process, as vLLM would serve a model. Extraction and generation
through it give what the local model gives (a tiny sample: one conversation, a few turns; SmolLM2
on 2 cores)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from testdata import DATA, ROOT

from glong_lib.cli import main as glong

pytest.importorskip("openai")
pytestmark = pytest.mark.slow
SERVER = Path(__file__).with_name("chat_server.py")
#: One model on 2 shared cores answers one request at a time: the next waits its turn.
SLOW = ["--timeout", "600", "--deadline", "1200"]


@pytest.fixture(scope="module")
def smol_url():
    """One SmolLM2 server for the module (loading the model takes seconds on 2 cores)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, str(SERVER), "--smol"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        yield f"http://127.0.0.1:{int(proc.stdout.readline().split()[1])}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def tiny_conversation(tmp_path: Path, turns: int) -> Path:
    """The first sample conversation cut to two sessions of ``turns`` turns."""
    conv = json.loads((DATA / "conversations" / "c01.json").read_text())
    conv["sessions"] = conv["sessions"][:2]
    for s in conv["sessions"]:
        s["turns"] = s["turns"][:turns]
    path = tmp_path / "convs" / "tiny.json"
    path.parent.mkdir()
    path.write_text(json.dumps(conv))
    return path


def test_extract_through_the_server_gives_the_local_triples(smol_url, tmp_path):
    from glong_lib.config import EndpointSettings
    from glong_lib.extraction import RemoteTripleExtractor, load_extractor

    conv = tiny_conversation(tmp_path, 2)
    local, remote = tmp_path / "local.jsonl", tmp_path / "remote.jsonl"
    assert glong(["extract", str(conv), "--zero-shot", "--sessions", "1", "--out", str(local)]) == 0
    assert glong(["extract", str(conv), "--sessions", "1", "--base-url", smol_url, "--model", "smol",
                  "--concurrency", "2", "--no-reply-cache", *SLOW, "--out", str(remote)]) == 0
    assert local.read_text() == remote.read_text()
    # the raw answers too (the zero-shot model may find no triple to compare)
    utterances = [r["text"] for r in map(json.loads, local.read_text().splitlines())]
    here = load_extractor("offline", zero_shot=True).generate(utterances, progress=False)
    there = RemoteTripleExtractor(EndpointSettings(base_url=smol_url, model="smol", reply_cache=False, timeout=600),
                                  max_new_tokens=64)
    assert there.generate(utterances, progress=False) == here and any(here)


def test_eval_msc_through_the_server_gives_the_local_replies(smol_url, tmp_path):
    conv = tiny_conversation(tmp_path, 4)
    args = ["eval-msc", "--msc", str(conv.parent), "--conversations", "1", "--turns-per-session", "1",
            "--max-sessions", "2", "--methods", "no-history", "--triples", "gold", "--no-salience",
            "--max-new-tokens", "12"]
    local, remote = tmp_path / "local.json", tmp_path / "remote.json"
    assert glong([*args, "--generator", "local", "--full-replies", "--out", str(local)]) == 0
    assert glong([*args, "--generator", "openai", "--base-url", smol_url, "--model", "smol",
                 "--no-reply-cache", *SLOW, "--out", str(remote)]) == 0
    keys = ("turn_id", "reply", "prompt_tokens", "completion_tokens")
    here, there = ([{k: r[k] for k in keys} for r in json.loads(p.read_text())["records"]] for p in (local, remote))
    assert here == there and here and all(r["reply"] for r in here)
