"""LoCoMo: conversations, questions with evidence, and observation sentences."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Optional

from ..errors import DataError
from ..io import PathLike, read_json
from ..schema import (
    QA,
    TURN_SPACING_S,
    Conversation,
    Session,
    Turn,
)
from .checks import LOCOMO_CATEGORIES, _check_conversation, _need, _unique_ids


def parse_locomo_date(text: str) -> datetime:
    """LoCoMo session stamps look like ``'1:56 pm on 8 May, 2023'``.

    >>> parse_locomo_date("1:56 pm on 8 May, 2023").isoformat()
    '2023-05-08T13:56:00'
    """
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def load_locomo(path: PathLike) -> tuple[list[Conversation], list[QA]]:
    """LoCoMo: sessions ``session_N`` with ``session_N_date_time``; turns keep their ``dia_id``
    (``D3:7``); QA keeps evidence ids and the category name (see ``LOCOMO_CATEGORIES``)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError("LoCoMo file should be a JSON list of samples", path=path)
    convs, qas = [], []
    for r, sample in enumerate(data, start=1):
        w = f"sample {r}"
        if not isinstance(sample, dict):
            raise DataError(f"expected a JSON object, got {type(sample).__name__}", path=path, where=w)
        cid = str(sample.get("sample_id", f"locomo-{r}"))
        c = _need(sample, "conversation", dict, path, w)
        keys = _locomo_session_keys(c, path, w)
        sessions, prev = [], None
        for i in sorted(keys):
            sw = f"{w}, session {i}"
            turns = [Turn(str(_need(t, "dia_id", str, path, sw)), _need(t, "speaker", str, path, sw),
                          _need(t, "text", str, path, sw)) for t in _need(c, keys[i], list, path, sw)]
            stamp = c.get(f"{keys[i]}_date_time")
            if stamp is not None and not isinstance(stamp, str):
                raise DataError(f"'{keys[i]}_date_time' should be str, got {type(stamp).__name__}",
                                path=path, where=sw)
            when = None
            if stamp:
                try:
                    when = parse_locomo_date(stamp)
                except ValueError:
                    raise DataError(f"unreadable date '{stamp[:60]}'", path=path, where=sw) from None
            gap = (when - prev).total_seconds() if (when and prev) else None
            sessions.append(Session(i, turns, gap, when.isoformat() if when else None))
            prev = when or prev
        conv = Conversation(cid, [str(c.get("speaker_a", "A")), str(c.get("speaker_b", "B"))], sessions,
                            source="locomo")
        convs.append(_check_conversation(conv, path, w))
        items = sample.get("qa", [])
        if not isinstance(items, list):
            raise DataError(f"'qa' should be list, got {type(items).__name__}", path=path, where=w)
        for q_i, q in enumerate(items, start=1):
            qw = f"{w}, qa {q_i}"
            cat = _need(q, "category", int, path, qw)
            if isinstance(cat, bool) or cat not in LOCOMO_CATEGORIES:
                raise DataError(f"unknown category {cat!r}", path=path, where=qw)
            evidence = q.get("evidence", [])
            if not isinstance(evidence, list) or not all(isinstance(e, (str, int)) for e in evidence):
                raise DataError("'evidence' should be a list of dialogue ids", path=path, where=qw)
            answer = q.get("answer", q.get("adversarial_answer", ""))
            qas.append(QA(cid, _need(q, "question", str, path, qw), str(answer),
                          [str(e) for e in evidence], LOCOMO_CATEGORIES[cat], id=f"{cid}-q{q_i}"))
    _unique_ids([c.id for c in convs], path, "sample_id")
    return convs, qas


def _locomo_session_keys(conversation: dict, path: PathLike, where: str) -> dict[int, str]:
    """Session number -> its key (``session_3``): a number of more than 6 digits is no session, and
    two keys of one number (``session_1`` and ``session_01``) would read one session twice."""
    keys: dict[int, str] = {}
    for k in conversation:
        m = re.fullmatch(r"session_(\d+)", k)
        if not m:
            continue
        if len(m.group(1)) > 6:
            raise DataError(f"session key '{k[:20]}...' ({len(k) - 8} digits) is not a session number",
                            path=path, where=where)
        n = int(m.group(1))
        if n in keys:
            raise DataError(f"'{keys[n]}' and '{k}' are both session {n}", path=path, where=where)
        keys[n] = k
    return keys


#: Joins the dialogue ids of a unit made from several turns: ``"D15:3+D15:5"`` (see ``source_turns``).
UNIT_ID_JOIN = "+"


def load_locomo_observations(path: PathLike) -> list[Conversation]:
    """LoCoMo's ``observation`` sentences as conversations of fact units, one per sentence, in the
    sessions (and on the clock) of the dialogue they summarise. Each unit is a ``Turn`` whose
    ``speaker`` is the person the fact is about and whose ``id`` names the dialogue turn(s) it came
    from (``"D1:3"``, or ``"D15:3+D15:5"`` for two), so evidence scoring maps a retrieved fact back
    to its turns. Units are ordered by their first source turn; sessions without observations are
    dropped (no fact can be retrieved from them)."""
    dialogues = {c.id: c for c in load_locomo(path)[0]}
    out = []
    for r, sample in enumerate(read_json(path), start=1):
        w = f"sample {r}"
        cid = str(sample.get("sample_id", f"locomo-{r}"))
        observed = _need(sample, "observation", dict, path, w)
        sessions = []
        for session in dialogues[cid].sessions:
            sw = f"{w}, session_{session.index}_observation"
            by_speaker = observed.get(f"session_{session.index}_observation", {})
            if not isinstance(by_speaker, dict):
                raise DataError(f"should be an object of speaker -> facts, got {type(by_speaker).__name__}",
                                path=path, where=sw)
            units = []
            for speaker, facts in by_speaker.items():
                for k, fact in enumerate(facts if isinstance(facts, list) else [None]):
                    if not (isinstance(fact, list) and len(fact) == 2 and isinstance(fact[0], str)):
                        raise DataError(f"fact {k + 1} of {speaker} should be [sentence, dialogue id(s)]",
                                        path=path, where=sw)
                    ids = [fact[1]] if isinstance(fact[1], str) else fact[1]
                    if not ids or not all(isinstance(i, str) and i for i in ids):
                        raise DataError(f"fact {k + 1} of {speaker} names no dialogue id", path=path, where=sw)
                    units.append(Turn(UNIT_ID_JOIN.join(ids), str(speaker), fact[0].strip()))
            if units:
                units.sort(key=lambda u: dialogue_position(u.id))
                sessions.append(Session(session.index, units, session.seconds_since_previous, session.date))
        conv = Conversation(cid, dialogues[cid].speakers, _regap(sessions, dialogues[cid]),
                            source="locomo-observations")
        out.append(_check_conversation(conv, path, w))
    return out


def dialogue_position(unit_id: str) -> tuple[int, int]:
    """Where a turn or unit sits in a LoCoMo dialogue: its first id ``D<session>:<turn>`` as numbers
    (an id of another shape sorts last).

    >>> dialogue_position("D3:7"), dialogue_position("D15:3+D15:5") < dialogue_position("D15:4")
    ((3, 7), True)
    """
    m = re.fullmatch(r"D(\d{1,9}):(\d{1,9})", unit_id.split(UNIT_ID_JOIN)[0])
    return (int(m.group(1)), int(m.group(2))) if m else (1 << 30, 0)


def _regap(sessions: list[Session], dialogue: Conversation) -> list[Session]:
    """Gaps between the kept sessions such that each starts when the dialogue's session does (a
    dropped session's gap folds into the next kept one; ``assign_clock`` adds the previous
    session's turn spacing, so it is taken off here): both views share one clock."""
    start = {s.index: s.start_s for s in dialogue.sessions}
    for prev, cur in zip(sessions, sessions[1:]):
        cur.seconds_since_previous = start[cur.index] - start[prev.index] - len(prev.turns) * TURN_SPACING_S
    return sessions


def source_turns(unit_id: Optional[str]) -> list[str]:
    """The dialogue turns a retrieved unit stands for.

    >>> source_turns("D15:3+D15:5"), source_turns("D1:3"), source_turns(None)
    (['D15:3', 'D15:5'], ['D1:3'], [])
    """
    return unit_id.split(UNIT_ID_JOIN) if unit_id else []
