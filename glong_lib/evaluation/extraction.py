"""Scores of an extractor: P/R/F1 (exact, normalised, partial), fact detection, relation accuracy."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Optional, Sequence

from ..errors import DataError
from ..extraction.inference import Extraction, TripleExtractor
from ..schema import Conversation, Triple, TriplePair, Turn
from ..text import normalise_relation, normalise_text
from .metrics import prf  # noqa: F401  (re-exported)


def triple_key(t: Triple, normalised: bool = False) -> tuple[str, str, str]:
    """The (subject, relation, object) used for matching; normalised or exact (case kept)."""
    if normalised:
        return (normalise_text(t.subject), normalise_relation(t.relation), normalise_text(t.object))
    return (t.subject.strip(), t.relation.strip(), t.object.strip())


def partial_match(pred: Triple, gold: Triple) -> bool:
    """Lenient match: same normalised subject and relation, and the objects share a word.

    Exact matching is harsh on abstractive gold ("making pasta" vs "fresh pasta"); this is the
    token-overlap kind of match used by open information extraction benchmarks.

    >>> partial_match(Triple("Leo", "like_activity", "fresh pasta"), Triple("Leo", "like_activity", "making pasta"))
    True
    >>> partial_match(Triple("Leo", "like_food", "pasta"), Triple("Leo", "like_activity", "making pasta"))
    False
    """
    return _keys_overlap(triple_key(pred, True), triple_key(gold, True))


def _keys_overlap(p: tuple[str, str, str], g: tuple[str, str, str]) -> bool:
    """``partial_match`` on normalised keys (computed once per triple by ``score_partial``)."""
    return p[:2] == g[:2] and bool(set(p[2].split()) & set(g[2].split()))


def score_partial(pred: Sequence[Sequence[Triple]], gold: Sequence[Sequence[Triple]]) -> dict[str, float]:
    """P/R/F1 under ``partial_match``: precision counts predictions matching some gold triple of
    their utterance, recall counts gold triples matched by some prediction.

    >>> g = [[Triple("Leo", "like_food", "italian food"), Triple("Leo", "like_activity", "making pasta")]]
    >>> p = [[Triple("Leo", "like_activity", "fresh pasta"), Triple("Leo", "own", "pasta")]]
    >>> score_partial(p, g)
    {'precision': 0.5, 'recall': 0.5, 'f1': 0.5}
    """
    hit_pred = hit_gold = n_pred = n_gold = 0
    for p_list, g_list in zip(pred, gold):
        p_keys = [triple_key(t, True) for t in p_list]
        g_keys = [triple_key(t, True) for t in g_list]
        n_pred += len(p_keys)
        n_gold += len(g_keys)
        hit_pred += sum(any(_keys_overlap(p, g) for g in g_keys) for p in p_keys)
        hit_gold += sum(any(_keys_overlap(p, g) for p in p_keys) for g in g_keys)
    precision = hit_pred / n_pred if n_pred else 0.0
    recall = hit_gold / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def fact_detection(pred: Sequence[Sequence[Triple]], gold: Sequence[Sequence[Triple]]) -> dict[str, float]:
    """P/R/F1 of the yes/no question "does this utterance carry a fact?" (non-empty answer).

    >>> fact_detection([[Triple("a", "b", "c")], [Triple("a", "b", "c")], []], [[Triple("a", "b", "c")], [], []])
    {'precision': 0.5, 'recall': 1.0, 'f1': 0.6667}
    """
    said = [bool(p) for p in pred]
    true = [bool(g) for g in gold]
    return prf(sum(s and t for s, t in zip(said, true)), sum(said), sum(true))


def score_triples(pred: Sequence[Sequence[Triple]], gold: Sequence[Sequence[Triple]],
                  normalised: bool = False) -> dict[str, float]:
    """Micro P/R/F1 over utterances: a predicted triple is right when the same utterance has a
    gold triple with the same key (duplicates count once).

    >>> g = [[Triple("Maya", "have_pet", "cat")], []]
    >>> p = [[Triple("Maya", "have_pet", "a cat"), Triple("Maya", "like", "tea")], []]
    >>> score_triples(p, g)["f1"], score_triples(p, g, normalised=True)["f1"]
    (0.0, 0.6667)
    """
    if len(pred) != len(gold):
        raise DataError(f"{len(pred)} predictions for {len(gold)} gold utterances")
    tp = n_pred = n_gold = 0
    for p_list, g_list in zip(pred, gold):
        p_keys = {triple_key(t, normalised) for t in p_list}
        g_keys = {triple_key(t, normalised) for t in g_list}
        tp += len(p_keys & g_keys)
        n_pred += len(p_keys)
        n_gold += len(g_keys)
    return {**prf(tp, n_pred, n_gold), "tp": tp, "predicted": n_pred, "gold": n_gold}


def align_relations(pred: Sequence[Sequence[Triple]], gold: Sequence[Sequence[Triple]]) -> list[tuple[str, str]]:
    """(gold relation, predicted relation) for each gold triple that a prediction of the same
    utterance talks about: their normalised objects share a word (the best overlap wins).

    >>> align_relations([[Triple("i", "own", "a cat")]], [[Triple("Maya", "have_pet", "cat")]])
    [('have_pet', 'own')]
    """
    pairs = []
    for p_list, g_list in zip(pred, gold):
        for g in g_list:
            g_words = set(normalise_text(g.object).split())
            best, best_overlap = None, 0.0
            for p in p_list:
                p_words = set(normalise_text(p.object).split())
                overlap = len(g_words & p_words) / max(1, len(g_words | p_words))
                if overlap > best_overlap:
                    best, best_overlap = p, overlap
            if best is not None:
                pairs.append((g.relation, best.relation))
    return pairs


def relation_confusions(pairs: Sequence[tuple[str, str]], top: int = 10) -> list[tuple[str, str, int]]:
    """The most frequent (gold, predicted, count) relation mistakes among aligned pairs.

    >>> relation_confusions([("a", "b"), ("a", "b"), ("a", "a"), ("c", "d")])
    [('a', 'b', 2), ('c', 'd', 1)]
    """
    counts = Counter((g, p) for g, p in pairs if g != p)
    return [(g, p, n) for (g, p), n in counts.most_common(top)]


def evaluate_extraction(pred: Sequence[Sequence[Triple]], gold: Sequence[Sequence[Triple]],
                        parsed_ok: Optional[Sequence[bool]] = None, top_confusions: int = 10) -> dict[str, Any]:
    """Every extraction measure in one flat dict (plus ``confusions``, a list).

    >>> r = evaluate_extraction([[Triple("Maya", "own", "cat")]], [[Triple("Maya", "have_pet", "cat")]], [True])
    >>> r["f1 exact"], r["relation accuracy"], r["unparseable rate"], r["confusions"]
    (0.0, 0.0, 0.0, [('have_pet', 'own', 1)])
    """
    exact = score_triples(pred, gold)
    norm = score_triples(pred, gold, normalised=True)
    partial = score_partial(pred, gold)
    detect = fact_detection(pred, gold)
    pairs = align_relations(pred, gold)
    ok = list(parsed_ok) if parsed_ok is not None else [True] * len(pred)
    return {
        "utterances": len(gold), "gold triples": exact["gold"], "predicted triples": exact["predicted"],
        "precision exact": exact["precision"], "recall exact": exact["recall"], "f1 exact": exact["f1"],
        "precision norm": norm["precision"], "recall norm": norm["recall"], "f1 norm": norm["f1"],
        "f1 partial": partial["f1"], "fact detection f1": detect["f1"], "aligned": len(pairs),
        "relation accuracy": round(sum(g == p for g, p in pairs) / len(pairs), 4) if pairs else 0.0,
        "unparseable rate": round(1 - sum(ok) / len(ok), 4) if ok else 0.0,
        "confusions": relation_confusions(pairs, top_confusions),
    }



# --------------------------------------------------------------------------- evaluation helpers

def gold_turns(conversations: Sequence[Conversation], n: Optional[int] = None, seed: int = 42) -> list[Turn]:
    """Turns of the gold conversations for evaluation: all of them, or a seeded sample of ``n``
    that keeps the share of turns with and without facts."""
    import random

    turns = [t for c in conversations for t in c.turns()]
    if n is None or n >= len(turns):
        return turns
    rng = random.Random(seed)
    with_facts = [t for t in turns if t.triples]
    without = [t for t in turns if not t.triples]
    k = round(n * len(with_facts) / len(turns))
    return rng.sample(with_facts, k) + rng.sample(without, n - k)


def evaluate_extractor(extractor: TripleExtractor, turns: Sequence[Turn], batch_size: int = 8,
                       progress: bool = True) -> tuple[dict[str, Any], list[Extraction]]:
    """Run the extractor on gold turns and score it (first person resolved to the speaker).
    Returns the measures (``evaluate_extraction``) plus ``seconds`` and ``utterances/s``."""
    start = time.perf_counter()
    results = extractor.extract_detailed([t.text for t in turns], [t.speaker for t in turns], batch_size, progress)
    seconds = time.perf_counter() - start
    report = evaluate_extraction([r.triples for r in results], [t.triples for t in turns], [r.ok for r in results])
    report["seconds"] = round(seconds, 1)
    report["utterances/s"] = round(len(turns) / seconds, 2) if seconds else 0.0
    return report, results


def evaluate_on_pairs(extractor: TripleExtractor, pairs: Sequence[TriplePair], batch_size: int = 8,
                      progress: bool = True) -> tuple[dict[str, Any], list[Extraction]]:
    """Score on held-out pairs (subjects stay as written, e.g. "i", as in the pairs)."""
    turns = [Turn(p.id or str(i), "", p.utterance, p.triples) for i, p in enumerate(pairs)]
    return evaluate_extractor(extractor, turns, batch_size, progress)


