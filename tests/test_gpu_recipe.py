"""docs/gpu-server.md: every ``glong`` command of the recipe runs, against the project's test server
(tests/chat_server.py, a fixed reply) in place of the vLLM and OpenAI endpoints, at smoke sizes (one
conversation, one turn per session, two sessions; the offline profile's local models, since the
paper's are not on this machine; no salience). A command whose data is not here is skipped with one
line naming it."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from testdata import ROOT

from glong_lib.cli import main as glong

pytest.importorskip("openai")
DOC = ROOT / "docs" / "gpu-server.md"
SERVER = Path(__file__).with_name("chat_server.py")


def recipe_commands() -> list[str]:
    """The ``glong`` commands of the page's bash blocks, continuation lines joined."""
    blocks = re.findall(r"```bash\n(.*?)```", DOC.read_text(), flags=re.S)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    return [" ".join(line.split()) for line in lines if line.strip().startswith("glong ")]


COMMANDS = recipe_commands()


def test_the_recipe_has_one_command_per_table():
    subcommands = [c.split()[1] for c in COMMANDS]
    assert subcommands.count("eval-msc") == 3 and "eval-retrieval" in subcommands and "train-extractor" in subcommands
    assert all("--base-url" in c or "--extractor-base-url" in c for c in COMMANDS if "eval-" in c)


def smoke_sized(argv: list[str], out: Path) -> list[str]:
    """The command at smoke sizes on this machine (see the module docstring)."""
    sizes = {"--conversations": "1"}
    args, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in sizes:
            args += [a, sizes[a]]
            i += 2
            continue
        if a == "--profile":
            args += ["--profile", "offline"]
            i += 2
            continue
        if a == "--out":
            args += ["--out", str(out / Path(argv[i + 1]).name)]
            i += 2
            continue
        args.append(a)
        i += 1
    if args[0] == "eval-msc":
        args += ["--smoke", "--no-salience", "--turns-per-session", "1", "--max-sessions", "2"]
    if args[0] == "eval-retrieval":
        args += ["--conversations", "1"]
    return args


@pytest.fixture(scope="module")
def stub_url():
    proc = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE, text=True)
    try:
        yield f"http://127.0.0.1:{int(proc.stdout.readline().split()[1])}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in COMMANDS if not c.startswith("glong train-extractor")],
                         ids=lambda c: " ".join(c.split()[1:3]))
def test_a_recipe_command_runs_against_the_test_server(command, stub_url, tmp_path, monkeypatch):
    data = os.environ.get("GLONG_REAL_DATA", "")
    text = command.replace("$EXTRACTOR_URL", stub_url).replace("$GENERATOR_URL", stub_url)
    text = text.replace("$GLONG_REAL_DATA", data or "$GLONG_REAL_DATA")
    argv = shlex.split(text)[1:]
    inputs = [a for a in argv if data and a.startswith(data)]
    missing = [a for a in inputs if not Path(a).exists()]
    if not data or missing:
        pytest.skip(f"no {missing[0] if missing else '$GLONG_REAL_DATA'} here")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    assert glong(smoke_sized(argv, tmp_path)) == 0


def test_training_the_papers_extractor_refuses_without_personaext(tmp_path, monkeypatch, capsys):
    (command,) = [c for c in COMMANDS if c.startswith("glong train-extractor")]
    monkeypatch.delenv("GLONG_REAL_DATA", raising=False)
    argv = [a if a not in ("adapters/paper-extractor", "models/paper-extractor") else str(tmp_path / a)
            for a in shlex.split(command)[1:]]
    assert glong(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "$GLONG_REAL_DATA/personaext/personaext_pairs.jsonl is not there" in err
    assert not (tmp_path / "adapters").exists()
