"""Multi-Session Chat (MSC): the rebuilt JSONL, ParlAI files and episodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError
from ..io import PathLike, iter_jsonl, read_json
from ..schema import (
    Conversation,
    Session,
    Turn,
)
from .checks import _ORDINALS, _TIME_UNITS, _check_conversation, _gap, _need, _optional, _unique_ids


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
