"""Loaders for the paper's other data, on small stand-ins written here in the released layouts:
LongMemEval (``longmemeval_s.json``), Conversation Chronicles (``test.jsonl``) and LD-Agent's MSC
(``sequential_test.json``); LongMemEval's evidence retrieval through ``glong eval-retrieval --longmemeval``."""

from __future__ import annotations

import json

import pytest
from test_retrieval import WordEncoder

from glong_lib import loaders
from glong_lib.cli import main
from glong_lib.errors import DataError
from glong_lib.schema import Triple


def _turn(role, content, answer=False):
    return {"role": role, "content": content, **({"has_answer": True} if answer else {})}


def write_longmemeval(path):
    """Two instances: one whose evidence is the user's turn about a cat, one abstention (no turn marked)."""
    haystack = [[_turn("user", "I just moved to Denver for a new job."), _turn("assistant", ""),
                 _turn("assistant", "Congratulations on the move!")],
                [_turn("user", "Can you suggest a name for my new cat?", answer=True),
                 _turn("assistant", "How about Miso?")],
                [_turn("user", "What is a good pasta recipe?"), _turn("assistant", "Try a simple carbonara.")]]
    common = {"haystack_session_ids": ["s_a", "answer_1", "s_c"],
              "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/22 (Mon) 10:00", "2023/06/01 (Thu) 18:30"],
              "haystack_sessions": haystack}
    data = [{"question_id": "q1", "question_type": "single-session-user", "question": "What name for my new cat?",
             "answer": "a cat", "question_date": "2023/06/02 (Fri) 09:00", "answer_session_ids": ["answer_1"],
             **common},
            {"question_id": "q2_abs", "question_type": "single-session-user", "question": "What is my dog's name?",
             "answer": "You did not mention a dog.", "question_date": "2023/06/02 (Fri) 09:00",
             "answer_session_ids": [],
             **{**common, "haystack_sessions": [[{k: v for k, v in t.items() if k != "has_answer"} for t in s]
                                                for s in haystack]}}]
    path.write_text(json.dumps(data))
    return path


def write_cc(path):
    intervals = ["Start", "A few hours after", "A couple of days after", "A few weeks after", "A few months after"]
    ordinals = ["first", "second", "third", "fourth", "fifth"]
    episode = {"dataID": "episode-1", "relationship": "Neighbors", "time_interval": intervals,
               "summary": [f"summary {i}" for i in range(1, 6)]}
    for i, name in enumerate(ordinals, start=1):
        episode[f"{name}_session_dialogue"] = [f"Hello in session {i}.", f"Hi, nice to see you again ({i})."]
        episode[f"{name}_session_speakers"] = ["Neighbors A", "Neighbors B"]
    path.write_text(json.dumps(episode) + "\n" + json.dumps({**episode, "dataID": "episode-2"}) + "\n")
    return path


def write_ldagent(path):
    def session(i, gap):
        return {"dialog": [{"SPEAKER_1": f"How was week {i}?", "SPEAKER_2": f"Week {i} was fine."},
                           {"SPEAKER_1": "Any news?", "SPEAKER_2": "I adopted a cat."}], "time_pass": gap}

    path.write_text(json.dumps([[session(1, 3600), session(2, 86400), session(3, 0)],
                                [session(1, 7200), session(2, 7200)]]))
    return path


def test_formats_are_detected(tmp_path):
    assert loaders.detect_format(write_longmemeval(tmp_path / "longmemeval_s.json")) == "longmemeval"
    assert loaders.detect_format(write_cc(tmp_path / "test.jsonl")) == "cc"
    assert loaders.detect_format(write_ldagent(tmp_path / "sequential_test.json")) == "ldagent-msc"


def test_longmemeval_haystacks_and_evidence(tmp_path):
    convs, qas = loaders.load_longmemeval(write_longmemeval(tmp_path / "lme.json"))
    assert [c.id for c in convs] == ["q1", "q2_abs"] and [q.conversation for q in qas] == ["q1", "q2_abs"]
    assert qas[0].evidence == ["S2:1"] and qas[1].evidence == [] and qas[0].category == "single-session-user"
    s = convs[0].sessions
    assert [(t.id, t.speaker) for t in s[0].turns] == [("S1:1", "user"), ("S1:3", "assistant")]  # empty message skipped
    assert s[1].seconds_since_previous == 2 * 86400 + (10 * 60 - 141) * 60  # 05/20 02:21 -> 05/22 10:00
    assert s[0].date == "2023-05-20T02:21:00"


def test_conversation_chronicles_layout(tmp_path):
    convs = loaders.load_conversations(write_cc(tmp_path / "test.jsonl"))
    c = convs[0]
    assert [x.id for x in convs] == ["episode-1", "episode-2"] and c.title == "Neighbors"
    assert len(c.sessions) == 5 and c.speakers == ["Neighbors A", "Neighbors B"]
    assert [s.seconds_since_previous for s in c.sessions] == [None, 3 * 3600, 2 * 86400, 3 * 604800, 3 * 2592000]


def test_ldagent_msc_layout(tmp_path):
    convs = loaders.load_conversations(write_ldagent(tmp_path / "sequential_test.json"))
    c = convs[0]
    assert [x.id for x in convs] == ["ldagent-1", "ldagent-2"] and c.speakers == ["SPEAKER_1", "SPEAKER_2"]
    assert [(t.id, t.speaker) for t in c.sessions[0].turns] == [("S1:1", "SPEAKER_1"), ("S1:2", "SPEAKER_2"),
                                                                ("S1:3", "SPEAKER_1"), ("S1:4", "SPEAKER_2")]
    # time_pass is the time after a session: the next session's gap
    assert [s.seconds_since_previous for s in c.sessions] == [None, 3600, 86400]


@pytest.mark.parametrize("writer, broken", [
    (write_ldagent, lambda d: d[0][0].update(dialog="not a list")),
    (write_longmemeval, lambda d: d[0].update(haystack_dates=d[0]["haystack_dates"][:2])),
    (write_longmemeval, lambda d: d[0]["haystack_dates"].__setitem__(0, "May 20")),
])
def test_paper_data_bad_input_is_one_line(tmp_path, writer, broken):
    path = writer(tmp_path / "f.json")
    data = json.loads(path.read_text())
    broken(data)
    path.write_text(json.dumps(data))
    with pytest.raises(DataError) as info:
        loaders.load_conversations(path)
    assert "\n" not in str(info.value)


class StubExtractor:
    """Model-free triples: (speaker, said, the turn)."""

    def extract(self, utterances, speakers, batch_size=8, progress=True):
        return [[Triple(s, "said", u)] for u, s in zip(utterances, speakers)]


def test_longmemeval_evidence_retrieval(tmp_path, monkeypatch):
    from glong_lib.evaluation.longmemeval import evaluate_longmemeval

    monkeypatch.setenv("GLONG_CACHE", str(tmp_path / "cache"))
    ev = evaluate_longmemeval(write_longmemeval(tmp_path / "lme.json"), WordEncoder(), methods=["glong", "dense"],
                              ks=(1, 3), extractor=StubExtractor(), extractor_name="stub", progress=False)
    assert ev.excluded == {"no turn marked has_answer (abstention)": 1}
    table = {r["method"]: r for r in ev.table()}
    assert set(table) == {"glong", "dense"}
    # the evidence turn is the only one about a cat: reached from its object node (G-Long) or directly (dense)
    assert table["dense"]["Hit@3"] == table["glong"]["Hit@3"] == 1.0


def test_eval_retrieval_longmemeval_command(tmp_path, capsys):
    path = write_longmemeval(tmp_path / "longmemeval_s.json")
    assert main(["eval-retrieval", "--longmemeval", str(path), "--methods", "dense,bm25", "--k", "1,3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {r["method"] for r in out["metrics"]} == {"dense", "bm25"} and out["ks"] == [1, 3]
    assert out["excluded"] == {"no turn marked has_answer (abstention)": 1}
