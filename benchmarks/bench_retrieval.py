"""Retrieval: evidence Recall@1/3/5 and MRR of every method on LoCoMo, and query latency at scale.

1. **LoCoMo** (only when ``GLONG_REAL_DATA`` points at the real data folder): categories 1-4
   (category 5, adversarial, excluded), every method in one run. The graph methods (``glong``,
   ``ppr``) need triples, so the fine-tuned extractor runs over each conversation first (cached per
   conversation; a LoCoMo conversation is ~500 turns, minutes on a CPU). Questions are asked after
   the last session. G-Long ranks 5 distinct turns here, so its K is 5 and its semantic pool
   max(5, K) = 5, the paper's.
2. **Latency** of one ``AssociativeRetriever.retrieve`` (paper settings) on synthetic memories of
   1k, 10k and 100k edges (``bench_memory.synthetic``: speakers as hubs). Vectors come from a fake
   encoder (random unit vectors, 384-d), so the numbers measure the retriever, not MiniLM (which
   adds one query encoding, ~5-10 ms on an idle 2-core CPU). Two query sets: entity names (typical)
   and speaker names (the worst case: the anchor is a hub whose every edge is a candidate).
   Personalized PageRank is timed too where it is affordable (up to 10k edges). faiss runs with
   ``--omp-threads`` OpenMP threads (default 1): a single query gains nothing from threads, and on
   a busy 2-core machine their spin-waiting tripled the anchor search time at 100k edges
   (measured: 48 ms with 2 threads, 15 ms with 1, flat search over 46k nodes).

Run time on 2 shared cores: ``--quick`` (latency at 1k edges, 20 queries, no LoCoMo) about 2 s; the
full latency part (1k, 10k, 100k edges) a few minutes; the LoCoMo part about an hour cold (the extractor
over every conversation; cached after) and 10-20 minutes warm.

    python -m benchmarks.bench_retrieval                       # both parts (LoCoMo when the data is set)
    python -m benchmarks.bench_retrieval --skip-locomo --sizes 1000 10000
    python -m benchmarks.bench_retrieval --quick --json retrieval.json
    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_retrieval --skip-latency --conversations 1 --max-turns 200
    # answer-word coverage of the current adapter's triples beside an earlier adapter's (before/after)
    OLD=/path/to/earlier/adapter   # a folder written by glong train-extractor --out
    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_retrieval --skip-latency --baseline-adapter $OLD
"""

from __future__ import annotations

import json
import math
import random
import statistics
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Optional

from benchmarks._common import (
    add_split_option,
    bench_parser,
    fake_encoder,
    percentiles,
    real_split,
    time_calls,
    write_results,
)
from benchmarks.bench_memory import BATCH, synthetic  # the same synthetic memories as the memory benchmark
from glong_lib.config import PAPER_RETRIEVAL, RECOMMENDED_RETRIEVAL, RECOMMENDED_RETRIEVAL_TURNS, RetrievalSettings
from glong_lib.datasets import describe
from glong_lib.memory import GraphMemory
from glong_lib.retrieval import PAPER_LAMBDA, AssociativeRetriever, PPRRetriever


def build(n_edges: int) -> tuple[GraphMemory, list[str], list[str], float]:
    triples, names = synthetic(n_edges)
    speakers = sorted({t.subject for t in triples if t.subject.startswith("speaker")})
    memory = GraphMemory(encoder=fake_encoder())
    start = time.perf_counter()
    for i in range(0, len(triples), BATCH):
        memory.add_triples(triples[i:i + BATCH], time_s=float(i), session=i // BATCH + 1)
    return memory, names, speakers, time.perf_counter() - start


def time_queries(retriever, queries: list[str], now_s: float) -> list[float]:
    """Seconds of each ``retriever.retrieve(q)``, asked at ``now_s``."""
    return time_calls(lambda q: retriever.retrieve(q, now_s=now_s), queries)


#: Settings timed beside the paper's: the recommended preset (named anchors) and every step that adds.
LATENCY_VARIANTS = {
    "glong, recommended": RECOMMENDED_RETRIEVAL,
    "glong, recommended for turns (flat+graph + named)": RECOMMENDED_RETRIEVAL_TURNS,
    "glong, flat+graph + named + bridges": replace(RECOMMENDED_RETRIEVAL, pool="flat+graph", bridges=2),
}


def latency(sizes: list[int], n_queries: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for n in sizes:
        memory, names, speakers, build_s = build(n)
        glong = AssociativeRetriever(memory, update_access=False)
        start = time.perf_counter()
        glong.warm()  # embed every edge once, as a long-running agent would have by now
        warm_s = time.perf_counter() - start
        now = float(n)
        entity_q = [rng.choice([x for x in names if not x.startswith("speaker")]) for _ in range(n_queries)]
        hub_q = [rng.choice(speakers) for _ in range(max(5, n_queries // 4))]
        typical = time_queries(glong, entity_q, now)
        hub = time_queries(glong, hub_q, now)
        traces = [glong.retrieve(q, now_s=now).trace for q in entity_q[:20]]
        sizes_seen = [t.sizes()["candidates"] for t in traces]
        stages = {st: round(statistics.median(t.seconds[st] for t in traces) * 1000, 2) for st in traces[0].seconds}
        row = {"edges": n, "nodes": memory.graph.number_of_nodes(), "build_s": round(build_s, 1),
               "warm_s": round(warm_s, 1), "glong": percentiles(typical), "glong (hub anchor)": percentiles(hub),
               "mean candidates": round(sum(sizes_seen) / len(sizes_seen), 1), "stage p50 ms": stages}
        for name, settings in LATENCY_VARIANTS.items():  # the steps of issue 27, on the same queries
            variant = AssociativeRetriever(memory, settings, update_access=False)
            variant.warm()
            row[name] = percentiles(time_queries(variant, entity_q, now))
        if n <= 10_000:
            ppr = PPRRetriever(memory)
            ppr.retrieve(entity_q[0], now_s=now)  # builds its undirected graph once
            row["ppr"] = percentiles(time_queries(ppr, entity_q[: max(5, n_queries // 5)], now))
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


#: The paper's retrieval settings (Appendix B, the reference code's dedup) and the one these runs
#: recommend (``k`` is set by the evaluation: the deepest cut-off).
PAPER = PAPER_RETRIEVAL
RECOMMENDED = RECOMMENDED_RETRIEVAL

#: Recency rates swept (per second) and their half-lives.
LAMBDAS = [0.0, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5]

#: A variant: a method of ``retrieval.METHODS`` and its G-Long settings (None: the method has none).
Variant = tuple[str, Optional[RetrievalSettings]]


def paper_variants(memory_from: str) -> dict[str, Variant]:
    """Retrievers over the paper's memory (the extracted triples only): references over raw turns
    and over the same units, the paper's G-Long and its controls, and one-factor sweeps from it."""
    v: dict[str, Variant] = {}
    if memory_from == "observations":
        v["dense over turns"] = ("dense-turns", None)
        v["bm25 over turns"] = ("bm25-turns", None)
    v[f"dense over {memory_from}"] = ("dense", None)
    v[f"bm25 over {memory_from}"] = ("bm25", None)
    v["G-Long, paper"] = ("glong", PAPER)
    v["flat edges, paper"] = ("flat", PAPER)
    v["PPR, paper"] = ("ppr", PAPER)
    v["G-Long, paper, L=2"] = ("glong", replace(PAPER, hops=2))
    v["G-Long, paper, no dedup"] = ("glong", replace(PAPER, dedup=False))
    for text in ("source", "both"):
        v[f"G-Long, paper, edge text {text}"] = ("glong", replace(PAPER, edge_text=text))
    v["G-Long, paper, hubs skipped"] = ("glong", replace(PAPER, hubs="skip"))
    for lam in LAMBDAS:
        if lam != PAPER.lam:
            v[f"G-Long, paper, lambda {lam:g}"] = ("glong", replace(PAPER, lam=lam))
    return v


def recommended_variants() -> dict[str, Variant]:
    """Retrievers over the recommended memory (units the extractor found nothing in kept whole)."""
    return {
        "G-Long, recommended": ("glong", RECOMMENDED),
        "flat edges, recommended": ("flat", RECOMMENDED),
        "PPR, recommended": ("ppr", RECOMMENDED),
        "G-Long, recommended, L=2": ("glong", replace(RECOMMENDED, hops=2)),
        "G-Long, recommended, hubs skipped": ("glong", replace(RECOMMENDED, hubs="skip")),
        "G-Long, recommended, paper lambda": ("glong", replace(RECOMMENDED, lam=PAPER_LAMBDA)),
        "G-Long, recommended, triple text": ("glong", replace(RECOMMENDED, edge_text="triple")),
    }


def as_settings(variants: dict[str, Variant]) -> dict[str, tuple[str, RetrievalSettings]]:
    """The variants as ``evaluate_variants`` takes them: a method without settings of its own gets
    the paper's (it reads none of them)."""
    return {name: (method, settings or PAPER) for name, (method, settings) in variants.items()}


def half_life(lam: float) -> str:
    return "off" if lam == 0 else f"{math.log(2) / lam / 86400:,.0f} days"


def report(result, memory_from: str, seconds: float) -> dict:
    """Print one rung: every variant with intervals, per category, and the paired comparisons."""
    ks = result.ks
    print(f"\n=== memory from {memory_from}: {result.metrics[next(iter(result.metrics))]['questions']} questions, "
          f"{seconds:.0f} s; excluded {result.excluded}")
    head = "".join(f"{'Hit@' + str(k):>8}" for k in ks) + f"{'Hit@5 95% CI':>16}{'Recall@5':>10}{'MRR@20':>8}"
    print(f"{'variant':<42}{head}")
    rows = []
    for name, m in result.metrics.items():
        lo, hi = result.interval(name, "Hit@5")
        print(f"{name:<42}" + "".join(f"{m[f'Hit@{k}']:>8.3f}" for k in ks)
              + f"{f'[{lo:.3f}, {hi:.3f}]':>16}{m['Recall@5']:>10.3f}{m['MRR@20']:>8.3f}")
        rows.append({"variant": name, **{k: round(v, 4) for k, v in m.items()},
                     "Hit@5 CI": [round(lo, 4), round(hi, 4)]})
    cats = result.by_category("Hit@5")
    n = cats.pop("n")
    print("\nHit@5 per category (" + ", ".join(f"{c}: {k}" for c, k in n.items()) + " questions)")
    print(f"{'variant':<42}" + "".join(f"{c:>13}" for c in n))
    for name, per in cats.items():
        print(f"{name:<42}" + "".join(f"{per[c]:>13.3f}" for c in n))
    ref = "dense over turns"
    pairs = [("G-Long, paper", ref), ("G-Long, recommended", ref), ("G-Long, recommended", f"dense over {memory_from}"),
             ("G-Long, recommended", "flat edges, recommended"), ("G-Long, paper", "flat edges, paper"),
             ("G-Long, paper", "PPR, paper"), ("G-Long, paper", "G-Long, paper, L=2"),
             ("G-Long, recommended", "G-Long, recommended, L=2"), ("G-Long, paper, edge text source", "G-Long, paper"),
             ("G-Long, paper, lambda 0", "G-Long, paper"), ("G-Long, paper, hubs skipped", "G-Long, paper"),
             ("G-Long, recommended", "G-Long, recommended, paper lambda"),
             ("G-Long, recommended", "G-Long, recommended, hubs skipped"),
             ("G-Long, recommended", "G-Long, recommended, triple text"), ("G-Long, recommended", "G-Long, paper")]
    print("\nPaired differences (bootstrap over questions, 95%):")
    diffs = []
    for a, b in dict.fromkeys(p for p in pairs if p[0] != p[1]):  # on the turns rung two names coincide
        for metric in ("Hit@1", "Hit@5"):
            d = result.compare(a, b, metric)
            print(f"  {a} - {b}: {metric} {d['mean_diff']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]")
            diffs.append({"a": a, "b": b, "metric": metric, **{k: d[k] for k in ("mean_diff", "ci_low", "ci_high")}})
    glong, dense = result.metrics["G-Long, recommended"]["Hit@5"], result.metrics[ref]["Hit@5"]
    print(f"  aim: G-Long (recommended) Hit@5 / {ref} Hit@5 = {glong / max(dense, 1e-9):.2f} (aim >= 1.2)")
    return {"rows": rows, "by_category": cats, "n_by_category": n, "paired": diffs, "excluded": result.excluded}


def locomo(args) -> dict:
    from glong_lib.evaluation.locomo import answer_coverage, evaluate_variants, extracted_triples, locomo_units
    from glong_lib.evaluation.retrieval import merge_evaluations
    from glong_lib.extraction import load_extractor
    from glong_lib.models import load_encoder

    path = real_split(args.split)
    extractor = load_extractor(args.profile)
    baseline = load_extractor(args.profile, adapter=args.baseline_adapter) if args.baseline_adapter else None
    encoder = load_encoder(args.profile)
    print(f"LoCoMo split '{args.split}' ({', '.join(describe(args.split).get('samples', []))})")
    out = {"data": describe(args.split), "paper": asdict(PAPER), "recommended": asdict(RECOMMENDED),
           "lambdas": {f"{lam:g}": half_life(lam) for lam in LAMBDAS}}
    print("recency half-lives:", out["lambdas"])
    for memory_from in args.memory_from:
        start = time.perf_counter()
        _, units, questions, _ = locomo_units(path, memory_from, args.conversations, args.max_turns)
        triples = {c.id: extracted_triples(c, extractor) for c in units}
        cover = answer_coverage(questions, units, triples)
        print(f"\n[{memory_from}] evidence turns whose answer words survive: in the units {cover['units']:.3f}, "
              f"in their triples {cover['triples']:.3f}, with the edge's date {cover['triples + date']:.3f} "
              f"({cover['evidence turns']} evidence turns)")
        if baseline is not None:  # the same share with an earlier adapter's triples: what the extractor changed
            cover["triples, baseline adapter"] = answer_coverage(
                questions, units, {c.id: extracted_triples(c, baseline) for c in units})["triples"]
            print(f"[{memory_from}] ... in the triples of the baseline adapter {args.baseline_adapter.name}: "
                  f"{cover['triples, baseline adapter']:.3f}")
        common = dict(ks=(1, 3, 5), conversations=args.conversations, max_turns=args.max_turns,
                      extractor=extractor, memory_from=memory_from, progress=False)
        result = merge_evaluations(evaluate_variants(path, encoder, as_settings(paper_variants(memory_from)), **common),
                                   evaluate_variants(path, encoder, as_settings(recommended_variants()),
                                                     keep_unextracted=True, **common))
        out[memory_from] = {"answer coverage": cover, **report(result, memory_from, time.perf_counter() - start)}
    return out


def main(argv=None) -> int:
    p = bench_parser(__doc__)
    p.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000, 100_000])
    p.add_argument("--queries", type=int, default=100, help="queries timed per size")
    p.add_argument("--memory-from", nargs="*", default=["observations", "turns"], choices=["observations", "turns"])
    p.add_argument("--conversations", type=int, default=None, help="LoCoMo: the first N conversations")
    p.add_argument("--max-turns", type=int, default=None, help="LoCoMo: the first N turns of each")
    p.add_argument("--profile", default="offline")
    add_split_option(p, "locomo", "locomo-dev", "LoCoMo part")
    p.add_argument("--baseline-adapter", type=Path, default=None,
                   help="LoCoMo: also report the answer-word coverage of this adapter's triples (before/after)")
    p.add_argument("--skip-latency", action="store_true")
    p.add_argument("--skip-locomo", action="store_true")
    p.add_argument("--omp-threads", type=int, default=1, help="faiss OpenMP threads (0: faiss default)")
    args = p.parse_args(argv)
    if args.quick:  # latency at the smallest size only: no model, no real data
        args.sizes, args.queries, args.skip_locomo = [1_000], 20, True
    if args.omp_threads:
        import faiss

        faiss.omp_set_num_threads(args.omp_threads)
    out: dict = {}
    if not args.skip_locomo:
        if real_split(args.split):
            out["locomo"] = locomo(args)
        else:
            print(f"LoCoMo: skipped (GLONG_REAL_DATA is not set or holds no split '{args.split}')")
    if not args.skip_latency:
        print("\nQuery latency, paper settings (anchors 5, 1 hop, pool 5, K 3), fake 384-d encoder:")
        out["latency"] = latency(args.sizes, args.queries)
    locomo_file = real_split(args.split) if "locomo" in out else None
    write_results(args, out, "bench_retrieval", inputs=[locomo_file] if locomo_file else [],
                  resamples={"95% CI": "questions (bootstrap)"} if locomo_file else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
