"""The paper's Table 6 saving measured where Table 6 counts it: G-Long's prompt tokens against long
context's over every turn of every scored session, beside the first two user turns of each session
(where the current-session context is nearly empty and the saving is largest), each labelled, with
the cost per 1K conversations from the same counts. Tokens only: no reply is generated (a prompt never
depends on generated replies, the gold reply enters the context), so it is cheap and exact.

    python -m benchmarks.bench_tokens                                   # the 8 samples (gold triples)
    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_tokens --real --conversations 20 --no-triples
    GLONG_REAL_DATA=prepared python -m benchmarks.bench_tokens --real --split msc-test --no-triples

Each full run writes ``results/bench_tokens-<entry>.json`` (``samples`` or the MSC file's name; aggregate counts
only, with the run's provenance; ``--quick``, two sample conversations, writes none); ``make docs`` renders
the table of docs/results.md from those files (:func:`render`). On real MSC the triples
come from the offline extractor trained ``--extractor-steps`` steps (default 80: the full 400-step adapter
takes 18 minutes on 2 cores; the memory lines are a small share of G-Long's prompt, reported as
"memory tok./reply"), or, with ``--no-triples``, G-Long's memory stays empty: the upper bound of its
saving, with no model run.
"""

from __future__ import annotations

import sys
import time

from benchmarks._common import add_split_option, bench_parser, real_split, write_results
from glong_lib.notebook_runner import REPO_ROOT as REPO

METHOD, BASELINE = "G-Long", "Long context"
FIRST = 2


def parse_args(argv=None):
    p = bench_parser(__doc__)
    p.add_argument("--real", action="store_true", help="real MSC ($GLONG_REAL_DATA, the split --split names)")
    add_split_option(p, "msc", "msc-valid", "with --real, the MSC split")
    p.add_argument("--conversations", type=int, default=None, help="conversations drawn with --seed (default all)")
    p.add_argument("--extractor-steps", type=int, default=80, help="training steps of the extractor (real data)")
    p.add_argument("--no-triples", action="store_true",
                   help="G-Long with an empty memory (no extractor run): an upper bound on its saving")
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args(argv)


def measure(args) -> tuple[str, dict]:
    """One tokens-only run of long context and G-Long; returns (entry name, aggregate counts)."""
    from glong_lib.agent import TripleSource, make_agents
    from glong_lib.config import with_overrides
    from glong_lib.evaluation.msc import run_msc_evaluation, sample_conversations
    from glong_lib.generation import LocalChatGenerator, MemoryEchoGenerator
    from glong_lib.loaders import load_conversations
    from glong_lib.models import seed_everything

    seed_everything(args.seed)
    if args.real:
        path = real_split(args.split)
        if path is None:
            raise SystemExit(f"--real needs GLONG_REAL_DATA holding split '{args.split}'")
        name = path.stem  # the entry the kept results file names (msc4_valid)
    else:
        path, name = REPO / "data" / "conversations", "samples"
    n = 2 if args.quick else args.conversations
    convs = sample_conversations(load_conversations(path), n, seed=args.seed)
    mode = "gold" if args.no_triples or all(any(t.triples for t in c.turns()) for c in convs) else "model"
    profile = with_overrides("offline", extractor__max_steps=args.extractor_steps) if mode == "model" else "offline"
    local = LocalChatGenerator()
    counter = MemoryEchoGenerator(tokenizer=local.tokenizer, context_window=local.context_window,
                                  max_new_tokens=local.max_new_tokens)
    agents = make_agents(counter, ["long-context", "glong"], source=TripleSource(mode, profile=profile))
    start = time.perf_counter()
    result = run_msc_evaluation(agents, convs, turns_per_session=None)
    glong = [r for r in result.records if r["method"] == METHOD]
    memory_tokens = sum(len(local.tokenizer.encode("\n".join(r["memories"]))) for r in glong) / max(1, len(glong))
    entry = {"data": path.name, **({"split": args.split} if args.real else {}),
             "conversations": len(convs), "sessions scored": sorted({r["session"] for r in glong}),
             "triples": ("none: G-Long's memory left empty, an upper bound on its saving" if args.no_triples
                         else mode if mode == "gold" else f"offline extractor, {args.extractor_steps} training steps"),
             "salience": "offline decoder-only source", "tokenizer": local.name,
             "saving": result.token_saving(METHOD, BASELINE, first=FIRST),
             "memory tok./reply": round(memory_tokens, 1), "seconds": round(time.perf_counter() - start)}
    return name, entry


def render(results: dict) -> str:
    """The README block: one row per (data, way of counting), G-Long beside long context."""
    head = ["data", "counted over", "replies", "G-Long prompt tok./reply", "long context prompt tok./reply",
            "saving", "G-Long main tok./conv.", "long context main tok./conv.", "G-Long $ / 1K conv.",
            "long context $ / 1K conv.", "memory tok./reply"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = []
    for name, e in results["runs"].items():
        for row in e["saving"]:
            cells = [f"{name} ({e['conversations']} conv.)", row["counted over"], row["replies"],
                     row[f"{METHOD} tokens / reply"], row[f"{BASELINE} tokens / reply"],
                     f"**{100 * row['saving']:.1f}%**", row[f"{METHOD} main / conv."], row[f"{BASELINE} main / conv."],
                     row[f"{METHOD} $ / 1K conv."], row[f"{BASELINE} $ / 1K conv."], e["memory tok./reply"]]
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
        notes.append(f"{name}: sessions {', '.join(map(str, e['sessions scored']))} scored, triples: {e['triples']}, "
                     f"{e['seconds']} s")
    return "\n".join(lines) + "\n\n" + "; ".join(notes) + "."


def main(argv=None) -> int:
    args = parse_args(argv)
    name, entry = measure(args)
    inputs = [real_split(args.split) if args.real else REPO / "data" / "conversations"]
    write_results(args, {"runs": {name: entry}}, f"bench_tokens-{name}", inputs=inputs)
    print(render({"runs": {name: entry}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
