"""Benchmarks take split names, not file names, and record the split beside their numbers; the
split is found under ``$GLONG_REAL_DATA`` in the layout ``glong data prepare`` writes (fixtures in
the release schemas, written into ``tmp_path``: see ``test_data_prepare``)."""

from __future__ import annotations

import argparse
import hashlib
import json

import pytest
from test_data_prepare import ALL_LOCOMO, write_locomo, write_msc

from benchmarks import _common as H
from glong_lib.cli import main
from glong_lib.datasets import REAL_DATA_ENV, prepare


@pytest.fixture
def prepared(tmp_path, monkeypatch):
    """A prepared folder (LoCoMo, shuffled release order; MSC valid and test) named by $GLONG_REAL_DATA."""
    monkeypatch.setenv("GLONG_CACHE", str(tmp_path / "cache"))
    write_msc(tmp_path / "dl", split="valid")
    write_msc(tmp_path / "dl", split="test", convs=(5,))
    out = tmp_path / "prepared"
    prepare(out, locomo=write_locomo(tmp_path / "locomo10.json", list(reversed(ALL_LOCOMO))), msc=tmp_path / "dl")
    monkeypatch.setenv(REAL_DATA_ENV, str(out))
    return out


def test_real_split_finds_a_split_or_none(prepared, monkeypatch):
    report = json.loads(H.real_split("locomo-report").read_text())
    assert [s["sample_id"] for s in report] == ["conv-42", "conv-43"]
    assert H.real_split("locomo-test") == prepared / "locomo" / "locomo_test.json"
    monkeypatch.delenv(REAL_DATA_ENV)
    assert H.real_split("locomo-report") is None


def test_locomo_benchmark_records_the_split_its_numbers_come_from(prepared, tmp_path):
    seen = []
    args = argparse.Namespace(quick=False, split="locomo-report", json=tmp_path / "r.json", results_dir=tmp_path)
    H.run_locomo_or_probes(args, lambda a: seen.append(H.real_split(a.split)) or {"Hit@5": 0.5}, lambda a: {},
                           "bench_x", {"95% CI": "questions"})
    out = json.loads((tmp_path / "r.json").read_text())
    record = json.loads((tmp_path / "bench_x.json").read_text())  # the result file: the split's file hashed
    assert record["figures"] == out and record["resamples"] == {"95% CI": "questions"}
    assert list(record["inputs"].values()) == [hashlib.sha256(seen[0].read_bytes()).hexdigest()]
    assert out["data"]["split"] == "locomo-report" and out["data"]["samples"] == ["conv-42", "conv-43"]
    assert out["Hit@5"] == 0.5 and json.loads(seen[0].read_text())[0]["sample_id"] == "conv-42"


def test_graph_benchmark_splits_selection_and_report_by_sample_id():
    from benchmarks.bench_graph import split

    class Result:
        def subset(self, ids):
            return list(ids)

    ids = ["conv-43", "conv-26", "conv-42", "conv-41", "conv-30"]  # not the release's order
    sel, rep, _, _ = split(Result(), ids)
    assert sel == ["conv-26", "conv-41", "conv-30"] and rep == ["conv-43", "conv-42"]


def test_msc_benchmark_takes_the_split_name(prepared):
    from benchmarks.bench_msc import eval_msc_args

    args = eval_msc_args(["--split", "msc-test"])
    assert args[args.index("--msc") + 1] == str(prepared / "msc" / "msc4_test.jsonl") and "--split" not in args
    args = eval_msc_args([])
    assert args[args.index("--msc") + 1] == str(prepared / "msc" / "msc4_valid.jsonl")


def test_eval_retrieval_takes_a_locomo_split_name_and_says_it(prepared, capsys):
    assert main(["eval-retrieval", "--locomo", "locomo-select", "--methods", "bm25", "--k", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["data"]["split"] == "locomo-select" and out["data"]["samples"] == ["conv-26", "conv-30", "conv-41"]
    assert out["metrics"][0]["questions"] == 3  # one question per fixture conversation


def test_eval_retrieval_missing_split_is_one_line(prepared, capsys, monkeypatch):
    (prepared / "locomo" / "locomo_test.json").unlink()
    assert main(["eval-retrieval", "--locomo", "locomo-test", "--methods", "bm25"]) == 2
    err = capsys.readouterr().err
    assert "split 'locomo-test' needs" in err and err.count("\n") == 1
