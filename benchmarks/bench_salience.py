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
time), and the suite's small encoder-decoder (T5 from scratch, cached). Eq. 2 and Eq. 3 are the
library's (``salience.layer_saliency`` on the cached per-token mass, ``salience.normalise_by_group``).

Run time on 2 shared cores: ``--quick`` (no model: the whole analysis on 6 + 6 shipped sample
dialogues with random attention standing in for the readings, 20 bootstrap draws; it checks the
pipeline and measures nothing) about 5 s; ``--samples`` (SmolLM2-135M on the held-out sample pairs)
about a minute; the full run about 40 minutes cold, a few minutes with its readings cached.

    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_salience --n 40 --minilm-ed 200   # then make docs
    GLONG_REAL_DATA=../shared/data python -m benchmarks.bench_salience --n 10     # quicker
    python -m benchmarks.bench_salience --samples     # the shipped sample pairs only (no real data)
    python -m benchmarks.bench_salience --quick --json salience.json

Readings are cached per dialogue (``~/.cache/glong/salience-bench``), so a second run only re-analyses.
"""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Optional

import numpy as np

from benchmarks._common import bench_parser, real_data_dir, write_results
from glong_lib.datasets import REAL_DATA_ENV
from glong_lib.evaluation import salience as E
from glong_lib.evaluation.intervals import bootstrap_mean
from glong_lib.io import atomic_write_json, content_key
from glong_lib.models import cache_dir, seed_everything
from glong_lib.salience import (
    AGGREGATES,
    WHERE,
    DecoderSourceSettings,
    dialogue_text,
    dialogue_triple_ranges,
    layer_saliency,
    normalise_by_group,
    positions_in,
)

COVARIATES = ("position", "length", "frequency")
BASELINES = ("uniform", "random", "length", "position", "frequency", "own summary overlap")

#: Bootstrap draws behind every interval in ``--quick`` (a few, for speed: its numbers mean nothing anyway).
QUICK_RESAMPLES = 20


def parse_args(argv=None):
    p = bench_parser(__doc__)
    p.add_argument("--n", type=int, default=40, help="dialogues per corpus per split (default 40)")
    p.add_argument("--no-seq2seq", action="store_true", help="skip the suite's small encoder-decoder (T5 from scratch)")
    p.add_argument("--minilm-ed", type=int, default=0, metavar="STEPS",
                   help="also train (cached) and measure the MiniLM-warm-started encoder-decoder for STEPS steps")
    p.add_argument("--no-planted", action="store_true", help="skip the planted-line test")
    p.add_argument("--samples", action="store_true", help="only the shipped sample pairs (offline, no real data)")
    return p.parse_args(argv)


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
    """One reading of a dialogue, cached on disk (unless the scorer says ``cache = False``): per
    layer and per summary length in ``ROWS``, the attention mass on every source token (Eq. 1 summed
    over the summary rows), and each triple's token positions under every rule of locating it; any
    (layer, aggregate, rule, length) is then scored without running the model again."""
    path = reading_cache(kind, dialogue, scorer.settings) if getattr(scorer, "cache", True) else None
    if path is not None and path.is_file():
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
    if path is not None:
        atomic_write_json(path, out, indent=None)
    return out


def layer_scores(reading: dict, rule: str, aggregate: str, rows: int = ROWS[-1]) -> np.ndarray:
    """Eq. 2 (``aggregate`` over the triple's tokens) of every triple under every layer of a cached
    reading, (layers, triples): the library's ``layer_saliency`` on the per-token mass it keeps."""
    mass = np.array(reading["mass"][str(rows)])  # (layers, source tokens): summed over the summary rows
    return layer_saliency(mass[:, :, None], reading["positions"][rule], aggregate)


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


def measure(table, column: str, resamples: Optional[int] = None) -> dict:
    """Within-dialogue and pooled AUC of one column, with bootstrap intervals (``resamples`` draws;
    None: the library's defaults)."""
    n = {} if resamples is None else {"n": resamples}
    w = E.within_dialogue_auc(table[column], table["labels"], table["groups"], **n)
    weights = normalise_by_group(table[column], table["groups"])  # Eq. 3 per dialogue: the pooled AUC sees weights
    pooled = E.pooled_auc(weights, table["labels"], **n)
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


# --------------------------------------------------------------------------- the run, step by step

def load_splits(folder: Path, n: int) -> dict[str, list]:
    """The selection and report dialogues, each with the suite extractor's triples (cached);
    dialogues it finds no triple in are dropped."""
    from glong_lib.extraction import extracted_triples, load_extractor

    extractor = load_extractor("offline")
    splits = {s: E.salience_dialogues(folder, s, n=n) for s in ("select", "report")}
    for s, ds in splits.items():
        for d in ds:
            d.triples = extracted_triples(d.conversation, extractor, batch_size=32)
        splits[s] = [d for d in ds if d.triples]
    return splits


def run_header(argv: list[str], splits) -> dict:
    """What the result file says about the run (the command without its output path)."""
    shown = [a for i, a in enumerate(argv) if a != "--json" and (i == 0 or argv[i - 1] != "--json")]
    return {"command": " ".join(["python -m benchmarks.bench_salience", *shown]),
            "date": time.strftime("%Y-%m-%d"), "dialogues": {s: len(ds) for s, ds in splits.items()},
            "triples": {s: sum(len(d.triples) for d in ds) for s, ds in splits.items()}}


def load_seq2seq_sources(args) -> dict:
    """The encoder-decoder sources asked for: the suite's T5, and the MiniLM warm start (``--minilm-ed``)."""
    sources = {}
    if not args.no_seq2seq:
        from glong_lib.salience import load_seq2seq_scorer

        sources["seq2seq T5 (suite)"] = load_seq2seq_scorer("offline")
    if args.minilm_ed:
        from glong_lib import summarizer as Z
        from glong_lib.salience import SalienceScorer

        config = replace(Z.DEFAULT_CONFIG, arch="minilm-ed", steps=args.minilm_ed, learning_rate=5e-5,
                         warmup_steps=max(1, args.minilm_ed // 10))
        tok, model = Z.load_seq2seq(Z.offline_summarizer_dir(config=config))
        sources["seq2seq MiniLM warm-start (suite)"] = SalienceScorer(tok, model)
    return sources


def read_split(ds, dialogue_scorer, triples_scorer, seq2seq: dict, desc: str) -> dict[str, list[dict]]:
    """Every source's reading of every dialogue of one split (decoder readings cached on disk)."""
    from tqdm.auto import tqdm

    readings: dict[str, list[dict]] = {"decoder dialogue": [], "decoder triples": [], "reference dialogue": []}
    readings.update({name: [] for name in seq2seq})
    for d in tqdm(ds, desc=desc):
        readings["decoder dialogue"].append(decoder_reading(dialogue_scorer, d, "own"))
        readings["decoder triples"].append(decoder_reading(triples_scorer, d, "own"))
        readings["reference dialogue"].append(decoder_reading(dialogue_scorer, d, "reference"))
        for name, scorer in seq2seq.items():
            readings[name].append({"weights": scorer.score(d.triples).raw.tolist()})
    return readings


def read_planted(splits, scorer) -> tuple[dict, dict]:
    """Planted-line readings per split, and per split and (rule, aggregate) the line's place under
    every layer (:func:`planted_by_layer`)."""
    from tqdm.auto import tqdm

    readings, by_layer = {}, {}
    for name, ds in splits.items():
        readings[name] = [decoder_reading(scorer, d, "planted") for d in tqdm(ds, desc=f"planted {name}")]
        by_layer[name] = {(rule, agg): planted_by_layer(ds, readings[name], rule, agg)
                          for rule in WHERE for agg in AGGREGATES}
    return readings, by_layer


def parse_column(column: str) -> tuple[str, str, str, int]:
    """(source, rule, aggregate, layer) of a layer column such as ``decoder dialogue/turn | mean | L16``."""
    source, agg, layer = column.split(" | ")
    return source, source.split("/")[1], agg, int(layer[1:])


def choose_settings(select, planted: dict) -> dict[str, str]:
    """The best column of each source on selection; the dialogue source's must also put the
    planted line below the median fact in most selection dialogues (when the test ran)."""
    def passes_planted(column: str) -> bool:
        if not planted:
            return True
        _, rule, agg, layer = parse_column(column)
        return planted["select"][(rule, agg)]["below"][:, layer].mean() > 0.5

    chosen = {p: choose(select, p) for p in ("decoder triples", "reference dialogue")}
    chosen["decoder dialogue, ignoring the planted line"] = choose(select, "decoder dialogue")
    if any(passes_planted(c) for c in select if c.startswith("decoder dialogue") and " | L" in c):
        chosen["decoder dialogue"] = choose(select, "decoder dialogue", passes_planted)
    else:
        print("no setting puts the planted line below the median fact on selection: chosen without that condition")
        chosen["decoder dialogue"] = chosen["decoder dialogue, ignoring the planted line"]
    return chosen


def report_rows(report, chosen: dict, n_layers: int, seq2seq: dict, resamples: Optional[int] = None) -> dict[str, dict]:
    """The report split's table: each chosen setting, the chosen one's neighbours (last layer, all
    layers averaged, the other aggregate, the other rule), the encoder-decoders and the baselines."""
    best = chosen["decoder dialogue"]
    source, rule, agg, layer = parse_column(best)
    other_agg = "sum" if agg == "mean" else "mean"
    other_rule = {"turn": "session", "session": "turn"}[rule]
    rows = {f"{p} (chosen: {c.split(' | ', 1)[1] if p.startswith('decoder triples') else c})":
            measure(report, c, resamples) for p, c in chosen.items()}
    rows[f"{source} | {agg} | last layer"] = measure(report, f"{source} | {agg} | L{n_layers - 1}", resamples)
    rows[f"{source} | {agg} | all layers averaged"] = measure(report, f"{source} | {agg} | all layers", resamples)
    rows[f"{source} | {other_agg} | L{layer}"] = measure(report, f"{source} | {other_agg} | L{layer}", resamples)
    rows[f"decoder dialogue/{other_rule} | {agg} | L{layer}"] = measure(
        report, f"decoder dialogue/{other_rule} | {agg} | L{layer}", resamples)
    for name in seq2seq:
        rows[f"{name}, last layer, sum"] = measure(report, name, resamples)
    for b in BASELINES:
        rows[f"baseline: {b}"] = measure(report, b, resamples)
    return rows


def layer_curve(select, best: str, n_layers: int) -> dict[str, list[float]]:
    """Selection AUC of the chosen source and rule under every layer, per aggregate."""
    source = best.split(" | ")[0]
    return {a: [round(E.within_dialogue_auc(select[f"{source} | {a} | L{i}"], select["labels"], select["groups"],
                                            n=1)["auc"], 3) for i in range(n_layers)] for a in AGGREGATES}


def summary_length_curve(splits, kept, tables, best: str) -> tuple[dict, int]:
    """AUC of the chosen setting when only the first ``rows`` summary tokens are read, per split,
    and the shortest length within ``ROWS_TOLERANCE`` of the best on selection."""
    _, rule, agg, layer = parse_column(best)
    curve = {}
    for n_rows in ROWS:
        for s_name in ("select", "report"):
            column = np.concatenate([layer_scores(r, rule, agg, n_rows)[layer] * said_in(d.triples, d.turns)
                                     for r, d in zip(kept[s_name]["decoder dialogue"], splits[s_name])])
            curve.setdefault(n_rows, {})[s_name] = round(E.within_dialogue_auc(
                column, tables[s_name]["labels"], tables[s_name]["groups"], n=1)["auc"], 3)
    best_rows = max(curve[r]["select"] for r in ROWS)
    # speed matters (each row is one generated token, ~65 ms on 2 cores) and selection differences
    # under ROWS_TOLERANCE are a fraction of the within-dialogue interval (about +-0.09): the shortest wins
    return curve, min(r for r in ROWS if curve[r]["select"] >= best_rows - ROWS_TOLERANCE)


def grounded_report(tables, best: str, resamples: Optional[int] = None) -> dict:
    """The chosen weight and the baselines on the grounded triples only (a subject/object word is
    said in the dialogue): triples whose words are never said (extraction paraphrases) have
    frequency 0 and are rarely summarised; on the grounded ones that free signal is gone."""
    masks = {s: t["grounded"].astype(bool) for s, t in tables.items()}
    sub = {s: {k: v[masks[s]] for k, v in t.items()} for s, t in tables.items()}
    report = tables["report"]
    return {"share": {s: round(float(m.mean()), 3) for s, m in masks.items()},
            "in_summary_rate": {"grounded": round(float(report["labels"][masks["report"]].mean()), 3),
                                "not grounded": round(float(report["labels"][~masks["report"]].mean()), 3)},
            "report": {name: measure(sub["report"], col, resamples) for name, col in
                       (("chosen weight", best), *((f"baseline: {b}", b) for b in BASELINES))},
            "added_value": E.added_value(sub["select"], sub["report"], COVARIATES, best, n=resamples or 1000)}


def planted_report(report_dialogues, report_readings, chosen: dict, rows: int) -> dict[str, dict]:
    """On the report split, at the chosen summary length: where the planted line ranks under the
    chosen setting and under the one chosen without the planted-line condition."""
    out = {}
    for name, column in (("chosen", chosen["decoder dialogue"]),
                         ("ignoring the planted line", chosen["decoder dialogue, ignoring the planted line"])):
        _, rule, agg, layer = parse_column(column)
        table = planted_by_layer(report_dialogues, report_readings, rule, agg, rows)
        share = table["share"][:, layer]
        lo, hi = bootstrap_mean(share)
        out[name] = {"setting": column, "mean_share_of_triples_above": round(float(share.mean()), 3),
                     "low": round(lo, 3), "high": round(hi, 3),
                     "below_median": round(float(table["below"][:, layer].mean()), 3), "dialogues": len(share)}
    return out


def timing(dialogues, best: str, rows: int) -> dict:
    """Seconds to score a dialogue with the configured scorer (one layer tapped, the chosen summary
    length) on the first 12 report dialogues."""
    from glong_lib.salience import load_decoder_scorer

    _, rule, agg, layer = parse_column(best)
    timed = load_decoder_scorer(replace(READING, layer=layer, aggregate=agg, where=rule, max_new_tokens=rows))
    secs, turns = [], []
    for d in dialogues[:12]:
        start = time.perf_counter()
        timed.score(d.triples, d.turns)
        secs.append(time.perf_counter() - start)
        turns.append(len(d.turns))
    out = {"seconds_per_dialogue": round(float(np.mean(secs)), 2),
           "seconds_per_10_turns": round(float(np.sum(secs) / np.sum(turns) * 10), 2),
           "timed_settings": asdict(timed.settings)}
    print(f"\ntime ({out['timed_settings']}): {out['seconds_per_dialogue']} s per dialogue, "
          f"{out['seconds_per_10_turns']} s per 10 turns, {len(secs)} report dialogues of {np.mean(turns):.1f} turns")
    return out


def analyse(splits, kept, tables, planted: dict, planted_readings: dict, seq2seq: dict,
            resamples: Optional[int] = None) -> dict:
    """Everything computed from the readings: choices on selection, the report table, the curves,
    added value, the grounded subset and the planted line; printed as it goes."""
    select, report = tables["select"], tables["report"]
    chosen = choose_settings(select, planted)
    best = chosen["decoder dialogue"]
    n_layers = len(kept["select"]["decoder dialogue"][0]["mass"][str(ROWS[-1])])
    out: dict = {"chosen_on_selection": chosen, "report": report_rows(report, chosen, n_layers, seq2seq, resamples)}
    print("chosen on the selection split:", json.dumps(chosen))
    print_rows("report split", out["report"])
    out["layer_curve_select"] = layer_curve(select, best, n_layers)
    print(f"\nlayer curve (selection, {best.split(' | ')[0]}):", json.dumps(out["layer_curve_select"]))
    out["summary_length_curve"], out["chosen_rows"] = summary_length_curve(splits, kept, tables, best)
    print(f"\nsummary length (rows read) at {best}:", json.dumps(out["summary_length_curve"]),
          "chosen:", out["chosen_rows"])
    out["added_value"] = E.added_value(select, report, COVARIATES, best, n=resamples or 1000)
    print("\nadded value over position, length, frequency (out of sample):", json.dumps(out["added_value"]))
    out["added_value_with_overlap"] = E.added_value(select, report, (*COVARIATES, "own summary overlap"), best,
                                                    n=resamples or 1000)
    print("... and over those plus overlap with the model's own summary:",
          json.dumps(out["added_value_with_overlap"]["added"]))
    out["grounded"] = grounded_report(tables, best, resamples)
    print("\ngrounded triples (a subject/object word is said in the dialogue):", json.dumps(
        {k: out["grounded"][k] for k in ("share", "in_summary_rate")}))
    print_rows("report split, grounded triples only", out["grounded"]["report"])
    print("added value on grounded triples:", json.dumps(out["grounded"]["added_value"]["added"]))
    if planted:
        out["planted_by_choice"] = planted_report(splits["report"], planted_readings["report"], chosen,
                                                  out["chosen_rows"])
        out["planted"] = out["planted_by_choice"]["chosen"]
        print("\nplanted line (report split, chosen summary length):", json.dumps(out["planted_by_choice"]))
    return out


def real_data_run(args, argv: list[str], folder: Path) -> dict:
    """The full benchmark on the real dialogues in ``folder``."""
    from glong_lib.salience import load_decoder_scorer

    splits = load_splits(folder, args.n)
    result = run_header(argv, splits)
    dialogue_scorer = load_decoder_scorer(READING)
    triples_scorer = load_decoder_scorer(replace(READING, input="triples"))
    triples_scorer.model = dialogue_scorer.model  # one model in memory
    seq2seq = load_seq2seq_sources(args)
    kept = {s: read_split(ds, dialogue_scorer, triples_scorer, seq2seq, f"reading {s}") for s, ds in splits.items()}
    tables = {s: split_table(splits[s], kept[s]) for s in splits}
    result["positives"] = {s: int(t["labels"].sum()) for s, t in tables.items()}
    print(f"dialogues {result['dialogues']}, triples {result['triples']}, in-summary {result['positives']}")
    planted_readings, planted = read_planted(splits, dialogue_scorer) if not args.no_planted else ({}, {})
    result.update(analyse(splits, kept, tables, planted, planted_readings, seq2seq))
    result.update(timing(splits["report"], result["chosen_on_selection"]["decoder dialogue"], result["chosen_rows"]))
    return result


class RandomAttention:
    """A stand-in for the decoder-only scorer in ``--quick``: random (seeded) Eq. 1 matrices over
    word tokens of the real source text, no model, never cached. The numbers mean nothing; the run
    checks that every step from reading to report works."""

    cache = False
    model = SimpleNamespace(config=SimpleNamespace(num_hidden_layers=4))

    def __init__(self, settings: DecoderSourceSettings):
        self.settings = settings

    def read(self, triples, turns, summary=None, layers=range(4)):
        from glong_lib.summarizer import linearise_triples

        text = (dialogue_text(turns) if self.settings.input == "dialogue" else linearise_triples(triples))[0]
        offsets = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        rows = len((summary or "").split()) or ROWS[-1]
        rng = np.random.default_rng(len(text) + len(triples))
        return SimpleNamespace(layers=rng.random((len(layers), len(offsets), rows)), offsets=offsets,
                               positions=[[k % len(offsets)] for k in range(len(triples))],
                               summary=turns[0].text, summary_tokens=["x"] * rows)


def quick_run(n: int = 6) -> dict:
    """``--quick``: the whole analysis on ``n`` + ``n`` shipped sample dialogues (gold triples) with
    :class:`RandomAttention` readings: no model, no real data, seconds."""
    from glong_lib import summarizer as S
    from glong_lib.loaders import summary_pair_conversation

    dialogues = [E.SalienceDialogue("samples", p, summary_pair_conversation(p), list(p.triples))
                 for p in S.shipped_summary_pairs()[: 2 * n]]
    splits = {"select": dialogues[:n], "report": dialogues[n:]}
    result = run_header(["--quick"], splits)
    dialogue_scorer, triples_scorer = RandomAttention(READING), RandomAttention(replace(READING, input="triples"))
    kept = {s: read_split(ds, dialogue_scorer, triples_scorer, {}, f"reading {s}") for s, ds in splits.items()}
    tables = {s: split_table(splits[s], kept[s]) for s in splits}
    result["positives"] = {s: int(t["labels"].sum()) for s, t in tables.items()}
    planted_readings, planted = read_planted(splits, dialogue_scorer)
    result.update(analyse(splits, kept, tables, planted, planted_readings, {}, QUICK_RESAMPLES))
    result["quick"] = "random attention on shipped samples: checks the pipeline, measures nothing"
    return result


def samples_only() -> dict:
    """The offline check on the project's own held-out sample pairs (gold triples): the decoder-only
    source's AUC beside the baselines (loads SmolLM2-135M; about a minute on 2 cores)."""
    from glong_lib import summarizer as S
    from glong_lib.salience import load_decoder_scorer

    _, test = S.split_summary_pairs(S.shipped_summary_pairs(), S.DEFAULT_CONFIG.n_test, S.DEFAULT_CONFIG.seed)
    ev = E.evaluate_salience(load_decoder_scorer(), test, method="decoder-only SmolLM2")
    table = ev.auc_table()
    print(json.dumps(table, indent=1))
    return {"samples": {"pairs": len(test), "triples": len(ev.labels), "auc": table}}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    seed_everything(42)
    folder = real_data_dir("summaries")
    if args.quick:
        result = quick_run()
    elif args.samples:
        result = samples_only()
    elif folder is None:
        print(f"skipped: set {REAL_DATA_ENV} to the real-data folder (with summaries/); or run with --samples")
        result = {"skipped": f"{REAL_DATA_ENV} is not set or has no summaries/"}
    else:
        result = real_data_run(args, argv, folder.parent)
    write_results(args, result, "bench_salience", inputs=[] if args.quick or folder is None else [folder],
                  resamples={"within-dialogue AUC intervals": "dialogues (bootstrap)"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
