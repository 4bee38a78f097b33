"""The library's shape, checked so that the next change cannot quietly break it: the layer
contract (import-linter, configured in pyproject.toml), no import cycles, no sibling imports hidden
inside functions outside the command line, modules small enough to read, documented defaults
equal to the code's."""

from __future__ import annotations

import ast
import re

import grimp
import networkx as nx
import pytest
from testdata import ROOT

from glong_lib.config import PROFILES

LIB = ROOT / "glong_lib"
#: A module longer than this is hard to read in one sitting (CONTRIBUTING.md); a longer one is split
#: by concern, or listed below with the reason it stays whole (none is).
MAX_LINES = 400
LONG_MODULES: dict[str, str] = {}


def test_layer_contract_holds():
    from importlinter.cli import lint_imports

    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def test_no_import_cycles_between_modules():
    graph = grimp.build_graph("glong_lib", cache_dir=None)
    g = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.startswith("glong_lib") and not (module.startswith(imported + ".")):
                g.add_edge(module, imported)  # a package's __init__ re-exporting its own modules is not a cycle
    cycles = list(nx.simple_cycles(g))
    assert cycles == [], cycles[:3]


def _library_files():
    return sorted(p for p in LIB.rglob("*.py") if "__pycache__" not in p.parts)


def test_sibling_imports_inside_functions_only_in_the_command_line():
    """Lazy imports of the library's own modules hide cycles; only ``commands`` may have them (they
    keep ``glong --help`` from importing torch; its docstring says so)."""
    offenders = []
    for path in _library_files():
        if "commands" in path.parts:
            continue
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, ast.ImportFrom) and (node.level > 0
                                                             or (node.module or "").startswith("glong_lib")):
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


@pytest.mark.parametrize("path", _library_files(), ids=lambda p: str(p.relative_to(LIB)))
def test_modules_are_small_or_listed_with_a_reason(path):
    lines = len(path.read_text().splitlines())
    name = path.relative_to(LIB).as_posix()
    assert lines <= MAX_LINES or name in LONG_MODULES, f"{name}: {lines} lines; split it or list it with a reason"


def test_the_long_module_list_has_no_stale_entry():
    """An entry whose module shrank below the limit (or went away) would let it grow back unseen."""
    sizes = {name: len((LIB / name).read_text().splitlines()) if (LIB / name).exists() else 0 for name in LONG_MODULES}
    assert {n: s for n, s in sizes.items() if s <= MAX_LINES} == {}


def test_contributing_draws_the_layer_contract():
    """CONTRIBUTING.md's layer diagram names the layers of pyproject.toml's contract, in its order."""
    import tomllib

    layers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]["layers"]
    want = [sorted(m.strip().removeprefix("glong_lib.") for m in layer.split("|")) for layer in layers]
    text = (ROOT / "CONTRIBUTING.md").read_text()
    diagram = text[text.index("```\ncli") + 4:].split("```")[0]
    drawn = [sorted(m.strip().rstrip("/") for m in layer.split("|")) for layer in re.split(r"->", diagram)]
    assert drawn == want


def test_documented_profile_settings_equal_the_code():
    """The table of extractor settings (docs/development.md) is what the config package holds."""
    text = (ROOT / "docs" / "development.md").read_text()
    table = text[text.index("| extractor setting |"):].split("\n\n")[0].splitlines()
    header = [c.strip() for c in table[0].strip("|").split("|")]
    rows = {r.strip("|").split("|")[0].strip(): [c.strip() for c in r.strip("|").split("|")[1:]] for r in table[2:]}
    for column, name in enumerate(header[1:]):
        x = PROFILES[name].extractor
        training = f"{x.max_steps} steps" if x.max_steps else f"{x.epochs:g} epochs"
        expected = {"base model": x.base, "LoRA r / alpha": f"{x.lora_r} / {x.lora_alpha}",
                    "4-bit (QLoRA)": "yes" if x.quantize_4bit else "no", "training": training,
                    "learning rate": f"{x.learning_rate:g}", "batch size": str(x.batch_size)}
        for key, value in expected.items():
            assert re.sub(r"`", "", rows[key][column]) == value, (name, key)
