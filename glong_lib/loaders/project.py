"""The project's own formats: conversations, probes, triple pairs, summaries, extraction files."""

from __future__ import annotations

from typing import Any, Optional

from ..errors import DataError
from ..io import PathLike, iter_jsonl, read_json
from ..schema import (
    QA,
    Conversation,
    Session,
    SummaryPair,
    Triple,
    TriplePair,
    Turn,
)
from .checks import _check_conversation, _gap, _need, _optional, _triples, _unique_ids
from .detect import detect_format
from .personaext import load_personaext, load_personaext_u2t
from .summaries import load_dialogsum, load_samsum


def load_conversation(path: PathLike) -> Conversation:
    """Load one conversation in this project's format (see ``data/README.md``)."""
    obj = read_json(path)
    where = "top level"
    cid = _need(obj, "id", str, path, where)
    speakers = _need(obj, "speakers", list, path, where)
    sessions = []
    for i, s in enumerate(_need(obj, "sessions", list, path, where), start=1):
        sw = f"session {i}"
        index = _optional(s, "session", int, path, sw, default=i) if isinstance(s, dict) else i
        turns = []
        for j, t in enumerate(_need(s, "turns", list, path, sw), start=1):
            tw = f"{sw}, turn {j}"
            tid = _optional(t, "id", str, path, tw, default=f"S{index}:{j}") if isinstance(t, dict) else ""
            speaker = _need(t, "speaker", str, path, tw)
            text = _need(t, "text", str, path, tw)
            turns.append(Turn(tid, speaker, text, _triples(t.get("triples", []), path, tw, speaker, tid, index, text)))
        sessions.append(Session(index, turns, _gap(s, "seconds_since_previous", path, sw),
                                _optional(s, "date", str, path, sw)))
    conv = Conversation(cid, list(speakers), sessions, personas=obj.get("personas", {}),
                        source="glong", title=obj.get("title", ""))
    return _check_conversation(conv, path, f"conversation {cid}")


def load_probes(path: PathLike) -> list[QA]:
    """Retrieval probes: a question, its answer and the ids of the evidence turns."""
    out = []
    for n, obj in iter_jsonl(path):
        w = f"line {n}"
        evidence = _need(obj, "evidence", list, path, w)
        if not evidence:
            raise DataError("'evidence' is empty", path=path, where=w)
        out.append(QA(conversation=_need(obj, "conversation", str, path, w),
                      question=_need(obj, "question", str, path, w),
                      answer=str(obj.get("answer", "")), evidence=[str(e) for e in evidence],
                      category=str(obj.get("category", "")),
                      asked_in_session=_optional(obj, "asked_in_session", int, path, w),
                      id=str(obj.get("id", f"probe-{n}"))))
    _unique_ids([q.id for q in out], path, "probe id")
    return out


def load_triple_pairs(path: PathLike) -> list[TriplePair]:
    """Utterance -> triples pairs: this project's JSONL, or PersonaExt's (one triple a line)."""
    fmt = detect_format(path)
    if fmt == "personaext-pairs":
        return load_personaext(path)
    if fmt == "personaext-u2t":
        return load_personaext_u2t(path)
    out = []
    for n, obj in iter_jsonl(path):
        w = f"line {n}"
        out.append(TriplePair(_need(obj, "utterance", str, path, w),
                              _triples(_need(obj, "triples", list, path, w), path, w),
                              id=str(obj.get("id", n))))
    return out


def load_summary_pairs(path: PathLike) -> list[SummaryPair]:
    """Dialogue -> summary pairs from this project's JSONL, SAMSum JSON or DialogSum JSONL."""
    fmt = detect_format(path)
    if fmt == "samsum":
        return load_samsum(path)
    if fmt == "dialogsum":
        return load_dialogsum(path)
    out = []
    for n, obj in iter_jsonl(path):
        w = f"line {n}"
        out.append(SummaryPair(str(obj.get("id", n)), _need(obj, "dialogue", str, path, w),
                               _need(obj, "summary", str, path, w),
                               _triples(obj.get("triples", []), path, w)))
    return out


def load_extraction_rows(path: PathLike, need: tuple[str, ...] = ()) -> list[tuple[int, dict]]:
    """The rows of a ``glong-extraction`` file with their line numbers, each checked: ``triples`` a
    list of ``{subject, relation, object}`` strings, ``weights`` (if present) one number per triple,
    any triple's ``weight`` a number, and every key of ``need`` present. Rows are returned as read
    (``glong score`` writes them back with weights added; ``glong build`` makes triples of them).

    >>> import json, os, tempfile
    >>> row = {"conversation": "c1", "session": 1, "turn_id": "S1:1", "speaker": "Maya", "text": "I moved.",
    ...        "triples": [{"subject": "Maya", "relation": "move_to", "object": "Denver"}], "weights": [0.5]}
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write(json.dumps(row) + "\\n")
    >>> [(n, r["turn_id"]) for n, r in load_extraction_rows(f.name, need=("session",))], detect_format(f.name)
    ([(1, 'S1:1')], 'glong-extraction')
    >>> os.remove(f.name)
    """
    rows = []
    for n, row in iter_jsonl(path):
        where = f"line {n}"
        for key in (*need, "triples"):
            if key not in row:
                raise DataError(f"missing key '{key}'", path=path, where=where)
        if "session" in row and (not isinstance(row["session"], int) or isinstance(row["session"], bool)):
            raise DataError(f"'session' should be an integer, got {row['session']!r}", path=path, where=where)
        if "conversation" in row and (not isinstance(row["conversation"], (str, int))
                                      or isinstance(row["conversation"], bool)):
            raise DataError(f"'conversation' should be an id, got {type(row['conversation']).__name__}",
                            path=path, where=where)
        items, weights = row["triples"], row.get("weights")
        if not isinstance(items, list):
            raise DataError("'triples' should be a list", path=path, where=where)
        if weights is not None and (not isinstance(weights, list) or len(weights) != len(items)):
            raise DataError("'weights' should be a list with one number per triple", path=path, where=where)
        for k, d in enumerate(items):
            if not isinstance(d, dict) or not all(isinstance(d.get(f), str) for f in ("subject", "relation", "object")):
                raise DataError(f"triple {k + 1} needs string subject, relation and object", path=path, where=where)
            w = weights[k] if weights is not None else d.get("weight")
            if w is not None and not isinstance(w, (int, float)):
                raise DataError(f"triple {k + 1} has a non-numeric weight", path=path, where=where)
        rows.append((n, row))
    return rows


#: The keys a row of an extraction file may name its turn by, in order of preference.
TURN_ID_KEYS = ("turn_id", "turn", "id")


def row_turn_id(row: dict, default: Any = None) -> Any:
    """The turn a row of an extraction file is about: its first key of :data:`TURN_ID_KEYS`."""
    return next((row[k] for k in TURN_ID_KEYS if k in row), default)


def row_triples(row: dict, turn_id: str, speaker: str, session: Optional[int], text: Optional[str]) -> list[Triple]:
    """The triples of a row checked by :func:`load_extraction_rows`, each with its turn, speaker,
    session, source sentence and weight (from ``weights`` or the triple's own ``weight``).

    >>> row = {"triples": [{"subject": "Maya", "relation": "move_to", "object": "Denver"}], "weights": [0.5]}
    >>> row_triples(row, row_turn_id({"turn": "S1:1"}), "Maya", 1, "I moved.")[0].weight
    0.5
    """
    weights = row.get("weights") or [d.get("weight") for d in row["triples"]]
    return [Triple(d["subject"], d["relation"], d["object"], speaker=speaker, turn_id=turn_id, session=session,
                   weight=w, source=text) for d, w in zip(row["triples"], weights)]
