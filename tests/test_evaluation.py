"""Evaluation: metric values against hand-computed and published references, the runner's turn
order and context handling, token and cost accounting, sampling, the CLI."""

from __future__ import annotations

import json
import math

import pytest

from glong_lib.agent import Agent, AgentReply, BM25RAGAgent, NoHistoryAgent
from glong_lib.errors import DataError
from glong_lib.evaluation.metrics import bleu_scores, rouge_l, tokenize
from glong_lib.evaluation.msc import (
    GPT4O_MINI,
    PriceTable,
    cost_usd,
    reduction,
    run_msc_evaluation,
    sample_conversations,
    session_queries,
)
from glong_lib.generation import MemoryEchoGenerator
from glong_lib.loaders import load_conversations, load_msc_jsonl
from glong_lib.schema import Conversation, Session, Turn

# --------------------------------------------------------------------------- metrics


def test_bleu_by_hand():
    # hyp "the cat sat on the mat" vs ref "the cat is on the mat": matches 5/6, 3/5, 1/4, 0/3; BP = 1
    s = bleu_scores("The cat sat on the mat.", "the cat is on the mat .")
    assert s["b1"] == pytest.approx(6 / 7)  # lower-cased; "." is a token of both and matches
    plain = bleu_scores("the cat sat on the mat", "the cat is on the mat")
    assert plain["b1"] == pytest.approx(5 / 6)
    assert plain["b2"] == pytest.approx(math.sqrt(5 / 6 * 3 / 5))
    assert plain["b3"] == pytest.approx((5 / 6 * 3 / 5 * 1 / 4) ** (1 / 3))
    # method1 smoothing: the empty 4-gram order counts 0.1 matches out of 3
    assert plain["b4"] == pytest.approx((5 / 6 * 3 / 5 * 1 / 4 * 0.1 / 3) ** (1 / 4))


def test_bleu_brevity_penalty_by_hand():
    s = bleu_scores("the cat", "the cat sat on the mat")
    assert s["b1"] == pytest.approx(math.exp(1 - 6 / 2))  # all precisions 1; BP = exp(1 - r/c)
    assert s["b2"] == pytest.approx(math.exp(-2))


def test_bleu_published_nltk_example():
    # NLTK's documented sentence_bleu example (nltk.translate.bleu_score docstring): 0.5045...
    hyp = ("It is a guide to action which ensures that the military always obeys the commands of the party")
    refs = ["It is a guide to action that ensures that the military will forever heed Party commands",
            "It is the guiding principle which guarantees the military forces always being under the command "
            "of the Party",
            "It is the practical guide for the army always to heed the directions of the party"]
    assert bleu_scores(hyp, refs, lowercase=False)["b4"] == pytest.approx(0.5045666840058485, abs=1e-9)


def test_rouge_l_by_hand_and_published_example():
    assert rouge_l("the cat sat on the mat", "the cat is on the mat") == pytest.approx(5 / 6)
    assert rouge_l("the cat", "the cat sat on the mat") == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))
    # rouge_score's README example: rougeL P = 0.625, R = 0.5556, F = 0.5882
    got = rouge_l("The quick brown dog jumps on the log.", "The quick brown fox jumps over the lazy dog")
    assert got == pytest.approx(0.5882352941176471)


def test_empty_replies_score_zero():
    assert bleu_scores("", "hello there") == {"b1": 0.0, "b2": 0.0, "b3": 0.0, "b4": 0.0}
    assert rouge_l("", "hello there") == 0.0


def test_tokenize():
    assert tokenize("Hi, LEO!") == ["hi", ",", "leo", "!"]
    assert tokenize("Hi", lowercase=False) == ["Hi"]


def test_cost_and_reduction_reproduce_table_6():
    assert round(1000 * cost_usd(10380, 0), 2) == 1.56  # G-Long, MSC
    assert round(1000 * cost_usd(13412 + 10144, 4481), 2) == 6.22  # LD-Agent, CC
    assert cost_usd(1_000_000, 1_000_000, PriceTable(1.0, 2.0, "x")) == pytest.approx(3.0)
    assert reduction(10380, 28058) == pytest.approx(0.63006, abs=1e-5)
    with pytest.raises(DataError):
        reduction(1, 0)


# --------------------------------------------------------------------------- selection and turn order

def test_sampling_is_deterministic_and_ordered():
    convs = [Conversation(str(i), ["A", "B"], []) for i in range(50)]
    a = sample_conversations(convs, 5, seed=7)
    assert [c.id for c in a] == [c.id for c in sample_conversations(convs, 5, seed=7)]
    assert [c.id for c in a] != [c.id for c in sample_conversations(convs, 5, seed=8)]
    assert [int(c.id) for c in a] == sorted(int(c.id) for c in a)
    assert len(sample_conversations(convs, None)) == 50 and len(sample_conversations(convs, 99)) == 50
    with pytest.raises(DataError):
        sample_conversations(convs, 0)


def test_session_queries_skip_turns_the_agent_does_not_answer():
    s = Session(2, [Turn("1", "U", "a"), Turn("2", "U", "b"), Turn("3", "A", "c"), Turn("4", "A", "d"),
                    Turn("5", "U", "e"), Turn("6", "A", "f"), Turn("7", "U", "g")])
    qs = session_queries(s, "U", "A")
    assert [(q.query.id, q.reference.id) for q in qs] == [("2", "3"), ("5", "6")]
    assert [t.id for t in qs[1].context] == ["1", "2", "3", "4"]
    assert len(session_queries(s, "U", "A", limit=1)) == 1
    carried = session_queries(s, "U", "A", history=[Turn("0", "U", "old")])
    assert [t.id for t in carried[0].context] == ["0", "1"]


# --------------------------------------------------------------------------- the runner

class RecordingAgent(Agent):
    """Logs every call; answers with a fixed reply and fixed token counts."""

    name = "recorder"

    def __init__(self, reply="hello there", prompt=100, completion=5, maintenance=(0, 0)):
        super().__init__(generator=None)
        self.log, self.reply, self.prompt, self.completion = [], reply, prompt, completion
        self.maintenance = maintenance

    def reset(self):
        self.log.append(("start", self.user_name, self.agent_name))

    def observe_session(self, session, conversation):
        self.log.append(("observe", session.index))
        self.memory_prompt_tokens += self.maintenance[0]
        self.memory_completion_tokens += self.maintenance[1]

    def respond(self, utterance, context, now_s):
        self.log.append(("respond", utterance, [getattr(t, "id", t) for t in context], now_s))
        return AgentReply(self.reply, self.prompt, self.completion)


def _two_conversations():
    convs = []
    for cid in ("x", "y"):
        sessions = [Session(i, [Turn(f"S{i}:{j}", "U" if j % 2 else "A", f"{cid} s{i} t{j}") for j in range(1, 5)],
                            seconds_since_previous=None if i == 1 else 3600) for i in (1, 2, 3)]
        conv = Conversation(cid, ["U", "A"], sessions)
        conv.assign_clock()
        convs.append(conv)
    return convs


def test_runner_turn_order_context_and_memory_updates():
    convs = _two_conversations()
    agent = RecordingAgent()
    res = run_msc_evaluation({"rec": agent}, convs[:1], progress=False)
    log = agent.log
    assert log[0] == ("start", "U", "A")
    assert log[1] == ("observe", 1)  # session 1 only fills memory
    # session 2: queries are the user turns; the gold agent turns enter the context
    assert log[2][:3] == ("respond", "x s2 t1", [])
    assert log[3][:3] == ("respond", "x s2 t3", ["S2:1", "S2:2"])
    assert log[2][3] == convs[0].sessions[1].turns[0].time_s  # the conversation clock
    assert log[4] == ("observe", 2)  # memory updated after the session, before the next
    assert [e[0] for e in log[5:]] == ["respond", "respond"]  # no update after the last session
    assert log[6][2] == ["S3:1", "S3:2"]  # the context restarts each session (C_current)
    assert [r["reference"] for r in res.records] == ["x s2 t2", "x s2 t4", "x s3 t2", "x s3 t4"]
    assert [r["context_turns"] for r in res.records] == [0, 2, 0, 2]
    assert {r["session"] for r in res.records} == {2, 3}


def test_runner_dialogue_scope_carries_earlier_evaluated_sessions():
    convs = _two_conversations()
    agent = RecordingAgent()
    run_msc_evaluation({"rec": agent}, convs[:1], context_scope="dialogue", progress=False)
    responds = [e for e in agent.log if e[0] == "respond"]
    assert responds[2][2] == ["S2:1", "S2:2", "S2:3", "S2:4"]  # session 3 still sees session 2
    with pytest.raises(DataError):
        run_msc_evaluation({"rec": agent}, convs, context_scope="week", progress=False)


def test_runner_limits_and_token_cost_accounting():
    convs = _two_conversations()
    agents = {"a": RecordingAgent(prompt=100, completion=5), "b": RecordingAgent(prompt=40, completion=5,
                                                                                   maintenance=(1000, 200))}
    res = run_msc_evaluation(agents, convs, turns_per_session=1, progress=False)
    assert len(res.records) == 2 * 2 * 2  # methods x conversations x (1 query in sessions 2 and 3)
    rows = {r["method"]: r for r in res.tokens()}
    assert rows["a"]["prompt tokens / reply"] == 100 and rows["a"]["completion tokens / reply"] == 5
    assert rows["a"]["Main (tokens / conv.)"] == 200  # 2 replies of 100 tokens per conversation
    # "b": 2 observe calls per conversation (after sessions 1 and 2), each 1000 in / 200 out
    assert rows["b"]["Memory input"] == 2000 and rows["b"]["Memory gen."] == 400
    assert rows["a"]["Total cost ($/1K conv.)"] == pytest.approx(round(1000 * 200 * 0.15e-6, 3))
    expected_b = 1000 * ((80 + 2000) * 0.15e-6 + 400 * 0.60e-6)
    assert rows["b"]["Total cost ($/1K conv.)"] == pytest.approx(round(expected_b, 3))
    assert rows["a"]["with replies ($/1K conv.)"] == pytest.approx(round(1000 * (200 * 0.15e-6 + 10 * 0.6e-6), 3))
    assert res.same_memories("a", "b") == 1.0  # neither puts memories in its prompt
    cmp = res.compare("b", "a")
    assert cmp["prompt-token reduction"] == pytest.approx(0.6)
    assert cmp["b2"]["diff mean"] == 0.0 and cmp["conversations"] == 2
    assert res.price == GPT4O_MINI


def test_results_tables_average_turns_then_sessions_then_conversations():
    convs = _two_conversations()

    class Scripted(RecordingAgent):
        def respond(self, utterance, context, now_s):  # exact copy of the reference in session 2 only
            exact = "s2" in utterance
            return AgentReply(utterance.replace("t1", "t2").replace("t3", "t4") if exact else "zzz", 1, 1)

    res = run_msc_evaluation({"s": Scripted()}, convs, progress=False)
    per = {r["session"]: r for r in res.per_session()}
    assert per[2]["rougeL"] == pytest.approx(100.0) and per[3]["rougeL"] == 0.0
    (summary,) = res.summary()
    assert summary["rougeL"] == pytest.approx(50.0) and summary["replies"] == 8
    table = res.table1()[0]
    assert table["S2 R-L"] == 100.0 and table["Avg R-L"] == 50.0
    data = json.loads(res.to_json())
    assert set(data) >= {"summary", "per_session", "table1", "tokens", "records"}


def test_runner_rejects_single_session_conversations():
    conv = Conversation("one", ["U", "A"], [Session(1, [Turn("1", "U", "hi")])])
    with pytest.raises(DataError, match="need 2 or more"):
        run_msc_evaluation({"r": RecordingAgent()}, [conv], progress=False)


def test_real_agents_on_the_samples(sample_dir):
    convs = load_conversations(sample_dir / "conversations")[:1]
    g = MemoryEchoGenerator()
    res = run_msc_evaluation({"No history": NoHistoryAgent(g), "BM25 RAG": BM25RAGAgent(g)}, convs,
                             turns_per_session=2, progress=False)
    rows = {r["method"]: r for r in res.tokens()}
    assert rows["BM25 RAG"]["prompt tokens / reply"] > rows["No history"]["prompt tokens / reply"]
    n_eval = len(convs[0].sessions) - 1
    assert len(res.records) == 2 * 2 * n_eval


def test_cli_eval_msc_on_the_samples(sample_dir, capsys):
    from glong_lib.cli import main

    code = main(["eval-msc", "--msc", str(sample_dir / "conversations"), "--conversations", "1",
                 "--turns-per-session", "1", "--generator", "echo", "--methods", "no-history", "bm25-rag",
                 "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in data["summary"]] == ["No history", "BM25 RAG"]
    assert data["settings"]["conversations"] == 1


def test_cli_eval_msc_bad_input(tmp_path, capsys):
    from glong_lib.cli import main

    assert main(["eval-msc", "--msc", str(tmp_path / "missing.jsonl"), "--generator", "echo"]) == 2
    assert "glong eval-msc: error:" in capsys.readouterr().err


@pytest.mark.real_data
def test_real_msc_sessions_two_to_four(real_data):
    convs = sample_conversations(load_msc_jsonl(real_data / "msc" / "msc4_valid.jsonl"), 2, seed=42)
    g = MemoryEchoGenerator()
    res = run_msc_evaluation({"BM25 RAG": BM25RAGAgent(g)}, convs, turns_per_session=1, progress=False)
    assert sorted({r["session"] for r in res.records}) == [2, 3, 4]
    assert all(r["reference"] and r["query"] for r in res.records)


@pytest.mark.slow
def test_end_to_end_with_the_local_model(sample_dir):
    from glong_lib.agent import TripleSource, make_agents
    from glong_lib.generation import LocalChatGenerator

    conv = load_conversations(sample_dir / "conversations")[:1]
    local = LocalChatGenerator(max_new_tokens=4)
    agents = make_agents(local, ["long-context", "glong"], source=TripleSource("gold", score=False))
    res = run_msc_evaluation(agents, conv, turns_per_session=1, max_sessions=2, progress=False)
    assert [r["method"] for r in res.records] == ["Long context", "G-Long"]
    assert all(1 <= r["completion_tokens"] <= 4 for r in res.records)
    # the same prompts counted without generating: exactly the model's prompt tokens
    counter = MemoryEchoGenerator(tokenizer=local.tokenizer)
    dry = run_msc_evaluation(make_agents(counter, ["long-context", "glong"], source=TripleSource("gold", score=False)),
                             conv, turns_per_session=1, max_sessions=2, progress=False)
    assert [r["prompt_tokens"] for r in dry.records] == [r["prompt_tokens"] for r in res.records]
    assert res.compare("G-Long", "Long context")["prompt-token reduction"] > 0


def test_table1_scales_and_paired_comparison():
    """Table 1 defaults to the paper's nlg-eval scale; the smoothed scale is beside it. compare()
    gives a paired interval over conversations and the replies needed for the paper's difference."""
    from glong_lib.evaluation.metrics import score_reply_nlgeval
    from glong_lib.evaluation.msc import paper_difference

    convs = _two_conversations()

    class Exact(RecordingAgent):
        def respond(self, utterance, context, now_s):  # the reference itself
            return AgentReply(utterance.replace("t1", "t2").replace("t3", "t4"), 1, 1)

    class Half(RecordingAgent):
        def respond(self, utterance, context, now_s):  # the reference's first word only
            return AgentReply(utterance.split()[0], 1, 1)

    res = run_msc_evaluation({"exact": Exact(), "half": Half()}, convs, progress=False)
    paper = {r["method"]: r for r in res.table1()}
    smooth = {r["method"]: r for r in res.table1(scale="smoothed")}
    ref = res.records[0]["reference"]
    half = ref.split()[0]
    assert paper["half"]["Avg R-L"] == pytest.approx(round(100 * score_reply_nlgeval(half, ref)["nlg_rougeL"], 2))
    assert paper["exact"]["Avg B-2"] == smooth["exact"]["Avg B-2"] == 100.0
    with pytest.raises(DataError):
        res.table1(scale="bleurt")
    cmp = res.compare("exact", "half")
    c = cmp["nlg_rougeL"]
    assert cmp["conversations"] == 2 and cmp["replies"] == len(res.records) // 2
    assert c["ci low"] <= c["diff mean"] <= c["ci high"] and c["diff mean"] > 0
    assert c["paper difference"] == paper_difference("nlg_rougeL") == 1.09


def test_token_saving_counted_over_every_turn_and_over_the_first_turns():
    """Table 6's saving from one run, two ways: long context's prompt grows through a session (20, 40, 60
    tokens) while G-Long's stays at 10, so over every turn 1 - 30/120 = 0.75 and over the first two
    1 - 20/60 = 0.6667; cost per 1K conversations from the same counts (main tokens x $0.15/M x 1,000)."""
    from glong_lib.evaluation.msc import MSCResults

    rows = [{"method": m, "conversation": "c", "session": 2, "turn_id": f"t{i}", "prompt_tokens": tok,
             "completion_tokens": 1} for m, toks in (("G-Long", (10, 10, 10)), ("Long context", (20, 40, 60)))
            for i, tok in enumerate(toks)]
    every, first = MSCResults(rows, ["G-Long", "Long context"], {}, {}).token_saving("G-Long", "Long context", first=2)
    assert (every["counted over"], every["replies"], every["saving"]) == ("every turn of every scored session", 3, 0.75)
    assert first["counted over"] == "first 2 user turns of each session"
    assert (first["replies"], first["saving"]) == (2, 0.6667)
    assert every["Long context main / conv."] == 120 and every["Long context $ / 1K conv."] == 0.018
    assert first["G-Long tokens / reply"] == 10 and first["Long context tokens / reply"] == 30
    with pytest.raises(DataError):
        MSCResults(rows, ["G-Long"], {}, {}).token_saving("G-Long", "Dense RAG")
