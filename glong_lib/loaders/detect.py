"""Which format a file is in, and the loader of every conversation format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError
from ..io import PathLike, iter_jsonl, read_json, read_text


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
