"""``glong eval-msc``: every method over multi-session conversations, scored like the paper's
Table 1 (BLEU-2/3, ROUGE-L per session) with a token and cost table like its Table 6."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import DataError
from ..io import atomic_write_text, check_output_file, data_path
from .common import add_profile_option, checkpoint_from, finite_json, number, print_table


def register(sub) -> None:
    from ..agent import ALL_METHODS, METHODS

    p = sub.add_parser("eval-msc", help="response generation over sessions: BLEU/ROUGE-L, prompt tokens, cost")
    p.add_argument("--msc", type=Path, default=None,
                   help="conversations: a folder of sample *.json, or MSC msc4_valid.jsonl (default: data/conversations)")
    p.add_argument("--conversations", type=number(int, 1), default=None, help="evaluate N conversations, sampled with --seed")
    p.add_argument("--seed", type=number(int, 0), default=42, help="sampling seed (default 42)")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=ALL_METHODS, metavar="METHOD",
                   help=f"any of: {' '.join(ALL_METHODS)} (default: all but glong-no-rerank, the paper's Table 14)")
    p.add_argument("--turns-per-session", type=number(int, 1), default=None,
                   help="answer only the first N user turns of each session (CPU budget)")
    p.add_argument("--max-sessions", type=number(int, 1), default=None, help="use only the first N sessions")
    p.add_argument("--triples", choices=("auto", "gold", "model"), default="auto",
                   help="G-Long's triples: gold (stored with the samples), model (the extractor), "
                        "auto = gold when every conversation has them")
    p.add_argument("--no-salience", action="store_true", help="weights 1.0 instead of the salience scorer (Eq. 1-3)")
    p.add_argument("--scope", choices=("session", "dialogue"), default="session",
                   help="Eq. 3's maximum: each session's (paper) or every session's so far (reference code)")
    p.add_argument("--generator", choices=("local", "openai", "echo"), default="local",
                   help="local chat model (profile's), an OpenAI-compatible endpoint, or echo (no model: "
                        "replies with the top memory; for pipeline checks)")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1")
    p.add_argument("--model", default=None, help="generator model name or directory")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    p.add_argument("--max-new-tokens", type=number(int, 1), default=40, help="reply length cap (default 40)")
    p.add_argument("--full-replies", action="store_true",
                   help="local model: no first-line stop or cut (off by default: the 135M model never ends its "
                        "turn; see clean_reply). API models always keep their whole reply")
    p.add_argument("--memory-format", choices=("arrow", "ranked"), default="arrow",
                   help="memory lines: the paper's 's -r-> o' or the reference code's ranked lines")
    p.add_argument("--context-scope", choices=("session", "dialogue"), default="session",
                   help="context: the current session (paper) or never reset (reference code)")
    p.add_argument("--price-in", type=number(float, 0), default=0.15, help="$ per 1M input tokens (gpt-4o-mini: 0.15)")
    p.add_argument("--price-out", type=number(float, 0), default=0.60, help="$ per 1M output tokens (gpt-4o-mini: 0.60)")
    p.add_argument("--out", type=Path, default=None, help="also write every reply and score to this JSON file")
    p.add_argument("--checkpoint", type=Path, default=None,
                   help="append each finished (conversation, method) to this JSON-lines file")
    p.add_argument("--resume", action="store_true", help="continue the run recorded in --checkpoint")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    add_profile_option(p)
    p.set_defaults(func=run)


def build_generator(args):
    from ..generation import MemoryEchoGenerator, make_generator

    if args.generator == "echo":
        return MemoryEchoGenerator(max_new_tokens=args.max_new_tokens)
    if args.generator == "openai" and not args.base_url:
        raise DataError("--generator openai needs --base-url")
    local = {} if args.generator == "openai" else {"stop_at_line_end": not args.full_replies}
    return make_generator(args.profile, max_new_tokens=args.max_new_tokens,
                          base_url=args.base_url if args.generator == "openai" else None,
                          model=args.model, api_key_env=args.api_key_env, **local)


def run(args) -> int:
    from ..agent import TripleSource, make_agents
    from ..evaluation.msc import PriceTable, run_msc_evaluation, sample_conversations
    from ..loaders import load_conversations
    from ..models import seed_everything

    if args.out:
        check_output_file(args.out)  # before the run: an --out that cannot be written would discard it
    seed_everything(args.seed)
    path = args.msc or data_path("conversations")
    if not path.exists():
        raise DataError("no such file or folder", path=path)
    convs = sample_conversations(load_conversations(path), args.conversations, seed=args.seed)
    mode = args.triples
    if mode == "auto":
        mode = "gold" if all(any(t.triples for t in c.turns()) for c in convs) else "model"
    source = TripleSource(mode, score=not args.no_salience, profile=args.profile, scope=args.scope)
    agents = make_agents(build_generator(args), args.methods, source=source, memory_format=args.memory_format)
    price = PriceTable(args.price_in, args.price_out, "custom" if (args.price_in, args.price_out) != (0.15, 0.6)
                       else "gpt-4o-mini")
    checkpoint = checkpoint_from(args, ignore=("out",), value_kind=dict)
    result = run_msc_evaluation(agents, convs, turns_per_session=args.turns_per_session,
                                max_sessions=args.max_sessions, context_scope=args.context_scope,
                                price=price, progress=not args.json, checkpoint=checkpoint)
    result.settings.update({"data": path.name, "triples": mode, "salience": not args.no_salience,
                            "generator": getattr(agents[next(iter(agents))].generator, "name", args.generator),
                            "seed": args.seed})
    if args.out:  # strict JSON: an infinite cost (a price of 1e308) is written as null, like --json
        atomic_write_text(args.out, json.dumps(finite_json(json.loads(result.to_json())), indent=2,
                                               ensure_ascii=False, allow_nan=False))
    if args.json:
        data = result.to_dict()
        data.pop("records")
        print(json.dumps(finite_json(data), indent=2, ensure_ascii=False, allow_nan=False))  # strict JSON
        return 0
    print(f"{len(convs)} conversation(s) from {path.name}; G-Long triples: {mode}; "
          f"generator: {result.settings['generator']}\n")
    print("Table 1 layout (x100; BLEU-2 / BLEU-3 / ROUGE-L per evaluated session, then the average)")
    print_table(result.table1())
    print("\nTable 6 layout (tokens per conversation; cost in $ per 1K conversations at "
          f"${price.input_per_m}/1M in, ${price.output_per_m}/1M out)")
    print_table(result.tokens())
    return 0
