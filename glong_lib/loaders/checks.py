"""Checks every loader shares: typed fields, ids, time gaps, conversations."""

from __future__ import annotations

from typing import Any, Optional, Union

from ..errors import DataError
from ..io import PathLike
from ..schema import (
    MAX_ABS_TIME_S,
    Conversation,
    Triple,
)

#: LoCoMo question categories (the official numbering; note 1 is multi-hop and 4 single-hop).
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

#: Seconds per unit of ParlAI's ``time_unit`` field.
_TIME_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800,
               "month": 2592000, "year": 31536000}

_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]


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
