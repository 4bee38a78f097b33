"""Results are artifacts: each full benchmark run writes ``results/<name>.json`` with its provenance, the
tables of README.md and docs/*.md are rendered from those files (``make docs``), and every decimal number
in those documents is in a result file or a notebook's saved output. Each check plants a fault to show
it can fail."""

from __future__ import annotations

import json
import shutil

import pytest
from test_claims import CITED, NUMBER, _value, outputs_text, prose
from testdata import ROOT

from benchmarks import _results as R
from benchmarks import render_docs as D
from glong_lib.errors import DataError, GLongError

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


# --------------------------------------------------------------------------- the result files

def test_write_result_records_the_provenance(tmp_path):
    data = tmp_path / "in.txt"
    data.write_text("abc")
    path = R.write_result("x", {"auc": 0.5}, inputs=[data], settings={"k": 3}, command=["python", "-m", "b.x"],
                          wall_s=1.234, resamples={"95% CI": "dialogues"}, folder=tmp_path)
    record = json.loads(path.read_text())
    assert record["inputs"] == {str(data): "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}
    assert record["commit"] is None or len(record["commit"].split("+")[0]) == 40
    assert record["machine"]["cores"] >= 1 and record["machine"]["cpu"]
    assert (record["command"], record["wall_s"]) == ("python -m b.x", 1.23)
    assert record["resamples"] == {"95% CI": "dialogues"}
    assert record["date"].endswith("Z") and record["figures"] == {"auc": 0.5}


def test_the_commit_is_dirty_when_code_changed_but_not_when_a_result_file_did(tmp_path):
    import subprocess

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "results").mkdir()
    (tmp_path / "code.py").write_text("a = 1\n")
    (tmp_path / "results" / "r.json").write_text("{}\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "x")
    head = R.git_commit(tmp_path)
    assert len(head) == 40
    (tmp_path / "results" / "r.json").write_text('{"new": 1}\n')
    assert R.git_commit(tmp_path) == head
    (tmp_path / "code.py").write_text("a = 2\n")
    assert R.git_commit(tmp_path) == head + "+dirty"
    assert R.git_commit(tmp_path / "results" / "..") == head + "+dirty"


def test_a_missing_input_is_refused(tmp_path):
    with pytest.raises(DataError, match="result input not found"):
        R.write_result("x", {}, inputs=[tmp_path / "absent.json"], settings=None, command=["c"], wall_s=0,
                       folder=tmp_path)
    assert not (tmp_path / "x.json").exists()


def test_a_full_benchmark_run_writes_its_result_file_and_a_quick_one_none(tmp_path):
    from benchmarks import bench_parser

    assert bench_parser.main(["--quick", "--results-dir", str(tmp_path)]) == 0
    assert list(tmp_path.iterdir()) == []
    assert bench_parser.main(["--results-dir", str(tmp_path), "--json", str(tmp_path / "bare.json"),
                              "--max-size", "10000"]) == 0
    record = R.read_result("bench_parser", tmp_path)
    assert record["figures"] == json.loads((tmp_path / "bare.json").read_text())
    assert record["settings"]["options"] == {"json_repair": False, "max_size": 10000} and record["wall_s"] > 0


def test_every_committed_result_file_is_one():
    names = sorted(p.stem for p in (ROOT / "results").glob("*.json"))
    assert {"bench_parser", "bench_retrieval", "bench_salience", "bench_tokens-msc4_valid"} <= set(names)
    for name in names:
        record = R.read_result(name)
        assert record["name"] == name and record["command"].count("benchmarks.") == 1
        assert record["commit"] is not None or "predates provenance" in record["provenance"], name


# --------------------------------------------------------------------------- rendered tables

def test_every_rendered_table_equals_the_committed_text():
    assert D.stale() == [], "run `make docs`"


def test_a_changed_result_makes_its_table_stale(tmp_path):
    folder = tmp_path / "results"
    shutil.copytree(ROOT / "results", folder)
    record = json.loads((folder / "bench_parser.json").read_text())
    record["figures"]["slowest glong s"] = 9.87
    (folder / "bench_parser.json").write_text(json.dumps(record))
    text = (ROOT / "docs" / "results.md").read_text()
    assert "9.87 s" in D.render_text(text, folder) and "9.87 s" not in text


def test_an_unknown_block_is_an_error():
    with pytest.raises(GLongError, match="no renderer for results block 'nope'"):
        D.render_text("<!-- results:nope -->\n<!-- /results:nope -->")


def test_the_shipped_salience_copy_is_the_result_files_figures():
    shipped = json.loads((ROOT / "data" / "results" / "bench_salience.json").read_text())
    assert shipped == R.read_result("bench_salience")["figures"]


# --------------------------------------------------------------------------- every decimal has a source

def _committed_numbers() -> set[float]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "results").glob("*.json"))]
    texts += [outputs_text(json.loads(p.read_text(encoding="utf-8")))
              for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    return {_value(m.group(0).lstrip("+-")) for t in texts for m in NUMBER.finditer(t)}


NUMBERS = _committed_numbers()


def backed(token: str, numbers: set[float]) -> bool:
    """A number is backed when a committed number rounds to it; a percentage also by a fraction
    ("70.7%" by 0.7068)."""
    decimals = len(token.rstrip("%").split(".")[1]) if "." in token else 0
    value = _value(token)
    candidates = [(value, decimals)] + ([(value / 100, decimals + 2)] if token.endswith("%") else [])
    return any(abs(round(x, d) - v) < 1e-9 for v, d in candidates for x in numbers)


def unbacked(markdown: str, numbers: set[float] = NUMBERS) -> list[str]:
    """Decimals and percentages outside code that no committed number backs, unless the sentence
    attributes them to the paper or another publication (``test_claims.CITED``: "paper", "arXiv", ...)."""
    text, out = prose(markdown), []
    for m in NUMBER.finditer(text):
        token = m.group(0).lstrip("+-")
        if ("." in token or "%" in token) and not CITED.search(text[max(0, m.start() - 80): m.start()].split(". ")[-1]):
            out += [] if backed(token, numbers) else [token]
    return out


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_every_decimal_in_the_documents_is_in_a_result_file_or_a_notebook_output(path):
    assert unbacked(path.read_text(encoding="utf-8")) == []


def test_a_planted_number_is_caught():
    assert unbacked("G-Long saved 70.7% of the tokens, or 71.9%; AUC 0.762 or 0.987.", {0.7068, 0.7618}) == [
        "71.9%", "0.987"]
    assert unbacked("The paper reports 63.0% fewer tokens.", set()) == []


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200 and max(map(len, lines)) <= 600
