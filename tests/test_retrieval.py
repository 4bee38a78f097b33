"""Tests of glong_lib.retrieval: Eq. 4 by hand, the stages of the associative retriever, the
baselines, the evidence metrics, and the two CLI subcommands."""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest

from glong_lib import retrieval as R
from glong_lib.config import PAPER_RETRIEVAL
from glong_lib.errors import DataError
from glong_lib.evaluation import locomo as LC
from glong_lib.evaluation import retrieval as RE
from glong_lib.loaders import load_conversations, load_probes
from glong_lib.schema import QA, Conversation, Session, Triple, Turn


def settings(**changes):
    """The paper's retrieval settings with ``changes`` (how a variant is made)."""
    return replace(PAPER_RETRIEVAL, **changes)


class WordEncoder:
    """A tiny deterministic bag-of-words encoder: texts sharing words have positive cosine.
    Stands in for MiniLM in the fast tests (same ``encode`` signature)."""

    def __init__(self, dim: int = 256):
        self.dim = dim
        self.calls = 0

    def encode(self, texts, normalize_embeddings=True, **_):
        self.calls += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in re.findall(r"[a-z0-9]+", text.lower().replace("_", " ")):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
            out[i, -1] += 0.01  # never an all-zero vector
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def graph_memory(encoder=None):
    from glong_lib.memory import GraphMemory

    return GraphMemory(encoder=encoder or WordEncoder())


def T(s, r, o, turn=None, weight=None):
    return Triple(s, r, o, turn_id=turn, weight=weight)


@pytest.fixture
def memory():
    """A small memory: Maya is a hub; Denver is reachable from Maya in one hop, 'rockies' in two."""
    m = graph_memory()
    m.add_triples([T("Maya", "has_profession", "nurse", "S1:1"),
                   T("Maya", "live_in", "portland", "S1:2"),
                   T("Leo", "has_pet", "puppy biscuit", "S1:3"),
                   T("puppy biscuit", "breed", "golden retriever", "S1:4")], time_s=0.0, session=1)
    m.add_triples([T("Maya", "move_to", "denver", "S2:1"),
                   T("denver", "near", "rockies", "S2:2"),
                   T("Leo", "like_food", "fresh pasta", "S2:3")], time_s=1000.0, session=2)
    return m


# --------------------------------------------------------------------------- Eq. 4

def test_rerank_score_matches_hand_computation():
    # 0.5*0.62 + 0.3*0.8 + 0.2*exp(-1e-7 * 30 days) = 0.31 + 0.24 + 0.2*0.771668 = 0.704334
    assert R.rerank_score(0.62, 0.8, 30 * 86400) == pytest.approx(0.704334, abs=1e-6)
    # other betas and lambda: 0.2*0.5 + 0.2*1.0 + 0.6*exp(-0.01*100) = 0.1 + 0.2 + 0.6*0.367879
    assert R.rerank_score(0.5, 1.0, 100, betas=(0.2, 0.2, 0.6), lam=0.01) == pytest.approx(0.520728, abs=1e-6)
    got = R.rerank_score(np.array([1.0, 0.0]), np.array([0.5, 1.0]), np.array([0.0, 1e7]))
    assert got == pytest.approx([0.5 + 0.15 + 0.2, 0.3 + 0.2 * math.exp(-1.0)])


def test_recency_half_life_and_future_access():
    assert R.recency(math.log(2) / 1e-7) == pytest.approx(0.5)
    assert R.recency(-50.0) == 1.0  # an access "after" the query time is not rewarded beyond 1
    with pytest.raises(DataError):
        R.rerank_score(0.5, 0.5, 0.0, betas=(0.5, 0.5))


# --------------------------------------------------------------------------- associative retriever

def test_pipeline_stages_in_order_and_sizes(memory):
    r = R.AssociativeRetriever(memory, settings(anchors=3, semantic_top_n=4, k=2), update_access=False)
    res = r.retrieve("Where does Maya live now, Denver?", now_s=2000.0)
    tr = res.trace
    assert len(tr.anchors) == 3 and tr.anchors == sorted(tr.anchors, key=lambda a: -a[1])
    expected = memory.incident_edges([e for e, _ in tr.anchors], hops=1)
    assert set(tr.candidates) == set(expected)
    sims = [s for _, s in tr.semantic]
    assert sims == sorted(sims, reverse=True) and min(sims) >= 0.0  # clamped at 0
    assert [e for e, _ in tr.semantic] and set(e for e, _ in tr.semantic) == set(tr.candidates)
    assert tr.pool == [e for e, _ in tr.semantic[:4]]
    assert {t.eid for t in tr.rerank} == set(tr.pool)
    scores = [t.score for t in tr.rerank]
    assert scores == sorted(scores, reverse=True)
    assert tr.final == [t.eid for t in tr.rerank[:2]] == res.edges
    assert tr.sizes() == {"anchors": 3, "candidates": len(tr.candidates), "pool": 4, "final": 2}
    for t in tr.rerank:  # each candidate's three parts add up to its Eq. 4 score
        assert sum(t.parts) == pytest.approx(t.score)
        assert t.score == pytest.approx(R.rerank_score(t.semantic, t.weight, t.delta_s))
    assert res.turn_ids == [memory.edge(e).turn_id for e in res.edges]
    assert res.triples[0].text() == res.texts[0]


def test_hops_expand_in_both_directions(memory):
    r1 = R.AssociativeRetriever(memory, settings(anchors=1, hops=1), update_access=False)
    tr = r1.retrieve("denver", now_s=2000.0).trace
    assert tr.anchors[0][0] == "denver"
    texts = {memory.edge(e).text() for e in tr.candidates}
    # in-edge (maya -> denver) and out-edge (denver -> rockies) both count; nothing two hops away
    # (the memory folds entity names to lower case)
    assert texts == {"maya move_to denver", "denver near rockies"}
    r2 = R.AssociativeRetriever(memory, settings(anchors=1, hops=2), update_access=False)
    texts2 = {memory.edge(e).text() for e in r2.retrieve("denver", now_s=2000.0).trace.candidates}
    assert {"maya has_profession nurse", "maya live_in portland"} <= texts2
    assert "leo has_pet puppy biscuit" not in texts2


def test_last_access_is_updated_on_the_conversation_clock(memory):
    r = R.AssociativeRetriever(memory, settings(k=2))
    before = {e: memory.edge(e).last_access_s for e in memory.edge_ids()}
    res = r.retrieve("Leo puppy biscuit", now_s=5000.0)
    for e in memory.edge_ids():
        want = 5000.0 if e in res.edges else before[e]
        assert memory.edge(e).last_access_s == want
    quiet = R.AssociativeRetriever(memory, settings(k=2), update_access=False)
    res2 = quiet.retrieve("Maya nurse", now_s=9000.0)
    assert all(memory.edge(e).last_access_s != 9000.0 for e in res2.edges)


def test_recency_breaks_a_semantic_tie():
    m = graph_memory()
    old, new = m.add_triples([T("Ana", "likes", "tea", "S1:1"), T("Ana", "likes", "tea", "S2:1")], time_s=0.0)
    m.touch([new], 3e7)
    r = R.AssociativeRetriever(m, settings(k=2, dedup=False), update_access=False)  # the same fact twice: keep both
    res = r.retrieve("Ana likes tea", now_s=3e7)
    assert res.edges == [new, old]
    terms = {t.eid: t for t in res.trace.rerank}
    assert terms[new].recency == 1.0 and terms[old].recency == pytest.approx(math.exp(-3.0))


def test_weight_changes_the_order():
    m = graph_memory()
    low, high = m.add_triples([T("Ana", "likes", "tea", weight=0.1), T("Ana", "likes", "tea", weight=0.9)], 0.0)
    res = R.AssociativeRetriever(m, settings(k=2, dedup=False), update_access=False).retrieve("Ana tea", now_s=0.0)
    assert res.edges == [high, low]


def test_edge_embeddings_are_cached_not_recomputed(memory):
    r = R.AssociativeRetriever(memory, update_access=False)
    r.retrieve("Maya nurse", now_s=10.0)
    encoded = r.cache.encoded
    r.retrieve("Maya nurse job", now_s=10.0)
    assert r.cache.encoded == encoded  # same candidates, nothing new to encode
    assert r.warm() == len(memory.edge_ids())


def test_bad_parameters_and_queries_raise_data_error(memory):
    with pytest.raises(DataError):
        R.AssociativeRetriever(memory, settings(anchors=0))
    with pytest.raises(DataError):
        R.AssociativeRetriever(memory, settings(hops=0))
    with pytest.raises(DataError):
        R.AssociativeRetriever(memory).retrieve("   ", now_s=0.0)


def test_ppr_ranks_edges_near_the_anchors(memory):
    res = R.PPRRetriever(memory, anchors=1, k=2).retrieve("golden retriever breed", now_s=0.0)
    assert "puppy biscuit breed golden retriever" in res.texts
    assert res.scores == sorted(res.scores, reverse=True)
    assert all(t is not None for t in res.turn_ids)


# --------------------------------------------------------------------------- turn baselines

TURNS = [Turn("S1:1", "Maya", "I work night shifts as a nurse."),
         Turn("S1:2", "Leo", "My puppy Biscuit chewed my shoes again."),
         Turn("S2:1", "Maya", "We finally moved to Denver last week.")]


def test_dense_turn_retriever_finds_the_matching_turn():
    r = R.DenseTurnRetriever(TURNS, WordEncoder(), k=2)
    res = r.retrieve("puppy Biscuit shoes", now_s=0.0)
    assert res.turn_ids[0] == "S1:2" and len(res) == 2
    assert res.texts[0] == "Leo: My puppy Biscuit chewed my shoes again."
    assert len(r.retrieve("anything", 0.0, k=10)) == 3  # never more than there are turns


def test_bm25_turn_retriever_scores_by_term_overlap():
    r = R.BM25TurnRetriever(TURNS)
    res = r.retrieve("did they move to Denver", now_s=0.0, k=3)
    assert res.turn_ids[0] == "S2:1"
    assert res.scores == sorted(res.scores, reverse=True)
    assert R.bm25_tokens("Leo's puppy, Biscuit!") == ["leo's", "puppy", "biscuit"]


# --------------------------------------------------------------------------- evidence metrics

def test_metrics_by_hand():
    assert RE.unique_turns(["S1:1", "S1:1", "S2:4", None, "S3:1"]) == ["S1:1", "S2:4", None, "S3:1"]
    # items, not distinct turns: the repeated S1:1 takes rank 2; an item with no turn stands for none
    items = [["S1:1"], ["S1:1"], ["S2:4"], [], ["S3:1", "S3:2"]]
    assert RE.recall_at_k(items, ["S2:4", "S3:1"], 2) == 0.0
    assert RE.recall_at_k(items, ["S2:4", "S3:1"], 3) == 0.5
    assert RE.recall_at_k(items, ["S2:4", "S3:1"], 5) == 1.0
    assert RE.hit_at_k(items, ["S3:2"], 4) == 0.0 and RE.hit_at_k(items, ["S3:2"], 5) == 1.0
    assert RE.reciprocal_rank(items, ["S3:1"]) == 0.2
    assert RE.reciprocal_rank(items, ["S9:9"]) == 0.0


class Fixed:
    """A retriever that always returns the same source turns."""

    def __init__(self, turn_ids):
        self.turn_ids = turn_ids

    def retrieve(self, query, now_s, k=None):
        ids = self.turn_ids[:k]
        return R.RetrievalResult([], [], [1.0] * len(ids), ids, ids)


def test_evaluate_evidence_by_hand():
    conv = Conversation("c", ["A", "B"], [Session(1, [Turn(f"S1:{i}", "A", "x") for i in range(1, 6)])])
    conv.assign_clock()
    qs = [QA("c", "q1", "a", ["S1:2"], "single-hop", id="q1"),
          QA("c", "q2", "a", ["S1:4", "S1:5"], "multi-hop", id="q2")]
    ev = RE.evaluate_evidence({"fixed": Fixed(["S1:2", "S1:2", "S1:4", "S1:1", "S1:5"])}, qs, [conv], ks=(1, 3, 5),
                             progress=False)
    m = ev.metrics["fixed"]
    # q1: item 1 is S1:2 -> H@1 = R@1 = 1, RR = 1. q2 (S1:4, S1:5): items S1:2, S1:2, S1:4, S1:1, S1:5 ->
    # R@1 = 0, R@3 = 1/2, R@5 = 1, H@3 = 1, RR = 1/3.  Means: R@1 0.5, R@3 0.75, R@5 1, MRR (1 + 1/3) / 2
    assert (m["Hit@1"], m["Hit@3"], m["Recall@1"], m["Recall@3"], m["Recall@5"]) == (0.5, 1.0, 0.5, 0.75, 1.0)
    assert m["MRR@20"] == pytest.approx(2 / 3) and m["questions"] == 2
    assert ev.recall_curve("fixed") == ([1, 3, 5], [0.5, 0.75, 1.0])
    assert ev.by_category("Recall@3") == {"fixed": {"multi-hop": 0.5, "single-hop": 1.0},
                                          "n": {"multi-hop": 1, "single-hop": 1}}
    assert ev.interval("fixed", "Hit@1") == (0.0, 1.0)
    same = ev.compare("fixed", "fixed", "Recall@3")
    assert (same["mean_diff"], same["ci_low"], same["ci_high"]) == (0.0, 0.0, 0.0)
    with pytest.raises(DataError):
        RE.evaluate_evidence({"fixed": Fixed([])}, [QA("nope", "q", "a", ["x"], "c")], [conv], progress=False)


def test_question_time_and_turn_cut(sample_dir):
    conv = load_conversations(sample_dir / "conversations" / "c01.json")[0]
    q = QA(conv.id, "q", "a", ["S1:3"], "single-hop", asked_in_session=3)
    assert RE.question_time(conv, q) == conv.sessions[2].start_s
    assert {t.id.split(":")[0] for t in RE.turns_before(conv, 3)} == {"S1", "S2"}
    cut = LC.truncate_conversation(conv, 5)
    assert len(cut.turns()) == 5 and len(conv.turns()) > 5


def _recount(ranked_for, probes, by_id):
    """Recall@1/3/5 and MRR@20 over ``probes`` recounted here from each probe's ranked turn ids."""
    out = {"Recall@1": 0.0, "Recall@3": 0.0, "Recall@5": 0.0, "MRR@20": 0.0}
    for q in probes:
        ranked, gold = ranked_for(by_id[q.conversation], q), set(q.evidence)
        for k in (1, 3, 5):
            out[f"Recall@{k}"] += len(set(ranked[:k]) & gold) / len(gold) / len(probes)
        out["MRR@20"] += next((1 / r for r, t in enumerate(ranked[:20], start=1) if t in gold), 0.0) / len(probes)
    return out


def test_probe_evaluation_relations(sample_dir):
    """Every method on 12 probes (WordEncoder, gold triples). The baselines' metrics equal recounts
    done here (BM25 from its retriever's ranking, dense from a cosine ranking in numpy); every method obeys
    the relations any ranking must (Recall@k <= Hit@k, both growing with k, MRR >= Hit@1); and
    ``flat``, which ranks every edge G-Long could, finds at least G-Long's evidence in its top 5."""
    from glong_lib.text import turn_line

    convs = load_conversations(sample_dir / "conversations")
    probes = load_probes(sample_dir / "probes.jsonl")[:12]
    ev = RE.evaluate_probes(probes, convs, WordEncoder(), ks=(1, 3, 5), progress=False)
    assert list(ev.metrics) == list(RE.DEFAULT_METHODS)
    by_id = {c.id: c for c in convs}

    def bm25(conv, q):
        return R.BM25TurnRetriever(RE.turns_before(conv, q.asked_in_session), k=20).retrieve(q.question).turn_ids

    def dense(conv, q):  # cosine of unit bag-of-words vectors, best first
        turns, enc = RE.turns_before(conv, q.asked_in_session), WordEncoder()
        sims = enc.encode([turn_line(t) for t in turns]) @ enc.encode([q.question])[0]
        return [turns[i].id for i in np.argsort(-sims, kind="stable")]

    for method, ranked_for, names in (("bm25", bm25, ("Recall@1", "Recall@3", "Recall@5", "MRR@20")),
                                      ("dense", dense, ("Recall@1", "Recall@3", "Recall@5"))):
        got = {m: ev.metrics[method][m] for m in names}
        want = _recount(ranked_for, probes, by_id)
        assert got == pytest.approx({m: want[m] for m in names}, abs=1e-9), method
    for q in probes:  # dense ranks by the cosine recounted here (faiss may order equal cosines either way)
        turns, enc = RE.turns_before(by_id[q.conversation], q.asked_in_session), WordEncoder()
        sims = enc.encode([turn_line(t) for t in turns]) @ enc.encode([q.question])[0]
        got = R.DenseTurnRetriever(turns, enc, k=20).retrieve(q.question).scores
        assert got == pytest.approx(sorted(sims, reverse=True)[:20], abs=1e-5)
    for method, m in ev.metrics.items():
        assert m["questions"] == 12
        for k in (1, 3, 5):
            assert 0.0 <= m[f"Recall@{k}"] <= m[f"Hit@{k}"] <= 1.0, (method, k)
        assert m["Recall@1"] <= m["Recall@3"] <= m["Recall@5"] and m["Hit@1"] <= m["Hit@3"] <= m["Hit@5"], method
        assert m["Hit@1"] <= m["MRR@20"] <= m["Hit@5"] + (1 - m["Hit@5"]) / 6, method  # rank 6+ adds at most 1/6
    # flat's candidates are every edge, G-Long's a subset: on gold triples, where every evidence turn
    # has its own edge, the graph step can only lift evidence into the top 5 by dropping a distractor
    for glong, flat in zip(ev.values("glong", "Recall@5"), ev.values("flat", "Recall@5")):
        assert flat >= glong
    assert ev.metrics["glong"]["Recall@5"] > ev.metrics["dense"]["Recall@5"]  # triples beat raw turns here


def test_unknown_method_is_a_data_error():
    with pytest.raises(DataError):
        RE.make_retrievers(["glong", "colbert"], lambda c, s: None, WordEncoder())


# --------------------------------------------------------------------------- with MiniLM

@pytest.mark.slow
def test_minilm_probe_recall(sample_dir):
    from glong_lib.models import load_encoder

    convs = load_conversations(sample_dir / "conversations")
    probes = load_probes(sample_dir / "probes.jsonl")
    from glong_lib.memory.hash_encoder import HashEncoder

    ev = RE.evaluate_probes(probes, convs, load_encoder(), methods=["glong", "dense"], ks=(1, 5), progress=False)
    # the reference: the same retrieval with vectors that carry no meaning (a hash of the whole string)
    blind = RE.evaluate_probes(probes, convs, HashEncoder(384), methods=["glong", "dense"], ks=(1, 5), progress=False)
    for method in ("glong", "dense"):
        real, chance = ev.metrics[method], blind.metrics[method]
        assert real["Recall@5"] >= real["Recall@1"]
        assert real["Recall@5"] > chance["Recall@5"] + 0.2, (method, real, chance)  # meaning finds evidence


def test_figures(memory):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from glong_lib.viz.retrieval import draw_retrieval, plot_recall_curves, plot_rerank_terms

    trace = R.AssociativeRetriever(memory, settings(k=2), update_access=False).retrieve("Maya denver",
                                                                                         now_s=2000.0).trace
    fig = plot_rerank_terms(trace)
    assert len(fig.axes[0].patches) == 3 * len(trace.pool)  # three stacked terms per candidate
    widths = [p.get_width() for p in fig.axes[0].patches]
    assert sum(widths) == pytest.approx(sum(t.score for t in trace.rerank))
    assert draw_retrieval(memory, trace) is not None
    outward = draw_retrieval(memory, trace, label_outward=True).axes[0]   # every drawn node named once, beside it
    names = [text.get_text() for text in outward.texts]
    assert len(names) == len({n.split("\n")[0] for n in names}) > 0
    assert any(n.split("\n")[1].startswith("anchor ") for n in names if "\n" in n)  # the cosine under an anchor's name
    first = outward.texts[0].get_text().split("\n")[0]  # a nudged name moves; the size follows
    moved = draw_retrieval(memory, trace, label_outward=True, label_size=11, nudge={first: (1.0, -2.0)}).axes[0]
    (x0, y0), (x1, y1) = outward.texts[0].get_position(), moved.texts[0].get_position()
    assert x1 > x0 and y1 < y0 and moved.texts[0].get_fontsize() == 11
    big = draw_retrieval(memory, trace, label_outward=True, label_size=11, clear_hubs=True).axes[0]
    assert sorted(t.get_text() for t in big.texts) == sorted(names)   # the same names, only placed and sized anew
    assert {t.get_fontsize() for t in big.texts} == {11}
    fig2 = plot_recall_curves({"a": {1: 0.2, 3: 0.5}}, paper=RE.PAPER_LME_FIGURE4)
    assert len(fig2.axes[0].lines) == 1 + len(RE.PAPER_LME_FIGURE4)
    assert fig2.axes[0].lines[0].get_marker() == "o" and fig2.axes[0].get_ylabel() == "Recall@k"   # the old look
    fig3 = plot_recall_curves({"a": {1: 0.2, 10: 0.5}, "b": {1: 0.2, 10: 0.5}}, distinct=True, ylabel="Hit@k")
    first, second = fig3.axes[0].lines   # coinciding curves: told apart by marker, style and width
    assert (first.get_marker(), second.get_marker()) == ("*", "o") and first.get_linewidth() > second.get_linewidth()
    assert second.get_linestyle() == "--" and list(fig3.axes[0].get_xticks()) == [1, 10]
    assert fig3.axes[0].get_ylabel() == "Hit@k"
    plt.close("all")


def test_cli_eval_bm25_and_errors(sample_dir, capsys):
    from glong_lib.cli import main

    assert main(["eval-retrieval", "--probes", str(sample_dir / "probes.jsonl"), "--methods", "bm25",
                 "--k", "1,3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metrics"][0]["method"] == "bm25" and out["ks"] == [1, 3]
    assert main(["eval-retrieval", "--probes", "--methods", "bm25", "--k", "0"]) == 2
    assert main(["eval-retrieval", "--probes", "--methods", "colbert"]) == 2
    assert "unknown method" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_query_and_eval(tmp_path, sample_dir, capsys):
    from glong_lib.cli import main
    from glong_lib.models import load_encoder

    conv = load_conversations(sample_dir / "conversations" / "c01.json")[0]
    memory = RE.memory_before(conv, None, load_encoder())
    memory.save(tmp_path / "mem")
    assert main(["query", str(tmp_path / "mem"), "What does Maya do for work?", "--k", "2", "--json",
                 "--trace"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["results"]) == 2 and out["trace"]["sizes"]["final"] == 2
    few = tmp_path / "probes.jsonl"  # the probes of c01 only: enough to check the command end to end
    few.write_text("".join(line for line in (sample_dir / "probes.jsonl").read_text().splitlines(True)
                           if '"c01"' in line))
    assert main(["eval-retrieval", "--probes", str(few), "--methods", "bm25,dense", "--k", "1,3", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert {r["method"] for r in table["metrics"]} == {"bm25", "dense"}
    assert main(["query", str(tmp_path / "nope"), "hi"]) == 2


# --------------------------------------------------------------------------- real data

@pytest.mark.real_data
def test_locomo_turn_baselines(real_data):
    path = real_data / "locomo" / "locomo_dev.json"
    ev = LC.evaluate_locomo(path, WordEncoder(), methods=["bm25", "dense"], ks=(1, 5), conversations=1,
                           max_turns=120, progress=False)
    assert ev.excluded["adversarial (category 5)"] > 0
    assert ev.metrics["bm25"]["questions"] > 0
    assert 0.0 <= ev.metrics["bm25"]["Recall@1"] <= ev.metrics["bm25"]["Recall@5"] <= 1.0
    with pytest.raises(DataError):
        LC.evaluate_locomo(path, WordEncoder(), methods=["glong"], conversations=1, progress=False)


# --------------------------------------------------------------------------- issue 14: pool, dedup, hubs, flat, units

def test_pool_grows_with_k_and_equal_pools_give_prefixes():
    """The pool is exactly max(semantic_top_n, k): k = 1, 3, 5 share the paper's pool of 5 (so their
    lists are prefixes of one another), k = 8 reranks a pool of 8 and returns 8 items."""
    m = graph_memory()
    m.add_triples([T("Ana", "likes", f"thing {i}", f"S1:{i}") for i in range(12)], time_s=0.0)
    r = R.AssociativeRetriever(m, update_access=False)
    assert [r.pool_size(k) for k in (1, 3, 5, 8)] == [5, 5, 5, 8]
    lists = {k: r.retrieve("Ana likes things", now_s=0.0, k=k) for k in (1, 3, 5, 8)}
    assert lists[3].edges == lists[5].edges[:3] and lists[1].edges == lists[5].edges[:1]
    assert len(lists[8].edges) == 8 and len(lists[8].trace.pool) == 8 and len(lists[5].trace.pool) == 5
    depths = RE.ranked_sources(r, "Ana likes things", 0.0, [1, 3, 5, 8])
    assert {k: len(v) for k, v in depths.items()} == {1: 1, 3: 3, 5: 5, 8: 8}


def test_dedup_keeps_the_first_of_a_repeated_fact():
    m = graph_memory()
    first, again, other = m.add_triples([T("Ana", "likes", "tea", "S1:1"), T("Ana", "likes", "tea", "S2:1"),
                                         T("Ana", "likes", "jazz", "S2:2")], time_s=0.0)
    on = R.AssociativeRetriever(m, settings(k=3), update_access=False).retrieve("Ana likes tea", now_s=0.0)
    off = R.AssociativeRetriever(m, settings(k=3, dedup=False), update_access=False).retrieve("Ana likes tea",
                                                                                               now_s=0.0)
    assert set(on.trace.candidates) == {first, other} and set(off.trace.candidates) == {first, again, other}


def test_hub_anchor_is_skipped_for_the_next_entity():
    """"ana" touches 4 of 5 edges (a hub at share 0.5): with hubs="skip" the single anchor becomes the
    nearest non-hub entity, and the candidates shrink from every edge to that entity's edges."""
    m = graph_memory()
    m.add_triples([T("Ana", "likes", "tea", "S1:1"), T("Ana", "plays", "violin", "S1:2"),
                   T("Ana", "visited", "Paris", "S1:3"), T("Ana", "owns", "cat", "S1:4"),
                   T("Bo", "plays", "violin", "S1:5")], time_s=0.0)
    assert R.hub_nodes(m, share=0.5) == {"ana"}
    paper = R.AssociativeRetriever(m, settings(anchors=1), update_access=False).retrieve("Ana", now_s=0.0, k=5)
    skip = R.AssociativeRetriever(m, settings(anchors=1, hubs="skip", hub_share=0.5), update_access=False)
    res = skip.retrieve("Ana", now_s=0.0, k=5)
    assert paper.trace.anchors[0][0] == "ana" and len(paper.trace.candidates) == 4
    assert res.trace.anchors[0][0] != "ana" and len(res.trace.candidates) < 4
    with pytest.raises(DataError):
        R.AssociativeRetriever(m, settings(hubs="cap"))


def test_named_anchors_come_first_and_the_possessive_names_the_entity(memory):
    """"Leo's" names the entity "leo" (at similarity 1, before the nearest entities); without
    ``named`` the anchors are the nearest entities only."""
    plain = R.AssociativeRetriever(memory, settings(anchors=2), update_access=False)
    named = R.AssociativeRetriever(memory, settings(anchors=2, named=True), update_access=False)
    q = "Where does Leo's puppy biscuit come from?"
    anchors = named.retrieve(q, now_s=0.0).trace.anchors
    assert anchors[:2] == [("puppy biscuit", 1.0), ("leo", 1.0)]
    assert len(anchors) <= 4 and len({e for e, _ in anchors}) == len(anchors)
    assert all(s < 1.0 + 1e-6 for _, s in plain.retrieve(q, now_s=0.0).trace.anchors)


def test_flat_plus_graph_pool_keeps_the_flat_pool_and_adds_graph_candidates(memory):
    """pool="flat+graph": the flat retriever's pool is inside G-Long's pool, and every extra
    candidate is marked "graph" in the trace; so the rerank can only gain candidates."""
    q = "Which mountains are near the city Maya moved to?"
    base = settings(anchors=1, semantic_top_n=2, k=2, lam=0.0)
    flat = R.FlatEdgeRetriever(memory, base, update_access=False).retrieve(q, now_s=0.0)
    both = R.AssociativeRetriever(memory, replace(base, pool="flat+graph"), update_access=False).retrieve(q, now_s=0.0)
    assert flat.trace.pool == both.trace.pool[:len(flat.trace.pool)]
    extra = both.trace.pool[len(flat.trace.pool):]
    assert [e for e, how in both.trace.added if how == "graph"] == extra
    assert set(both.edges) <= set(both.trace.pool) and len(both.edges) == 2


def test_bridges_expand_from_the_entities_of_the_first_pool_edges(memory):
    """bridges=1: the second hop starts at the non-anchor entity of the best pool edge ("denver" for a
    question about Maya's move), so "denver near rockies" joins the pool though no anchor touches it."""
    st = settings(anchors=1, semantic_top_n=1, k=2, bridges=1, lam=0.0, hub_share=0.5)  # a hub never bridges
    res = R.AssociativeRetriever(memory, st, update_access=False).retrieve("maya move to", now_s=0.0)
    assert res.trace.anchors[0][0] == "maya" and res.trace.bridges == ["denver"]
    rockies = next(e for e in memory.edge_ids() if memory.edge(e).object == "rockies")
    assert (rockies, "bridge") in res.trace.added and rockies in res.trace.pool
    with pytest.raises(DataError):
        R.AssociativeRetriever(memory, settings(pool="everything"))


def test_flat_retriever_sees_every_edge_and_edge_text_modes():
    m = graph_memory()
    m.add_triples([Triple("Ana", "likes", "tea", speaker="Ana", turn_id="S1:1", source="I love green tea"),
                   Triple("Bo", "plays", "violin", speaker="Bo", turn_id="S1:2")], time_s=0.0)
    flat = R.FlatEdgeRetriever(m, settings(edge_text="source"), update_access=False)
    res = flat.retrieve("violin", now_s=0.0, k=2)
    assert sorted(res.trace.candidates) == sorted(m.edge_ids()) and res.trace.anchors == []
    texts = [R.edge_text(m.edge(e), "source") for e in m.edge_ids()]
    assert texts == ["Ana: I love green tea", "bo plays violin"]  # no source: the triple
    with pytest.raises(DataError):
        R.AssociativeRetriever(m, settings(edge_text="summary"))


LOCOMO_FIXTURE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ana", "speaker_b": "Bo",
        "session_1_date_time": "1:00 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat yesterday."},
                      {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice! I play violin now."},
                      {"speaker": "Ana", "dia_id": "D1:3", "text": "Her name is Miso."}],
        "session_2_date_time": "9:00 am on 20 May, 2023",
        "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "My violin recital went well."}],
    },
    "observation": {
        "session_1_observation": {"Ana": [["Ana adopted a cat named Miso.", ["D1:1", "D1:3"]]],
                                  "Bo": [["Bo has started playing the violin.", "D1:2"]]},
        "session_2_observation": {"Bo": [["Bo had a violin recital that went well.", "D2:1"]]},
    },
    "qa": [{"question": "What is the name of Ana's cat?", "answer": "Miso", "evidence": ["D1:3"], "category": 4},
           {"question": "What instrument does Bo play?", "answer": "violin", "evidence": ["D1:2", "D2:1"],
            "category": 1}],
}


def test_observation_units_and_their_evidence(tmp_path):
    """The observation loader on a project-written LoCoMo-shaped file: one unit per sentence, ids
    naming their source turns, the dialogue's sessions and clock; dense over the units finds the
    fact, and a two-turn fact counts for both of its turns."""
    from glong_lib.loaders import load_locomo, load_locomo_observations, source_turns

    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([LOCOMO_FIXTURE]))
    units = load_locomo_observations(path)[0]
    dialogue = load_locomo(path)[0][0]
    assert [u.id for u in units.turns()] == ["D1:1+D1:3", "D1:2", "D2:1"]
    assert [u.speaker for u in units.turns()] == ["Ana", "Bo", "Bo"]
    assert source_turns(units.turns()[0].id) == ["D1:1", "D1:3"]
    assert units.sessions[1].start_s == dialogue.sessions[1].start_s
    ev = RE.evaluate_evidence({"dense": R.DenseTurnRetriever(units.turns(), WordEncoder(), k=1)},
                              load_locomo(path)[1], [units], ks=(1,), progress=False)
    assert ev.metrics["dense"]["Hit@1"] == 1.0  # "name ... cat" finds the Miso fact, which stands for D1:3
    bad = dict(LOCOMO_FIXTURE, observation={"session_1_observation": {"Ana": [["no id"]]}})
    path.write_text(json.dumps([bad]))
    with pytest.raises(DataError, match="sample 1, session_1_observation"):
        load_locomo_observations(path)


def test_locomo_units_cut_and_memory_source(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([LOCOMO_FIXTURE]))
    dialogues, units, questions, excluded = LC.locomo_units(path, "observations", max_turns=3)
    assert [u.id for u in units[0].turns()] == ["D1:1+D1:3", "D1:2"]  # D2:1 is past the cut
    assert [q.answer for q in questions] == ["Miso"] and sum(excluded.values()) == 1
    with pytest.raises(DataError):
        LC.locomo_units(path, "summaries")


def test_dedup_by_source_text_and_merging_runs(tmp_path):
    """Embedded as their sentence, two triples of one sentence are one candidate (they would
    otherwise take two of the k slots with one fact); runs over the same questions merge."""
    m = graph_memory()
    said = "I adopted a cat and a dog"
    a, b = m.add_triples([Triple("Ana", "adopted", "cat", speaker="Ana", turn_id="S1:1", source=said),
                          Triple("Ana", "adopted", "dog", speaker="Ana", turn_id="S1:1", source=said)], 0.0)
    assert R.dedup_edges(m, [a, b], "triple") == [a, b] and R.dedup_edges(m, [a, b], "source") == [a]
    conv = Conversation("c", ["A"], [Session(1, [Turn("S1:1", "A", "x"), Turn("S1:2", "A", "y")])])
    conv.assign_clock()
    qs = [QA("c", "q", "a", ["S1:2"], "single-hop", id="q1")]
    one = RE.evaluate_evidence({"a": Fixed(["S1:2"])}, qs, [conv], ks=(1,), progress=False)
    two = RE.evaluate_evidence({"b": Fixed(["S1:1"])}, qs, [conv], ks=(1,), progress=False)
    both = RE.merge_evaluations(one, two)
    assert both.compare("a", "b", "Hit@1")["mean_diff"] == 1.0
    with pytest.raises(DataError):
        RE.merge_evaluations(one, one)


def test_answer_coverage_counts_what_triples_keep():
    from glong_lib.evaluation.locomo import answer_coverage

    conv = Conversation("c", ["Ana"], [Session(1, [Turn("D1:1", "Ana", "My cat is called Miso"),
                                                   Turn("D1:2", "Ana", "I play the violin")])])
    qs = [QA("c", "cat's name?", "Miso", ["D1:1"], "single-hop"),
          QA("c", "instrument?", "violin", ["D1:2"], "single-hop")]
    triples = {"c": [Triple("Ana", "have_pet", "cat", turn_id="D1:1"), Triple("Ana", "play", "violin", turn_id="D1:2")]}
    assert answer_coverage(qs, [conv], triples) == {"evidence turns": 2, "units": 1.0, "triples": 0.5,
                                                    "triples + date": 0.5}
    # a "when" answer is held by the date the memory stores on the edge, resolved from "yesterday"
    dated = Conversation("d", ["Ana"], [Session(1, [Turn("D1:1", "Ana", "I ran a 10k yesterday")],
                                                date="2023-05-08T13:56:00")])
    when = [QA("d", "When did Ana run a 10k?", "7 May 2023", ["D1:1"], "temporal")]
    ran = {"d": [Triple("Ana", "did", "10k", turn_id="D1:1", source="I ran a 10k yesterday")]}
    assert answer_coverage(when, [dated], ran) == {"evidence turns": 1, "units": 0.0, "triples": 0.0,
                                                   "triples + date": 1.0}


def test_wins_and_losses_are_counted_per_question():
    from glong_lib.evaluation.retrieval import EvidenceEvaluation

    rows = [{"method": m, "question": q, "category": c, "Hit@5": v} for m, q, c, v in [
        ("g", "q1", "multi-hop", 1), ("f", "q1", "multi-hop", 0),
        ("g", "q2", "temporal", 0), ("f", "q2", "temporal", 1),
        ("g", "q3", "temporal", 0), ("f", "q3", "temporal", 1), ("g", "q4", "temporal", 1), ("f", "q4", "temporal", 1)]]
    ev = EvidenceEvaluation({}, rows, (5,))
    assert ev.wins_losses("g", "f", "Hit@5") == {"wins": ["q1"], "losses": ["q2", "q3"]}
    assert ev.wins_losses("g", "f", "Hit@5", "temporal") == {"wins": [], "losses": ["q2", "q3"]}
    with pytest.raises(DataError, match="same questions"):
        EvidenceEvaluation({}, rows[:-1], (5,)).wins_losses("g", "f", "Hit@5")


def test_flat_top_equals_a_stable_sort_of_every_deduplicated_edge():
    """The fast flat pool (one matrix-vector product, a partial sort, cached dedup) keeps exactly what
    dedup_edges over every edge and a stable sort keep, repeats and tied scores included, and follows
    the memory when it grows."""
    from glong_lib.memory import GraphMemory, HashEncoder
    from glong_lib.retrieval.graph import AssociativeRetriever, dedup_edges
    from glong_lib.schema import Triple
    from glong_lib.vectors import unit_vectors

    rng = np.random.default_rng(0)
    words = ["tea", "jazz", "dog", "paris", "cat", "rain"]
    mem = GraphMemory(encoder=HashEncoder(dim=16))
    triples = [Triple(f"p{rng.integers(4)}", "like", words[rng.integers(len(words))]) for _ in range(60)]
    mem.add_triples(triples, 0.0, 1)                         # many repeats of one text: dedup and ties matter
    r = AssociativeRetriever(mem, update_access=False)

    def brute(q, n):
        eids = dedup_edges(mem, mem.edge_ids())
        sims = np.maximum(r.cache.get(eids) @ q, 0.0)
        order = np.argsort(-sims, kind="stable")[:n]
        return [eids[i] for i in order], [float(sims[i]) for i in order]

    for text in ("tea", "p1 like dog", "rain in paris"):
        q = unit_vectors(mem.encoder, [text])[0]
        for n in (1, 5, 24, 500):
            got, want = r.flat_top(q, n), brute(q, n)
            assert got[0] == want[0] and np.allclose(got[1], want[1])
    mem.add_triples([Triple("p9", "like", "opera")], 0.0, 2)
    q = unit_vectors(mem.encoder, ["opera"])[0]
    got, want = r.flat_top(q, 3), brute(q, 3)
    assert got[0] == want[0] and mem.edge_ids()[-1] in r.flat_top(q, 500)[0]   # the new edge is ranked


def test_compare_can_resample_whole_conversations():
    from glong_lib.evaluation.retrieval import EvidenceEvaluation

    rows = []
    for i in range(24):
        conv = f"c{i % 8}"
        base = {"question": f"q{i}", "category": "x", "conversation": conv}
        rows += [{**base, "method": "g", "MRR@20": float(i % 8 < 3)}, {**base, "method": "f", "MRR@20": 0.0}]
    ev = EvidenceEvaluation({}, rows, (5,))
    flat, clustered = ev.compare("g", "f", "MRR@20"), ev.compare("g", "f", "MRR@20", by_conversation=True)
    assert flat["mean_diff"] == clustered["mean_diff"] == pytest.approx(9 / 24)
    assert clustered["n_groups"] == 8 and flat["n_groups"] is None
    # a conversation's questions agree with each other here, so resampling conversations widens the interval
    assert clustered["ci_high"] - clustered["ci_low"] > flat["ci_high"] - flat["ci_low"]
