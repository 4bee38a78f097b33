"""Dialogue summaries: SAMSum and DialogSum."""

from __future__ import annotations

import re

from ..errors import DataError
from ..io import PathLike, iter_jsonl, read_json
from ..schema import (
    Conversation,
    Session,
    SummaryPair,
    Turn,
)
from .checks import _need


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
