"""Salience benchmark: does the summarizer's cross-attention weight track what the summary says?

Trains (or loads from the cache) the offline summarizer, then on the held-out summary pairs
reports: ROUGE-L of its summaries beside the best fixed sentence, the AUC of triple weight against
"subject or object appears in the reference summary" beside uniform / random / length-only
weights, the correlation of weight with span length, and scoring speed.

    python benchmarks/bench_salience.py                      # the default (cached) summarizer
    python benchmarks/bench_salience.py --d-model 128 --layers 2 --steps 600 --inputs triples
    python benchmarks/bench_salience.py --arch minilm-ed --freeze --steps 200
    python benchmarks/bench_salience.py --smoke

Timings on a shared 2-core machine are noisy; run with OMP_NUM_THREADS=1 when other jobs run.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np

from glong_lib import summarizer as S
from glong_lib.evaluation import summaries as ZE
from glong_lib.evaluation.salience import evaluate_salience
from glong_lib.salience import SalienceScorer


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    d = S.DEFAULT_CONFIG
    p.add_argument("--smoke", action="store_true", help="the tiny smoke summarizer")
    p.add_argument("--arch", default=d.arch, choices=S.ARCHS)
    p.add_argument("--d-model", type=int, default=d.d_model)
    p.add_argument("--layers", type=int, default=d.num_layers)
    p.add_argument("--heads", type=int, default=d.num_heads)
    p.add_argument("--d-ff", type=int, default=d.d_ff)
    p.add_argument("--steps", type=int, default=d.steps)
    p.add_argument("--batch-size", type=int, default=d.batch_size)
    p.add_argument("--lr", type=float, default=d.learning_rate)
    p.add_argument("--inputs", nargs="+", default=list(d.inputs), choices=["triples", "dialogue"])
    p.add_argument("--permutations", type=int, default=d.permutations, help="shuffled copies of each triple list")
    p.add_argument("--freeze", action="store_true", help="minilm-ed: train only cross-attention")
    p.add_argument("--no-rouge", action="store_true", help="skip the ROUGE report (faster)")
    p.add_argument("--causal", action="store_true",
                   help="also score with the decoder-only alternative (SmolLM2 attention; slower)")
    p.add_argument("--json", default=None, help="also write the results to this JSON file")
    return p.parse_args()


def main() -> None:
    args = parse_args()
    config = S.SMOKE_CONFIG if args.smoke else replace(
        S.DEFAULT_CONFIG, arch=args.arch, d_model=args.d_model, num_layers=args.layers, num_heads=args.heads,
        d_ff=args.d_ff, steps=args.steps, batch_size=args.batch_size, learning_rate=args.lr,
        inputs=tuple(args.inputs), freeze=args.freeze, permutations=args.permutations)
    start = time.perf_counter()
    path = S.offline_summarizer_dir(config=config)
    meta = S.summarizer_meta(path)
    tok, model = S.load_seq2seq(path)
    print(f"summarizer {path.name}: {meta['examples']} training pairs, {config.steps} steps, "
          f"trained in {meta['seconds']} s, final loss {meta['loss_curve'][-1] if meta['loss_curve'] else '-'} "
          f"(ready after {time.perf_counter() - start:.0f} s)")
    train, test = S.split_summary_pairs(S.shipped_summary_pairs(), config.n_test, config.seed)
    scorer = SalienceScorer(tok, model)
    t0 = time.perf_counter()
    ev = evaluate_salience(scorer, test, seed=config.seed)
    per_pair = (time.perf_counter() - t0) / len(test)
    table = ev.auc_table()
    lengths = np.array(ev.methods["length only"])
    corr = float(np.corrcoef(ev.methods["summarizer attention"], lengths)[0, 1])
    result = {"summarizer": path.name, "config": meta["config"], "held_out_pairs": len(test),
              "triples": len(ev.labels), "positives": int(sum(ev.labels)), "auc": table,
              "corr_weight_length": round(corr, 3), "seconds_per_pair": round(per_pair, 2),
              "train_seconds": meta["seconds"], "example_summaries": ev.summaries[:3]}
    if args.causal:
        from glong_lib.salience import load_causal_scorer

        t0 = time.perf_counter()
        alt = evaluate_salience(load_causal_scorer(), test, seed=config.seed, method="SmolLM2 attention (alternative)")
        result["auc"].insert(1, alt.auc_table()[0])
        result["causal_seconds_per_pair"] = round((time.perf_counter() - t0) / len(test), 2)
        result["causal_corr_weight_length"] = round(float(np.corrcoef(
            alt.methods["SmolLM2 attention (alternative)"], alt.methods["length only"])[0, 1]), 3)
        result["causal_example_summaries"] = alt.summaries[:3]
    if not args.no_rouge:
        result["rouge"] = ZE.rouge_report(tok, model, test, train, inputs=config.inputs)
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
