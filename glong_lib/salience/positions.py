"""Where a triple's words are in the text the decoder source reads: the session as ``Speaker: text``
lines, the character ranges of each triple's content words in it, the token positions those ranges
cover, and the windows of whole turns a long session is read in. Text only: no model, no torch."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Sequence

from ..config import DECODER_WHERE as WHERE
from ..errors import DataError
from ..schema import Triple, Turn
from ..text import STOPWORDS, content_stems, cut_to_tokens, light_stem

_WORD = re.compile(r"[A-Za-z0-9]+")


def dialogue_text(turns: Sequence[Turn]) -> tuple[str, list[tuple[int, int]]]:
    """The session as ``Speaker: text`` lines, and each turn's utterance (after the name) as a
    character range.

    >>> dialogue_text([Turn("T1", "Ann", "Hi Bo."), Turn("T2", "Bo", "Hey!")])
    ('Ann: Hi Bo.\\nBo: Hey!', [(5, 11), (16, 20)])
    """
    text, ranges = "", []
    for k, t in enumerate(turns):
        if k:
            text += "\n"
        text += f"{t.speaker}: "
        ranges.append((len(text), len(text) + len(t.text)))
        text += t.text
    return text, ranges


def triple_word_ranges(triple: Triple, text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Character ranges, inside ``text[start:end]`` (the triple's source utterance), of the words
    that carry the triple's content (:func:`glong_lib.text.content_stems` of subject and object,
    matched by :func:`light_stem`). Empty when the utterance paraphrases them all.

    >>> text = "Ann: I bought two dogs last week"
    >>> triple_word_ranges(Triple("Ann", "like", "dog"), text, 5, len(text))
    [(18, 22)]
    """
    stems = content_stems(f"{triple.subject} {triple.object}")  # relation words ("like", "have") are everywhere
    return [(start + m.start(), start + m.end()) for m in _WORD.finditer(text[start:end])
            if light_stem(m.group().lower()) in stems]


def utterance_word_ranges(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Ranges of the content words (no stopwords, longer than one letter) of ``text[start:end]``.

    >>> utterance_word_ranges("Ann: I was in Paris", 5, 19)
    [(14, 19)]
    """
    return [(start + m.start(), start + m.end()) for m in _WORD.finditer(text[start:end])
            if m.group().lower() not in STOPWORDS and len(m.group()) > 1]


def positions_in(offsets: Sequence[tuple[int, int]], ranges: Sequence[tuple[int, int]], text: str) -> list[int]:
    """Token positions whose first non-space character lies in one of ``ranges``.

    >>> positions_in([(0, 3), (3, 7), (7, 12)], [(4, 7)], "Ann bought it")
    [1]
    """
    out = []
    for i, (a, b) in enumerate(offsets):
        while a < b and text[a].isspace():
            a += 1
        if a < b and any(lo <= a < hi for lo, hi in ranges):
            out.append(i)
    return out


def turns_from_triples(triples: Sequence[Triple]) -> list[Turn]:
    """The utterances the triples came from, in first-seen order (when no session is given).

    >>> [t.text for t in turns_from_triples([Triple("a", "r", "b", speaker="A", turn_id="1", source="x"),
    ...                                      Triple("a", "r", "c", speaker="A", turn_id="1", source="x")])]
    ['x']
    """
    seen: dict[str, Turn] = {}
    for k, t in enumerate(triples):
        key = t.turn_id or t.source or f"triple-{k}"
        if key not in seen:
            seen[key] = Turn(key, t.speaker or "Speaker", t.source or t.text().replace("_", " "))
    return list(seen.values())


def turn_windows(tokenizer, turns: list[Turn], limit: int) -> list[list[Turn]]:
    """Consecutive runs of ``turns`` whose dialogue text (:func:`dialogue_text`) fits in ``limit``
    tokens; a turn longer than that alone is cut to fit (a copy; the caller's turns are not changed).
    Turns that fit whole come back as the same list object.

    >>> class Tok:  # one token per character
    ...     def __call__(self, text, **_):
    ...         return {"input_ids": list(text), "offset_mapping": [(i, i + 1) for i in range(len(text))]}
    >>> turns = [Turn("1", "A", "aaaa"), Turn("2", "B", "bb"), Turn("3", "A", "c" * 30)]
    >>> [[(t.id, len(t.text)) for t in w] for w in turn_windows(Tok(), turns, 14)]  # 'A: ' + text + newline
    [[('1', 4), ('2', 2)], [('3', 10)]]
    >>> turn_windows(Tok(), turns, 100)[0] is turns
    True
    """
    windows: list[list[Turn]] = [[]]
    used, cut = 0, False
    for t in turns:
        head = len(tokenizer(f"{t.speaker}: ", add_special_tokens=False)["input_ids"]) + 1  # + the newline
        size = head + len(tokenizer(cut_to_tokens(tokenizer, t.text, limit), add_special_tokens=False)["input_ids"])
        if size > limit:  # alone too long: cut to what a window holds
            t, size, cut = replace(t, text=cut_to_tokens(tokenizer, t.text, max(1, limit - head))), limit, True
        if windows[-1] and used + size > limit:
            windows.append([])
            used = 0
        windows[-1].append(t)
        used += size
    return [turns] if len(windows) == 1 and not cut else windows


def dialogue_triple_ranges(triples: Sequence[Triple], turns: Sequence[Turn], text: str,
                           spans: Sequence[tuple[int, int]], where: str = "turn") -> list[list[tuple[int, int]]]:
    """Each triple's character ranges in the session text (:func:`dialogue_text`).

    ``where="turn"``: its subject and object words where its source turn says them (the turn's
    content words when the turn paraphrases them all); ``where="session"``: those words wherever
    any turn says them, so a fact mentioned again later collects that attention too. A triple
    whose turn is unknown is looked for in the whole session either way.

    A triple whose words no turn says (the extractor paraphrased or invented them) gets no ranges:
    no token of it was attended, so Eq. 2 gives it 0, as the paper's code gives a triple cut off
    the input. On real dialogues such triples are never in the human summary (bench_salience).

    >>> turns = [Turn("T1", "A", "I got a dog."), Turn("T2", "B", "What dog?")]
    >>> text, spans = dialogue_text(turns)
    >>> dialogue_triple_ranges([Triple("A", "have", "dog", turn_id="T1")], turns, text, spans, "session")
    [[(11, 14), (24, 27)]]
    """
    if where not in WHERE:
        raise DataError(f"unknown where '{where}' (choose from {', '.join(WHERE)})")
    by_id = {t.id: span for t, span in zip(turns, spans)}
    by_text = {t.text: span for t, span in zip(turns, spans)}
    ranges = []
    for t in triples:
        span = by_id.get(t.turn_id) or by_text.get(t.source)
        anywhere = [r for a, b in spans for r in triple_word_ranges(t, text, a, b)]
        if not anywhere:  # never said: nothing of it to attend to
            ranges.append([])
            continue
        if span is None:  # turn unknown: its words wherever they were said
            ranges.append(anywhere)
            continue
        own = triple_word_ranges(t, text, *span) or utterance_word_ranges(text, *span) or [span]
        ranges.append(sorted(set(own) | set(anywhere)) if where == "session" else own)
    return ranges
