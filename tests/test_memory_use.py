"""The memory-use probe (issue 28): which turns recall an earlier session, and whether a reply says
what the gold reply recalled; hand-built conversations with hand-counted answers."""

from __future__ import annotations

import json

import pytest

from glong_lib.errors import DataError
from glong_lib.evaluation.memory_use import memory_turns, memory_use, recalled_stems, specific_stems, uses_memory
from glong_lib.loaders import load_msc_persona_facts
from glong_lib.schema import Conversation, Session, Turn


def _conv(cid: str, sessions: list[list[str]]) -> Conversation:
    return Conversation(cid, ["U", "A"], [
        Session(i, [Turn(f"S{i}:{j}", "UA"[(j - 1) % 2], text) for j, text in enumerate(texts, start=1)])
        for i, texts in enumerate(sessions, start=1)])


# two conversations; session 2's gold reply (A) recalls "boston" (c1) and "kayak" (c2) from session 1
CONVS = [
    _conv("c1", [["I just moved to Boston.", "Nice, welcome!"], ["Busy week.", "How is Boston treating you?"]]),
    _conv("c2", [["I bought a kayak.", "Fun!"], ["Back again.", "Been out on the kayak?", "Not yet.", "Ok."]]),
]
FACTS = {"c1": {1: ["I live in Boston."], 2: []}, "c2": {1: ["I own a kayak."], 2: []}}


def test_specific_stems_are_rare_words():
    texts = ["I like tea", "I like Boston", "I like cats", "tea again"]
    assert specific_stems(texts, max_share=0.3) == {"boston", "cat", "again"}
    with pytest.raises(DataError):
        specific_stems([])


def test_a_recalled_word_must_be_in_an_earlier_fact_and_not_said_yet():
    facts, specific = ["I live in Boston."], {"boston"}
    assert recalled_stems("How is Boston?", ["Busy week."], facts, specific) == {"boston"}
    assert recalled_stems("How is Boston?", ["Back from Boston!"], facts, specific) == set()  # said this session
    assert recalled_stems("How is Denver?", ["Busy week."], facts, specific) == set()  # not remembered
    assert recalled_stems("How is Boston?", [], facts, set()) == set()  # not specific


def test_memory_turns_find_the_recalling_replies():
    turns = memory_turns(CONVS, FACTS, max_share=0.5)
    # keyed by the user's turn the gold reply answers; session 1 has no earlier session
    assert turns == {("c1", "S2:1"): {"boston"}, ("c2", "S2:1"): {"kayak"}}


def _records(replies: dict[str, tuple[str, str]]) -> list[dict]:
    rows = []
    for method, (r1, r2) in replies.items():
        rows.append({"method": method, "conversation": "c1", "turn_id": "S2:1", "reply": r1,
                     "memories": ["- u live in boston"] if method == "G-Long" else []})
        rows.append({"method": method, "conversation": "c2", "turn_id": "S2:1", "reply": r2,
                     "memories": ["- u own canoe"] if method == "G-Long" else []})
    return rows


def test_memory_use_shares_and_the_paired_difference():
    turns = memory_turns(CONVS, FACTS, max_share=0.5)
    records = _records({"No history": ("Nice.", "Cool."), "G-Long": ("Still in Boston?", "Cool.")})
    rows = {r["method"]: r for r in memory_use(records, turns, ["No history", "G-Long"])}
    assert rows["No history"]["reply uses memory"] == 0 and rows["No history"]["recalled word in memory lines"] is None
    g = rows["G-Long"]
    assert (g["memory turns"], g["conversations"], g["reply uses memory"]) == (2, 2, 0.5)
    assert g["recalled word in memory lines"] == 0.5  # "boston" was shown, "kayak" was not
    assert g["- No history"] == 0.5 and g["diff ci low"] == 0.0 and g["diff ci high"] == 1.0
    assert uses_memory("BOSTON!", {"boston"}) and not uses_memory("", {"boston"})


def test_persona_facts_loader(tmp_path):
    path = tmp_path / "msc.jsonl"
    line = {"id": "x", "sessions": [{"session": 1, "dialog": [
        {"speaker": "Speaker 1", "text": "hi", "persona_text": "I like tea. "},
        {"speaker": "Speaker 2", "text": "yo"}]}, {"session": 2, "dialog": []}]}
    path.write_text(json.dumps(line) + "\n")
    assert load_msc_persona_facts(path) == {"x": {1: ["I like tea."], 2: []}}
    path.write_text('{"id": "x"}\n')
    with pytest.raises(DataError, match="sessions"):
        load_msc_persona_facts(path)


def test_memory_turn_replies_answer_only_the_memory_turns_after_the_earlier_sessions():
    from glong_lib.evaluation.memory_use import memory_turn_replies

    class Echo:  # an agent that replies with what it has observed so far, and records each start
        def __init__(self):
            self.starts, self.seen = [], []

        def start(self, conv):
            self.starts.append(conv.id)
            self.seen = []

        def observe_session(self, session, conv):
            self.seen.append(session.index)

        def respond(self, text, context, now_s):
            class R:
                pass
            r = R()
            r.text, r.memories, r.prompt_tokens = f"seen {self.seen}", [], len(context)
            return r

    turns = {("c2", "S2:1"): frozenset({"kayak"})}   # c1 has no memory turn: it is never started
    agent = Echo()
    rows = memory_turn_replies({"E": agent}, CONVS, turns)
    assert agent.starts == ["c2"]
    assert [(r["method"], r["conversation"], r["turn_id"], r["reply"], r["prompt_tokens"]) for r in rows] == \
        [("E", "c2", "S2:1", "seen [1]", 0)]
    assert memory_use(rows, turns, ["E"])[0]["memory turns"] == 1


def test_flat_triple_agent_is_g_long_without_the_graph_step():
    from glong_lib.agent import FlatTripleAgent, GLongAgent
    from glong_lib.retrieval import AssociativeRetriever, FlatEdgeRetriever

    assert GLongAgent.retriever_class is AssociativeRetriever
    assert FlatTripleAgent.retriever_class is FlatEdgeRetriever and issubclass(FlatEdgeRetriever, AssociativeRetriever)
    assert FlatTripleAgent(None).name == "Flat triples"


def test_drop_name_only_leaves_out_turns_that_recall_only_a_speakers_name():
    conv = Conversation("c3", ["Kwame", "A"], [
        Session(1, [Turn("S1:1", "Kwame", "Hello there."), Turn("S1:2", "A", "Hi!")]),
        Session(2, [Turn("S2:1", "Kwame", "Busy week."), Turn("S2:2", "A", "Good to see you, Kwame.")])])
    facts = {"c3": {1: ["Kwame likes tea."], 2: []}}
    assert memory_turns([conv], facts, max_share=0.5) == {("c3", "S2:1"): {"kwame"}}  # the default keeps it
    assert memory_turns([conv], facts, max_share=0.5, drop_name_only=True) == {}
    # a turn that recalls a fact word is kept
    assert memory_turns(CONVS, FACTS, max_share=0.5, drop_name_only=True) == memory_turns(CONVS, FACTS, max_share=0.5)
