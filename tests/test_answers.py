"""LoCoMo answers (issue 28): LoCoMo's answer normalisation and F1 on hand-scored pairs, and the
answering loop with a stub retriever and the model-free generator."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from glong_lib.errors import DataError
from glong_lib.evaluation.answers import (
    NO_MEMORY,
    QA_MEMORY_HEADER,
    answer_questions,
    locomo_answer_f1,
    normalise_answer,
    qa_prompt,
    token_f1,
)
from glong_lib.generation import MemoryEchoGenerator
from glong_lib.schema import QA, Conversation, Session, Turn


@pytest.mark.parametrize("text, expected", [
    ("The Cat, and a Dog!", "cat dog"), ("  An   apple-pie. ", "applepie"), ("band, brand", "band brand"),
    ("7 May 2023", "7 may 2023"),
])
def test_normalisation_is_locomos(text, expected):
    # LoCoMo drops commas and punctuation (so "apple-pie" is one word) and the words a/an/the/and,
    # never their letters inside a word ("band", "brand")
    assert normalise_answer(text) == expected


def test_token_f1_by_hand():
    # stems [she, paint, sunset] vs [paint, sunris]: 1 shared, P = 1/3, R = 1/2, F1 = 2/5
    assert token_f1("She painted sunsets", "painting sunrises") == pytest.approx(0.4)
    assert token_f1("7 May 2023", "The 7 May, 2023") == 1.0
    assert token_f1("", "Paris") == 0.0 and token_f1("the", "a") == 0.0


def test_category_rules():
    # multi-hop: each gold part takes its best predicted part: (1 + 1/2) / 2
    assert locomo_answer_f1("camping, beach trip", "camping, beach", "multi-hop") == pytest.approx(
        (1 + 2 * (1 / 2) * 1 / (1 / 2 + 1)) / 2)
    assert locomo_answer_f1("Paris", "Paris; Lyon too", "open-domain") == 1.0
    assert locomo_answer_f1("Paris", "Paris; Lyon too", "single-hop") == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))


class _Fixed:
    """A retriever whose top items are fixed texts from fixed turns."""

    def __init__(self, texts, turn_ids):
        self.texts, self.turn_ids = texts, turn_ids

    def retrieve(self, query, now_s, k):
        return SimpleNamespace(texts=self.texts[:k], turn_ids=self.turn_ids[:k])


def test_answering_loop_scores_every_method_on_every_question():
    conv = Conversation("c", ["Ana", "Bo"], [Session(1, [Turn("D1:1", "Ana", "I adopted a cat named Tom.")],
                                                     date="7 May 2023")])
    qs = [QA("c", "What is Ana's cat called?", "Tom", ["D1:1"], "single-hop", id="q1")]
    retrievers = {"right": _Fixed(["Tom"], ["D1:1"]), "wrong": _Fixed(["Rex"], ["D1:1"])}
    echo = MemoryEchoGenerator(headers=(QA_MEMORY_HEADER.split("{")[0],))
    result = answer_questions(retrievers, qs, [conv], echo, progress=False)
    got = {r["method"]: (r["prediction"], r["F1"]) for r in result.rows}
    # the echo generator answers with the first memory line, "text (date)": F1 of "tom 7 may 2023" vs "tom";
    # with no memory there is no block, so it falls back to "I see."
    assert got == {NO_MEMORY: ("I see.", 0.0), "right": ("Tom (7 May 2023)", pytest.approx(0.4)),
                   "wrong": ("Rex (7 May 2023)", 0.0)}
    assert result.compare("right", "wrong")["mean_diff"] == pytest.approx(0.4)
    table = result.table(baseline=NO_MEMORY)
    assert [(r["category"], r["method"]) for r in table] == [("all", NO_MEMORY), ("all", "right"), ("all", "wrong"),
                                                             ("single-hop", NO_MEMORY), ("single-hop", "right"),
                                                             ("single-hop", "wrong")]
    with pytest.raises(DataError, match="unknown conversation"):
        answer_questions(retrievers, [QA("x", "?", "a", [], "temporal")], [conv], MemoryEchoGenerator(),
                         progress=False)


def test_prompt_without_memories_leaves_the_block_out():
    content = qa_prompt("Where?", [], ["Ana", "Bo"])[1]["content"]
    assert content.splitlines() == ["Question: Where?", "Answer in a few words:"]


def test_intervals_resample_conversations_when_asked_and_say_when_too_few():
    """Questions by default; whole conversations with ``by_conversation``. Two conversations are two
    values to draw from: the interval is computed but the small-sample rule says "too few to tell"."""
    from glong_lib.evaluation.answers import AnswerEvaluation

    def rows(n_conv):
        out = []
        for i in range(40):
            conv = f"c{i % n_conv}"
            out += [{"method": "a", "question": f"q{i}", "conversation": conv, "category": "single-hop",
                     "F1": float(i % 3 == 0)},
                    {"method": "b", "question": f"q{i}", "conversation": conv, "category": "single-hop", "F1": 0.0}]
        return out

    by_q = AnswerEvaluation(rows(2), ["a", "b"])
    two, eight = (AnswerEvaluation(rows(n), ["a", "b"], by_conversation=True) for n in (2, 8))
    assert (by_q.unit, two.unit, eight.unit) == ("question", "conversation", "conversation")
    dq, d2, d8 = by_q.compare("a", "b"), two.compare("a", "b"), eight.compare("a", "b")
    assert dq["n_groups"] is None and (d2["n_groups"], d8["n_groups"]) == (2, 8)
    assert dq["mean_diff"] == d2["mean_diff"] == d8["mean_diff"] == pytest.approx(14 / 40)
    assert dq["ci_low"] < dq["mean_diff"] < dq["ci_high"]
    assert (dq["verdict"], d2["verdict"]) == ("[+0.20, +0.50]", "too few to tell") and d8["enough"]
