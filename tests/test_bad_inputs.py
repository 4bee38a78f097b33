"""A table of bad or unusual command lines, as a new user types them. Each must end with exit
status 2, exactly one line on stderr naming what is wrong, no traceback, and no file changed
(the good memory in the work folder is byte-identical afterwards)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from testdata import DATA

from glong_lib.cli import main
from glong_lib.memory import GraphMemory, HashEncoder
from glong_lib.schema import Triple

CONV = str(DATA / "conversations" / "c01.json")
LOCOMO_OK = {"sample_id": "s1", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [
    {"dia_id": "D1:1", "speaker": "A", "text": "hi"}, {"dia_id": "D1:2", "speaker": "B", "text": "hello"}],
    "session_1_date_time": "1:56 pm on 8 May, 2023"}, "qa": [{"question": "q?", "answer": "a", "evidence": ["D1:1"],
                                                             "category": 4}]}


def _locomo(change) -> str:
    sample = json.loads(json.dumps(LOCOMO_OK))
    change(sample)
    return json.dumps([sample])


def _conversation(change) -> str:
    """The shipped c01 conversation with one field changed."""
    conv = json.loads(Path(CONV).read_text())
    change(conv)
    return json.dumps(conv)  # ASCII escapes: a lone surrogate is written as \ud800, as a JSON file can hold it


def _turn_row(**change) -> str:
    """One line of a `glong extract` file for c01's first turn (a good triple), with fields changed."""
    conv = json.loads(Path(CONV).read_text())
    turn = conv["sessions"][0]["turns"][0]
    row = {"conversation": conv["id"], "session": 1, "turn_id": turn["id"], "speaker": turn["speaker"],
           "text": turn["text"], "triples": [{"subject": "maya", "relation": "like", "object": "tea"}]}
    return json.dumps({**row, **change}) + "\n"


def _lme(qid: str, text: str, **change) -> dict:
    """One LongMemEval instance: a one-session haystack whose first turn holds the answer."""
    return {"question_id": qid, "question": "Where do I work?", "answer": "a bakery", "question_type": "single",
            "haystack_sessions": [[{"role": "user", "content": text, "has_answer": True},
                                   {"role": "assistant", "content": "Nice."}]],
            "haystack_session_ids": ["s1"], "haystack_dates": ["2023/05/20 (Sat) 02:21"], **change}


def _cc(change) -> str:
    """One Conversation Chronicles line (two sessions), with fields changed."""
    row = {"dataID": "e1", "relationship": "Friends", "time_interval": ["Start", "A few hours after"],
           "first_session_dialogue": ["Hi there.", "Hello!"], "first_session_speakers": ["A", "B"],
           "second_session_dialogue": ["Back again.", "Welcome."], "second_session_speakers": ["A", "B"]}
    change(row)
    return json.dumps(row) + "\n"


def _ldagent(time_pass: str) -> str:
    """LD-Agent's MSC layout (one sample, two sessions); ``time_pass`` as written in the file."""
    session = '{"dialog": [{"SPEAKER_1": "hi", "SPEAKER_2": "yo"}], "time_pass": %s}'
    return "[[" + session % time_pass + ", " + session % "0" + "]]"


def _probe(pid: str, question: str) -> str:
    return json.dumps({"id": pid, "conversation": "c01", "question": question, "evidence": ["S1:1"]}) + "\n"


FILES = {  # name -> content (str or bytes) written into the work folder before each case
    "empty.json": "",
    "blank.jsonl": "\n\n",
    "garbage.json": "{not json",
    "binary.json": b"\xff\xfe\x00\x01garbage",
    "latin1.json": "caf\xe9".encode("latin-1"),
    "deep.json": "[" * 50000 + "]" * 50000,
    "deep.jsonl": json.dumps({"a": 1}) + "\n" + "[" * 50000 + "]" * 50000 + "\n",
    "list_of_numbers.json": "[1, 2, 3]",
    "conv_no_sessions.json": json.dumps({"id": "x", "speakers": ["A", "B"], "sessions": []}),
    "conv_empty_session.json": json.dumps({"id": "x", "speakers": ["A", "B"], "sessions": [{"index": 1, "turns": []}]}),
    "triples_other_conv.jsonl": json.dumps({"conversation": "zzz", "turn_id": "S1:1", "triples": []}) + "\n",
    "triples_bad_turn.jsonl": json.dumps({"conversation": "c01", "turn_id": "nope", "triples": []}) + "\n",
    "triples_not_list.jsonl": json.dumps({"conversation": "c01", "turn_id": "S1:1", "triples": "x"}) + "\n",
    "triples_bad_triple.jsonl": json.dumps({"conversation": "c01", "turn_id": "S1:1",
                                            "triples": [{"subject": 1}]}) + "\n",
    "triples_weight_str.jsonl": json.dumps({"conversation": "c01", "turn_id": "S1:1", "triples": [
        {"subject": "a", "relation": "r", "object": "b", "weight": "high"}]}) + "\n",
    "triples_weight_big.jsonl": json.dumps({"conversation": "c01", "turn_id": "S1:1", "triples": [
        {"subject": "a", "relation": "r", "object": "b", "weight": 7}]}) + "\n",
    "triples_weight_nan.jsonl": ('{"conversation": "c01", "turn_id": "S1:1", "triples": '
                                 '[{"subject": "a", "relation": "r", "object": "b", "weight": NaN}]}\n'),
    "triples_weights_len.jsonl": json.dumps({"conversation": "c01", "turn_id": "S1:1", "weights": [1, 2], "triples": [
        {"subject": "a", "relation": "r", "object": "b"}]}) + "\n",
    "triples_array_line.jsonl": "[1, 2]\n",
    "locomo_not_list.json": json.dumps({"a": 1}),
    "locomo_sample_str.json": json.dumps(["sample"]),
    "locomo_conv_list.json": _locomo(lambda s: s.update(conversation=[])),
    "locomo_session_str.json": _locomo(lambda s: s["conversation"].update(session_1="text")),
    "locomo_turn_no_text.json": _locomo(lambda s: s["conversation"]["session_1"][0].pop("text")),
    "locomo_turn_text_int.json": _locomo(lambda s: s["conversation"]["session_1"][0].update(text=5)),
    "locomo_date_int.json": _locomo(lambda s: s["conversation"].update(session_1_date_time=5)),
    "locomo_date_bad.json": _locomo(lambda s: s["conversation"].update(session_1_date_time="yesterday")),
    "locomo_qa_dict.json": _locomo(lambda s: s.update(qa={"q": 1})),
    "locomo_qa_str.json": _locomo(lambda s: s.update(qa=["question"])),
    "locomo_cat_str.json": _locomo(lambda s: s["qa"][0].update(category="4")),
    "locomo_cat_9.json": _locomo(lambda s: s["qa"][0].update(category=9)),
    "locomo_cat_bool.json": _locomo(lambda s: s["qa"][0].update(category=True)),
    "locomo_evidence_str.json": _locomo(lambda s: s["qa"][0].update(evidence="D1:1")),
    "locomo_evidence_dicts.json": _locomo(lambda s: s["qa"][0].update(evidence=[{"id": 1}])),
    "locomo_question_int.json": _locomo(lambda s: s["qa"][0].update(question=3)),
    "probes_bad.jsonl": json.dumps({"question": "q"}) + "\n",
    "probes_session_list.jsonl": json.dumps({"conversation": "c01", "question": "q", "evidence": ["S1:1"],
                                             "asked_in_session": [2]}) + "\n",
    "extract_rows_missing.jsonl": json.dumps({"conversation": "c01"}) + "\n",
    "extract_rows_no_triples.jsonl": json.dumps({"conversation": "c01", "session": 1, "triples": []}) + "\n",
    "extract_rows_bad_triple.jsonl": json.dumps({"conversation": "c01", "session": 1, "triples": [[1, 2, 3]]}) + "\n",
    "a_file": "x",
    # --- the reliability sweep (issue 25; ids are the sweep's)
    "conv_session_str.json": _conversation(lambda c: c["sessions"][0].update(session="one")),      # B05
    "conv_gap_str.json": _conversation(lambda c: c["sessions"][0].update(seconds_since_previous="soon")),  # B06
    "conv_date_int.json": _conversation(lambda c: c["sessions"][0].update(date=5)),                # B07
    "conv_gap_huge.json": _conversation(lambda c: c["sessions"][1].update(seconds_since_previous=10 ** 400)),
    "conv_turnid_list.json": _conversation(lambda c: c["sessions"][0]["turns"][0].update(id=["S1", 1])),  # B08
    "conv_bigint.json": '{"id": "x", "n": ' + "7" * 5000 + "}",                                    # B04
    "conv_surrogate.json": _conversation(lambda c: c["sessions"][0]["turns"][0].update(text="\ud800")),  # B03
    "parlai_bad_time.jsonl": json.dumps({"dialog": [{"text": "hi"}], "previous_dialogs": [
        {"dialog": [{"text": "yo"}], "time_num": "soon", "time_unit": "days"}]}) + "\n",          # B10
    "schema_bad.json": json.dumps({"relation_types": ["like"]}),                                    # B11
    "episodes_bad.json": json.dumps([{"first_session_dialogue": ["hi", "yo"]}, "record"]),         # B12
    "msc_personas_int.jsonl": json.dumps({"id": "m", "init_personas": 5, "sessions": [
        {"session": 1, "dialog": [{"speaker": "A", "text": "hi"}]}]}) + "\n",                     # B13
    "triples_speaker_int.jsonl": _turn_row(speaker=5),                                              # C01
    "triples_session_str.jsonl": _turn_row(session="abc"),                                          # C02
    "triples_turnid_list.jsonl": _turn_row(turn_id=["S1:1"]),                                       # C03
    "triples_text_int.jsonl": _turn_row(text=7),                                                    # C04
    "triples_session_99.jsonl": _turn_row(session=99),                                              # C05
    "score_session_dict.jsonl": json.dumps({"conversation": "c01", "session": {"n": 1}, "turn_id": "S1:1",
                                            "triples": [{"subject": "a", "relation": "r", "object": "b"}]})
    + "\n",  # G17
    # --- the reliability sweep, round 3 (ids are the sweep's)
    "lme_dup.json": json.dumps([_lme("q1", "I work at a bakery."), _lme("q1", "I work at a bank.")]),  # L03
    "probes_dupid.jsonl": _probe("p1", "Where does Maya work?") + _probe("p1", "What pet?"),           # N04
    "locomo_dupsession.json": _locomo(lambda s: s["conversation"].update(session_01=[                # L09
        {"dia_id": "D1:9", "speaker": "A", "text": "another session one"}])),
    "locomo_bigkey.json": _locomo(lambda s: s["conversation"].update({"session_" + "9" * 5000: []})),  # L08
    "locomo_dupid.json": json.dumps([LOCOMO_OK, LOCOMO_OK]),
    "msc_dupid.jsonl": 2 * (json.dumps({"id": "m", "sessions": [{"session": 1, "dialog": [
        {"speaker": "A", "text": "hi"}]}]}) + "\n"),
    "cc_null.jsonl": _cc(lambda r: r["first_session_dialogue"].append(None)),                        # L10
    "cc_object.jsonl": _cc(lambda r: r["second_session_dialogue"].insert(0, {"text": "hi"})),
    "cc_number.jsonl": _cc(lambda r: r.update(first_session_dialogue=[42, "hello"])),
    "cc_speaker_null.jsonl": _cc(lambda r: r.update(first_session_speakers=[None, "B"])),
    "cc_dupid.jsonl": _cc(lambda r: None) * 2,
    "cc_gap_huge.jsonl": _cc(lambda r: r.update(time_interval=["Start", "9" * 400 + " years after"])),  # L06
    "ldagent_nan.json": _ldagent("NaN"),                                                             # L07
    "ldagent_neginf.json": _ldagent("-Infinity"),
    "ldagent_huge.json": _ldagent("1e308"),
    "conv_gap_1e308.json": _conversation(lambda c: c["sessions"][1].update(seconds_since_previous=1e308)),  # N02
    "conv_gaps_sum.json": _conversation(lambda c: [s.update(seconds_since_previous=9e11) for s in c["sessions"][1:]]),
    "parlai_gap_huge.jsonl": json.dumps({"dialog": [{"text": "hi"}], "previous_dialogs": [
        {"dialog": [{"text": "yo"}], "time_num": 1e11, "time_unit": "years"}]}) + "\n",
}

# (arguments, a regex the one error line must match). {d} is the work folder, {mem} a good memory in it.
CASES = [
    # --- glong inspect
    ("inspect {d}/missing.json", "no such file"),
    ("inspect {d}", "not a file|folder"),
    ("inspect {d}/empty.json", "empty"),
    ("inspect {d}/blank.jsonl", "empty"),
    ("inspect {d}/garbage.json", "invalid JSON|format"),
    ("inspect {d}/binary.json", "not UTF-8"),
    ("inspect {d}/latin1.json", "not UTF-8"),
    ("inspect {d}/deep.json", "nested too deeply|format"),
    ("inspect {d}/deep.jsonl", "nested too deeply|invalid JSON"),
    ("inspect {d}/list_of_numbers.json", "format|expected"),
    ("inspect", "required"),
    ("inspect a b", "unrecognized"),
    # --- glong build
    ("build {d}/missing.json --out {d}/new", "no such file"),
    ("build {conv}", "required: --out"),
    ("build {conv} --out {d}/new --gold --conversation nope", "no conversation 'nope'"),
    ("build {d}/conv_no_sessions.json --out {d}/new --gold", "no sessions"),
    ("build {d}/conv_empty_session.json --out {d}/new --gold", "no turns|missing key"),
    ("build {d}/garbage.json --out {d}/new --gold", "invalid JSON|format"),
    ("build {d}/binary.json --out {d}/new --gold", "not UTF-8"),
    ("build {d}/deep.json --out {d}/new --gold", "nested too deeply|format"),
    ("build {conv} --out {d}/new --triples {d}/missing.jsonl", "no such file"),
    ("build {conv} --out {d}/new --triples {d}/garbage.json", "invalid JSON"),
    ("build {conv} --out {d}/new --triples {d}/triples_bad_turn.jsonl", "turn id 'nope'"),
    ("build {conv} --out {d}/new --triples {d}/triples_not_list.jsonl", "'triples' should be a list"),
    ("build {conv} --out {d}/new --triples {d}/triples_bad_triple.jsonl", "string subject"),
    ("build {conv} --out {d}/new --triples {d}/triples_weight_str.jsonl", "non-numeric weight"),
    ("build {conv} --out {d}/new --triples {d}/triples_weight_big.jsonl", r"\[0, 1\]"),
    ("build {conv} --out {d}/new --triples {d}/triples_weight_nan.jsonl", r"\[0, 1\]|finite"),
    ("build {conv} --out {d}/new --triples {d}/triples_weights_len.jsonl", "one number per triple"),
    ("build {conv} --out {d}/new --triples {d}/triples_array_line.jsonl", "JSON object"),
    ("build {conv} --out {d}/new --triples {d}/empty.json", "empty"),
    ("build {conv} --out {mem} --triples {d}/triples_other_conv.jsonl", "would replace one with 4 edges"),
    ("build {conv} --out {d}/a_file --gold", "not a folder"),
    ("build {conv} --out {d} --gold", "other files and no glong memory"),
    ("build {conv} --out {d}/new --gold --triples {d}/x.jsonl", "not allowed with"),
    ("build {conv} --out {d}/new --gold --policy overwrite", "invalid choice"),
    ("build {conv} --out {d}/new --gold --scope week", "invalid choice"),
    ("build {conv} --out {d}/new --gold --profile gpt5", "invalid choice"),
    ("build {d}/locomo_sample_str.json --out {d}/new --gold", "expected a JSON object|format"),
    # --- glong memory
    ("memory {d}/missing", "not a folder"),
    ("memory {d}", "not a glong memory"),
    ("memory {d}/a_file", "not a folder"),
    ("memory {mem}/manifest.json", "not a folder"),
    ("memory", "required"),
    # --- glong query
    ("query {d}/missing hello", "not a folder"),
    ("query {d} hello", "not a glong memory"),
    ("query {mem} hello --now nan", "not a finite number"),
    ("query {mem} hello --now inf", "not a finite number"),
    ("query {mem} hello --now=-inf", "not a finite number"),
    ("query {mem} hello --now 1e308", "outside"),
    ("query {mem} hello --now 1e308 --save-access", "outside"),
    ("query {mem} hello --now abc", "not a number"),
    ("query {mem} hello --now ''", "not a number|expected one argument"),
    ("query {mem} hello --k 0", "outside"),
    ("query {mem} hello --k -3", "outside"),
    ("query {mem} hello --k 2.5", "not an integer"),
    ("query {mem} hello --k 1e9999", "not an integer"),
    ("query {mem} hello --anchors 0", "outside"),
    ("query {mem} hello --hops -1", "outside"),
    ("query {mem} hello --hops 99", "outside"),
    ("query {mem} hello --top-n 0", "outside"),
    ("query {mem}", "required"),
    # --- glong eval-retrieval
    ("eval-retrieval", "one of the arguments"),
    ("eval-retrieval --probes --locomo x", "not allowed with"),
    ("eval-retrieval --probes --methods colbert", "unknown method"),
    ("eval-retrieval --probes --methods bm25 --k 0", "positive integers"),
    ("eval-retrieval --probes --methods bm25 --k a,b", "integers"),
    ("eval-retrieval --probes --methods bm25 --k ,", "positive integers"),
    ("eval-retrieval --probes --methods bm25 --hops 7", "outside"),
    ("eval-retrieval --probes --methods bm25 --anchors nan", "not an integer"),
    ("eval-retrieval --probes --methods bm25 --conversations 0", "outside"),
    ("eval-retrieval --probes --methods bm25 --max-turns -5", "outside"),
    ("eval-retrieval --probes {d}/missing.jsonl --methods bm25", "no such file"),
    ("eval-retrieval --probes {d}/probes_bad.jsonl --methods bm25", "missing key"),
    ("eval-retrieval --probes {d}/probes_session_list.jsonl --methods bm25", "'asked_in_session' should be int"),
    ("eval-retrieval --probes {d}/binary.json --methods bm25", "not UTF-8"),
    ("eval-retrieval --probes --methods bm25 --conversations-dir {d}/missing", "no such file|not a"),
    ("eval-retrieval --probes --methods bm25 --resume", "needs --checkpoint"),
    ("eval-retrieval --probes --methods bm25 --checkpoint {d}/a_file", "not a glong checkpoint|checkpoint exists"),
    ("eval-retrieval --probes --methods bm25 --checkpoint {d}/a_file --resume", "not a glong checkpoint"),
    ("eval-retrieval --probes --methods bm25 --weights heavy", "invalid choice"),
    ("eval-retrieval --locomo {d}/missing.json --methods bm25", "no such file"),
    ("eval-retrieval --locomo {d}/locomo_not_list.json --methods bm25", "JSON list"),
    ("eval-retrieval --locomo {d}/locomo_sample_str.json --methods bm25", "expected a JSON object"),
    ("eval-retrieval --locomo {d}/locomo_conv_list.json --methods bm25", "'conversation' should be dict"),
    ("eval-retrieval --locomo {d}/locomo_session_str.json --methods bm25", "'session_1' should be list"),
    ("eval-retrieval --locomo {d}/locomo_turn_no_text.json --methods bm25", "missing key 'text'"),
    ("eval-retrieval --locomo {d}/locomo_turn_text_int.json --methods bm25", "'text' should be str"),
    ("eval-retrieval --locomo {d}/locomo_date_int.json --methods bm25", "date_time' should be str"),
    ("eval-retrieval --locomo {d}/locomo_date_bad.json --methods bm25", "unreadable date"),
    ("eval-retrieval --locomo {d}/locomo_qa_dict.json --methods bm25", "'qa' should be list"),
    ("eval-retrieval --locomo {d}/locomo_qa_str.json --methods bm25", "expected a JSON object"),
    ("eval-retrieval --locomo {d}/locomo_cat_str.json --methods bm25", "'category' should be int"),
    ("eval-retrieval --locomo {d}/locomo_cat_9.json --methods bm25", "unknown category"),
    ("eval-retrieval --locomo {d}/locomo_cat_bool.json --methods bm25", "unknown category"),
    ("eval-retrieval --locomo {d}/locomo_evidence_str.json --methods bm25", "'evidence' should be a list"),
    ("eval-retrieval --locomo {d}/locomo_evidence_dicts.json --methods bm25", "'evidence' should be a list"),
    ("eval-retrieval --locomo {d}/locomo_question_int.json --methods bm25", "'question' should be str"),
    ("eval-retrieval --locomo {d}/deep.json --methods bm25", "nested too deeply"),
    # --- glong eval-msc
    ("eval-msc --msc {d}/missing", "no such file"),
    ("eval-msc --msc {d}/garbage.json --generator echo", "invalid JSON|format"),
    ("eval-msc --conversations 0 --generator echo", "outside"),
    ("eval-msc --turns-per-session -1 --generator echo", "outside"),
    ("eval-msc --max-sessions 0 --generator echo", "outside"),
    ("eval-msc --max-new-tokens 0 --generator echo", "outside"),
    ("eval-msc --price-in nan --generator echo", "not a finite number"),
    ("eval-msc --price-out -1 --generator echo", "outside"),
    ("eval-msc --seed -4 --generator echo", "outside"),
    ("eval-msc --responder msc-lora --generator echo", "needs --generator local and --msc"),
    ("eval-msc --responder msc-recall --generator echo", "needs --generator local and --msc"),
    ("eval-msc --generator openai", "needs --base-url"),
    ("eval-msc --generator echo --methods telepathy", "invalid choice"),
    ("eval-msc --generator echo --context-scope week", "invalid choice"),
    ("eval-msc --generator echo --resume", "needs --checkpoint"),
    ("eval-msc --generator echo --msc {d}/conv_no_sessions.json", "no sessions"),
    # --- glong extract / train-extractor / score
    ("extract {d}/missing.json --out {d}/x.jsonl", "no such file"),
    ("extract {conv} --out {d}/x.jsonl --batch-size 0", "outside"),
    ("extract {conv} --out {d}/x.jsonl --sessions 99", "no session"),
    ("extract {conv} --out {d}/x.jsonl --sessions -1", "outside"),
    ("extract {d}/binary.json --out {d}/x.jsonl", "not UTF-8"),
    ("extract {conv}", "required: --out"),
    ("train-extractor --out {d}/adapter --max-steps 0", "outside"),
    ("train-extractor --out {d}/adapter --data {d}/missing.jsonl", "no such file"),
    ("train-extractor --out {d}/adapter --data {d}/garbage.json", "invalid JSON|format"),
    ("score {d}/missing.jsonl --out {d}/x.jsonl", "no such file"),
    ("score {d}/extract_rows_missing.jsonl --out {d}/x.jsonl", "missing key 'session'"),
    ("score {d}/extract_rows_no_triples.jsonl --out {d}/x.jsonl", "no triples to score"),
    ("score {d}/extract_rows_bad_triple.jsonl --out {d}/x.jsonl", "string subject"),
    ("score {d}/deep.jsonl --out {d}/x.jsonl", "nested too deeply|missing key"),
    # --- the reliability sweep (issue 25): bad fields, bad --out targets, one line each
    ("inspect {d}/loop.json", "loop"),                                                              # A06
    ("inspect {d}/conv_session_str.json", "'session' should be int"),                               # B05
    ("inspect {d}/conv_gap_str.json", "'seconds_since_previous' should be"),                        # B06
    ("inspect {d}/conv_gap_huge.json", "'seconds_since_previous' should be a finite number"),
    ("build {d}/conv_date_int.json --out {d}/new --gold --no-salience", "'date' should be str"),      # B07
    ("build {d}/conv_turnid_list.json --out {d}/new --gold --no-salience", "'id' should be str"),     # B08
    ("inspect {d}/conv_bigint.json", "number too large"),                                           # B04
    ("build {d}/conv_surrogate.json --out {d}/new --gold --no-salience", "lone UTF-16 surrogate"),  # B03
    ("inspect {d}/parlai_bad_time.jsonl", "'time_num' should be"),                                  # B10
    ("inspect {d}/schema_bad.json", "expected a JSON object"),                                      # B11
    ("inspect {d}/episodes_bad.json", "record 2: expected a JSON object"),                          # B12
    ("inspect {d}/msc_personas_int.jsonl", "'init_personas' should be list"),                       # B13
    ("build {conv} --out {mem} --triples {d}/triples_speaker_int.jsonl", "'speaker' should be text"),  # C01
    ("build {conv} --out {mem} --triples {d}/triples_session_str.jsonl", "'session' should be an integer"),  # C02
    ("build {conv} --out {mem} --triples {d}/triples_turnid_list.jsonl", r"turn id \['S1:1'\]"),    # C03
    ("build {conv} --out {mem} --triples {d}/triples_text_int.jsonl", "'text' should be text"),     # C04
    ("build {conv} --out {mem} --triples {d}/triples_session_99.jsonl", "session 99 is not the session"),  # C05
    ("build {conv} --out {d}/link --gold --no-salience", "symlink"),
    ("eval-retrieval --probes --methods bm25 --checkpoint {d}", "is a folder"),                     # E08
    ("eval-retrieval --probes --methods ''", "--methods is empty"),                                 # G24
    ("eval-msc --generator echo --out {d}", "is a folder"),                                         # G10
    ("eval-msc --generator echo --out {d}/fifo", "named pipe"),                                     # G13
    ("eval-msc --generator echo --out {d}/link.json", "symlink"),                                   # G11
    ("extract {conv} --out {d}/fifo", "named pipe"),                                                # G12-13
    ("score {d}/extract_rows_no_triples.jsonl --out {d}/link.json", "symlink"),
    ("score {d}/score_session_dict.jsonl --out {d}/x.jsonl", "'session' should be an integer"),     # G17
    ("train-extractor --out {d} --max-steps 1", "did not write"),                                   # G14
    ("train-extractor --out {d}/a_file --max-steps 1", "not a folder"),                             # G15
    ("train-extractor --out {d}/link --max-steps 1", "symlink"),
    ("notebooks --smoke --only 00 --out {d}/a_file", "not a folder"),                               # G16
    ("notebooks --smoke --only", "expected at least one argument"),                                 # G19
    ("query {mem} hello --now -1e12", "--option=VALUE"),                                            # G04
    # --- the reliability sweep, round 3
    ("memory {d}/mem_v99", "written by memory format 99; this glong reads up to format 2: upgrade glong_lib"),  # D09
    ("build {conv} --out {d}/mem_v99 --gold --no-salience", r"format 99; this glong reads up to format 2(?!.*--force)"),
    ("build {conv} --out {d}/mem_v99 --gold --no-salience --force", r"format 99;(?!.*--force)"),
    ("eval-retrieval --longmemeval {d}/lme_dup.json --methods bm25 --k 1", "question_id 'q1' appears twice"),  # L03
    ("eval-retrieval --probes {d}/probes_dupid.jsonl --methods bm25", "probe id 'p1' appears twice"),        # N04
    ("eval-retrieval --probes --methods bm25 --conversations-dir {d}/dupconvs", "conversation id 'c01' appears twice"),
    ("eval-retrieval --locomo {d}/locomo_dupsession.json --methods bm25", "'session_1' and 'session_01' are both "
                                                                          "session 1"),                      # L09
    ("inspect {d}/locomo_dupsession.json", "are both session 1"),
    ("inspect {d}/locomo_bigkey.json", "is not a session number"),                                          # L08
    ("inspect {d}/locomo_dupid.json", "sample_id 's1' appears twice"),
    ("inspect {d}/msc_dupid.jsonl", "conversation id 'm' appears twice"),
    ("inspect {d}/cc_null.jsonl", "'first_session_dialogue' item 3 should be str, got NoneType"),            # L10
    ("inspect {d}/cc_object.jsonl", "'second_session_dialogue' item 1 should be str, got dict"),
    ("inspect {d}/cc_number.jsonl", "'first_session_dialogue' item 1 should be str, got int"),
    ("inspect {d}/cc_speaker_null.jsonl", "'first_session_speakers' item 1 should be str"),
    ("inspect {d}/cc_dupid.jsonl", "dataID 'e1' appears twice"),
    ("inspect {d}/cc_gap_huge.jsonl", "time_interval' item 2 .*should be a finite number"),                  # L06
    ("inspect {d}/ldagent_nan.json", "'time_pass' should be a finite number"),                              # L07
    ("inspect {d}/ldagent_neginf.json", "'time_pass' should be a finite number"),
    ("inspect {d}/ldagent_huge.json", "'time_pass' should be a finite number"),
    ("inspect {d}/conv_gap_1e308.json", "'seconds_since_previous' should be a finite number .*at most"),     # N02
    ("build {d}/conv_gaps_sum.json --out {d}/new --gold --no-salience", "gaps add up to"),
    ("inspect {d}/parlai_gap_huge.jsonl", "'time_num' should be a finite number"),
    ("eval-retrieval --probes --methods bm25 --k 1001", "--k 1001 is above 1000"),                          # K02/K03
    ("query {mem} hello --wait -1", "outside"),
    ("query {mem} hello --wait nan", "not a finite number"),
    ("memory {mem} --wait x", "not a number"),
    # --- the command itself
    ("", "required: COMMAND|the following arguments are required"),
    ("fly", "invalid choice"),
    ("notebooks --only 99", "no notebook"),
]


def _tree(folder: Path) -> dict:
    """Every path under ``folder``: a file's bytes, a link's target, a FIFO's kind."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_symlink():
            out[str(p.relative_to(folder))] = ("link", os.readlink(p))
        elif p.is_fifo():
            out[str(p.relative_to(folder))] = "fifo"
        elif p.is_file():
            out[str(p.relative_to(folder))] = p.read_bytes()
    return out


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad-inputs")
    for name, content in FILES.items():
        (d / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    os.mkfifo(d / "fifo")  # a reader that never comes: replacing it would lose what its writer expects
    (d / "loop.json").symlink_to(d / "loop.json")
    (d / "link").symlink_to(d / "a_file")
    (d / "link.json").symlink_to(d / "a_file")
    mem = GraphMemory(encoder=HashEncoder(32))
    mem.add_triples([Triple("a", "r", "b"), Triple("b", "r", "c"), Triple("c", "r", "d"), Triple("e", "r", "b")],
                    10.0, session=1)
    mem.save(d / "mem")
    (d / "dupconvs").mkdir()  # two files holding one conversation id
    for name in ("a.json", "b.json"):
        shutil.copy(CONV, d / "dupconvs" / name)
    shutil.copytree(d / "mem", d / "mem_v99")  # a memory written by a newer glong (not damaged)
    manifest = json.loads((d / "mem_v99" / "manifest.json").read_text())
    (d / "mem_v99" / "manifest.json").write_text(json.dumps({**manifest, "format_version": 99}))
    return d


@pytest.mark.parametrize("args, message", CASES, ids=[c[0][:60] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(work, args, message, capsys):
    import re
    import shlex

    before = _tree(work)
    argv = [a.format(d=work, mem=work / "mem", conv=CONV) for a in shlex.split(args)]
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's usage errors
        code = e.code
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2, (args, captured.err[-500:])
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err[-500:]
    assert re.search(message, lines[0]), lines[0]
    assert _tree(work) == before, "a file changed"


def test_non_utf8_query_is_a_clean_error(work, capsys):
    query = b"caf\xe9".decode("utf-8", "surrogateescape")  # what Python gives for undecodable argv bytes
    assert main(["query", str(work / "mem"), query]) == 2
    err = capsys.readouterr().err.strip()
    assert "not valid text" in err and "\n" not in err


def test_json_output_has_no_nan(tmp_path, capsys):
    """--json output is valid JSON even where a statistic is undefined."""
    from glong_lib.commands.common import print_table

    print_table({"mean weight": float("nan"), "rows": [float("inf"), 1.0]}, as_json=True)
    assert json.loads(capsys.readouterr().out) == {"mean weight": None, "rows": [None, 1.0]}


def test_build_force_replaces_a_memory_with_an_empty_one(work, tmp_path, capsys):
    import shutil

    target = tmp_path / "mem"
    shutil.copytree(work / "mem", target)
    args = ["build", CONV, "--out", str(target), "--triples", str(work / "triples_other_conv.jsonl")]
    assert main(args) == 2 and GraphMemory.load(target, encoder=HashEncoder(32)).stats()["edges"] == 4
    assert main(args + ["--force"]) == 0
    assert GraphMemory.load(target, encoder=HashEncoder(32)).stats()["edges"] == 0
    capsys.readouterr()
    os.sync()


# --------------------------------------------------------------------------- the reliability sweep (issue 25)

def _one_error_line(capsys) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_build_force_replaces_a_damaged_memory(work, tmp_path, capsys):
    """Sweep D04/D12: a memory that does not load is named, and --force replaces it; a link at one of
    its file names is removed, never written through (the file it points to is untouched)."""
    import shutil

    target = tmp_path / "mem"
    shutil.copytree(work / "mem", target)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's")
    data = next(target.glob("memory-*.json"))
    data.unlink()
    data.symlink_to(victim)
    args = ["build", CONV, "--out", str(target), "--triples", str(work / "triples_other_conv.jsonl")]
    assert main(args) == 2 and "pass --force" in _one_error_line(capsys)
    assert main(args + ["--force"]) == 0
    assert GraphMemory.load(target, encoder=HashEncoder(32)).stats()["edges"] == 0
    assert victim.read_text() == "the user's" and not any(p.is_symlink() for p in target.iterdir())


def _probes_run(tmp_path, probes: Path, resume: bool = False) -> list[str]:
    args = ["eval-retrieval", "--probes", str(probes), "--methods", "bm25", "--k", "1", "--json",
            "--checkpoint", str(tmp_path / "ck.jsonl")]
    return args + (["--resume"] if resume else [])


def test_resume_refuses_a_checkpoint_of_other_inputs_or_a_damaged_unit(tmp_path, capsys):
    """Sweep E09: the checkpoint records its inputs' content, so --resume after the probes file
    changed is refused (it reported the old numbers); E07: a damaged unit is one line."""
    probes = tmp_path / "probes.jsonl"
    probes.write_bytes((DATA / "probes.jsonl").read_bytes())
    assert main(_probes_run(tmp_path, probes)) == 0
    capsys.readouterr()
    lines = (tmp_path / "ck.jsonl").read_text().splitlines()
    (tmp_path / "ck.jsonl").write_text("\n".join(lines[:2] + [json.dumps({"key": "x", "value": 5})]) + "\n")
    assert main(_probes_run(tmp_path, probes, resume=True)) == 2
    assert "corrupt checkpoint" in _one_error_line(capsys)
    probes.write_text(probes.read_text().replace("Maya", "Mia"))
    assert main(_probes_run(tmp_path, probes, resume=True)) == 2
    assert "other settings" in _one_error_line(capsys)


def test_eval_msc_json_is_strict_json(capsys):
    """Sweep G09: an infinite cost is printed as null, never as Infinity (not JSON)."""
    args = ["eval-msc", "--generator", "echo", "--conversations", "1", "--turns-per-session", "1", "--no-salience",
            "--methods", "no-history", "bm25-rag", "--price-in", "1e308", "--json"]
    assert main(args) == 0

    def refuse(name):
        raise AssertionError(f"{name} in the output")

    json.loads(capsys.readouterr().out, parse_constant=refuse)


def test_glong_cache_that_is_a_file_is_one_line(work, monkeypatch, capsys):
    """Sweep F01: the salience model's cache folder cannot be created."""
    monkeypatch.setenv("GLONG_CACHE", str(work / "a_file"))
    assert main(["build", CONV, "--out", str(work / "new"), "--gold"]) == 2
    assert "set GLONG_CACHE to a writable folder" in _one_error_line(capsys)
    assert not (work / "new").exists()


def test_unknown_glong_profile_lists_the_names(work, monkeypatch, capsys):
    """Sweep F07: checked before any notebook starts (it failed inside the kernel, 41 lines)."""
    monkeypatch.setenv("GLONG_PROFILE", "gpt5")
    assert main(["notebooks", "--smoke", "--only", "00", "--out", str(work / "nb")]) == 2
    assert "unknown profile 'gpt5' (choose from offline, hub, paper)" in _one_error_line(capsys)
