"""How sure a mean is: one interval helper and one small-sample rule for every results class
(``retrieval.EvidenceEvaluation``, ``answers.AnswerEvaluation``, ``msc.MSCResults``).

The rule: an interval resamples one *unit* (a question, a reply, or a whole conversation when the
items of one conversation are not independent); with fewer than :data:`MIN_UNITS` units the interval
is still computed, but :attr:`Interval.enough` is False and :meth:`Interval.verdict` says
"too few to tell" instead of printing it. Which unit is resampled is the caller's choice (the
question by default; ``by_conversation=True`` or, for MSC, always the conversation); the rule does
not switch units behind the caller's back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from .metrics import paired_bootstrap

#: Fewer resampled units than this: the interval says nothing worth printing ("too few to tell").
MIN_UNITS = 8

#: What :meth:`Interval.verdict` says below :data:`MIN_UNITS`.
TOO_FEW = "too few to tell"


@dataclass(frozen=True)
class Interval:
    """A mean (of values, or of paired differences) with its 95% bootstrap interval and what was
    resampled: ``unit`` ("question", "reply", "conversation"), ``n_units`` of them over ``n_items``
    items; ``share_above_zero`` is the share of resamples whose mean is above 0."""

    mean: float
    low: float
    high: float
    unit: str
    n_units: int
    n_items: int
    share_above_zero: float
    n_resamples: int

    @property
    def enough(self) -> bool:
        """Whether there are at least :data:`MIN_UNITS` units to resample (the small-sample rule)."""
        return self.n_units >= MIN_UNITS

    def verdict(self, digits: int = 2) -> str:
        """``"[low, high]"`` with signs, or :data:`TOO_FEW` below :data:`MIN_UNITS` units."""
        return f"[{self.low:+.{digits}f}, {self.high:+.{digits}f}]" if self.enough else TOO_FEW

    def as_dict(self) -> dict:
        """``metrics.paired_bootstrap``'s keys (``mean_diff``, ``ci_low``, ...) plus the unit and the rule."""
        return {"mean_diff": self.mean, "ci_low": self.low, "ci_high": self.high,
                "share_a_better": self.share_above_zero, "n_items": self.n_items,
                "n_groups": self.n_units if self.unit == "conversation" else None, "n_resamples": self.n_resamples,
                "unit": self.unit, "n_units": self.n_units, "enough": self.enough, "verdict": self.verdict()}


def interval(values: Sequence[float], baseline: Optional[Sequence[float]] = None,
             conversations: Optional[Sequence] = None, unit: str = "question",
             n: int = 1000, seed: int = 42) -> Interval:
    """The mean of ``values`` (minus ``baseline`` item by item, when given) with its 95% paired
    bootstrap interval (``metrics.paired_bootstrap``, ``n`` resamples, ``seed``). With
    ``conversations`` (one label per item) whole conversations are resampled and the unit is
    "conversation"; otherwise each item is a ``unit``.

    Worked example. Differences 1-1, 1-1, 2-1, 2-1 = 0, 0, 1, 1 over four questions: the mean is 0.5;
    a resample draws four of them, so its mean is 0, 1/4, ..., 1, and the 2.5th and 97.5th
    percentiles of 1,000 such means are 0 and 1. Four units are fewer than eight: too few to tell.

    >>> r = interval([1, 1, 2, 2], [1, 1, 1, 1])
    >>> r.mean, r.low, r.high, r.n_units, r.enough, r.verdict()
    (0.5, 0.0, 1.0, 4, False, 'too few to tell')

    The same lead of 1 on eight questions of two conversations: every resample's mean is 1, and there
    are 8 questions but 2 conversations, so only the first has enough units.

    >>> by_question = interval([2] * 8, [1] * 8)
    >>> by_conversation = interval([2] * 8, [1] * 8, conversations=["a"] * 4 + ["b"] * 4)
    >>> by_question.verdict(), by_conversation.unit, by_conversation.n_units, by_conversation.verdict()
    ('[+1.00, +1.00]', 'conversation', 2, 'too few to tell')
    """
    base = [0.0] * len(values) if baseline is None else baseline
    boot = paired_bootstrap(values, base, n=n, seed=seed, groups=conversations)
    grouped = conversations is not None
    return Interval(boot["mean_diff"], boot["ci_low"], boot["ci_high"], "conversation" if grouped else unit,
                    boot["n_groups"] if grouped else boot["n_items"], boot["n_items"], boot["share_a_better"],
                    boot["n_resamples"])


def bootstrap_mean(values: Sequence[float], n: int = 1000, seed: int = 42) -> tuple[float, float]:
    """95% percentile interval of the mean over ``n`` seeded resamples of the items
    (:func:`interval`'s bounds, without its small-sample rule).

    >>> bootstrap_mean([1.0, 1.0, 1.0])
    (1.0, 1.0)
    >>> lo, hi = bootstrap_mean([0.0, 1.0] * 50)
    >>> 0.38 < lo < 0.45 and 0.55 < hi < 0.62
    True
    """
    if len(values) == 0:
        return float("nan"), float("nan")
    r = interval(values, n=n, seed=seed)
    return r.low, r.high
