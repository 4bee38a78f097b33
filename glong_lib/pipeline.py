"""One step from a conversation to the triples that enter G-Long's memory: gold or extracted
triples, weighed by the salience scorer's attention (paper Eq. 1-3), each session on its own.

Every path that builds a memory takes this step: the agent (``TripleSource``, session by session
as a conversation is played), ``glong build`` and ``glong score``, the LoCoMo evaluation and the
probe evaluation (whole conversations, :func:`weighted_triples`). ``tests/test_pipeline.py``
checks that each of them calls it, so a change to the step (a cache, a scope rule) reaches all.

>>> from glong_lib.loaders import load_conversation
>>> from glong_lib.io import data_path
>>> conv = load_conversation(data_path("conversations", "c01.json"))
>>> ts = weighted_triples(conv)  # gold triples, no scorer: every weight stays unset
>>> len(ts) > 0, ts[0].session, ts[0].weight
(True, 1, None)
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

from .config import Profile, get_profile
from .errors import DataError
from .extraction import extract_conversation, extracted_triples, load_extractor
from .salience import SCOPES, load_scorer, score_conversation, weigh_session
from .salience.cache import cached_scorer
from .schema import Conversation, Session, Triple

MODES = ("gold", "model")


def conversation_triples(conv: Conversation, mode: str = "gold", extractor=None,
                         sessions: Optional[Sequence[int]] = None, cache: bool = False,
                         extractor_name: Optional[str] = None) -> list[Triple]:
    """The triples of ``conv`` (of ``sessions`` only, when given), unweighted: the gold ones stored
    with its turns (``mode="gold"``), or the extractor's (``"model"``; with ``cache``, every turn's
    are kept on disk, keyed by the conversation and the extractor: ``extraction.extracted_triples``).
    Each carries its speaker, turn id, session and source sentence. ``extractor_name`` replaces the
    extractor's own cache key (``extraction.extractor_key``; test stubs)."""
    if mode not in MODES:
        raise DataError(f"unknown triple source '{mode}' (choose gold or model)")
    wanted = None if sessions is None else set(sessions)
    if mode == "gold":
        return [Triple(tr.subject, tr.relation, tr.object, speaker=t.speaker, turn_id=t.id, session=s.index,
                       source=t.text)
                for s in conv.sessions if wanted is None or s.index in wanted for t in s.turns for tr in t.triples]
    if extractor is None:
        raise DataError("extracted triples need an extractor")
    if cache:
        return [t for t in extracted_triples(conv, extractor, extractor_name) if wanted is None or t.session in wanted]
    return extract_conversation(conv, extractor, sessions=sessions)


def weighted_triples(conv: Optional[Conversation], mode: str = "gold", extractor=None, scorer=None,
                     scope: str = "session", sessions: Optional[Sequence[int]] = None, cache: bool = False,
                     triples: Optional[Sequence[Triple]] = None) -> list[Triple]:
    """Triples of ``conv`` weighed by Eq. 1-3: ``triples`` when given, else
    :func:`conversation_triples` (``mode``, ``extractor``, ``sessions``, ``cache``); then, with a
    ``scorer``, each session's weights from its attention (``salience.score_conversation``; Eq. 3's
    maximum over ``scope``; with ``cache``, each session's reading is kept on disk:
    ``salience.cached_scorer``). Without a scorer the weights stay as they are. ``conv`` may be
    None with ``triples`` given: a scorer that reads the dialogue then reads the triples' sources."""
    if scope not in SCOPES:
        raise DataError(f"unknown scope '{scope}' (choose from {', '.join(SCOPES)})")
    found = list(triples) if triples is not None else conversation_triples(conv, mode, extractor, sessions, cache)
    if scorer is None or not found:
        return found
    return score_conversation(found, cached_scorer(scorer) if cache else scorer, scope=scope, conversation=conv)


class TripleSource:
    """The same step for a conversation played session by session (the agent): each session's
    triples when it ends, cached per (conversation, session) so several G-Long agents (the
    ablations) share one extraction and one scoring pass.

    ``mode="gold"`` takes the gold triples stored with each turn (the samples have them; fast and
    offline); ``mode="model"`` runs the fine-tuned extractor (``extraction.extract_conversation``).
    Either way the salience scorer (Eq. 1-3) weighs them when ``score`` is true; otherwise every
    weight is 1 (then the importance term cannot reorder anything).

    ``scope`` is Eq. 3's maximum: ``"session"`` (the paper: each session's own) or ``"dialogue"``
    (the reference code: the largest raw score of every session of the conversation seen so far,
    so a session that drew less attention keeps weights below 1). Sessions arrive in order; the
    arithmetic is :func:`salience.weigh_session`, shared with :func:`salience.score_conversation`.
    """

    def __init__(self, mode: str = "gold", extractor=None, scorer=None, score: bool = True,
                 profile: Union[str, Profile] = "offline", scope: str = "session"):
        if mode not in MODES:
            raise DataError(f"unknown triple source '{mode}' (choose gold or model)")
        self.mode, self.score, self.profile, self.scope = mode, score, get_profile(profile), scope
        self._extractor, self._scorer = extractor, scorer
        if scope not in SCOPES:
            raise DataError(f"unknown scope '{scope}' (choose from {', '.join(SCOPES)})")
        self._cache: dict[tuple[str, int], list[Triple]] = {}
        self._dialogue_max: dict[str, float] = {}

    @property
    def extractor(self):
        if self._extractor is None:
            self._extractor = load_extractor(profile=self.profile)
        return self._extractor

    @property
    def scorer(self):
        if self._scorer is None:
            self._scorer = load_scorer(profile=self.profile)
        return self._scorer

    def session_triples(self, conversation: Conversation, session: Session) -> list[Triple]:
        key = (conversation.id, session.index)
        if key not in self._cache:
            extractor = self.extractor if self.mode == "model" else None
            triples = conversation_triples(conversation, self.mode, extractor, sessions=[session.index])
            if self.score and triples:  # the dialogue maximum runs over the sessions seen so far
                raw = self.scorer.score(triples, turns=session.turns).raw
                triples, self._dialogue_max[conversation.id] = weigh_session(
                    triples, raw, self.scope, seen=self._dialogue_max.get(conversation.id, 0.0))
            self._cache[key] = triples
        return self._cache[key]

    def conversation_triples(self, conversation: Conversation) -> list[Triple]:
        """Every session's triples, weighed with the whole conversation in view (``weighted_triples``)."""
        extractor = self.extractor if self.mode == "model" else None
        return weighted_triples(conversation, self.mode, extractor, self.scorer if self.score else None, self.scope)


__all__ = ["MODES", "conversation_triples", "weighted_triples", "TripleSource"]
