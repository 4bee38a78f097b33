"""Salience benchmark: does an attention source's weight find what a human summary keeps?

On real dialogues (``GLONG_REAL_DATA``: SAMSum test, DialogSum dev and test; never trained on),
triples from the suite's extractor (cached), each labelled "in the reference summary" by
``evaluation.salience.summary_label``. Every setting (input, layer, aggregate) is chosen on the
*selection* split and reported on the *report* split, in one run:

1. for each source, mean within-dialogue AUC and pooled AUC with 95% intervals, beside uniform,
   random, span length, position, frequency and overlap with the model's own summary;
2. the weight's out-of-sample added value over position, length and frequency (logistic regression);
3. the planted line: an off-topic sentence inserted at a seeded place, its rank among the triples;
4. time to score a dialogue (per 10 turns), 2 cores.

Sources: the decoder-only SmolLM2 (dialogue or linearised triples as input, every layer, sum or
mean), the same with the *reference* summary teacher-forced (an upper bound, not available at run
time), and the suite's small encoder-decoder (T5 from scratch, cached).

    GLONG_REAL_DATA=../shared/data python benchmarks/bench_salience.py            # 40 + 40 per split
    GLONG_REAL_DATA=../shared/data python benchmarks/bench_salience.py --n 10     # quicker
    python benchmarks/bench_salience.py --samples     # the shipped sample pairs only (no real data)

Readings are cached per dialogue (``~/.cache/glong/salience-bench``), so a second run only re-analyses.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch

from glong_lib.extraction.prompt import REAL_DATA_ENV
from glong_lib.evaluation import salience as E
from glong_lib.evaluation.metrics import bootstrap_mean
from glong_lib.io import atomic_write_json, content_key
from glong_lib.models import cache_dir, seed_everything
from glong_lib.salience import AGGREGATES, WHERE, DecoderSourceSettings, dialogue_text, dialogue_triple_ranges, position_saliency, positions_in

COVARIATES = ("position", "length", "frequency")
BASELINES = ("uniform", "random", "length", "position", "frequency", "own summary overlap")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=40, help="dialogues per corpus per split (default 40)")
    p.add_argument("--no-seq2seq", action="store_true", help="skip the suite's small encoder-decoder (T5 from scratch)")
    p.add_argument("--minilm-ed", type=int, default=0, metavar="STEPS",
                   help="also train (cached) and measure the MiniLM-warm-started encoder-decoder for STEPS steps")
    p.add_argument("--no-planted", action="store_true", help="skip the planted-line test")
    p.add_argument("--samples", action="store_true", help="only the shipped sample pairs (offline, no real data)")
    p.add_argument("--json", default=None, help="also write the results to this JSON file")
    return p.parse_args()


# --------------------------------------------------------------------------- readings (cached)

def reading_cache(kind: str, dialogue: E.SalienceDialogue, settings) -> Path:
    key = content_key([kind, json.dumps(asdict(settings)), dialogue.pair.dialogue, dialogue.pair.summary,
                       [t.to_dict() for t in dialogue.triples]])
    return cache_dir("salience-bench") / f"{kind}-{dialogue.pair.id}-{key}.json"


#: What a reading runs: every layer, both aggregates and all of ``ROWS`` are kept from it, so only
#: the input and the longest summary matter; fixed here (not the library default, which this
#: benchmark chooses) so that the cached readings stay valid when the default changes.
READING = DecoderSourceSettings(input="dialogue", layer=16, aggregate="mean", max_new_tokens=48, where="turn")

#: Summary lengths (rows) read from one reading: greedy decoding is causal, so the first m rows
#: of a 48-token summary are what ``max_new_tokens=m`` would give.
ROWS = (8, 16, 24, 32, 48)
ROWS_TOLERANCE = 0.035


def decoder_reading(scorer, dialogue, kind: str) -> dict:
    """One reading of a dialogue, cached on disk: per layer and per summary length in ``ROWS``, the
    attention mass on every source token (Eq. 1 summed over the summary rows), and each triple's
    token positions under every rule of locating it; any (layer, aggregate, rule, length) is then
    scored without running the model again."""
    path = reading_cache(kind, dialogue, scorer.settings)
    if path.is_file():
        return json.loads(path.read_text())
    start = time.perf_counter()
    layers = range(scorer.model.config.num_hidden_layers)
    turns, triples, planted = dialogue.turns, dialogue.triples, None
    if kind == "planted":
        turns, triples, planted = E.plant_line(dialogue)
    summary = dialogue.pair.summary if kind == "reference" else None
    reading = scorer.read(triples, turns, summary=summary, layers=layers)
    seconds = time.perf_counter() - start
    if scorer.settings.input == "dialogue":
        text, spans = dialogue_text(turns)
        positions = {w: [positions_in(reading.offsets, r, text)
                         for r in dialogue_triple_ranges(triples, turns, text, spans, w)] for w in WHERE}
    else:
        positions = {"-": reading.positions}
    mass = {str(rows): np.round(reading.layers[:, :, :rows].sum(axis=2), 6).tolist() for rows in ROWS}
    out = {"mass": mass, "positions": positions, "summary": reading.summary, "planted": planted,
           "seconds": round(seconds, 3), "summary_tokens": len(reading.summary_tokens)}
    atomic_write_json(path, out, indent=None)
    return out


def layer_scores(reading: dict, rule: str, aggregate: str, rows: int = ROWS[-1]) -> np.ndarray:
    """Eq. 2 (``aggregate`` over the triple's tokens) of every triple under every layer: (layers, triples)."""
    mass = np.array(reading["mass"][str(rows)])
    positions = reading["positions"][rule]
    return np.stack([position_saliency(torch.from_numpy(m[:, None]), positions, aggregate).numpy() for m in mass])


def said_in(triples, turns) -> np.ndarray:
    """Whether the session says some word of each triple (the library gives the others no tokens,
    so Eq. 2 = 0; readings cached before that rule are masked with this)."""
    text, spans = dialogue_text(turns)
    return np.array([bool(r) for r in dialogue_triple_ranges(triples, turns, text, spans, "turn")])


def columns(source: str, reading: dict, said: np.ndarray):
    """(column name, layer-by-triple scores) for every rule and aggregate of one reading."""
    for rule in reading["positions"]:
        name = source if rule == "-" else f"{source}/{rule}"
        for agg in AGGREGATES:
            scores = layer_scores(reading, rule, agg)
            yield f"{name} | {agg}", scores if rule == "-" else scores * said


# --------------------------------------------------------------------------- tables

def split_table(dialogues, readings: dict[str, list[dict]]) -> dict[str, np.ndarray]:
    """One row per triple: labels, dialogue ids, covariates, and every candidate score column."""
    cols: dict[str, list] = {"labels": [], "groups": []}
    rng = np.random.default_rng(42)

    def add(name, values):
        cols.setdefault(name, []).extend(list(values))

    for i, d in enumerate(dialogues):
        k = len(d.triples)
        add("labels", [E.summary_label(t, d.pair.summary, d.conversation.speakers) for t in d.triples])
        add("groups", [d.pair.id] * k)
        own = readings["decoder dialogue"][i]["summary"]
        for name, values in E.triple_covariates(d.triples, d.turns, own).items():
            add(name, values)
        add("grounded", [E.grounded(t, d.turns, d.conversation.speakers) for t in d.triples])
        add("uniform", [1.0] * k)
        add("random", rng.random(k))
        for source, rows in readings.items():
            r = rows[i]
            if "weights" in r:
                add(source, r["weights"])
                continue
            for name, layers in columns(source, r, said_in(d.triples, d.turns)):
                for layer in range(len(layers)):
                    add(f"{name} | L{layer}", layers[layer])
                add(f"{name} | all layers", layers.mean(axis=0))
    return {k: np.array(v) for k, v in cols.items()}


def normalised(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Eq. 3 inside each dialogue (the pooled AUC sees weights, not raw scores)."""
    out = np.array(values, float)
    for g in dict.fromkeys(groups.tolist()):
        m = groups == g
        top = out[m].max()
        out[m] = out[m] / top if top > 0 else 1.0
    return out


def measure(table, column: str) -> dict:
    w = E.within_dialogue_auc(table[column], table["labels"], table["groups"])
    pooled = E.pooled_auc(normalised(table[column], table["groups"]), table["labels"])
    return {"within": w["auc"], "within_low": w["low"], "within_high": w["high"], "dialogues": w["dialogues"],
            "pooled": pooled["auc"], "pooled_low": pooled["low"], "pooled_high": pooled["high"]}


def choose(select_table, prefix: str, eligible=lambda column: True) -> str:
    """The column (rule x aggregate x layer) of a source with the best mean within-dialogue AUC on
    selection, among the ``eligible`` ones."""
    candidates = [c for c in select_table if c.startswith(prefix) and " | L" in c and eligible(c)]
    scored = {c: E.within_dialogue_auc(select_table[c], select_table["labels"], select_table["groups"], n=1)["auc"]
              for c in candidates}
    return max(scored, key=scored.get)


def planted_by_layer(dialogues, readings, rule: str, agg: str, rows: int = ROWS[-1]) -> dict[str, np.ndarray]:
    """The planted line under every layer of one (rule, aggregate): per dialogue the share of real
    triples that outweigh it, and whether it weighs less than the median real triple."""
    share, below = [], []
    for d, r in zip(dialogues, readings):
        turns, triples, k = E.plant_line(d)
        scores = layer_scores(r, rule, agg, rows) * said_in(triples, turns)  # (layers, triples)
        share.append([E.planted_rank(w, k) for w in scores])
        below.append([bool(w[k] < np.median(np.delete(w, k))) for w in scores])
    return {"share": np.array(share), "below": np.array(below, dtype=float)}


def print_rows(title, rows):
    print(f"\n{title}\n| measure | within-dialogue AUC [95% CI] | pooled AUC [95% CI] |\n|---|---|---|")
    for name, m in rows.items():
        print(f"| {name} | {m['within']:.3f} [{m['within_low']:.3f}, {m['within_high']:.3f}] "
              f"| {m['pooled']:.3f} [{m['pooled_low']:.3f}, {m['pooled_high']:.3f}] |")


# --------------------------------------------------------------------------- main

def main() -> None:
    args = parse_args()
    seed_everything(42)
    if args.samples:
        return samples_only()
    folder = os.environ.get(REAL_DATA_ENV)
    if not folder or not (Path(folder) / "summaries").is_dir():
        print(f"skipped: set {REAL_DATA_ENV} to the real-data folder (with summaries/); or run with --samples")
        return
    from glong_lib.extraction import extracted_triples, load_extractor
    from glong_lib.salience import load_decoder_scorer

    extractor = load_extractor("offline")
    splits = {s: E.salience_dialogues(Path(folder), s, n=args.n) for s in ("select", "report")}
    for s, ds in splits.items():
        for d in ds:
            d.triples = extracted_triples(d.conversation, extractor, batch_size=32)
        splits[s] = [d for d in ds if d.triples]
    shown = [a for i, a in enumerate(sys.argv[1:]) if a != "--json" and (i == 0 or sys.argv[i] != "--json")]
    result: dict = {"command": " ".join(["python benchmarks/bench_salience.py", *shown]),  # no output path
                    "date": time.strftime("%Y-%m-%d"), "dialogues": {s: len(ds) for s, ds in splits.items()},
                    "triples": {s: sum(len(d.triples) for d in ds) for s, ds in splits.items()}}
    dialogue_scorer = load_decoder_scorer(READING)
    triples_scorer = load_decoder_scorer(replace(READING, input="triples"))
    triples_scorer.model = dialogue_scorer.model  # one model in memory
    seq2seq = {}
    if not args.no_seq2seq:
        from glong_lib.salience import load_seq2seq_scorer

        seq2seq["seq2seq T5 (suite)"] = load_seq2seq_scorer("offline")
    if args.minilm_ed:
        from glong_lib import summarizer as Z
        from glong_lib.salience import SalienceScorer

        config = replace(Z.DEFAULT_CONFIG, arch="minilm-ed", steps=args.minilm_ed, learning_rate=5e-5,
                         warmup_steps=max(1, args.minilm_ed // 10))
        tok, model = Z.load_seq2seq(Z.offline_summarizer_dir(config=config))
        seq2seq["seq2seq MiniLM warm-start (suite)"] = SalienceScorer(tok, model)
    from tqdm.auto import tqdm

    tables, kept = {}, {}
    for s, ds in splits.items():
        readings: dict[str, list[dict]] = {"decoder dialogue": [], "decoder triples": [], "reference dialogue": []}
        for name in seq2seq:
            readings[name] = []
        kept[s] = readings
        for d in tqdm(ds, desc=f"reading {s}"):
            readings["decoder dialogue"].append(decoder_reading(dialogue_scorer, d, "own"))
            readings["decoder triples"].append(decoder_reading(triples_scorer, d, "own"))
            readings["reference dialogue"].append(decoder_reading(dialogue_scorer, d, "reference"))
            for name, scorer in seq2seq.items():
                readings[name].append({"weights": scorer.score(d.triples).raw.tolist()})
        tables[s] = split_table(ds, readings)
        result.setdefault("positives", {})[s] = int(tables[s]["labels"].sum())

    select, report = tables["select"], tables["report"]
    planted, planted_readings = {}, {}
    if not args.no_planted:  # an off-topic line must weigh less than the median fact: a condition on the choice
        for s_name, ds in splits.items():
            readings_p = [decoder_reading(dialogue_scorer, d, "planted") for d in tqdm(ds, desc=f"planted {s_name}")]
            planted_readings[s_name] = readings_p
            planted[s_name] = {(rule, agg): planted_by_layer(ds, readings_p, rule, agg) for rule in WHERE
                               for agg in AGGREGATES}

    def passes_planted(column: str) -> bool:
        if not planted:
            return True
        source, agg, layer_name = column.split(" | ")
        return planted["select"][(source.split("/")[1], agg)]["below"][:, int(layer_name[1:])].mean() > 0.5

    chosen = {p: choose(select, p) for p in ("decoder triples", "reference dialogue")}
    chosen["decoder dialogue"] = choose(select, "decoder dialogue", passes_planted)
    chosen["decoder dialogue, ignoring the planted line"] = choose(select, "decoder dialogue")
    result["chosen_on_selection"] = chosen
    best = chosen["decoder dialogue"]
    source, agg, layer_name = best.split(" | ")
    layer, rule = int(layer_name[1:]), source.split("/")[1]
    other = {"turn": "session", "session": "turn"}[rule]
    n_layers = len(kept["select"]["decoder dialogue"][0]["mass"][str(ROWS[-1])])
    rows = {f"{p} (chosen: {c.split(' | ', 1)[1] if p.startswith('decoder triples') else c})": measure(report, c)
            for p, c in chosen.items()}
    rows[f"{source} | {agg} | last layer"] = measure(report, f"{source} | {agg} | L{n_layers - 1}")
    rows[f"{source} | {agg} | all layers averaged"] = measure(report, f"{source} | {agg} | all layers")
    rows[f"{source} | {'sum' if agg == 'mean' else 'mean'} | L{layer}"] = measure(
        report, f"{source} | {'sum' if agg == 'mean' else 'mean'} | L{layer}")
    rows[f"decoder dialogue/{other} | {agg} | L{layer}"] = measure(report, f"decoder dialogue/{other} | {agg} | L{layer}")
    for name in seq2seq:
        rows[f"{name}, last layer, sum"] = measure(report, name)
    for b in BASELINES:
        rows[f"baseline: {b}"] = measure(report, b)
    result["report"] = rows
    print(f"dialogues {result['dialogues']}, triples {result['triples']}, in-summary {result['positives']}")
    print("chosen on the selection split:", json.dumps(chosen))
    print_rows("report split", rows)
    result["layer_curve_select"] = {a: [round(E.within_dialogue_auc(select[f"{source} | {a} | L{i}"],
                                                                     select["labels"], select["groups"], n=1)["auc"], 3)
                                        for i in range(n_layers)] for a in AGGREGATES}
    print(f"\nlayer curve (selection, {source}):", json.dumps(result["layer_curve_select"]))

    curve = {}
    for n_rows in ROWS:
        for s_name in ("select", "report"):
            column = np.concatenate([layer_scores(r, rule, agg, n_rows)[layer] * said_in(d.triples, d.turns)
                                     for r, d in zip(kept[s_name]["decoder dialogue"], splits[s_name])])
            curve.setdefault(n_rows, {})[s_name] = round(E.within_dialogue_auc(
                column, tables[s_name]["labels"], tables[s_name]["groups"], n=1)["auc"], 3)
    result["summary_length_curve"] = curve
    best_rows = max(curve[r]["select"] for r in ROWS)
    # speed matters (each row is one generated token, ~65 ms on 2 cores) and selection differences
    # under ROWS_TOLERANCE are a fraction of the within-dialogue interval (about +-0.09): the shortest wins
    result["chosen_rows"] = min(r for r in ROWS if curve[r]["select"] >= best_rows - ROWS_TOLERANCE)
    print(f"\nsummary length (rows read) at {best}:", json.dumps(curve), "chosen:", result["chosen_rows"])
    result["added_value"] = E.added_value(select, report, COVARIATES, best)
    print("\nadded value over position, length, frequency (out of sample):", json.dumps(result["added_value"]))
    result["added_value_with_overlap"] = E.added_value(select, report, (*COVARIATES, "own summary overlap"), best)
    print("... and over those plus overlap with the model's own summary:",
          json.dumps(result["added_value_with_overlap"]["added"]))

    # why frequency is hard to beat: triples whose words are never said (extraction paraphrases) have
    # frequency 0 and are rarely summarised; on the grounded triples that free signal is gone
    masks = {s_name: t["grounded"].astype(bool) for s_name, t in tables.items()}
    sub = {s_name: {k: v[masks[s_name]] for k, v in t.items()} for s_name, t in tables.items()}
    result["grounded"] = {
        "share": {s_name: round(float(m.mean()), 3) for s_name, m in masks.items()},
        "in_summary_rate": {"grounded": round(float(report["labels"][masks["report"]].mean()), 3),
                            "not grounded": round(float(report["labels"][~masks["report"]].mean()), 3)},
        "report": {name: measure(sub["report"], col) for name, col in
                   (("chosen weight", best), *((f"baseline: {b}", b) for b in BASELINES))},
        "added_value": E.added_value(sub["select"], sub["report"], COVARIATES, best)}
    print("\ngrounded triples (a subject/object word is said in the dialogue):", json.dumps(
        {k: result["grounded"][k] for k in ("share", "in_summary_rate")}))
    print_rows("report split, grounded triples only", result["grounded"]["report"])
    print("added value on grounded triples:", json.dumps(result["grounded"]["added_value"]["added"]))

    if planted:
        for name, column in (("chosen", best), ("ignoring the planted line", chosen["decoder dialogue, ignoring the planted line"])):
            source_c, agg_c, layer_c = column.split(" | ")
            table_p = planted_by_layer(splits["report"], planted_readings["report"], source_c.split("/")[1], agg_c,
                                       result["chosen_rows"])
            share = table_p["share"][:, int(layer_c[1:])]
            lo, hi = bootstrap_mean(share)
            result.setdefault("planted_by_choice", {})[name] = {
                "setting": column, "mean_share_of_triples_above": round(float(share.mean()), 3),
                "low": round(lo, 3), "high": round(hi, 3),
                "below_median": round(float(table_p["below"][:, int(layer_c[1:])].mean()), 3), "dialogues": len(share)}
        result["planted"] = result["planted_by_choice"]["chosen"]
        print("\nplanted line (report split, chosen summary length):", json.dumps(result["planted_by_choice"]))

    # time: the configured scorer (one layer tapped, its summary length) on the first 12 report dialogues
    timed = load_decoder_scorer(replace(READING, layer=layer, aggregate=agg, where=rule,
                                        max_new_tokens=result["chosen_rows"]))
    secs, turns = [], []
    for d in splits["report"][:12]:
        start = time.perf_counter()
        timed.score(d.triples, d.turns)
        secs.append(time.perf_counter() - start)
        turns.append(len(d.turns))
    result["seconds_per_dialogue"] = round(float(np.mean(secs)), 2)
    result["seconds_per_10_turns"] = round(float(np.sum(secs) / np.sum(turns) * 10), 2)
    result["timed_settings"] = asdict(timed.settings)
    print(f"\ntime ({asdict(timed.settings)}): {result['seconds_per_dialogue']} s per dialogue, "
          f"{result['seconds_per_10_turns']} s per 10 turns, {len(secs)} report dialogues of {np.mean(turns):.1f} turns")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


def samples_only() -> None:
    """The quick offline check on the project's own held-out sample pairs (gold triples)."""
    from glong_lib import summarizer as S
    from glong_lib.salience import load_decoder_scorer

    _, test = S.split_summary_pairs(S.shipped_summary_pairs(), S.DEFAULT_CONFIG.n_test, S.DEFAULT_CONFIG.seed)
    ev = E.evaluate_salience(load_decoder_scorer(), test, method="decoder-only SmolLM2")
    print(json.dumps(ev.auc_table(), indent=1))


if __name__ == "__main__":
    sys.exit(main())
