"""Issue 37 item 2: one settings object per stage, in ``config`` only. The profiles' values are the
ones they had before the settings moved (``profile_snapshot.json``, taken from the tree before the
move); every field of every stage's settings is read somewhere in the library; and each command's
options for a stage are made from the dataclass, so option and field agree on defaults, ranges and
choices."""

from __future__ import annotations

import ast
import json
from dataclasses import asdict, fields, is_dataclass, replace

import pytest
from testdata import ROOT

from glong_lib import config
from glong_lib.cli import build_parser
from glong_lib.commands.common import STAGE_DEST, as_option_text, profile_from
from glong_lib.errors import DataError

SNAPSHOT = json.loads((ROOT / "tests" / "profile_snapshot.json").read_text())

#: Every stage's settings class (the Profile's fields, nested ones included).
STAGE_CLASSES = (config.EndpointSettings, config.ExtractorSettings, config.DecoderSourceSettings,
                 config.SummarizerConfig, config.SummarizerSettings, config.RetrievalSettings,
                 config.GeneratorSettings, config.MemorySettings)

#: Where a value of the snapshot lives now: moved fields (old path -> new path).
MOVED = {("summarizer", "layer"): None}  # None meant "the decoder source's layer": now summarizer.decoder.layer
#: Fields of the suite summarizer's recipe that were removed as dead (issue 37 item 6), with the value they had.
RETIRED = {"freeze": False, "vocab": "corpus"}


def _plain(value):
    return json.loads(json.dumps(value, sort_keys=True, default=lambda v: sorted(v)))


def _leaves(tree, path=()):
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _leaves(v, (*path, k))
    else:
        yield path, tree


def _lookup(tree, path):
    for key in path:
        tree = tree[key]
    return tree


@pytest.mark.parametrize("name", sorted(SNAPSHOT["profiles"]))
def test_every_profile_keeps_its_values(name):
    """Each value a profile had before the move is still there at the same place (new fields only
    add); the one moved field, ``summarizer.layer`` (None: the decoder source's measured layer), is now
    ``summarizer.decoder.layer`` with that layer as its value."""
    base, smoke = name.split(" (smoke)")[0], name.endswith("(smoke)")
    profile = config.PROFILES[base].smoke() if smoke else config.PROFILES[base]
    now = _plain(asdict(profile))
    for path, old in _leaves(SNAPSHOT["profiles"][name]):
        if path in MOVED:
            assert old is None and profile.summarizer.decoder == config.DecoderSourceSettings()
            assert now["summarizer"]["decoder"]["layer"] == SNAPSHOT["stage defaults"]["decoder source"]["layer"]
            continue
        assert _lookup(now, path) == old, (name, path)


def test_every_stage_default_is_kept():
    before = SNAPSHOT["stage defaults"]
    offline = config.PROFILES["offline"]
    assert _plain(asdict(offline.summarizer.decoder)) == before["decoder source"]
    assert _plain({**asdict(offline.summarizer.training), **RETIRED}) == before["summarizer training"]
    assert _plain({**asdict(config.SMOKE_SUMMARIZER), **RETIRED}) == before["summarizer training (smoke)"]
    memory = offline.memory
    assert [memory.policy, memory.merge_threshold, sorted(memory.single_valued)] == [
        before["memory"]["policy"], before["memory"]["merge_threshold"], before["memory"]["single_valued"]]


# --------------------------------------------------------------------------- every field is read

def _attributes_read(skip=("config",)) -> set[str]:
    """Every ``x.name`` attribute read (and ``getattr(x, "name")``) in the library outside the top-level
    modules or packages named in ``skip``."""
    names = set()
    for path in (ROOT / "glong_lib").rglob("*.py"):
        if path.relative_to(ROOT / "glong_lib").with_suffix("").parts[0] in skip:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                names.add(node.attr)
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr" and len(node.args) > 1
                  and isinstance(node.args[1], ast.Constant)):
                names.add(node.args[1].value)
    return names


def unread_fields(classes, read: set[str]) -> list[str]:
    return [f"{cls.__name__}.{f.name}" for cls in classes for f in fields(cls) if f.name not in read]


def test_every_field_of_every_stage_is_read_outside_config():
    assert unread_fields(STAGE_CLASSES, _attributes_read()) == []


def test_the_read_check_fires_on_a_field_nobody_reads():
    """Control: a settings class with a field the library never reads is reported."""
    from dataclasses import make_dataclass

    Fake = make_dataclass("Fake", [("hops", int, 1), ("never_read_knob_xyz", int, 0)])
    assert unread_fields([Fake], _attributes_read()) == ["Fake.never_read_knob_xyz"]


# --------------------------------------------------------------------------- options agree with fields

def _sub(name):
    action = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    return action.choices[name]


#: Each command that takes a stage's options, the stage, what it leaves out, and its positional arguments.
STAGE_COMMANDS = {
    ("build", "memory"): ((), ["c.json", "--out", "m"]),
    ("build", "summarizer"): (("training",), ["c.json", "--out", "m"]),
    ("score", "summarizer"): (("training",), ["rows.jsonl", "--out", "o.jsonl"]),
    ("eval-msc", "summarizer"): (("training",), []),
    ("eval-msc", "generator"): (("model",), []),   # --model: the endpoint's model name or a local folder
    ("eval-retrieval", "summarizer"): (("training",), ["--probes"]),
    ("train-extractor", "extractor"): (("max_new_tokens", "endpoint"), ["--out", "a"]),
}


def _stage_fields(settings, path, skip):
    for f in fields(settings):
        value = getattr(settings, f.name)
        if f.name in skip or isinstance(value, config.EndpointSettings):
            continue
        if is_dataclass(value):
            yield from _stage_fields(value, (*path, f.name), skip)
        else:
            yield (*path, f.name), f, value


def _cases():
    for (command, stage), (skip, argv) in STAGE_COMMANDS.items():
        settings = getattr(config.PROFILES["offline"], stage)
        for path, f, value in _stage_fields(settings, (stage,), skip):
            yield pytest.param(command, argv, path, f, value, id=f"{command}-{'.'.join(path)}")


def _action(command, path):
    dest = STAGE_DEST + STAGE_DEST.join(path)
    return next((a for a in _sub(command)._actions if a.dest == dest), None)


@pytest.mark.parametrize("command", sorted({c for c, _ in STAGE_COMMANDS}))
def test_no_option_given_means_the_profiles_own_settings(command):
    argv = next(a for (c, _), (_, a) in STAGE_COMMANDS.items() if c == command)
    for name in config.PROFILES:
        args = _sub(command).parse_args([*argv, "--profile", name])
        assert profile_from(args) == config.PROFILES[name]


@pytest.mark.parametrize("command, argv, path, f, value", list(_cases()))
def test_the_option_and_the_field_agree(command, argv, path, f, value, capsys):
    """Every field has its option; its help quotes the profile's value; choices are the field's;
    each end of the field's range is taken by both, one step past it refused by both."""
    action = _action(command, path)
    assert action is not None, f"{command} has no option for {'.'.join(path)}"
    flag = action.option_strings[0]
    assert action.default is None and f"(offline profile: {as_option_text(value)})" in action.help
    meta = f.metadata
    owner = config.PROFILES["offline"]
    for key in path[:-1]:
        owner = getattr(owner, key)
    if meta.get("choices") is not None:
        assert tuple(action.choices) == tuple(meta["choices"])
        with pytest.raises(DataError):
            replace(owner, **{f.name: "not-a-choice"})
    step = 1 if "int" in str(f.type) else 1e-3
    for edge, outside in ((meta.get("low"), -step), (meta.get("high"), step)):
        if edge is None or isinstance(f.default, bool):
            continue
        text = str(int(edge)) if step == 1 else repr(float(edge))
        got = profile_from(_sub(command).parse_args([*argv, flag, text]))
        for key in path:
            got = getattr(got, key)
        assert got == edge
        with pytest.raises(SystemExit):
            _sub(command).parse_args([*argv, flag, str(edge + outside)])
        with pytest.raises(DataError):
            replace(owner, **{f.name: edge + outside})
    capsys.readouterr()


def test_an_option_given_reaches_the_library():
    args = _sub("build").parse_args(["c.json", "--out", "m", "--policy", "supersede", "--merge-threshold", "0.8",
                                     "--salience-layer", "7", "--single-valued", "has_pet,live_in_general"])
    p = profile_from(args)
    assert (p.memory.policy, p.memory.merge_threshold, p.summarizer.decoder.layer) == ("supersede", 0.8, 7)
    from glong_lib.memory import GraphMemory, HashEncoder

    mem = GraphMemory(encoder=HashEncoder(dim=8), settings=p.memory)
    assert (mem.policy, mem.merge_threshold, mem.single_valued) == ("supersede", 0.8,
                                                                     {"has_pet", "live_in_general"})
    t = profile_from(_sub("train-extractor").parse_args(["--out", "a", "--lora-r", "8", "--learning-rate", "0.01"]))
    from glong_lib.extraction.training import train_settings

    s = train_settings([], t)
    assert (s.lora_r, s.learning_rate, s.max_steps) == (8, 0.01, config.PROFILES["offline"].extractor.max_steps)


def test_the_generator_options_reach_eval_msc():
    """``--max-new-tokens`` and ``--memory-format`` are ``GeneratorSettings`` fields: not given, the
    profile's (a local model's cap is the profile's, an endpoint's replies stay uncapped); given,
    they reach the generator and the agents."""
    from glong_lib.commands.evaluate import build_agents, build_generator, reply_cap
    from glong_lib.generation import MemoryEchoGenerator

    plain = _sub("eval-msc").parse_args(["--generator", "echo", "--methods", "glong"])
    assert build_generator(plain).max_new_tokens == config.PROFILES["offline"].generator.max_new_tokens
    assert build_agents(plain, MemoryEchoGenerator(), None)["G-Long"].memory_format == "plain"
    given = _sub("eval-msc").parse_args(["--generator", "echo", "--methods", "glong", "--max-new-tokens", "40",
                                         "--memory-format", "arrow"])
    assert build_generator(given).max_new_tokens == 40
    assert build_agents(given, MemoryEchoGenerator(), None)["G-Long"].memory_format == "arrow"
    api = ["--generator", "openai", "--base-url", "http://localhost:1/v1", "--profile", "paper"]
    assert reply_cap(_sub("eval-msc").parse_args(api), config.PROFILES["paper"]) is None
    assert reply_cap(_sub("eval-msc").parse_args([*api, "--max-new-tokens", "40"]), config.PROFILES["paper"]) == 40
