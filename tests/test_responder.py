"""The MSC responder candidate (its examples and training in generation.responder, its evaluation in
evaluation.responder) and the echo kinds (generation.echo_kind)."""

import json

import pytest

from glong_lib.errors import DataError
from glong_lib.evaluation import responder as R
from glong_lib.generation import ECHO_KINDS, build_prompt, echo_kind, is_prompt_echo
from glong_lib.generation import responder as G
from glong_lib.schema import Conversation, Session, Turn


def _conversation(cid="c1"):
    s1 = Session(1, [Turn("1", "U", "I have a cat named Tom."), Turn("2", "A", "Nice."),
                     Turn("3", "U", "I work at a bakery."), Turn("4", "A", "Fun!")])
    s2 = Session(2, [Turn("5", "U", "Guess what happened?"), Turn("6", "A", "Is Tom ok?"),
                     Turn("7", "U", "He ate bread."), Turn("8", "A", "From the bakery?")])
    return Conversation(cid, ["U", "A"], [s1, s2])


FACTS = {"c1": {1: ["I have a cat named Tom.", "I work at a bakery."], 2: ["My cat eats bread."]}}


def test_examples_take_earlier_sessions_facts_only_ranked_and_capped():
    rank = lambda utterance, facts: sorted(facts, key=lambda f: "bread" not in f and "bakery" not in f)  # noqa: E731
    ex = G.responder_examples([_conversation()], FACTS, rank=rank, memory_lines=1, context_lines=1)
    assert [e["reply"] for e in ex] == ["Is Tom ok?", "From the bakery?"]
    second = ex[1]["messages"][1]["content"].splitlines()
    assert "- I work at a bakery." in second and "- I have a cat named Tom." not in second  # ranked, capped at 1
    assert "- My cat eats bread." not in second      # said in the same session: not a memory yet
    assert second[1] == "A: Is Tom ok?"               # the last context line only
    assert ex[0]["messages"] == build_prompt("A", "U", [], ["I work at a bakery."], "Guess what happened?", "plain")


def test_examples_say_what_the_session_said_and_which_recall_a_memory_line():
    ex = G.responder_examples([_conversation()], FACTS, memory_lines=2)
    assert ex[1]["present"] == ["Guess what happened?", "Is Tom ok?", "He ate bread."]
    assert ex[1]["memory"] == ["I have a cat named Tom.", "I work at a bakery."]
    # "From the bakery?" takes "bakery" from a memory line the session has not said: a recall;
    # "Is Tom ok?" takes "tom" too, but only when "tom" counts as specific
    assert [G.recalls_memory(e, {"bakery"}) for e in ex] == [False, True]
    assert [G.recalls_memory(e, {"bakery", "tom"}) for e in ex] == [True, True]
    assert not G.recalls_memory({**ex[1], "present": ex[1]["present"] + ["the bakery"]}, {"bakery"})


def test_pick_examples_keeps_the_share_and_the_plain_adapter_unchanged():
    exs = [{"reply": f"r{i} {'rex' if i % 4 == 0 else 'hi'}", "memory": ["rex"], "present": []} for i in range(40)]
    assert G.pick_examples(exs, 12, None, {"rex"}) == exs[:12]   # msc-lora: the order given, as trained before
    picked = G.pick_examples(exs, 12, 0.5, {"rex"}, seed=1)
    assert len(picked) == 12 and sum(G.recalls_memory(e, {"rex"}) for e in picked) == 6
    assert picked == G.pick_examples(exs, 12, 0.5, {"rex"}, seed=1)      # deterministic
    assert len(G.pick_examples(exs, 30, 0.5, {"rex"})) == 25           # only 10 recall: fewer, not padded
    with pytest.raises(DataError, match="unknown responder"):
        R.responder_adapter("x.jsonl", [], kind="msc-telepathy")


def test_recipe_pointer_finds_the_adapter_without_building_prompts(tmp_path, monkeypatch):
    monkeypatch.setenv("GLONG_CACHE", str(tmp_path / "cache"))
    msc = tmp_path / "msc.jsonl"
    msc.write_text("{not json\n")
    key = G.recipe_key(msc, G.RESPONDER_STEPS, 42, G.RESPONDER_LR, None)
    assert key != G.recipe_key(msc, G.RESPONDER_STEPS, 42, G.RESPONDER_LR, G.RESPONDER_RECALL_SHARE)
    folder = tmp_path / "cache" / "responder" / "offline-abc"
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text("{}")
    pointer = folder.parent / f"recipe-{key}.json"
    pointer.write_text(json.dumps({"adapter": "offline-abc"}))
    with pytest.raises(DataError, match="no such MSC file"):
        G.train_responder(tmp_path / "missing.jsonl")
    assert G.train_responder(msc) == folder          # found: the (unreadable) file is never parsed
    for damaged in ("{", json.dumps({"adapter": "../elsewhere"}), json.dumps({"adapter": "offline-gone"})):
        pointer.write_text(damaged)                  # not trusted: the examples are built, and the file is refused
        with pytest.raises(DataError):
            G.train_responder(msc)


def test_held_out_examples_and_the_memory_ablation(tmp_path, monkeypatch):
    from glong_lib.generation import MemoryEchoGenerator
    from glong_lib.memory import HashEncoder

    def conv(cid, pet):
        return {"id": cid, "sessions": [
            {"session": 1, "dialog": [{"speaker": "Speaker 1", "text": f"My dog is {pet}.",
                                       "persona_text": f"I have a dog named {pet}."},
                                      {"speaker": "Speaker 2", "text": "Cute."}]},
            {"session": 2, "dialog": [{"speaker": "Speaker 1", "text": "Guess what?"},
                                      {"speaker": "Speaker 2", "text": f"Is {pet} ok?"}]}]}

    path = tmp_path / "msc.jsonl"
    path.write_text("".join(json.dumps(conv(c, p)) + "\n" for c, p in (("a", "Rex"), ("b", "Fido"), ("c", "Bo"))))
    monkeypatch.setattr(R, "load_encoder", lambda profile: HashEncoder(16))
    monkeypatch.setattr(R, "specific_stems", lambda texts: {"rex", "fido"})   # "bo" is not specific
    examples, specific = R.held_out_examples(path, limit=1, size=3, seed=0)
    assert specific == {"rex", "fido"} and 1 <= len(examples) <= 3
    assert sum(G.recalls_memory(e, specific) for e in examples) == 1          # stops at the limit
    examples, _ = R.held_out_examples(path, limit=5, size=3, seed=0)          # runs out: all three
    result = R.memory_ablation(MemoryEchoGenerator(), examples, specific)
    assert (result["prompts"], result["with memory"], result["without memory"]) == (2, 2, 0)
    assert result["with memory - without"] == 1.0 and len(result["replies"]) == 2
    assert result["replies"][0]["without"] == "I see."   # the echo generator's fallback: no memory lines
    with pytest.raises(DataError, match="nothing to ablate"):
        R.memory_ablation(MemoryEchoGenerator(), examples, set())


def test_split_holds_out_every_default_sample_and_loses_nothing():
    from glong_lib.evaluation.msc import sample_conversations

    convs = [Conversation(f"c{i}", ["A", "B"], []) for i in range(300)]
    held, pool = G.split_msc_for_responder(convs)
    assert {c.id for c in held} >= {c.id for c in sample_conversations(convs, 20, seed=42)}
    assert {c.id for c in held} >= {c.id for c in sample_conversations(convs, 100, seed=42)}
    assert not {c.id for c in held} & {c.id for c in pool} and len(held) + len(pool) == 300


def test_check_not_trained_on_refuses_overlap(tmp_path):
    (tmp_path / "training.json").write_text(json.dumps({"train_conversations": ["a", "b"]}))
    R.check_not_trained_on(tmp_path, ["c", "d"])
    with pytest.raises(DataError, match="trained on 1 of the conversations"):
        R.check_not_trained_on(tmp_path, ["b", "c"])


def test_reply_example_masks_the_prompt_and_keeps_the_reply():
    from transformers import AutoTokenizer

    from glong_lib.models import smollm2_dir

    tok = AutoTokenizer.from_pretrained(str(smollm2_dir()))
    messages = build_prompt("A", "U", ["U: hi"] * 50, ["I have a cat."], "How is Tom?", "plain")
    item = G.tokenize_reply_example(tok, messages, "Tom is fine, thanks!", max_length=64)
    kept = [i for i, label in zip(item["input_ids"], item["labels"]) if label != -100]
    assert len(item["input_ids"]) == 64 and tok.decode(kept).startswith("Tom is fine, thanks!")
    assert tok.eos_token_id in kept or "<|im_end|>" in tok.decode(kept)   # the model learns to end its turn


def test_echo_kinds():
    utterance = "Leo! I actually tried the carbonara. Didn't scramble the eggs"
    cases = {"<MEMORY>": "markup", "The memories linked to the ongoing conversation are:": "markup",
             "- maya has pet cat": "memory line",
             "Hey, I'm Leo. I'm a communication expert with outstanding communication habits.": "system/instruction",
             "Now, please role-play as Leo.": "system/instruction",
             "Lemme clarify, Leo, I actually tried the carbonara this time.": "user's words",
             "I'm glad to hear that you enjoyed the carbonara.": None, "": None}
    for reply, kind in cases.items():
        assert echo_kind(reply, ["- maya has pet cat"], utterance) == kind, reply
        assert is_prompt_echo(reply, ["- maya has pet cat"], utterance) == (kind is not None)
    assert echo_kind("Lemme clarify, Leo, I actually tried the carbonara this time.") is None  # no utterance given


def test_reply_health_counts_each_kind():
    query = "I tried the new pasta place downtown"
    rows = [{"method": "m", "reply": r, "memories": ["- leo like pasta"], "query": query}
            for r in ("<MEMORY>", "leo like pasta", "Oh I tried the new pasta place downtown too", "Nice!", " ")]
    health = R.reply_health(rows, ["m"])[0]
    assert health["prompt echo"] == 3 and health["empty"] == 1 and health["replies"] == 5
    assert [health[f"echo: {k}"] for k in ECHO_KINDS] == [1, 1, 0, 1]


def test_generator_refuses_a_folder_without_an_adapter(tmp_path):
    from glong_lib.generation import LocalChatGenerator

    with pytest.raises(DataError, match="no LoRA adapter"):
        LocalChatGenerator(adapter=str(tmp_path))


def test_candidate_row_reads_an_eval_msc_report():
    from benchmarks.bench_msc import candidate_row

    def rec(method, conv, turn, reply, b2, rl):
        return {"method": method, "conversation": conv, "turn_id": turn, "reply": reply, "nlg_b2": b2,
                "nlg_rougeL": rl, "seconds": 1.0, "cached": False, "memories": [], "query": "How was the trip?"}

    records = [rec("G-Long", c, t, "It was great!", 0.02, 0.10) for c in "ab" for t in "xy"]
    records += [rec("Long context", c, t, "<MEMORY>", 0.0, 0.0) for c in "ab" for t in "xy"]
    diff = {"diff mean": 2.0, "ci low": 1.0, "ci high": 3.0}
    data = {"records": records, "comparison": {
        "health": R.reply_health(records, ["G-Long", "Long context"]),
        "glong_vs_long_context": {"nlg_b2": diff, "nlg_rougeL": diff}, "memory use": []}}
    better = {**data, "records": [{**r, "nlg_b2": r["nlg_b2"] + 0.01} for r in records]}
    row = candidate_row("lora", better, reference=data)
    assert row["echo %"] == 50.0 and row["G-Long echo %"] == 0.0 and row["G-Long B-2"] == 3.0
    assert row["G-Long - long context B-2"] == "+2.00 [+1.00, +3.00]"
    assert row["G-Long B-2 - first responder"] == "+1.00 [+1.00, +1.00]" and row["s / reply"] == 1.0
    assert "G-Long said the recalled word its memory showed" not in row
    shown = [{**r, "memories": ["went on a great trip"]} if r["method"] == "G-Long" else r for r in records]
    turns = {("a", "x"): frozenset({"great"}), ("b", "y"): frozenset({"trip"})}
    row = candidate_row("lora", {**data, "records": shown}, turns=turns)
    assert row["G-Long said the recalled word its memory showed"] == "1 of 2"   # "great" said, "trip" not


def test_the_responder_adapter_key_is_the_one_its_cache_holds():
    """Pinned: the responder's settings (and so its cache folder) stayed the same when its training
    moved from evaluation/ to generation/ on glong_lib.lora; a change here trains every responder again."""
    ex = G.responder_examples([_conversation()], FACTS)
    settings = G.responder_settings(ex)
    assert settings.key() == "b01d686dc74d" and G.responder_dir(settings).name == "offline-b01d686dc74d"
    s = settings
    assert (s.max_steps, s.batch_size, s.learning_rate, s.prompt_version) == (150, 4, 1e-3, 1)


@pytest.mark.slow
def test_a_responder_trains_one_step_and_is_reused(tmp_path, monkeypatch):
    from glong_lib.lora import read_training_log

    monkeypatch.setenv("GLONG_CACHE", str(tmp_path / "cache"))
    ex = G.responder_examples([_conversation()], FACTS)
    settings = G.responder_settings(ex, steps=1)
    folder = G.train_responder_adapter(ex, settings, {"train_conversations": ["c1"]})
    log = read_training_log(folder)
    assert folder == G.responder_dir(settings) and log["key"] == settings.key() and log["steps"] == 1
    assert log["train_conversations"] == ["c1"] and log["trainable_parameters"] < log["total_parameters"] / 10
    assert G.train_responder_adapter(ex, settings) == folder          # cached: not trained again
