"""Loaders: the shipped samples, every real format (skipped without the real data), the clock,
and clear one-line errors on malformed input."""

from __future__ import annotations

import json

import pytest
from testdata import DATA

from glong_lib import loaders
from glong_lib.errors import DataError
from glong_lib.inspection import inspect_file
from glong_lib.schema import DEFAULT_SESSION_GAP_S, TURN_SPACING_S, Conversation, Session, Turn

# --------------------------------------------------------------------------- clock

def test_clock_uses_gaps_and_default_for_unknown():
    conv = Conversation("x", ["A", "B"], [
        Session(1, [Turn("S1:1", "A", "a"), Turn("S1:2", "B", "b")]),
        Session(2, [Turn("S2:1", "A", "c")], seconds_since_previous=86400),
        Session(3, [Turn("S3:1", "A", "d")], seconds_since_previous=None),
    ])
    conv.assign_clock()
    s1, s2, s3 = conv.sessions
    assert s1.start_s == 0
    assert s2.start_s == 2 * TURN_SPACING_S + 86400
    assert s3.start_s == s2.start_s + TURN_SPACING_S + DEFAULT_SESSION_GAP_S
    assert (s2.gap_known, s3.gap_known) == (True, False)
    assert [t.time_s for t in s1.turns] == [0, TURN_SPACING_S]


# --------------------------------------------------------------------------- shipped samples

def test_sample_conversations_shape():
    convs = loaders.load_conversations(DATA / "conversations")
    assert len(convs) >= 8
    for c in convs:
        assert 4 <= len(c.sessions) <= 5, c.id
        assert all(8 <= len(s.turns) <= 16 for s in c.sessions), c.id
        starts = [s.start_s for s in c.sessions]
        assert starts == sorted(starts) and len(set(starts)) == len(starts)
        ids = [t.id for t in c.turns()]
        assert len(ids) == len(set(ids))
        assert any(t.triples for t in c.turns())
        # gold triples carry their provenance
        tr = next(tr for t in c.turns() for tr in t.triples)
        assert tr.turn_id and tr.speaker and tr.session and tr.source


def test_sample_probes_point_at_earlier_turns():
    convs = {c.id: c for c in loaders.load_conversations(DATA / "conversations")}
    probes = loaders.load_probes(DATA / "probes.jsonl")
    assert len(probes) >= 40
    for q in probes:
        conv = convs[q.conversation]
        for e in q.evidence:
            assert conv.session_of(e) < q.asked_in_session, q.id


def test_sample_training_and_summary_pairs():
    pairs = loaders.load_triple_pairs(DATA / "triple_pairs.jsonl")
    assert len(pairs) >= 400
    assert any(not p.triples for p in pairs) and any(len(p.triples) > 1 for p in pairs)
    summaries = loaders.load_summary_pairs(DATA / "summaries.jsonl")
    assert len(summaries) >= 150
    assert all(s.summary and s.dialogue for s in summaries)


def test_event_pairs_keep_the_phrase_and_leave_the_date_to_the_memory():
    from datetime import datetime
    from statistics import mean

    from glong_lib.dates import resolve_date

    pairs = [p for p in loaders.load_triple_pairs(DATA / "triple_pairs.jsonl") if p.id.startswith("te")]
    events = [t for p in pairs for t in p.triples
              if t.relation in {"attended", "visited", "did", "made", "received", "started", "met", "bought",
                                "achieved"}]
    assert len(pairs) >= 150 and len(events) >= 100 and any(not p.triples for p in pairs)
    assert mean(len(t.object.split()) for t in events) >= 3  # the whole phrase, not a keyword
    said = datetime(2023, 5, 8, 12, 0)
    assert not [t.object for p in pairs for t in p.triples if resolve_date(t.object, said)]  # no "yesterday" in objects
    # dates come from the sentence
    assert sum(resolve_date(p.utterance, said) is not None for p in pairs) >= len(pairs) // 3


# data/extractor/ holds the shipped LoRA adapter (its config and training record), not a data sample
SAMPLE_FILES = sorted(p for p in DATA.rglob("*") if p.suffix in (".json", ".jsonl")
                      and "results" not in p.parts and "extractor" not in p.relative_to(DATA).parts)


#: Sample files written in another data set's own shape on purpose (the LoCoMo stand-in).
FOREIGN_SHAPES = {"locomo_standin.json": "locomo"}


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_inspect_every_sample_file(path):
    stats = inspect_file(path)
    assert (stats["format"] == FOREIGN_SHAPES[path.name] if path.name in FOREIGN_SHAPES
            else stats["format"].startswith("glong-"))


def test_locomo_stand_in_loads_as_locomo_with_observations_and_evidence():
    """The stand-in notebook 04 runs the ladder on: every question's evidence is a turn of the dialogue,
    every observation names turns that exist, categories 1-4 only."""
    dialogues, questions = loaders.load_locomo(DATA / "locomo_standin.json")
    turns = {t.id for t in dialogues[0].turns()}
    units = loaders.load_locomo_observations(DATA / "locomo_standin.json")[0]
    assert len(turns) == 30 and len(questions) == 15 and len(units.turns()) == 17
    assert all(set(q.evidence) <= turns for q in questions)
    assert all(set(loaders.source_turns(u.id)) <= turns for u in units.turns())
    assert {q.category for q in questions} <= {"single-hop", "multi-hop", "temporal", "open-domain"}


def test_shipped_benchmark_result_has_what_the_appendices_draw():
    """data/results holds measured numbers, not samples: the keys appendices A1 and A5 read, no per-item data."""
    result = json.loads((DATA / "results" / "bench_salience.json").read_text())
    for key in ("command", "dialogues", "report", "layer_curve_select", "summary_length_curve", "chosen_rows",
                "added_value", "grounded", "planted", "planted_by_choice", "seconds_per_10_turns"):
        assert key in result, key
    assert "--json" not in result["command"] and '"per_dialogue"' not in json.dumps(result)
    chosen = result["chosen_on_selection"]["decoder dialogue"]
    assert chosen.startswith("decoder dialogue/") and chosen.count(" | ") == 2


# --------------------------------------------------------------------------- real formats

def test_real_msc_jsonl(real_data):
    convs = loaders.load_msc_jsonl(real_data / "msc/msc4_valid.jsonl")
    assert len(convs) == 500
    c = convs[0]
    assert [s.index for s in c.sessions] == [1, 2, 3, 4]
    assert c.sessions[1].gap_known and not c.sessions[3].gap_known
    assert c.sessions[1].start_s == len(c.sessions[0].turns) * TURN_SPACING_S + c.sessions[1].seconds_since_previous
    assert {t.speaker for t in c.turns()} == {"Speaker 1", "Speaker 2"}


def test_real_msc_episodes(real_data):
    (conv,) = loaders.load_msc_episodes(real_data / "msc/msc_episode30_5sessions.json")
    assert len(conv.sessions) == 5
    assert conv.turns()[0].speaker == "Speaker A"


def test_real_personaext(real_data):
    pairs = loaders.load_triple_pairs(real_data / "personaext/personaext_pairs.jsonl")
    assert sum(len(p.triples) for p in pairs) == 20310
    assert len({t.relation for p in pairs for t in p.triples}) == 76
    relations = loaders.load_personaext_schema(real_data / "personaext/schema.json")
    assert "like_food" in relations and len(relations) > 90


def test_real_summaries(real_data):
    assert len(loaders.load_summary_pairs(real_data / "summaries/samsum_test_819.json")) == 819
    test = loaders.load_summary_pairs(real_data / "summaries/dialogsum_test.jsonl")
    assert len(test) == 500 and all(p.summary for p in test)  # test lines use summary1..3


def test_real_locomo(real_data):
    convs, qas = loaders.load_locomo(real_data / "locomo/locomo_dev.json")
    assert len(convs) == 5
    c = convs[0]
    assert c.turns()[0].id == "D1:1"
    assert all(s.gap_known for s in c.sessions[1:])
    assert c.sessions[1].seconds_since_previous == pytest.approx((25 - 8) * 86400 - 42 * 60)
    by_cat = {q.category for q in qas}
    assert by_cat == {"multi-hop", "temporal", "open-domain", "single-hop", "adversarial"}
    first = next(q for q in qas if q.question.startswith("When did Caroline go to the LGBTQ"))
    assert first.category == "temporal" and first.evidence == ["D1:3"]


def test_inspect_every_real_file(real_data):
    for path in sorted(p for p in real_data.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")):
        stats = inspect_file(path)
        assert stats["format"], path


# --------------------------------------------------------------------------- ParlAI layout

def test_msc_parlai_layout(tmp_path):
    line = {
        "personas": [["p1"], ["p2"]],
        "dialog": [{"id": "Speaker 1", "text": "back again"}, {"id": "Speaker 2", "text": "hello"}],
        "metadata": {"initial_data_id": "train_7", "session_id": 2},
        "previous_dialogs": [
            {"dialog": [{"text": "hi"}, {"text": "hey, I have a dog"}], "time_num": 3, "time_unit": "days"},
            {"dialog": [{"text": "how is the dog"}, {"text": "great"}], "time_num": 5, "time_unit": "hours"},
        ],
        "init_personas": [["i like dogs"], ["i have a dog"]],
    }
    folder = tmp_path / "msc_dialogue" / "session_3"
    folder.mkdir(parents=True)
    path = folder / "valid.txt"
    path.write_text(json.dumps(line) + "\n")
    assert loaders.detect_format(path) == "msc-parlai"
    (conv,) = loaders.load_conversations(path)
    assert conv.id == "train_7"
    assert [s.seconds_since_previous for s in conv.sessions] == [None, 3 * 86400, 5 * 3600]
    assert conv.turns()[1].speaker == "Speaker 2" and conv.turns()[-1].text == "hello"


def test_personaext_u2t_layout(tmp_path):
    entries = [{"triplets": [{"tokens": ["i", "have", "two", "cats", "."], "head": [0], "tail": [2, 3],
                              "label": "have_pet"}]}]
    path = tmp_path / "u2t_map_all.json"
    path.write_text(json.dumps(entries))
    (pair,) = loaders.load_triple_pairs(path)
    assert pair.utterance == "i have two cats."
    assert pair.triples[0].key() == ("i", "have_pet", "two cats")


# --------------------------------------------------------------------------- malformed input

def _conversation_json(**changes):
    obj = {"format": "glong-conversation", "id": "bad", "speakers": ["A", "B"],
           "sessions": [{"session": 1, "turns": [{"id": "S1:1", "speaker": "A", "text": "hi"}]}]}
    obj.update(changes)
    return obj


def _one_line(err: Exception) -> str:
    text = str(err)
    assert "\n" not in text and text
    return text


def test_truncated_json(tmp_path):
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(_conversation_json())[:-20])
    with pytest.raises(DataError) as e:
        inspect_file(path)
    assert "conv.json" in _one_line(e.value) and "line 1" in str(e.value)


def test_jsonl_line_of_wrong_shape(tmp_path):
    good = json.dumps({"id": "a", "utterance": "i have a cat", "triples": []})
    path = tmp_path / "pairs.jsonl"
    path.write_text(good + "\n" + json.dumps({"id": "b", "utterance": "x", "triples": "cat"}) + "\n")
    with pytest.raises(DataError) as e:
        loaders.load_triple_pairs(path)
    assert "pairs.jsonl: line 2" in _one_line(e.value) and "'triples'" in str(e.value)


def test_jsonl_line_not_json(tmp_path):
    path = tmp_path / "probes.jsonl"
    row = {"conversation": "c", "question": "q", "evidence": ["S1:1"]}
    path.write_text(json.dumps(row) + "\n{oops\n")
    with pytest.raises(DataError, match=r"probes.jsonl: line 2: invalid JSON"):
        loaders.load_probes(path)


def test_empty_conversation(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(_conversation_json(sessions=[{"session": 1, "turns": []}])))
    with pytest.raises(DataError, match="no turns"):
        loaders.load_conversations(path)
    path.write_text(json.dumps(_conversation_json(sessions=[])))
    with pytest.raises(DataError, match="no sessions"):
        loaders.load_conversations(path)


def test_non_utf8(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes('{"utterance": "caf\u00e9"}\n'.encode("latin-1"))
    with pytest.raises(DataError, match=r"latin1.jsonl: not UTF-8 text \(byte 0xe9"):
        inspect_file(path)


def test_unknown_format(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(DataError, match="unrecognised format"):
        loaders.detect_format(path)


def test_missing_key_names_the_record(tmp_path):
    path = tmp_path / "conv.json"
    obj = _conversation_json()
    del obj["sessions"][0]["turns"][0]["speaker"]
    path.write_text(json.dumps(obj))
    with pytest.raises(DataError, match=r"session 1, turn 1: missing key 'speaker'"):
        loaders.load_conversation(path)


def test_bad_locomo_category(tmp_path):
    sample = {"sample_id": "s", "conversation": {"speaker_a": "A", "speaker_b": "B",
              "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]},
              "qa": [{"question": "q", "answer": "a", "evidence": ["D1:1"], "category": 9}]}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))
    with pytest.raises(DataError, match=r"sample 1, qa 1: unknown category 9"):
        loaders.load_locomo(path)
