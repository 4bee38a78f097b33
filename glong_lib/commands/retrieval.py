"""``glong query MEMDIR "text"``: associative retrieval from a saved memory, optionally traced.
``glong eval-retrieval``: evidence Hit@k, Recall@k and MRR@20 of every method on LoCoMo or the probes."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import DataError
from ..io import data_path
from ..memory.persistence import MAX_ABS_TIME_S
from .common import (
    add_endpoint_options,
    add_preset_option,
    add_profile_option,
    add_settings_options,
    add_wait_option,
    checkpoint_from,
    endpoint_from_args,
    number,
    print_table,
    profile_from,
    settings_from_args,
    split_list,
)

#: What ``--probes`` given alone stands for (argparse needs a value that differs from "not given").
SHIPPED = "(the shipped probes)"

#: In an evaluation K is the deepest cut-off of ``--k``, not a setting of its own.
SET_BY_CUTOFFS = ("k",)


def register(sub) -> None:
    q = sub.add_parser("query", help="retrieve the top-K triples of a saved memory for an utterance")
    q.add_argument("memdir", type=Path, help="a folder written by GraphMemory.save (glong memory ...)")
    q.add_argument("text", help="the current utterance (the query)")
    add_preset_option(q, "the profile's, the paper's settings")
    add_settings_options(q)
    q.add_argument("--now", type=number(float, -MAX_ABS_TIME_S, MAX_ABS_TIME_S), default=None,
                   help="query time in seconds on the conversation clock (default: the memory's latest time)")
    q.add_argument("--save-access", action="store_true",
                   help="write the refreshed last-access times back to MEMDIR (default: read only)")
    q.add_argument("--trace", action="store_true", help="also print every stage of the pipeline")
    q.add_argument("--json", action="store_true", help="print JSON")
    add_wait_option(q)
    add_profile_option(q)
    q.set_defaults(func=run_query)

    e = sub.add_parser("eval-retrieval", help="evidence Hit@k, Recall@k and MRR@20 of G-Long and the baselines")
    src = e.add_mutually_exclusive_group(required=True)
    src.add_argument("--locomo", type=Path, help="a LoCoMo JSON file (locomo10.json layout), or a split name: "
                                                 "locomo-select, locomo-report, locomo-dev, locomo-test "
                                                 "(under $GLONG_REAL_DATA; docs/data.md)")
    src.add_argument("--longmemeval", type=Path, help="a LongMemEval JSON file (longmemeval_s.json layout; "
                                                      "the paper's settings; --conversations N: the first N questions)")
    src.add_argument("--probes", nargs="?", const=SHIPPED,
                     help="retrieval probes JSONL (default: the shipped data/probes.jsonl)")
    e.add_argument("--conversations-dir", type=Path, default=None,
                   help="the conversations the probes refer to (default: the shipped samples)")
    e.add_argument("--methods", default=None,
                   help="comma-separated, from glong,flat,dense,bm25,ppr,dense-turns,bm25-turns "
                        "(default: glong,flat,dense,bm25,ppr, "
                        "plus dense-turns,bm25-turns for --memory-from observations)")
    e.add_argument("--memory-from", choices=("turns", "observations"), default="turns",
                   help="LoCoMo: build the memory from the dialogue turns or from its observation sentences")
    add_preset_option(e, "paper for the probes; on LoCoMo recommended for observations, recommended-turns for turns")
    e.add_argument("--paper", action="store_true", help="the same as --preset paper (LoCoMo: extracted triples only)")
    e.add_argument("--keep-unextracted", choices=("yes", "no"), default=None,
                   help="LoCoMo: store a unit the extractor found no triple in whole, as (speaker, said, text) "
                        "(recommended: yes for observations, no for turns; paper: no)")
    e.add_argument("--k", default="1,3,5,10", help="comma-separated cut-offs (default 1,3,5,10); the deepest is K")
    add_settings_options(e, skip=SET_BY_CUTOFFS)
    e.add_argument("--weights", choices=("salience", "uniform", "both"), default="salience",
                   help="edge weights: Eq. 3 with the profile's salience source (default; readings cached), "
                        "uniform (the 'no importance' ablation), or both (graph methods run twice; paired difference)")
    e.add_argument("--conversations", type=number(int, 1), default=None, help="LoCoMo: only the first N conversations")
    e.add_argument("--max-turns", type=number(int, 1), default=None, help="LoCoMo: only the first N turns of each")
    e.add_argument("--adapter", type=Path, default=None, help="LoCoMo: extractor LoRA adapter (default: cached)")
    add_endpoint_options(e, prefix="extractor-", what="LoCoMo: extract through an OpenAI-compatible server")
    e.add_argument("--checkpoint", type=Path, default=None, help="append each finished question to this file")
    e.add_argument("--resume", action="store_true", help="continue the run recorded in --checkpoint")
    e.add_argument("--json", action="store_true", help="print JSON")
    add_profile_option(e, salience=True)
    e.set_defaults(func=run_eval)


# --------------------------------------------------------------------------- query

def run_query(args) -> int:
    from contextlib import nullcontext

    from ..memory import editing

    try:
        args.text.encode("utf-8")
    except UnicodeEncodeError:
        raise DataError("the query is not valid text (undecodable bytes in the command line)") from None
    # --save-access writes the memory back: it holds the memory's lock from the load to the save,
    # so a `glong build` saving in between waits instead of being reverted
    with editing(args.memdir, args.wait) if args.save_access else nullcontext():
        memory, result, now = _query(args)
    _print_query(args, memory, result, now)
    return 0


def _query(args):
    """Load the memory, retrieve, and (``--save-access``) save the refreshed access times back."""
    from ..config import get_profile, retrieval_preset
    from ..memory import GraphMemory
    from ..retrieval import AssociativeRetriever

    memory = GraphMemory.load(args.memdir, wait=args.wait)
    eids = memory.edge_ids()
    if not eids:
        raise DataError("the memory holds no edges", path=args.memdir)
    now = args.now if args.now is not None else max(max(memory.edge(e).created_s, memory.edge(e).last_access_s)
                                                   for e in eids)
    base = retrieval_preset(args.preset) if args.preset else get_profile(args.profile).retrieval
    retriever = AssociativeRetriever(memory, settings_from_args(args, base), update_access=args.save_access)
    result = retriever.retrieve(args.text, now_s=now)
    if args.save_access:
        memory.save(args.memdir, wait=args.wait)
    return memory, result, now


def _print_query(args, memory, result, now) -> None:
    if args.json:
        out = {"query": args.text, "now_s": now, "results": result.rows()}
        if args.trace:
            out["trace"] = {**result.trace.to_dict(), "sizes": result.trace.sizes()}
        print_table(out, as_json=True)
        return
    if args.trace:
        _print_trace(result.trace, memory)
    print_table(result.rows())


def _print_trace(trace, memory) -> None:
    print(f"query: {trace.query!r} at t = {trace.now_s:.0f} s   sizes: {trace.sizes()}")
    print("1. anchors: " + ", ".join(f"{e} ({s:.3f})" for e, s in trace.anchors))
    print(f"2. expansion ({trace.params['hops']} hop): {len(trace.candidates)} candidate edges")
    print(f"3. semantic ranking (S_sem clamped at 0), top {trace.params['semantic_top_n']} kept:")
    for eid, s in trace.semantic[: trace.params["semantic_top_n"]]:
        print(f"   {s:.3f}  {memory.edge(eid).text()}")
    print("4. rerank (Eq. 4: b1*S_sem + b2*w + b3*recency):")
    for t in trace.rerank:
        a, b, c = t.parts
        mark = "*" if t.eid in trace.final else " "
        print(f" {mark} {t.score:.3f} = {a:.3f} + {b:.3f} + {c:.3f}  {t.text}")
    print()


# --------------------------------------------------------------------------- evaluation

def _extractor_or_none(args):
    """The triple extractor for LoCoMo, or None (with a note) when it cannot be had."""
    try:
        from ..extraction import load_extractor  # needs torch, transformers, peft
    except ImportError as e:
        print(f"note: no triple extractor ({e}); evaluating the turn baselines only", file=sys.stderr)
        return None
    return load_extractor(args.profile, adapter=args.adapter, endpoint=endpoint_from_args(args, "extractor-"))


def _k_limit() -> int:
    """The largest K a retrieval takes (``RetrievalSettings.k``'s range)."""
    from dataclasses import fields

    from ..config import RetrievalSettings

    return int(next(f for f in fields(RetrievalSettings) if f.name == "k").metadata["high"])


#: The suffix ``--weights both`` gives the graph methods run with uniform weights.
UNIFORM = ", uniform weights"


def locomo_source(args) -> dict:
    """Resolve ``--locomo`` given as a split name (``locomo-report``) to its file, in place; what the
    results say about their data: the split (name, purpose, sample ids) or the file."""
    from ..datasets import describe, split_names, split_path

    if args.locomo is None:
        return {}
    name = str(args.locomo)
    if not args.locomo.exists() and name in split_names("locomo"):
        args.locomo = split_path(name)
        return describe(name)
    return {"file": str(args.locomo)}


def run_eval(args) -> int:
    from ..evaluation.locomo import GRAPH_METHODS, evaluate_locomo
    from ..evaluation.retrieval import DEFAULT_METHODS, METHODS, evaluate_probes

    data = locomo_source(args)  # a split name becomes its file before any work

    default = DEFAULT_METHODS + (("dense-turns", "bm25-turns") if args.memory_from == "observations" else ())
    named = args.methods if args.methods is not None else ",".join(default)
    methods = [m.strip() for m in named.split(",") if m.strip()]
    if not methods:  # --methods '' is a slip, not "every method"
        raise DataError("--methods is empty")
    if args.memory_from != "turns" and not args.locomo:
        raise DataError("--memory-from observations needs --locomo (the probes have no observation sentences)")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise DataError(f"unknown method(s) {', '.join(unknown)} (choose from {', '.join(METHODS)})")
    ks = split_list(args.k, "--k", int, positive=True)
    deepest = _k_limit()
    if max(ks) > deepest:  # before any model loads, and named as the option the user typed
        raise DataError(f"--k {max(ks)} is above {deepest}, the most memories a retrieval returns")
    checkpoint = checkpoint_from(args)
    from ..config import retrieval_preset

    preset = args.preset or ("paper" if args.paper or not args.locomo else
                             "recommended" if args.memory_from == "observations" else "recommended-turns")
    settings = settings_from_args(args, retrieval_preset(preset), skip=SET_BY_CUTOFFS)
    # measured: keeping units without triples helps on fact sentences, hurts on chatty turns
    default_keep = preset != "paper" and args.memory_from == "observations"
    keep = default_keep if args.keep_unextracted is None else args.keep_unextracted == "yes"
    encoder = None
    if any(not m.startswith("bm25") for m in methods):
        from ..models import load_encoder

        encoder = load_encoder(args.profile)
    scorer = None
    if args.weights != "uniform" and any(m in GRAPH_METHODS for m in methods):
        from ..salience import load_scorer

        scorer = load_scorer(profile_from(args))  # with the --salience-* options
    extractor = None
    if (args.longmemeval or args.locomo) and any(m in GRAPH_METHODS for m in methods):
        extractor = _extractor_or_none(args)
        methods = [m for m in methods if extractor is not None or m not in GRAPH_METHODS]
        if not methods:
            raise DataError("no method left to evaluate (graph methods need the extractor)")

    def evaluate(methods, scorer):
        if args.longmemeval:
            from ..evaluation.longmemeval import evaluate_longmemeval

            return evaluate_longmemeval(args.longmemeval, encoder, methods, ks, questions=args.conversations,
                                        extractor=extractor, settings=settings, scorer=scorer,
                                        checkpoint=checkpoint)
        if args.locomo:
            return evaluate_locomo(args.locomo, encoder, methods, ks, conversations=args.conversations,
                                   max_turns=args.max_turns, extractor=extractor, settings=settings,
                                   checkpoint=checkpoint, memory_from=args.memory_from,
                                   keep_unextracted=keep, scorer=scorer)
        from ..loaders import load_conversations, load_probes

        probes = load_probes(data_path("probes.jsonl") if args.probes == SHIPPED else Path(args.probes))
        conversations = load_conversations(args.conversations_dir or data_path("conversations"))
        return evaluate_probes(probes, conversations, encoder, methods, ks, scorer=scorer, settings=settings,
                               checkpoint=checkpoint)

    result = evaluate(methods, scorer)
    weighed = [m for m in methods if m in GRAPH_METHODS]
    differences: list[dict] = []  # --weights both: paired differences over the same questions
    if args.weights == "both" and weighed:
        from ..evaluation.retrieval import merge_evaluations

        checkpoint = None  # one checkpoint holds one run: the uniform pass is the cheap one, re-run
        uniform = evaluate(weighed, None).renamed({m: f"{m}{UNIFORM}" for m in weighed})
        result = merge_evaluations(result, uniform)
        for m in weighed:
            for metric in (f"Hit@{min(ks)}", f"Hit@{max(ks)}", f"MRR@{result.mrr_depth}"):
                c = result.compare(m, f"{m}{UNIFORM}", metric)
                differences.append({"method": m, "metric": metric, "weights on - uniform": round(c["mean_diff"], 3),
                                    "95% low": round(c["ci_low"], 3), "95% high": round(c["ci_high"], 3)})
    if args.json:
        print_table({**({"data": data} if data else {}), "metrics": result.table(), "excluded": result.excluded,
                     "ks": list(result.ks),
                     **({"weights_difference": differences} if differences else {})}, as_json=True)
        return 0
    if data.get("split"):
        print(f"LoCoMo split {data['split']} ({', '.join(data.get('samples', []))}): {data['purpose']}")
    print_table(result.table())
    if differences:
        print("\nEq. 3 weights on - uniform weights (paired over the same questions, 95% bootstrap)")
        print_table(differences)
    for why, n in result.excluded.items():
        print(f"excluded: {n} questions ({why})")
    return 0
