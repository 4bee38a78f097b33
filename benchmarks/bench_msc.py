"""End-to-end MSC benchmark: ``glong eval-msc`` with a preset, the run behind the README's MSC tables.

Every method of ``config.ALL_AGENT_METHODS`` (the baselines, the summary-memory baseline whose memory the
generator writes, G-Long and its ablations: importance, recency, the rerank (Table 14), L = 2 hops)
plus the two prompt variants (``--variants``: the reference code's ranked memory lines; the context
never reset between sessions), the paper's Table 1 and Table 6 layouts, and ``--compare``: G-Long
against long context (prompt-token reduction; BLEU-2 and ROUGE-L differences on the paper's nlg-eval
scale and the smoothed one, with paired 95% intervals over conversations and the number of replies
the paper's difference would need), the pairs of ``commands.evaluate.PAIRS``, and reply health.
The runner is the command's (``glong_lib/commands/evaluate.py``); this script only chooses its
options (:data:`PRESET`, then the real MSC when ``GLONG_REAL_DATA`` is set) and passes every other
option through to it, so ``--help`` of ``glong eval-msc`` lists them.

On the real MSC (``msc4_valid.jsonl``, sessions 1-4) session 1 fills memory and sessions 2-4 are
scored; G-Long's triples come from the fine-tuned extractor there (the samples carry gold ones).
Aim (issue 7): G-Long at least 60% fewer prompt tokens than long context (the paper: 63.0%).

Run time on 2 shared cores: ``--quick`` (2 sample conversations, 1 turn a session, the model-free
echo generator, gold triples, no salience model) about 10 s; the full run (20 real conversations,
2 user turns a session, SmolLM2 replies) about 2 hours. ``--candidates --turns-per-session 0`` (every user turn,
3 methods, 355 replies each): about 35-40 minutes per responder, plus about 17 minutes the first time an adapter
is trained; ``--memory-ablation 60``: about 10 minutes for the three responders.

    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_msc --json msc.json   # 20 real MSC conversations
    python -m benchmarks.bench_msc --conversations 3                                # a CPU-sized run on the samples
    python -m benchmarks.bench_msc --generator tokens --turns-per-session 0         # prompt tokens of every turn
    python -m benchmarks.bench_msc --reply-probe 9 --methods glong                  # why replies stop at line 1
    python -m benchmarks.bench_msc --quick --json msc.json
    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_msc --candidates --json cand.json  # responders
    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_msc --candidates --turns-per-session 0 \
        --responders plain msc-recall --runs-dir runs/ --json cand_all.json   # every turn, resumable
    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_msc --memory-ablation 60 --json ablation.json

``--candidates`` (issue 28) runs no history, long context and G-Long once per responder of
:data:`CANDIDATES` on the same real MSC conversations (20, held out from the MSC responder's
training) and prints one row per responder: prompt echoes (every kind of ``generation.echo_kind``),
B-2 and R-L on the paper's scale, the memory-use probe for G-Long, seconds per reply, G-Long minus
long context, and each responder's G-Long minus the first's, paired over conversations.
``--responders`` picks among them, ``--runs-dir`` keeps each run's report and checkpoint (resumable).
``--memory-ablation N`` asks each responder whether it reads its memory at all: N held-out prompts built
like the responders' training ones, answered with and without their memory lines.
"""

from __future__ import annotations

import sys
from typing import Optional

from benchmarks._common import add_split_option, bench_parser, real_split
from glong_lib.cli import main as glong
from glong_lib.config import ALL_AGENT_METHODS, RESPONDERS
from glong_lib.datasets import describe

#: The options this benchmark gives ``glong eval-msc`` (any option given on the command line wins):
#: every method and both prompt variants, the paired comparisons, the first 2 user turns of each
#: session (about 2 s per reply on 2 cores), 24-token replies cut at their first line (with the
#: first-line stop, replies end on their own before 24 tokens).
PRESET = ["--methods", *ALL_AGENT_METHODS, "--variants", "--compare", "--turns-per-session", "2",
          "--max-new-tokens", "24"]

#: ``--quick``: two sample conversations, one turn a session, no model anywhere but the encoder.
QUICK = ["--conversations", "2", "--turns-per-session", "1", "--max-sessions", "2", "--generator", "echo",
         "--methods", "no-history", "long-context", "glong",
         "--triples", "gold", "--no-salience"]


def msc_parser():
    """The benchmark's own options: ``--json``, ``--quick`` and ``--split`` (the MSC split; the rest go
    to ``glong eval-msc``)."""
    parser = bench_parser(__doc__)
    add_split_option(parser, "msc", "msc-valid", "MSC")
    return parser


def msc_split(name: str):
    """The file of MSC split ``name`` under ``$GLONG_REAL_DATA``, saying which split it is, or None."""
    path = real_split(name)
    if path is not None:
        print(f"MSC split '{name}': {path}")
    return path


def eval_msc_args(argv=None) -> list[str]:
    """The ``glong eval-msc`` arguments this benchmark runs: the preset, the real MSC (20
    conversations) when ``GLONG_REAL_DATA`` holds it, ``--quick``'s sizes, then the caller's own
    options; ``--json PATH`` becomes ``--out PATH`` (every reply and score, and the comparison)."""
    ours, rest = msc_parser().parse_known_args(argv)
    args = ["eval-msc", *PRESET]
    msc = None if ours.quick else msc_split(ours.split)
    if ours.quick:
        args += QUICK
    elif msc is not None:
        args += ["--msc", str(msc), "--conversations", "20"]
    if ours.json is not None:
        args += ["--out", str(ours.json)]
    return args + rest


#: The responders ``--candidates`` compares (``glong eval-msc --responder``), the first being the reference.
CANDIDATES = RESPONDERS
#: The methods each candidate runs: the two the paper compares and the floor.
CANDIDATE_METHODS = ["no-history", "long-context", "glong"]


def candidate_row(name: str, data: dict, reference: Optional[dict] = None, turns: Optional[dict] = None) -> dict:
    """One responder's line of the candidate table, from its ``glong eval-msc --compare --out`` JSON;
    with the file's memory turns (``evaluation.memory_use.memory_turns_in_file``) also how often
    G-Long said a recalled word its memory lines showed it."""
    from glong_lib.evaluation.metrics import paired_bootstrap

    records = data["records"]
    glong_rows = [r for r in records if r["method"] == "G-Long"]
    health = {h["method"]: h for h in data["comparison"]["health"]}
    use = {u["method"]: u for u in data["comparison"].get("memory use") or []}
    vs = data["comparison"]["glong_vs_long_context"]
    fresh = [r["seconds"] for r in records if not r["cached"]]
    row = {"responder": name, "replies": len(records),
           "echo %": round(100 * sum(h["prompt echo"] for h in health.values()) / len(records), 1),
           "G-Long echo %": round(100 * health["G-Long"]["prompt echo"] / len(glong_rows), 1),
           "G-Long B-2": round(100 * _mean(glong_rows, "nlg_b2"), 2),
           "G-Long R-L": round(100 * _mean(glong_rows, "nlg_rougeL"), 2),
           "s / reply": round(sum(fresh) / max(1, len(fresh)), 2),
           "G-Long - long context B-2": _interval(vs["nlg_b2"]["diff mean"], vs["nlg_b2"]["ci low"],
                                                  vs["nlg_b2"]["ci high"]),
           "G-Long - long context R-L": _interval(vs["nlg_rougeL"]["diff mean"], vs["nlg_rougeL"]["ci low"],
                                                  vs["nlg_rougeL"]["ci high"])}
    row["G-Long - long context B-2, interval width"] = round(vs["nlg_b2"]["ci high"] - vs["nlg_b2"]["ci low"], 2)
    row["replies a 1-point B-2 difference needs"] = one_point_replies(records)
    for method in ("G-Long", "No history", "Long context"):
        if method in use:
            u = use[method]
            row[f"memory use {method}"] = (f"{u['reply uses memory']:.3f} [{u['ci low']:.3f}, {u['ci high']:.3f}] "
                                           f"of {u['memory turns']}")
    if turns is not None:
        from glong_lib.evaluation.memory_use import used_when_shown

        said, shown = used_when_shown(records, turns, "G-Long")
        row["G-Long said the recalled word its memory showed"] = f"{said} of {shown}"
    if "- No history" in use.get("G-Long", {}):
        u = use["G-Long"]
        row["memory use G-Long - no history"] = _interval(u["- No history"], u["diff ci low"], u["diff ci high"], 3)
    if reference is not None:
        mine = {(r["conversation"], r["turn_id"]): r for r in glong_rows}
        ref = {(r["conversation"], r["turn_id"]): r for r in reference["records"] if r["method"] == "G-Long"}
        keys = sorted(mine.keys() & ref.keys())
        for metric, label in (("nlg_b2", "B-2"), ("nlg_rougeL", "R-L")):
            d = paired_bootstrap([100 * mine[k][metric] for k in keys], [100 * ref[k][metric] for k in keys],
                                 groups=[k[0] for k in keys])
            row[f"G-Long {label} - first responder"] = _interval(d["mean_diff"], d["ci_low"], d["ci_high"])
    return row


def one_point_replies(records) -> Optional[int]:
    """Paired replies that detect a 1-point (x100) B-2 difference between G-Long and long context at
    80% power (``evaluation.metrics.replies_needed``, from the spread of the per-reply differences
    in ``records``); None with fewer than 2 pairs or no spread.

    >>> recs = [{"method": m, "conversation": "c", "turn_id": str(i), "nlg_b2": b}
    ...         for i, (x, y) in enumerate([(0.05, 0.01), (0.0, 0.02), (0.03, 0.03)])
    ...         for m, b in (("G-Long", x), ("Long context", y))]
    >>> one_point_replies(recs)   # differences 4, -2, 0 points: sd 3.06
    74
    """
    import statistics

    from glong_lib.evaluation.metrics import replies_needed

    by = {m: {(r["conversation"], r["turn_id"]): r["nlg_b2"] for r in records if r["method"] == m}
          for m in ("G-Long", "Long context")}
    keys = sorted(by["G-Long"].keys() & by["Long context"].keys())
    diffs = [100 * (by["G-Long"][k] - by["Long context"][k]) for k in keys]
    if len(diffs) < 2 or statistics.stdev(diffs) == 0:
        return None
    return replies_needed(statistics.stdev(diffs), 1.0)


def _mean(rows, key):
    return sum(r[key] for r in rows) / max(1, len(rows))


def _interval(mean, low, high, digits=2):
    return f"{mean:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def candidates(argv) -> int:
    """``--candidates``: one ``glong eval-msc`` run per responder, then the table (see the docstring).

    ``--responders NAME ...`` picks which (default :data:`CANDIDATES`); ``--runs-dir DIR`` keeps each
    responder's report (``DIR/NAME.json``) and checkpoint (``DIR/NAME.ckpt``, resumed when present)
    so that a long run can stop and go on, and a report already there is read instead of run again
    (delete it to re-run). Any other option goes to ``glong eval-msc`` (``--turns-per-session 0``:
    every scored turn)."""
    import json
    import tempfile
    from pathlib import Path

    from benchmarks._common import write_results

    parser = msc_parser()
    parser.add_argument("--responders", nargs="+", default=list(CANDIDATES),
                        choices=CANDIDATES)
    parser.add_argument("--runs-dir", type=Path, default=None)
    ours, rest = parser.parse_known_args([a for a in argv if a != "--candidates"])
    msc = msc_split(ours.split)
    if msc is None:
        print(f"--candidates needs the real MSC: set GLONG_REAL_DATA to a folder holding split '{ours.split}'")
        return 2
    runs: dict = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = ours.runs_dir or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for name in ours.responders:
            out, checkpoint = folder / f"{name}.json", folder / f"{name}.ckpt"
            if out.is_file():
                print(f"\n=== responder: {name} (read from {out})")
                runs[name] = json.loads(out.read_text())
                continue
            args = ["eval-msc", "--methods", *CANDIDATE_METHODS, "--compare", "--turns-per-session", "2",
                    "--max-new-tokens", "24", "--msc", str(msc), "--conversations", "20", "--responder", name,
                    *rest, "--out", str(out), "--checkpoint", str(checkpoint),
                    *(["--resume"] if checkpoint.is_file() else [])]
            print(f"\n=== responder: {name}")
            code = glong(args)
            if code:
                return code
            runs[name] = json.loads(out.read_text())
    from glong_lib.evaluation.memory_use import memory_turns_in_file

    first_name = ours.responders[0]
    turns = memory_turns_in_file(msc)
    rows = [candidate_row(name, data, None if name == first_name else runs[first_name], turns)
            for name, data in runs.items()]
    print(f"\n{candidate_title(runs[first_name]['settings'])}")
    for row in rows:
        print("\n".join(f"  {k}: {v}" for k, v in row.items()), end="\n\n")
    write_results(ours, {"data": describe(ours.split), "candidates": rows,
                         "runs": {n: {k: v for k, v in d.items() if k != "records"} for n, d in runs.items()},
                         "records": {n: d["records"] for n, d in runs.items()}}, "bench_msc-candidates", inputs=[msc])
    return 0


def candidate_title(settings: dict) -> str:
    """The candidate table's heading, from a run's settings (the turns scored are the run's).

    >>> candidate_title({"conversations": 20, "turns_per_session": 0})[:73]
    'Responder candidates (20 real MSC conversations, sessions 2-4, every user'
    """
    turns = settings.get("turns_per_session") or 0
    which = "every user turn" if turns == 0 else f"first {turns} user turns of each"
    return (f"Responder candidates ({settings.get('conversations')} real MSC conversations, sessions 2-4, {which}; "
            "x100 on the paper's scale; [95% CI over conversations])")


def memory_ablation_table(argv) -> int:
    """``--memory-ablation N``: each responder of :data:`CANDIDATES` answers the first N held-out
    training-style prompts whose gold reply recalls a memory line, with and without the memory lines
    (``evaluation.responder.memory_ablation``): does the responder read its memory at all?"""
    from benchmarks._common import write_results
    from glong_lib.evaluation.responder import held_out_examples, memory_ablation, responder_adapter
    from glong_lib.generation import make_generator
    from glong_lib.loaders import load_conversations

    parser = msc_parser()
    parser.add_argument("--memory-ablation", type=int, required=True)
    parser.add_argument("--responders", nargs="+", default=list(CANDIDATES), choices=CANDIDATES)
    ours, _ = parser.parse_known_args(argv)
    msc = msc_split(ours.split)
    if msc is None:
        print(f"--memory-ablation needs the real MSC: set GLONG_REAL_DATA to a folder holding split '{ours.split}'")
        return 2
    examples, specific = held_out_examples(msc, ours.memory_ablation)
    scored = sorted({e["conversation"] for e in examples})
    held = [c for c in load_conversations(msc) if c.id in set(scored)]
    results = {}
    for name in ours.responders:
        adapter = None if name == "plain" else responder_adapter(msc, held, name)
        generator = make_generator("offline", max_new_tokens=24, stop_at_line_end=True,
                                   **({"adapter": str(adapter)} if adapter else {}))
        results[name] = memory_ablation(generator, examples, specific, limit=ours.memory_ablation)
    print("\nMemory ablation: held-out MSC prompts built like the responder's training ones (gold persona facts "
          "of earlier sessions as memory lines) whose gold reply recalls one; replies that say a recalled word, "
          "with the memory lines and without them (95% CI over conversations)")
    for name, r in results.items():
        print(f"  {name:<11} {r['prompts']} prompts in {r['conversations']} conversations: with memory "
              f"{r['with memory']}, without {r['without memory']}, difference "
              f"{_interval(r['with memory - without'], r['ci low'], r['ci high'], 3)}")
    write_results(ours, {"data": describe(ours.split), "memory ablation": results}, "bench_msc-memory-ablation",
                  inputs=[msc], resamples={"ci low/high": "conversations (bootstrap)"})
    return 0


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if {"-h", "--help"} & set(argv):
        print(__doc__)
        print("Options: --json PATH, --quick, --split {msc-valid,msc-test} (the real MSC split, default msc-valid), "
              "--candidates, --memory-ablation N, and every option of `glong eval-msc --help`.")
        return 0
    if "--candidates" in argv:
        return candidates(argv)
    if "--memory-ablation" in argv:
        return memory_ablation_table(argv)
    status = glong(eval_msc_args(argv))
    ours, _ = msc_parser().parse_known_args(argv)
    if status == 0 and not ours.quick and ours.json is not None:  # eval-msc wrote --json; keep it with provenance
        import argparse
        import json

        from benchmarks._common import write_results

        msc = real_split(ours.split)
        write_results(argparse.Namespace(**{**vars(ours), "json": None}), json.loads(ours.json.read_text()),
                      "bench_msc", inputs=[msc] if msc else [], settings={"glong eval-msc": eval_msc_args(argv)},
                      resamples={"95% intervals": "conversations (paired bootstrap)"})
    return status


if __name__ == "__main__":
    sys.exit(main())
