"""Triple extraction: the tolerant parser (hand-written broken outputs and property tests),
speaker resolution, the measures against hand-computed numbers, training data handling, the
cache key, and (slow) LoRA training, batched generation and the CLI end to end."""

from __future__ import annotations

import json
import time
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testdata import DATA, examples

import glong_lib.extraction as ex
import glong_lib.viz.extraction as vx
from glong_lib import text as TX
from glong_lib.cli import main
from glong_lib.config import SMOKE_STEPS, get_profile
from glong_lib.errors import DataError
from glong_lib.evaluation import extraction as EX
from glong_lib.io import save_jsonl
from glong_lib.schema import Conversation, Session, Triple, TriplePair, Turn

# --------------------------------------------------------------------------- parser

T = {"subject": "i", "relation": "have_pet", "object": "dog"}
U = {"subject": "i", "relation": "like_food", "object": "tacos"}

BROKEN = [
    # (what small models emit, the triples we want back)
    ('[{"subject": "i", "relation": "have_pet", "object": "dog"}]', [T]),
    ('[{"subject": "i", "relation": "have_pet", "object": "dog"},]', [T]),  # trailing comma
    ('[{"subject": "i", "relation": "have_pet", "object": "dog",}]', [T]),
    ("[{'subject': 'i', 'relation': 'have_pet', 'object': 'dog'}]", [T]),  # single quotes
    ("[{'subject': 'i', 'relation': 'like', 'object': 'mom's lasagna'}]",
     [{"subject": "i", "relation": "like", "object": "mom's lasagna"}]),  # apostrophe inside
    ('[{"subject": "i", "relation": "have_pet", "object": "dog', [T]),  # unterminated string
    ('[{"subject": "i", "relation": "have_pet", "object": "dog"}, {"subject": "i", "relation": "like_fo',
     [T]),  # cut off by the token budget: the partial item is dropped
    ('Sure! Here are the triplets:\n[{"subject": "i", "relation": "have_pet", "object": "dog"}]\nHope it helps.',
     [T]),  # prose around
    ('Note [1]: [{"subject": "i", "relation": "have_pet", "object": "dog"}]', [T]),  # brackets in prose
    ('```json\n[{"subject": "i", "relation": "have_pet", "object": "dog"}]\n```', [T]),  # code fence
    ('```json [{"subject": "i", "relation": "have_pet", "object": "dog"}] ```', [T]),  # fence on one line
    ('[{"subject": "i", "relation": "quote", "object": "```"}]',
     [{"subject": "i", "relation": "quote", "object": "```"}]),  # backticks inside a value are kept
    ('[{"subject": "i", "relation": "quote", "object": "a <think> b"}]',
     [{"subject": "i", "relation": "quote", "object": "a <think> b"}]),  # so is a reasoning tag
    ('[{"head": "i", "relation": "have_pet", "tail": "dog"}]', [T]),  # the reference code's keys
    ('{"subject": "i", "relation": "have_pet", "object": "dog", "relation": "like_food", "object": "tacos"}',
     [T, U]),  # repeated keys: a second fact
    ('[{"subject": "i", "relation": "have_pet", "object": "dog"} {"subject": "i", "relation": "like_food", '
     '"object": "tacos"}]', [T, U]),  # missing comma between objects
    ('[{"subject": "i", "relation": "have_pet", "object": "dog"}, {"subject": "i", "relation": "have_pet", '
     '"object": "dog"}]', [T]),  # repeated triple
    ('{"triplets": [{"subject": "i", "relation": "have_pet", "object": "dog"}]}', [T]),  # wrapped
    ('[["i", "have_pet", "dog"]]', [T]),  # bare lists
    ("[{subject: i, relation: have_pet, object: dog}]", [T]),  # unquoted
    ('<think>\nhmm [\n</think>\n[{"subject": "i", "relation": "have_pet", "object": "dog"}]', [T]),
    ('[{"subject": "i", "relation": "have_pet"}]', []),  # incomplete triple
    ('[{"subject": {"name": "i"}, "relation": "have_pet", "object": "dog"}]', []),  # a value that is no text
    ("[{'subject': 'i', 'relation': 'own', 'object': 'Chris' Xbox'}]",  # an apostrophe before a word
     [{"subject": "i", "relation": "own", "object": "Chris' Xbox"}]),
]


@pytest.mark.parametrize("text,want", BROKEN)
def test_parser_repairs(text, want):
    result = ex.parse_output(text)
    assert result.triples == want
    assert result.ok


@pytest.mark.parametrize("text", ["", "I could not find any facts.", "Subject: I\nRelation: like", None, 42])
def test_parser_unparseable(text):
    result = ex.parse_output(text)
    assert result.triples == [] and not result.ok


def test_parser_safety_net_counts_a_crash_as_unparseable(monkeypatch):
    """A bug that raises inside the parser costs one output (counted unparseable), not the run."""
    monkeypatch.setattr(ex.parsing, "parse_unguarded", lambda text: 1 / 0)
    assert ex.parse_output('[["i", "have_pet", "dog"]]') == ex.ParseResult([], ok=False, repaired=False)


def test_parser_empty_list_is_parseable():
    assert ex.parse_output("[]") == ex.ParseResult([], ok=True, repaired=False)
    assert ex.parse_output("  []  and nothing else").ok


@settings(max_examples=examples(300), deadline=None)
@given(st.text())
def test_parser_never_raises(text):
    result = ex.parse_output(text)
    assert isinstance(result.triples, list)
    for t in result.triples:
        assert set(t) == {"subject", "relation", "object"} and all(isinstance(v, str) and v for v in t.values())


_JSONISH = st.text(alphabet=st.sampled_from(list("[]{}\"',: \n\\abcisubjectrelationobjheadtail0123")), max_size=80)


_NESTED = st.recursive(st.one_of(st.text(max_size=8), st.integers(), st.none()),
                       lambda inner: st.one_of(st.lists(inner, max_size=4),
                                               st.dictionaries(st.sampled_from(["a", "subject", "object", "relation",
                                                                                "triplets", "x"]), inner, max_size=4)),
                       max_leaves=60)


def _check_result(result):
    assert isinstance(result.ok, bool) and isinstance(result.repaired, bool)
    for t in result.triples:
        assert list(t) == ["subject", "relation", "object"] and all(isinstance(v, str) and v for v in t.values())


@settings(max_examples=examples(300), deadline=None)
@given(_JSONISH)
def test_parser_handles_json_like_noise_without_the_safety_net(text):
    """The unguarded parser (no catch-all) on noise: no exception, well-formed triples."""
    _check_result(ex.parsing.parse_unguarded(text))


def _collector_visits(text: str) -> list[int]:
    """How many values the parser's JSON collector visits in each decode it tries on ``text``."""
    visits: list[int] = []
    collect = ex.parsing._collect

    def counting(value, depth=0):
        if depth == 0:  # a new decoded value
            visits.append(0)
        visits[-1] += 1
        return collect(value, depth)

    with mock.patch.object(ex.parsing, "_collect", counting):  # the recursion looks the name up here too
        _check_result(ex.parsing.parse_unguarded(text))
    return visits


def _most_values(text: str) -> int:
    """An upper bound on the JSON values in ``text``: the whole, plus one per element (after ``[`` or
    ``,``) and one per object value (after ``:``)."""
    return 1 + sum(text.count(c) for c in "[,:")


@settings(max_examples=examples(200), deadline=None)
@given(_NESTED, st.integers(min_value=0, max_value=40))
def test_parser_work_is_linear_on_nested_values_and_their_truncations(value, cut):
    """Nested objects with non-triple keys (what made the old collector exponential: it visited a
    value once per enclosing triple-like object), whole and cut short: each decoded value is
    visited once per decode, so each decode's work is bounded by the values the text can hold."""
    text = json.dumps(value)
    for candidate in (text, text[: max(1, len(text) - cut)], text.replace('"', "'")):
        visits = _collector_visits(candidate)
        assert len(visits) <= ex.parsing.MAX_STARTS + 1 and max(visits, default=0) <= _most_values(candidate)


@pytest.mark.parametrize("text", ['{"a": [' * 40 + "]}" * 40, "[" * 100_000, '{"a": [' * 5000,
                                  "[{'subject': '" + "x" * 1_000_000])
def test_parser_adversarial_inputs_are_linear_and_bounded(text):
    """The old collector took minutes on the first (exponential in depth); the old repair pass about
    15 s of CPU on the last (it copied the rest of the input at every character: 0.18 s at 100 KB,
    2.4 s at 400 KB). The collector's work is counted; the repair pass, whose cost is inside string
    operations, gets one generous bound in CPU seconds of this process (other jobs on the machine
    do not count), a third of the old cost; ``bench_parser.py`` measures the growth."""
    start = time.process_time()
    assert max(_collector_visits(text), default=0) <= _most_values(text)
    assert time.process_time() - start < 5.0


_VALUE = st.text(min_size=1, max_size=20).map(str.strip).filter(bool)
_TRIPLE = st.fixed_dictionaries({"subject": _VALUE, "relation": _VALUE, "object": _VALUE})


def _first_seen(triples):
    out = []
    for t in triples:
        if t not in out:
            out.append(t)
    return out


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(_TRIPLE, max_size=5), st.sampled_from([None, 2]), st.booleans())
def test_valid_json_round_trips(triples, indent, ascii_only):
    text = json.dumps(triples, indent=indent, ensure_ascii=ascii_only)
    result = ex.parse_output(text)
    assert result.ok and not result.repaired
    assert result.triples == _first_seen(triples)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(_TRIPLE, max_size=3))
def test_format_target_round_trips(triples):
    assert ex.parse_triples(ex.format_target(triples)) == _first_seen(triples)


# --------------------------------------------------------------------------- speakers and measures

@pytest.mark.parametrize("subject,speaker,want", [
    ("i", "Maya", "Maya"), ("I", "Maya", "Maya"), ("me", "Maya", "Maya"), ("myself", "Maya", "Maya"),
    ("my", "Maya", "Maya"), ("my dog", "Leo", "Leo's dog"), ("My Big Sister", "Leo", "Leo's Big Sister"),
    ("Leo", "Maya", "Leo"), ("i", None, "i"), ("mystery novel fan", "Maya", "mystery novel fan"),
])
def test_resolve_subject(subject, speaker, want):
    assert TX.resolve_subject(subject, speaker) == want


def test_normalise_text():
    assert TX.normalise_text("The  Golden Retriever.") == "golden retriever"
    assert TX.normalise_text("an apple a day") == "apple day"
    assert TX.normalise_text("Leo's dog") == "leo's dog"


def test_prf_by_hand():
    # 3 right out of 5 predicted, 6 gold: P = 0.6, R = 0.5, F1 = 2*0.3/1.1 = 0.5454...
    assert EX.prf(3, 5, 6) == {"precision": 0.6, "recall": 0.5, "f1": 0.5455}
    assert EX.prf(0, 0, 4) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_score_triples_exact_and_normalised():
    gold = [[Triple("Maya", "have_pet", "cat"), Triple("Maya", "live_in_citystatecountry", "portland")],
            [], [Triple("Leo", "has_profession", "teacher")]]
    pred = [[Triple("Maya", "have_pet", "a Cat"), Triple("Maya", "live_in_citystatecountry", "portland")],
            [Triple("Leo", "like", "rain")], [Triple("Leo", "has_profession", "teacher")]]
    exact = EX.score_triples(pred, gold)
    norm = EX.score_triples(pred, gold, normalised=True)
    # exact: 2 right of 4 predicted, 3 gold -> P .5, R .6667, F1 .5714
    assert (exact["tp"], exact["predicted"], exact["gold"]) == (2, 4, 3)
    assert exact["f1"] == 0.5714
    # normalised: "a Cat" == "cat" -> 3 of 4, 3 of 3 -> F1 = 2*.75*1/1.75 = .8571
    assert norm["tp"] == 3 and norm["f1"] == 0.8571


def test_score_triples_length_mismatch():
    with pytest.raises(DataError):
        EX.score_triples([[]], [[], []])


def test_alignment_accuracy_and_confusions():
    gold = [[Triple("Maya", "have_pet", "golden retriever"), Triple("Maya", "like_food", "tacos")],
            [Triple("Leo", "has_profession", "teacher")]]
    pred = [[Triple("Maya", "own", "retriever"), Triple("Maya", "like_food", "tacos")],
            [Triple("Leo", "like", "rain")]]
    pairs = EX.align_relations(pred, gold)
    assert pairs == [("have_pet", "own"), ("like_food", "like_food")]  # "teacher" shares no word
    report = EX.evaluate_extraction(pred, gold, [True, False])
    assert report["relation accuracy"] == 0.5 and report["aligned"] == 2
    assert report["unparseable rate"] == 0.5
    assert report["confusions"] == [("have_pet", "own", 1)]
    assert report["f1 exact"] == EX.prf(1, 3, 3)["f1"]


def test_partial_match_and_fact_detection_by_hand():
    gold = [[Triple("Leo", "like_activity", "making pasta"), Triple("Leo", "like_food", "italian")],
            [], [Triple("Maya", "have_children", "two kids")]]
    pred = [[Triple("Leo", "like_activity", "fresh pasta"), Triple("Leo", "like_food", "pasta")],
            [Triple("Maya", "plan", "sleep")], [Triple("Maya", "have_chidren", "kids")]]
    # partial: pred hits = "fresh pasta" (same s, r; shares "pasta") and "kids" via the relation alias = 2 of 4;
    # gold hits = "making pasta" and "two kids" = 2 of 3 -> F1 = 2 * .5 * .6667 / 1.1667 = .5714
    assert EX.score_partial(pred, gold) == {"precision": 0.5, "recall": 0.6667, "f1": 0.5714}
    # detection: said fact on turns 1, 2, 3; facts on 1 and 3 -> P 2/3, R 1, F1 .8
    assert EX.fact_detection(pred, gold) == {"precision": 0.6667, "recall": 1.0, "f1": 0.8}
    assert TX.normalise_relation("have_chidren") == "have_children"
    assert EX.score_triples(pred, gold)["tp"] == 0


def test_snap_relation_onto_the_schema():
    known = ["has_profession", "has_ability", "have_pet", "like_music"]
    assert ex.snap_relation("have_ability", known) == "has_ability"
    assert ex.snap_relation("has_pet", known) == "have_pet"
    assert ex.snap_relation("like_music", known) == "like_music"
    assert ex.snap_relation("location", known) == "location"  # nothing close: kept as written
    assert ex.snap_relation("have_ability", []) == "have_ability"  # no schema (zero-shot): no snapping


def test_relation_confusions_order():
    pairs = [("a", "b")] * 3 + [("c", "d")] * 5 + [("e", "e")] * 9
    assert EX.relation_confusions(pairs, top=1) == [("c", "d", 5)]


# --------------------------------------------------------------------------- data and settings

def _pairs(n):
    return [TriplePair(f"I have {i} cats.", [Triple("i", "have_pet", f"{i} cats")], id=str(i)) for i in range(n)]


def test_split_by_utterance_is_seeded_and_disjoint():
    pairs = _pairs(50) + [TriplePair("I have 3 cats.", [Triple("i", "own", "cats")])]  # same utterance twice
    train, dev = ex.split_pairs(pairs, 0.2, seed=1)
    assert not {p.utterance for p in train} & {p.utterance for p in dev}
    assert len(train) + len(dev) == len(pairs)
    assert ex.split_pairs(pairs, 0.2, seed=1) == (train, dev)
    assert ex.split_pairs(pairs, 0.2, seed=2) != (train, dev)
    assert len(ex.split_pairs(pairs, 0.2, seed=1, max_train=7)[0]) == 7
    with pytest.raises(DataError):
        ex.split_pairs(pairs, 1.5)


def test_shipped_pairs_load():
    pairs = ex.load_pairs()
    assert len(pairs) >= 400 and any(not p.triples for p in pairs)
    assert all(t.subject for p in pairs for t in p.triples)


def test_messages_and_target():
    msgs = ex.build_messages("I have a dog.", ex.format_target([Triple("i", "have_pet", "dog")]))
    assert msgs[0]["content"] == ex.SYSTEM_PROMPT and msgs[1]["content"] == "Extract triplets:\nI have a dog."
    assert json.loads(msgs[2]["content"]) == [T]
    assert ex.format_target([]) == "[]"


def test_cache_key_tracks_what_changes_the_adapter():
    pairs = _pairs(20)
    base = ex.train_settings(pairs, "offline")
    assert base.max_steps == get_profile("offline").extractor.max_steps == 400
    assert base.key() == ex.train_settings(pairs, "offline").key()
    assert ex.train_settings(pairs, get_profile("offline").smoke()).max_steps == SMOKE_STEPS
    changed = [ex.train_settings(pairs, "offline", max_steps=10), ex.train_settings(_pairs(21), "offline"),
               ex.train_settings(pairs, "hub"), ex.train_settings(pairs, "offline", seed=1),
               ex.train_settings(pairs, "offline", learning_rate=5e-4)]
    saved = ex.prompt.SYSTEM_PROMPT
    try:
        ex.prompt.SYSTEM_PROMPT = saved + " Be brief."
        changed.append(ex.train_settings(pairs, "offline"))
    finally:
        ex.prompt.SYSTEM_PROMPT = saved
    assert len({base.key(), *(s.key() for s in changed)}) == 1 + len(changed)
    assert ex.adapter_dir_for(base).name.startswith("offline-")


def test_paper_profile_settings_come_from_the_profile():
    s = ex.train_settings(_pairs(5), "paper")
    p = get_profile("paper")
    assert (s.base, s.lora_r, s.lora_alpha, s.epochs, s.learning_rate, s.batch_size) == (
        "Qwen/Qwen3-8B", 32, 32, 10, 2e-4, 16)
    assert s.max_steps == -1 and p.extractor.quantize_4bit  # 10 epochs, QLoRA
    cfg = ex.lora_config("paper")
    assert cfg.r == 32 and set(cfg.target_modules) == set(ex.LORA_TARGETS)


def test_gold_turns_sample_keeps_fact_share():
    from glong_lib.loaders import load_conversations

    convs = load_conversations(DATA / "conversations")
    sample = EX.gold_turns(convs, 60, seed=3)
    assert len(sample) == 60 and len({t.id + t.text for t in sample}) == 60
    share_all = sum(1 for c in convs for t in c.turns() if t.triples) / sum(len(c.turns()) for c in convs)
    assert abs(sum(1 for t in sample if t.triples) / 60 - share_all) < 0.02
    assert EX.gold_turns(convs, 60, seed=3) == sample


def test_save_jsonl_atomic(tmp_path):
    path = save_jsonl(tmp_path / "out" / "x.jsonl", [{"a": 1}, {"b": "é"}])
    assert [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] == [{"a": 1}, {"b": "é"}]
    assert [p.name for p in path.parent.iterdir()] == ["x.jsonl"]


def test_figures_build():
    import matplotlib

    matplotlib.use("Agg")
    log = [{"loss": 2.0, "step": 1}, {"loss": 1.0, "step": 2}, {"eval_loss": 1.5, "step": 2}]
    assert vx.plot_loss_curve(log).axes[0].get_lines()
    report = EX.evaluate_extraction([[Triple("a", "r", "b")]], [[Triple("a", "r", "b")]])
    assert vx.plot_scores({"zero-shot": report, "fine-tuned": report}).axes
    assert vx.plot_confusions([("a", "b"), ("a", "a")]).axes


def test_plot_scores_can_leave_zeros_unlabelled():
    import matplotlib

    matplotlib.use("Agg")
    report = EX.evaluate_extraction([[Triple("a", "r", "b")], []], [[Triple("a", "r", "c")], []])
    spans = {k: (0.0, 0.0) for k in report if isinstance(report[k], float)}

    def texts(fig):
        """The labels written on the chart."""
        return [t.get_text() for t in fig.axes[0].texts]

    assert "0" in texts(vx.plot_scores({"m": report}, intervals={"m": spans}))
    assert "0" not in texts(vx.plot_scores({"m": report}, intervals={"m": spans}, label_zeros=False))


def test_plot_scores_y_cap():
    """The y axis can stop lower, so short bars stay visible; a measured zero still reads "0"."""
    import matplotlib

    matplotlib.use("Agg")
    report = EX.evaluate_extraction([[Triple("a", "r", "b")], []], [[Triple("a", "r", "c")], []])
    spans = {k: (0.0, 0.0) for k in report if isinstance(report[k], float)}
    fig = vx.plot_scores({"m": report}, intervals={"m": spans}, ymax=0.9)
    assert "0" in [t.get_text() for t in fig.axes[0].texts] and fig.axes[0].get_ylim()[1] == 0.9


def test_plot_scores_label_decimals():
    """Bar labels can carry the precision the prose quotes (0.067, not 0.07)."""
    import matplotlib

    matplotlib.use("Agg")
    report = EX.evaluate_extraction([[Triple("a", "r", "b")] + [Triple("a", "r", str(i)) for i in range(14)]],
                                    [[Triple("a", "r", "b")]])
    spans = {k: (0.0, 0.5) for k in report if isinstance(report[k], float)}

    def texts(**kw):
        """The labels written on the chart."""
        return [t.get_text() for t in vx.plot_scores({"m": report}, intervals={"m": spans}, **kw).axes[0].texts]

    assert "0.07" in texts() and "0.067" in texts(decimals=3) and "0.07" not in texts(decimals=3)


def test_plot_scores_draws_no_zero_width_whisker():
    """An interval [0, 0] (nothing to resample) draws no whisker, only its label."""
    import matplotlib
    from matplotlib.container import ErrorbarContainer

    matplotlib.use("Agg")
    report = EX.evaluate_extraction([[Triple("a", "r", "b")], []], [[Triple("a", "r", "c")], []])
    zero = {k: (0.0, 0.0) for k in report if isinstance(report[k], float)}
    wide = {k: (0.0, 0.5) for k in zero}

    def whiskers(spans):
        """The error bars drawn on the chart."""
        fig = vx.plot_scores({"m": report}, intervals={"m": spans})
        return sum(isinstance(c, ErrorbarContainer) for c in fig.axes[0].containers)

    assert whiskers(zero) == 0 and whiskers(wide) > 0


def test_cli_extract_bad_input_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "glong-conversation", "id": "x", "speakers": [], "sessions": []}')
    assert main(["extract", str(bad), "--out", str(tmp_path / "o.jsonl")]) == 2
    assert capsys.readouterr().err.startswith("glong extract: error:")
    assert not (tmp_path / "o.jsonl").exists()


def test_cli_train_bad_data_exit_2(tmp_path, capsys):
    bad = tmp_path / "pairs.jsonl"
    bad.write_text('{"utterance": "hi", "triples": [{"subject": "i"}]}\n')
    assert main(["train-extractor", "--data", str(bad), "--out", str(tmp_path / "a")]) == 2
    assert "missing key 'relation'" in capsys.readouterr().err


def test_real_personaext_split(real_data):
    pairs = ex.load_pairs(real_data / "personaext" / "personaext_pairs.jsonl")
    train, dev = ex.split_pairs(pairs, 0.1, seed=42)
    assert len(pairs) > 10000 and len(dev) > 1000
    assert not {p.utterance for p in train} & {p.utterance for p in dev}
    assert len({p.utterance for p in pairs}) == len(pairs)  # one pair per utterance (grouped)
    assert sum(t.subject == "i" for p in pairs for t in p.triples) > len(pairs) / 2


# --------------------------------------------------------------------------- models (slow)

@pytest.mark.slow
def test_tokenize_example_masks_the_prompt():
    from transformers import AutoTokenizer

    from glong_lib.models import smollm2_dir

    tok = AutoTokenizer.from_pretrained(str(smollm2_dir()))
    target = ex.format_target([Triple("i", "have_pet", "dog")])
    item = ex.tokenize_example(tok, "I have a dog.", target)
    answer = [i for i, lab in zip(item["input_ids"], item["labels"]) if lab != -100]
    assert item["labels"][0] == -100 and len(answer) < len(item["input_ids"])
    assert tok.decode(answer).startswith(target + tok.eos_token)
    assert tok.decode(item["input_ids"]).startswith(ex.render_prompt(tok, "I have a dog."))


@pytest.mark.slow
def test_train_cache_load_extract_and_cli(tmp_path):
    pairs = ex.load_pairs()[:24]
    out = ex.train_extractor(pairs, max_steps=2, out=tmp_path / "adapter", dev_fraction=0.2, eval_points=1,
                             snapshot_steps=[1], snapshot_dir=tmp_path / "snapshots")
    log = ex.read_training_log(out)
    snapshot = ex.read_training_log(tmp_path / "snapshots" / "step-1")  # a mid-run adapter, for F1-vs-steps
    assert snapshot["steps"] == 1 and snapshot["relations"] == log["relations"]
    assert (tmp_path / "snapshots" / "step-1" / "adapter_config.json").is_file()
    assert log["steps"] == 2 and log["trainable_parameters"] < log["total_parameters"] / 10
    assert [r["step"] for r in log["log_history"] if "loss" in r][:2] == [1, 2]
    assert any("eval_loss" in r for r in log["log_history"])
    stamp = (out / "training.json").stat().st_mtime
    assert ex.train_extractor(pairs, max_steps=2, out=out) == out  # cached: not retrained
    assert (out / "training.json").stat().st_mtime == stamp

    fine = ex.load_extractor(adapter=out)
    fine.max_new_tokens = 12
    utterances = ["I have two dogs.", "My sister lives in Denver and loves it there."]
    batched = fine.generate(utterances, batch_size=2, progress=False)
    one_by_one = [fine.generate([u], batch_size=1, progress=False)[0] for u in utterances]
    assert batched == one_by_one  # padding does not change greedy output
    import torch

    for u, got in zip(utterances, batched):  # nor does reusing the shared prefix's cache
        enc = fine.tokenizer(ex.render_prompt(fine.tokenizer, u), return_tensors="pt", add_special_tokens=False)
        with torch.no_grad():
            whole = fine.model.generate(**enc, max_new_tokens=12, do_sample=False,
                                        pad_token_id=fine.tokenizer.pad_token_id)
        assert fine.tokenizer.decode(whole[0, enc["input_ids"].shape[1]:], skip_special_tokens=True).strip() == got
    fine._prefix = ([-1], fine.shared_prefix()[1])  # a prefix no prompt starts with: batches run whole, uncached
    assert fine.generate(utterances, batch_size=2, progress=False) == batched
    fine._prefix = None

    conv = Conversation("t", ["Maya", "Leo"], [Session(1, [Turn("S1:1", "Maya", utterances[0])]),
                                                Session(2, [Turn("S2:1", "Leo", utterances[1])])])
    conv.assign_clock()
    triples = ex.extract_conversation(conv, fine, sessions=[2], progress=False)
    assert all(t.session == 2 and t.turn_id == "S2:1" and t.speaker == "Leo" for t in triples)

    src = DATA / "conversations" / "c01.json"
    target = tmp_path / "triples.jsonl"
    assert main(["extract", str(src), "--out", str(target), "--adapter", str(out), "--sessions", "1"]) == 0
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert rows and {"conversation", "session", "turn_id", "speaker", "text", "triples"} <= set(rows[0])
    assert {r["session"] for r in rows} == {1} and rows[0]["conversation"] == "c01"


# --------------------------------------------------------------------------- the repair pass, case by case

REPAIRS = [  # near-JSON a small model writes -> the JSON the repair pass makes of it
    ("[{\u201csubject\u201d: \u201ci\u201d}]", '[{"subject": "i"}]'),          # curly double quotes
    ("[{\u2018subject\u2019: \u2018i\u2019}]", '[{"subject": "i"}]'),          # curly single quotes
    ('[{"a": "x\\"y"}]', '[{"a": "x\\"y"}]'),                                   # an escape is kept whole
    ("[{'a': 'say \"hi\"'}]", '[{"a": "say \\"hi\\""}]'),                      # " inside '...' escaped
    ("[{'a': 'it's'}]", '[{"a": "it\'s"}]'),                                    # an apostrophe stays
    ('["a" "b"]', '["a" ,"b"]'),                                                 # missing comma, strings
    ('[1 "b"]', '[1 ,"b"]'),                                                     # ... after a number
    ('[{"a": 1} {"b": 2}]', '[{"a": 1} ,{"b": 2}]'),                             # ... between objects
    ('["x"["y"]]', '["x",["y"]]'),                                               # ... before a bracket
    ("[{'a': 'x',},]", '[{"a": "x"}]'),                                          # trailing commas
    ("[{'a': 'x'}, {'a': 'y", '[{"a": "x"}]'),                                   # cut off mid-item
    ("[{'a': 'unterminated]}", '[{"a": "unterminated"}]'),                       # brackets after an open string
    ('{"a": 1} and then prose {"b": 2}', '{"a": 1}'),                            # the first value only
    ("[{'a': 'x' , 'b': 'y'}]", '[{"a": "x" , "b": "y"}]'),                      # ' closes before spaces + ,
    ("  [ ", "  []"),                                                             # open brackets closed
    ("[{'a': 'x'}]]]", '[{"a": "x"}]'),                                          # extra closers dropped
]


@pytest.mark.parametrize("broken, repaired", REPAIRS)
def test_repair_pass_case_by_case(broken, repaired):
    from glong_lib.extraction.parsing import _repair_json

    assert _repair_json(broken) == repaired
    json.loads(repaired)  # and it is JSON


def test_collect_and_scan_by_hand():
    from glong_lib.extraction.parsing import _collect, _last_char, _Pairs, _scan_pairs, _too_deep

    nested = _Pairs([("subject", "i"), ("relation", "like"), ("object", "tea"), ("more", [["a", "b", "c"]])])
    assert _collect(nested) == [{"subject": "i", "relation": "like", "object": "tea"},
                                {"subject": "a", "relation": "b", "object": "c"}]
    assert _collect([["a", "b"], ["a", "b", "c", "d"], ["x", "y", "z"]]) == [
        {"subject": "x", "relation": "y", "object": "z"}]  # only 3-string lists are triples
    assert _collect(_Pairs([("wrap", _Pairs([("subject", "i"), ("relation", "r"), ("object", "o")]))])) == [
        {"subject": "i", "relation": "r", "object": "o"}]
    deep = [[["i", "like", "tea"]]]
    for _ in range(40):
        deep = [deep]
    assert _collect(deep) == []  # past MAX_DEPTH nothing is collected
    assert (_too_deep("[" * 32), _too_deep("[" * 33), _too_deep("{" * 33), _too_deep("]]]" + "[" * 32),
            _too_deep("[]" * 40 + "[" * 31)) == (False, True, True, False, False)
    assert _scan_pairs("subject: 'i', relation: \"like\", object: tea") == [
        {"subject": "i", "relation": "like", "object": "tea"}]
    assert _scan_pairs('head: "a\\"b", predicate: r, tail: c') == [{"subject": 'a"b', "relation": "r", "object": "c"}]
    assert (_last_char([]), _last_char(["a", "  ", "\n"])) == ("", "a")
    assert ex.parsing._pairs_to_triples([("subject", "i"), ("relation", "like"), ("object", "a"), ("object", "b"),
                                         ("relation", "has"), ("object", "c")]) == [
        {"subject": "i", "relation": "like", "object": "a"}, {"subject": "i", "relation": "like", "object": "b"},
        {"subject": "i", "relation": "has", "object": "c"}]
    assert (ex.parsing._clean_value("  "), ex.parsing._clean_value(True),
            ex.parsing._clean_value(5)) == (None, None, "5")


def test_paper_profile_trains_on_personaext_when_the_real_data_is_set(tmp_path, monkeypatch):
    from glong_lib.extraction.prompt import REAL_DATA_ENV, training_pairs_path

    monkeypatch.delenv(REAL_DATA_ENV, raising=False)
    assert training_pairs_path("offline") is None
    with pytest.raises(DataError, match=r"trains on PersonaExt and \$GLONG_REAL_DATA/personaext/personaext_pairs.jsonl "
                                        "is not there"):
        training_pairs_path("paper")  # never the shipped pairs in its place
    (tmp_path / "personaext").mkdir()
    pairs = tmp_path / "personaext" / "personaext_pairs.jsonl"
    pairs.write_text('{"utterance": "I have a dog.", "subject": "I", "relation": "have_pet", "object": "dog"}\n')
    monkeypatch.setenv(REAL_DATA_ENV, str(tmp_path))
    assert training_pairs_path("paper") == pairs
    assert training_pairs_path("offline") is None  # the offline default stays on the shipped pairs


def test_extraction_cache_key_names_a_bfloat16_model(tmp_path):
    import torch

    folder = tmp_path / "offline-abc123"
    folder.mkdir()
    (folder / "adapter_model.safetensors").write_bytes(b"weights")

    class Extractor:  # what extractor_key reads: the adapter folder and the weights' dtype
        adapter_dir = folder
        model = torch.nn.Linear(2, 2)

    plain = ex.extractor_key(Extractor())
    assert plain.startswith("offline-abc123-")
    Extractor.model = torch.nn.Linear(2, 2).to(torch.bfloat16)
    assert ex.extractor_key(Extractor()) == plain + "-bfloat16"  # its answers differ: its own cache


def test_extraction_cache_keys_never_collide(tmp_path):
    """Two adapters in folders of the same name, and zero-shot extractors of two bases, are four keys
    (on 067108f the key was the folder's name, and every zero-shot extractor was "zero-shot")."""
    import types

    def adapter(parent, weights):
        folder = tmp_path / parent / "adapter"
        folder.mkdir(parents=True)
        (folder / "adapter_config.json").write_text('{"r": 16}')
        (folder / "adapter_model.safetensors").write_bytes(weights)
        return types.SimpleNamespace(adapter_dir=folder, model=None, name="extractor", max_new_tokens=64)

    def zero_shot(base):
        model = types.SimpleNamespace(config=types.SimpleNamespace(_name_or_path=base))
        model.parameters = lambda: iter([types.SimpleNamespace(dtype="torch.float32")])
        return types.SimpleNamespace(adapter_dir=None, model=model, name="zero-shot", max_new_tokens=64)

    made = [adapter("A", b"one"), adapter("B", b"two"), zero_shot("HuggingFaceTB/SmolLM2-135M-Instruct"),
            zero_shot("Qwen/Qwen3-8B")]
    keys = [ex.extractor_key(e) for e in made]
    assert len(set(keys)) == 4, keys
    budget = zero_shot("Qwen/Qwen3-8B")
    budget.max_new_tokens = 16  # a shorter budget cuts triples off: another cache entry
    assert ex.extractor_key(budget) != keys[3]


def test_adapter_key_covers_truncation_and_quantisation():
    """``max_length`` and ``quantize_4bit`` change the adapter, so they change its folder (067108f: the same)."""
    from glong_lib.config import with_overrides

    pairs = _pairs(5)
    base = ex.train_settings(pairs, "paper")
    assert base.key() != ex.train_settings(pairs, with_overrides("paper", extractor__quantize_4bit=False)).key()
    assert base.key() != ex.train_settings(pairs, with_overrides("paper", extractor__max_length=512)).key()


def test_a_quiet_trainer_shows_no_progress_and_prints_no_log_lines(tmp_path):
    """Notebooks pass progress=False: no progress widget, and no log dicts printed in its place."""
    import torch
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
    from transformers.utils.notebook import NotebookProgressCallback

    from glong_lib.lora import make_trainer, training_arguments

    settings = ex.train_settings(ex.load_pairs()[:8], "offline", 1, 42)
    noisy = (PrinterCallback, ProgressCallback, NotebookProgressCallback)
    for progress in (True, False):
        args = training_arguments(settings, tmp_path, 1, 1, has_dev=False, device="cpu", progress=progress)
        assert args.disable_tqdm is not progress
        trainer = make_trainer(torch.nn.Linear(2, 2), None, args, [])
        shown = [cb for cb in trainer.callback_handler.callbacks if isinstance(cb, noisy)]
        assert bool(shown) is progress
