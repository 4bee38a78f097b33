"""Agents: what each puts in <CONTEXT> and <MEMORY>, memory updates, token accounting.

The fast tests use ``MemoryEchoGenerator`` (model-free: replies with the first memory line,
counts words) and ``memory.HashEncoder`` (a deterministic hashing encoder), so every agent runs
its real retrieval and prompt code in milliseconds.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from glong_lib.agent import (
    AGENT_METHODS as METHODS,
)
from glong_lib.agent import (
    BM25RAGAgent,
    DenseRAGAgent,
    GLongAgent,
    LongContextAgent,
    NoHistoryAgent,
    TripleSource,
    make_agents,
)
from glong_lib.config import PAPER_RETRIEVAL
from glong_lib.errors import DataError
from glong_lib.generation import NO_MEMORIES, MemoryEchoGenerator
from glong_lib.loaders import load_conversation
from glong_lib.memory import HashEncoder
from glong_lib.schema import Conversation, Session, Triple, Turn


def _conv():
    s1 = Session(1, [Turn("S1:1", "Maya", "I adopted a cat named Miso.", [Triple("Maya", "has_pet", "cat Miso")]),
                     Turn("S1:2", "Leo", "I teach fifth grade in Beaverton.",
                          [Triple("Leo", "has_profession", "teacher")]),
                     Turn("S1:3", "Maya", "I work night shifts at the hospital.",
                          [Triple("Maya", "works_at", "hospital")]),
                     Turn("S1:4", "Leo", "Nights sound brutal.")])
    s2 = Session(2, [Turn("S2:1", "Maya", "Miso the cat knocked my coffee over."),
                     Turn("S2:2", "Leo", "Classic cat behaviour!")], seconds_since_previous=86400)
    conv = Conversation("t1", ["Maya", "Leo"], [s1, s2])
    conv.assign_clock()
    return conv


def _user_content(reply):
    return reply.messages[-1]["content"]


def test_no_history_sees_only_the_utterance():
    conv = _conv()
    agent = NoHistoryAgent(MemoryEchoGenerator())
    agent.start(conv)
    agent.observe_session(conv.sessions[0], conv)
    reply = agent.respond("Miso is back!", conv.sessions[1].turns[:0] + ["Maya: earlier line"], 100.0)
    content = _user_content(reply)
    assert "earlier line" not in content and NO_MEMORIES in content and reply.memories == []
    assert (agent.agent_name, agent.user_name) == ("Leo", "Maya")
    with_ctx = NoHistoryAgent(MemoryEchoGenerator(), include_context=True)
    with_ctx.start(conv)
    assert "earlier line" in _user_content(with_ctx.respond("Miso!", ["Maya: earlier line"], 0.0))


def test_long_context_holds_every_past_session_and_drops_oldest_to_fit():
    conv = _conv()
    agent = LongContextAgent(MemoryEchoGenerator())
    agent.start(conv)
    agent.observe_session(conv.sessions[0], conv)
    reply = agent.respond("Hi again", [], conv.sessions[1].start_s)
    content = _user_content(reply)
    for turn in conv.sessions[0].turns:
        assert f"{turn.speaker}: {turn.text}" in content
    assert reply.dropped_context_lines == 0
    # an emulated small window: whole lines drop from the oldest end, the instruction stays
    small = LongContextAgent(MemoryEchoGenerator(), max_context_tokens=reply.prompt_tokens - 8)
    small.start(conv)
    small.observe_session(conv.sessions[0], conv)
    cut = small.respond("Hi again", [], 0.0)
    assert cut.dropped_context_lines >= 1 and cut.prompt_tokens <= reply.prompt_tokens - 8
    assert "[Session 1]" not in _user_content(cut) and _user_content(cut).endswith("Maya's statement:")
    small.start(conv)  # a new conversation forgets the old history
    assert small.history == []
    # a context carried over from earlier sessions (context_scope="dialogue") is not repeated
    agent.observe_session(conv.sessions[1], conv)
    again = agent.respond("Hi", conv.sessions[0].turns + conv.sessions[1].turns, 0.0)
    assert _user_content(again).count("Maya: I adopted a cat named Miso.") == 1


def test_bm25_rag_retrieves_past_turns_only():
    conv = _conv()
    agent = BM25RAGAgent(MemoryEchoGenerator(), k=2)
    agent.start(conv)
    assert agent.respond("cat", [], 0.0).memories == []  # nothing observed yet
    agent.observe_session(conv.sessions[0], conv)
    reply = agent.respond("my cat Miso", [], conv.sessions[1].start_s)
    assert reply.memories[0] == "Maya: I adopted a cat named Miso." and len(reply.memories) == 2
    assert reply.text == reply.memories[0]  # the echo generator answers with the top memory


def test_dense_rag_uses_the_encoder():
    conv = _conv()
    agent = DenseRAGAgent(MemoryEchoGenerator(), encoder=HashEncoder(), k=1)
    agent.start(conv)
    agent.observe_session(conv.sessions[0], conv)
    # HashEncoder has no semantics: only the identical text is near, which pins the expected turn
    reply = agent.respond("Maya: I work night shifts at the hospital.", [], 0.0)
    assert reply.memories == ["Maya: I work night shifts at the hospital."]


def test_glong_agent_observes_inserts_and_retrieves_triples():
    conv = _conv()
    agent = GLongAgent(MemoryEchoGenerator(), TripleSource("gold", score=False), encoder=HashEncoder())
    agent.start(conv)
    assert agent.respond("cat", [], 0.0).memories == []  # empty memory: "No relevant Memories."
    agent.observe_session(conv.sessions[0], conv)
    assert len(agent.memory.edge_ids()) == 3
    now = conv.sessions[1].turns[0].time_s
    reply = agent.respond("How is your cat Miso?", ["Maya: hello"], now)
    # the paper's 5 anchors reach all 5 entities, so every edge is a candidate and K = 3 of 3 come back
    assert len(reply.memories) == 3 and all("->" in m for m in reply.memories)
    assert any("miso" in m.lower() for m in reply.memories)
    # retrieval touched the returned edges on the conversation clock
    touched = [agent.memory.edge(e) for e in agent.last_result.edges]
    assert all(e.last_access_s == now for e in touched)
    assert agent.memory_prompt_tokens == 0 and agent.memory_completion_tokens == 0
    assert "Maya: hello" in _user_content(reply)  # the current session is the context


def test_glong_ranked_format_labels_creation_time():
    conv = _conv()
    agent = GLongAgent(MemoryEchoGenerator(), TripleSource("gold", score=False), encoder=HashEncoder(),
                       settings=replace(PAPER_RETRIEVAL, k=1), memory_format="ranked")
    agent.start(conv)
    agent.observe_session(conv.sessions[0], conv)
    now = conv.sessions[0].turns[0].time_s + 2 * 86400
    (line,) = agent.respond("cat Miso", [], now).memories
    assert line.startswith("[Rank 1] (Active 2.0 days 0.0 hours 0.0 minutes ago)")


def test_triple_source_caches_per_session_and_rejects_unknown_modes():
    conv = _conv()
    source = TripleSource("gold", score=False)
    first = source.session_triples(conv, conv.sessions[0])
    assert [t.turn_id for t in first] == ["S1:1", "S1:2", "S1:3"] and first[0].speaker == "Maya"
    assert source.session_triples(conv, conv.sessions[0]) is first
    with pytest.raises(DataError):
        TripleSource("oracle")


def test_make_agents_names_and_ablation_betas():
    agents = make_agents(MemoryEchoGenerator(), source=TripleSource("gold", score=False), encoder=HashEncoder())
    assert list(agents) == ["No history", "Long context", "Dense RAG", "BM25 RAG", "G-Long",
                            "G-Long w/o importance", "G-Long w/o recency"]
    assert agents["G-Long"].settings.betas == (0.5, 0.3, 0.2)
    assert agents["G-Long w/o importance"].settings.betas == (0.5, 0.0, 0.2)
    assert agents["G-Long w/o recency"].settings.betas == (0.5, 0.3, 0.0)
    assert agents["G-Long"].source is agents["G-Long w/o recency"].source  # one extraction pass
    with pytest.raises(DataError):
        make_agents(MemoryEchoGenerator(), methods=["memorybank"])
    assert len(METHODS) == 7


def test_no_rerank_ablation_feeds_the_semantic_top_five(sample_dir):
    """The paper's Table 14: the semantic pool of 5 in its semantic order, all 5 in the prompt."""
    from glong_lib.retrieval import AssociativeRetriever

    agents = make_agents(MemoryEchoGenerator(), ["glong", "glong-no-rerank"],
                         source=TripleSource("gold", score=False), encoder=HashEncoder())
    plain = agents["No rerank (top-5)"]
    assert plain.settings.k == 5 and plain.settings.rerank is False
    conv = load_conversation(sample_dir / "conversations" / "c01.json")
    plain.start(conv)
    plain.observe_session(conv.sessions[0], conv)
    plain.observe_session(conv.sessions[1], conv)
    now = conv.sessions[2].start_s
    res = plain.retriever.retrieve("Maya's work at the hospital", now, k=5)
    assert res.edges == res.trace.pool[:5]  # the semantic order, untouched by Eq. 4
    ranked = AssociativeRetriever(plain.memory, update_access=False).retrieve("Maya's work at the hospital", now, k=5)
    assert sorted(ranked.edges) == sorted(res.edges)  # the same pool, reordered by Eq. 4


def test_glong_on_a_sample_conversation(sample_dir):
    conv = load_conversation(sample_dir / "conversations" / "c01.json")
    agent = GLongAgent(MemoryEchoGenerator(), TripleSource("gold", score=False), encoder=HashEncoder())
    agent.start(conv)
    for session in conv.sessions[:2]:
        agent.observe_session(session, conv)
    gold = sum(len(t.triples) for s in conv.sessions[:2] for t in s.turns)
    assert len(agent.memory.edge_ids()) + agent.memory.skipped == gold
    reply = agent.respond(conv.sessions[2].turns[0].text, [], conv.sessions[2].turns[0].time_s)
    assert len(reply.memories) == 3 and reply.prompt_tokens > 0


class _FixedScorer:
    """Raw Eq. 2 scores chosen by hand: session 1's triples score 2.0 and 1.0, session 2's 0.5 and 0.25."""

    def score(self, triples, turns=None):
        from types import SimpleNamespace

        import numpy as np

        table = {"s1a": 2.0, "s1b": 1.0, "s2a": 0.5, "s2b": 0.25}
        return SimpleNamespace(raw=np.array([table[t.object] for t in triples]))


def _two_sessions() -> Conversation:
    def turn(i, obj):
        return Turn(f"S{i}:{obj}", "Maya", f"fact {obj}", [Triple("Maya", "like", obj)])
    return Conversation("two", ["Maya", "Leo"], [Session(1, [turn(1, "s1a"), turn(1, "s1b")]),
                                                 Session(2, [turn(2, "s2a"), turn(2, "s2b")])])


@pytest.mark.parametrize("scope, second", [("session", [1.0, 0.5]), ("dialogue", [0.25, 0.125])])
def test_triple_source_scopes_differ_where_they_must(scope, second):
    """Eq. 3 over the session (paper) vs over every session seen so far (reference code): the
    second session's weights are 0.5/0.5, 0.25/0.5 under one and 0.5/2, 0.25/2 under the other."""
    conv = _two_sessions()
    source = TripleSource("gold", scorer=_FixedScorer(), scope=scope)
    first = [t.weight for t in source.session_triples(conv, conv.sessions[0])]
    assert first == [1.0, 0.5]
    assert [t.weight for t in source.session_triples(conv, conv.sessions[1])] == second
    with pytest.raises(DataError, match="unknown scope"):
        TripleSource("gold", scope="week")


def test_summary_memory_counts_the_generators_memory_tokens_and_retrieves_summaries():
    """The MemoryBank/LD-Agent-style baseline: one summary per session, written by the generator
    (so its tokens are memory cost, Table 6), retrieved as "Session N summary: ..." lines."""
    from glong_lib.agent import SummaryMemoryAgent, summary_messages

    conv = _conv()
    gen = MemoryEchoGenerator(fallback="Maya has a cat named Miso.")
    agent = SummaryMemoryAgent(gen, encoder=HashEncoder(), k=3)
    agent.start(conv)
    assert agent.respond("Hi", [], 0.0).memories == []  # nothing observed yet
    agent.observe_session(conv.sessions[0], conv)
    expected_in = gen.count_tokens(summary_messages(conv.sessions[0], "Maya", "Leo"))
    assert agent.memory_prompt_tokens == expected_in > 0
    assert agent.memory_completion_tokens == len("Maya has a cat named Miso.".split())
    reply = agent.respond("How is Miso?", conv.sessions[1].turns[:1], conv.sessions[1].start_s)
    assert reply.memories == ["Session 1 summary: Maya has a cat named Miso."]
    assert "Maya: I adopted a cat named Miso." in summary_messages(conv.sessions[0], "Maya", "Leo")[1]["content"]
    agent.start(conv)  # a new conversation forgets the summaries, the token counters keep adding
    assert agent.summaries == [] and agent.turns == []


def test_extra_methods_hops_two_and_whole_replies_for_models_that_end_their_turn():
    agents = make_agents(MemoryEchoGenerator(), ["glong", "glong-hops2", "summary-memory"],
                         source=TripleSource("gold", score=False), encoder=HashEncoder())
    assert list(agents) == ["G-Long", "G-Long L=2", "Summary memory"]
    assert agents["G-Long L=2"].settings.hops == 2 and agents["G-Long"].settings.hops == 1

    class TwoLines(MemoryEchoGenerator):
        first_line_only = False

        def generate(self, messages, max_new_tokens=None):
            out = super().generate(messages)
            out.text = "Leo: Nice!\nSee you soon."
            return out

    conv = _conv()
    for generator, expected in ((TwoLines(), "Nice!\nSee you soon."), (MemoryEchoGenerator(), "I see.")):
        agent = NoHistoryAgent(generator)
        agent.start(conv)
        assert agent.respond("Hello", [], 0.0).text == expected
