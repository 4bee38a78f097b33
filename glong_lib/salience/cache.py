"""Salience readings kept on disk, so an evaluation that weighs the same sessions again (every
probe asked after session 3 re-weighs sessions 1 and 2; a re-run weighs them all) reads each
session with the model once.

Only the raw per-triple scores are kept (what Eq. 3 normalises): ``score_conversation`` needs
nothing else. The key is the scorer's identity (its name and settings) and the exact triples and
turns it was given, so a changed source, layer or dialogue is a new entry, never a stale one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ..cache import keyed_path
from ..io import atomic_write_json, json_digest
from ..schema import Triple, Turn


@dataclass
class RawScores:
    """The part of a ``SalienceResult`` a cached reading keeps: the raw Eq. 2 score of each triple."""

    raw: np.ndarray


def reading_key(scorer_id: str, triples: Sequence[Triple], turns: Optional[Sequence[Turn]]) -> str:
    """A stable hash of what a reading depends on.

    >>> t = [Triple("Ana", "like", "tea", speaker="Ana", turn_id="S1:1")]
    >>> (reading_key("m", t, None) == reading_key("m", list(t), None),
    ...  reading_key("m", t, None) == reading_key("n", t, None))
    (True, False)
    """
    return json_digest({"scorer": scorer_id,
                        "triples": [[t.subject, t.relation, t.object, t.speaker, t.turn_id, t.source] for t in triples],
                        "turns": None if turns is None else [[u.id, u.speaker, u.text] for u in turns]}, length=20)


def scorer_identity(scorer) -> str:
    """What makes a scorer's readings what they are: its class, plain settings (numbers, names,
    a settings dataclass) and the folder or hub id its model was loaded from (a retrained suite
    model lives in a new folder, so it gets new entries)."""
    plain = {k: v for k, v in sorted(vars(scorer).items()) if isinstance(v, (bool, int, float, str))}
    model = getattr(getattr(scorer, "model", None), "name_or_path", "")
    return f"{type(scorer).__name__}|{plain!r}|{getattr(scorer, 'settings', '')!r}|{model}"


class CachedScorer:
    """``scorer`` with its raw scores remembered on disk under ``$GLONG_CACHE/salience``.

    ``score(triples, turns)`` returns a ``RawScores``; a reading made before (same scorer identity,
    triples and turns) is loaded instead of recomputed. :func:`cached_scorer` wraps a scorer once.
    """

    def __init__(self, scorer):
        self.scorer = scorer
        self.name = getattr(scorer, "name", type(scorer).__name__)
        self.identity = scorer_identity(scorer)
        self.hits = self.misses = 0

    def score(self, triples: Sequence[Triple], turns: Optional[Sequence[Turn]] = None) -> RawScores:
        path = keyed_path("salience", digest=reading_key(self.identity, triples, turns), suffix=".json")
        if path.is_file():
            try:
                raw = np.asarray(json.loads(path.read_text())["raw"], dtype=np.float64)
                if raw.shape == (len(triples),) and np.isfinite(raw).all():
                    self.hits += 1
                    return RawScores(raw)
            except (ValueError, KeyError, TypeError):
                pass  # a damaged entry is read again and replaced below
        raw = np.asarray(self.scorer.score(list(triples), turns=turns).raw, dtype=np.float64)
        atomic_write_json(path, {"scorer": self.identity, "raw": raw.tolist()})
        self.misses += 1
        return RawScores(raw)


def cached_scorer(scorer) -> CachedScorer:
    """``scorer`` with its readings cached on disk (:class:`CachedScorer`); a scorer already cached
    is returned as it is, so wrapping twice never reads or writes twice."""
    return scorer if isinstance(scorer, CachedScorer) else CachedScorer(scorer)
