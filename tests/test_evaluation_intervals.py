"""One interval helper and one small-sample rule (``evaluation.intervals``), and the three results
classes that use it agreeing on the same inputs."""

import math

import pytest

from glong_lib.evaluation.answers import AnswerEvaluation
from glong_lib.evaluation.intervals import MIN_UNITS, TOO_FEW, interval
from glong_lib.evaluation.msc import METRIC_KEYS, MSCResults
from glong_lib.evaluation.retrieval import EvidenceEvaluation


def test_interval_by_hand():
    # differences 0, 0, 1, 1 (n = 4): mean 1/2; a resample's mean is k/4, so with 1,000 resamples both
    # all-0 and all-1 draws (chance 1/16 each) sit beyond the 2.5% tails: the interval is [0, 1]
    r = interval([1, 1, 2, 2], [1, 1, 1, 1])
    assert (r.mean, r.low, r.high, r.unit, r.n_units, r.n_items) == (0.5, 0.0, 1.0, "question", 4, 4)
    assert not r.enough and r.verdict() == TOO_FEW
    # a constant lead of 0.25 on 8 replies: every resample's mean is 0.25, and 8 units are enough
    r = interval([0.75] * 8, [0.5] * 8, unit="reply")
    assert (r.low, r.high, r.unit, r.enough, r.verdict(3)) == (0.25, 0.25, "reply", True, "[+0.250, +0.250]")
    # the same items grouped into 4 conversations of 2: 4 units, too few whatever the numbers say
    r = interval([0.75] * 8, [0.5] * 8, conversations=["a", "a", "b", "b", "c", "c", "d", "d"])
    assert (r.unit, r.n_units, r.n_items, r.enough) == ("conversation", 4, 8, False)
    assert MIN_UNITS == 8


def _three(n_conv: int, per_conv: int = 3):
    """The same scores as evidence rows, answer rows and MSC records: ``per_conv`` questions (replies) in
    one session of each of ``n_conv`` conversations, method "g" against "f"."""
    ev_rows, ans_rows, records = [], [], []
    for c in range(n_conv):
        for i in range(per_conv):
            q, conv = f"q{c}-{i}", f"c{c}"
            g, f = ((c * 7 + i * 3) % 5) / 4, ((c * 3 + i) % 4) / 4
            for method, v in (("g", g), ("f", f)):
                ev_rows.append({"method": method, "question": q, "category": "x", "conversation": conv, "Hit@5": v})
                ans_rows.append({"method": method, "question": q, "category": "x", "conversation": conv, "F1": v})
                records.append({"method": method, "conversation": conv, "session": 2, "turn_id": q,
                                **{k: v for k in METRIC_KEYS}, "prompt_tokens": 10, "completion_tokens": 1})
    return (EvidenceEvaluation({}, ev_rows, (5,)), AnswerEvaluation(ans_rows, ["g", "f"], by_conversation=True),
            MSCResults(records, ["g", "f"], {}, {}))


@pytest.mark.parametrize("n_conv", [5, 10])
def test_the_three_results_classes_agree(n_conv):
    ev, ans, msc = _three(n_conv)
    e = ev.compare("g", "f", "Hit@5", by_conversation=True)
    a = ans.compare("g", "f")
    m = msc.compare("g", "f", metrics=("b2",))["b2"]   # x100, over conversation means (equal sizes: the same)
    assert e["mean_diff"] == pytest.approx(a["mean_diff"]) == pytest.approx(m["diff mean"] / 100)
    for lo, hi in ((a["ci_low"], a["ci_high"]), (m["ci low"] / 100, m["ci high"] / 100)):
        assert math.isclose(lo, e["ci_low"], abs_tol=1e-12) and math.isclose(hi, e["ci_high"], abs_tol=1e-12)
    assert e["enough"] == a["enough"] == m["enough"] == (n_conv >= MIN_UNITS)
    assert (e["verdict"] == TOO_FEW) == (m["verdict"] == TOO_FEW) == (n_conv < MIN_UNITS)
    # a mean's interval: the evidence and answer classes resample the same way
    assert ev.mean_interval("g", "Hit@5", by_conversation=True) == ans.mean_interval("g")
