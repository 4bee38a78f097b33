"""Which conversations and which turns: a seeded sample of conversations (:func:`sample_conversations`)
and the queries of a session, each user turn the agent answers next (:func:`session_queries`).

The MSC evaluation scores these queries (``evaluation.msc``) and the responder trains on the same
queries of other conversations (``generation.responder``); both read them from here, below the
stages, so the responder's training does not import the evaluation.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional, Sequence

from ..errors import DataError
from ..schema import Conversation, Session, Turn


def sample_conversations(conversations: Sequence[Conversation], n: Optional[int], seed: int = 42) -> list[Conversation]:
    """``n`` conversations drawn without replacement with ``random.Random(seed)``, kept in their
    original order (all of them when ``n`` is None or not smaller). Same seed, same sample.

    >>> convs = [Conversation(str(i), ["A", "B"], []) for i in range(10)]
    >>> [c.id for c in sample_conversations(convs, 3, seed=1)]
    ['1', '2', '4']
    """
    convs = list(conversations)
    if n is None or n >= len(convs):
        return convs
    if n < 1:
        raise DataError(f"--conversations must be at least 1, got {n}")
    keep = sorted(random.Random(seed).sample(range(len(convs)), n))
    return [convs[i] for i in keep]


@dataclass
class Query:
    """One evaluation step: the user's turn, the gold reply, and the context before the query."""

    session: int
    query: Turn
    reference: Turn
    context: list[Turn]


def session_queries(session: Session, user: str, agent: str, limit: Optional[int] = None,
                    history: Sequence[Turn] = ()) -> list[Query]:
    """The queries of one session, in order: every user turn that the agent answers next.

    The context of a query is ``history`` (earlier turns to carry along, empty for the paper's
    C_current) plus every gold turn of this session before it; so each gold reply enters the
    context of the next query. ``limit`` keeps the first few queries (to budget CPU runs).

    >>> s = Session(2, [Turn("a", "U", "hi"), Turn("b", "A", "hey"), Turn("c", "U", "news?"), Turn("d", "A", "yes")])
    >>> [(q.query.id, q.reference.id, [t.id for t in q.context]) for q in session_queries(s, "U", "A")]
    [('a', 'b', []), ('c', 'd', ['a', 'b'])]
    """
    out = []
    turns = session.turns
    for j, turn in enumerate(turns[:-1]):
        if turn.speaker == user and turns[j + 1].speaker == agent:
            out.append(Query(session.index, turn, turns[j + 1], list(history) + turns[:j]))
            if limit is not None and len(out) >= limit:
                break
    return out
