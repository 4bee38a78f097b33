"""``--device``: local stages load on the device asked for (the GPU by default, when there is one) and
a step that runs on the CPU says so in one line."""

from __future__ import annotations

import pytest


def test_a_step_on_the_cpu_says_so_in_one_line(capsys, monkeypatch):
    import torch

    from glong_lib.commands.devices import note_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert note_device(None, "salience") == "cpu"
    assert note_device("cpu", "salience and extraction") == "cpu"
    assert capsys.readouterr().err.splitlines() == ["note: salience runs on the CPU (no GPU here)",
                                                    "note: salience and extraction run on the CPU"]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert note_device(None, "salience") == "cuda" and capsys.readouterr().err == ""


def test_the_source_loads_its_models_on_the_device(monkeypatch, capsys):
    import torch

    from glong_lib.commands import devices

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    seen = {}
    monkeypatch.setattr(devices, "load_scorer", lambda **kw: seen.setdefault("scorer", kw))
    monkeypatch.setattr(devices, "load_extractor", lambda **kw: seen.setdefault("extractor", kw))
    source = devices.device_source("model", profile="offline", device="cuda")
    source.scorer, source.extractor
    assert seen["scorer"]["device"] == "cuda" and seen["extractor"]["device"] == "cuda"
    assert capsys.readouterr().err == ""  # on the GPU: no note


def test_device_is_an_option_of_eval_msc_and_extract():
    import argparse

    from glong_lib.commands import evaluate, extractor

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    evaluate.register(sub)
    extractor.register(sub)
    assert parser.parse_args(["eval-msc", "--device", "cuda"]).device == "cuda"
    with pytest.raises(SystemExit):
        parser.parse_args(["extract", "x", "--out", "y", "--device", "tpu"])
