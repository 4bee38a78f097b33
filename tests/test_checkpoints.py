"""Long runs keep their work: eval-retrieval and eval-msc append each finished unit to a
checkpoint and resume from it; a line cut short by a kill is run again; other settings are refused."""

from __future__ import annotations

import json

import pytest

from glong_lib.checkpoints import Checkpoint
from glong_lib.cli import main
from glong_lib.errors import DataError


def test_checkpoint_round_trip_and_a_cut_last_line(tmp_path):
    path = tmp_path / "c.jsonl"
    c = Checkpoint(path, {"k": 5})
    c.add("a", {"x": 1})
    c.add("b", [1, 2])
    with open(path, "a") as f:
        f.write('{"key": "c", "val')  # killed mid-write
    again = Checkpoint(path, {"k": 5}, resume=True)
    assert again.done == {"a": {"x": 1}, "b": [1, 2]}
    with pytest.raises(DataError, match="other settings"):
        Checkpoint(path, {"k": 6}, resume=True)
    with pytest.raises(DataError, match="pass --resume"):
        Checkpoint(path, {"k": 5})


def test_eval_retrieval_resumes_with_the_same_numbers(tmp_path, capsys):
    ck = tmp_path / "probes.ck.jsonl"
    args = ["eval-retrieval", "--probes", "--methods", "bm25", "--k", "1,5", "--json"]
    assert main(args + ["--checkpoint", str(ck)]) == 0
    first = json.loads(capsys.readouterr().out)
    lines = ck.read_text().splitlines()
    assert len(lines) == 1 + first["metrics"][0]["questions"]
    ck.write_text("\n".join(lines[: len(lines) // 2]) + "\n" + lines[len(lines) // 2][:15])  # a kill half-way
    assert main(args + ["--checkpoint", str(ck), "--resume"]) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert len(ck.read_text().splitlines()) >= len(lines)
    assert main(args[:-1] + ["--k", "1,3", "--checkpoint", str(ck), "--resume"]) == 2  # other settings
    assert "other settings" in capsys.readouterr().err


def test_eval_msc_resume_runs_nothing_twice(tmp_path, capsys, monkeypatch):
    ck = tmp_path / "msc.ck.jsonl"
    args = ["eval-msc", "--generator", "echo", "--conversations", "1", "--turns-per-session", "1",
            "--methods", "no-history", "bm25-rag", "--triples", "gold", "--no-salience", "--json"]
    assert main(args + ["--checkpoint", str(ck)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert len(ck.read_text().splitlines()) == 1 + 2  # header + one unit per (conversation, method)

    from glong_lib.generation import MemoryEchoGenerator

    def no_more(self, messages):
        raise AssertionError("a finished unit ran again")

    monkeypatch.setattr(MemoryEchoGenerator, "generate", no_more)
    assert main(args + ["--checkpoint", str(ck), "--resume"]) == 0
    again = json.loads(capsys.readouterr().out)
    again["wall_s"], first["wall_s"] = None, None
    again.pop("run"), first.pop("run")  # wall time and machine load: this run's, not the results'
    assert again == first
