"""The settings objects are the one home of every retrieval knob: the command line's options are made
from the dataclass fields, so their defaults, ranges and choices cannot disagree with the library;
and the command line's help starts without torch."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import fields, replace

import pytest

from glong_lib.cli import build_parser
from glong_lib.commands.common import option_name
from glong_lib.config import PAPER_RETRIEVAL, PROFILES, RETRIEVAL_PRESETS, RetrievalSettings, retrieval_preset
from glong_lib.errors import DataError
from glong_lib.memory import GraphMemory, HashEncoder
from glong_lib.retrieval import AssociativeRetriever

FIELDS = {f.name: f for f in fields(RetrievalSettings)}


def _sub(name):
    """The subcommand parser called ``name``."""
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return action.choices[name]


def _parse(command, *options):
    argv = {"query": ["memdir", "text"], "eval-retrieval": ["--probes"], "eval-msc": []}[command]
    return _sub(command).parse_args([*argv, *options])


@pytest.mark.parametrize("command", ["query", "eval-retrieval", "eval-msc"])
def test_every_retrieval_field_is_an_option_of_the_command(command):
    flags = {o for a in _sub(command)._actions for o in a.option_strings}
    skipped = {"k"} if command == "eval-retrieval" else set()  # K is the deepest --k cut-off there
    for name, f in FIELDS.items():
        if name not in skipped:
            assert option_name(f) in flags, f"{command} has no option for RetrievalSettings.{name}"


@pytest.mark.parametrize("preset", list(RETRIEVAL_PRESETS))
def test_no_option_given_means_the_presets_own_values(preset):
    """One source of defaults: options left out leave every field as the preset has it."""
    from glong_lib.commands.common import settings_from_args

    args = _parse("query", "--preset", preset)
    assert settings_from_args(args, retrieval_preset(args.preset)) == RETRIEVAL_PRESETS[preset]


def test_eval_msc_agents_get_the_retrieval_options():
    """067108f: eval-msc had no retrieval options, and its agents always got the paper's settings."""
    from glong_lib.commands.evaluate import build_agents
    from glong_lib.generation import MemoryEchoGenerator

    args = _parse("eval-msc", "--preset", "recommended", "--hops", "2", "--methods", "glong", "dense-rag")
    agents = build_agents(args, MemoryEchoGenerator(), None)
    assert agents["G-Long"].settings == replace(RETRIEVAL_PRESETS["recommended"], hops=2)
    assert agents["Dense RAG"].k == RETRIEVAL_PRESETS["recommended"].k
    plain = build_agents(_parse("eval-msc", "--methods", "glong"), MemoryEchoGenerator(), None)
    assert plain["G-Long"].settings == PROFILES["offline"].retrieval  # no option: the profile's


def _bounds(f):
    meta = f.metadata
    return meta.get("low"), meta.get("high")


@pytest.mark.parametrize("name", [n for n, f in FIELDS.items() if _bounds(f) != (None, None)])
def test_the_option_and_the_dataclass_refuse_the_same_values(name, capsys):
    """At each end of the field's range: the value itself is taken by both, one step past it is
    refused by both (a usage error on the command line, a DataError from the dataclass)."""
    f = FIELDS[name]
    low, high = _bounds(f)
    step = 1 if isinstance(f.default, int) else 1e-3
    is_tuple = isinstance(f.default, tuple)

    def as_value(x):
        return tuple([x] * len(f.default)) if is_tuple else (int(x) if step == 1 else x)

    def as_text(x):
        return ",".join([str(x)] * len(f.default)) if is_tuple else str(int(x) if step == 1 else x)

    for edge, outside in ((low, None if low is None else low - step), (high, None if high is None else high + step)):
        if edge is None:
            continue
        assert getattr(_parse("query", option_name(f), as_text(edge)), name) == as_value(edge)
        replace(PAPER_RETRIEVAL, **{name: as_value(edge)})  # taken
        with pytest.raises(SystemExit) as usage:
            _parse("query", option_name(f), as_text(outside))
        assert usage.value.code == 2
        with pytest.raises(DataError):
            replace(PAPER_RETRIEVAL, **{name: as_value(outside)})
    capsys.readouterr()


@pytest.mark.parametrize("name", [n for n, f in FIELDS.items() if f.metadata.get("choices")])
def test_the_option_offers_exactly_the_dataclass_choices(name):
    f = FIELDS[name]
    action = next(a for a in _sub("query")._actions if a.dest == name)
    assert tuple(action.choices) == tuple(f.metadata["choices"])
    with pytest.raises(DataError):
        replace(PAPER_RETRIEVAL, **{name: "not-a-choice"})


def test_hops_zero_is_a_usage_error_not_a_late_failure(capsys):
    """The CLI once took --hops 0 and failed after loading the memory; now the option refuses it."""
    with pytest.raises(SystemExit) as usage:
        _parse("query", "--hops", "0")
    assert usage.value.code == 2 and "hops" not in capsys.readouterr().out


def test_the_retriever_reads_its_settings_object():
    memory = GraphMemory(encoder=HashEncoder(dim=16))
    r = AssociativeRetriever(memory, replace(PAPER_RETRIEVAL, hops=2, k=4))
    assert r.settings.hops == 2 and r.params()["k"] == 4 and r.params()["betas"] == [0.5, 0.3, 0.2]
    with pytest.raises(DataError, match="RetrievalSettings"):
        AssociativeRetriever(memory, {"hops": 2})


def test_every_profile_names_its_retrieval_settings():
    assert all(isinstance(p.retrieval, RetrievalSettings) for p in PROFILES.values())
    assert PROFILES["offline"].retrieval == PAPER_RETRIEVAL


def test_betas_from_json_become_a_tuple_and_bad_ones_are_refused():
    assert RetrievalSettings(betas=[0.5, 0.5, 0.0]).betas == (0.5, 0.5, 0.0)
    for bad in ([0.5, 0.5], "abc", [0.5, "x", 0.1], [2.0, 0.0, 0.0]):
        with pytest.raises(DataError):
            RetrievalSettings(betas=bad)


HELP_PROBE = """
import sys
from glong_lib.cli import build_parser
parser = build_parser()
action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
loaded = {}
for argv in [["--help"]] + [[name, "--help"] for name in action.choices]:
    try:
        build_parser().parse_args(argv)
    except SystemExit:
        pass
    loaded[" ".join(argv)] = sorted(m for m in ("torch", "transformers", "sentence_transformers", "peft")
                                    if m in sys.modules)
print(__import__("json").dumps(loaded))
"""


def test_help_of_every_command_imports_no_torch():
    """``glong --help`` and ``glong X --help`` print without loading the model stack (torch takes
    seconds to import); counted in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", HELP_PROBE], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out.strip().splitlines()[-1])
    assert len(loaded) > 5, loaded
    assert {argv: mods for argv, mods in loaded.items() if mods} == {}


def test_the_salience_layer_travels_from_the_command_line_to_the_scorer(monkeypatch):
    """``--salience-layer`` sets ``profile.summarizer.decoder.layer``, which ``load_scorer`` hands to the
    decoder source (the model load itself is replaced: only the settings are checked here)."""
    from glong_lib import salience
    from glong_lib.commands.common import profile_from

    seen = {}
    monkeypatch.setattr(salience, "load_decoder_scorer", lambda **kw: seen.update(kw) or "scorer")
    args = _sub("build").parse_args(["conversation.json", "--out", "mem", "--salience-layer", "7"])
    profile = profile_from(args)
    assert profile.summarizer.decoder.layer == 7
    assert salience.load_scorer(profile) == "scorer" and seen["settings"].layer == 7
    seen.clear()
    salience.load_scorer("offline")
    assert seen["settings"] == salience.DEFAULT_DECODER_SOURCE  # no layer named: the source's measured default
    with pytest.raises(SystemExit):
        _sub("build").parse_args(["conversation.json", "--out", "mem", "--salience-layer", "300"])
