"""PersonaExt (PAED): utterance -> triple pairs, PAED's token-index map, the relation schema."""

from __future__ import annotations

import re

from ..errors import DataError
from ..io import PathLike, iter_jsonl, read_json
from ..schema import (
    Triple,
    TriplePair,
)
from .checks import _need, _optional


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
