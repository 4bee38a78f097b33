"""The reports of ``glong eval-msc``: the paper's table layouts, the paired comparisons of
``--compare`` and its G-Long-against-long-context summary (``commands.evaluate`` runs, this prints)."""

from __future__ import annotations

import json

from .common import finite_json, print_table

#: The two prompt variants of ``--variants`` (their names in the tables).
RANKED = "G-Long, ranked memory lines"
DIALOGUE = "G-Long, context never reset"

#: The prompt-token aim against long context (issue 7; the paper: 63.0% fewer).
TOKEN_AIM = 0.60

#: The scores each pair is compared on: nlg-eval's (the paper's scale), then the smoothed ones.
PAIR_METRICS = (("nlg_b2", "B-2"), ("nlg_rougeL", "R-L"), ("b2", "B-2 sm."), ("rougeL", "R-L sm."))

#: (method, baseline, what the pair measures): ``--compare`` gives each pair run a paired-bootstrap line.
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

def as_json(data: dict) -> str:
    """``data`` as JSON text: NaN and infinity as null, anything else unknown as its string."""
    return json.dumps(finite_json(data), indent=2, ensure_ascii=False, default=str, allow_nan=False)


def print_tables(result, price, smoothed: bool = False, replies: bool = True) -> None:
    """The Table 1 layout (nlg-eval scale; with ``smoothed`` also the smoothed one and the B-1..B-4
    averages) unless no reply was generated, then the Table 6 layout."""
    if replies:
        print("Table 1 layout (x100; BLEU-2 / BLEU-3 / ROUGE-L per evaluated session, then the average), "
              "the paper's nlg-eval scale")
        print_table(result.table1())
    if replies and smoothed:
        print("\nTable 1 layout (x100), nlg-eval on raw whitespace-split text (the suite's earlier scale)")
        print_table(result.table1(scale="whitespace"))
        print("\nTable 1 layout (x100), smoothed sentence BLEU and rouge_score ROUGE-L")
        print_table(result.table1(scale="smoothed"))
        print("\nAverages (x100, B-1..B-4, ROUGE-L)")
        print_table([{k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()} for r in result.summary()])
    print("\nTable 6 layout (tokens per conversation; cost in $ per 1K conversations at "
          f"${price.input_per_m}/1M in, ${price.output_per_m}/1M out)")
    print_table(result.tokens())
    if result.settings.get("turns_per_session") is None and {"G-Long", "Long context"} <= set(result.methods):
        print("\nPrompt-token saving of G-Long against long context, counted two ways from this run")
        print_table(result.token_saving("G-Long", "Long context"))


def comparison(result, replies: bool = True) -> dict:
    """What ``--compare`` reports: the pairs of :data:`PAIRS` that ran and reply health (when
    replies were generated), and G-Long against long context when both ran."""
    from ..evaluation.responder import reply_health

    out: dict = {"pairs": pair_rows(result), "health": reply_health(result.records, result.methods)} if replies else {}
    if {"G-Long", "Long context"} <= set(result.methods):
        out["glong_vs_long_context"] = result.compare("G-Long", "Long context")
    return out


def pair_rows(result) -> list[dict]:
    """One row per pair of :data:`PAIRS` both run: differences (x100) with paired 95% intervals over
    conversations, on the nlg-eval scale and the smoothed one, and how often the memories agree."""
    from ..evaluation.msc import TIE

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
    return rows


def print_comparison(report: dict) -> None:
    """Print :func:`comparison`'s report."""
    if report.get("pairs"):
        print("\nPaired differences (x100; mean [95% CI] over conversations; nlg-eval scale, then smoothed)")
        print_table(report["pairs"])
    if "health" in report:
        print("\nReply health (how many replies are empty or copy the prompt: a tag, a header, a memory line, "
              "5 words of the system line, the instruction or the user's utterance: generation.echo_kind)")
        print_table(report["health"])
    if report.get("memory use"):
        print("\nMemory use: replies to turns whose gold reply recalls an earlier session's persona fact; "
              "the share that say a recalled word (95% CI over conversations)")
        print_table([{"method": r["method"], "memory turns": r["memory turns"],
                      "reply uses memory": f"{r['reply uses memory']:.1%} [{r['ci low']:.1%}, {r['ci high']:.1%}]",
                      "recalled word in memory lines": ("" if r["recalled word in memory lines"] is None
                                                        else f"{r['recalled word in memory lines']:.1%}"),
                      "- No history": (f"{r['- No history']:+.1%} [{r['diff ci low']:+.1%}, {r['diff ci high']:+.1%}]"
                                       if "- No history" in r else "")}
                     for r in report["memory use"]])
    cmp = report.get("glong_vs_long_context")
    if cmp is None:
        return
    red = cmp["prompt-token reduction"]
    print(f"\nG-Long vs long context over {cmp['conversations']} conversation(s):")
    print(f"  prompt-token reduction {100 * red:.1f}%  (paper 63.0%; aim >= {TOKEN_AIM:.0%}: "
          f"{'met' if red >= TOKEN_AIM else 'NOT met'})")
    if "health" not in report:
        return
    for m, label in (("nlg_b2", "BLEU-2 (nlg-eval)"), ("nlg_rougeL", "ROUGE-L (nlg-eval)"),
                     ("b2", "BLEU-2 (smoothed)"), ("rougeL", "ROUGE-L (rouge_score)")):
        c = cmp[m]
        print(f"  {label}: G-Long {c['method']:.2f} vs long context {c['baseline']:.2f}; difference "
              f"{c['diff mean']:+.2f}, 95% CI [{c['ci low']:+.2f}, {c['ci high']:+.2f}] (sd {c['diff sd']:.2f}; "
              f"G-Long higher in {c['method wins']}/{cmp['conversations']}); the paper's "
              f"{c['paper difference']:+.2f} needs about {c['replies needed']} paired replies "
              f"(this run: {cmp['replies']})")


