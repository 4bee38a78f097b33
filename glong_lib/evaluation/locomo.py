"""Evidence retrieval on LoCoMo: its questions, the units a memory is built from (dialogue turns or
the observation sentences LoCoMo wrote for each session), cached extraction, and one run of any
number of retriever variants on the same questions: the ladder of ``benchmarks/bench_retrieval.py``.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..checkpoints import Checkpoint
from ..config import PAPER_RETRIEVAL, RetrievalSettings
from ..dates import edge_date
from ..errors import DataError
from ..extraction import LOCOMO_EXTRACTION_BATCH, extracted_triples  # noqa: F401  (re-exported)
from ..loaders import dialogue_position, load_locomo, load_locomo_observations, source_turns
from ..pipeline import conversation_triples, weighted_triples
from ..schema import QA, Conversation, Triple
from ..text import content_words
from .retrieval import (
    DEFAULT_METHODS,
    GRAPH_METHODS,
    MEMORY_SOURCES,
    EvidenceEvaluation,
    evaluate_evidence,
    make_variant_retrievers,
    memory_before,
    primed_encoder,
)


def locomo_questions(questions: Sequence[QA]) -> tuple[list[QA], dict[str, int]]:
    """LoCoMo categories 1-4; category 5 (adversarial: unanswerable by design, its evidence points
    at turns that do not hold the answer) is excluded, and counted."""
    kept = [q for q in questions if q.category != "adversarial"]
    return kept, {"adversarial (category 5)": len(questions) - len(kept)}


def truncate_conversation(conv: Conversation, max_turns: Optional[int]) -> Conversation:
    """The conversation cut after its first ``max_turns`` turns (whole sessions kept while they fit,
    the last one cut), for quick runs."""
    if not max_turns or max_turns >= len(conv.turns()):
        return conv
    from copy import deepcopy

    out, left = deepcopy(conv), int(max_turns)
    sessions = []
    for s in out.sessions:
        if left <= 0:
            break
        s.turns = s.turns[:left]
        left -= len(s.turns)
        sessions.append(s)
    out.sessions = sessions
    return out


def locomo_units(path, memory_from: str = "turns", conversations: Optional[int] = None,
                 max_turns: Optional[int] = None) -> tuple[list[Conversation], list[Conversation], list[QA], dict]:
    """What a LoCoMo evaluation runs on: the dialogues, the units a memory is built from (the
    dialogues themselves, or their observation sentences), the questions kept (categories 1-4,
    evidence inside the turns kept) and the counts of those left out."""
    if memory_from not in MEMORY_SOURCES:
        raise DataError(f"unknown memory source '{memory_from}' (choose from {', '.join(MEMORY_SOURCES)})")
    dialogues, qas = load_locomo(path)
    dialogues = [truncate_conversation(c, max_turns) for c in dialogues[:conversations or len(dialogues)]]
    kept_ids = {c.id for c in dialogues}
    qas, excluded = locomo_questions([q for q in qas if q.conversation in kept_ids])
    present = {c.id: {t.id for t in c.turns()} for c in dialogues}
    inside = [q for q in qas if q.evidence and set(q.evidence) <= present[q.conversation]]
    if len(inside) < len(qas):
        excluded["evidence outside the turns kept (or none)"] = len(qas) - len(inside)
    units = dialogues
    if memory_from == "observations":
        last = {c.id: max(dialogue_position(t.id) for t in c.turns()) for c in dialogues}
        units = []
        for c in load_locomo_observations(path):
            if c.id in kept_ids:
                for s in c.sessions:
                    s.turns = [u for u in s.turns if dialogue_position(u.id) <= last[c.id]]
                c.sessions = [s for s in c.sessions if s.turns]
                units.append(c)
    return dialogues, units, inside, excluded


#: The relation of a unit stored whole because the extractor found no triple in it.
SAID = "said"


def with_unextracted(conv: Conversation, triples: Sequence[Triple]) -> list[Triple]:
    """``triples`` plus, for every unit of ``conv`` that has none, the unit itself as the triple
    (speaker, ``said``, text): a fact the extractor missed stays retrievable instead of vanishing
    from the memory.

    >>> from glong_lib.schema import Session, Turn
    >>> c = Conversation("c", ["Ana"], [Session(1, [Turn("D1:1", "Ana", "Hi!"), Turn("D1:2", "Ana", "I like tea")])])
    >>> [t.text() for t in with_unextracted(c, [Triple("Ana", "like", "tea", turn_id="D1:2")])]
    ['Ana like tea', 'Ana said Hi!']
    """
    have = {t.turn_id for t in triples}
    extra = [Triple(u.speaker, SAID, u.text, speaker=u.speaker, turn_id=u.id, session=s.index, source=u.text)
             for s in conv.sessions for u in s.turns if u.id not in have]
    return list(triples) + extra


def evaluate_variants(path, encoder, variants: dict[str, tuple[str, RetrievalSettings]], ks: Sequence[int] = (1, 3, 5),
                      conversations: Optional[int] = None, max_turns: Optional[int] = None, extractor=None,
                      extractor_name: Optional[str] = None, progress: bool = True,
                      checkpoint: Optional[Checkpoint] = None, memory_from: str = "turns",
                      keep_unextracted: bool = False, scorer=None) -> EvidenceEvaluation:
    """Evidence retrieval on LoCoMo (categories 1-4) for ``variants`` ``{name: (method, settings)}``
    (a method of ``retrieval.METHODS`` and its ``RetrievalSettings``), all on the same questions in one
    run, with the memory built from the dialogue ``turns`` or LoCoMo's ``observations``
    (``locomo_units``). Graph methods need an ``extractor`` (LoCoMo has no gold triples); its
    triples are cached per conversation; ``keep_unextracted`` stores units it found nothing in
    whole (``with_unextracted``); a salience ``scorer`` weighs them by Eq. 3 (uniform weights without
    one). Questions are asked after the last session."""
    dialogues, units, inside, excluded = locomo_units(path, memory_from, conversations, max_turns)
    return evaluate_on_units(dialogues, units, inside, excluded, encoder, variants, ks, extractor, extractor_name,
                             progress, checkpoint, keep_unextracted, scorer)


def evaluate_on_units(dialogues: Sequence[Conversation], units: Sequence[Conversation], inside: Sequence[QA],
                      excluded: dict, encoder, variants: dict[str, tuple[str, RetrievalSettings]], ks: Sequence[int],
                      extractor=None, extractor_name: Optional[str] = None, progress: bool = True,
                      checkpoint: Optional[Checkpoint] = None, keep_unextracted: bool = False,
                      scorer=None) -> EvidenceEvaluation:
    """The run behind :func:`evaluate_variants` on data already loaded (LoCoMo, LongMemEval): the
    retrievers of :func:`unit_retrievers`, then every variant on the same questions."""
    retrievers = unit_retrievers(dialogues, units, inside, encoder, variants, max(ks), extractor, extractor_name,
                                 keep_unextracted, scorer)
    result = evaluate_evidence(retrievers, inside, units, ks, progress, checkpoint)
    result.excluded.update(excluded)
    return result


def unit_retrievers(dialogues: Sequence[Conversation], units: Sequence[Conversation], inside: Sequence[QA],
                    encoder, variants: dict[str, tuple[str, RetrievalSettings]], k: int, extractor=None,
                    extractor_name: Optional[str] = None, keep_unextracted: bool = False, scorer=None) -> dict:
    """One retriever factory per variant over memories built from ``units``: triples extracted per
    unit conversation (cached), weighed by Eq. 3 when a salience ``scorer`` is given (each unit's
    sessions read once, cached on disk: ``salience.cache``), the encoder primed with every text."""
    needs_graph = any(method in GRAPH_METHODS for method, _ in variants.values())
    if extractor is None and needs_graph:
        raise DataError("graph methods need an extractor (this data has no gold triples)")
    triples = {c.id: conversation_triples(c, "model", extractor, cache=True, extractor_name=extractor_name)
               for c in units} if needs_graph else {}
    if keep_unextracted:
        triples = {c.id: with_unextracted(c, triples[c.id]) for c in units if c.id in triples}
    triples = {c.id: weighted_triples(c, scorer=scorer, cache=True, triples=triples[c.id])
               for c in units if c.id in triples}
    encoder = primed_encoder(encoder, inside, list(units) + list(dialogues), [t for ts in triples.values() for t in ts])

    def memory_for(conv, session):
        return memory_before(conv, session, encoder, triples[conv.id])

    return make_variant_retrievers(variants, memory_for, encoder, k, raw={c.id: c for c in dialogues})


def evaluate_locomo(path, encoder, methods: Sequence[str] = DEFAULT_METHODS, ks: Sequence[int] = (1, 3, 5, 10),
                    conversations: Optional[int] = None, max_turns: Optional[int] = None,
                    extractor=None, extractor_name: Optional[str] = None,
                    settings: Optional[RetrievalSettings] = None, progress: bool = True,
                    checkpoint: Optional[Checkpoint] = None, memory_from: str = "turns",
                    keep_unextracted: bool = False, scorer=None) -> EvidenceEvaluation:
    """``evaluate_variants`` with one variant per method, all with the same ``settings`` (default
    the paper's) and the same edge weights (Eq. 3 with ``scorer``, else uniform)."""
    variants = {m: (m, settings or PAPER_RETRIEVAL) for m in methods}
    return evaluate_variants(path, encoder, variants, ks, conversations=conversations, max_turns=max_turns,
                             extractor=extractor, extractor_name=extractor_name, progress=progress,
                             checkpoint=checkpoint, memory_from=memory_from, keep_unextracted=keep_unextracted,
                             scorer=scorer)


def answer_coverage(questions: Sequence[QA], units: Sequence[Conversation],
                    triples: dict[str, Sequence[Triple]]) -> dict[str, float]:
    """How often the memory's units still hold the answer: over the evidence turns of
    ``questions`` that have content words in their answer, the share whose source units' text
    holds at least one of them (``units``), the share whose extracted triples do (``triples``,
    words of subject, relation and object), and the share whose triples with the date the memory
    stores on their edge do (``triples + date``: ``dates.edge_date`` of the triple's sentence in its
    session; it is what answers "when" questions). A triple extractor that drops the fact shows here
    as a gap between ``units`` and ``triples``, before any retrieval."""
    session_date = {(c.id, u.id): s.date for c in units for s in c.sessions for u in s.turns}
    by_turn_text: dict[tuple[str, str], set[str]] = {}
    for c in units:
        for u in c.turns():
            for t in source_turns(u.id):
                by_turn_text.setdefault((c.id, t), set()).update(content_words(u.text))
    by_turn_triples: dict[tuple[str, str], set[str]] = {}
    by_turn_dated: dict[tuple[str, str], set[str]] = {}
    for cid, ts in triples.items():
        for tr in ts:
            words = set(content_words(tr.text()))
            dated = words | set(content_words(edge_date(tr.source, session_date.get((cid, tr.turn_id))) or ""))
            for t in source_turns(tr.turn_id):
                by_turn_triples.setdefault((cid, t), set()).update(words)
                by_turn_dated.setdefault((cid, t), set()).update(dated)
    n = in_text = in_triples = in_dated = 0
    for q in questions:
        words = set(content_words(str(q.answer)))
        if not words:
            continue
        for t in q.evidence:
            n += 1
            in_text += bool(words & by_turn_text.get((q.conversation, t), set()))
            in_triples += bool(words & by_turn_triples.get((q.conversation, t), set()))
            in_dated += bool(words & by_turn_dated.get((q.conversation, t), set()))
    return {"evidence turns": n, "units": in_text / max(1, n), "triples": in_triples / max(1, n),
            "triples + date": in_dated / max(1, n)}
