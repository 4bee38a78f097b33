"""End-to-end MSC benchmark: every method in one run, the paper's Table 1 and Table 6 layouts,
and G-Long against long context (prompt-token reduction; BLEU-2 and ROUGE-L differences on the
paper's nlg-eval scale and the smoothed one, with paired 95% intervals over conversations and the
number of replies the paper's difference would need).

    GLONG_REAL_DATA=../shared/data python benchmarks/bench_msc.py                 # 20 real MSC conversations
    python benchmarks/bench_msc.py --conversations 3 --turns-per-session 2        # a CPU-sized run
    python benchmarks/bench_msc.py --tokens-only --turns-per-session 0            # prompt tokens of every turn, no generation
    python benchmarks/bench_msc.py --reply-probe 9 --methods glong                # why replies are cut at their first line

Every method of ``agent.ALL_METHODS`` runs by default (the baselines, the summary-memory baseline
whose memory the generator writes, G-Long and its ablations: importance, recency, the rerank
(Table 14), L = 2 hops), plus two G-Long variants that change the prompt, not the memory: the
reference code's ranked memory lines, and the context never reset between sessions (the reference
code's ``context_scope="dialogue"``). Each pair of interest is compared with a paired bootstrap over
conversations. ``--checkpoint FILE`` appends every finished (conversation, method) and resumes there.

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

from glong_lib.agent import ALL_METHODS, GLongAgent, TripleSource, make_agents
from glong_lib.config import get_profile, with_overrides
from glong_lib.evaluation.msc import TIE, MSCResults, run_msc_evaluation, sample_conversations
from glong_lib.generation import LocalChatGenerator, MemoryEchoGenerator
from glong_lib.io import Checkpoint
from glong_lib.loaders import load_conversations
from glong_lib.models import seed_everything
from glong_lib.notebook_runner import REPO_ROOT as REPO

PAPER_REDUCTION = 0.630  # 1 - 10,380 / 28,058 (Table 6, MSC)

RANKED = "G-Long, ranked memory lines"
DIALOGUE = "G-Long, context never reset"

#: The scores each pair is compared on: the paper's scale (tokenised nlg-eval), then the smoothed ones.
PAIR_METRICS = (("nlg_b2", "B-2"), ("nlg_rougeL", "R-L"), ("b2", "B-2 sm."), ("rougeL", "R-L sm."))

#: (method, baseline, what the pair measures): each gets a paired-bootstrap line.
PAIRS = [
    ("G-Long", "Long context", "the paper's Table 1 headline"),
    ("G-Long", "No history", "memory at all"),
    ("G-Long", "Dense RAG", "triples vs raw turns"),
    ("G-Long", "BM25 RAG", "triples vs raw turns, lexical"),
    ("G-Long", "Summary memory", "extracted triples vs LLM-written summaries"),
    ("G-Long", "G-Long w/o importance", "Eq. 3 weights in Eq. 4"),
    ("G-Long", "G-Long w/o recency", "the recency term"),
    ("G-Long", "No rerank (top-5)", "Table 14: rerank top-3 vs semantic top-5"),
    ("G-Long", "G-Long L=2", "hops L = 1 vs 2"),
    ("G-Long", RANKED, "paper's memory lines vs the reference code's"),
    ("G-Long", DIALOGUE, "context: current session (paper) vs never reset (reference code)"),
]


def parse_args(argv=None):
    real = os.environ.get("GLONG_REAL_DATA")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--msc", type=Path, default=Path(real) / "msc" / "msc4_valid.jsonl" if real else None,
                   help="MSC jsonl or a folder of sample conversations (default: $GLONG_REAL_DATA's MSC, else the samples)")
    p.add_argument("--conversations", type=int, default=20 if real else None, help="conversations (default 20 real)")
    p.add_argument("--turns-per-session", type=int, default=2,
                   help="first N user turns of each session (default 2: about 2 s per reply on 2 cores; 0 = all)")
    p.add_argument("--max-new-tokens", type=int, default=24,
                   help="reply limit (default 24: with the first-line stop, replies end on their own first)")
    p.add_argument("--full-replies", action="store_true",
                   help="no first-line stop or cut (the paper's setting; see --reply-probe for why it is off here)")
    p.add_argument("--reply-probe", type=int, default=0, metavar="N",
                   help="first generate N G-Long replies with 160 tokens and no first-line stop; report how they end")
    p.add_argument("--methods", nargs="+", default=list(ALL_METHODS), choices=ALL_METHODS)
    p.add_argument("--no-variants", action="store_true",
                   help="skip the two prompt variants (ranked memory lines; context never reset)")
    p.add_argument("--checkpoint", type=Path, default=None, help="append finished units here; resume from it")
    p.add_argument("--triples", choices=("auto", "gold", "model"), default="auto")
    p.add_argument("--no-salience", action="store_true", help="weights 1.0 (skips the summarizer)")
    p.add_argument("--tokens-only", action="store_true", help="count prompt tokens exactly, generate nothing")
    p.add_argument("--smoke", action="store_true", help="smoke artifacts (extractor/summarizer trained a few steps)")
    p.add_argument("--extractor-steps", type=int, default=None,
                   help="train the extractor this many steps instead of the profile's 400 (a quicker, weaker adapter)")
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


def reply_probe(convs, source, n: int) -> None:
    """Generate ``n`` G-Long replies (the first queries of session 2 of the first conversations) with
    160 new tokens and no first-line stop, and count how they end: the evidence behind the default."""
    from glong_lib.evaluation.msc import session_queries

    class Keeping(LocalChatGenerator):  # keeps the raw text the agent's clean_reply would shorten
        def generate(self, messages, max_new_tokens=None):
            self.last = super().generate(messages, max_new_tokens)
            return self.last

    probe = Keeping(max_new_tokens=160, stop_at_line_end=False, cache=False)
    agent = GLongAgent(probe, source, name="probe")
    rows = []
    for conv in convs:
        if len(rows) >= n:
            break
        agent.start(conv)
        agent.observe_session(conv.sessions[0], conv)
        for q in session_queries(conv.sessions[1], conv.speakers[0], conv.speakers[1], limit=n - len(rows)):
            r = agent.respond(q.query.text, q.context, q.query.time_s)
            raw = probe.last.text
            rows.append({"tokens": r.completion_tokens, "hit limit": r.completion_tokens >= 160,
                         "writes the other speaker": f"{conv.speakers[0]}:" in raw,
                         "re-prints <MEMORY>": "<MEMORY>" in raw})
    print(f"Reply probe: {len(rows)} G-Long replies, 160 new tokens, no first-line stop")
    for key in ("hit limit", "writes the other speaker", "re-prints <MEMORY>"):
        print(f"  {key}: {sum(r[key] for r in rows)}/{len(rows)}")
    print(f"  mean tokens {sum(r['tokens'] for r in rows) / max(1, len(rows)):.0f}\n")


def reply_health(result) -> list[dict]:
    """Per method: replies that are empty or a copied prompt tag (``<MEMORY>``, ``<CONTEXT>``), and
    the mean length: a 135M generator sometimes answers with the prompt's own markup."""
    rows = []
    for method in result.methods:
        replies = [r["reply"] for r in result.records if r["method"] == method]
        rows.append({"method": method, "replies": len(replies),
                     "empty": sum(not x.strip() for x in replies),
                     "prompt tag": sum(x.strip().startswith(("<MEMORY>", "<CONTEXT>")) for x in replies),
                     "mean words": round(sum(len(x.split()) for x in replies) / max(1, len(replies)), 1)})
    print("Reply health (how many replies are empty or a copied prompt tag)")
    print_rows(rows)
    return rows


def pair_report(result) -> list[dict]:
    """One row per pair of :data:`PAIRS` both run: differences (x100) with paired 95% intervals over
    conversations, on the nlg-eval scale and the smoothed one, and how often the memories differ."""
    rows = []
    for method, baseline, meaning in PAIRS:
        if not {method, baseline} <= set(result.methods):
            continue
        cmp = result.compare(method, baseline)
        row = {"pair": f"{method} - {baseline}", "measures": meaning, "conv.": cmp["conversations"],
               "replies": cmp["replies"]}
        for m, label in PAIR_METRICS:
            c = cmp[m]
            row[label] = f"{c['diff mean']:+.2f} [{c['ci low']:+.2f}, {c['ci high']:+.2f}]"
        row["real at 95%"] = ", ".join(label for m, label in PAIR_METRICS
                                       if cmp[m]["ci low"] > TIE or cmp[m]["ci high"] < -TIE) or "none"
        row["same memories"] = (f"{result.same_memories(method, baseline):.0%}"
                                if baseline.startswith(("G-Long", "No rerank")) and baseline != RANKED else "")
        row["replies for paper's B-2 diff."] = cmp["nlg_b2"]["replies needed"]
        rows.append(row)
    if rows:
        print("Paired differences (x100; mean [95% CI] over conversations; nlg-eval scale, then smoothed)")
        print_rows(rows)
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    seed_everything(args.seed)
    path = args.msc or REPO / "data" / "conversations"
    convs = sample_conversations(load_conversations(path), args.conversations, seed=args.seed)
    mode = args.triples
    if mode == "auto":
        mode = "gold" if all(any(t.triples for t in c.turns()) for c in convs) else "model"
    local = LocalChatGenerator(max_new_tokens=args.max_new_tokens, stop_at_line_end=not args.full_replies)
    generator = MemoryEchoGenerator(tokenizer=local.tokenizer, context_window=local.context_window,
                                    max_new_tokens=args.max_new_tokens) if args.tokens_only else local
    profile = get_profile("offline").smoke() if args.smoke else get_profile("offline")
    if args.extractor_steps:
        profile = with_overrides(profile, extractor__max_steps=args.extractor_steps)
    source = TripleSource(mode, score=not args.no_salience, profile=profile)
    agents = make_agents(generator, args.methods, source=source)
    variants = not args.no_variants and "glong" in args.methods
    if variants:
        agents[RANKED] = GLongAgent(generator, source, memory_format="ranked", name=RANKED)
    print(f"# bench_msc: {len(convs)} conversation(s) from {path.name}, seed {args.seed}; triples: {mode}; "
          f"salience: {not args.no_salience}; generator: {generator.name}; turns/session: "
          f"{args.turns_per_session or 'all'}; max new tokens {args.max_new_tokens}; "
          f"first-line replies: {not args.full_replies}")
    print(f"# machine: {machine()}\n")
    if args.reply_probe and not args.tokens_only:
        reply_probe(convs, source, args.reply_probe)
    start = time.perf_counter()
    turns = args.turns_per_session or None
    settings = {"data": str(path), "conversations": [c.id for c in convs], "turns": turns, "mode": mode,
                "extractor_steps": profile.extractor.max_steps,
                "salience": not args.no_salience, "max_new_tokens": args.max_new_tokens,
                "full_replies": args.full_replies, "tokens_only": args.tokens_only,
                "reply_scale": "nlg_*: LD-Agent preprocessing + nlg-eval"}  # refuses checkpoints of the old scale

    def checkpoint(suffix: str = ""):  # resumes when the file is there
        path = args.checkpoint.with_name(args.checkpoint.name + suffix) if args.checkpoint else None
        return Checkpoint(path, settings, resume=path.exists()) if path else None

    result = run_msc_evaluation(agents, convs, turns_per_session=turns, checkpoint=checkpoint())
    if variants:  # the reference code's context: a separate run, since the scope is a run setting
        other = run_msc_evaluation({DIALOGUE: GLongAgent(generator, source, name=DIALOGUE)}, convs,
                                   turns_per_session=turns, context_scope="dialogue", checkpoint=checkpoint(".dialogue"))
        result = MSCResults(result.records + other.records, result.methods + other.methods,
                            {**result.memory_tokens, **other.memory_tokens}, {**result.wall_s, **other.wall_s},
                            result.price, result.settings)
    total = time.perf_counter() - start
    result.settings.update({"data": path.name, "triples": mode, "generator": generator.name,
                            "tokens_only": args.tokens_only, "seconds": total})

    if not args.tokens_only:
        print("Table 1 layout (x100), the paper's scale (LD-Agent's lower-casing and NLTK tokens, then nlg-eval)")
        print_rows(result.table1())
        print("Table 1 layout (x100), nlg-eval on raw whitespace-split text (the suite's earlier scale)")
        print_rows(result.table1(scale="whitespace"))
        print("Table 1 layout (x100), smoothed sentence BLEU and rouge_score ROUGE-L")
        print_rows(result.table1(scale="smoothed"))
        print("Averages (x100, B-1..B-4, ROUGE-L)")
        print_rows([{k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()} for r in result.summary()])
    print("Table 6 layout (prompt tokens per conversation; $ per 1K conversations at gpt-4o-mini prices)")
    print_rows(result.tokens())
    if turns is None and {"G-Long", "Long context"} <= set(result.methods):
        print("Prompt-token saving of G-Long against long context, counted two ways from this run")
        print_rows(result.token_saving("G-Long", "Long context"))

    report = {"pairs": pair_report(result), "health": reply_health(result)} if not args.tokens_only else {}
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
