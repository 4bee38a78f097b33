"""Answers from retrieved memory on LoCoMo (the paper's Table 3 counterpart), scored with LoCoMo's
own answer F1.

Each question is answered by the generator from the top ``k`` items one retriever returns, each
shown as the dialogue sentence it came from with its session's date (the same lines for every
method, so methods differ only in *which* memories they find); ``no memory`` answers from nothing
and measures what the generator knows or guesses. The score is the LoCoMo repository's
(``task_eval/evaluation.py``): answers normalised (commas, punctuation and the words a/an/the/and
dropped, lower case), Porter stems, token F1; a multi-hop answer is split at commas and each gold
part takes its best predicted part; an open-domain answer keeps the part before its first ``;``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any, Optional, Sequence

from ..errors import DataError
from ..generation import clean_reply
from ..loaders import source_turns
from ..schema import QA, Conversation
from .intervals import Interval, interval
from .retrieval import _resolve, question_time

#: LoCoMo's categories 1-4 in its own order.
LOCOMO_ORDER = ("multi-hop", "temporal", "open-domain", "single-hop")

#: The method that answers with no memory at all.
NO_MEMORY = "no memory"

#: The paper's Table 3 (LoCoMo generation, N = 50 dialogues, gpt-4o-mini, x100): B-1, B-2, B-3, B-4, R-L of
#: *replies*; quoted beside our answer F1, which scores short answers instead (no number of one sits beside the other).
PAPER_TABLE3_LOCOMO = {
    "No History": [19.74, 7.17, 2.63, 1.12, 18.78],
    "MemoryBank": [20.90, 8.60, 3.96, 1.74, 20.59],
    "FraCom": [20.62, 9.16, 4.27, 1.79, 20.86],
    "LD-Agent": [21.49, 9.07, 4.08, 1.62, 20.94],
    "G-Long": [24.03, 10.09, 4.67, 1.93, 22.31],
}

_DROPPED_WORDS = re.compile(r"\b(a|an|the|and)\b")


def normalise_answer(text: str) -> str:
    """LoCoMo's answer normalisation: commas removed, lower case, punctuation removed, the words
    a, an, the and "and" removed, white space collapsed.

    >>> normalise_answer("The Cat, and a Dog!")
    'cat dog'
    """
    text = str(text).replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    return " ".join(_DROPPED_WORDS.sub(" ", text).split())


def answer_tokens(text: str) -> list[str]:
    """The Porter stems (NLTK's, as LoCoMo's scorer) of the normalised answer's words.

    >>> answer_tokens("Running to the parks")
    ['run', 'to', 'park']
    """
    from nltk.stem import PorterStemmer

    stem = PorterStemmer().stem
    return [stem(w) for w in normalise_answer(text).split()]


def token_f1(prediction: str, answer: str) -> float:
    """Token F1 of two answers over their stems (repeats counted, as ``Counter`` intersection).
    "went running in park" vs "running in a park": stems [went, run, in, park] and [run, in, park],
    3 shared, precision 3/4, recall 3/3, F1 = 2 * 0.75 * 1 / 1.75 = 0.857.

    >>> round(token_f1("went running in park", "running in a park"), 3), token_f1("no idea", "Paris")
    (0.857, 0.0)
    """
    pred, gold = answer_tokens(prediction), answer_tokens(answer)
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def locomo_answer_f1(prediction: str, answer: Any, category: str) -> float:
    """LoCoMo's score of one answer by its category: multi-hop answers are lists (each gold part,
    split at commas, takes the best F1 over the predicted parts; their mean), an open-domain gold
    answer keeps its part before ``;``, the others are one :func:`token_f1`.

    >>> locomo_answer_f1("pottery, camping", "camping, pottery, painting", "multi-hop")  # 1, 1, 0
    0.6666666666666666
    >>> locomo_answer_f1("Paris", "Paris; or Lyon", "open-domain")
    1.0
    """
    answer = str(answer)
    if category == "multi-hop":
        preds = [p.strip() for p in str(prediction).split(",")]
        golds = [g.strip() for g in answer.split(",")]
        return sum(max(token_f1(p, g) for p in preds) for g in golds) / len(golds)
    if category == "open-domain":
        answer = answer.split(";")[0].strip()
    return token_f1(prediction, answer)


# --------------------------------------------------------------------------- answering

QA_SYSTEM = "You answer questions about conversations between {a} and {b}."
#: The memory block's header (the model-free echo generator reads the line after it).
QA_MEMORY_HEADER = "Things {a} and {b} said in earlier conversations:"
QA_INSTRUCTION = "Question: {question}\nAnswer in a few words:"


def human_date(date: Optional[str]) -> Optional[str]:
    """An ISO date stamp as words (what a question's answer uses); anything else unchanged.

    >>> human_date("2023-05-08T13:56:00"), human_date("last May"), human_date(None)
    ('8 May 2023', 'last May', None)
    """
    from datetime import datetime

    try:
        when = datetime.fromisoformat(str(date))
    except (TypeError, ValueError):
        return date
    return f"{when.day} {when:%B %Y}"


def memory_line(text: str, date: Optional[str]) -> str:
    """One memory as the answering prompt shows it: the sentence, then its session's date in words.

    >>> memory_line("I adopted a cat.", "2023-05-08T13:56:00"), memory_line("Hi", None)
    ('I adopted a cat. (8 May 2023)', 'Hi')
    """
    return f"{text} ({human_date(date)})" if date else text


def qa_prompt(question: str, lines: Sequence[str], speakers: Sequence[str]) -> list[dict[str, str]]:
    """The chat messages that ask ``question`` with the memory ``lines``, in plain words (no tags, no
    dashes; with no memories the block is left out): the layout that stopped the 135M model copying
    the prompt's header as its answer (``benchmarks/bench_answers.py``; docs/results.md).

    >>> print(qa_prompt("Where?", ["I live in Paris. (8 May 2023)"], ["Ana", "Bo"])[1]["content"])
    Things Ana and Bo said in earlier conversations:
    I live in Paris. (8 May 2023)
    <BLANKLINE>
    Question: Where?
    Answer in a few words:
    """
    a, b = (list(speakers) + ["A", "B"])[:2]
    block = [QA_MEMORY_HEADER.format(a=a, b=b), *lines, ""] if lines else []
    body = "\n".join([*block, QA_INSTRUCTION.format(question=question.strip())])
    return [{"role": "system", "content": QA_SYSTEM.format(a=a, b=b)}, {"role": "user", "content": body}]


def session_dates(conv: Conversation) -> dict[str, Optional[str]]:
    """Each dialogue turn id of ``conv`` -> its session's date."""
    return {t.id: s.date for s in conv.sessions for t in s.turns}


def retrieved_lines(result, dates: dict[str, Optional[str]]) -> list[str]:
    """The memory lines of one retrieval: each item's source text with its first source turn's date."""
    return [memory_line(text, dates.get(next(iter(source_turns(tid)), ""))) for text, tid in
            zip(result.texts, result.turn_ids)]


def answer_questions(retrievers: dict[str, Any], questions: Sequence[QA], dialogues: Sequence[Conversation],
                     generator, k: int = 5, max_new_tokens: int = 16, progress: bool = True,
                     units: Optional[Sequence[Conversation]] = None,
                     by_conversation: bool = False) -> "AnswerEvaluation":
    """Every question answered from each retriever's top ``k`` (and from no memory), scored with
    :func:`locomo_answer_f1`. ``retrievers`` are specs as :func:`~glong_lib.evaluation.retrieval.evaluate_evidence`
    takes them, resolved per (unit conversation, session); ``dialogues`` give the speakers and dates;
    ``by_conversation``: the intervals resample whole conversations (:class:`AnswerEvaluation`)."""
    from tqdm.auto import tqdm

    if k < 1:
        raise DataError(f"k should be a positive integer, got {k}")
    by_id = {c.id: c for c in dialogues}
    unit_by_id = {c.id: c for c in (units or dialogues)}
    cache: dict = {}
    rows = []
    for q in tqdm(questions, desc="answers", disable=not progress):
        conv = by_id.get(q.conversation)
        if conv is None or q.conversation not in unit_by_id:
            raise DataError(f"question '{q.id}' refers to unknown conversation '{q.conversation}'")
        dates, now = session_dates(conv), question_time(conv, q)
        for name in [NO_MEMORY, *retrievers]:
            lines = [] if name == NO_MEMORY else retrieved_lines(
                _resolve(retrievers[name], unit_by_id[q.conversation], q.asked_in_session, cache, name)
                .retrieve(q.question, now_s=now, k=k), dates)
            reply = generator.generate(qa_prompt(q.question, lines, conv.speakers), max_new_tokens=max_new_tokens)
            prediction = clean_reply(reply.text)
            rows.append({"method": name, "question": q.id, "category": q.category, "conversation": q.conversation,
                         "prediction": prediction, "answer": str(q.answer),
                         "F1": locomo_answer_f1(prediction, q.answer, q.category)})
    return AnswerEvaluation(rows, [NO_MEMORY, *retrievers], by_conversation)


class AnswerEvaluation:
    """The answers of every method to the same questions, with means and paired intervals
    (``intervals.interval`` and its small-sample rule: fewer than 8 resampled units, "too few to
    tell").

    The intervals resample questions, or whole conversations with ``by_conversation`` (answers
    about one conversation are not independent; ``unit`` says which)."""

    def __init__(self, rows: list[dict[str, Any]], methods: Sequence[str], by_conversation: bool = False):
        self.rows, self.methods, self.by_conversation = rows, list(methods), by_conversation
        self.unit = "conversation" if by_conversation else "question"

    def _groups(self, conversations: Sequence[str]) -> Optional[list[str]]:
        """Bootstrap groups for items from ``conversations``: those, or None (each item its own)."""
        return list(conversations) if self.by_conversation else None

    def values(self, method: str, category: Optional[str] = None) -> list[tuple[str, str, float]]:
        return [(r["question"], r["conversation"], r["F1"]) for r in self.rows
                if r["method"] == method and (category is None or r["category"] == category)]

    def mean_interval(self, method: str, category: Optional[str] = None) -> Interval:
        """A method's mean F1 with its 95% interval (bootstrap by ``unit``)."""
        vals = self.values(method, category)
        return interval([v for _, _, v in vals], conversations=self._groups([c for _, c, _ in vals]))

    def table(self, baseline: Optional[str] = None) -> list[dict[str, Any]]:
        """One row per method and category ("all" first, then LoCoMo's order, then any other): the
        questions, mean F1 with a 95% interval (bootstrap by ``unit``; ``enough`` is the
        small-sample rule), and with ``baseline`` the paired difference to it."""
        seen = {r["category"] for r in self.rows}
        categories = [c for c in LOCOMO_ORDER if c in seen] + sorted(seen - set(LOCOMO_ORDER))
        out = []
        for cat in [None, *categories]:
            for m in self.methods:
                if not self.values(m, cat):
                    continue
                ci = self.mean_interval(m, cat)
                row = {"category": cat or "all", "method": m, "questions": ci.n_items,
                       "F1": ci.mean, "ci low": ci.low, "ci high": ci.high, "enough": ci.enough}
                if baseline and m != baseline:
                    d = self.compare(m, baseline, cat)
                    row.update({f"- {baseline}": d["mean_diff"], "diff low": d["ci_low"], "diff high": d["ci_high"]})
                out.append(row)
        return out

    def compare(self, a: str, b: str, category: Optional[str] = None) -> dict:
        """F1 of ``a`` minus ``b`` on the same questions, paired bootstrap by ``unit``
        (``intervals.Interval.as_dict``)."""
        va = {q: (c, v) for q, c, v in self.values(a, category)}
        vb = {q: v for q, _, v in self.values(b, category)}
        keys = sorted(va.keys() & vb.keys())
        if not keys:
            raise DataError(f"no question has answers from both '{a}' and '{b}'")
        return interval([va[q][1] for q in keys], [vb[q] for q in keys],
                        conversations=self._groups([va[q][0] for q in keys])).as_dict()
