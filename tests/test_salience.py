"""Attention-aware importance (Eq. 1-3): the equations by hand, spans, scopes, the scorer on tiny
models, the offline summarizer (smoke), the hub code path, and ``glong score``."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from testdata import DATA

from glong_lib import salience as S
from glong_lib.config import get_profile
from glong_lib.errors import DataError
from glong_lib.evaluation import salience as SE
from glong_lib.schema import SummaryPair, Triple, Turn

# --------------------------------------------------------------------------- Eq. 1


def test_head_average_by_hand():
    # 2 heads, 2 summary tokens, 3 input tokens; rows of each head sum to 1 (softmax over inputs)
    attn = torch.tensor([[[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]],
                         [[0.1, 0.3, 0.6], [0.3, 0.3, 0.4]]])
    A = S.head_average(attn)
    # A[i, j] = mean_h attn[h, j, i]: input token 0 / summary token 0 = (0.5 + 0.1) / 2 = 0.3
    expected = torch.tensor([[0.3, 0.2], [0.3, 0.2], [0.4, 0.6]])
    assert A.shape == (3, 2)
    assert torch.allclose(A, expected)
    assert torch.allclose(S.head_average(attn[None]), expected)  # batch of one accepted
    assert torch.allclose(A.sum(dim=0), torch.ones(2))  # still a distribution over inputs


def test_head_average_bad_shape():
    with pytest.raises(DataError, match="shape"):
        S.head_average(torch.ones(3, 3))


# --------------------------------------------------------------------------- Eq. 2


def test_triple_saliency_uneven_spans_by_hand():
    # 6 input tokens, 2 summary tokens; triple spans of 1, 3 and 2 tokens
    A = torch.tensor([[0.30, 0.10], [0.05, 0.05], [0.10, 0.20], [0.05, 0.05], [0.30, 0.40], [0.20, 0.20]])
    raw = S.triple_saliency(A, [(0, 1), (1, 4), (4, 6)])
    # T1 = 0.3 + 0.1 = 0.4; T2 = 0.1 + 0.3 + 0.1 = 0.5; T3 = 0.7 + 0.4 = 1.1
    assert torch.allclose(raw, torch.tensor([0.4, 0.5, 1.1]))
    assert torch.isclose(raw.sum(), torch.tensor(2.0))  # every token in a span: total = summary length


def test_triple_saliency_single_triple_and_empty_span():
    A = torch.tensor([[0.25, 0.5], [0.75, 0.5]])
    assert torch.allclose(S.triple_saliency(A, [(0, 2)]), torch.tensor([2.0]))
    assert torch.allclose(S.triple_saliency(A, [(0, 1), (2, 2)]), torch.tensor([0.75, 0.0]))
    with pytest.raises(DataError, match="outside"):
        S.triple_saliency(A, [(1, 3)])


# --------------------------------------------------------------------------- Eq. 3


def test_normalise_by_max_by_hand():
    w = S.normalise_by_max(torch.tensor([0.4, 0.5, 1.1]))
    assert torch.allclose(w, torch.tensor([0.4 / 1.1, 0.5 / 1.1, 1.0]))
    assert torch.allclose(S.normalise_by_max(torch.tensor([0.7])), torch.tensor([1.0]))  # single triple
    assert torch.allclose(S.normalise_by_max(torch.tensor([0.5, 1.0]), maximum=2.0), torch.tensor([0.25, 0.5]))
    with pytest.raises(DataError, match="maximum"):
        S.normalise_by_max(torch.tensor([0.0, 0.0]))


def test_one_triple_dominates_a_session():
    # the summary attends almost only to triple 2: the others fall towards 0, the top stays 1
    attn = torch.zeros(1, 3, 4)
    attn[0, :, 2:] = torch.tensor([0.49, 0.49])
    attn[0, :, :2] = torch.tensor([0.01, 0.01])
    raw = S.triple_saliency(S.head_average(attn), [(0, 1), (1, 2), (2, 4)])
    assert torch.allclose(raw, torch.tensor([0.03, 0.03, 2.94]))
    w = S.normalise_by_max(raw)
    assert torch.allclose(w, torch.tensor([0.03 / 2.94, 0.03 / 2.94, 1.0]))
    assert w[:2].max() < 0.011


def test_teaching_cell_matches_library():
    """Notebook 02 works Eq. 1-3 with plain Python loops; that cell's arithmetic equals the library."""
    torch.manual_seed(0)
    attn = torch.softmax(torch.randn(3, 4, 7), dim=-1)  # H=3, M=4, N=7
    spans = [(0, 2), (2, 5), (5, 7)]
    H, M, N = attn.shape
    A = [[sum(float(attn[h, j, i]) for h in range(H)) / H for j in range(M)] for i in range(N)]
    S_hand = [sum(A[i][j] for i in range(a, b) for j in range(M)) for a, b in spans]
    w_hand = [s / max(S_hand) for s in S_hand]
    assert np.allclose(S.head_average(attn).numpy(), np.array(A), atol=1e-6)
    assert np.allclose(S.normalise_by_max(S.triple_saliency(S.head_average(attn), spans)).numpy(), w_hand, atol=1e-6)


# --------------------------------------------------------------------------- linearisation and spans


def test_token_spans_with_leading_space_tokens():
    # a SentencePiece-style tokenizer whose tokens carry the space before them
    text, ranges = S.linearise_triples([Triple("Ann", "like", "tea"), Triple("Bo", "own", "cat")])
    assert text == "Ann like tea. Bo own cat. "
    offsets = [(0, 3), (3, 8), (8, 12), (12, 13), (13, 16), (16, 20), (20, 24), (24, 25), (0, 0)]
    assert S.token_spans(offsets, ranges, text) == [(0, 4), (4, 8)]


def test_token_spans_boundaries():
    """Cases the mutation run found untested: one leading space skipped (not two); a token starting
    where a triple ends belongs to the next; a token in no triple, or an empty end-of-text token,
    belongs to none; a triple with no token gets the empty span (n, n)."""
    text = "a bc ."
    ranges = [(0, 1), (2, 3), (3, 4), (7, 9)]  # "a", "b", "c", and a triple cut off by truncation
    offsets = [(0, 1), (1, 3), (3, 4), (4, 6), (6, 6)]  # "a", " b", "c", " .", the end
    assert S.token_spans(offsets, ranges, text) == [(0, 1), (1, 2), (2, 3), (5, 5)]


@pytest.fixture(scope="module")
def minilm_tok():
    from glong_lib.summarizer import minilm_tokenizer

    return minilm_tokenizer()


def test_token_spans_real_tokenizer_odd_triples(minilm_tok):
    triples = [Triple("Maya", "has_profession", "nurse"), Triple("Leo", "live_in_general", "Denver, CO"),
               Triple("Zoë", "like", "crème brûlée!!"), Triple("x", "y", "z")]
    text, ranges = S.linearise_triples(triples)
    enc = minilm_tok(text, add_special_tokens=False, return_offsets_mapping=True)
    spans = S.token_spans(enc["offset_mapping"], ranges, text)
    assert spans[0][0] == 0 and spans[-1][1] == len(enc["input_ids"])  # every token covered, in order
    assert all(a < b for a, b in spans) and all(spans[k][1] == spans[k + 1][0] for k in range(len(spans) - 1))
    pieces = minilm_tok.convert_ids_to_tokens(enc["input_ids"][spans[1][0]:spans[1][1]])
    assert pieces[0] == "leo" and pieces[-1] == "."


def test_linearise_rejects_empty_triple():
    with pytest.raises(DataError, match="empty"):
        S.linearise_triples([Triple("", "", "")])


# --------------------------------------------------------------------------- scopes


class FixedScorer:
    """Stands in for the summarizer: raw score = a number per triple object."""

    def __init__(self, raw_by_object):
        self.raw = raw_by_object

    def score(self, triples, turns=None):
        return type("R", (), {"raw": np.array([self.raw[t.object] for t in triples])})()


def test_score_conversation_scopes_by_hand():
    triples = [Triple("A", "r", "a", session=1), Triple("A", "r", "b", session=1),
               Triple("B", "r", "c", session=2), Triple("B", "r", "d", session=2)]
    scorer = FixedScorer({"a": 2.0, "b": 1.0, "c": 0.5, "d": 0.25})
    session = [t.weight for t in S.score_conversation(triples, scorer, scope="session")]
    dialogue = [t.weight for t in S.score_conversation(triples, scorer, scope="dialogue")]
    assert session == pytest.approx([1.0, 0.5, 1.0, 0.5])      # each session's top weighs 1
    assert dialogue == pytest.approx([1.0, 0.5, 0.25, 0.125])  # divided by 2.0, the dialogue max
    assert triples[0].weight is None  # copies, the input is untouched
    with pytest.raises(DataError, match="scope"):
        S.score_conversation(triples, scorer, scope="corpus")


# --------------------------------------------------------------------------- measures


def test_auc_and_labels():
    assert SE.auc([0.9, 0.8, 0.3, 0.1], [True, False, True, False]) == 0.75
    assert SE.auc([1.0] * 4, [True, False, True, False]) == 0.5
    assert SE.auc([0.1, 0.2, 0.9], [False, False, True]) == 1.0
    with pytest.raises(DataError):
        SE.auc([0.1, 0.2], [True, True])
    assert SE.mentioned_in(Triple("Priya", "want_do", "buy honey"), "Priya buys honey for her mum.")
    assert not SE.mentioned_in(Triple("Walter", "has_profession", "beekeeper"), "Priya buys honey.")
    assert SE.rank_agreement([1, 2, 3, 4], [4, 3, 2, 1]) == {"spearman": -1.0, "kendall": -1.0}


# --------------------------------------------------------------------------- the scorer on tiny models


def tiny_t5(tokenizer, seed: int = 0):
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    cfg = T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                   num_heads=4, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.sep_token_id,
                   decoder_start_token_id=tokenizer.pad_token_id, attn_implementation="eager")
    return T5ForConditionalGeneration(cfg).eval()


@pytest.mark.slow
def test_scorer_on_random_t5_invariants(minilm_tok):
    scorer = S.SalienceScorer(minilm_tok, tiny_t5(minilm_tok), num_beams=2, max_new_tokens=6, min_new_tokens=3)
    triples = [Triple("Maya", "move_to", "Denver"), Triple("Leo", "like", "dogs"), Triple("Maya", "has_pet", "cat")]
    res = scorer.score(triples)
    n, m = res.attention.shape
    assert n == len(res.input_tokens) and m == len(res.summary_tokens)
    # Eq. 2 sums exactly the M summary-token rows: generate() returned the start token + M tokens
    ids = scorer.summarise(torch.tensor([scorer.encode(triples)[1]]))
    assert m == len(ids) - 1 and 3 <= m <= 6
    assert res.head_attention.shape == (4, n, m)
    assert np.allclose(res.head_attention.mean(axis=0), res.attention, atol=1e-6)  # Eq. 1
    assert res.raw.sum() == pytest.approx(m, rel=1e-4)  # each summary token spreads mass 1 over the triples
    assert res.weights.max() == pytest.approx(1.0) and (res.weights > 0).all()
    assert [r["tokens"] for r in res.table()] == [b - a for a, b in res.spans]
    single = scorer.score(triples[:1])
    assert single.weights.tolist() == [1.0]
    with pytest.raises(DataError, match="no triples"):
        scorer.score([])


@pytest.mark.slow
def test_hub_profile_loads_local_copy(tmp_path, monkeypatch, minilm_tok):
    """The hub/paper code path with no network: a tiny random T5 saved where resolve_model looks."""
    target = tmp_path / "chanifrusydi" / "t5-dialogue-summarization"
    tiny_t5(minilm_tok).save_pretrained(target)
    minilm_tok.save_pretrained(target)
    monkeypatch.setenv("GLONG_MODELS_DIR", str(tmp_path))
    scorer = S.load_scorer("hub", max_new_tokens=5, num_beams=2)
    assert scorer.name == "chanifrusydi/t5-dialogue-summarization"
    res = scorer.score([Triple("Ann", "like", "tea"), Triple("Bo", "own", "a cat")])
    assert res.weights.max() == pytest.approx(1.0) and len(res.weights) == 2


@pytest.mark.slow
def test_offline_smoke_summarizer_trains_caches_and_scores(tmp_path, monkeypatch):
    from glong_lib import summarizer as Z

    monkeypatch.setenv("GLONG_CACHE", str(tmp_path / "cache"))
    path = Z.offline_summarizer_dir(smoke=True, progress=False)
    meta = Z.summarizer_meta(path)
    assert meta["config"]["steps"] == Z.SMOKE_CONFIG.steps and meta["examples"] > 100
    assert meta["loss_curve"][-1] < meta["loss_curve"][0]  # it learned something in 12 steps
    assert Z.offline_summarizer_dir(smoke=True) == path  # cached: same folder, no retraining
    assert f"{Z.SMOKE_CONFIG.steps}steps" in path.name  # smoke artifacts never stand in for the default
    scorer = S.load_scorer(get_profile("offline").smoke(), source="seq2seq", max_new_tokens=8)
    _, test = Z.split_summary_pairs(Z.shipped_summary_pairs())
    ev = SE.evaluate_salience(scorer, test[:3], progress=False)
    assert len(ev.labels) == sum(len(p.triples) for p in test[:3])
    assert {r["method"] for r in ev.auc_table()} >= {"summarizer attention", "uniform", "random (mean of 200 draws)",
                                                     "length only"}


def test_split_is_seeded_and_disjoint():
    from glong_lib import summarizer as Z

    pairs = Z.shipped_summary_pairs()
    train, test = Z.split_summary_pairs(pairs, n_test=30, seed=42)
    again = Z.split_summary_pairs(pairs, n_test=30, seed=42)[1]
    assert [p.id for p in test] == [p.id for p in again] and len(test) == 30
    assert not {p.id for p in train} & {p.id for p in test}
    assert len(train) + len(test) == len(pairs)
    ex = Z.training_examples(train[:2], ["triples", "dialogue"])
    assert ex[0][0] == S.linearise_triples(train[0].triples)[0] and ex[1][0] == train[0].dialogue


def test_training_examples_bad_input():
    from glong_lib import summarizer as Z

    with pytest.raises(DataError, match="unknown summarizer input"):
        Z.training_examples([SummaryPair("1", "d", "s")], ["audio"])


# --------------------------------------------------------------------------- glong score


def _extraction_file(path):
    rows = [
        {"conversation": "c1", "session": 1, "turn_id": "S1:1", "speaker": "A", "text": "I moved to Denver.",
         "triples": [{"subject": "A", "relation": "live_in", "object": "Denver"}]},
        {"conversation": "c1", "session": 1, "turn_id": "S1:2", "speaker": "B", "text": "Nice!", "triples": []},
        {"conversation": "c1", "session": 2, "turn_id": "S2:1", "speaker": "B", "text": "I got a dog and a cat.",
         "triples": [{"subject": "B", "relation": "have_pet", "object": "dog"},
                     {"subject": "B", "relation": "have_pet", "object": "cat"}]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def test_weigh_rows_per_session(tmp_path):
    from glong_lib.commands.score import weigh_rows

    rows = _extraction_file(tmp_path / "x.jsonl")
    out = weigh_rows(rows, FixedScorer({"Denver": 3.0, "dog": 1.0, "cat": 2.0}), scope="session")
    assert [t["weight"] for r in out for t in r["triples"]] == [1.0, 0.5, 1.0]
    out = weigh_rows(rows, FixedScorer({"Denver": 3.0, "dog": 1.0, "cat": 2.0}), scope="dialogue")
    assert [t["weight"] for r in out for t in r["triples"]] == [1.0, round(1 / 3, 4), round(2 / 3, 4)]
    assert "weight" not in rows[0]["triples"][0] and out[1] == rows[1]


def test_glong_score_bad_input_exit_2(tmp_path, capsys):
    from glong_lib.cli import main

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"conversation": "c", "session": 1, "triples": [{"subject": "A"}]}\n')
    assert main(["score", str(bad), "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl: line 1: triple 1 needs" in err and "\n" not in err.strip()


@pytest.mark.slow
def test_glong_score_end_to_end_smoke(tmp_path, own_cache):
    from glong_lib.cli import main

    rows = _extraction_file(tmp_path / "x.jsonl")
    assert main(["score", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "o.jsonl"), "--smoke"]) == 0
    out = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert len(out) == len(rows) and out[0]["triples"][0]["weight"] == 1.0  # lone triple of session 1
    assert max(t["weight"] for t in out[2]["triples"]) == 1.0


def test_shipped_conversation_gold_triples_linearise():
    from glong_lib.loaders import load_conversation

    conv = load_conversation(DATA / "conversations" / "c01.json")
    triples = [t for turn in conv.sessions[0].turns for t in turn.triples]
    text, ranges = S.linearise_triples(triples)
    assert len(ranges) == len(triples) and text.count(". ") >= len(triples)


def tiny_llama():
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from glong_lib.models import smollm2_dir

    tok = AutoTokenizer.from_pretrained(str(smollm2_dir()))
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                         num_attention_heads=4, num_key_value_heads=2, attn_implementation="eager"))
    return tok, model


@pytest.mark.slow
def test_decoder_source_triples_input_on_tiny_llama():
    """Linearised triples as input: columns cropped to the facts, rows = the steps writing the summary."""
    tok, model = tiny_llama()
    scorer = S.DecoderSalienceScorer(tok, model, S.DecoderSourceSettings(input="triples", layer=-1, aggregate="sum",
                                                                         max_new_tokens=4))
    triples = [Triple("Maya", "move_to", "Denver"), Triple("Leo", "like", "dogs")]
    res = scorer.score(triples)
    n, m = res.attention.shape
    assert m == len(res.summary_tokens) and n == len(res.input_tokens)
    assert tok.convert_tokens_to_string(res.input_tokens).strip() == res.input_text.strip()
    assert 0 < res.raw.sum() <= m + 1e-4  # the prompt around the facts takes the rest
    assert res.weights.max() == pytest.approx(1.0)
    reading = scorer.read(triples)
    assert reading.layers.shape == (3, n, m)  # every layer, for choosing one
    assert np.allclose(scorer.layer_scores(reading)[-1], res.raw, atol=1e-5)


@pytest.mark.slow
def test_decoder_source_dialogue_input_reads_the_words_where_said():
    tok, model = tiny_llama()
    scorer = S.DecoderSalienceScorer(tok, model, S.DecoderSourceSettings(input="dialogue", layer=1, max_new_tokens=4,
                                                                         where="turn"))
    turns = [Turn("T1", "Maya", "I just moved to Denver."), Turn("T2", "Leo", "Cool. My dogs love snow."),
             Turn("T3", "Maya", "Ha, mine too.")]
    triples = [Triple("Maya", "move_to", "Denver", turn_id="T1"), Triple("Leo", "have_pet", "dogs", turn_id="T2"),
               Triple("Maya", "feel", "happy", turn_id="T3"),   # said nowhere: no tokens, Eq. 2 = 0
               Triple("Leo", "visit", "Denver", turn_id="T2")]  # said, but not in its own turn
    res = scorer.score(triples, turns)
    words = [tok.convert_tokens_to_string([res.input_tokens[i] for i in p]).strip() for p in res.positions]
    assert words[0] == "Denver" and words[1] == "dogs" and words[2] == ""
    assert "Cool" in words[3] and "snow" in words[3] and "Denver" not in words[3]  # where="turn": its turn's words
    assert res.input_text == "Maya: I just moved to Denver.\nLeo: Cool. My dogs love snow.\nMaya: Ha, mine too."
    assert res.weights.max() == pytest.approx(1.0) and res.raw[2] == 0 and (res.raw[[0, 1, 3]] > 0).all()
    session = S.DecoderSalienceScorer(tok, model, S.DecoderSourceSettings(layer=1, max_new_tokens=4, where="session"))
    res_s = session.score(triples, turns)
    assert "Denver" in tok.convert_tokens_to_string([res_s.input_tokens[i] for i in res_s.positions[3]])
    triples = triples[:2]
    # mean = sum / token count, on the same reading
    reading = scorer.read(triples, turns, summary="Maya moved.")
    sums, means = scorer.layer_scores(reading, "sum"), scorer.layer_scores(reading, "mean")
    counts = np.array([len(p) for p in reading.positions])
    assert np.allclose(means, sums / counts, equal_nan=True) and np.isnan(sums[0]).all()  # only layer 1 read
    assert reading.summary == "Maya moved."  # a given summary is teacher-forced, not generated
    with pytest.raises(DataError, match="layer 7"):
        S.DecoderSalienceScorer(tok, model, S.DecoderSourceSettings(layer=7))


def test_position_saliency_by_hand():
    A = torch.tensor([[0.5, 0.1], [0.2, 0.1], [0.1, 0.4]])
    assert S.position_saliency(A, [[0, 2], [], [1]]).tolist() == pytest.approx([1.1, 0.0, 0.3])
    assert S.position_saliency(A, [[0, 2]], "mean").tolist() == pytest.approx([0.55])
    # Eq. 2 over a contiguous span is the same number either way
    assert S.position_saliency(A, [[0, 1]]).tolist() == pytest.approx(S.triple_saliency(A, [(0, 2)]).tolist())
    with pytest.raises(DataError, match="outside"):
        S.position_saliency(A, [[3]])
    with pytest.raises(DataError, match="aggregate 'max' \\(choose from sum, mean\\)"):
        S.position_saliency(A, [[0]], "max")
    # no triples: an empty vector; float32 whatever the input's type (Eq. 3 divides it next)
    assert S.position_saliency(A, []).shape == (0,)
    for other in (A.double(), np.array([[1, 0], [2, 3]])):
        assert S.position_saliency(other, [[0, 1]], "mean").dtype == torch.float32


def test_layer_saliency_by_hand_and_on_summed_mass():
    # two layers read, one not: (layers, input tokens, summary tokens)
    A = np.array([[[0.5, 0.1], [0.2, 0.1], [0.1, 0.4]],
                  [[np.nan, np.nan]] * 3,
                  [[0.0, 0.3], [0.6, 0.0], [0.2, 0.2]]])
    positions = [[0, 2], [1]]
    out = S.layer_saliency(A, positions)
    assert out.shape == (3, 2)
    assert out[0].tolist() == pytest.approx([1.1, 0.3])  # (0.5 + 0.1) + (0.1 + 0.4); 0.2 + 0.1
    assert np.isnan(out[1]).all()                        # a layer not read stays NaN
    assert out[2].tolist() == pytest.approx([0.7, 0.6])
    assert S.layer_saliency(A, positions, "mean")[0].tolist() == pytest.approx([0.55, 0.3])
    # what a cached reading keeps (each token's mass summed over the summary rows) scores the same
    mass = A.sum(axis=2, keepdims=True)
    np.testing.assert_allclose(S.layer_saliency(mass, positions), out, rtol=1e-6)


def test_normalise_by_group_is_eq3_inside_each_group():
    w = S.normalise_by_group([0.2, 0.4, 3.0, 1.5, 0.0], ["d1", "d1", "d2", "d2", "d3"])
    assert w.tolist() == pytest.approx([0.5, 1.0, 1.0, 0.5, 1.0])  # d3 drew no attention: weight 1
    # one group is normalise_by_max itself
    raw = [0.9, 1.1, 0.55]
    assert S.normalise_by_group(raw, [7, 7, 7]).tolist() == pytest.approx(
        S.normalise_by_max(torch.tensor(raw)).tolist())


def test_turns_from_triples_and_dialogue_text():
    triples = [Triple("A", "r", "x", speaker="Ann", turn_id="1", source="I like x."),
               Triple("A", "r", "y", speaker="Ann", turn_id="1", source="I like x."),
               Triple("B", "r", "z")]
    turns = S.turns_from_triples(triples)
    assert [(t.speaker, t.text) for t in turns] == [("Ann", "I like x."), ("Speaker", "B r z")]
    text, spans = S.dialogue_text(turns)
    assert [text[a:b] for a, b in spans] == ["I like x.", "B r z"]


def test_load_scorer_source_choice():
    with pytest.raises(DataError, match="salience source"):
        S.load_scorer("offline", source="bert")



def test_real_summary_pairs_load(real_data):
    from glong_lib import summarizer as Z

    pairs = Z.real_summary_pairs(real_data)
    assert len(pairs) == 819 + 500 and all(p.summary and p.dialogue for p in pairs)
    assert len(Z.training_examples(pairs[:5], ["dialogue"])) == 5


# --------------------------------------------------------------------------- the real-dialogue measures


def test_summary_label_leaves_speaker_names_out():
    summary = "Hannah needs Betty's number, Amanda suggests asking Larry."
    assert SE.summary_label(Triple("Hannah", "need", "number"), summary, ["Hannah", "Amanda"])
    assert not SE.summary_label(Triple("Hannah", "like", "Amanda"), summary, ["Hannah", "Amanda"])
    assert SE.summary_label(Triple("Amanda", "ask", "larry"), summary, ["Hannah", "Amanda"])  # case, names of others
    assert SE.summary_label(Triple("I", "suggest", "asking"), summary)  # light stem: asking = asking


def test_within_dialogue_auc_by_hand_ignores_between_dialogue_offsets():
    # dialogue a: perfect order; b: reversed; c: one label only (left out). Pooled, b's high
    # offset would decide; within dialogues it averages (1 + 0) / 2.
    scores = [0.9, 0.1, 10.2, 10.8, 0.5]
    labels = [1, 0, 1, 0, 1]
    groups = ["a", "a", "b", "b", "c"]
    r = SE.within_dialogue_auc(scores, labels, groups, n=50)
    assert r["auc"] == 0.5 and r["dialogues"] == 2 and r["per_dialogue"] == [1.0, 0.0]
    assert 0.0 <= r["low"] <= r["high"] <= 1.0
    assert np.isnan(SE.within_dialogue_auc([1, 2], [1, 1], ["a", "a"])["auc"])


def _synthetic_table(rng, dialogues, signal):
    labels, groups, position, length, frequency, weight = [], [], [], [], [], []
    for d in range(dialogues):
        k = 8
        y = rng.random(k) < 0.4
        labels += y.tolist()
        groups += [f"d{d}"] * k
        position += rng.random(k).tolist()
        length += rng.integers(2, 6, k).tolist()
        frequency += rng.random(k).tolist()
        weight += (signal * y + rng.random(k)).tolist()
    return {"labels": np.array(labels), "groups": np.array(groups), "position": np.array(position),
            "length": np.array(length, float), "frequency": np.array(frequency), "weight": np.array(weight)}


def test_added_value_positive_only_when_the_weight_carries_signal():
    rng = np.random.default_rng(0)
    useful = SE.added_value(_synthetic_table(rng, 60, 1.0), _synthetic_table(rng, 60, 1.0),
                            ["position", "length", "frequency"], "weight", n=200)
    assert useful["added"]["low"] > 0.1 and useful["covariates"] < 0.6
    useless = SE.added_value(_synthetic_table(rng, 60, 0.0), _synthetic_table(rng, 60, 0.0),
                             ["position", "length", "frequency"], "weight", n=200)
    assert useless["added"]["low"] < 0 < useless["added"]["high"] or abs(useless["added"]["value"]) < 0.05


def test_planted_line_is_seeded_and_ranked():
    from glong_lib.loaders import summary_pair_conversation

    pair = SummaryPair("d7", "A: I adopted a cat.\nB: Nice, what breed?\nA: A Siamese.", "A adopted a Siamese cat.")
    d = SE.SalienceDialogue("test", pair, summary_pair_conversation(pair), [Triple("A", "adopt", "cat", turn_id="T1")])
    turns, triples, k = SE.plant_line(d)
    assert (turns, triples, k) == SE.plant_line(d)  # same seed, same place
    assert len(turns) == 4 and turns[0].id == "T1" and "PLANTED" in [t.id for t in turns]
    assert triples[k].turn_id == "PLANTED" and triples[k].source in [line for line, _ in SE.PLANTED_LINES]
    assert SE.planted_rank([0.9, 0.2, 0.4], 1) == 1.0 and SE.planted_rank([0.1, 0.5], 1) == 0.0
    assert SE.planted_rank([0.5, 0.5, 0.1], 0) == 0.25  # one tie (half), one below


def test_triple_covariates_and_ranks():
    turns = [Turn("T1", "A", "Tea. I love tea."), Turn("T2", "B", "Coffee for me.")]
    cov = SE.triple_covariates([Triple("A", "like", "tea", turn_id="T1"), Triple("B", "like", "coffee", turn_id="T2")],
                               turns, "A and B talk about tea.")
    assert cov["position"].tolist() == [1.0, 0.5] and cov["frequency"].tolist() == [2.0, 1.0]
    assert cov["own summary overlap"].tolist() == [1.0, 0.0]
    assert SE.within_dialogue_ranks([5, 1, 5, 2], ["a", "a", "a", "b"]).tolist() == [0.75, 0.0, 0.75, 0.5]


def test_summary_pair_conversation_bad_input():
    from glong_lib.loaders import summary_pair_conversation

    with pytest.raises(DataError, match="dialogue x: the first line"):
        summary_pair_conversation(SummaryPair("x", "no speaker here", "s"))
    with pytest.raises(DataError, match="dialogue y has no turns"):
        summary_pair_conversation(SummaryPair("y", "\n  \n", "s"))


def test_salience_splits_are_seeded_and_disjoint(real_data):
    select = SE.salience_dialogues(real_data, "select", n=5)
    report = SE.salience_dialogues(real_data, "report", n=5)
    assert [d.pair.id for d in select] == [d.pair.id for d in SE.salience_dialogues(real_data, "select", n=5)]
    assert len(select) == len(report) == 10
    assert not {(d.corpus, d.pair.id) for d in select} & {(d.corpus, d.pair.id) for d in report}
    assert {d.corpus for d in report} == {"dialogsum-test", "samsum-test"}
    assert all(4 <= len(d.turns) <= 16 for d in select + report)


@pytest.mark.slow
def test_attention_tapped_while_generating_equals_a_teacher_forced_reread():
    """The rows kept during generate are the rows a second, teacher-forced pass would give."""
    tok, model = tiny_llama()
    scorer = S.DecoderSalienceScorer(tok, model, S.DecoderSourceSettings(input="triples", layer=1, max_new_tokens=5))
    triples = [Triple("Maya", "move_to", "Denver"), Triple("Leo", "like", "dogs")]
    tapped = scorer.read(triples, layers=[0, 1, 2])
    again = scorer.read(triples, summary=tok.convert_tokens_to_ids(tapped.summary_tokens), layers=[0, 1, 2])
    assert again.summary_tokens == tapped.summary_tokens
    assert np.allclose(tapped.layers, again.layers, atol=1e-5)
    # and the shorter-summary shortcut: the first 3 rows of a 5-token reading = a 3-token generation
    short = S.DecoderSalienceScorer(tok, model, S.DecoderSourceSettings(input="triples", layer=1, max_new_tokens=3))
    assert np.allclose(scorer.layer_scores(tapped, rows=3)[1], short.layer_scores(short.read(triples))[1], atol=1e-5)


def test_profiles_name_their_salience_source():
    assert get_profile("offline").summarizer.source == "decoder"
    # smoke runs (CI's notebooks, --smoke) compute what a full run computes, only smaller (067108f: the tiny T5)
    assert get_profile("offline").smoke().summarizer == get_profile("offline").summarizer
    assert get_profile("hub").summarizer.source == get_profile("paper").summarizer.source == "seq2seq"


class TurnRecorder:
    """A scorer that records the turns it is handed (what a dialogue-reading source would read)."""

    def __init__(self):
        self.seen = []

    def score(self, triples, turns=None):
        self.seen.append([t.text for t in turns] if turns else None)
        return type("R", (), {"raw": np.arange(1, len(triples) + 1, dtype=float)})()


def test_every_turn_reaches_a_dialogue_reading_source(tmp_path):
    """`glong score` rows, `score_conversation` and the agent hand the scorer the session's turns,
    including turns that state no fact."""
    from glong_lib.agent import TripleSource
    from glong_lib.commands.score import weigh_rows
    from glong_lib.loaders import load_conversation

    rec = TurnRecorder()
    weigh_rows(_extraction_file(tmp_path / "x.jsonl"), rec)
    assert rec.seen == [["I moved to Denver.", "Nice!"], ["I got a dog and a cat."]]
    conv = load_conversation(DATA / "conversations" / "c01.json")
    gold = [t for turn in conv.sessions[0].turns for t in turn.triples]
    rec = TurnRecorder()
    S.score_conversation(gold, rec, conversation=conv)
    assert rec.seen == [[t.text for t in conv.sessions[0].turns]]
    rec = TurnRecorder()
    TripleSource("gold", scorer=rec).session_triples(conv, conv.sessions[1])
    assert rec.seen == [[t.text for t in conv.sessions[1].turns]]


def test_stored_report_table_reads_the_shipped_benchmark():
    """Notebook A1's table: chosen, turned-down and last-layer readings first, then the baselines, from the file."""
    from glong_lib.io import data_path

    bench = json.loads(data_path("results", "bench_salience.json").read_text())
    rows = SE.stored_report_table(bench)
    chosen = bench["chosen_on_selection"]["decoder dialogue"]
    assert [r["method"] for r in rows[:3]] == ["chosen: " + chosen.split(" | ", 1)[1],
                                               "turned down: " + bench["chosen_on_selection"][
                                                   "decoder dialogue, ignoring the planted line"].split(" | ", 1)[1],
                                               f"mean | last layer, L{len(bench['layer_curve_select']['mean']) - 1}"]
    stored = bench["report"][f"decoder dialogue (chosen: {chosen})"]
    assert rows[0]["AUC"] == round(stored["within"], 3) and rows[0]["dialogues"] == stored["dialogues"]
    assert [r["method"] for r in rows[3:]] == ["baseline: " + b for b in SE.STORED_BASELINES]
    assert len(SE.stored_report_table(bench, baselines=("random",))) == 4
