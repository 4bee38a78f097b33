"""The three latent bugs of the code review of 067108f (section 1.4), each shown by what it changed.

1. ``eval-msc --variants``: the "context never reset" G-Long used the arrow memory format while G-Long
   used the profile's (plain), so the pair changed two things at once.
2. Extraction caches keyed by an adapter's folder name (tests/test_extraction.py,
   ``test_extraction_cache_keys_never_collide`` and ``test_adapter_key_covers_truncation_and_quantisation``).
3. The profile's encoder was ignored by ``eval-msc``'s agents and ``glong build``, and a saved memory
   did not say which encoder built it.
"""

from __future__ import annotations

import argparse
import json

import pytest
from testdata import DATA

from glong_lib.cli import main
from glong_lib.errors import DataError
from glong_lib.memory import GraphMemory, HashEncoder
from glong_lib.schema import Triple


def test_variants_change_only_the_context_scope(tmp_path, capsys):
    out = tmp_path / "v.json"
    assert main(["eval-msc", "--generator", "echo", "--methods", "glong", "--variants", "--triples", "gold",
                 "--no-salience", "--conversations", "1", "--turns-per-session", "1", "--json",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    replies: dict[str, list[str]] = {}
    for r in json.loads(out.read_text())["records"]:
        replies.setdefault(r["method"], []).append(r["reply"])
    # the echo generator answers with the first memory line: its format is the prompt's format
    assert not any("->" in r for r in replies["G-Long"])  # the offline profile's plain lines
    assert not any("->" in r for r in replies["G-Long, context never reset"]), replies


def test_eval_msc_agents_use_the_profiles_encoder():
    from glong_lib.commands.evaluate import build_agents
    from glong_lib.config import get_profile
    from glong_lib.generation import MemoryEchoGenerator
    from glong_lib.models import encoder_name

    args = argparse.Namespace(profile="hub", smoke=False, memory_format=None, methods=["glong", "dense-rag"],
                              variants=True, salience_layer=None)
    agents = build_agents(args, MemoryEchoGenerator(), None)
    want = get_profile("hub").encoder  # no model loads: the encoder is loaded on first use
    assert {name: encoder_name(a.encoder) for name, a in agents.items()} == dict.fromkeys(agents, want)


def test_glong_build_records_the_encoder(tmp_path, capsys):
    out = tmp_path / "m"
    assert main(["build", str(DATA / "conversations" / "c01.json"), "--gold", "--no-salience", "--out", str(out)]) == 0
    capsys.readouterr()
    assert GraphMemory.load(out).encoder_ref == "bundled:all-MiniLM-L6-v2"


def test_a_memory_refuses_an_encoder_that_did_not_build_it(tmp_path):
    enc = HashEncoder(dim=16)
    enc.glong_name = "encoder-a"
    mem = GraphMemory(encoder=enc)
    mem.add_triples([Triple("maya", "has_pet", "cat")], 0.0)
    mem.save(tmp_path / "m")
    assert GraphMemory.load(tmp_path / "m").encoder_ref == "encoder-a"  # loaded later by that name
    other = HashEncoder(dim=16)
    other.glong_name = "encoder-b"
    with pytest.raises(DataError, match="built with the encoder encoder-a"):
        GraphMemory.load(tmp_path / "m", encoder=other)
    assert len(GraphMemory.load(tmp_path / "m", encoder=enc).edge_ids()) == 1
