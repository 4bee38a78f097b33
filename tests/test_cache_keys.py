"""Every cache names its entries with ``cache.keyed_path``; the keys are pinned here, because a change
to how one is hashed silently invalidates every user's cache (and CI's): these values are the ones
the caches held before the helper existed (issue 37). The adapters' keys are pinned beside their
recipes (tests/test_shipped_adapter.py, tests/test_responder.py)."""

from __future__ import annotations

import json

from glong_lib import summarizer as Z
from glong_lib.datasets import splits as SP
from glong_lib.extraction import cache as XC
from glong_lib.models import cache_root
from glong_lib.salience.cache import reading_key
from glong_lib.schema import Conversation, Session, Triple, Turn


def _rel(path):
    return path.relative_to(cache_root()).as_posix()


def test_extracted_triples_keep_their_file_names():
    conv = Conversation("c1", ["A", "B"], [Session(1, [Turn("S1:1", "A", "I adopted a cat."),
                                                       Turn("S1:2", "B", "Nice, café?")])])
    assert _rel(XC.extraction_cache_path(conv, "a b/c")) == "extracted/c1-a_b_c-f8cc2ba6cced.json"


def test_salience_readings_keep_their_keys():
    t = [Triple("Ana", "like", "tea", speaker="Ana", turn_id="S1:1"),
         Triple("Bo", "own", "café", speaker="Bo", turn_id="S1:2")]
    turns = [Turn("S1:1", "Ana", "I like tea"), Turn("S1:2", "Bo", "my café")]
    assert reading_key("m", t, None) == "88758fc02ba12f7eb339"
    assert reading_key("m", t, turns) == "d6a2f91ed4a631a7ac85"


def test_the_summarizer_keeps_its_folder(monkeypatch):
    monkeypatch.setattr(Z, "train_summarizer", lambda config, examples, out, progress=True: None)
    assert Z.offline_summarizer_dir(config=Z.DEFAULT_CONFIG, progress=False).name == "t5-600steps-37421b7ff0bb"
    assert Z.offline_summarizer_dir(config=Z.SMOKE_CONFIG, progress=False).name == "t5-12steps-50383463d5cd"


def test_a_locomo_split_keeps_its_file_name(tmp_path):
    (tmp_path / "locomo").mkdir()
    rows = [{"sample_id": f"conv-{i}", "x": i} for i in (26, 30, 41, 42, 43)]
    (tmp_path / "locomo" / "locomo_dev.json").write_text(json.dumps(rows))
    assert _rel(SP.split_path("locomo-report", tmp_path)) == "splits/locomo-report-00d71f65cf0d.json"
