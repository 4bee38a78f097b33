"""Tolerant parsing of the JSON a small model writes (often broken) into triples.

The parser never raises and runs in time linear in its input (``benchmarks/bench_parser.py``
measures it from 1 KB to 1 MB): every stage visits each character or decoded value a bounded
number of times. Outputs nested deeper than ``MAX_DEPTH`` brackets are not decoded as JSON (a
triple list needs two levels); the last-resort ``key: value`` scan still reads them.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Optional

FIELDS = ("subject", "relation", "object")

#: Deepest bracket nesting decoded as JSON. A triple list needs 2 levels and a wrapped one
#: (``{"triplets": [...]}``) 3; deeper input is refused by the JSON stages, so neither the decoder
#: nor the collector can recurse without bound.
MAX_DEPTH = 32
#: How many opening brackets in prose are tried as the start of the answer.
MAX_STARTS = 32
_KEY_ALIASES = {"subject": "subject", "head": "subject", "subj": "subject",
                "relation": "relation", "predicate": "relation", "rel": "relation", "relationship": "relation",
                "object": "object", "tail": "object", "obj": "object"}


# --------------------------------------------------------------------------- tolerant parsing

@dataclass
class ParseResult:
    """What the parser made of one model output. ``ok`` is False when no JSON list or object
    could be read at all (the output counts as unparseable); ``repaired`` when it took repairs."""

    triples: list[dict]
    ok: bool
    repaired: bool = False


class _Pairs(list):
    """A JSON object kept as its (key, value) pairs, so repeated keys are not lost."""


def _clean_value(v: Any) -> Optional[str]:
    if isinstance(v, bool) or v is None or isinstance(v, (dict, list)):
        return None
    text = str(v).strip()
    return text or None


def _pairs_to_triples(pairs: Iterable[tuple[str, Any]]) -> list[dict]:
    """Turn a stream of (key, value) pairs into triples. A key seen again starts a new triple
    that keeps the fields before it (a repeated ``object`` reuses subject and relation)."""
    out, current = [], {}
    for key, value in pairs:
        name = _KEY_ALIASES.get(str(key).strip().lower())
        if name is None:
            continue
        if name in current:
            out.append(current)
            current = {k: v for k, v in current.items() if FIELDS.index(k) < FIELDS.index(name)}
        current[name] = _clean_value(value)
    out.append(current)
    return [{k: t[k] for k in FIELDS} for t in out if all(t.get(k) for k in FIELDS)]


def _collect(value: Any, depth: int = 0) -> list[dict]:
    """All triples inside a decoded JSON value (lists, objects, nested ``{"triplets": [...]}``).
    Each value is visited once, and never deeper than ``MAX_DEPTH``.

    >>> _collect(_Pairs([("triplets", [["i", "like", "tea"]])]))
    [{'subject': 'i', 'relation': 'like', 'object': 'tea'}]
    """
    if depth > MAX_DEPTH:
        return []
    if isinstance(value, _Pairs):
        if any(str(k).strip().lower() in _KEY_ALIASES for k, _ in value):  # a triple object
            return _pairs_to_triples(value) + [t for _, v in value if isinstance(v, list)
                                               for t in _collect(v, depth + 1)]
        return [t for _, v in value for t in _collect(v, depth + 1)]
    if isinstance(value, list):
        if len(value) == 3 and all(isinstance(v, str) for v in value):  # ["i", "like", "tea"]
            return _pairs_to_triples(zip(FIELDS, value))
        return [t for v in value for t in _collect(v, depth + 1)]
    return []


_BRACKETS = re.compile(r"[\[\]{}]")


def _too_deep(text: str) -> bool:
    """Whether brackets in ``text`` nest deeper than ``MAX_DEPTH`` (quotes ignored: a conservative
    count). Stops at the first level too many, so a megabyte of ``[`` costs microseconds.

    >>> _too_deep("[" * 33), _too_deep("[[]]" * 1000)
    (True, False)
    """
    depth = 0
    for m in _BRACKETS.finditer(text):
        if m.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif depth:
            depth -= 1
    return False


def _dedupe(triples: list[dict]) -> list[dict]:
    seen, out = set(), []
    for t in triples:
        key = tuple(t[k] for k in FIELDS)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


def _strip_wrappers(text: str) -> str:
    """Drop reasoning blocks and markdown code fences around the answer.

    A fence counts only where a fence is written: at the start of a line (with its language tag)
    or at the end of one, so three backticks inside a value are kept.

    >>> _strip_wrappers('```json [{"object": "```"}] ```').strip()
    '[{"object": "```"}]'
    """
    text = re.sub(r"(?s)<think>.*?(</think>|$)", " ", text)
    text = re.sub(r"(?m)^[ \t]*```[a-zA-Z]*", " ", text)
    return re.sub(r"(?m)```[ \t]*$", " ", text)


def _repair_json(s: str) -> str:
    """Rewrite near-JSON into JSON: single-quoted strings become double-quoted (an apostrophe
    inside a word stays), an unterminated string is closed, trailing commas are dropped, missing
    commas between objects or strings are added, and open brackets are closed. Output cut off
    mid-item (the token budget ran out) keeps only the items completed before the cut.
    One pass over the input: linear time.

    >>> _repair_json("[{'a': 'x',}, {'a': 'y")
    '[{"a": "x"}]'
    """
    s = s.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")
    out: list[str] = []
    stack: list[str] = []
    quote = None  # the delimiter of the string we are in, if any
    boundary = None  # (output length, open brackets) after the last complete list item
    string_start = 0
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if quote:
            if c == "\\" and i + 1 < n:
                out.append(s[i:i + 2])
                i += 2
                continue
            if c == quote and quote == "'":  # closes only before , : } ] or the end
                m = _NON_SPACE.search(s, i + 1)
                closes = m is None or m.group() in ",:}]"
            else:
                closes = c == quote
            if closes:
                out.append('"')
                quote = None
            elif c == '"':
                out.append('\\"')  # a double quote inside a single-quoted string
            elif c == "\n":
                out.append('"')  # strings do not span lines in model output: close it
                quote = None
                continue
            else:
                out.append(c)
            i += 1
            continue
        if c in "\"'":
            prev = _last_char(out)
            if prev in ('"', "}", "]") or prev.isdigit():
                out.append(",")  # two values in a row: the comma is missing
            quote = c
            out.append('"')
            string_start = len(out)
        elif c in "{[":
            if _last_char(out) in ("}", "]", '"'):
                out.append(",")
            stack.append("}" if c == "{" else "]")
            out.append(c)
        elif c in "}]":
            _drop_trailing_comma(out)
            if stack:
                out.append(stack.pop())
            if not stack:
                break  # the first complete value is the answer; the rest is prose
            if stack[-1] == "]":
                boundary = (len(out), list(stack))
        else:
            out.append(c)
        i += 1
    if (quote or stack) and boundary is not None:  # cut off: keep the complete items only
        out, stack = out[:boundary[0]], boundary[1]
    elif quote:  # an unterminated string: brackets typed after it belong to the structure
        while len(out) > string_start and out[-1] in ("}", "]", " ", "\n"):
            out.pop()
        out.append('"')
    _drop_trailing_comma(out)
    out.extend(reversed(stack))
    return "".join(out)


_NON_SPACE = re.compile(r"\S")


def _last_char(out: list[str]) -> str:
    """The last non-space character written so far ("" if none). Walks back over trailing
    whitespace only, which each later non-space character ends: linear overall."""
    for piece in reversed(out):
        stripped = piece.rstrip()
        if stripped:
            return stripped[-1]
    return ""


def _drop_trailing_comma(out: list[str]) -> None:
    while out and out[-1].isspace():
        out.pop()
    if out and out[-1] == ",":
        out.pop()


_SCAN = re.compile(
    r"""["']?(subject|head|relation|predicate|object|tail)["']?\s*:\s*"""
    r"""(?:"((?:[^"\\\n]|\\.)*)"?|'((?:[^'\n]|'(?![\s]*[,}\]]|$))*)'?|([^,}\]\n\[{"'\s][^,}\]\n]*))""",
    re.IGNORECASE)


def _scan_pairs(text: str) -> list[dict]:
    """Last resort: read ``key: value`` pairs wherever they are, in order."""
    pairs = []
    for m in _SCAN.finditer(text):
        if m.group(2) is not None:
            try:
                value = json.loads(f'"{m.group(2)}"')
            except ValueError:
                value = m.group(2)
        else:
            value = m.group(3) if m.group(3) is not None else m.group(4)
        pairs.append((m.group(1), value))
    return _pairs_to_triples(pairs)


def parse_output(text: Any) -> ParseResult:
    """Read triples from a model's answer, repairing what small models break. Never raises.

    Tries, in order: strict JSON from each ``[``/``{`` (prose around it is ignored), repaired
    JSON (see ``_repair_json``), then a scan for ``subject: ... relation: ... object: ...``.
    ``head``/``tail`` keys (the reference code's) become ``subject``/``object``.

    >>> parse_output('[{"subject": "i", "relation": "like", "object": "tea"}]').ok
    True
    >>> parse_output("[{'head': 'i', 'relation': 'like', 'tail': 'green tea}]").triples
    [{'subject': 'i', 'relation': 'like', 'object': 'green tea'}]
    >>> parse_output("I cannot find any triplets.")
    ParseResult(triples=[], ok=False, repaired=False)
    """
    try:
        return parse_unguarded(text)
    except Exception:  # defence in depth: a pipeline must not die on one output; count it unparseable
        return ParseResult([], ok=False, repaired=False)


def parse_unguarded(text: Any) -> ParseResult:
    """:func:`parse_output` without its safety net (the property tests call this one, so a bug
    that raises is seen instead of counted as an unparseable output)."""
    raw = ("" if text is None else str(text)).lstrip()
    body = _strip_wrappers(raw)
    # 0. stripping changed an answer that starts as JSON: read it as it was first, so a value that
    # looks like a wrapper ("<think>", three backticks) is kept (unchanged, step 1 reads the same text)
    if body != raw and raw[:1] in ("[", "{") and not _too_deep(raw):
        try:
            triples = _dedupe(_collect(json.JSONDecoder(object_pairs_hook=_Pairs).raw_decode(raw)[0]))
            if triples:
                return ParseResult(triples, ok=True)
        except ValueError:
            pass
    starts = [m.start() for m in itertools.islice(re.finditer(r"[\[{]", body), MAX_STARTS)]
    if not starts:
        return ParseResult([], ok=False)
    if _too_deep(body):  # refuse to decode; the key: value scan below still reads what it can
        triples = _dedupe(_scan_pairs(body))
        return ParseResult(triples, ok=bool(triples), repaired=True)
    decoder = json.JSONDecoder(object_pairs_hook=_Pairs)
    empty = None  # a valid JSON list with no triple in it ("[]"), if that is all there is
    try:  # 1. valid JSON at the first bracket
        value, _ = decoder.raw_decode(body[starts[0]:])
        triples = _dedupe(_collect(value))
        if triples:
            return ParseResult(triples, ok=True)
        empty = ParseResult([], ok=isinstance(value, (list, _Pairs)))
    except ValueError:
        try:  # 2. the same, repaired
            value = json.loads(_repair_json(body[starts[0]:]), object_pairs_hook=_Pairs)
            triples = _dedupe(_collect(value))
            if triples:
                return ParseResult(triples, ok=True, repaired=True)
        except ValueError:
            pass
    for start in starts[1:]:  # 3. prose with brackets before the answer
        try:
            value, _ = decoder.raw_decode(body[start:])
        except ValueError:
            continue
        triples = _dedupe(_collect(value))
        if triples:
            return ParseResult(triples, ok=True, repaired=True)
    triples = _dedupe(_scan_pairs(body))  # 4. key: value pairs wherever they are
    if triples:
        return ParseResult(triples, ok=True, repaired=True)
    return empty or ParseResult([], ok=False, repaired=True)


def parse_triples(text: Any) -> list[dict]:
    """The triples in a model's answer as ``{subject, relation, object}`` dicts (never raises).

    >>> parse_triples('[{"subject": "i", "relation": "like", "object": "tea"}, {"subject": "i"')
    [{'subject': 'i', 'relation': 'like', 'object': 'tea'}]
    """
    return parse_output(text).triples



