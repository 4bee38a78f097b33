"""The paper's other data: LongMemEval, Conversation Chronicles, LD-Agent's MSC."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Optional

from ..errors import DataError
from ..io import PathLike, iter_jsonl, read_json
from ..schema import (
    QA,
    Conversation,
    Session,
    Turn,
)
from .checks import _check_conversation, _gap_value, _need, _unique_ids
from .msc import _episode_sessions

_LME_DATE = "%Y/%m/%d (%a) %H:%M"


def _lme_date(text: Any, path: PathLike, where: str) -> datetime:
    """A LongMemEval stamp such as ``'2023/05/20 (Sat) 02:21'``."""
    try:
        return datetime.strptime(str(text).strip(), _LME_DATE)
    except ValueError:
        raise DataError(f"unreadable date '{str(text)[:40]}' (expected like 2023/05/20 (Sat) 02:21)",
                        path=path, where=where) from None


def load_longmemeval(path: PathLike) -> tuple[list[Conversation], list[QA]]:
    """LongMemEval (``longmemeval_s.json``): a JSON list of instances, each one question with its own
    haystack: ``haystack_sessions`` (lists of ``{role, content[, has_answer]}`` turns) with
    ``haystack_session_ids`` and ``haystack_dates``, and ``answer_session_ids``. Each instance becomes
    a conversation named by its ``question_id`` (turn ids ``S<session>:<turn>``, speakers ``user`` and
    ``assistant``, gaps from the dates) and a question asked after its last session whose evidence is
    the turns marked ``has_answer`` (the paper's Recall@k: an evidence turn in the top k).
    ``QA.category`` is the ``question_type``; ``QA.answer`` the answer; an instance whose turns carry
    no ``has_answer`` (abstention questions) has no evidence."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError("LongMemEval file should be a JSON list of instances", path=path)
    convs, qas = [], []
    for r, item in enumerate(data, start=1):
        w = f"instance {r}"
        qid = str(_need(item, "question_id", (str, int), path, w))
        sessions_in = _need(item, "haystack_sessions", list, path, w)
        ids = _need(item, "haystack_session_ids", list, path, w)
        dates = _need(item, "haystack_dates", list, path, w)
        if not len(sessions_in) == len(ids) == len(dates):
            raise DataError(f"{len(sessions_in)} sessions, {len(ids)} session ids and {len(dates)} dates",
                            path=path, where=w)
        sessions, evidence, prev = [], [], None
        for i, (turns_in, stamp) in enumerate(zip(sessions_in, dates), start=1):
            sw = f"{w}, session {i}"
            when = _lme_date(stamp, path, sw)
            turns = []
            for j, t in enumerate(turns_in if isinstance(turns_in, list) else [None], start=1):
                tw = f"{sw}, turn {j}"
                role, content = _need(t, "role", str, path, tw), _need(t, "content", str, path, tw)
                if not content.strip():
                    continue  # an empty message (the haystacks have a few): nothing to remember or retrieve
                turns.append(Turn(f"S{i}:{j}", role, content))
                if t.get("has_answer") is True:
                    evidence.append(turns[-1].id)
            if turns:  # a session of empty messages only is dropped; ids keep their positions
                sessions.append(Session(i, turns, (when - prev).total_seconds() if prev else None, when.isoformat()))
                prev = when
        conv = Conversation(qid, ["user", "assistant"], sessions, source="longmemeval")
        convs.append(_check_conversation(conv, path, w))
        qas.append(QA(qid, _need(item, "question", str, path, w), str(item.get("answer", "")), evidence,
                      str(item.get("question_type", "")), id=qid))
    _unique_ids([q.id for q in qas], path, "question_id")
    return convs, qas


#: Seconds per unit of a spoken interval ("A few hours after"), and how many "a few" / "a couple of" mean.
_INTERVAL_UNITS = {"minute": 60, "hour": 3600, "day": 86400, "week": 604800, "month": 2592000, "year": 31536000}
_INTERVAL_COUNTS = {"a": 1, "an": 1, "one": 1, "a couple of": 2, "two": 2, "a few": 3, "three": 3, "several": 4}


def parse_interval(text: str) -> Optional[float]:
    """Seconds in a Conversation Chronicles interval such as ``"A few hours after"`` ("a few" = 3,
    "a couple of" = 2); None when the text names no unit (``"Start"``) or no count we read.

    >>> parse_interval("A few hours after"), parse_interval("A couple of years after"), parse_interval("Start")
    (10800.0, 63072000.0, None)
    >>> parse_interval("2 weeks later")
    1209600.0
    """
    m = re.search(r"(\d+|a couple of|a few|several|an?|one|two|three)\s+(minute|hour|day|week|month|year)s?",
                  text.lower())
    if not m:
        return None
    count = float(m.group(1)) if m.group(1).isdigit() else _INTERVAL_COUNTS[m.group(1)]
    return float(count * _INTERVAL_UNITS[m.group(2)])


def load_conversation_chronicles(path: PathLike) -> list[Conversation]:
    """Conversation Chronicles as released (``test.jsonl``: one episode a line): ``dataID``,
    ``relationship``, ``time_interval`` (one phrase per session, the first ``"Start"``), ``summary``,
    and ``first_session_dialogue`` / ``first_session_speakers`` ... ``fifth_...``. Gaps come from the
    intervals (:func:`parse_interval`; unknown ones fall back to the default gap); the relationship is
    the conversation's title."""
    convs = []
    for n, obj in iter_jsonl(path):
        w = f"line {n}"
        intervals = obj.get("time_interval") or []
        if not isinstance(intervals, list):
            raise DataError(f"'time_interval' should be list, got {type(intervals).__name__}", path=path, where=w)
        conv = _episode_sessions(obj, path, w, str(_need(obj, "dataID", (str, int), path, w)), "cc")
        for s in conv.sessions:
            if s.index > 1 and s.index - 1 < len(intervals):
                gap = parse_interval(str(intervals[s.index - 1]))  # '<400 nines> years after' is infinite
                s.seconds_since_previous = None if gap is None else _gap_value(
                    gap, f"time_interval' item {s.index} ('{str(intervals[s.index - 1])[:30]}...')", path, w)
        conv.title = str(obj.get("relationship", ""))
        convs.append(_check_conversation(conv, path, w))
    _unique_ids([c.id for c in convs], path, "dataID")
    return convs


def load_ldagent_msc(path: PathLike) -> list[Conversation]:
    """LD-Agent's MSC test file (``sequential_test.json``, the paper's 500 MSC dialogues): a JSON list
    of samples, each a list of sessions ``{dialog: [{SPEAKER_1, SPEAKER_2}, ...], time_pass}``; each
    dialog entry is a SPEAKER_1 turn answered by SPEAKER_2, and ``time_pass`` is the seconds that pass
    after the session (so it is the next session's gap). Samples are named ``ldagent-<n>``."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError("LD-Agent's MSC file should be a JSON list of samples", path=path)
    convs = []
    for r, sample in enumerate(data, start=1):
        w = f"sample {r}"
        if not isinstance(sample, list):
            raise DataError(f"a sample should be a list of sessions, got {type(sample).__name__}", path=path, where=w)
        sessions, gap = [], None
        for i, s in enumerate(sample, start=1):
            sw = f"{w}, session {i}"
            turns = []
            for j, pair in enumerate(_need(s, "dialog", list, path, sw), start=1):
                for speaker in ("SPEAKER_1", "SPEAKER_2"):
                    text = pair.get(speaker) if isinstance(pair, dict) else None
                    if text is not None and not isinstance(text, str):
                        raise DataError(f"'{speaker}' should be str", path=path, where=f"{sw}, entry {j}")
                    if text:
                        turns.append(Turn(f"S{i}:{len(turns) + 1}", speaker, text))
            sessions.append(Session(i, turns, gap))
            passed = s.get("time_pass") if isinstance(s, dict) else None
            gap = (float(_gap_value(passed, "time_pass", path, sw)) if isinstance(passed, (int, float))
                   and not isinstance(passed, bool) else None)  # NaN, -Infinity, 1e308 refused
        convs.append(_check_conversation(Conversation(f"ldagent-{r}", ["SPEAKER_1", "SPEAKER_2"], sessions,
                                                      source="ldagent-msc"), path, w))
    return convs
