"""Reply metrics on the paper's scale: corpus BLEU as nlg-eval computes it (hand-computed cases and
agreement with pycocoevalcap, the code nlg-eval runs), the paired bootstrap and the sample-size rule."""

from __future__ import annotations

import contextlib
import io
import math
import random

import pytest

from glong_lib.errors import DataError
from glong_lib.evaluation.metrics import corpus_bleu_nlgeval, paired_bootstrap, replies_needed, wilson_interval

# --------------------------------------------------------------------------- corpus BLEU by hand


def test_corpus_bleu_two_replies_by_hand():
    hyps = ["the cat the cat", "a dog barks at night"]
    refs = [["the cat sat", "the the cat sat down"], "the dog barks at night"]
    # Reply 1, hypothesis "the cat the cat" (4 words); references of 3 and 5 words.
    #   unigrams: the x2, cat x2; most in one reference: the 2 (ref 2), cat 1 -> clipped 2 + 1 = 3 of 4
    #   bigrams: "the cat" x2, "cat the" x1; "the cat" at most once in a reference -> 1 of 3
    #   trigrams: "the cat the", "cat the cat" -> 0 of 2;   4-grams: "the cat the cat" -> 0 of 1
    #   closest reference length: |3-4| = |5-4| = 1, a tie, the shorter wins -> 3
    # Reply 2, hypothesis "a dog barks at night" (5 words); one reference of 5 words.
    #   unigrams: dog, barks, at, night ("a" is not) -> 4 of 5
    #   bigrams: "dog barks", "barks at", "at night" ("a dog" is not) -> 3 of 4
    #   trigrams: "dog barks at", "barks at night" -> 2 of 3;   4-grams: "dog barks at night" -> 1 of 2
    #   reference length 5
    # Corpus: matches 3+4=7, 1+3=4, 0+2=2, 0+1=1; n-grams 4+5=9, 3+4=7, 2+3=5, 1+2=3
    #   lengths: hypotheses 4+5 = 9, references 3+5 = 8 -> 9 >= 8, no brevity penalty
    #   (had the tie gone to the longer reference, 5+5 = 10 > 9 and a penalty exp(1 - 10/9) would apply)
    # BLEU-1 = 7/9
    # BLEU-2 = (7/9 * 4/7) ** (1/2) = (4/9) ** (1/2) = 2/3
    # BLEU-3 = (4/9 * 2/5) ** (1/3) = (8/45) ** (1/3)
    # BLEU-4 = (8/45 * 1/3) ** (1/4) = (8/135) ** (1/4)
    s = corpus_bleu_nlgeval(hyps, refs)
    assert set(s) == {"b1", "b2", "b3", "b4"}
    assert s["b1"] == pytest.approx(7 / 9, abs=1e-9)
    assert s["b2"] == pytest.approx(2 / 3, abs=1e-9)
    assert s["b3"] == pytest.approx((8 / 45) ** (1 / 3), abs=1e-9)
    assert s["b4"] == pytest.approx((8 / 135) ** (1 / 4), abs=1e-9)


def test_corpus_bleu_is_not_the_mean_of_sentence_scores():
    # Pooling the counts: reply 1 alone has BLEU-2 = (3/4 * 1/3) ** (1/2) = 0.5 and brevity penalty 1,
    # reply 2 alone (4/5 * 3/4) ** (1/2) = 0.7746; their mean 0.6373 is not the corpus' 2/3 above.
    one = corpus_bleu_nlgeval(["the cat the cat"], [["the cat sat", "the the cat sat down"]])
    two = corpus_bleu_nlgeval(["a dog barks at night"], ["the dog barks at night"])
    assert one["b2"] == pytest.approx(0.5, abs=1e-9)
    assert two["b2"] == pytest.approx((3 / 5) ** 0.5, abs=1e-9)
    assert (one["b2"] + two["b2"]) / 2 != pytest.approx(2 / 3, abs=1e-3)


def test_corpus_bleu_brevity_penalty_by_hand():
    # "dog barks at night" (4 words) against "the dog barks at night" (5 words):
    # every n-gram matches (4/4, 3/3, 2/2, 1/1), so each BLEU-n is the penalty exp(1 - 5/4) = exp(-0.25)
    s = corpus_bleu_nlgeval(["dog barks at night"], [["the dog barks at night"]])
    for key in ("b1", "b2", "b3", "b4"):
        assert s[key] == pytest.approx(math.exp(-0.25), abs=1e-9)


def test_corpus_bleu_no_match_at_an_order_is_tiny_not_zero():
    # "the cat sat on the mat" vs "the cat is on the mat": 5/6, 3/5, 1/4, 0/3 (the docstring's case).
    # No smoothing, but pycocoevalcap's constants turn 0/3 into 1e-15/3:
    # BLEU-4 = (5/6 * 3/5 * 1/4 * 1e-15/3) ** (1/4) = (1e-15/24) ** (1/4) = 8.03e-05
    s = corpus_bleu_nlgeval(["the cat sat on the mat"], ["the cat is on the mat"])
    assert s["b3"] == pytest.approx(0.5, abs=1e-9)
    assert s["b4"] == pytest.approx((1e-15 / 24) ** 0.25, rel=1e-6)
    assert 0 < s["b4"] < 1e-4


def test_corpus_bleu_splits_on_whitespace_only():
    # Case and punctuation are not normalised: "Hello" != "hello", "mat." != "mat".
    # "Hello world" vs "hello world": unigrams 1 of 2 -> BLEU-1 = 1/2
    assert corpus_bleu_nlgeval(["Hello world"], ["hello world"])["b1"] == pytest.approx(0.5, abs=1e-9)
    # "on the mat." vs "on the mat": 2 of 3 unigrams, same lengths -> BLEU-1 = 2/3
    assert corpus_bleu_nlgeval(["on the mat."], ["on the mat"])["b1"] == pytest.approx(2 / 3, abs=1e-9)
    # extra spaces, tabs and newlines around and between words change nothing
    assert corpus_bleu_nlgeval(["  on\tthe  mat \n"], [" on the mat"]) == corpus_bleu_nlgeval(["on the mat"],
                                                                                              ["on the mat"])


def test_corpus_bleu_one_string_is_one_reference():
    assert corpus_bleu_nlgeval(["a b c d"], ["a b c e"]) == corpus_bleu_nlgeval(["a b c d"], [["a b c e"]])


def test_corpus_bleu_empty_hypotheses_do_not_crash():
    # all hypotheses empty: length 0 against references of 3 -> brevity penalty exp(1 - 3/1e-15) = 0
    assert corpus_bleu_nlgeval([""], ["on the mat"]) == {"b1": 0.0, "b2": 0.0, "b3": 0.0, "b4": 0.0}
    # one empty hypothesis among others only adds its reference length (3 + 3 = 6 vs 3 words)
    s = corpus_bleu_nlgeval(["", "on the mat"], ["a b c", "on the mat"])
    assert s["b1"] == pytest.approx(math.exp(1 - 6 / 3), abs=1e-9)


@pytest.mark.parametrize("hyps, refs", [
    (["a b"], ["a b", "c d"]),  # unequal lengths
    ([], []),  # no pair
    ("a b", "a b"),  # a string, not a list of replies
    (["a b"], [[]]),  # a reply with no reference
    ([None], ["a b"]),  # not a string
    (["a b"], [["a b", 3]]),
])
def test_corpus_bleu_bad_input(hyps, refs):
    with pytest.raises(DataError) as info:
        corpus_bleu_nlgeval(hyps, refs)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- agreement with pycocoevalcap


def _coco_bleu(hyps, refs):
    """The maintained implementation, fed as nlg-eval feeds it: gts {i: [refs]}, res {i: [hyp]}, stripped."""
    bleu = pytest.importorskip("pycocoevalcap.bleu.bleu")
    gts = {i: [r.strip() for r in ([ref] if isinstance(ref, str) else ref)] for i, ref in enumerate(refs)}
    res = {i: [h.strip()] for i, h in enumerate(hyps)}
    with contextlib.redirect_stdout(io.StringIO()):  # pycocoevalcap 1.2 prints its counts (verbose=1)
        score, _ = bleu.Bleu(4).compute_score(gts, res)
    return score


def _random_sentence(rng: random.Random, lo: int, hi: int) -> str:
    # a small vocabulary with repeats, so that 3- and 4-gram matches and clipping happen
    words = ["the", "cat", "a", "dog", "sat", "on", "mat", "The", "mat.", "is"]
    sep = rng.choice([" ", " ", " ", "  ", "\t"])
    text = sep.join(rng.choice(words[:rng.randint(3, len(words))]) for _ in range(rng.randint(lo, hi)))
    return rng.choice(["", " ", "\n"]) + text + rng.choice(["", " ", "\n"])


def _random_corpus(rng: random.Random, size: int):
    hyps, refs = [], []
    for _ in range(size):
        hyp = _random_sentence(rng, 0, 9)
        if rng.random() < 0.3:  # a hypothesis close to a reference: high-order matches
            base = _random_sentence(rng, 1, 10)
            ref_set = [base] + [_random_sentence(rng, 0, 10) for _ in range(rng.randint(0, 2))]
            words = base.split()
            hyp = " ".join(words[:rng.randint(0, len(words))] + _random_sentence(rng, 0, 3).split())
        else:
            ref_set = [_random_sentence(rng, 1, 10) for _ in range(rng.randint(1, 3))]
        refs.append(ref_set[0] if len(ref_set) == 1 and rng.random() < 0.5 else ref_set)
        hyps.append(hyp)
    return hyps, refs


@pytest.mark.parametrize("seed", range(20))
def test_corpus_bleu_equals_pycocoevalcap_on_random_corpora(seed):
    pytest.importorskip("pycocoevalcap.bleu.bleu")
    rng = random.Random(seed)
    hyps, refs = _random_corpus(rng, rng.randint(1, 30))  # 20 corpora, about 300 pairs in all
    ours = corpus_bleu_nlgeval(hyps, refs)
    coco = _coco_bleu(hyps, refs)
    for n in range(1, 5):
        assert ours[f"b{n}"] == pytest.approx(coco[n - 1], abs=1e-9, rel=0)


def test_corpus_bleu_equals_pycocoevalcap_on_one_larger_corpus():
    pytest.importorskip("pycocoevalcap.bleu.bleu")
    hyps, refs = _random_corpus(random.Random(2024), 400)
    ours = corpus_bleu_nlgeval(hyps, refs)
    coco = _coco_bleu(hyps, refs)
    assert [ours[f"b{n}"] for n in range(1, 5)] == pytest.approx(coco, abs=1e-9, rel=0)
    assert ours["b4"] > 0.01  # the corpus does exercise 4-gram matches


def test_corpus_bleu_equals_pycocoevalcap_on_the_hand_cases():
    pytest.importorskip("pycocoevalcap.bleu.bleu")
    cases = [
        (["the cat the cat", "a dog barks at night"], [["the cat sat", "the the cat sat down"],
                                                        ["the dog barks at night"]]),
        (["dog barks at night"], [["the dog barks at night"]]),
        (["the cat sat on the mat"], [["the cat is on the mat"]]),
        ([""], [["on the mat"]]),
        (["", "on the mat"], [["a b c"], ["on the mat"]]),
    ]
    for hyps, refs in cases:
        ours = corpus_bleu_nlgeval(hyps, refs)
        assert [ours[f"b{n}"] for n in range(1, 5)] == pytest.approx(_coco_bleu(hyps, refs), abs=1e-9, rel=0)


# --------------------------------------------------------------------------- paired bootstrap


def test_bootstrap_identical_systems():
    r = paired_bootstrap([0.2, 0.5, 0.9, 0.1], [0.2, 0.5, 0.9, 0.1])
    assert r["mean_diff"] == 0.0
    assert (r["ci_low"], r["ci_high"]) == (0.0, 0.0)
    assert r["share_a_better"] == 0.0  # a tie is not "a better"
    assert r["n_items"] == 4 and r["n_groups"] is None and r["n_resamples"] == 1000


def test_bootstrap_constant_shift():
    b = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]
    r = paired_bootstrap([x + 1 for x in b], b)
    assert r["mean_diff"] == 1.0
    assert (r["ci_low"], r["ci_high"]) == (1.0, 1.0)
    assert r["share_a_better"] == 1.0


def test_bootstrap_is_deterministic_under_the_seed():
    a = [0.31, 0.52, 0.13, 0.94, 0.45, 0.26, 0.77, 0.08]
    b = [0.30, 0.40, 0.20, 0.90, 0.50, 0.10, 0.70, 0.20]
    assert paired_bootstrap(a, b, n=300, seed=7) == paired_bootstrap(a, b, n=300, seed=7)
    assert paired_bootstrap(a, b, n=300, seed=7) != paired_bootstrap(a, b, n=300, seed=8)
    groups = ["c1", "c1", "c2", "c2", "c3", "c3", "c4", "c4"]
    assert paired_bootstrap(a, b, seed=3, groups=groups) == paired_bootstrap(a, b, seed=3, groups=groups)


def test_bootstrap_groups_are_resampled_whole():
    # Two conversations of 3 replies: every reply of c1 differs by 0, every reply of c2 by 1.
    # Drawing 2 whole conversations gives only c1c1 (mean 0), c1c2 (0.5) or c2c2 (1), chances 1/4, 1/2, 1/4:
    # the 2.5th and 97.5th percentiles are then 0 and 1, and about 3/4 of the resamples favour a.
    # Drawing 6 single replies instead gives k/6 with k ~ Binomial(6, 1/2): the interval is narrower
    # (P(k = 0) = P(k = 6) = 1/64 < 2.5%) and about 63/64 of the resamples favour a.
    a = [0, 0, 0, 1, 1, 1]
    b = [0, 0, 0, 0, 0, 0]
    groups = ["c1", "c1", "c1", "c2", "c2", "c2"]
    whole = paired_bootstrap(a, b, groups=groups)
    items = paired_bootstrap(a, b)
    assert whole["mean_diff"] == items["mean_diff"] == 0.5
    assert (whole["ci_low"], whole["ci_high"]) == (0.0, 1.0)
    assert whole["share_a_better"] == pytest.approx(0.75, abs=0.05)
    assert whole["n_groups"] == 2 and whole["n_items"] == 6
    assert 0.0 < items["ci_low"] and items["ci_high"] < 1.0
    assert items["share_a_better"] == pytest.approx(63 / 64, abs=0.02)


def test_bootstrap_groups_use_the_mean_over_items_of_the_drawn_groups():
    # Group g1 has one reply with difference 4, g2 three replies with difference 0 (item mean 1.0).
    # Resamples: g1g1 -> 8/2 = 4, g1g2 -> 4/4 = 1, g2g2 -> 0/6 = 0 (means over replies, not over groups).
    r = paired_bootstrap([4, 0, 0, 0], [0, 0, 0, 0], groups=["g1", "g2", "g2", "g2"], n=2000)
    assert r["mean_diff"] == 1.0
    assert (r["ci_low"], r["ci_high"]) == (0.0, 4.0)


@pytest.mark.parametrize("a, b, kwargs", [
    ([1, 2, 3], [1, 2], {}),  # unequal lengths
    ([], [], {}),  # empty
    ([1, float("nan")], [1, 2], {}),  # not a number
    ([1, 2], [1, 2], {"n": 0}),  # no resample
    ([1, 2], [1, 2], {"groups": ["c1"]}),  # one label for two items
])
def test_bootstrap_bad_input(a, b, kwargs):
    with pytest.raises(DataError) as info:
        paired_bootstrap(a, b, **kwargs)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- sample size


def test_replies_needed_by_hand():
    # z_{0.975} = 1.959964, z_{0.8} = 0.841621, sum 2.801585
    # n = (2.801585 * 2.61 / 1.0) ** 2 = 7.312137 ** 2 = 53.467 -> 54
    assert replies_needed(2.61, 1.0) == 54
    # a negative effect needs as many; half the effect four times as many: 53.467 * 4 = 213.87 -> 214
    assert replies_needed(2.61, -1.0) == 54
    assert replies_needed(2.61, 0.5) == 214
    # alpha 0.01, power 0.9: z = 2.575829 + 1.281552 = 3.857381; (3.857381 * 2.61) ** 2 = 101.36 -> 102
    assert replies_needed(2.61, 1.0, alpha=0.01, power=0.9) == 102


@pytest.mark.parametrize("args", [(0.0, 1.0), (-1.0, 1.0), (2.0, 0.0), (2.0, 1.0, 1.5), (2.0, 1.0, 0.05, 1.0),
                                  (float("nan"), 1.0)])
def test_replies_needed_bad_input(args):
    with pytest.raises(DataError):
        replies_needed(*args)


# --------------------------------------------------------------------------- ROUGE-L on the paper's scale

def test_rouge_l_nlgeval_by_hand():
    from glong_lib.evaluation.metrics import rouge_l_nlgeval

    # LCS("a b c d", "a c e") = 2 ("a c"): P = 2/3, R = 2/4; F = 2.44 * P * R / (R + 1.44 * P)
    p, r = 2 / 3, 2 / 4
    assert rouge_l_nlgeval("a c e", "a b c d") == pytest.approx(2.44 * p * r / (r + 1.44 * p))
    assert rouge_l_nlgeval("x y", "a b") == 0.0
    # several references: the best precision and the best recall, each from whichever reference gives it:
    # "a b c d e f" gives P = 1 (R = 1/3), "a" gives R = 1 (P = 1/2), so F = 1 although neither matches fully
    assert rouge_l_nlgeval("a b", ["a b c d e f", "a"]) == 1.0
    assert rouge_l_nlgeval("a b", ["a b c d e f"]) == pytest.approx(2.44 * 1 * (1 / 3) / (1 / 3 + 1.44 * 1))


@pytest.mark.parametrize("seed", range(10))
def test_rouge_l_nlgeval_equals_pycocoevalcap(seed):
    rouge = pytest.importorskip("pycocoevalcap.rouge.rouge")
    from glong_lib.evaluation.metrics import rouge_l_nlgeval

    rng = random.Random(seed)
    hyps, refs = _random_corpus(rng, 30)
    for hyp, ref in zip(hyps, refs):
        ref_set = [ref] if isinstance(ref, str) else ref
        if not hyp.strip():
            continue  # nlg-eval never scores an empty reply (pycocoevalcap would divide by an empty token list)
        want = rouge.Rouge().calc_score([hyp.strip()], [r.strip() for r in ref_set])
        assert rouge_l_nlgeval(hyp, ref_set) == pytest.approx(want, abs=1e-12)


# --------------------------------------------------------------------------- the paper's preprocessing (LD-Agent)

# NLTK's own documented word_tokenize outputs (nltk/test/tokenize.doctest), which need Punkt's English model:
# the sentence split is what detaches "Jones." and keeps "Dr." whole.
NLTK_DOCUMENTED = [
    ("On a $50,000 mortgage of 30 years at 8 percent, the monthly payment would be $366.88.",
     ['On', 'a', '$', '50,000', 'mortgage', 'of', '30', 'years', 'at', '8', 'percent', ',', 'the', 'monthly',
      'payment', 'would', 'be', '$', '366.88', '.']),
    ("\"We beat some pretty good teams to get here,\" Slocum said.",
     ['``', 'We', 'beat', 'some', 'pretty', 'good', 'teams', 'to', 'get', 'here', ',', "''", 'Slocum', 'said', '.']),
    ("I cannot cannot work under these conditions!", ['I', 'can', 'not', 'can', 'not', 'work', 'under', 'these',
                                                      'conditions', '!']),
    ("He arrived at 3:00 pm.", ['He', 'arrived', 'at', '3:00', 'pm', '.']),
    ("There were 300,000, but that wasn't enough.",
     ['There', 'were', '300,000', ',', 'but', 'that', 'was', "n't", 'enough', '.']),
    ("It's more'n enough.", ['It', "'s", 'more', "'n", 'enough', '.']),
    ("I called Dr. Jones. I called Dr. Jones.",
     ['I', 'called', 'Dr.', 'Jones', '.', 'I', 'called', 'Dr.', 'Jones', '.']),
    ("Ich muss unbedingt daran denken, Mehl, usw. fur einen Kuchen einzukaufen. Ich muss.",
     ['Ich', 'muss', 'unbedingt', 'daran', 'denken', ',', 'Mehl', ',', 'usw', '.', 'fur', 'einen', 'Kuchen',
      'einzukaufen', '.', 'Ich', 'muss', '.']),
]


@pytest.mark.parametrize("text, tokens", NLTK_DOCUMENTED)
def test_word_tokenize_gives_nltks_documented_output(text, tokens):
    from glong_lib.evaluation.metrics import word_tokenize

    assert word_tokenize(text) == tokens


def test_preprocessing_by_hand():
    from glong_lib.evaluation.metrics import ldagent_preprocess, score_reply_nlgeval

    # lower-cased first, then tokenised: "Mr." is an abbreviation (kept whole), "it." ends a sentence
    assert ldagent_preprocess("I met Mr. Smith. He liked it. Did you?") == "i met mr. smith . he liked it . did you ?"
    assert ldagent_preprocess("   ") == ""
    # an empty reply becomes "&": against "&" the scores are those of the one-token hypothesis "&"
    assert score_reply_nlgeval("", "Sure &") == score_reply_nlgeval("&", "sure &")
    # identical after preprocessing -> every score 1 (BLEU-4 needs 4 tokens: "i love it !")
    assert all(v == pytest.approx(1.0) for v in score_reply_nlgeval("I LOVE it!", "i love it !").values())


def _real_reply_pairs(real_data, n: int) -> list[tuple[str, str]]:
    """(hypothesis, reference) pairs from real MSC turns: the reference is a Speaker 2 reply, the
    hypothesis the Speaker 1 turn before it (real text with partial overlap), and every 25th
    hypothesis empty (the "&" rule)."""
    import json

    pairs = []
    with open(real_data / "msc" / "msc4_valid.jsonl", encoding="utf-8") as f:
        for line in f:
            for session in json.loads(line)["sessions"]:
                turns = session["dialog"]
                for a, b in zip(turns, turns[1:]):
                    if a["speaker"] == "Speaker 1" and b["speaker"] == "Speaker 2":
                        pairs.append(("" if len(pairs) % 25 == 0 else a["text"], b["text"]))
                        if len(pairs) == n:
                            return pairs
    return pairs


@pytest.mark.real_data
def test_paper_scale_equals_pycocoevalcap_on_real_msc_replies(real_data):
    """The scorer against the code nlg-eval runs, on 600 real MSC reply pairs preprocessed as LD-Agent
    does: BLEU-1..4 from ``Bleu(4)`` on a corpus of the one reply and ROUGE-L from ``Rouge``, to 1e-9."""
    bleu = pytest.importorskip("pycocoevalcap.bleu.bleu")
    rouge = pytest.importorskip("pycocoevalcap.rouge.rouge")
    from glong_lib.evaluation.metrics import ldagent_preprocess, score_reply_nlgeval

    pairs = _real_reply_pairs(real_data, 600)
    assert len(pairs) == 600
    for hyp, ref in pairs:
        h, r = ldagent_preprocess(hyp) or "&", ldagent_preprocess(ref)
        with contextlib.redirect_stdout(io.StringIO()):
            want, _ = bleu.Bleu(4).compute_score({0: [r]}, {0: [h]})
        ours = score_reply_nlgeval(hyp, ref)
        assert [ours[f"nlg_b{n}"] for n in range(1, 5)] == pytest.approx(want, abs=1e-9, rel=0)
        assert ours["nlg_rougeL"] == pytest.approx(rouge.Rouge().calc_score([h], [r]), abs=1e-9, rel=0)


@pytest.mark.real_data
def test_word_tokenize_on_real_msc_replies(real_data):
    """On 2,000 real MSC replies (lower-cased, as scored): equal to ``nltk.word_tokenize`` where NLTK's
    ``punkt_tab`` is installed; and the measured agreement of the shortcuts that need no Punkt model.
    NLTK's word tokenizer on the whole reply without a sentence split agrees on 39.1% of the replies
    (it leaves "it." glued inside a reply), the plain TreebankWordTokenizer on 39.0%."""
    import nltk
    from nltk.tokenize import TreebankWordTokenizer
    from nltk.tokenize.destructive import NLTKWordTokenizer

    from glong_lib.evaluation.metrics import word_tokenize

    texts = [ref.lower() for _, ref in _real_reply_pairs(real_data, 2000)]
    ours = [word_tokenize(t) for t in texts]
    whole, treebank = NLTKWordTokenizer(), TreebankWordTokenizer()
    agree_whole = sum(o == whole.tokenize(t) for o, t in zip(ours, texts)) / len(texts)
    agree_treebank = sum(o == treebank.tokenize(t) for o, t in zip(ours, texts)) / len(texts)
    assert (round(100 * agree_whole, 1), round(100 * agree_treebank, 1)) == (39.1, 39.0)
    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        pytest.skip("NLTK's punkt_tab is not installed here: compared with NLTK's documented outputs only")
    assert ours == [nltk.word_tokenize(t) for t in texts]


def test_wilson_interval_brackets_the_proportion_and_stays_in_the_unit_interval():
    for hits, n in [(0, 10), (3, 10), (10, 10), (49, 57), (1, 1)]:
        low, high = wilson_interval(hits, n)
        assert 0.0 <= low <= hits / n <= high <= 1.0
    narrow, wide = wilson_interval(490, 570), wilson_interval(49, 57)
    assert narrow[1] - narrow[0] < wide[1] - wide[0]  # more items, a narrower interval
    with pytest.raises(DataError):
        wilson_interval(3, 0)
    with pytest.raises(DataError):
        wilson_interval(4, 3)
