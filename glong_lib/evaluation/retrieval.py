"""Evidence retrieval evaluation: Hit@k, Recall@k and MRR@20, with intervals, on the probes and on
LoCoMo (over raw turns or over its observation sentences: the oracle-facts ladder)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from ..checkpoints import Checkpoint
from ..config import RetrievalSettings
from ..errors import DataError
from ..loaders import source_turns
from ..memory import build_memory
from ..pipeline import weighted_triples
from ..retrieval import (
    CachingEncoder,
)
from ..retrieval.registry import (  # noqa: F401  (re-exported: the evaluation's method names)
    DEFAULT_METHODS,
    GRAPH_METHODS,
    METHODS,
    make_retrievers,
    make_variant_retrievers,
    turns_before,
)
from ..salience.cache import cached_scorer
from ..schema import QA, Conversation, Triple
from ..text import normalise_entity, normalise_relation, turn_line
from .intervals import Interval, bootstrap_mean, interval  # noqa: F401  (bootstrap_mean re-exported)
from .metrics import (  # noqa: F401  (re-exported)
    hit_at_k,
    paired_bootstrap,
    recall_at_k,
    reciprocal_rank,
    unique_turns,
)
from .paper_lme import (  # noqa: F401  (the paper's LongMemEval numbers, re-exported as RE.PAPER_*)
    PAPER_LME_FIGURE4,
    PAPER_LME_MRR20,
    PAPER_LME_TABLE4,
    PAPER_LME_TABLE5,
    PAPER_LME_TABLE7,
    PAPER_LME_TABLE13,
)

# --------------------------------------------------------------------------- evidence metrics

#: The depth of the reciprocal-rank list (MRR@20).
MRR_DEPTH = 20


@dataclass
class EvidenceEvaluation:
    """Per-method Hit@k, Recall@k and MRR@20, the per-question rows behind them, and what was left
    out. ``interval``, ``compare`` and ``by_category`` say how sure each number is and where it
    comes from."""

    metrics: dict[str, dict[str, float]]
    rows: list[dict[str, Any]]
    ks: tuple[int, ...]
    excluded: dict[str, int] = field(default_factory=dict)
    mrr_depth: int = MRR_DEPTH

    def table(self) -> list[dict[str, Any]]:
        return [{"method": m, **{k: round(v, 3) if isinstance(v, float) else v for k, v in d.items()}}
                for m, d in self.metrics.items()]

    def recall_curve(self, method: str) -> tuple[list[int], list[float]]:
        return list(self.ks), [self.metrics[method][f"Recall@{k}"] for k in self.ks]

    def values(self, method: str, metric: str, category: Optional[str] = None) -> list[float]:
        """The per-question values of one metric, in question order."""
        return [r[metric] for r in self.rows if r["method"] == method and category in (None, r["category"])]

    def _conversations(self, method: str, category: Optional[str], by_conversation: bool) -> Optional[list]:
        return [r.get("conversation") for r in self.rows if r["method"] == method
                and category in (None, r["category"])] if by_conversation else None

    def mean_interval(self, method: str, metric: str, category: Optional[str] = None,
                      by_conversation: bool = False) -> Interval:
        """A method's mean over the questions with its 95% interval and the small-sample rule
        (``intervals.interval``)."""
        return interval(self.values(method, metric, category),
                        conversations=self._conversations(method, category, by_conversation))

    def interval(self, method: str, metric: str, category: Optional[str] = None,
                 by_conversation: bool = False) -> tuple[float, float]:
        """The bounds of :meth:`mean_interval`."""
        r = self.mean_interval(method, metric, category, by_conversation)
        return r.low, r.high

    def compare(self, a: str, b: str, metric: str, category: Optional[str] = None,
                by_conversation: bool = False) -> dict:
        """Paired bootstrap of ``a - b`` over the same questions (``intervals.interval``, as a dict:
        ``mean_diff``, ``ci_low``, ``ci_high``, ``unit``, ``enough``, ``verdict``, ...), of one
        ``category`` when given. With ``by_conversation`` whole conversations are resampled
        (questions about one conversation share its memory, so they are not independent; the
        interval widens to say so)."""
        return interval(self.values(a, metric, category), self.values(b, metric, category),
                        conversations=self._conversations(a, category, by_conversation)).as_dict()

    def wins_losses(self, a: str, b: str, metric: str, category: Optional[str] = None) -> dict[str, list[str]]:
        """The questions on which ``a`` scores above ``b`` (``"wins"``) and below it (``"losses"``) on
        one metric, by question id: what a mean difference hides, e.g. a graph step that finds 12
        questions flat retrieval misses and drops 20 it finds. ``a`` and ``b`` must have been run on
        the same questions.

        >>> scores = [("g", "q1", 1), ("f", "q1", 0), ("g", "q2", 0), ("f", "q2", 1), ("g", "q3", 1), ("f", "q3", 1)]
        >>> ev = EvidenceEvaluation({}, [{"method": m, "question": q, "category": "c", "Hit@5": v}
        ...                              for m, q, v in scores], (5,))
        >>> ev.wins_losses("g", "f", "Hit@5")
        {'wins': ['q1'], 'losses': ['q2']}
        """
        def pick(method: str) -> dict[str, float]:
            return {r["question"]: r[metric] for r in self.rows
                    if r["method"] == method and category in (None, r["category"])}

        va, vb = pick(a), pick(b)
        if set(va) != set(vb):
            raise DataError(f"'{a}' and '{b}' were not run on the same questions")
        return {"wins": [q for q in va if va[q] > vb[q]], "losses": [q for q in va if va[q] < vb[q]]}

    def renamed(self, names: dict[str, str]) -> "EvidenceEvaluation":
        """The same evaluation with methods renamed by ``names`` (others keep theirs), e.g. to merge
        a second run of the same method under another setting (:func:`merge_evaluations`)."""
        return EvidenceEvaluation({names.get(m, m): d for m, d in self.metrics.items()},
                                  [{**r, "method": names.get(r["method"], r["method"])} for r in self.rows],
                                  self.ks, dict(self.excluded), self.mrr_depth)

    def subset(self, conversations: Sequence[str]) -> "EvidenceEvaluation":
        """The same evaluation restricted to the questions of ``conversations`` (a selection or a
        report split), its means recomputed from the kept rows."""
        keep = set(conversations)
        rows = [r for r in self.rows if r.get("conversation") in keep]
        names = [k for k in next(iter(self.metrics.values()), {}) if k != "questions"]
        return EvidenceEvaluation(mean_metrics(rows, self.metrics, names), rows, self.ks, dict(self.excluded),
                                  self.mrr_depth)

    def by_category(self, metric: str) -> dict[str, dict[str, float]]:
        """``{method: {category: mean}}`` plus each category's question count under ``"n"``."""
        cats = sorted({r["category"] for r in self.rows})
        out = {m: {c: float(np.mean(self.values(m, metric, c))) for c in cats} for m in self.metrics}
        first = next(iter(self.metrics), None)
        out["n"] = {c: len(self.values(first, metric, c)) for c in cats} if first else {}
        return out


def mean_metrics(rows: Sequence[dict], methods, names: Sequence[str]) -> dict[str, dict[str, float]]:
    """``{method: {metric: mean over its rows, "questions": row count}}`` for each of ``methods``."""
    out = {}
    for name in methods:
        mine = [r for r in rows if r["method"] == name]
        out[name] = {m: sum(r[m] for r in mine) / max(1, len(mine)) for m in names}
        out[name]["questions"] = len(mine)
    return out


def merge_evaluations(*parts: EvidenceEvaluation) -> EvidenceEvaluation:
    """One evaluation from several runs over the same questions with the same cut-offs (e.g. two
    memories of one conversation), so every pair of their methods can be compared question by
    question. Method names must not repeat."""
    names = [m for p in parts for m in p.metrics]
    if len(set(names)) < len(names):
        raise DataError("the evaluations to merge share a method name")
    if len({p.ks for p in parts}) > 1 or len({p.mrr_depth for p in parts}) > 1:
        raise DataError("the evaluations to merge use different cut-offs")
    asked = [[r["question"] for r in p.rows if r["method"] == next(iter(p.metrics))] for p in parts]
    if any(a != asked[0] for a in asked):
        raise DataError("the evaluations to merge were not run on the same questions")
    return EvidenceEvaluation({m: d for p in parts for m, d in p.metrics.items()}, [r for p in parts for r in p.rows],
                              parts[0].ks, dict(parts[0].excluded), parts[0].mrr_depth)


def question_time(conv: Conversation, q: QA) -> float:
    """When a question is asked on the conversation clock: the start of ``asked_in_session``, or
    (LoCoMo, asked after the conversation) just after its last turn."""
    if q.asked_in_session is not None:
        for s in conv.sessions:
            if s.index == q.asked_in_session:
                return s.start_s
    last = conv.sessions[-1].turns[-1]
    return last.time_s + 30.0


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


def ranked_sources(retriever, query: str, now_s: float, depths: Sequence[int]) -> dict[int, list[list[str]]]:
    """For each depth d, the source turns of each of the top d items (``loaders.source_turns``).

    A retriever whose top d is a prefix of its top d' (turn baselines, PPR) is asked once, at the
    deepest. G-Long's top k depends on its pool (``pool_size(k)``, at least k), so it is asked once
    per pool size: k = 1, 3, 5 share the paper's pool of 5, while MRR@20 reranks a pool of 20.
    """
    pool_size = getattr(retriever, "pool_size", lambda d: 0)
    deepest: dict[int, int] = {}
    for d in depths:
        deepest[pool_size(d)] = max(d, deepest.get(pool_size(d), 0))
    lists = {p: [source_turns(t) for t in retriever.retrieve(query, now_s=now_s, k=d).turn_ids]
             for p, d in deepest.items()}
    return {d: lists[pool_size(d)][:d] for d in depths}


def evaluate_evidence(retrievers: dict[str, RetrieverSpec], questions: Sequence[QA],
                      conversations: Sequence[Conversation], ks: Sequence[int] = (1, 3, 5, 10),
                      progress: bool = True, checkpoint: Optional[Checkpoint] = None,
                      mrr_depth: int = MRR_DEPTH) -> EvidenceEvaluation:
    """Hit@k (any evidence turn in the top k items), Recall@k (share of the evidence turns there)
    and MRR@``mrr_depth`` for every method on the same questions. Each k is its own retrieval of
    exactly k items (``ranked_sources``); an item counts as the turn(s) it came from, so a triple
    retriever whose top k repeats a turn shows fewer turns (a disadvantage it carries, not hides).
    Questions whose conversation is missing raise; those with no evidence are skipped and counted.
    With a ``checkpoint`` (``checkpoints.Checkpoint``) each question's rows are appended as it finishes, and
    questions already there are not asked again.
    """
    from tqdm.auto import tqdm

    if not retrievers:
        raise DataError("no retrieval methods to evaluate")
    ks = tuple(sorted({int(k) for k in ks}))
    if not ks or ks[0] < 1:
        raise DataError(f"k values should be positive integers, got {ks}")
    depths = sorted(set(ks) | {int(mrr_depth)})
    by_id = {c.id: c for c in conversations}
    cache, rows = {}, []
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
            ranked = ranked_sources(retriever, q.question, now, depths)
            row = {"method": name, "question": q.id, "category": q.category, "conversation": q.conversation}
            row.update({f"Hit@{k}": hit_at_k(ranked[k], q.evidence, k) for k in ks})
            row.update({f"Recall@{k}": recall_at_k(ranked[k], q.evidence, k) for k in ks})
            row[f"MRR@{mrr_depth}"] = reciprocal_rank(ranked[mrr_depth], q.evidence)
            mine.append(row)
        rows.extend(mine)
        if checkpoint is not None:
            checkpoint.add(q.id, mine)
    names = [f"Hit@{k}" for k in ks] + [f"Recall@{k}" for k in ks] + [f"MRR@{mrr_depth}"]
    metrics = mean_metrics(rows, retrievers, names)
    return EvidenceEvaluation(metrics, rows, ks, {k: v for k, v in excluded.items() if v}, int(mrr_depth))


# --------------------------------------------------------------------------- memories for evaluation

#: What a memory is built from on LoCoMo: the dialogue turns, or LoCoMo's observation sentences.
MEMORY_SOURCES = ("turns", "observations")


def gold_triples(conv: Conversation, before_session: Optional[int] = None) -> list[Triple]:
    """The gold triples of the turns before ``before_session`` (the shipped samples have them)."""
    return [tr for t in turns_before(conv, before_session) for tr in t.triples]


def memory_before(conv: Conversation, session: Optional[int], encoder, triples: Optional[Sequence[Triple]] = None):
    """``memory.build_memory`` over the sessions before ``session`` (all when None), from
    ``triples`` or, when None, the conversation's gold triples."""
    sessions = None if session is None else [s.index for s in conv.sessions if s.index < session]
    return build_memory(conv, triples, encoder=encoder, sessions=sessions)


def primed_encoder(encoder, questions: Sequence[QA], conversations: Sequence[Conversation],
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
                    methods: Sequence[str] = DEFAULT_METHODS, ks: Sequence[int] = (1, 3, 5, 10), scorer=None,
                    settings: Optional[RetrievalSettings] = None, progress: bool = True,
                    checkpoint: Optional[Checkpoint] = None,
                    variants: Optional[dict[str, tuple[str, RetrievalSettings]]] = None) -> EvidenceEvaluation:
    """Evidence retrieval on the samples' probes: memory from the gold triples of the sessions
    before the probe's session, weighed by Eq. 3 when a salience ``scorer`` is given
    (``salience.load_scorer()``; its readings are cached on disk, ``salience.cache``), with uniform
    weights without one (the "no importance" ablation); ``settings`` (default the paper's) for the
    graph methods, or ``variants`` ``{name: (method, settings)}`` in place of ``methods``."""

    asked = {q.conversation for q in probes}
    conversations = [c for c in conversations if c.id in asked]  # encode only what is asked about
    retrievers = probe_retrievers(probes, conversations, encoder, methods, max(ks), scorer, settings, variants)
    return evaluate_evidence(retrievers, probes, conversations, ks, progress, checkpoint)


def probe_retrievers(probes: Sequence[QA], conversations: Sequence[Conversation], encoder,
                     methods: Sequence[str] = DEFAULT_METHODS, k: int = 10, scorer=None,
                     settings: Optional[RetrievalSettings] = None,
                     variants: Optional[dict[str, tuple[str, RetrievalSettings]]] = None) -> dict:
    """The retrievers :func:`evaluate_probes` asks: per (conversation, session) a memory of the gold
    triples of the sessions before, weighed by Eq. 3 with a ``scorer``."""
    scorer = None if scorer is None else cached_scorer(scorer)  # each session read once, here and in re-runs
    encoder = primed_encoder(encoder, probes, conversations, [t for c in conversations for t in gold_triples(c)])

    def memory_for(conv, session):
        triples = weighted_triples(conv, scorer=scorer, cache=True, triples=gold_triples(conv, session))
        return memory_before(conv, session, encoder, triples)

    if variants is None:
        return make_retrievers(methods, memory_for, encoder, k, settings)
    return make_variant_retrievers(variants, memory_for, encoder, k)
