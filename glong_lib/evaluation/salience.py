"""How much a salience weight means: AUC against reference summaries, with baselines and intervals."""


import re
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..schema import Triple
from .metrics import auc, bootstrap_auc  # noqa: F401  (re-exported)

SCOPES = ("session", "dialogue")



# --------------------------------------------------------------------------- does the weight mean anything?

STOPWORDS = frozenset(
    "a an the of to in on at for and or but with by from is are was were be been being i me my we our you "
    "your he him his she her they them their it its this that these those as about into over after before "
    "up down out off so not no do does did have has had will would can could should just very too also "
    "some any all more most own same than then there here what which who whom when where why how".split())


def content_words(text: str) -> set[str]:
    """Lower-case words of ``text`` without stopwords or one-letter tokens.

    >>> sorted(content_words("Maya's new job in Denver"))
    ['denver', 'job', 'maya', 'new']
    """
    words = re.findall(r"[a-z0-9]+", text.lower().replace("'s", ""))
    return {w for w in words if w not in STOPWORDS and len(w) > 1}


def mentioned_in(triple: Triple, reference: str) -> bool:
    """The AUC label: does a content word of the triple's subject or object appear in ``reference``?

    >>> mentioned_in(Triple("Walter", "has_profession", "beekeeper"), "Priya buys honey.")
    False
    >>> mentioned_in(Triple("Priya", "want_do", "buy honey"), "Priya buys honey.")
    True
    """
    ref = content_words(reference)
    return bool((content_words(triple.subject) | content_words(triple.object)) & ref)


def rank_agreement(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Spearman's rho and Kendall's tau between two scorings of the same triples (scipy).

    >>> rank_agreement([0.1, 0.5, 0.9], [0.2, 0.4, 1.0])
    {'spearman': 1.0, 'kendall': 1.0}
    """
    from scipy.stats import kendalltau, spearmanr

    return {"spearman": round(float(spearmanr(a, b).statistic), 4),
            "kendall": round(float(kendalltau(a, b).statistic), 4)}


@dataclass
class SalienceEvaluation:
    """Weights and labels pooled over held-out pairs, and the AUC of each method."""

    labels: list[bool]
    methods: dict[str, list[float]] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)

    def auc_table(self, seed: int = 42) -> list[dict[str, Any]]:
        """AUC per method with a bootstrap 95% interval; "random" is the mean over 200 seeded draws."""
        rows = []
        for name, weights in self.methods.items():
            if name == "random":
                rng = np.random.default_rng(seed)
                draws = [auc(rng.random(len(self.labels)), self.labels) for _ in range(200)]
                value, (lo, hi) = float(np.mean(draws)), np.percentile(draws, [2.5, 97.5])
                name = "random (mean of 200 draws)"
            else:
                value, (lo, hi) = auc(weights, self.labels), bootstrap_auc(weights, self.labels, seed=seed)
            rows.append({"method": name, "AUC": round(value, 3), "95% interval": f"{lo:.2f}-{hi:.2f}"})
        return rows


def evaluate_salience(scorer, pairs, seed: int = 42, progress: bool = True, shuffle: bool = True,
                      method: str = "summarizer attention") -> SalienceEvaluation:
    """Score the gold triples of each held-out summary pair and compare against baselines.

    Label per triple: :func:`mentioned_in` the pair's reference summary. Methods: the scorer's
    weights; uniform (every weight 1, AUC 0.5 by construction); seeded random; length only (the
    triple's token count normalised per pair, what weights would be if attention were uniform);
    and a diagnostic, the triple's position *as written in the file* (earlier = higher).

    The shipped pairs list the central facts first, so position alone separates them; with
    ``shuffle`` (default) the scorer sees each pair's triples in a seeded random order, so a
    position-biased summarizer cannot look good (or bad) for the wrong reason.
    """
    from tqdm.auto import tqdm

    rng = np.random.default_rng(seed)
    ev = SalienceEvaluation(labels=[], methods={method: [], "uniform": [], "random": [], "length only": [],
                                                "position as written (diagnostic)": []})
    usable = [p for p in pairs if p.triples]
    for pair in tqdm(usable, desc="salience", disable=not progress):
        k = len(pair.triples)
        order = rng.permutation(k) if shuffle else np.arange(k)
        triples = [pair.triples[i] for i in order]
        res = scorer.score(triples)
        lengths = np.array([b - a for a, b in res.spans], dtype=float)
        ev.labels += [mentioned_in(t, pair.summary) for t in triples]
        ev.methods[method] += res.weights.tolist()
        ev.methods["uniform"] += [1.0] * k
        ev.methods["random"] += rng.random(k).tolist()
        ev.methods["length only"] += (lengths / lengths.max()).tolist()
        ev.methods["position as written (diagnostic)"] += [1.0 - i / k for i in order]
        ev.summaries.append(res.summary)
    return ev
