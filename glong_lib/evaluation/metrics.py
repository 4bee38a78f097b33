"""Metrics in one place: BLEU and ROUGE-L of replies, Recall@k and MRR of evidence, P/R/F1, AUC.
"""

from __future__ import annotations

import re
from typing import Sequence, Union

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
    """BLEU-1..4 and ROUGE-L of one reply against its gold reference."""
    return {**bleu_scores(hyp, ref), "rougeL": rouge_l(hyp, ref)}



