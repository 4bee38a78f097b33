"""``glong eval-msc``: every method over multi-session conversations, scored like the paper's
Table 1 (BLEU-2/3, ROUGE-L per session) with a token and cost table like its Table 6.

This is the one MSC runner: ``benchmarks/bench_msc.py`` is this command with a preset of options
(every method, ``--variants``, ``--compare``, short first-line replies). ``--variants`` adds two
G-Long variants that change the prompt, not the memory (the reference code's ranked memory lines;
the context never reset between sessions); ``--compare`` adds the smoothed Table 1, the paired
comparisons of :data:`PAIRS` (bootstrap over conversations), reply health, and G-Long against long
context with the number of replies the paper's difference would need; ``--generator tokens``
counts prompt tokens with the local model's tokenizer and generates nothing (prompts never depend
on generated replies, so the token figures equal a full run's).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from ..config import RESPONDERS, with_overrides
from ..errors import DataError
from ..io import atomic_write_text, check_output_file, data_path
from .common import (
    STAGE_DEST,
    add_device_option,
    add_endpoint_options,
    add_preset_option,
    add_profile_option,
    add_settings_options,
    add_stage_options,
    checkpoint_from,
    endpoint_from_args,
    number,
    profile_from,
    settings_from_args,
)
from .msc_report import DIALOGUE, PAIRS, RANKED, TOKEN_AIM, as_json, comparison, print_comparison, print_tables  # noqa: F401

#: Options that change how replies are fetched, not what they are: a resumed run may change them
#: (``--resume`` with ``--concurrency 16`` after an interrupted ``--concurrency 4``, or the server moved
#: to another address: ``--model`` says what answers, as in the reply cache's key).
NOT_RESULTS = ("out", *(f"{prefix}{name}" for prefix in ("", "extractor_") for name in (
    "base_url", "timeout", "deadline", "retries", "concurrency", "reply_cache", "api_key_env")))

#: The ``dest`` of ``--max-new-tokens`` (made from ``config.GeneratorSettings.max_new_tokens``).
REPLY_CAP_DEST = f"{STAGE_DEST}generator{STAGE_DEST}max_new_tokens"


def register(sub) -> None:
    from ..config import AGENT_METHODS as METHODS
    from ..config import ALL_AGENT_METHODS as ALL_METHODS  # no torch at --help

    p = sub.add_parser("eval-msc", help="response generation over sessions: BLEU/ROUGE-L, prompt tokens, cost")
    p.add_argument("--msc", type=Path, default=None,
                   help="conversations: a folder of sample *.json, or MSC msc4_valid.jsonl "
                        "(default: data/conversations)")
    p.add_argument("--conversations", type=number(int, 1), default=None,
                   help="evaluate N conversations, sampled with --seed")
    p.add_argument("--seed", type=number(int, 0), default=42, help="sampling seed (default 42)")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=ALL_METHODS, metavar="METHOD",
                   help=f"any of: {' '.join(ALL_METHODS)} (default: all but glong-no-rerank, the paper's Table 14)")
    p.add_argument("--variants", action="store_true",
                   help="also G-Long with the reference code's ranked memory lines and with the context never "
                        "reset (needs glong among --methods)")
    p.add_argument("--turns-per-session", type=number(int, 0), default=None,
                   help="answer only the first N user turns of each session (CPU budget; 0 = all)")
    p.add_argument("--max-sessions", type=number(int, 1), default=None, help="use only the first N sessions")
    p.add_argument("--triples", choices=("auto", "gold", "model"), default="auto",
                   help="G-Long's triples: gold (stored with the samples), model (the extractor), "
                        "auto = gold when every conversation has them")
    p.add_argument("--no-salience", action="store_true", help="weights 1.0 instead of the salience scorer (Eq. 1-3)")
    p.add_argument("--extractor-steps", type=number(int, 1), default=None,
                   help="--triples model: train the extractor N steps instead of the profile's "
                        "(a quicker, weaker adapter)")
    p.add_argument("--scope", choices=("session", "dialogue"), default="session",
                   help="Eq. 3's maximum: each session's (paper) or every session's so far (reference code)")
    p.add_argument("--generator", choices=("local", "openai", "echo", "tokens"), default="local",
                   help="local chat model (profile's), an OpenAI-compatible endpoint, echo (no model: "
                        "replies with the top memory; for pipeline checks), or tokens (echo counting with the "
                        "local model's tokenizer and chat template: exact prompt tokens, no generation)")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1")
    p.add_argument("--model", default=None, help="generator model name or directory")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    add_endpoint_options(p, skip=("base_url", "model", "api_key_env"), what="--generator openai")
    add_endpoint_options(p, prefix="extractor-", what="--triples model through a server")
    p.add_argument("--full-replies", action="store_true",
                   help="local model: no first-line stop or cut (off by default: the 135M model never ends its "
                        "turn; see clean_reply). API models always keep their whole reply")
    p.add_argument("--responder", choices=RESPONDERS, default="plain",
                   help="local model: as shipped, or with a LoRA responder trained on the --msc file's conversations "
                        "outside the evaluation's samples (generation.responder; about 15 min on 2 cores, cached): "
                        "msc-lora on MSC's replies as they come, msc-recall on half replies that recall a memory line")
    p.add_argument("--reply-probe", type=number(int, 0), default=0, metavar="N",
                   help="local model: first generate N G-Long replies with 160 tokens and no first-line stop, "
                        "and report how they end (the evidence for the first-line default)")
    p.add_argument("--context-scope", choices=("session", "dialogue"), default="session",
                   help="context: the current session (paper) or never reset (reference code)")
    p.add_argument("--compare", action="store_true",
                   help="also the smoothed Table 1, paired differences with 95%% intervals, reply health, "
                        "and G-Long against long context")
    p.add_argument("--price-in", type=number(float, 0), default=0.15, help="$ per 1M input tokens (gpt-4o-mini: 0.15)")
    p.add_argument("--price-out", type=number(float, 0), default=0.60,
                   help="$ per 1M output tokens (gpt-4o-mini: 0.60)")
    p.add_argument("--out", type=Path, default=None, help="also write every reply and score to this JSON file")
    p.add_argument("--checkpoint", type=Path, default=None,
                   help="append each finished (conversation, method) to this JSON-lines file")
    p.add_argument("--resume", action="store_true", help="continue the run recorded in --checkpoint")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    add_device_option(p)
    add_profile_option(p, smoke=True, salience=True)
    # --max-new-tokens, --memory-format; the model is --model above (the endpoint's name or a local folder)
    add_stage_options(p.add_argument_group("the generator (config.GeneratorSettings)"), "generator", skip=("model",))
    settings = p.add_argument_group("G-Long's retrieval (and every baseline's K)")
    add_preset_option(settings, "the profile's")
    add_settings_options(settings)
    p.set_defaults(func=run)


# --------------------------------------------------------------------------- building the run

def reply_cap(args, profile):
    """Each reply's token cap: ``--max-new-tokens`` when given; else the profile's
    ``GeneratorSettings.max_new_tokens`` for a local model (offline: 48; the 135M model never ends its
    turn by itself) and None for ``--generator openai`` (uncapped, as the paper's code sends no
    ``max_tokens``)."""
    if args.generator == "openai":
        return getattr(args, REPLY_CAP_DEST, None)
    return profile.generator.max_new_tokens


def build_generator(args, adapter=None):
    """The generator ``--generator`` asks for; ``adapter``: a LoRA folder merged into the local model
    (the ``--responder`` adapters)."""
    from ..generation import MemoryEchoGenerator, make_generator

    profile = profile_from(args)
    cap = reply_cap(args, profile)
    if args.generator == "echo":
        return MemoryEchoGenerator(max_new_tokens=cap)
    if args.generator == "openai" and not args.base_url:
        raise DataError("--generator openai needs --base-url")
    e = endpoint_from_args(args)
    local = ({"timeout": e.timeout, "deadline": e.deadline, "retries": e.retries, "concurrency": e.concurrency,
              "max_reply_bytes": e.max_reply_bytes, "cache": e.reply_cache} if args.generator == "openai"
             else {"stop_at_line_end": not args.full_replies})
    generator = make_generator(profile, max_new_tokens=cap,
                               base_url=args.base_url if args.generator == "openai" else None,
                               model=args.model, api_key_env=args.api_key_env, **local,
                               **({"adapter": str(adapter)} if adapter else {}))
    if args.generator == "tokens":
        return MemoryEchoGenerator(tokenizer=generator.tokenizer, context_window=generator.context_window,
                                   max_new_tokens=cap)
    return generator


def load_msc(args):
    """(path, conversations, triple mode): the conversations ``--msc`` names, sampled with ``--seed``."""
    from ..evaluation.msc import sample_conversations
    from ..loaders import load_conversations

    path = args.msc or data_path("conversations")
    if not path.exists():
        raise DataError("no such file or folder", path=path)
    convs = sample_conversations(load_conversations(path), args.conversations, seed=args.seed)
    mode = args.triples
    if mode == "auto":
        mode = "gold" if all(any(t.triples for t in c.turns()) for c in convs) else "model"
    return path, convs, mode


def build_agents(args, generator, source) -> dict:
    """The agents of ``--methods`` (and the ranked-lines variant with ``--variants``)."""
    from ..agent import make_agents
    from ..models import LazyEncoder

    profile = profile_from(args)
    memory_format = profile.generator.memory_format
    agents = make_agents(generator, args.methods, source=source, memory_format=memory_format,
                         encoder=LazyEncoder(profile), settings=retrieval_settings(args, profile))
    if wants_variants(args):
        agents[RANKED] = agents["G-Long"].variant(RANKED, memory_format="ranked")
    return agents


def retrieval_settings(args, profile):
    """``--preset`` (default the profile's retrieval settings) with every retrieval option set."""
    from ..config import retrieval_preset

    base = retrieval_preset(args.preset) if getattr(args, "preset", None) else profile.retrieval
    return settings_from_args(args, base)


def wants_variants(args) -> bool:
    return args.variants and "glong" in args.methods


def evaluate(args, agents, generator, source, convs, price):
    """Run every agent (and, with ``--variants``, the never-reset context as a second run: the
    context scope is a run setting) and return one ``MSCResults``."""
    from ..evaluation.msc import MSCResults, run_msc_evaluation

    common = dict(turns_per_session=args.turns_per_session or None, max_sessions=args.max_sessions,
                  price=price, progress=not args.json)
    result = run_msc_evaluation(agents, convs, context_scope=args.context_scope,
                                checkpoint=checkpoint_from(args, ignore=NOT_RESULTS, value_kind=dict), **common)
    if not wants_variants(args):
        return result
    suffixed = args.checkpoint.with_name(args.checkpoint.name + ".dialogue") if args.checkpoint else None
    # the same agent as G-Long (memory format, retrieval settings, encoder) but for the context scope
    other = run_msc_evaluation({DIALOGUE: agents["G-Long"].variant(DIALOGUE)}, convs,
                               context_scope="dialogue", **common,
                               checkpoint=checkpoint_from(argparse.Namespace(**{**vars(args), "checkpoint": suffixed}),
                                                          ignore=NOT_RESULTS, value_kind=dict))
    return MSCResults(result.records + other.records, result.methods + other.methods,
                      {**result.memory_tokens, **other.memory_tokens}, {**result.wall_s, **other.wall_s},
                      result.price, result.settings)


def machine() -> str:
    """This machine in one line (CPU, torch threads, load): timings mean nothing without it."""
    import torch

    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch threads "
            f"{torch.get_num_threads()}, load average {load[0]:.1f} at start")


def run(args) -> int:
    from ..evaluation.msc import PriceTable
    from ..models import seed_everything
    from .devices import device_source

    if args.out:
        check_output_file(args.out)  # before the run: an --out that cannot be written would discard it
    seed_everything(args.seed)
    path, convs, mode = load_msc(args)
    profile = profile_from(args)
    if args.extractor_steps:
        profile = with_overrides(profile, extractor__max_steps=args.extractor_steps)
    if args.extractor_base_url:  # --triples model through a server (extraction.remote)
        profile = with_overrides(profile, extractor__endpoint=endpoint_from_args(args, "extractor-"))
    source = device_source(mode, score=not args.no_salience, profile=profile, scope=args.scope, device=args.device)
    adapter = None
    if args.responder != "plain":
        if args.generator != "local" or args.msc is None:
            raise DataError(f"--responder {args.responder} needs --generator local and --msc "
                            "(MSC JSONL with persona_text)")
        from ..evaluation.responder import responder_adapter

        adapter = responder_adapter(path, convs, args.responder)
    generator = build_generator(args, adapter)
    agents = build_agents(args, generator, source)
    price = PriceTable(args.price_in, args.price_out, "custom" if (args.price_in, args.price_out) != (0.15, 0.6)
                       else "gpt-4o-mini")
    if args.reply_probe and args.generator == "local":
        from .msc_probe import reply_probe

        reply_probe(convs, source, args.reply_probe, profile_from(args))
    start = time.perf_counter()
    result = evaluate(args, agents, generator, source, convs, price)
    result.settings.update({"data": path.name, "triples": mode, "salience": not args.no_salience,
                            "generator": getattr(generator, "name", args.generator), "seed": args.seed,
                            "tokens_only": args.generator == "tokens", "extractor_steps": profile.extractor.max_steps,
                            "memory_format": profile.generator.memory_format,
                            "max_new_tokens": reply_cap(args, profile),
                            "reply_scale": "nlg_*: LD-Agent preprocessing + nlg-eval"})
    data = {**result.to_dict(), "run": {"seconds": round(time.perf_counter() - start, 1), "machine": machine()}}
    if args.compare:
        data["comparison"] = comparison(result, replies=args.generator != "tokens")
        if args.generator != "tokens":
            from ..evaluation.memory_use import memory_use_in_file

            data["comparison"]["memory use"] = memory_use_in_file(path, result.records, result.methods)
    if args.out:
        atomic_write_text(args.out, as_json(data))
    if args.json:
        data.pop("records")
        print(as_json(data))
        return 0
    print(f"{len(convs)} conversation(s) from {path.name}; G-Long triples: {mode}; "
          f"generator: {result.settings['generator']}; machine: {data['run']['machine']}\n")
    print_tables(result, price, smoothed=args.compare, replies=args.generator != "tokens")
    if args.compare:
        print_comparison(data["comparison"])
    print(f"\nwall time {data['run']['seconds']:.0f} s")
    return 0


