"""The ``glong`` command: inspect prints tables or JSON; bad input gives exit 2 and one line."""

from __future__ import annotations

import json

from testdata import DATA

from glong_lib.cli import main


def test_inspect_table(capsys):
    assert main(["inspect", str(DATA / "conversations" / "c01.json")]) == 0
    out = capsys.readouterr().out
    assert "glong-conversation" in out and "sessions" in out


def test_inspect_json(capsys):
    assert main(["inspect", "--json", str(DATA / "probes.jsonl")]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["format"] == "glong-probes" and stats["probes"] >= 40


def test_inspect_bad_file_exit_2(tmp_path, capsys):
    path = tmp_path / "broken.json"
    path.write_text('{"format": "glong-conversation", "id": ')
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("glong inspect: error:") and "broken.json" in err and "\n" not in err


def test_inspect_missing_file_exit_2(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_inspect_real_locomo_json(real_data, capsys):
    assert main(["inspect", "--json", str(real_data / "locomo/locomo_dev.json")]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["questions: multi-hop"] == 142 and stats["questions: single-hop"] == 418
