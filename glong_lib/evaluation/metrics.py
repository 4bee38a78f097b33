"""Metrics in one place: BLEU and ROUGE-L of replies, Recall@k and MRR of evidence, P/R/F1, AUC, and how
sure a difference between two systems is. The paper's reply scale lives in ``nlgeval`` (re-exported here).
"""

from __future__ import annotations

import math
import re
from typing import Optional, Sequence, Union

import numpy as np

from ..errors import DataError
from .nlgeval import (  # noqa: F401  (the paper's scale, re-exported)
    corpus_bleu_nlgeval,
    ldagent_preprocess,
    rouge_l_nlgeval,
    score_reply_nlgeval,
    score_reply_whitespace,
    word_tokenize,
)

_TOKEN = re.compile(r"\w+|[^\w\s]")
BLEU_KEYS = ("b1", "b2", "b3", "b4")
METRIC_KEYS = BLEU_KEYS + ("rougeL",)

# --------------------------------------------------------------------------- metrics

def tokenize(text: str, lowercase: bool = True) -> list[str]:
    """Words and punctuation marks, lower-cased: the tokens BLEU counts.

    >>> tokenize("Hi Leo, I'm back!")
    ['hi', 'leo', ',', 'i', "'", 'm', 'back', '!']
    """
    return _TOKEN.findall(text.lower() if lowercase else text)


def bleu_scores(hyp: str, ref: Union[str, Sequence[str]], lowercase: bool = True) -> dict[str, float]:
    """Cumulative sentence BLEU-1..4 of ``hyp`` against one reference (or several), in [0, 1].

    An empty hypothesis or reference scores 0 (NLTK would warn and return 0 as well).
    """
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    refs = [ref] if isinstance(ref, str) else list(ref)
    hyp_tokens = tokenize(hyp, lowercase)
    ref_tokens = [tokenize(r, lowercase) for r in refs]
    if not hyp_tokens or not any(ref_tokens):
        return {k: 0.0 for k in BLEU_KEYS}
    smooth = SmoothingFunction().method1
    out = {}
    for n in range(1, 5):
        weights = tuple([1.0 / n] * n)
        out[f"b{n}"] = float(sentence_bleu(ref_tokens, hyp_tokens, weights=weights, smoothing_function=smooth))
    return out


_ROUGE = None


def rouge_l(hyp: str, ref: str) -> float:
    """ROUGE-L F1 (``rouge_score``; longest common subsequence of tokens), in [0, 1]."""
    global _ROUGE
    if _ROUGE is None:
        from rouge_score import rouge_scorer

        _ROUGE = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    return float(_ROUGE.score(ref, hyp)["rougeL"].fmeasure)


def score_reply(hyp: str, ref: str) -> dict[str, float]:
    """BLEU-1..4 and ROUGE-L of one reply against its gold reference on three scales: the smoothed
    sentence-level variants (``b1`` .. ``rougeL``), the paper's (``nlg_b1`` .. ``nlg_rougeL``: LD-Agent's
    lower-casing and NLTK tokenisation, then nlg-eval) and nlg-eval on the raw whitespace-split text
    (``ws_b1`` .. ``ws_rougeL``, the suite's earlier "paper scale")."""
    return {**bleu_scores(hyp, ref), "rougeL": rouge_l(hyp, ref), **score_reply_nlgeval(hyp, ref),
            **score_reply_whitespace(hyp, ref)}


# --------------------------------------------------------------------------- ranking, detection, AUC

def unique_turns(turn_ids: Sequence[Optional[str]]) -> list[Optional[str]]:
    """Collapse repeated source turns to their first rank (an item with no turn keeps its rank).

    >>> unique_turns(["S1:2", "S1:2", None, "S2:1", "S1:2"])
    ['S1:2', None, 'S2:1']
    """
    seen, out = set(), []
    for t in turn_ids:
        if t is None:
            out.append(None)
        elif t not in seen:
            seen.add(t)
            out.append(t)
    return out


def turns_in_top(items: Sequence[Sequence[str]], k: int) -> set[str]:
    """The source turns of the first ``k`` retrieved items (an item may stand for several turns,
    e.g. a fact sentence written from two; a triple stands for the one turn it came from).

    >>> sorted(turns_in_top([["D1:3"], ["D2:1", "D2:4"], ["D1:3"]], 2))
    ['D1:3', 'D2:1', 'D2:4']
    """
    return {t for item in items[:k] for t in item}


def hit_at_k(items: Sequence[Sequence[str]], evidence: Sequence[str], k: int) -> float:
    """1.0 when any evidence turn is among the source turns of the first ``k`` items (the paper's
    "evidence within the top k"), else 0.0.

    >>> hit_at_k([["S1:1"], ["S2:4"]], ["S2:4", "S3:1"], 2), hit_at_k([["S1:1"], ["S2:4"]], ["S2:4"], 1)
    (1.0, 0.0)
    """
    return float(bool(set(evidence) & turns_in_top(items, k)))


def recall_at_k(items: Sequence[Sequence[str]], evidence: Sequence[str], k: int) -> float:
    """Share of the evidence turns among the source turns of the first ``k`` items. Ranks are
    items, not distinct turns: a retriever whose top k repeats one turn shows fewer turns (the
    pool is exactly k; a disadvantage it carries, not hides).

    >>> recall_at_k([["S1:1"], ["S1:3"], ["S2:4"]], ["S2:4", "S3:1"], 3)
    0.5
    >>> recall_at_k([["S1:1"], ["S1:1"], ["S2:4"]], ["S2:4"], 2)
    0.0
    """
    gold = set(evidence)
    if not gold:
        raise DataError("a question with no evidence turns cannot be scored")
    return len(gold & turns_in_top(items, k)) / len(gold)


def reciprocal_rank(items: Sequence[Sequence[str]], evidence: Sequence[str]) -> float:
    """1 / rank of the first item that stands for an evidence turn (0 when none does).

    >>> reciprocal_rank([["S1:1"], ["S1:3"], ["S2:4"]], ["S2:4", "S1:3"])
    0.5
    """
    gold = set(evidence)
    for rank, item in enumerate(items, start=1):
        if gold & set(item):
            return 1.0 / rank
    return 0.0


def prf(tp: int, n_pred: int, n_gold: int) -> dict[str, float]:
    """Precision, recall and F1 from counts (0 where undefined).

    >>> prf(2, 4, 3)
    {'precision': 0.5, 'recall': 0.6667, 'f1': 0.5714}
    """
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)}


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Area under the ROC curve: the chance a positive outranks a negative (ties count half).

    >>> auc([0.9, 0.8, 0.3, 0.1], [1, 0, 1, 0])
    0.75
    >>> auc([0.5, 0.5], [1, 0])
    0.5
    """
    from sklearn.metrics import roc_auc_score  # the maintained implementation (rank-based, ties half)

    y = np.asarray(labels, dtype=bool)
    if y.all() or not y.any():
        raise DataError("AUC needs at least one positive and one negative label")
    return float(roc_auc_score(y, np.asarray(scores, dtype=float)))


def bootstrap_auc(scores: Sequence[float], labels: Sequence[bool], n: int = 500, seed: int = 42) -> tuple[float, float]:
    """95% interval of the AUC over ``n`` seeded resamples of the triples (how noisy the number is)."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n):
        idx = rng.integers(0, len(s), len(s))
        if y[idx].all() or not y[idx].any():
            continue
        values.append(auc(s[idx], y[idx]))
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


# --------------------------------------------------------------------------- how sure a difference is

def paired_bootstrap(a: Sequence[float], b: Sequence[float], n: int = 1000, seed: int = 42,
                     groups: Sequence | None = None) -> dict:
    """Paired bootstrap of the mean difference ``a - b`` of two systems scored on the same items.

    Each of ``n`` resamples draws the items with replacement (the same draw for both systems, which is
    what "paired" means) and takes the mean difference. With ``groups`` (one label per item, e.g. the
    conversation id), whole groups are drawn instead and the resample's mean is over all their items:
    replies of one conversation are not independent, and the interval widens to say so.

    Returns ``mean_diff`` (on all items), ``ci_low``/``ci_high`` (2.5th and 97.5th percentiles of the
    resampled means), ``share_a_better`` (the share of resamples whose mean difference is > 0),
    ``n_items``, ``n_groups`` (None without groups) and ``n_resamples``.

    A constant lead of 1 point is a lead of 1 in every resample:

    >>> r = paired_bootstrap([3, 4, 5], [2, 3, 4], n=200)
    >>> r["mean_diff"], r["ci_low"], r["ci_high"], r["share_a_better"]
    (1.0, 1.0, 1.0, 1.0)

    Differences 0, 0, 1, 1 (mean 0.5): a resample is 4 draws of 0 or 1, its mean is 0, 1/4, ... 1;
    a resample of four 0s (chance 1/16) does not favour ``a``, so about 15/16 = 0.94 of them do.

    >>> r = paired_bootstrap([1, 1, 2, 2], [1, 1, 1, 1])
    >>> r["mean_diff"], r["ci_low"], r["ci_high"], 0.9 < r["share_a_better"] < 0.97
    (0.5, 0.0, 1.0, True)
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.ndim != 1 or y.ndim != 1 or len(x) != len(y):
        raise DataError(f"paired bootstrap needs two flat lists of equal length, got shapes {x.shape} and {y.shape}")
    if len(x) == 0:
        raise DataError("paired bootstrap needs at least one scored item")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise DataError("paired bootstrap got a score that is NaN or infinite")
    if n < 1:
        raise DataError(f"paired bootstrap needs at least one resample, got n={n}")
    diff = x - y
    if groups is None:
        codes = np.arange(len(diff))  # every item is its own group
    else:
        if isinstance(groups, str) or len(groups) != len(diff):
            raise DataError(f"paired bootstrap got {len(groups)} group labels for {len(diff)} items")
        first_seen: dict = {}
        codes = np.array([first_seen.setdefault(g, len(first_seen)) for g in groups])
    group_sum = np.bincount(codes, weights=diff)  # the sum of the differences in each group
    group_size = np.bincount(codes)
    k = len(group_size)
    rng = np.random.default_rng(seed)
    means = np.empty(n)
    for i in range(n):
        pick = rng.integers(0, k, size=k)  # k groups (items) drawn with replacement
        means[i] = group_sum[pick].sum() / group_size[pick].sum()
    low, high = np.percentile(means, [2.5, 97.5])
    return {"mean_diff": float(diff.mean()), "ci_low": float(low), "ci_high": float(high),
            "share_a_better": float((means > 0).mean()), "n_items": len(diff),
            "n_groups": None if groups is None else k, "n_resamples": n}


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion ``successes / n`` (``z`` = 1.96).

    Unlike the textbook p ± z·sqrt(p(1-p)/n) it stays inside [0, 1] and keeps close to its coverage
    when p is near 0 or 1 and n is small. 49 hits in 57 probes:

    >>> low, high = wilson_interval(49, 57)
    >>> round(low, 3), round(high, 3)
    (0.747, 0.927)
    >>> wilson_interval(5, 5)[1]
    1.0
    """
    if n < 1:
        raise DataError(f"a Wilson interval needs at least one item, got n={n}")
    if not 0 <= successes <= n:
        raise DataError(f"a Wilson interval needs 0 <= successes <= n, got {successes} of {n}")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def replies_needed(sd_of_difference: float, effect: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """How many paired replies detect a mean difference ``effect`` (normal approximation, two-sided).

    n = ((z_{1-alpha/2} + z_{power}) * sd / effect) ** 2, rounded up, where ``sd`` is the standard
    deviation of the per-reply differences (e.g. of ``a - b`` in :func:`paired_bootstrap`). For a
    corpus-level score such as :func:`corpus_bleu_nlgeval`, which is not a mean over replies, it is a
    rough guide only.

    With sd 2.61 and an effect of 1 point: z = 1.959964 + 0.841621 = 2.801585;
    (2.801585 * 2.61 / 1.0) ** 2 = 7.312137 ** 2 = 53.47, so 54 replies.

    >>> replies_needed(2.61, 1.0)
    54
    """
    import math

    from scipy.stats import norm

    if not (math.isfinite(sd_of_difference) and sd_of_difference > 0):
        raise DataError(f"the standard deviation of the differences must be positive, got {sd_of_difference}")
    if not (math.isfinite(effect) and effect != 0):
        raise DataError(f"the effect to detect must be a non-zero number, got {effect}")
    if not (0 < alpha < 1 and 0 < power < 1):
        raise DataError(f"alpha and power must lie strictly between 0 and 1, got {alpha} and {power}")
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    n = (z * sd_of_difference / abs(effect)) ** 2
    return max(1, math.ceil(n - 1e-9))  # the 1e-9: an exact 54 computed as 54.0000000001 is still 54
