"""Evidence retrieval evaluation: Recall@k and MRR on the probes and on LoCoMo."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

from ..errors import DataError
from ..extraction import extract_conversation
from ..io import Checkpoint, atomic_write_json, content_key
from ..loaders import load_locomo
from ..memory import build_memory
from ..models import cache_dir
from ..retrieval import (
    PAPER_K,
    PAPER_SEMANTIC_TOP_N,
    AssociativeRetriever,
    BM25TurnRetriever,
    CachingEncoder,
    DenseTurnRetriever,
    PPRRetriever,
)
from ..salience import score_conversation
from ..schema import QA, Conversation, Triple, Turn
from ..text import normalise_entity, normalise_relation, turn_line
from .metrics import recall_at_k, reciprocal_rank, unique_turns  # noqa: F401  (re-exported)

#: The paper's LongMemEval retrieval numbers, for context beside ours (a different data set:
#: LME sessions, LLM-built memories and gpt-4o-mini; not comparable number for number).
#: Figure 4 (N = 500), read off the plot (about +-0.01): Recall@K per method.
PAPER_LME_FIGURE4 = {
    "G-Long": {1: 0.33, 3: 0.62, 5: 0.72, 10: 0.83, 15: 0.90, 20: 0.93},
    "MemoryBank": {1: 0.24, 3: 0.44, 5: 0.57, 10: 0.73, 15: 0.81, 20: 0.86},
    "LD-Agent": {1: 0.23, 3: 0.44, 5: 0.55, 10: 0.67, 15: 0.735, 20: 0.765},
}
#: Table 4 (N = 500) Recall@3/5, Table 5 (N = 50 subset) Recall@1/3/5, Table 7 (hops) Recall@3/5.
PAPER_LME_TABLE4 = {"MemoryBank": {3: 0.4422, 5: 0.5693}, "LD-Agent": {3: 0.4462, 5: 0.5519},
                    "G-Long": {3: 0.6286, 5: 0.7220}}
PAPER_LME_TABLE5 = {"MemoryBank": {1: 0.40, 3: 0.62, 5: 0.77}, "LD-Agent": {1: 0.47, 3: 0.68, 5: 0.80},
                    "FraCom": {1: 0.19, 3: 0.40, 5: 0.42}, "HippoRAG": {1: 0.12, 3: 0.36, 5: 0.46},
                    "HippoRAG + G-Long triplets": {1: 0.17, 3: 0.66, 5: 0.86},
                    "G-Long": {1: 0.71, 3: 0.90, 5: 0.92}}
PAPER_LME_TABLE7 = {"G-Long (L = 1)": {3: 0.6286, 5: 0.7220}, "G-Long (L = 2)": {3: 0.5314, 5: 0.6042}}



# --------------------------------------------------------------------------- evidence metrics

@dataclass
class EvidenceEvaluation:
    """Per-method Recall@k and MRR, the per-question rows behind them, and what was left out."""

    metrics: dict[str, dict[str, float]]
    rows: list[dict[str, Any]]
    ks: tuple[int, ...]
    excluded: dict[str, int] = field(default_factory=dict)

    def table(self) -> list[dict[str, Any]]:
        return [{"method": m, **{k: round(v, 3) if isinstance(v, float) else v for k, v in d.items()}}
                for m, d in self.metrics.items()]

    def recall_curve(self, method: str) -> tuple[list[int], list[float]]:
        return list(self.ks), [self.metrics[method][f"Recall@{k}"] for k in self.ks]


def question_time(conv: Conversation, q: QA) -> float:
    """When a question is asked on the conversation clock: the start of ``asked_in_session``, or
    (LoCoMo, asked after the conversation) just after its last turn."""
    if q.asked_in_session is not None:
        for s in conv.sessions:
            if s.index == q.asked_in_session:
                return s.start_s
    last = conv.sessions[-1].turns[-1]
    return last.time_s + 30.0


def turns_before(conv: Conversation, session: Optional[int]) -> list[Turn]:
    """The turns of the sessions before ``session`` (all of them when ``session`` is None)."""
    return [t for s in conv.sessions if session is None or s.index < session for t in s.turns]


RetrieverSpec = Union[Any, dict, Callable[[Conversation, Optional[int]], Any]]


def _resolve(spec: RetrieverSpec, conv: Conversation, session: Optional[int], cache: dict, name: str):
    """A retriever for one (conversation, session): a shared object, a per-conversation dict, or a
    factory ``f(conversation, asked_in_session)`` whose results are cached."""
    if hasattr(spec, "retrieve"):
        return spec
    if isinstance(spec, dict):
        if conv.id not in spec:
            raise DataError(f"method '{name}' has no retriever for conversation '{conv.id}'")
        return spec[conv.id]
    key = (name, conv.id, session)
    if key not in cache:
        cache[key] = spec(conv, session)
    return cache[key]


def evaluate_evidence(retrievers: dict[str, RetrieverSpec], questions: Sequence[QA],
                      conversations: Sequence[Conversation], ks: Sequence[int] = (1, 3, 5, 10),
                      progress: bool = True, checkpoint: Optional[Checkpoint] = None) -> EvidenceEvaluation:
    """Recall@k (fraction of evidence turns in the first k distinct source turns) and MRR, for every
    method on the same questions. Each method retrieves ``max(ks)`` items; retrieved triples count
    as their source turn, and repeats of one turn collapse to its first rank, so a triple retriever
    can show fewer than ``max(ks)`` distinct turns (a disadvantage it carries, not hides).
    Questions whose conversation is missing raise; those with no evidence are skipped and counted.
    With a ``checkpoint`` (``io.Checkpoint``) each question's rows are appended as it finishes, and
    questions already there are not asked again.
    """
    from tqdm.auto import tqdm

    if not retrievers:
        raise DataError("no retrieval methods to evaluate")
    ks = tuple(sorted({int(k) for k in ks}))
    if not ks or ks[0] < 1:
        raise DataError(f"k values should be positive integers, got {ks}")
    by_id = {c.id: c for c in conversations}
    depth, cache, rows = max(ks), {}, []
    excluded = {"no evidence": 0}
    for q in tqdm(questions, desc="questions", disable=not progress):
        conv = by_id.get(q.conversation)
        if conv is None:
            raise DataError(f"question '{q.id}' refers to unknown conversation '{q.conversation}'")
        if not q.evidence:
            excluded["no evidence"] += 1
            continue
        if checkpoint is not None and q.id in checkpoint.done:
            rows.extend(checkpoint.done[q.id])
            continue
        now = question_time(conv, q)
        mine = []
        for name, spec in retrievers.items():
            retriever = _resolve(spec, conv, q.asked_in_session, cache, name)
            ranked = unique_turns(retriever.retrieve(q.question, now_s=now, k=depth).turn_ids)
            row = {"method": name, "question": q.id, "category": q.category, "rr": reciprocal_rank(ranked, q.evidence)}
            row.update({f"Recall@{k}": recall_at_k(ranked, q.evidence, k) for k in ks})
            mine.append(row)
        rows.extend(mine)
        if checkpoint is not None:
            checkpoint.add(q.id, mine)
    metrics = {}
    for name in retrievers:
        mine = [r for r in rows if r["method"] == name]
        n = max(1, len(mine))
        metrics[name] = {f"Recall@{k}": sum(r[f"Recall@{k}"] for r in mine) / n for k in ks}
        metrics[name]["MRR"] = sum(r["rr"] for r in mine) / n
        metrics[name]["questions"] = len(mine)
    return EvidenceEvaluation(metrics, rows, ks, {k: v for k, v in excluded.items() if v})


# --------------------------------------------------------------------------- memories for evaluation

#: Retrieval methods ``make_retrievers`` knows, in display order.
METHODS = ("glong", "dense", "bm25", "ppr")


def gold_triples(conv: Conversation, before_session: Optional[int] = None) -> list[Triple]:
    """The gold triples of the turns before ``before_session`` (the shipped samples have them)."""
    return [tr for t in turns_before(conv, before_session) for tr in t.triples]


def memory_before(conv: Conversation, session: Optional[int], encoder, triples: Optional[Sequence[Triple]] = None):
    """``memory.build_memory`` over the sessions before ``session`` (all when None), from
    ``triples`` or, when None, the conversation's gold triples."""
    sessions = None if session is None else [s.index for s in conv.sessions if s.index < session]
    return build_memory(conv, triples, encoder=encoder, sessions=sessions)


def make_retrievers(methods: Sequence[str], memory_for: Callable[[Conversation, Optional[int]], Any],
                    encoder, depth: int = PAPER_K, glong_params: Optional[dict] = None) -> dict[str, Callable]:
    """Factories ``f(conversation, asked_in_session) -> retriever`` for :func:`evaluate_evidence`.

    ``memory_for(conversation, session)`` builds the graph memory (of what was said before
    ``session``); the graph methods of one (conversation, session) share one memory.
    To score ranks up to ``depth``, G-Long's final K is
    ``depth`` and its semantic pool ``max(paper's 5, depth)`` (the paper's pool of 5 cannot rank 10).
    Evaluation retrievers do not update access times, so every question sees the same memory.
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise DataError(f"unknown retrieval method(s) {', '.join(unknown)} (choose from {', '.join(METHODS)})")
    memories: dict = {}

    def memory(conv, session):
        if (conv.id, session) not in memories:
            memories[(conv.id, session)] = memory_for(conv, session)
        return memories[(conv.id, session)]

    params = {"semantic_top_n": max(PAPER_SEMANTIC_TOP_N, depth), **(glong_params or {})}
    params.update(k=depth, update_access=False)
    factories = {
        "glong": lambda c, s: AssociativeRetriever(memory(c, s), **params),
        "ppr": lambda c, s: PPRRetriever(memory(c, s), k=depth),
        "dense": lambda c, s: DenseTurnRetriever(turns_before(c, s), encoder, k=depth),
        "bm25": lambda c, s: BM25TurnRetriever(turns_before(c, s), k=depth),
    }
    return {m: factories[m] for m in methods}


def _primed(encoder, questions: Sequence[QA], conversations: Sequence[Conversation],
            triples: Sequence[Triple] = ()):
    """A caching wrapper around ``encoder`` that already holds every question, turn, and the
    entity names and edge texts the memory will make of ``triples``."""
    if encoder is None:
        return None
    cached = CachingEncoder(encoder)
    texts = [q.question for q in questions] + [turn_line(t) for c in conversations for t in c.turns()]
    for t in triples:
        s, o = normalise_entity(t.subject, t.speaker), normalise_entity(t.object, t.speaker)
        texts += [s, o, f"{s} {normalise_relation(t.relation)} {o}"]
    cached.prime(texts)
    return cached


def evaluate_probes(probes: Sequence[QA], conversations: Sequence[Conversation], encoder,
                    methods: Sequence[str] = METHODS, ks: Sequence[int] = (1, 3, 5, 10), scorer=None,
                    glong_params: Optional[dict] = None, progress: bool = True,
                    checkpoint: Optional[Checkpoint] = None) -> EvidenceEvaluation:
    """Evidence retrieval on the samples' probes: memory from the gold triples of the sessions
    before the probe's session, with uniform weights, or Eq. 3 weights when a salience ``scorer``
    (``salience.load_scorer()``) is given."""

    asked = {q.conversation for q in probes}
    conversations = [c for c in conversations if c.id in asked]  # encode only what is asked about
    encoder = _primed(encoder, probes, conversations, [t for c in conversations for t in gold_triples(c)])

    def memory_for(conv, session):
        triples = gold_triples(conv, session)
        if scorer is not None:
            triples = score_conversation(triples, scorer)
        return memory_before(conv, session, encoder, triples)

    retrievers = make_retrievers(methods, memory_for, encoder, max(ks), glong_params)
    return evaluate_evidence(retrievers, probes, conversations, ks, progress, checkpoint)


# --------------------------------------------------------------------------- LoCoMo

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


def extraction_cache_path(conv: Conversation, extractor_name: str) -> Path:
    """Where one conversation's extracted triples are cached, keyed by everything that changes them
    (conversation id, its turn texts, the extractor)."""

    digest = content_key([turn_line(t) for t in conv.turns()])
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{conv.id}-{extractor_name}")
    return cache_dir("retrieval", "extracted") / f"{safe}-{digest}.json"


def extractor_key(extractor) -> str:
    """What names an extractor in cache keys: its adapter folder (which is keyed by base model,
    data and steps), else its name."""
    adapter = getattr(extractor, "adapter_dir", None)
    return Path(adapter).name if adapter else str(getattr(extractor, "name", "extractor"))


def extracted_triples(conv: Conversation, extractor, extractor_name: Optional[str] = None) -> list[Triple]:
    """Triples of every turn of ``conv`` from ``extraction.extract_conversation``, cached on disk
    (extraction runs at a few utterances per second on a CPU; a LoCoMo conversation has ~500 turns)."""
    path = extraction_cache_path(conv, extractor_name or extractor_key(extractor))
    if path.is_file():
        return [Triple.from_dict(d) for d in json.loads(path.read_text())]
    triples = extract_conversation(conv, extractor)
    atomic_write_json(path, [t.to_dict() for t in triples], indent=None)  # never a half-written cache
    return triples


def evaluate_locomo(path, encoder, methods: Sequence[str] = METHODS, ks: Sequence[int] = (1, 3, 5, 10),
                    conversations: Optional[int] = None, max_turns: Optional[int] = None,
                    extractor=None, extractor_name: Optional[str] = None, glong_params: Optional[dict] = None,
                    progress: bool = True, checkpoint: Optional[Checkpoint] = None) -> EvidenceEvaluation:
    """Evidence retrieval on LoCoMo (categories 1-4), every method in one run. The graph methods
    need extracted triples (LoCoMo has no gold triples): pass an ``extractor`` or leave them out.
    Questions are asked after the last session; questions whose evidence falls outside a
    ``max_turns`` cut are left out and counted."""
    convs, qas = load_locomo(path)
    convs = [truncate_conversation(c, max_turns) for c in convs[:conversations or len(convs)]]
    kept_ids = {c.id for c in convs}
    qas, excluded = locomo_questions([q for q in qas if q.conversation in kept_ids])
    present = {c.id: {t.id for t in c.turns()} for c in convs}
    inside = [q for q in qas if q.evidence and set(q.evidence) <= present[q.conversation]]
    if len(inside) < len(qas):
        excluded["evidence outside the turns kept (or none)"] = len(qas) - len(inside)
    needs_graph = any(m in ("glong", "ppr") for m in methods)
    if extractor is None and needs_graph:
        raise DataError("graph methods on LoCoMo need an extractor (LoCoMo has no gold triples)")
    triples = {c.id: extracted_triples(c, extractor, extractor_name) for c in convs} if needs_graph else {}
    encoder = _primed(encoder, inside, convs, [t for ts in triples.values() for t in ts])

    def memory_for(conv, session):
        return memory_before(conv, session, encoder, triples[conv.id])

    retrievers = make_retrievers(methods, memory_for, encoder, max(ks), glong_params)
    result = evaluate_evidence(retrievers, inside, convs, ks, progress, checkpoint)
    result.excluded.update(excluded)
    return result

