"""How much a salience weight means, measured so that position, length or frequency cannot fake it.

Two evaluations:

* **real dialogues** (:func:`salience_dialogues`, the numbers that count): SAMSum test, DialogSum
  dev and test from the real-data folder, never trained on. Triples come from the suite's
  extractor; each is labelled by :func:`summary_label` (a content word of its subject or object,
  other than a speaker's name, is in the human summary). A *selection* split (DialogSum dev + 40
  SAMSum test dialogues) chooses every setting; the *report* split (DialogSum test + 40 other
  SAMSum test dialogues) reports. Measures: pooled AUC and the mean within-dialogue AUC with a
  dialogue-bootstrap interval (:func:`within_dialogue_auc`), beside the covariates a weight could
  be a proxy for (:func:`triple_covariates`), the weight's out-of-sample added value over them in
  a logistic regression (:func:`added_value`), and a planted off-topic line (:data:`PLANTED_LINES`).
* **the shipped sample pairs** (:func:`evaluate_salience`): the project's own 30 held-out pairs
  with gold triples, quick and offline (notebook 02's first look; too small to decide anything).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..datasets import SPLITS
from ..loaders import load_summary_pairs, summary_pair_conversation
from ..schema import Conversation, SummaryPair, Triple, Turn
from ..text import content_stems, content_stems_list, content_words
from .metrics import auc, bootstrap_auc

#: Each corpus's file under the real-data folder: the named split of the same name (``datasets.SPLITS``).
SUMMARY_FILES = {name: SPLITS[name].file for name in ("dialogsum-dev", "samsum-test", "dialogsum-test")}
#: (corpus, block): block b of the seeded shuffle of a corpus's usable dialogues.
SALIENCE_SPLITS = {"select": (("dialogsum-dev", 0), ("samsum-test", 0)),
                   "report": (("dialogsum-test", 0), ("samsum-test", 1))}


# --------------------------------------------------------------------------- data and labels

@dataclass
class SalienceDialogue:
    """One real dialogue: where it is from, its summary pair, the parsed conversation, its triples."""

    corpus: str
    pair: SummaryPair
    conversation: Conversation
    triples: list[Triple] = field(default_factory=list)

    @property
    def turns(self) -> list[Turn]:
        return self.conversation.sessions[0].turns


def salience_dialogues(folder: Path, split: str, n: int = 40, seed: int = 42, min_turns: int = 4,
                       max_turns: int = 16) -> list[SalienceDialogue]:
    """``n`` dialogues per corpus of a split (see :data:`SALIENCE_SPLITS`), seeded: dialogues with
    ``min_turns``..``max_turns`` turns, sorted by id, shuffled, block ``b`` taken."""
    if split not in SALIENCE_SPLITS:
        raise ValueError(f"unknown split '{split}' (choose from {', '.join(SALIENCE_SPLITS)})")
    out = []
    for corpus, block in SALIENCE_SPLITS[split]:
        pairs = sorted(load_summary_pairs(Path(folder) / SUMMARY_FILES[corpus]), key=lambda p: p.id)
        usable = [(p, c) for p, c in ((p, summary_pair_conversation(p)) for p in pairs)
                  if min_turns <= len(c.turns()) <= max_turns]
        random.Random(seed).shuffle(usable)
        out += [SalienceDialogue(corpus, p, c) for p, c in usable[block * n:(block + 1) * n]]
    return out


def summary_label(triple: Triple, summary: str, speakers: Sequence[str] = ()) -> bool:
    """The label: is this triple in the summary? True when a content word of its subject or object,
    other than a speaker's name, appears in ``summary`` (both sides through ``light_stem``).

    Speaker names are left out because every summary names the speakers: with them, any triple
    whose subject is a speaker would count as summarised.

    >>> summary_label(Triple("Hannah", "need", "Betty's number"), "Hannah needs Betty's number.", ["Hannah"])
    True
    >>> summary_label(Triple("Hannah", "like", "gifs"), "Hannah needs Betty's number.", ["Hannah"])
    False
    """
    names = {w for s in speakers for w in content_stems(s)}
    words = content_stems(f"{triple.subject} {triple.object}") - names
    return bool(words & content_stems(summary))


def mentioned_in(triple: Triple, reference: str) -> bool:
    """The sample pairs' label: a content word of the triple's subject or object is in ``reference``.

    >>> mentioned_in(Triple("Walter", "has_profession", "beekeeper"), "Priya buys honey.")
    False
    >>> mentioned_in(Triple("Priya", "want_do", "buy honey"), "Priya buys honey.")
    True
    """
    return bool((content_words(triple.subject) | content_words(triple.object)) & content_words(reference))


def grounded(triple: Triple, turns: Sequence[Turn], speakers: Sequence[str] = ()) -> bool:
    """Is the triple *said* in the dialogue? True when a content word of its subject or object, other
    than a speaker's name, occurs in some turn (through ``light_stem``). An extractor that
    paraphrases or invents an object makes ungrounded triples: no attention can land on their words,
    and they are rarely in a summary either.

    >>> turns = [Turn("T1", "Ann", "I adopted a kitten.")]
    >>> (grounded(Triple("Ann", "have_pet", "kitten"), turns, ["Ann"]),
    ...  grounded(Triple("Ann", "have_pet", "cat"), turns, ["Ann"]))
    (True, False)
    """
    names = {w for s in speakers for w in content_stems(s)}
    said = {w for t in turns for w in content_stems(t.text)}
    return bool((content_stems(f"{triple.subject} {triple.object}") - names) & said)


def triple_covariates(triples: Sequence[Triple], turns: Sequence[Turn], own_summary: str = "") -> dict[str, np.ndarray]:
    """What a weight might merely be a proxy for, one value per triple (higher = "more salient"):

    * ``position``: earlier turns higher (``1 - index / turns``);
    * ``length``: words in subject, relation and object;
    * ``frequency``: mean count, over the dialogue's words, of the triple's content stems;
    * ``own summary overlap``: share of the triple's content stems in the model's own summary.

    >>> turns = [Turn("T1", "A", "I love tea."), Turn("T2", "B", "Tea is fine.")]
    >>> cov = triple_covariates([Triple("A", "like", "tea", turn_id="T1"),
    ...                          Triple("B", "like", "coffee beans", turn_id="T2")], turns, "A loves tea.")
    >>> {k: v.round(2).tolist() for k, v in cov.items()}
    {'position': [1.0, 0.5], 'length': [3.0, 4.0], 'frequency': [2.0, 0.0], 'own summary overlap': [1.0, 0.0]}
    """
    index = {t.id: k for k, t in enumerate(turns)}
    counts: dict[str, int] = {}
    for t in turns:
        for w in content_stems_list(t.text):
            counts[w] = counts.get(w, 0) + 1
    own = content_stems(own_summary)
    cov: dict[str, list[float]] = {"position": [], "length": [], "frequency": [], "own summary overlap": []}
    for t in triples:
        stems = content_stems(f"{t.subject} {t.object}")
        cov["position"].append(1.0 - index.get(t.turn_id, len(turns) - 1) / max(1, len(turns)))
        cov["length"].append(float(len(f"{t.subject} {t.relation.replace('_', ' ')} {t.object}".split())))
        cov["frequency"].append(float(np.mean([counts.get(w, 0) for w in stems])) if stems else 0.0)
        cov["own summary overlap"].append(len(stems & own) / len(stems) if stems else 0.0)
    return {k: np.array(v) for k, v in cov.items()}


# --------------------------------------------------------------------------- measures

def within_dialogue_auc(scores: Sequence[float], labels: Sequence[bool], groups: Sequence[Any],
                        n: int = 1000, seed: int = 42) -> dict[str, Any]:
    """Mean over dialogues of the AUC inside each dialogue (dialogues with both labels only), with
    a 95% interval from resampling dialogues; a score that only separates *dialogues* (long ones
    from short ones) gets no credit here.

    >>> r = within_dialogue_auc([0.9, 0.1, 0.8, 0.2, 0.5], [1, 0, 1, 0, 1], ["a", "a", "b", "b", "c"])
    >>> r["auc"], r["dialogues"]
    (1.0, 2)
    """
    scores, labels, groups = np.asarray(scores, float), np.asarray(labels, bool), np.asarray(groups)
    per = []
    for g in dict.fromkeys(groups.tolist()):
        mask = groups == g
        if labels[mask].any() and not labels[mask].all():
            per.append(auc(scores[mask], labels[mask]))
    if not per:
        return {"auc": float("nan"), "low": float("nan"), "high": float("nan"), "dialogues": 0, "per_dialogue": []}
    per_arr = np.array(per)
    rng = np.random.default_rng(seed)
    boots = [per_arr[rng.integers(0, len(per_arr), len(per_arr))].mean() for _ in range(n)]
    low, high = np.percentile(boots, [2.5, 97.5])
    return {"auc": round(float(per_arr.mean()), 4), "low": round(float(low), 4), "high": round(float(high), 4),
            "dialogues": len(per), "per_dialogue": per}


def pooled_auc(scores: Sequence[float], labels: Sequence[bool], seed: int = 42, n: int = 500) -> dict[str, float]:
    """AUC over all triples together, with a bootstrap interval over triples (``n`` resamples).

    >>> pooled_auc([0.9, 0.1, 0.8, 0.2], [1, 0, 1, 0])["auc"]
    1.0
    """
    low, high = bootstrap_auc(scores, labels, n=n, seed=seed)
    return {"auc": round(auc(scores, labels), 4), "low": round(float(low), 4), "high": round(float(high), 4)}


def within_dialogue_ranks(values: Sequence[float], groups: Sequence[Any]) -> np.ndarray:
    """Each value's rank inside its dialogue scaled to 0..1 (ties share the mean rank; a lone
    triple gets 0.5), so regression features mean the same in short and long dialogues.

    >>> within_dialogue_ranks([3.0, 1.0, 2.0, 7.0], ["a", "a", "a", "b"]).tolist()
    [1.0, 0.0, 0.5, 0.5]
    """
    from scipy.stats import rankdata

    values, groups = np.asarray(values, float), np.asarray(groups)
    out = np.empty(len(values))
    for g in dict.fromkeys(groups.tolist()):
        mask = groups == g
        k = int(mask.sum())
        out[mask] = (rankdata(values[mask]) - 1) / (k - 1) if k > 1 else 0.5
    return out


def added_value(train: dict[str, np.ndarray], test: dict[str, np.ndarray], covariates: Sequence[str], score: str,
                n: int = 1000, seed: int = 42) -> dict[str, Any]:
    """The weight's added value over ``covariates``, out of sample: a logistic regression fitted on
    ``train`` with the covariates, another with the covariates plus ``score``; both are scored on
    ``test`` by mean within-dialogue AUC, and the difference gets a dialogue-bootstrap 95% interval.
    Features are within-dialogue ranks (:func:`within_dialogue_ranks`). Each table holds one
    array per feature plus ``labels`` and ``groups``.
    """
    from sklearn.linear_model import LogisticRegression

    def features(table, names):
        return np.column_stack([within_dialogue_ranks(table[c], table["groups"]) for c in names])

    result = {}
    per = {}
    for name, names in (("covariates", list(covariates)), ("covariates + weight", [*covariates, score])):
        model = LogisticRegression(max_iter=1000).fit(features(train, names), train["labels"])
        predicted = model.predict_proba(features(test, names))[:, 1]
        r = within_dialogue_auc(predicted, test["labels"], test["groups"], n=n, seed=seed)
        result[name] = r["auc"]
        per[name] = np.array(r["per_dialogue"])
        result[f"{name} coefficients"] = dict(zip(names, np.round(model.coef_[0], 3).tolist()))
    diff = per["covariates + weight"] - per["covariates"]
    rng = np.random.default_rng(seed)
    boots = [diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(n)]
    low, high = np.percentile(boots, [2.5, 97.5])
    result["added"] = {"value": round(float(diff.mean()), 4),
                       "low": round(float(low), 4), "high": round(float(high), 4)}
    return result


# --------------------------------------------------------------------------- the planted line

#: Off-topic lines of our own writing, each with the triple an extractor would take from it. One
#: is inserted into a dialogue at a seeded random place; a weight worth having ranks it low.
PLANTED_LINES = [
    ("By the way, the moon is about 384,000 kilometres from the earth.", ("moon", "is", "384,000 kilometres away")),
    ("Random fact: octopuses have three hearts.", ("octopuses", "have", "three hearts")),
    ("Unrelated, but my neighbour collects antique doorknobs.", ("neighbour", "collect", "antique doorknobs")),
    ("Oh, I read that honey never spoils.", ("honey", "never", "spoils")),
    ("Side note: the Eiffel Tower grows taller in summer.", ("Eiffel Tower", "grow", "taller in summer")),
    ("Funny, a snail can sleep for three years.", ("snail", "can sleep", "three years")),
]


def plant_line(dialogue: SalienceDialogue, seed: int = 42) -> tuple[list[Turn], list[Triple], int]:
    """The dialogue's turns with one :data:`PLANTED_LINES` line inserted at a seeded place (never
    first), spoken by the speaker of the turn before it; its triples plus the planted one; and the
    planted triple's index."""
    rng = random.Random(f"{seed}-{dialogue.pair.id}")
    text, (s, r, o) = rng.choice(PLANTED_LINES)
    turns = list(dialogue.turns)
    at = rng.randint(1, len(turns))
    speaker = turns[at - 1].speaker
    turns.insert(at, Turn("PLANTED", speaker, text))
    planted = Triple(s, r, o, speaker=speaker, turn_id="PLANTED", session=1, source=text)
    triples = list(dialogue.triples) + [planted]
    return turns, triples, len(triples) - 1


def planted_rank(weights: Sequence[float], planted: int) -> float:
    """Share of the other triples the planted one weighs less than (1.0 = lowest of all; ties half).

    >>> planted_rank([0.9, 0.5, 0.1], 2), planted_rank([0.1, 0.5, 0.9], 2)
    (1.0, 0.0)
    """
    w = np.asarray(weights, float)
    others = np.delete(w, planted)
    if not len(others):
        return float("nan")
    return float(((others > w[planted]).sum() + 0.5 * (others == w[planted]).sum()) / len(others))


# --------------------------------------------------------------------------- the shipped sample pairs

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
    """Score the gold triples of each held-out sample pair and compare against baselines.

    Label per triple: :func:`mentioned_in` the pair's reference summary. Methods: the scorer's
    weights; uniform (every weight 1, AUC 0.5 by construction); seeded random; length only (the
    triple's word count normalised per pair, about what Eq. 2 gives when attention is uniform);
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
        res = scorer.score(triples, turns=summary_pair_conversation(pair).sessions[0].turns)
        lengths = np.array([len(t.text().replace("_", " ").split()) for t in triples], dtype=float)
        ev.labels += [mentioned_in(t, pair.summary) for t in triples]
        ev.methods[method] += res.weights.tolist()
        ev.methods["uniform"] += [1.0] * k
        ev.methods["random"] += rng.random(k).tolist()
        ev.methods["length only"] += (lengths / np.maximum(lengths.max(), 1)).tolist()
        ev.methods["position as written (diagnostic)"] += [1.0 - i / k for i in order]
        ev.summaries.append(res.summary)
    return ev


STORED_BASELINES = ("random", "length", "position", "frequency", "own summary overlap")


def stored_report_table(bench: dict[str, Any], baselines: Sequence[str] = STORED_BASELINES) -> list[dict[str, Any]]:
    """Report-split rows of a stored ``bench_salience.json`` (the chosen reading, the one turned down for the
    planted line, the mean at the last layer, then the baselines), so a notebook need not know its key spellings."""
    report = bench["report"]
    chosen = bench["chosen_on_selection"]["decoder dialogue"]
    rejected = bench["chosen_on_selection"]["decoder dialogue, ignoring the planted line"]
    last = len(bench["layer_curve_select"]["mean"]) - 1

    def key(prefix: str) -> str:
        return next(k for k in report if k.startswith(prefix))

    shown = {"chosen: " + chosen.split(" | ", 1)[1]: key("decoder dialogue (chosen"),
             "turned down: " + rejected.split(" | ", 1)[1]: key("decoder dialogue, ignoring"),
             f"mean | last layer, L{last}": key(chosen.split(" | ")[0] + " | mean | last layer")}
    shown.update({"baseline: " + name: "baseline: " + name for name in baselines})
    return [{"method": name, "AUC": round(report[k]["within"], 3), "dialogues": report[k]["dialogues"],
             "pooled": round(report[k]["pooled"], 3),
             "95% interval": f"{report[k]['within_low']:.2f}-{report[k]['within_high']:.2f}"}
            for name, k in shown.items()]
