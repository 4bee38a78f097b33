"""Does ``glong train-extractor`` reproduce the shipped adapter? Re-train it (or point at a folder
re-trained earlier), then compare it with ``data/extractor/offline`` three ways:

1. **Weights**: the largest absolute difference over the LoRA tensors, and how many tensors are
   bit-identical (CPU training with the same seed and recipe is expected to be; a different BLAS or
   thread count can change the last bits, which greedy decoding may or may not notice).
2. **Extractions**: on every gold turn of ``data/conversations``, how many raw outputs are identical
   and how many differ, with the first few differing turns printed.
3. **Scores**: the extraction measures of both (P/R/F1 exact and partial, fact detection F1,
   unparseable rate) on those turns, and the paired difference in exact F1 with a bootstrap
   interval over turns.

``--quick`` compares the shipped adapter with itself on 4 turns (a check of the comparison: nothing
may differ). Run time on 2 cores: re-training takes about 20-40 minutes (``--adapter`` skips it); extracting
492 turns with each adapter about 4 minutes.

    python -m benchmarks.bench_retrained_adapter                         # re-train, compare, write results/
    python -m benchmarks.bench_retrained_adapter --adapter build/adapter-offline
    python -m benchmarks.bench_retrained_adapter --quick    # the shipped adapter against itself, 4 turns
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

from benchmarks._common import bench_parser, write_results
from glong_lib import extraction as ex
from glong_lib.evaluation import extraction as EX
from glong_lib.evaluation.metrics import prf
from glong_lib.io import data_path
from glong_lib.loaders import load_conversations
from glong_lib.models import seed_everything

SHIPPED = data_path() / "extractor" / "offline"
WEIGHTS = "adapter_model.safetensors"
MEASURES = ["precision exact", "recall exact", "f1 exact", "f1 partial", "fact detection f1", "unparseable rate"]


def weight_difference(a: Path, b: Path) -> dict:
    """Compare two adapters' LoRA tensors: count, identical count, largest absolute difference."""
    left, right = load_file(str(a / WEIGHTS)), load_file(str(b / WEIGHTS))
    if set(left) != set(right):
        return {"tensors": len(left), "same names": False}
    diffs = [float(np.max(np.abs(left[k].astype(np.float64) - right[k].astype(np.float64)))) for k in left]
    return {"tensors": len(left), "same names": True, "identical tensors": sum(d == 0.0 for d in diffs),
            "max abs difference": max(diffs)}


def per_turn_f1_difference(turns, first, second, seed: int, draws: int = 1000) -> dict:
    """Exact-match F1 of ``second`` minus ``first`` on the same turns, with a 95% bootstrap interval
    over turns (pooled counts recomputed in every draw)."""
    def counts(results):
        rows = []
        for turn, r in zip(turns, results):
            pred, gold = {EX.triple_key(t) for t in r.triples}, {EX.triple_key(t) for t in turn.triples}
            rows.append((len(pred & gold), len(pred), len(gold)))
        return np.array(rows, dtype=float)

    def f1(c):
        return prf(*c.sum(axis=0))["f1"]

    a, b = counts(first), counts(second)
    rng = np.random.default_rng(seed)
    samples = [f1(b[i]) - f1(a[i]) for i in (rng.integers(0, len(turns), len(turns)) for _ in range(draws))]
    return {"difference": round(f1(b) - f1(a), 4),
            "interval": [round(float(np.percentile(samples, 2.5)), 4), round(float(np.percentile(samples, 97.5)), 4)]}


def main(argv=None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--adapter", type=Path, default=None,
                        help="a re-trained adapter folder (default: re-train one now into a temporary folder)")
    parser.add_argument("--n-gold", type=int, default=None, help="score this many gold turns (default: all)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--show", type=int, default=5, help="print this many differing turns")
    args = parser.parse_args(argv)
    seed_everything(args.seed)
    adapter = args.adapter
    if adapter is None and args.quick:  # the smoke run: the shipped adapter against itself, on 4 turns
        adapter, args.n_gold = SHIPPED, args.n_gold or 4
    if adapter is None:
        adapter = Path(tempfile.mkdtemp(prefix="glong-retrain-")) / "adapter"   # as `glong train-extractor --out`
        ex.train_extractor(out=adapter, seed=args.seed, force=True)
    weights = weight_difference(SHIPPED, adapter)
    print("weights:", weights)

    turns = EX.gold_turns(load_conversations(data_path() / "conversations"), args.n_gold, seed=args.seed)
    reports, outputs = {}, {}
    for name, folder in (("shipped", SHIPPED), ("re-trained", adapter)):
        model = ex.load_extractor("offline", adapter=folder)
        reports[name], outputs[name] = EX.evaluate_extractor(model, turns, progress=True)
        del model
    differing = [i for i, (s, r) in enumerate(zip(outputs["shipped"], outputs["re-trained"])) if s.output != r.output]
    for i in differing[:args.show]:
        print(f"\n{turns[i].speaker}: {turns[i].text}\n  shipped:    {outputs['shipped'][i].output[:120]!r}"
              f"\n  re-trained: {outputs['re-trained'][i].output[:120]!r}")
    scores = {name: {m: report[m] for m in MEASURES} for name, report in reports.items()}
    paired = per_turn_f1_difference(turns, outputs["shipped"], outputs["re-trained"], args.seed)
    results = {"weights": weights, "turns": len(turns), "identical outputs": len(turns) - len(differing),
               "differing outputs": len(differing), "scores": scores,
               "f1 exact, re-trained minus shipped": paired}
    print("\nturns:", len(turns), "| identical outputs:", results["identical outputs"], "| differing:", len(differing))
    for name, row in scores.items():
        print(f"{name:<11}", row)
    print("f1 exact, re-trained minus shipped:", paired)
    write_results(args, results, "bench_retrained_adapter", inputs=[SHIPPED, adapter],
                  resamples={"f1 exact, re-trained minus shipped": "gold turns, 1000 draws"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
