"""Does the graph step add? G-Long's graph variants against the same edges with no graph (``flat``)
and dense retrieval, per LoCoMo category, with a selection split and a report split.

The question (issue 27): the paper's anchors -> 1-hop expansion *filters* the candidates, so on
LoCoMo the graph step cost recall against ``flat``. The variants here let the graph *add*:

- ``named``: the entities the question names (``text.entity_mentions``) anchor the expansion
  before the entities nearest its embedding;
- ``pool="flat+graph"``: the semantic pool is the flat top-N of every edge plus the anchors'
  neighbourhood's own top-N, so a graph candidate can only join, never push out, a flat one;
- ``bridges=2``: a second hop from the entities of the first two pool edges (not hubs), the
  multi-hop step: a fact linked to what was found, not to the question's words (alone, and on the
  flat+graph pool).

Besides the means and paired intervals, each split counts the questions a graph variant finds at 5
that ``flat`` misses (wins) and the reverse (losses): the graph "adds" only if wins exist.

Edges carry Eq. 3 weights from the offline salience source (cached); ``G-Long, uniform`` repeats the
recommended G-Long with uniform weights (the importance ablation). Every variant is scored on the
same questions (categories 1-4); the variant to recommend is chosen on the **selection split**
(``locomo-select``: conv-26, 30, 41) by Hit@5, then MRR@20; the **report split** (``locomo-report``:
conv-42, 43) plays no part in the choice and gives the numbers to quote, each with a paired bootstrap interval over its
questions against ``flat`` and dense retrieval.

Needs ``GLONG_REAL_DATA`` (LoCoMo) and the cached extractor; about 20-40 min per memory source on 2
cores cold (extraction and salience readings, cached), a few minutes warm. ``--quick`` runs the
variants on the shipped probes instead (gold triples, seconds) so the script is tested in CI.

    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_graph --memory-from observations --json build/graph.json
    python -m benchmarks.bench_graph --quick
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, replace
from typing import Optional

from benchmarks._common import add_split_option, bench_parser, real_split, run_locomo_or_probes
from glong_lib.config import RECOMMENDED_RETRIEVAL, RECOMMENDED_RETRIEVAL_TURNS, RetrievalSettings
from glong_lib.datasets import LOCOMO_SPLITS

#: A variant: a retrieval method and its G-Long settings.
Variant = tuple[str, RetrievalSettings]

#: The variants that use the graph (the candidates for the recommended default).
GRAPH_VARIANTS = ("G-Long", "G-Long + named", "G-Long + bridges", "G-Long flat+graph", "G-Long flat+graph + named",
                  "G-Long flat+graph + bridges", "G-Long flat+graph + named + bridges")
METRICS = ("Hit@1", "Hit@5", "MRR@20")


def variants(base: RetrievalSettings, with_turns: bool) -> dict[str, Variant]:
    """The ladder over one memory: references, the paper's graph step, and the steps that add."""
    v: dict[str, Variant] = {}
    if with_turns:
        v["dense over turns"] = ("dense-turns", base)
    v["dense over units"] = ("dense", base)
    v["flat"] = ("flat", base)
    v["PPR"] = ("ppr", base)
    v["G-Long"] = ("glong", base)
    v["G-Long + named"] = ("glong", replace(base, named=True))
    v["G-Long + bridges"] = ("glong", replace(base, bridges=2))
    v["G-Long flat+graph"] = ("glong", replace(base, pool="flat+graph"))
    v["G-Long flat+graph + named"] = ("glong", replace(base, pool="flat+graph", named=True))
    v["G-Long flat+graph + bridges"] = ("glong", replace(base, pool="flat+graph", bridges=2))
    v["G-Long flat+graph + named + bridges"] = ("glong", replace(base, pool="flat+graph", named=True, bridges=2))
    return v


def choose(selection) -> str:
    """The graph variant with the best Hit@5 on the selection split (ties: MRR@20, then list order)."""
    ranked = sorted(GRAPH_VARIANTS, key=lambda n: (-selection.metrics[n]["Hit@5"], -selection.metrics[n]["MRR@20"]))
    return ranked[0]


def table(result, title: str, references: tuple[str, ...]) -> dict:
    """Print and return one split: every variant overall and per category, and each graph variant
    minus each reference, paired over the same questions, overall and per category."""
    cats = sorted({r["category"] for r in result.rows})
    first = next(iter(result.metrics))
    n = {c: len(result.values(first, "Hit@5", c)) for c in cats}
    print(f"\n=== {title}: {result.metrics[first]['questions']} questions ("
          + ", ".join(f"{c}: {k}" for c, k in n.items()) + ")")
    print(f"{'variant':<38}" + "".join(f"{m:>8}" for m in METRICS) + "".join(f"{'H@5 ' + c[:9]:>15}" for c in cats))
    rows = {}
    for name, m in result.metrics.items():
        per = {c: sum(result.values(name, "Hit@5", c)) / max(1, n[c]) for c in cats}
        print(f"{name:<38}" + "".join(f"{m[k]:>8.3f}" for k in METRICS) + "".join(f"{per[c]:>15.3f}" for c in cats))
        rows[name] = {**{k: round(m[k], 4) for k in METRICS},
                      "Hit@5 by category": {c: round(v, 4) for c, v in per.items()}}
    print("paired differences, Hit@5 (95% bootstrap over questions): overall | per category")
    diffs = []
    for a in GRAPH_VARIANTS:
        for b in references:
            parts = [(None, result.compare(a, b, "Hit@5"))] + [(c, result.compare(a, b, "Hit@5", c)) for c in cats]
            print(f"  {a} - {b}: " + " | ".join(
                f"{c or 'all'} {d['mean_diff']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]" for c, d in parts))
            diffs += [{"a": a, "b": b, "category": c or "all", "metric": "Hit@5",
                       **{k: round(d[k], 4) for k in ("mean_diff", "ci_low", "ci_high")}} for c, d in parts]
    # what the mean hides: the questions each graph variant finds that flat misses, and the reverse
    print("questions found at 5 by the graph variant and missed by flat (wins) / the reverse (losses):")
    counts = {}
    for a in GRAPH_VARIANTS:
        parts = {c or "all": result.wins_losses(a, "flat", "Hit@5", c) for c in [None, *cats]}
        counts[a] = {c: {"wins": len(w["wins"]), "losses": len(w["losses"])} for c, w in parts.items()}
        print(f"  {a}: " + " | ".join(f"{c} +{v['wins']}/-{v['losses']}" for c, v in counts[a].items()))
    return {"questions": n, "rows": rows, "paired": diffs, "wins/losses against flat at 5": counts}


def split(result, conversation_ids: list[str]):
    """The selection and report parts of ``result``, by sample id (``datasets.LOCOMO_SPLITS``)."""
    select = [c for c in conversation_ids if c in LOCOMO_SPLITS["select"]]
    report = [c for c in conversation_ids if c in LOCOMO_SPLITS["report"]]
    return result.subset(select), result.subset(report), select, report


def run(result, conversation_ids: list[str], references: tuple[str, ...], label: str) -> dict:
    """Selection, choice, report for one memory source."""
    sel, rep, select, report = split(result, conversation_ids)
    out = {"selection": table(sel, f"{label}: selection split, locomo-select ({', '.join(select)})", references)}
    chosen = choose(sel)
    print(f"\n[{label}] chosen on the selection split: {chosen}")
    out["chosen"] = chosen
    out["report"] = table(rep, f"{label}: report split, locomo-report ({', '.join(report)})", references)
    return out


def locomo(args) -> dict:
    from glong_lib.evaluation.locomo import evaluate_variants, locomo_units
    from glong_lib.evaluation.retrieval import merge_evaluations
    from glong_lib.extraction import load_extractor
    from glong_lib.models import load_encoder
    from glong_lib.salience import load_scorer

    path = real_split(args.split)
    extractor, encoder, scorer = load_extractor(args.profile), load_encoder(args.profile), load_scorer(args.profile)
    out = {}
    for memory_from in args.memory_from:
        start = time.perf_counter()
        # the ladder starts from the preset without the steps it measures
        base = RECOMMENDED_RETRIEVAL if memory_from == "observations" else RECOMMENDED_RETRIEVAL_TURNS
        base = replace(base, named=False, pool="graph", bridges=0)
        dialogues = locomo_units(path, memory_from, args.conversations, args.max_turns)[0]
        common = dict(ks=(1, 5), conversations=args.conversations, max_turns=args.max_turns, extractor=extractor,
                      memory_from=memory_from, keep_unextracted=memory_from == "observations", progress=False)
        weighed = evaluate_variants(path, encoder, variants(base, memory_from == "observations"), scorer=scorer,
                                    **common)
        ablation = {"G-Long, uniform": ("glong", base), "flat, uniform": ("flat", base)}
        uniform = evaluate_variants(path, encoder, ablation, **common)
        result = merge_evaluations(weighed, uniform)
        refs = ("flat", "dense over turns") if memory_from == "observations" else ("flat", "dense over units")
        out[memory_from] = {"settings": asdict(base), **run(result, [c.id for c in dialogues], refs, memory_from),
                            "seconds": round(time.perf_counter() - start)}
        for a, b in (("G-Long", "G-Long, uniform"), ("flat", "flat, uniform")):
            for metric in METRICS:
                d = result.compare(a, b, metric)
                print(f"[{memory_from}] Eq. 3 weights - uniform, {a}: {metric} {d['mean_diff']:+.3f} "
                      f"[{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] (all conversations)")
                out[memory_from][f"weights - uniform, {a}, {metric}"] = {
                    k: round(d[k], 4) for k in ("mean_diff", "ci_low", "ci_high")}
        print(f"[{memory_from}] {out[memory_from]['seconds']} s")
    return out


def probes(args) -> dict:
    """The same ladder on the shipped probes (gold triples, MiniLM, seconds): the CI-sized run."""
    from glong_lib.evaluation.retrieval import evaluate_probes
    from glong_lib.io import data_path
    from glong_lib.loaders import load_conversations, load_probes
    from glong_lib.models import load_encoder

    convs = load_conversations(data_path("conversations"))
    base = replace(RECOMMENDED_RETRIEVAL, named=False)
    result = evaluate_probes(load_probes(data_path("probes.jsonl")), convs, load_encoder(args.profile),
                             variants=variants(base, False), ks=(1, 5), progress=False)
    return {"probes": table(result, "probes (gold triples, uniform weights)", ("flat", "dense over units"))}


def main(argv: Optional[list[str]] = None) -> int:
    p = bench_parser(__doc__)
    p.add_argument("--memory-from", nargs="*", default=["observations", "turns"], choices=["observations", "turns"])
    p.add_argument("--conversations", type=int, default=None, help="LoCoMo: the first N conversations")
    p.add_argument("--max-turns", type=int, default=None, help="LoCoMo: the first N turns of each")
    p.add_argument("--profile", default="offline")
    add_split_option(p, "locomo-dev", "locomo-dev", "LoCoMo (selection and report, split by sample id)")
    return run_locomo_or_probes(p.parse_args(argv), locomo, probes, "bench_graph",
                                {"95% CI": "questions (bootstrap)"})


if __name__ == "__main__":
    sys.exit(main())
