"""Cached salience readings: a session is read by the model once, a changed input is a new reading,
a damaged entry is read again, and the probe evaluation weighs with it by default on the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from glong_lib.salience import score_conversation
from glong_lib.salience.cache import CachedScorer, cached_scorer
from glong_lib.schema import Triple, Turn


class CountingScorer:
    """A stand-in source: the raw score of a triple is its object's length; counts its readings."""

    name = "counting"

    def __init__(self):
        self.calls = 0

    def score(self, triples, turns=None):
        self.calls += 1
        return type("R", (), {"raw": np.array([float(len(t.object)) for t in triples])})()


TRIPLES = [Triple("Ana", "like", "tea", speaker="Ana", turn_id="S1:1", session=1),
           Triple("Ana", "own", "a golden retriever", speaker="Ana", turn_id="S1:2", session=1)]
TURNS = [Turn("S1:1", "Ana", "I like tea"), Turn("S1:2", "Ana", "I own a golden retriever")]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GLONG_CACHE", str(tmp_path / "cache"))


def test_a_session_is_read_once_and_gives_the_same_weights():
    inner = CountingScorer()
    cached = CachedScorer(inner)
    first = cached.score(TRIPLES, TURNS).raw
    again = CachedScorer(CountingScorer()).score(TRIPLES, TURNS).raw  # a new process, same readings
    assert inner.calls == 1 and np.array_equal(first, again) and first.tolist() == [3.0, 18.0]
    assert cached_scorer(cached) is cached and cached_scorer(inner) is not inner
    direct = score_conversation(TRIPLES, CountingScorer())
    via_cache = score_conversation(TRIPLES, cached)
    assert [t.weight for t in direct] == [t.weight for t in via_cache] == [pytest.approx(3 / 18), 1.0]


def test_changed_turns_are_a_new_reading_and_a_damaged_entry_is_read_again(tmp_path):
    inner = CountingScorer()
    cached = CachedScorer(inner)
    cached.score(TRIPLES, TURNS)
    cached.score(TRIPLES, TURNS[:1])
    assert inner.calls == 2
    for entry in (tmp_path / "cache" / "salience").glob("*.json"):
        entry.write_text("{not json")
    assert cached.score(TRIPLES, TURNS).raw.tolist() == [3.0, 18.0] and inner.calls == 3


def test_the_unit_evaluations_weigh_their_triples_and_both_is_paired(tmp_path, monkeypatch, capsys):
    """LongMemEval (and LoCoMo, through the same ``evaluate_on_units``) weigh the extracted triples
    with the scorer given; ``--weights both`` adds the graph methods' uniform run, renamed, with the
    paired difference printed."""
    from glong_lib import pipeline as PL
    from glong_lib.cli import main
    from glong_lib.evaluation.longmemeval import evaluate_longmemeval
    from tests.test_paper_data import StubExtractor, write_longmemeval
    from tests.test_retrieval import WordEncoder

    seen = []
    real = PL.score_conversation  # the one step (pipeline.weighted_triples) weighs through it

    def spy(triples, scorer, **kw):
        out = real(triples, scorer, **kw)
        seen.extend(t.weight for t in out)
        return out

    monkeypatch.setattr(PL, "score_conversation", spy)
    path = write_longmemeval(tmp_path / "lme.json")
    ev = evaluate_longmemeval(path, WordEncoder(), methods=["glong"], ks=(1, 3), extractor=StubExtractor(),
                              extractor_name="stub", progress=False, scorer=CountingScorer())
    assert seen and max(seen) == 1.0 and min(seen) < 1.0  # Eq. 3: each session's maximum is 1
    both = ev.renamed({"glong": "glong, uniform weights"})
    assert set(both.metrics) == {"glong, uniform weights"} and {r["method"] for r in both.rows} == set(both.metrics)

    import glong_lib.salience as S

    monkeypatch.setattr(S, "load_scorer", lambda profile=None: CountingScorer())
    monkeypatch.setattr("glong_lib.commands.retrieval._extractor_or_none", lambda args: StubExtractor())
    assert main(["eval-retrieval", "--longmemeval", str(path), "--methods", "glong,dense", "--k", "1,3",
                 "--weights", "both"]) == 0
    out = capsys.readouterr().out
    assert "Eq. 3 weights on - uniform weights (paired" in out and "glong, uniform weights" in out
    assert main(["eval-retrieval", "--longmemeval", str(path), "--methods", "glong", "--k", "1,3",
                 "--weights", "both", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)  # still one JSON document
    assert [d["metric"] for d in data["weights_difference"]] == ["Hit@1", "Hit@3", "MRR@20"]
