"""Weights for whole conversations: each session scored on its own, Eq. 3 over a chosen scope."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional, Sequence

import numpy as np
import torch

from ..errors import DataError
from ..schema import Conversation, Triple
from .equations import normalise_by_max

SCOPES = ("session", "dialogue")


def with_weights(triples: Sequence[Triple], raw: Sequence[float], maximum: float) -> list[Triple]:
    """Copies of ``triples`` whose ``.weight`` is Eq. 3 with the given maximum (``raw / maximum``).

    >>> [t.weight for t in with_weights([Triple("a", "r", "b"), Triple("c", "r", "d")], [0.5, 1.0], 2.0)]
    [0.25, 0.5]
    """
    weights = normalise_by_max(torch.tensor(np.asarray(raw, dtype=np.float64)), maximum=maximum).numpy()
    return [replace(t, weight=float(w)) for t, w in zip(triples, weights)]


def weigh_session(triples: Sequence[Triple], raw: Sequence[float], scope: str,
                  seen: float = 0.0) -> tuple[list[Triple], float]:
    """One session's triples weighed by Eq. 3 over ``scope``, and the dialogue maximum so far.

    ``raw`` are the session's raw scores (Eq. 2); ``seen`` is the largest raw score of the
    dialogue's other sessions taken into account (none: 0). Scope ``"session"`` divides by the
    session's own maximum (the paper), ``"dialogue"`` by the larger of that and ``seen`` (the
    reference code). The second value, ``max(seen, session maximum)``, is the next call's ``seen``.

    >>> ts = [Triple("a", "r", "b"), Triple("c", "r", "d")]
    >>> [t.weight for t in weigh_session(ts, [1.0, 2.0], "session", seen=4.0)[0]]
    [0.5, 1.0]
    >>> weighted, seen = weigh_session(ts, [1.0, 2.0], "dialogue", seen=4.0)
    >>> [t.weight for t in weighted], seen
    ([0.25, 0.5], 4.0)
    """
    if scope not in SCOPES:
        raise DataError(f"unknown scope '{scope}' (choose from {', '.join(SCOPES)})")
    top = float(np.max(np.asarray(raw, dtype=np.float64)))
    dialogue = max(top, float(seen))
    return with_weights(triples, raw, top if scope == "session" else dialogue), dialogue


def session_turns(conversation: Optional[Conversation], index: Optional[int]):
    """The turns of session ``index`` of ``conversation`` (None when either is unknown)."""
    if conversation is None or index is None:
        return None
    return next((s.turns for s in conversation.sessions if s.index == index), None)


def score_conversation(triples: Sequence[Triple], scorer, scope: str = "session",
                       conversation: Optional[Conversation] = None) -> list[Triple]:
    """Copies of ``triples`` with ``.weight`` set, each session scored on its own.

    With ``conversation``, a source that reads the dialogue (the decoder-only one) gets each
    session's turns; without it, the turns are rebuilt from the triples' own source utterances.

    ``scope="session"`` divides by the session's own maximum (the paper); ``"dialogue"`` by the
    maximum raw score over every session given (the reference code), so a session whose triples
    drew less attention keeps weights below 1. Triples with no session form one group.
    """
    if scope not in SCOPES:
        raise DataError(f"unknown scope '{scope}' (choose from {', '.join(SCOPES)})")
    groups: dict[Any, list[int]] = {}
    for i, t in enumerate(triples):
        groups.setdefault(t.session, []).append(i)
    raw = np.zeros(len(triples), dtype=np.float64)
    for idx in groups.values():
        raw[idx] = scorer.score([triples[i] for i in idx],
                                turns=session_turns(conversation, triples[idx[0]].session)).raw
    out = list(triples)
    dialogue_max = raw.max() if len(raw) else 0.0  # every session given, so no order matters
    for idx in groups.values():
        for i, t in zip(idx, weigh_session([triples[i] for i in idx], raw[idx], scope, seen=dialogue_max)[0]):
            out[i] = t
    return out


