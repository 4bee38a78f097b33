"""Numbers in the notebooks' prose come from the run: every decimal number or percentage in a
markdown cell must appear in an output of the same notebook, unless the sentence says it is the
paper's (a "paper", "Table", "Figure" or "Appendix" shortly before it). Headings, math, code and
prices ("$0.15") are not claims. A planted wrong number must fail the check (the test proves it can)."""

from __future__ import annotations

import json
import re

import pytest
from testdata import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NUMBER = re.compile(r"(?<![\w.\\^_{$])[+-]?\d+(?:,\d{3})*(?:\.\d+)?%?(?![\w{}])")
#: In outputs a number may close a printed dict or set ("{'turns': 35.8}"); the braces rule above is
#: for LaTeX in prose.
OUTPUT_NUMBER = re.compile(r"(?<![\w.\\^_{$])[+-]?\d+(?:,\d{3})*(?:\.\d+)?%?(?![\w{])")
CITED = re.compile(r"\b(paper|papers|Table|Figure|Appendix|LongMemEval|arXiv)\b")


def outputs_text(nb: dict) -> str:
    out = []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                out.append("".join(o["text"]))
            for kind, value in o.get("data", {}).items():
                if kind.startswith("text/"):
                    out.append("".join(value))
    return "\n".join(out)


def prose(markdown: str) -> str:
    """The sentences of a markdown cell, without headings, math, code or links' targets."""
    text = re.sub(r"(?m)^#.*$", " ", markdown)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"(?<!\\)\$(?!\d)[^$\n]+?(?<!\\)\$", " ", text)  # math; "$0.15" is a price
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def _value(token: str) -> float:
    return float(token.rstrip("%").replace(",", ""))


def backed(token: str, output_numbers: set[float]) -> bool:
    """Whether some output number, rounded to the prose number's decimals, equals it
    ("0.82" is backed by an output 0.824; "0.445" is not backed by 0.426).

    >>> backed("0.82", {0.824}), backed("0.445", {0.426}), backed("70.2%", {70.2}), backed("1,332", {1332.0})
    (True, False, True, True)
    """
    decimals = len(token.rstrip("%").split(".")[1]) if "." in token else 0
    value = _value(token)
    return any(abs(round(x, decimals) - value) < 1e-9 for x in output_numbers)


def unbacked_numbers(nb: dict) -> list[tuple[int, str, str]]:
    """(cell index, number, context) for each prose number that no output carries."""
    output_numbers = {_value(m.group(0).lstrip("+-")) for m in OUTPUT_NUMBER.finditer(outputs_text(nb))}
    missing = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = prose("".join(cell["source"]))
        for m in NUMBER.finditer(text):
            token = m.group(0).lstrip("+-")
            if "." not in token and "%" not in token:
                continue  # whole numbers are counts, sizes and section numbers: too many false alarms
            before = text[max(0, m.start() - 80): m.start()]
            if CITED.search(before.split(". ")[-1]):
                continue  # the sentence attributes it to the paper
            if not backed(token, output_numbers):
                missing.append((i, token, " ".join(text[max(0, m.start() - 60): m.end() + 20].split())))
    return missing


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_number_in_the_prose_is_an_output_or_the_papers(path):
    assert unbacked_numbers(json.loads(path.read_text())) == []


def test_a_planted_wrong_number_is_caught():
    nb = json.loads(NOTEBOOKS[0].read_text())
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": ["The model reached 0.987 here."]})
    assert [n for _, n, _ in unbacked_numbers(nb)] == ["0.987"]
    nb["cells"][-1]["source"] = ["The paper reports 0.987 here."]
    assert unbacked_numbers(nb) == []


def measured_seconds() -> dict[str, dict]:
    """Notebook stem -> its row of results/bench_notebooks.json (cold and warm seconds, measured one
    notebook at a time by benchmarks/bench_notebooks.py; the README's table is rendered from it).
    Empty until that benchmark has been run and its result committed."""
    path = ROOT / "results" / "bench_notebooks.json"
    if not path.exists():
        return {}
    return {r["notebook"]: r for r in json.loads(path.read_text())["figures"]["rows"]}


def own_run_seconds(nb: dict) -> int | None:
    """The seconds the committed run printed of itself in its last cell ("this run: N s")."""
    text = "".join("".join(o.get("text", "")) for o in nb["cells"][-1].get("outputs", []))
    found = re.search(r"this run:\s+([\d,]+)\s+s\b", text)
    return int(found.group(1).replace(",", "")) if found else None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_states_its_measured_run_times_up_front(path):
    """With a row in results/bench_notebooks.json, cell 0 states its cold and warm times; without one it
    states no cold time (only the benchmark measures from an empty cache), and a warm time it states is
    the one its committed run printed of itself."""
    nb = json.loads(path.read_text())
    opening = "".join(nb["cells"][0]["source"])
    row = measured_seconds().get(path.stem)
    if row is None:
        assert not re.search(r"cold\s+run\s+[\d,]+\s+s\b", opening), f"{path.name}: a cold time with no measurement"
        stated = re.search(r"warm\s+run\s+([\d,]+)\s+s\b", opening)
        if stated:
            assert int(stated.group(1).replace(",", "")) == own_run_seconds(nb), f"{path.name}: warm time"
        return
    for kind in ("cold", "warm"):
        stated = re.search(rf"{kind}\s+run\s+([\d,]+)\s+s\b", opening)
        assert stated, f"{path.name}: cell 0 should say '{kind} run N s' (results/bench_notebooks.json)"
        assert int(stated.group(1).replace(",", "")) == round(row[f"{kind}_s"]), f"{path.name}: {kind} time"
