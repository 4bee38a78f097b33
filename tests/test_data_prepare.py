"""``glong data prepare`` and the named splits, on fixtures this file writes into ``tmp_path`` in the
exact schemas of the public releases (ParlAI's msc, LoCoMo's locomo10.json, PAED's PersonaExt files,
SAMSum's test.json, DialogSum's JSONL). Every text is invented and tiny; no real data is copied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glong_lib import loaders
from glong_lib.cli import main
from glong_lib.datasets import LOCOMO_SPLITS, MANIFEST, REAL_DATA_ENV, describe, prepare, split_file, split_path
from glong_lib.errors import DataError

ALL_LOCOMO = [i for ids in LOCOMO_SPLITS.values() for i in ids]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GLONG_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(REAL_DATA_ENV, raising=False)


def jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# --------------------------------------------------------------------------- release-shaped fixtures

def turns(conv: int, session: int, n: int = 4, persona: bool = True) -> list[dict]:
    out = []
    for j in range(n):
        t = {"id": f"Speaker {j % 2 + 1}", "text": f"c{conv} s{session} line {j}: I keep {j + 1} goldfish."}
        if persona and j % 2 == 0:
            t["persona_text"] = f"I keep {j + 1} goldfish."
        out.append(t)
    return out


def write_msc(root: Path, split: str = "valid", convs=(0, 1), session5=True, skip=()) -> Path:
    """ParlAI's layout: msc/msc_personasummary/session_{1..4}/SPLIT.txt and msc/msc_dialogue/session_{2..5}/."""
    base = root / "msc"
    personas = [["I like rain.", "I am a baker."], ["I have a cat."]]
    for k in (1, 2, 3, 4):
        jsonl(base / "msc_personasummary" / f"session_{k}" / f"{split}.txt",
              [{"dialog": turns(c, k), "followup": "", "newfact": "", "initial_data_id": f"{split}_{c}",
                "init_personachat": {"init_personas": personas}} for c in convs if (c, k) not in skip])
    for k in (2, 3, 4, 5) if session5 else (2, 3, 4):
        jsonl(base / "msc_dialogue" / f"session_{k}" / f"{split}.txt",
              [{"dialog": turns(c, k, persona=False),
                "previous_dialogs": [{"dialog": turns(c, j, persona=False), "time_num": j, "time_unit": "days"}
                                     for j in range(1, k)],
                "metadata": {"initial_data_id": f"{split}_{c}", "session_id": k - 1},
                "personas": [["I bake bread."], ["I have a cat."]], "init_personas": personas}
               for c in convs if (c, k) not in skip])
    return root


def locomo_sample(sid: str) -> dict:
    return {"sample_id": sid,
            "conversation": {"speaker_a": "Ana", "speaker_b": "Ben",
                             "session_1_date_time": "1:56 pm on 8 May, 2023",
                             "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": f"{sid}: I adopted a dog."},
                                           {"speaker": "Ben", "dia_id": "D1:2", "text": "What is its name?"}],
                             "session_2_date_time": "10:00 am on 9 May, 2023",
                             "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "How is Rex?"}]},
            "qa": [{"question": "What did Ana adopt?", "answer": "a dog", "evidence": ["D1:1"], "category": 4}],
            "observation": {}, "session_summary": {}, "event_summary": {}}


def write_locomo(path: Path, ids=ALL_LOCOMO) -> Path:
    path.write_text(json.dumps([locomo_sample(i) for i in ids]))
    return path


def triplet(tokens: str, head, tail, label) -> dict:
    return {"tokens": tokens.split(), "head": head, "tail": tail, "label": label, "head_id": "", "tail_id": "",
            "label_id": "", "error": "", "raw": "", "score": 0.0, "zerorc_included": True}


SCHEMA = '{"relation_types": [{"hierarchy_type": "Pets", "types": [{"type": "have_pet", "examples": [],},],},],}'


def write_personaext(folder: Path, full: bool = True) -> Path:
    entries = [{"triplets": [triplet("i have two dogs .", [0], [2, 3], "have_pet")]},
               {"triplets": [triplet("my job ? i bake bread", [3], [4], "like_activity"),
                             triplet("my job ? i bake bread", [3], [5], "have")]}]
    if full:
        (folder / "data" / "ConvAI2").mkdir(parents=True)
        (folder / "data" / "ConvAI2" / "u2t_map_all.json").write_text(json.dumps(entries))
        (folder / "data" / "ConvAI2" / "schema.json").write_text(SCHEMA)
    else:
        splits = folder / "outputs" / "data" / "splits" / "zero_rte" / "u2t_map_all"
        jsonl(splits / "unseen_5_seed_0" / "dev.jsonl", entries[:1])
        jsonl(splits / "unseen_10_seed_1" / "test.jsonl", entries)  # the first entry again: dropped
    return folder


def write_summaries(root: Path) -> tuple[Path, Path]:
    samsum = root / "samsum" / "test.json"
    samsum.parent.mkdir(parents=True)
    samsum.write_text(json.dumps([{"id": "1", "dialogue": "Ana: Lunch?\r\nBen: Sure, at noon.",
                                   "summary": "Ana and Ben meet for lunch at noon."}]))
    data = root / "dialogsum" / "DialogSum_Data"
    jsonl(data / "dialogsum.dev.jsonl", [{"fname": "dev_1", "dialogue": "#Person1#: Hi.\n#Person2#: Hello.",
                                          "summary": "They greet.", "topic": "greeting"}])
    jsonl(data / "dialogsum.test.jsonl", [{"fname": "test_1", "dialogue": "#Person1#: Tea?\n#Person2#: Yes.",
                                           "summary1": "Tea.", "topic1": "tea", "summary2": "T.", "topic2": "t",
                                           "summary3": "Tea!", "topic3": "tea"}])
    return samsum, data.parent


# --------------------------------------------------------------------------- MSC

def test_msc_release_becomes_the_jsonl_the_readers_load(tmp_path):
    write_msc(tmp_path / "dl", convs=(0, 1, 2), skip={(2, 3), (2, 4), (2, 5)})  # 2 stops after session 2: dropped
    manifest = prepare(tmp_path / "out", msc=tmp_path / "dl")
    path = tmp_path / "out" / "msc" / "msc4_valid.jsonl"
    convs = loaders.load_msc_jsonl(path)
    assert [c.id for c in convs] == ["msc-valid-valid_0", "msc-valid-valid_1"]
    assert [s.index for s in convs[0].sessions] == [1, 2, 3, 4, 5]  # session 5 from msc_dialogue
    assert [s.seconds_since_previous for s in convs[0].sessions[1:]] == [86400, 2 * 86400, 3 * 86400, 4 * 86400]
    assert convs[0].sessions[0].seconds_since_previous is None
    assert convs[0].personas["Speaker 1"] == ["I like rain.", "I am a baker."]
    assert convs[0].sessions[1].turns[0].text == "c0 s2 line 0: I keep 1 goldfish."
    assert [t.speaker for t in convs[0].sessions[2].turns] == ["Speaker 1", "Speaker 2"] * 2
    facts = loaders.load_msc_persona_facts(path)["msc-valid-valid_1"]
    assert facts[1] == ["I keep 1 goldfish.", "I keep 3 goldfish."]
    assert facts[5] == []  # msc_dialogue has no persona_text
    out = manifest["datasets"]["msc"]["outputs"]["msc/msc4_valid.jsonl"]
    assert out["conversations"] == 2 and out["dropped"] == 1 and out["with session 5"] == 2
    assert out["splits"] == ["msc-valid"] and len(manifest["datasets"]["msc"]["sources"]) == 8
    assert not (tmp_path / "out" / "msc" / "msc4_test.jsonl").exists()  # no test files given


def test_msc_session_missing_from_the_persona_summaries_comes_from_msc_dialogue(tmp_path):
    write_msc(tmp_path / "dl", convs=(0,))
    (tmp_path / "dl" / "msc" / "msc_personasummary" / "session_4" / "valid.txt").unlink()
    prepare(tmp_path / "out", msc=tmp_path / "dl")
    (conv,) = loaders.load_msc_jsonl(tmp_path / "out" / "msc" / "msc4_valid.jsonl")
    assert [s.index for s in conv.sessions] == [1, 2, 3, 4, 5]
    assert loaders.load_msc_persona_facts(tmp_path / "out" / "msc" / "msc4_valid.jsonl")["msc-valid-valid_0"][4] == []


def test_msc_without_session5_and_without_dialogue_gaps(tmp_path):
    write_msc(tmp_path / "dl", split="test", convs=(7,), session5=False)
    for f in (tmp_path / "dl" / "msc" / "msc_dialogue").rglob("*.txt"):
        f.unlink()
    prepare(tmp_path / "out", msc=tmp_path / "dl" / "msc")  # the folder itself, not its parent
    (conv,) = loaders.load_msc_jsonl(tmp_path / "out" / "msc" / "msc4_test.jsonl")
    assert conv.id == "msc-test-test_7" and [s.index for s in conv.sessions] == [1, 2, 3, 4]
    assert all(s.seconds_since_previous is None for s in conv.sessions)


@pytest.mark.parametrize("damage, where, field", [
    (lambda ep: ep.pop("initial_data_id"), "session_2/valid.txt: line 1", "initial_data_id"),
    (lambda ep: ep["dialog"][1].pop("text"), "session_2/valid.txt: line 1, turn 2", "text"),
    (lambda ep: ep["init_personachat"].update(init_personas="I like rain"), "session_2/valid.txt: line 1",
     "init_personas"),
])
def test_bad_msc_line_is_one_line_naming_file_line_and_field(tmp_path, damage, where, field):
    write_msc(tmp_path / "dl")
    path = tmp_path / "dl" / "msc" / "msc_personasummary" / "session_2" / "valid.txt"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    damage(rows[0])
    jsonl(path, rows)
    with pytest.raises(DataError) as e:
        prepare(tmp_path / "out", msc=tmp_path / "dl")
    assert where in str(e.value) and field in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "out").exists()  # nothing written


def test_bad_time_unit_and_a_folder_that_is_not_msc(tmp_path):
    write_msc(tmp_path / "dl")
    path = tmp_path / "dl" / "msc" / "msc_dialogue" / "session_3" / "valid.txt"
    jsonl(path, [{**json.loads(path.read_text().splitlines()[0]),
                  "previous_dialogs": [{"dialog": [{"text": "hi"}], "time_num": 2, "time_unit": "fortnights"}]}])
    with pytest.raises(DataError, match=r"session_3/valid.txt: line 1, previous_dialogs 1: field 'time_unit'"):
        prepare(tmp_path / "out", msc=tmp_path / "dl")
    with pytest.raises(DataError, match="no ParlAI msc release here"):
        prepare(tmp_path / "out", msc=tmp_path)


# --------------------------------------------------------------------------- LoCoMo

def test_locomo_splits_are_fixed_by_sample_id(tmp_path):
    shuffled = list(reversed(ALL_LOCOMO))  # the release's order does not decide the splits
    manifest = prepare(tmp_path / "out", locomo=write_locomo(tmp_path / "locomo10.json", shuffled))
    dev, _ = loaders.load_locomo(tmp_path / "out" / "locomo" / "locomo_dev.json")
    test, qas = loaders.load_locomo(tmp_path / "out" / "locomo" / "locomo_test.json")
    assert [c.id for c in dev] == ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]
    assert [c.id for c in test] == ["conv-44", "conv-47", "conv-48", "conv-49", "conv-50"] and len(qas) == 5
    outputs = manifest["datasets"]["locomo"]["outputs"]
    assert outputs["locomo/locomo_dev.json"]["splits"] == ["locomo-select", "locomo-report", "locomo-dev"]
    assert outputs["locomo/locomo_test.json"]["splits"] == ["locomo-test"]
    report, _ = loaders.load_locomo(split_path("locomo-report", tmp_path / "out"))
    select, _ = loaders.load_locomo(split_path("locomo-select", tmp_path / "out"))
    assert [c.id for c in report] == ["conv-42", "conv-43"] and [c.id for c in select] == list(LOCOMO_SPLITS["select"])
    assert split_path("locomo-test", tmp_path / "out") == tmp_path / "out" / "locomo" / "locomo_test.json"


def test_locomo_development_file_alone_gives_only_the_dev_file(tmp_path):
    dev_ids = LOCOMO_SPLITS["select"] + LOCOMO_SPLITS["report"]
    manifest = prepare(tmp_path / "out", locomo=write_locomo(tmp_path / "dev.json", dev_ids))
    assert (tmp_path / "out" / "locomo" / "locomo_dev.json").is_file()
    assert split_file("locomo-test", tmp_path / "out") is None
    assert "locomo_test.json" in manifest["datasets"]["locomo"]["note"]
    with pytest.raises(DataError, match="split 'locomo-test' needs .*locomo_test.json"):
        split_path("locomo-test", tmp_path / "out")


@pytest.mark.parametrize("ids, message", [
    ([i for i in ALL_LOCOMO if i != "conv-43"], r"locomo10.json: field 'sample_id': conv-43 missing"),
    ([*ALL_LOCOMO, "conv-99"], r"locomo10.json: sample 11: field 'sample_id' is 'conv-99', in no split"),
    ([*ALL_LOCOMO, "conv-26"], r"sample_id 'conv-26' appears twice"),  # the LoCoMo loader's own check
])
def test_partial_or_unknown_locomo_is_refused(tmp_path, ids, message):
    with pytest.raises(DataError, match=message):
        prepare(tmp_path / "out", locomo=write_locomo(tmp_path / "locomo10.json", ids))
    assert not (tmp_path / "out").exists()


def test_bad_locomo_field_names_file_sample_and_field(tmp_path):
    data = [locomo_sample(i) for i in ALL_LOCOMO]
    del data[2]["conversation"]["session_1"][0]["dia_id"]
    (tmp_path / "locomo10.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"locomo10.json: sample 3, session 1: missing key 'dia_id'"):
        prepare(tmp_path / "out", locomo=tmp_path / "locomo10.json")


# --------------------------------------------------------------------------- PersonaExt

def test_personaext_u2t_map_all_and_schema(tmp_path):
    manifest = prepare(tmp_path / "out", personaext=write_personaext(tmp_path / "PAED"))
    path = tmp_path / "out" / "personaext" / "personaext_pairs.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows[0] == {"utterance": "i have two dogs .", "subject": "i", "relation": "have_pet", "object": "two dogs"}
    assert loaders.detect_format(path) == "personaext-pairs"
    pairs = loaders.load_triple_pairs(path)
    assert [len(p.triples) for p in pairs] == [1, 2]  # two triples of one utterance become one pair
    assert loaders.load_personaext_schema(tmp_path / "out" / "personaext" / "schema.json") == ["have_pet"]
    out = manifest["datasets"]["personaext"]["outputs"]["personaext/personaext_pairs.jsonl"]
    assert (out["pairs"], out["utterances"], out["relations"]) == (3, 2, 3)


def test_personaext_zero_shot_split_files_merged_without_duplicates(tmp_path):
    prepare(tmp_path / "out", personaext=write_personaext(tmp_path / "PAED", full=False))
    rows = (tmp_path / "out" / "personaext" / "personaext_pairs.jsonl").read_text().splitlines()
    assert len(rows) == 3 and not (tmp_path / "out" / "personaext" / "schema.json").exists()


def test_bad_personaext_triplet_names_entry_and_field(tmp_path):
    folder = write_personaext(tmp_path / "PAED")
    path = folder / "data" / "ConvAI2" / "u2t_map_all.json"
    entries = json.loads(path.read_text())
    entries[1]["triplets"][1]["tail"] = [9]
    path.write_text(json.dumps(entries))
    with pytest.raises(DataError, match=r"u2t_map_all.json: entry 2, triplet 2: field 'tail' has an index outside"):
        prepare(tmp_path / "out", personaext=folder)


# --------------------------------------------------------------------------- summaries, folder, CLI

def test_summaries_copied_and_read_by_the_salience_splits(tmp_path):
    from glong_lib.evaluation.salience import salience_dialogues

    samsum, dialogsum = write_summaries(tmp_path)
    prepare(tmp_path / "out", samsum=samsum, dialogsum=dialogsum)
    assert (tmp_path / "out" / "summaries" / "samsum_test_819.json").read_bytes() == samsum.read_bytes()
    picked = salience_dialogues(tmp_path / "out", "select", n=1, min_turns=2)
    assert [(d.corpus, d.pair.id) for d in picked] == [("dialogsum-dev", "dev_1"), ("samsum-test", "1")]
    assert [d.corpus for d in salience_dialogues(tmp_path / "out", "report", n=1, min_turns=2)] == ["dialogsum-test"]


def test_partial_dialogsum_and_bad_samsum_are_refused(tmp_path):
    samsum, dialogsum = write_summaries(tmp_path)
    (dialogsum / "DialogSum_Data" / "dialogsum.test.jsonl").unlink()
    with pytest.raises(DataError, match=r"dialogsum.test.jsonl: missing"):
        prepare(tmp_path / "out", dialogsum=dialogsum)
    samsum.write_text(json.dumps([{"id": "1", "dialogue": "Ana: hi"}]))
    with pytest.raises(DataError, match=r"test.json: record 1: missing key 'summary'"):
        prepare(tmp_path / "out", samsum=samsum)


def test_a_second_prepare_adds_to_the_folder_and_the_manifest(tmp_path):
    samsum, _ = write_summaries(tmp_path)
    prepare(tmp_path / "out", locomo=write_locomo(tmp_path / "locomo10.json"))
    manifest = prepare(tmp_path / "out", samsum=samsum)
    assert set(manifest["datasets"]) == {"locomo", "samsum"}
    assert json.loads((tmp_path / "out" / MANIFEST).read_text()) == manifest
    recorded = manifest["datasets"]["samsum"]["sources"]
    assert list(recorded.values()) == [__import__("hashlib").sha256(samsum.read_bytes()).hexdigest()]


def test_a_folder_of_other_files_is_refused(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(DataError, match="glong did not write"):
        prepare(tmp_path / "mine", locomo=write_locomo(tmp_path / "locomo10.json"))
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]


def test_a_folder_holding_another_glong_artifact_is_refused(tmp_path):
    from glong_lib.artifacts import write_artifact_marker

    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_config.json").write_text("{}")
    write_artifact_marker(tmp_path / "adapter", "extractor")
    with pytest.raises(DataError, match="holds another glong artifact"):
        prepare(tmp_path / "adapter", locomo=write_locomo(tmp_path / "locomo10.json"))
    assert sorted(p.name for p in (tmp_path / "adapter").iterdir()) == [".glong-artifact.json", "adapter_config.json"]


def test_cli_prepare_then_real_data_env_finds_every_split(tmp_path, monkeypatch, capsys):
    samsum, dialogsum = write_summaries(tmp_path)
    write_msc(tmp_path / "dl")
    out = tmp_path / "prepared"
    assert main(["data", "prepare", "--msc", str(tmp_path / "dl"), "--locomo", str(write_locomo(tmp_path / "l.json")),
                 "--personaext", str(write_personaext(tmp_path / "PAED")), "--samsum", str(samsum),
                 "--dialogsum", str(dialogsum), "--out", str(out)]) == 0
    assert f"{REAL_DATA_ENV}={out}" in capsys.readouterr().out
    monkeypatch.setenv(REAL_DATA_ENV, str(out))
    from glong_lib.extraction.prompt import personaext_path

    assert personaext_path() == out / "personaext" / "personaext_pairs.jsonl"
    names = ("msc-valid", "locomo-select", "locomo-report", "locomo-dev", "locomo-test", "personaext",
             "samsum-test", "dialogsum-dev", "dialogsum-test")
    missing = [name for name in names if not split_file(name)]
    assert missing == []
    assert main(["data", "splits", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["split"]: r["here"] for r in rows}["msc-test"] == "no"


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["data", "prepare", "--locomo", str(tmp_path / "nope.json"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("glong data: error: ") and "nope.json: no such file or folder" in err
    assert err.count("\n") == 1


def test_describe_names_the_split_and_its_samples():
    assert describe("locomo-dev")["samples"] == [*LOCOMO_SPLITS["select"], *LOCOMO_SPLITS["report"]]
    assert describe("msc-valid") == {"split": "msc-valid", "file": "msc/msc4_valid.jsonl",
                                     "purpose": "MSC valid: sessions 1-4 (and 5 where the release has it)"}
    with pytest.raises(DataError, match="unknown split 'locomo-train'"):
        describe("locomo-train")
