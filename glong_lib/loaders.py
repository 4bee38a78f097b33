"""Loaders for the shipped samples and the real data formats, plus format detection and stats.

Every loader returns the dataclasses of :mod:`glong_lib.schema` and fails with a one-line
:class:`~glong_lib.errors.DataError` naming the file, the line or record, and what is wrong
(field types are checked, not assumed). The statistics of ``glong inspect`` live in
:mod:`glong_lib.inspection`.

Why this module is long: it holds one loader per format in the table below, each about a screen,
and their shared checks; splitting it would scatter that table across files.

Supported formats (``detect_format`` names):

=====================  ==========================================================================
``glong-conversation`` this project's conversation JSON (``data/conversations/*.json``)
``glong-probes``       retrieval probes JSONL (``data/probes.jsonl``)
``glong-triple-pairs`` utterance -> triples JSONL (``data/triple_pairs.jsonl``)
``glong-summaries``    dialogue -> summary (+ triples) JSONL (``data/summaries.jsonl``)
``glong-extraction``   per-turn triples JSONL that ``glong extract`` and ``glong score`` write
                       (``{conversation, session, turn_id, speaker, text, triples[, weights]}``)
``msc-jsonl``          MSC rebuilt as JSONL (``msc4_valid.jsonl``)
``msc-parlai``         ParlAI ``msc_dialogue`` / ``msc_personasummary`` lines (``session_N/*.txt``)
``msc-episodes``       MSC episodes with ``first_session_dialogue`` ... keys (Theanine's copy)
``personaext-pairs``   PersonaExt pairs ``{utterance, subject, relation, object}``
``personaext-u2t``     PAED's original ``u2t_map_all.json`` (token-index triplets)
``personaext-schema``  PersonaExt relation schema (JSON with trailing commas and comments)
``samsum``             SAMSum JSON list ``{id, dialogue, summary}``
``dialogsum``          DialogSum JSONL ``{fname, dialogue, summary[, summary1..3], topic}``
``locomo``             LoCoMo JSON (``locomo10.json`` layout; its observation sentences: ``load_locomo_observations``)
``longmemeval``        LongMemEval JSON (``longmemeval_s.json``): one haystack of sessions per question
``cc``                 Conversation Chronicles JSONL (``test.jsonl``): ``*_session_dialogue`` + time intervals
``ldagent-msc``        LD-Agent's MSC (``sequential_test.json``): samples of ``{dialog, time_pass}`` sessions
=====================  ==========================================================================
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Optional, Union

from .errors import DataError
from .io import PathLike, iter_jsonl, read_json, read_text
from .schema import (
    MAX_ABS_TIME_S,
    QA,
    TURN_SPACING_S,
    Conversation,
    Session,
    SummaryPair,
    Triple,
    TriplePair,
    Turn,
)

#: LoCoMo question categories (the official numbering; note 1 is multi-hop and 4 single-hop).
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

#: Seconds per unit of ParlAI's ``time_unit`` field.
_TIME_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800,
               "month": 2592000, "year": 31536000}

_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]


# --------------------------------------------------------------------------- checks

def _need(obj: dict, key: str, kind: Union[type, tuple], path: PathLike, where: str) -> Any:
    """Fetch ``obj[key]`` and check its type, or raise a DataError that says which and where."""
    if not isinstance(obj, dict):
        raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, where=where)
    if key not in obj:
        raise DataError(f"missing key '{key}'", path=path, where=where)
    value = obj[key]
    if not isinstance(value, kind):
        want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise DataError(f"'{key}' should be {want}, got {type(value).__name__}", path=path, where=where)
    return value


def _optional(obj: dict, key: str, kind: Union[type, tuple], path: PathLike, where: str, default: Any = None) -> Any:
    """``obj[key]`` of type ``kind`` (a bool is not an int), or ``default`` where absent or null."""
    if not isinstance(obj, dict):
        raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, where=where)
    value = obj.get(key)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise DataError(f"'{key}' should be {want}, got {type(value).__name__} {str(value)[:40]!r}",
                        path=path, where=where)
    return value


def _gap(obj: dict, key: str, path: PathLike, where: str, scale: float = 1.0) -> Optional[float]:
    """A time gap (a finite number >= 0 of seconds, times ``scale``, at most ``MAX_ABS_TIME_S``), or
    None where the data does not say."""
    value = _optional(obj, key, (int, float), path, where)
    if value is None:
        return None
    return _gap_value(value, key, path, where, scale)


def _gap_value(value: Any, key: str, path: PathLike, where: str, scale: float = 1.0) -> float:
    """``value * scale`` seconds, refused unless a finite number in [0, ``MAX_ABS_TIME_S``]."""
    try:
        seconds = float(value) * scale
        ok = not isinstance(value, bool) and 0 <= seconds <= MAX_ABS_TIME_S
    except (OverflowError, TypeError, ValueError):  # an integer beyond float, like 10**400
        ok = False
    if not ok:
        raise DataError(f"'{key}' should be a finite number >= 0 (at most {MAX_ABS_TIME_S:g} seconds), "
                        f"got {str(value)[:40]}", path=path, where=where)
    return value if scale == 1.0 else seconds


def _unique_ids(ids: list, path: PathLike, what: str) -> None:
    """Refuse a repeated id: results are keyed by it, so a second record would be scored against
    the first's data (or replace it) with no word.

    >>> _unique_ids(["a", "b", "a"], "f.json", "conversation id")
    Traceback (most recent call last):
    glong_lib.errors.DataError: f.json: conversation id 'a' appears twice (records 1 and 3); ids must be unique
    """
    seen: dict = {}
    for n, key in enumerate(ids, start=1):
        if key in seen:
            raise DataError(f"{what} {str(key)[:60]!r} appears twice (records {seen[key]} and {n}); ids must be unique",
                            path=path)
        seen[key] = n


def _check_conversation(conv: Conversation, path: PathLike, where: str) -> Conversation:
    """Reject conversations with no sessions or an empty session; then set the clock."""
    if not conv.sessions:
        raise DataError("conversation has no sessions", path=path, where=where)
    for s in conv.sessions:
        if not s.turns:
            raise DataError(f"session {s.index} has no turns (empty conversation)", path=path, where=where)
        for t in s.turns:
            if not t.text.strip():
                raise DataError(f"turn {t.id} has empty text", path=path, where=where)
    conv.assign_clock()
    end = conv.sessions[-1].turns[-1].time_s
    if not end <= MAX_ABS_TIME_S:
        raise DataError(f"its gaps add up to {end:.3g} seconds, beyond any real conversation ({MAX_ABS_TIME_S:g})",
                        path=path, where=where)
    return conv


def _triples(items: Any, path: PathLike, where: str, speaker: str | None = None,
             turn_id: str | None = None, session: int | None = None, source: str | None = None) -> list[Triple]:
    if not isinstance(items, list):
        raise DataError("'triples' should be a list", path=path, where=where)
    out = []
    for k, d in enumerate(items):
        w = f"{where}, triple {k + 1}"
        for key in ("subject", "relation", "object"):
            _need(d, key, str, path, w)
        out.append(Triple(d["subject"], d["relation"], d["object"], speaker=speaker,
                          turn_id=turn_id, session=session, source=source))
    return out


# --------------------------------------------------------------------------- project formats

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


def load_conversations(path: PathLike) -> list[Conversation]:
    """Load a conversation file of any supported format, or every ``*.json`` in a folder."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*.json"))
        if not files:
            raise DataError("folder holds no *.json conversation files", path=p)
        convs = [c for f in files for c in load_conversations(f)]
        _unique_ids([c.id for c in convs], p, "conversation id")
        return convs
    fmt = detect_format(p)
    loader = CONVERSATION_LOADERS.get(fmt)
    if loader is None:
        raise DataError(f"a '{fmt}' file holds no conversations", path=p)
    result = loader(p)
    if isinstance(result, tuple):  # LoCoMo returns (conversations, questions)
        result = result[0]
    return result if isinstance(result, list) else [result]


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


# --------------------------------------------------------------------------- MSC

def load_msc_jsonl(path: PathLike) -> list[Conversation]:
    """MSC rebuilt as JSONL: ``{id, init_personas, sessions: [{session, seconds_since_previous, dialog}]}``."""
    convs = []
    for n, obj in iter_jsonl(path):
        w = f"line {n}"
        cid = _need(obj, "id", str, path, w)
        sessions = []
        for s in _need(obj, "sessions", list, path, w):
            index = int(_need(s, "session", int, path, w))
            sw = f"{w}, session {index}"
            turns = []
            for j, t in enumerate(_need(s, "dialog", list, path, sw), start=1):
                tw = f"{sw}, turn {j}"
                turns.append(Turn(f"S{index}:{j}", _need(t, "speaker", str, path, tw), _need(t, "text", str, path, tw)))
            sessions.append(Session(index, turns, _gap(s, "seconds_since_previous", path, sw)))
        personas = _optional(obj, "init_personas", list, path, w, default=[])
        if not all(isinstance(p, list) for p in personas):
            raise DataError("'init_personas' should be a list of lists of sentences", path=path, where=w)
        conv = Conversation(cid, ["Speaker 1", "Speaker 2"], sessions, source="msc",
                            personas={f"Speaker {i + 1}": list(p) for i, p in enumerate(personas)})
        convs.append(_check_conversation(conv, path, w))
    _unique_ids([c.id for c in convs], path, "conversation id")
    return convs


def load_msc_persona_facts(path: PathLike) -> dict[str, dict[int, list[str]]]:
    """The gold persona facts of MSC rebuilt as JSONL (the ``persona_text`` an utterance carries),
    per conversation id and session index, in the order said; an utterance without one adds nothing.
    Used by the memory-use probe (:mod:`glong_lib.evaluation.memory_use`)."""
    facts: dict[str, dict[int, list[str]]] = {}
    for n, obj in iter_jsonl(path):
        w = f"line {n}"
        per_session = facts.setdefault(_need(obj, "id", str, path, w), {})
        for s in _need(obj, "sessions", list, path, w):
            index = int(_need(s, "session", int, path, w))
            said = [t.get("persona_text") for t in _need(s, "dialog", list, path, f"{w}, session {index}")
                    if isinstance(t, dict)]
            per_session.setdefault(index, []).extend(p.strip() for p in said if isinstance(p, str) and p.strip())
    return facts


def load_msc_parlai(path: PathLike) -> list[Conversation]:
    """ParlAI's MSC layout: one JSON object per line, the current session in ``dialog`` (turns
    ``{id, text}``) and, from session 2 on, the earlier ones in ``previous_dialogs`` with
    ``time_num``/``time_unit`` (the gap before the *next* session)."""
    convs = []
    for n, obj in iter_jsonl(path):
        w = f"line {n}"
        dialogs = list(obj.get("previous_dialogs") or []) + [obj]
        sessions = []
        gap = None
        for i, d in enumerate(dialogs, start=1):
            sw = f"{w}, session {i}"
            turns = []
            for j, t in enumerate(_need(d, "dialog", list, path, sw), start=1):
                tw = f"{sw}, turn {j}"
                # speakers alternate; ParlAI labels them 'Speaker 1'/'Speaker 2' or 'bot_0'/'bot_1'
                speaker = f"Speaker {(j - 1) % 2 + 1}"
                turns.append(Turn(f"S{i}:{j}", speaker, _need(t, "text", str, path, tw)))
            sessions.append(Session(i, turns, gap))
            gap = None
            if "time_num" in d and "time_unit" in d:
                unit = str(d["time_unit"]).rstrip("s")
                if unit not in _TIME_UNITS:
                    raise DataError(f"unknown time_unit '{d['time_unit']}'", path=path, where=sw)
                gap = _gap(d, "time_num", path, sw, scale=_TIME_UNITS[unit])
        meta = obj.get("metadata") or {}
        cid = str(meta.get("initial_data_id", f"{Path(path).stem}-{n}"))
        personas = obj.get("init_personas") or obj.get("personas") or []
        conv = Conversation(cid, ["Speaker 1", "Speaker 2"], sessions, source="msc-parlai",
                            personas={f"Speaker {i + 1}": list(p) for i, p in enumerate(personas)
                                      if isinstance(p, list)})
        convs.append(_check_conversation(conv, path, w))
    _unique_ids([c.id for c in convs], path, "conversation id")
    return convs


def load_msc_episodes(path: PathLike) -> list[Conversation]:
    """MSC episodes keyed ``first_session_dialogue`` ... (utterance lists) with ``*_speakers``."""
    data = read_json(path)
    if not isinstance(data, list):
        data = [data]
    convs = []
    for r, obj in enumerate(data, start=1):
        w = f"record {r}"
        if not isinstance(obj, dict):
            raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, where=w)
        conv = _episode_sessions(obj, path, w, str(obj.get("dataID", f"episode-{r}")), "msc-episodes")
        convs.append(_check_conversation(conv, path, w))
    _unique_ids([c.id for c in convs], path, "conversation id")
    return convs


def _episode_sessions(obj: Any, path: PathLike, where: str, cid: str, source: str) -> Conversation:
    """The sessions of an episode keyed ``first_session_dialogue`` ... with ``*_session_speakers``."""
    sessions = []
    for i, name in enumerate(_ORDINALS, start=1):
        key = f"{name}_session_dialogue"
        if not isinstance(obj, dict) or key not in obj:
            break
        utterances = _need(obj, key, list, path, where)
        speakers = _optional(obj, f"{name}_session_speakers", list, path, where, default=[])
        for field, values in ((key, utterances), (f"{name}_session_speakers", speakers)):
            bad = next((j for j, v in enumerate(values, start=1) if not isinstance(v, str)), None)
            if bad is not None:  # null, an object or a number would become the text 'None', "{...}", '42'
                raise DataError(f"'{field}' item {bad} should be str, got {type(values[bad - 1]).__name__}",
                                path=path, where=where)
        turns = [Turn(f"S{i}:{j}", speakers[j - 1] if j - 1 < len(speakers) else f"Speaker {(j - 1) % 2 + 1}", u)
                 for j, u in enumerate(utterances, start=1)]
        sessions.append(Session(i, turns, None))
    return Conversation(cid, sorted({t.speaker for s in sessions for t in s.turns}), sessions, source=source)


# --------------------------------------------------------------------------- PersonaExt

def load_personaext(path: PathLike) -> list[TriplePair]:
    """PersonaExt pairs; lines sharing one utterance become one pair with several triples."""
    by_utt: dict[str, TriplePair] = {}
    for n, obj in iter_jsonl(path):
        w = f"line {n}"
        utt = _need(obj, "utterance", str, path, w)
        t = Triple(_need(obj, "subject", str, path, w), _need(obj, "relation", str, path, w),
                   _need(obj, "object", str, path, w))
        pair = by_utt.setdefault(utt, TriplePair(utt, [], id=f"pe{len(by_utt) + 1}"))
        if t.key() not in {x.key() for x in pair.triples}:
            pair.triples.append(t)
    return list(by_utt.values())


def load_personaext_u2t(path: PathLike) -> list[TriplePair]:
    """PAED's original ``u2t_map_all.json``: entries whose ``triplets`` hold ``tokens``, ``head`` and
    ``tail`` (token indices) and ``label`` (the relation). Every triplet of an entry is kept."""
    data = read_json(path)
    entries = list(data.values()) if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise DataError("expected a list (or dict) of entries", path=path)
    by_utt: dict[str, TriplePair] = {}
    for r, entry in enumerate(entries, start=1):
        w = f"entry {r}"
        for k, tr in enumerate(_need(entry, "triplets", list, path, w), start=1):
            tw = f"{w}, triplet {k}"
            tokens = [str(t) for t in _need(tr, "tokens", list, path, tw)]
            try:
                head = " ".join(tokens[i] for i in _need(tr, "head", list, path, tw))
                tail = " ".join(tokens[i] for i in _need(tr, "tail", list, path, tw))
            except (IndexError, TypeError):
                raise DataError("head/tail index outside the tokens", path=path, where=tw) from None
            sentence = re.sub(r" ([,.!?])", r"\1", " ".join(tokens))
            pair = by_utt.setdefault(sentence, TriplePair(sentence, [], id=f"u2t{len(by_utt) + 1}"))
            triple = Triple(head, str(_need(tr, "label", str, path, tw)), tail)
            if triple.key() not in {x.key() for x in pair.triples}:
                pair.triples.append(triple)
    return list(by_utt.values())


def load_personaext_schema(path: PathLike) -> list[str]:
    """The relation names of PersonaExt's schema file (which has trailing commas)."""
    obj = read_json(path, lenient=True)
    groups = _need(obj, "relation_types", list, path, "top level")
    names = []
    for k, group in enumerate(groups, start=1):
        where = f"relation group {k}"
        for t in _optional(group, "types", list, path, where, default=[]):
            if not isinstance(t, dict) or "type" in t:  # entries without a type are notes, skipped
                names.append(_need(t, "type", str, path, where))
    return names


# --------------------------------------------------------------------------- summaries

def load_samsum(path: PathLike) -> list[SummaryPair]:
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError("SAMSum file should be a JSON list", path=path)
    return [SummaryPair(str(_need(d, "id", (str, int), path, f"record {i}")),
                        _need(d, "dialogue", str, path, f"record {i}"), _need(d, "summary", str, path, f"record {i}"))
            for i, d in enumerate(data, start=1)]


def load_dialogsum(path: PathLike) -> list[SummaryPair]:
    """DialogSum JSONL; test lines carry ``summary1..3`` instead of ``summary`` (we take the first)."""
    out = []
    for n, obj in iter_jsonl(path):
        w = f"line {n}"
        summary = obj.get("summary", obj.get("summary1"))
        if not isinstance(summary, str):
            raise DataError("missing key 'summary' (or 'summary1')", path=path, where=w)
        out.append(SummaryPair(str(_need(obj, "fname", str, path, w)), _need(obj, "dialogue", str, path, w), summary))
    return out


_SPEAKER_LINE = re.compile(r"^\s*([^:\n]{1,40}?)\s*:\s*(.*)$")


def summary_pair_conversation(pair: SummaryPair) -> Conversation:
    """A summary pair's dialogue as a one-session Conversation, one turn per ``Name: text`` line.

    Turn ids are ``T1``, ``T2``, ...; DialogSum's ``#Person1#`` becomes ``Person1``; a line with no
    speaker (SAMSum has a few continuation lines) joins the turn before it.

    >>> conv = summary_pair_conversation(SummaryPair("d1", "#Person1#: Hi.\\nMore.\\n#Person2#: Hello!", "s"))
    >>> [(t.id, t.speaker, t.text) for t in conv.turns()]
    [('T1', 'Person1', 'Hi. More.'), ('T2', 'Person2', 'Hello!')]
    """
    turns: list[Turn] = []
    for line in pair.dialogue.replace("\r", "").split("\n"):
        if not line.strip():
            continue
        match = _SPEAKER_LINE.match(line)
        if match and match.group(2).strip():
            speaker = match.group(1).strip().strip("#") or "Speaker"
            turns.append(Turn(f"T{len(turns) + 1}", speaker, match.group(2).strip()))
        elif turns:
            turns[-1].text = f"{turns[-1].text} {line.strip()}"
        else:
            raise DataError(f"dialogue {pair.id}: the first line has no 'Speaker: text' form: {line[:60]!r}")
    if not turns:
        raise DataError(f"dialogue {pair.id} has no turns")
    speakers = list(dict.fromkeys(t.speaker for t in turns))
    conv = Conversation(pair.id, speakers, [Session(1, turns)], source="summary-pair")
    conv.assign_clock()
    return conv


# --------------------------------------------------------------------------- LoCoMo

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


# --------------------------------------------------------------------------- the paper's other data

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


# --------------------------------------------------------------------------- format detection

def _first_record(path: Path) -> Any:
    """The first JSON record of a file: the object/list of a JSON file, or the first JSONL line."""
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped.strip()):
        lenient = path.name == "schema.json"
        obj = read_json(path, lenient=lenient)
        return obj[0] if isinstance(obj, list) and obj else obj
    try:
        return next(iter_jsonl(path))[1]
    except StopIteration:
        raise DataError("file is empty", path=path) from None


def detect_format(path: PathLike) -> str:
    """Name the format of a data file from its content (see the module docstring).

    Raises DataError for unreadable or unrecognised files.
    """
    p = Path(path)
    if p.suffix == ".txt" and p.parent.name.startswith("session_"):
        return "msc-parlai"
    rec = _first_record(p)
    if isinstance(rec, list) and rec and isinstance(rec[0], dict) and "dialog" in rec[0] and "time_pass" in rec[0]:
        return "ldagent-msc"  # a list of samples, each a list of sessions
    if not isinstance(rec, dict):
        raise DataError("unrecognised format (first record is not a JSON object)", path=p)
    keys = set(rec)
    if rec.get("format") == "glong-conversation":
        return "glong-conversation"
    first_value = next(iter(rec.values()), None)
    if "triplets" in keys or (isinstance(first_value, dict) and "triplets" in first_value):
        return "personaext-u2t"
    if "relation_types" in keys:
        return "personaext-schema"
    if {"conversation", "qa"} <= keys:
        return "locomo"
    if "first_session_dialogue" in keys:
        return "cc" if {"relationship", "time_interval"} <= keys else "msc-episodes"
    if {"question_id", "haystack_sessions"} <= keys:
        return "longmemeval"
    if {"id", "sessions"} <= keys:
        return "msc-jsonl"
    if "dialog" in keys:
        return "msc-parlai"
    if {"question", "evidence", "conversation"} <= keys:
        return "glong-probes"
    if {"conversation", "triples"} <= keys:
        return "glong-extraction"
    if {"utterance", "subject", "relation", "object"} <= keys:
        return "personaext-pairs"
    if {"utterance", "triples"} <= keys:
        return "glong-triple-pairs"
    if {"fname", "dialogue"} <= keys:
        return "dialogsum"
    if {"dialogue", "summary"} <= keys:
        return "glong-summaries" if "triples" in keys or p.suffix == ".jsonl" else "samsum"
    raise DataError(f"unrecognised format (keys: {', '.join(sorted(keys)[:8])})", path=p)


CONVERSATION_LOADERS: dict[str, Callable] = {
    "glong-conversation": load_conversation,
    "msc-jsonl": load_msc_jsonl,
    "msc-parlai": load_msc_parlai,
    "msc-episodes": load_msc_episodes,
    "locomo": load_locomo,
    "longmemeval": load_longmemeval,
    "cc": load_conversation_chronicles,
    "ldagent-msc": load_ldagent_msc,
}
