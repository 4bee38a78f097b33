"""LoCoMo answers from retrieved memory (the paper's Table 3 counterpart; issue 28): does finding the
evidence turn into answering the question?

Each question of LoCoMo's categories 1-4 is answered by the offline generator (SmolLM2-135M, greedy,
at most 16 tokens, first line) from the top 5 memories of each method, shown as the sentence each
came from with its session's date: G-Long with the recommended settings, the same edges with no
graph step (``flat``), dense retrieval over the raw turns, and no memory. Memory from LoCoMo's
observation sentences with Eq. 3 weights, as ``bench_graph.py``; the questions are those of the
**report split** (``--split locomo-report``: conv-42, 43; nothing was chosen on them). Scored with
LoCoMo's answer F1 (``evaluation.answers``), per category, each method minus no memory and minus
``flat``, paired bootstrap 95% intervals over questions (the report split has two conversations, too
few to resample: ``evaluation.intervals``; ``AnswerEvaluation.unit`` says which unit was resampled).

Needs ``GLONG_REAL_DATA`` (LoCoMo) and the cached extractor and salience readings (``bench_graph``
warms them); about 0.5-1 s per answer on 2 cores. ``--quick`` answers the shipped probes with the
model-free echo generator instead (seconds), so the script is tested in CI.

    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_answers --json build/answers.json
    python -m benchmarks.bench_answers --quick
"""

from __future__ import annotations

import sys
import time
from typing import Optional

from benchmarks._common import add_split_option, bench_parser, real_split, run_locomo_or_probes
from glong_lib.config import RECOMMENDED_RETRIEVAL

#: The methods compared, each a retrieval method with its settings, by display name.
VARIANTS = {"G-Long (recommended)": ("glong", RECOMMENDED_RETRIEVAL), "flat": ("flat", RECOMMENDED_RETRIEVAL),
            "dense over turns": ("dense-turns", RECOMMENDED_RETRIEVAL)}
#: The report split of ``bench_graph.py``: the development conversations after the first three.
K = 5


def report(result, seconds: float) -> dict:
    """Print and return the F1 table against no memory and against ``flat``."""
    from glong_lib.evaluation.answers import NO_MEMORY

    rows = result.table(baseline=NO_MEMORY)
    print(f"95% intervals: paired bootstrap over {result.unit}s")
    print(f"{'category':<12}{'method':<24}{'n':>5}{'F1':>7}{'95% CI':>16}{'- no memory [95% CI]':>26}")
    for r in rows:
        diff = (f"{r['- ' + NO_MEMORY]:+.3f} [{r['diff low']:+.3f}, {r['diff high']:+.3f}]"
                if "- " + NO_MEMORY in r else "")
        ci = f"[{r['ci low']:.3f}, {r['ci high']:.3f}]"
        print(f"{r['category']:<12}{r['method']:<24}{r['questions']:>5}{r['F1']:>7.3f}{ci:>16}{diff:>26}")
    against_flat = {}
    for name in result.methods:
        if name not in ("flat", NO_MEMORY):
            d = result.compare(name, "flat")
            against_flat[name] = {k: round(d[k], 4) for k in ("mean_diff", "ci_low", "ci_high")}
            print(f"{name} - flat: F1 {d['mean_diff']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]")
    print(f"{seconds:.0f} s")
    table = [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()} for r in rows]
    return {"interval unit": result.unit, "table": table, "minus flat": against_flat, "seconds": round(seconds)}


def locomo(args) -> dict:
    from glong_lib.evaluation.answers import answer_questions
    from glong_lib.evaluation.locomo import locomo_units, unit_retrievers
    from glong_lib.extraction import load_extractor
    from glong_lib.generation import make_generator
    from glong_lib.models import load_encoder, seed_everything
    from glong_lib.salience import load_scorer

    seed_everything(42)
    start = time.perf_counter()
    path = real_split(args.split)
    dialogues, units, questions, _ = locomo_units(path, "observations")
    kept = [c.id for c in dialogues]
    if args.conversations:
        kept = kept[: args.conversations]
    questions = [q for q in questions if q.conversation in kept]
    if args.questions:
        questions = questions[: args.questions]
    retrievers = unit_retrievers(dialogues, units, questions, load_encoder(args.profile), VARIANTS, K,
                                 extractor=load_extractor(args.profile), keep_unextracted=True,
                                 scorer=load_scorer(args.profile))
    generator = make_generator(args.profile)
    result = answer_questions(retrievers, questions, dialogues, generator, k=K, units=units)
    print(f"LoCoMo split {args.split} ({', '.join(kept)}): {len(questions)} questions, generator {generator.name}")
    return {"conversations": kept, "rows": result.rows, **report(result, time.perf_counter() - start)}


def probes(args) -> dict:
    """The CI-sized run: the shipped probes, gold triples, the model-free echo generator."""
    from glong_lib.evaluation.answers import QA_MEMORY_HEADER, answer_questions
    from glong_lib.evaluation.retrieval import probe_retrievers
    from glong_lib.generation import MemoryEchoGenerator
    from glong_lib.io import data_path
    from glong_lib.loaders import load_conversations, load_probes
    from glong_lib.models import load_encoder

    start = time.perf_counter()
    convs = load_conversations(data_path("conversations"))
    qs = load_probes(data_path("probes.jsonl"))
    retrievers = probe_retrievers(qs, convs, load_encoder(args.profile), k=K, variants=VARIANTS)
    echo = MemoryEchoGenerator(headers=(QA_MEMORY_HEADER.split("{")[0],))
    result = answer_questions(retrievers, qs, convs, echo, k=K, progress=False)
    print(f"probes: {len(qs)} questions, model-free echo generator (answers with the first memory line)")
    return report(result, time.perf_counter() - start)


def main(argv: Optional[list[str]] = None) -> int:
    p = bench_parser(__doc__)
    p.add_argument("--conversations", type=int, default=None, help="only the first N report conversations")
    p.add_argument("--questions", type=int, default=None, help="only the first N questions")
    p.add_argument("--profile", default="offline")
    add_split_option(p, "locomo", "locomo-report", "LoCoMo questions")
    return run_locomo_or_probes(p.parse_args(argv), locomo, probes, "bench_answers",
                                {"95% CI": "questions (bootstrap)"})


if __name__ == "__main__":
    sys.exit(main())
