"""Triple extraction: fine-tuned vs zero-shot quality, and batched throughput.

1. **Shipped gold** (always): the default cached adapter (trained on ``data/triple_pairs.jsonl`` on
   first use) and the zero-shot base model on a seeded sample of gold turns of
   ``data/conversations`` (first person resolved to the speaker): P/R/F1 exact and normalised,
   partial F1, fact detection F1, relation accuracy, unparseable rate.
2. **Throughput**: utterances per second of the fine-tuned extractor, batched greedy decoding
   (the prompts' shared start cached once), at a few batch sizes, in float32 (the default) and
   bfloat16 (``load_extractor(bfloat16=True)``), on the shipped gold turns and, with
   ``GLONG_REAL_DATA``, on LoCoMo turns (longer: about 75 prompt tokens against 55). Aim: 5 or more
   on 2 cores. How many bfloat16 answers differ from float32 is printed beside its speed.
3. **PersonaExt** (only when ``GLONG_REAL_DATA`` points at the real data folder): an adapter
   trained (the profile's default recipe) on 512 PersonaExt training utterances, both models
   scored on a held-out dev sample (split by utterance; subjects stay "i", as in the data).

Timings are for this machine and its load; say which when you report them.

Run time on 2 shared cores: ``--quick`` (the smoke profile's extractor, trained 6 steps and cached;
4 gold turns, throughput on 4 utterances at batch size 4; no PersonaExt) about 1 minute cold, 30 s
warm; the full run about 30 minutes with the adapter cached (PersonaExt trains one more).

    python -m benchmarks.bench_extraction                      # gold (all 492 turns) + throughput (+ PersonaExt)
    python -m benchmarks.bench_extraction --n-gold 40 --json extraction.json
    python -m benchmarks.bench_extraction --parts throughput --batch-sizes 8 16 32   # on a quiet machine
    python -m benchmarks.bench_extraction --quick --json extraction.json
"""

from __future__ import annotations

import os
import sys
import time

from benchmarks._common import bench_parser, real_split, write_results
from glong_lib import extraction as ex
from glong_lib.config import get_profile
from glong_lib.evaluation import extraction as EX
from glong_lib.io import data_path
from glong_lib.loaders import load_conversations

SHOWN = ("f1 exact", "f1 norm", "precision norm", "recall norm", "f1 partial", "fact detection f1",
         "relation accuracy", "unparseable rate", "utterances/s")


def compare(models: dict, run) -> dict:
    """Score every model with ``run(model) -> report`` and print one row per model."""
    reports = {name: run(model) for name, model in models.items()}
    print(f"{'model':<12}" + "".join(f"{k:>18}" for k in SHOWN))
    for name, r in reports.items():
        print(f"{name:<12}" + "".join(f"{r[k]:>18}" for k in SHOWN))
    return reports


def throughput(extractor, utterances: list[str], batch_sizes: list[int], label: str) -> tuple[dict, list]:
    """Utterances per second at each batch size, and the answers of the last run."""
    out, answers = {}, []
    for bs in batch_sizes:
        start = time.perf_counter()
        answers = extractor.generate(utterances, batch_size=bs, progress=False)
        out[bs] = round(len(utterances) / (time.perf_counter() - start), 2)
        print(f"{label:<28} batch size {bs:>3}: {out[bs]:6.2f} utterances/s ({len(utterances)} utterances)")
    return out, answers


def throughput_sets(profile, gold_turns, n: int, batch_sizes: list[int]) -> dict:
    """Throughput in float32 and bfloat16 on the shipped gold turns and (real data) LoCoMo turns."""
    sets = {"shipped gold turns": [t.text for t in gold_turns][:n]}
    locomo = real_split("locomo-select")  # turns of its first conversation (conv-26)
    if locomo is not None:
        from glong_lib.loaders import load_locomo

        conversations, _ = load_locomo(locomo)
        sets["LoCoMo turns"] = [t.text for t in conversations[0].turns()][:n]
    results: dict = {}
    answers: dict[str, list] = {name: [] for name in sets}  # float32's, then bfloat16's
    for bfloat16 in (False, True):
        model = ex.load_extractor(profile, bfloat16=bfloat16)
        dtype = "bfloat16" if bfloat16 else "float32"
        for name, utterances in sets.items():
            results[f"{name}, {dtype}"], last = throughput(model, utterances, batch_sizes, f"{name}, {dtype}")
            answers[name].append(last)
    for name, (fp32, bf16) in answers.items():
        differing = results[f"{name}, bfloat16 answers differing"] = sum(a != b for a, b in zip(fp32, bf16))
        print(f"{name}: bfloat16 answers differ from float32 on {differing} of {len(fp32)}")
    return results


#: ``--quick``: the smallest run that still loads and runs every model (the smoke profile's adapter).
QUICK = dict(n_gold=4, throughput_n=4, batch_sizes=[4], parts=["gold", "throughput"])


def parse_args(argv=None):
    parser = bench_parser(__doc__)
    parser.add_argument("--profile", default="offline")
    parser.add_argument("--n-gold", type=int, default=None, help="gold turns scored (seeded sample; default all)")
    parser.add_argument("--parts", nargs="*", default=["gold", "throughput", "personaext"],
                        choices=["gold", "throughput", "personaext"], help="which parts to run")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--throughput-n", type=int, default=64, help="utterances timed per batch size")
    parser.add_argument("--batch-sizes", type=int, nargs="*", default=[8, 16, 32])
    parser.add_argument("--real-train", type=int, default=512, help="PersonaExt training utterances")
    parser.add_argument("--real-dev", type=int, default=200, help="PersonaExt dev utterances scored")
    parser.add_argument("--real-steps", type=int, default=None, help="PersonaExt training steps (default: profile's)")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    if args.quick:
        vars(args).update(QUICK)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    profile = get_profile(args.profile).smoke() if args.quick else get_profile(args.profile)
    results: dict = {"machine": f"{os.cpu_count()} CPUs", "profile": profile.name + (" (smoke)" if args.quick else "")}

    turns = EX.gold_turns(load_conversations(data_path("conversations")), args.n_gold, seed=args.seed)
    # the zero-shot baseline is scored by the gold and PersonaExt parts only
    zero = ex.load_extractor(profile, zero_shot=True) if {"gold", "personaext"} & set(args.parts) else None
    if "gold" in args.parts or "throughput" in args.parts:
        start = time.perf_counter()
        fine = ex.load_extractor(profile)
        results["adapter ready s"] = round(time.perf_counter() - start, 1)
    if "gold" in args.parts:
        print(f"== shipped gold (data/conversations): {len(turns)} turns, "
              f"{sum(len(t.triples) for t in turns)} gold triples, {sum(not t.triples for t in turns)} with none")
        models = {"zero-shot": zero, "fine-tuned": fine}
        results["gold"] = compare(models, lambda m: EX.evaluate_extractor(m, turns, args.batch_size, progress=False)[0])

    if "throughput" in args.parts:
        print("\n== throughput (fine-tuned, greedy, batched)")
        results["utterances/s by batch size"] = throughput_sets(profile, turns, args.throughput_n,
                                                                args.batch_sizes)

    if "personaext" in args.parts and not ex.personaext_path():
        print("\n(PersonaExt skipped: set GLONG_REAL_DATA to the real data folder)")
    elif "personaext" in args.parts:
        print("\n== PersonaExt (GLONG_REAL_DATA)")
        pairs = ex.load_pairs(ex.personaext_path())
        train, dev = ex.split_pairs(pairs, 0.1, args.seed, max_train=args.real_train, max_dev=args.real_dev)
        start = time.perf_counter()
        adapter = ex.train_extractor(train, profile, max_steps=args.real_steps, seed=args.seed)
        results["personaext train s"] = round(time.perf_counter() - start, 1)
        real_models = {"zero-shot": zero, "fine-tuned": ex.load_extractor(profile, adapter=adapter)}
        results["personaext"] = compare(
            real_models, lambda m: EX.evaluate_on_pairs(m, dev, args.batch_size, progress=False)[0])
        print(f"trained on {len(train)} utterances, scored on {len(dev)} held-out utterances")

    write_results(args, results, "bench_extraction",
                  inputs=[data_path("conversations"), *([ex.personaext_path()] if "personaext" in args.parts
                                                        and ex.personaext_path() else [])])
    return 0


if __name__ == "__main__":
    sys.exit(main())
