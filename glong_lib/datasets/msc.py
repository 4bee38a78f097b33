"""MSC from ParlAI's ``msc`` release (``msc_v0.1.tar.gz``) to the JSONL the project reads.

The release holds two folders of JSON-lines episodes:

* ``msc_personasummary/session_{1..4}/{train,valid,test}.txt``: one episode per conversation and
  session, ``dialog`` (turns ``{text, persona_text?, ...}``: ``persona_text`` is the persona fact the
  crowd worker wrote for that utterance), ``initial_data_id`` (the conversation, e.g. ``valid_0``)
  and ``init_personachat: {init_personas: [[...], [...]]}``;
* ``msc_dialogue/session_{2..5}/...``: the session in ``dialog``, the earlier ones in
  ``previous_dialogs`` (each with ``time_num``/``time_unit``: the gap before the *next* session),
  ``metadata: {initial_data_id}``, ``init_personas``.

A conversation is kept when sessions 1-4 are all found (from either folder; the persona-summary
text, which carries ``persona_text``, is preferred); session 5 (``msc_dialogue/session_5``) is
added where present. Speakers alternate, ``Speaker 1`` first, in every session. Output lines are
``{id: "msc-<split>-<initial_data_id>", init_personas, sessions: [{session, seconds_since_previous,
dialog: [{speaker, text, persona_text?}]}]}``; a gap is known only where ``msc_dialogue`` gives it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

from ..errors import DataError
from ..io import iter_jsonl

#: The MSC splits written (train is not: the persona-summary files have no session 4 for it).
MSC_SPLITS = ("valid", "test")
#: Sessions every kept conversation has; the fifth is added when the release has it.
REQUIRED_SESSIONS = (1, 2, 3, 4)

_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800,
                 "month": 2592000, "year": 31536000}


def msc_root(folder: Path) -> Path:
    """The folder holding ``msc_personasummary/`` and ``msc_dialogue/``: ``folder`` itself, or the
    ``msc/`` (or ``msc/msc/``, ParlAI's data path) inside it."""
    folder = Path(folder)
    for root in (folder, folder / "msc", folder / "msc" / "msc"):
        if (root / "msc_personasummary").is_dir() or (root / "msc_dialogue").is_dir():
            return root
    raise DataError("no ParlAI msc release here (expected msc_personasummary/ and msc_dialogue/ folders, "
                    "as msc_v0.1.tar.gz unpacks)", path=folder)


def _field(obj: Any, key: str, kind: type, path: Path, where: str) -> Any:
    if not isinstance(obj, dict):
        raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, where=where)
    if key not in obj:
        raise DataError(f"missing field '{key}'", path=path, where=where)
    if not isinstance(obj[key], kind):
        raise DataError(f"field '{key}' should be {kind.__name__}, got {type(obj[key]).__name__}",
                        path=path, where=where)
    return obj[key]


def _turns(items: list, path: Path, where: str) -> list[dict]:
    turns = []
    for j, t in enumerate(items, start=1):
        tw = f"{where}, turn {j}"
        turn = {"speaker": f"Speaker {(j - 1) % 2 + 1}", "text": _field(t, "text", str, path, tw)}
        persona = t.get("persona_text")
        if persona is not None and not isinstance(persona, str):
            raise DataError(f"field 'persona_text' should be str, got {type(persona).__name__}", path=path, where=tw)
        if persona:
            turn["persona_text"] = persona
        turns.append(turn)
    if not turns:
        raise DataError("field 'dialog' is empty", path=path, where=where)
    return turns


def _personas(value: Any, path: Path, where: str, key: str) -> Optional[list]:
    if value is None:
        return None
    if not (isinstance(value, list) and all(isinstance(p, list) and all(isinstance(s, str) for s in p)
                                            for p in value)):
        raise DataError(f"field '{key}' should be lists of sentences", path=path, where=where)
    return [list(p) for p in value]


def _gap(d: dict, path: Path, where: str) -> Optional[float]:
    """Seconds before the next session, from ``time_num`` and ``time_unit`` (whole seconds as int)."""
    if d.get("time_num") is None or d.get("time_unit") is None:
        return None
    num, unit = d["time_num"], str(d["time_unit"]).lower().rstrip("s")
    if isinstance(num, bool) or not isinstance(num, (int, float)) or not 0 <= num < 1e12:
        raise DataError(f"field 'time_num' should be a number of units, got {num!r}", path=path, where=where)
    if unit not in _UNIT_SECONDS:
        raise DataError(f"field 'time_unit' is unknown: {d['time_unit']!r}", path=path, where=where)
    seconds = num * _UNIT_SECONDS[unit]
    return int(seconds) if float(seconds).is_integer() else float(seconds)


def _natural(text: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def read_msc(folder: Path, split: str) -> tuple[list[dict], dict]:
    """The conversations of one split (``valid``/``test``) as output rows, and what was read:
    ``{"sources": [files], "conversations": n, "dropped": n without all of sessions 1-4,
    "with session 5": n}``. Files of the split that are absent are skipped; a bad line is a
    DataError naming the file, the line and the field."""
    root = msc_root(folder)
    convs: dict[str, dict] = {}
    sources = []

    def conv(did: str) -> dict:
        return convs.setdefault(did, {"sessions": {}, "gaps": {}, "personas": None})

    for k in REQUIRED_SESSIONS:  # the persona-summary text first: it carries persona_text
        path = root / "msc_personasummary" / f"session_{k}" / f"{split}.txt"
        if not path.is_file():
            continue
        sources.append(path)
        for n, ep in iter_jsonl(path):
            w = f"line {n}"
            c = conv(_field(ep, "initial_data_id", str, path, w))
            c["sessions"][k] = _turns(_field(ep, "dialog", list, path, w), path, w)
            init = ep.get("init_personachat")
            if init is not None:
                personas = _personas(_field(init, "init_personas", list, path, f"{w}, init_personachat"),
                                     path, w, "init_personachat.init_personas")
                c["personas"] = c["personas"] or personas
    for k in (2, 3, 4, 5):
        path = root / "msc_dialogue" / f"session_{k}" / f"{split}.txt"
        if not path.is_file():
            continue
        sources.append(path)
        for n, ep in iter_jsonl(path):
            w = f"line {n}"
            c = conv(_field(_field(ep, "metadata", dict, path, w), "initial_data_id", str, path, f"{w}, metadata"))
            previous = ep.get("previous_dialogs") or []
            if not isinstance(previous, list):
                raise DataError("field 'previous_dialogs' should be list", path=path, where=w)
            for j, d in enumerate(previous, start=1):
                pw = f"{w}, previous_dialogs {j}"
                turns = _turns(_field(d, "dialog", list, path, pw), path, pw)
                c["sessions"].setdefault(j, turns)
                gap = _gap(d, path, pw)
                if gap is not None:
                    c["gaps"][j + 1] = gap
            c["sessions"].setdefault(k, _turns(_field(ep, "dialog", list, path, w), path, w))
            c["personas"] = c["personas"] or _personas(ep.get("init_personas"), path, w, "init_personas")
    rows, dropped, fifth = [], 0, 0
    for did in sorted(convs, key=_natural):
        c = convs[did]
        if not all(k in c["sessions"] for k in REQUIRED_SESSIONS):
            dropped += 1
            continue
        numbers = [*REQUIRED_SESSIONS, *([5] if 5 in c["sessions"] else [])]
        fifth += 5 in c["sessions"]
        rows.append({"id": f"msc-{split}-{did}", "init_personas": c["personas"] or [],
                     "sessions": [{"session": k, "seconds_since_previous": c["gaps"].get(k) if k > 1 else None,
                                   "dialog": c["sessions"][k]} for k in numbers]})
    return rows, {"sources": sources, "conversations": len(rows), "dropped": dropped, "with session 5": fifth}
