"""End-to-end MSC benchmark: every method in one run, the paper's Table 1 and Table 6 layouts,
and G-Long against long context (prompt-token reduction; BLEU-2 and ROUGE-L differences on the
paper's nlg-eval scale and the smoothed one, with paired 95% intervals over conversations and the
number of replies the paper's difference would need).

    GLONG_REAL_DATA=../shared/data python benchmarks/bench_msc.py                 # 20 real MSC conversations
    python benchmarks/bench_msc.py --conversations 3 --turns-per-session 2        # a CPU-sized run
    python benchmarks/bench_msc.py --tokens-only --turns-per-session 0            # prompt tokens of every turn, no generation

On the real MSC (``msc4_valid.jsonl``, sessions 1-4) session 1 fills memory and sessions 2-4 are
scored. G-Long's triples come from the fine-tuned extractor there (the samples carry gold ones).
``--tokens-only`` replaces the generator by the model-free ``MemoryEchoGenerator`` counting with
the generator's own tokenizer and chat template: prompts never depend on generated replies (the
gold reply enters the context), so the prompt-token figures are exactly those of a full run.
Aim (issue 7): G-Long at least 60% fewer prompt tokens than long context (the paper: 63.0%).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

from glong_lib.agent import ALL_METHODS, TripleSource, make_agents
from glong_lib.config import get_profile
from glong_lib.evaluation.msc import run_msc_evaluation, sample_conversations
from glong_lib.generation import LocalChatGenerator, MemoryEchoGenerator
from glong_lib.loaders import load_conversations
from glong_lib.models import seed_everything
from glong_lib.notebook_runner import REPO_ROOT as REPO

PAPER_REDUCTION = 0.630  # 1 - 10,380 / 28,058 (Table 6, MSC)


def parse_args(argv=None):
    real = os.environ.get("GLONG_REAL_DATA")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--msc", type=Path, default=Path(real) / "msc" / "msc4_valid.jsonl" if real else None,
                   help="MSC jsonl or a folder of sample conversations (default: $GLONG_REAL_DATA's MSC, else the samples)")
    p.add_argument("--conversations", type=int, default=20 if real else None, help="conversations (default 20 real)")
    p.add_argument("--turns-per-session", type=int, default=2,
                   help="first N user turns of each session (default 2: about 2 s per reply on 2 cores; 0 = all)")
    p.add_argument("--max-new-tokens", type=int, default=24, help="reply length cap")
    p.add_argument("--methods", nargs="+", default=list(ALL_METHODS), choices=ALL_METHODS)
    p.add_argument("--triples", choices=("auto", "gold", "model"), default="auto")
    p.add_argument("--no-salience", action="store_true", help="weights 1.0 (skips the summarizer)")
    p.add_argument("--tokens-only", action="store_true", help="count prompt tokens exactly, generate nothing")
    p.add_argument("--smoke", action="store_true", help="smoke artifacts (extractor/summarizer trained a few steps)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json", type=Path, default=None, help="write all results (every reply) here")
    return p.parse_args(argv)


def machine() -> str:
    import torch

    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch threads "
            f"{torch.get_num_threads()}, load average {load[0]:.1f} at start")


def print_rows(rows):
    from glong_lib.commands.common import print_table

    print_table(rows)
    print()


def main(argv=None) -> int:
    args = parse_args(argv)
    seed_everything(args.seed)
    path = args.msc or REPO / "data" / "conversations"
    convs = sample_conversations(load_conversations(path), args.conversations, seed=args.seed)
    mode = args.triples
    if mode == "auto":
        mode = "gold" if all(any(t.triples for t in c.turns()) for c in convs) else "model"
    local = LocalChatGenerator(max_new_tokens=args.max_new_tokens)
    generator = MemoryEchoGenerator(tokenizer=local.tokenizer, context_window=local.context_window,
                                    max_new_tokens=args.max_new_tokens) if args.tokens_only else local
    profile = get_profile("offline").smoke() if args.smoke else get_profile("offline")
    source = TripleSource(mode, score=not args.no_salience, profile=profile)
    agents = make_agents(generator, args.methods, source=source)
    print(f"# bench_msc: {len(convs)} conversation(s) from {path.name}, seed {args.seed}; triples: {mode}; "
          f"salience: {not args.no_salience}; generator: {generator.name}; turns/session: "
          f"{args.turns_per_session or 'all'}; max new tokens {args.max_new_tokens}")
    print(f"# machine: {machine()}\n")
    start = time.perf_counter()
    result = run_msc_evaluation(agents, convs, turns_per_session=args.turns_per_session or None)
    total = time.perf_counter() - start
    result.settings.update({"data": path.name, "triples": mode, "generator": generator.name,
                            "tokens_only": args.tokens_only, "seconds": total})

    if not args.tokens_only:
        print("Table 1 layout (x100), the paper's nlg-eval scale")
        print_rows(result.table1())
        print("Table 1 layout (x100), smoothed sentence BLEU and rouge_score ROUGE-L")
        print_rows(result.table1(scale="smoothed"))
        print("Averages (x100, B-1..B-4, ROUGE-L)")
        print_rows([{k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()} for r in result.summary()])
    print("Table 6 layout (prompt tokens per conversation; $ per 1K conversations at gpt-4o-mini prices)")
    print_rows(result.tokens())

    report = {}
    if {"G-Long", "Long context"} <= set(result.methods):
        cmp = result.compare("G-Long", "Long context")
        red = cmp["prompt-token reduction"]
        print(f"G-Long vs long context over {cmp['conversations']} conversation(s):")
        print(f"  prompt-token reduction {100 * red:.1f}%  (paper 63.0%; aim >= 60%: "
              f"{'met' if red >= 0.60 else 'NOT met'})")
        if not args.tokens_only:
            for m, label in (("nlg_b2", "BLEU-2 (nlg-eval)"), ("nlg_rougeL", "ROUGE-L (nlg-eval)"),
                             ("b2", "BLEU-2 (smoothed)"), ("rougeL", "ROUGE-L (rouge_score)")):
                c = cmp[m]
                print(f"  {label}: G-Long {c['method']:.2f} vs long context {c['baseline']:.2f}; difference "
                      f"{c['diff mean']:+.2f}, 95% CI [{c['ci low']:+.2f}, {c['ci high']:+.2f}] (sd {c['diff sd']:.2f}; "
                      f"G-Long higher in {c['method wins']}/{cmp['conversations']}); the paper's "
                      f"{c['paper difference']:+.2f} needs about {c['replies needed']} paired replies "
                      f"(this run: {cmp['replies']})")
        report["glong_vs_long_context"] = cmp
    print(f"\nwall time {total:.0f} s (shared, noisy machine)")
    if args.json:
        data = result.to_dict()
        data["comparison"] = report
        tmp = args.json.with_name(args.json.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
        tmp.replace(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
