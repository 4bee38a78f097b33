"""Every notebook runs once, top to bottom in smoke mode (papermill): it fails on any error, writes
its figures, and the outputs of the cells tagged ``nbval-check-output`` must equal the committed
ones (sanitised with ``tests/nbval_sanitize.cfg``: times, addresses, progress bars). That one run is
the notebook check of the suite; `pytest --nbval-lax notebooks/` does the same comparison by hand.

The hub-profile run of notebooks 02 and 04 is opt-in (``GLONG_HUB_NOTEBOOKS=1``, ``make test-hub``):
the hub code path is covered every run at unit level (``test_models.py``, ``test_salience.py``)."""

from __future__ import annotations

import configparser
import json
import os
import re
from pathlib import Path

import pytest

from glong_lib.notebook_runner import NOTEBOOKS_DIR, list_notebooks, run_notebooks

NOTEBOOKS = list_notebooks(NOTEBOOKS_DIR)
CHECK_MARK = "nbval-check-output"  # the nbval cell tag (nbval also reads it; a tag keeps test
# machinery out of the code a student reads)


def is_checked(cell: dict) -> bool:
    """A code cell whose output the suite compares with the committed one: tagged ``nbval-check-output``."""
    return cell["cell_type"] == "code" and CHECK_MARK in cell.get("metadata", {}).get("tags", [])


def _sanitisers() -> list[tuple[re.Pattern, str]]:
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(Path(__file__).with_name("nbval_sanitize.cfg"))
    return [(re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections()]


SANITISERS = _sanitisers()


def checked_outputs(notebook: dict) -> list[str]:
    """The text each cell tagged ``nbval-check-output`` printed (streams and plain-text results, errors
    named), sanitised, in cell order."""
    texts = []
    for cell in notebook["cells"]:
        if not is_checked(cell):
            continue
        parts = []
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                parts.append("".join(o["text"]))
            elif "data" in o and "text/plain" in o["data"]:
                parts.append("".join(o["data"]["text/plain"]))
            elif o.get("output_type") == "error":
                parts.append(f"{o['ename']}: {o['evalue']}")
        text = "".join(parts)
        for pattern, replacement in SANITISERS:
            text = pattern.sub(replacement, text)
        texts.append(text)
    return texts


def test_checked_outputs_finds_a_difference():
    """The comparison can fail: one changed digit in a checked cell is a difference."""
    book = json.loads(NOTEBOOKS[0].read_text())
    before = checked_outputs(book)
    assert before, f"{NOTEBOOKS[0].name} has no {CHECK_MARK} cell"
    cell = next(c for c in book["cells"] if is_checked(c) and c.get("outputs"))
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["changed 1\n"]}]
    assert checked_outputs(book) != before


def test_notebooks_are_collected():
    assert NOTEBOOKS, f"no notebooks found in {NOTEBOOKS_DIR}"
    assert NOTEBOOKS[0].name == "00_quickstart.ipynb"


@pytest.mark.parametrize("book", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebook_is_a_real_run(book):
    """Committed notebooks carry outputs: every code cell executed, in order, none with an error."""
    cells = [c for c in json.loads(book.read_text())["cells"]
             if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    counts = [c["execution_count"] for c in cells]
    assert None not in counts, f"{book.name}: unexecuted cells"
    assert counts == sorted(counts), f"{book.name}: cells not run top to bottom"
    assert not [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    params = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1 and "SMOKE" in "".join(params[0]["source"])
    # clean outputs: no progress-bar widgets, no path of the machine that ran it
    text = book.read_text()
    assert "application/vnd.jupyter.widget" not in text
    assert str(NOTEBOOKS_DIR.parent) not in text and str(Path.home()) not in text


@pytest.mark.parametrize("book", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_reach_files_only_through_the_library(book):
    """Installed from the wheel (Colab), a notebook has no source tree around it: data comes through
    ``glong_lib.io.data_path``, so no code cell names a path into the repository (the figures
    folder parameter aside)."""
    cells = [c for c in json.loads(book.read_text())["cells"] if c["cell_type"] == "code"]
    lines = [ln for c in cells for ln in "".join(c["source"]).splitlines() if not ln.startswith("FIGURES_DIR")]
    into_repo = [ln for ln in lines if re.search(r"""["'](\.\./|data/|glong_lib/|notebooks/)""", ln)]
    assert not into_repo, into_repo


@pytest.mark.slow
@pytest.mark.parametrize("book", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_smoke_run(book, tmp_path):
    runs = run_notebooks(smoke=True, out=tmp_path, only=[book.name], log=lambda *_: None)
    assert [r.name for r in runs] == [book.name]
    executed = json.loads((tmp_path / book.name).read_text())
    errors = [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    figures = list((tmp_path / "figures").glob(f"{book.name[:2]}_*.png"))
    assert figures, f"{book.name} saved no figure in smoke mode"
    committed = checked_outputs(json.loads(book.read_text()))
    assert checked_outputs(executed) == committed, f"{book.name}: a {CHECK_MARK} cell prints something else now"


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("GLONG_HUB_NOTEBOOKS") != "1",
                    reason="opt-in: GLONG_HUB_NOTEBOOKS=1 (make test-hub); the hub path has unit tests")
def test_notebooks_02_and_04_through_the_hub_code_path(tmp_path, monkeypatch):
    """The hub profile end to end, offline: the bundled models saved under the hub profile's ids in
    a folder laid out like the hub (``$GLONG_MODELS_DIR/<org>/<name>``), hub access switched off,
    and notebooks 02 and 04 run in smoke mode with ``PROFILE = "hub"``. Their outputs name the hub
    checkpoints they loaded, so the offline path cannot have stood in silently."""
    from glong_lib import models
    from glong_lib.config import get_profile
    from glong_lib.summarizer import offline_summarizer_dir

    hub = get_profile("hub")
    layout = tmp_path / "hub-models"
    stand_ins = {hub.encoder: models.minilm_path(), hub.generator.model: models.smollm2_dir(),
                 hub.extractor.base: models.smollm2_dir(), hub.summarizer.model: offline_summarizer_dir(smoke=True)}
    for hub_id, local in stand_ins.items():
        target = layout / hub_id
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.symlink_to(local, target_is_directory=True)
    monkeypatch.setenv("GLONG_MODELS_DIR", str(layout))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    assert models.resolve_model(hub.summarizer.model) == str(layout / hub.summarizer.model)
    runs = run_notebooks(smoke=True, profile="hub", out=tmp_path / "out", only=["02", "04"], log=lambda *_: None)
    assert [r.name[:2] for r in runs] == ["02", "04"]
    for run in runs:
        nb = json.loads(run.output.read_text())
        text = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                       for c in nb["cells"] for o in c.get("outputs", []))
        assert not [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert hub.summarizer.model in text, f"{run.name} did not load the hub summarizer"


def test_runner_environment_is_put_back(monkeypatch):
    """The variables the runner sets for its kernels are restored afterwards, so an in-process run
    (these tests) does not send later figures into the committed figures/ folder."""
    from glong_lib.notebook_runner import _environment

    monkeypatch.delenv("GLONG_FIGURES_DIR", raising=False)
    monkeypatch.setenv("GLONG_SMOKE", "0")
    with _environment({"GLONG_FIGURES_DIR": "/somewhere", "GLONG_SMOKE": "1"}):
        assert os.environ["GLONG_FIGURES_DIR"] == "/somewhere" and os.environ["GLONG_SMOKE"] == "1"
    assert "GLONG_FIGURES_DIR" not in os.environ and os.environ["GLONG_SMOKE"] == "0"


@pytest.mark.slow
def test_papermill_smoke_parameter_takes_effect(tmp_path, monkeypatch):
    """Papermill's own convention, from its command line and a copy outside the checkout: ``-p SMOKE True``
    reaches a parameters cell of plain literals (no "unknown parameter" warning) and the cell below it
    derives the smoke sizes from it (it prints the mode)."""
    import shutil
    import subprocess
    import sys

    monkeypatch.delenv("GLONG_SMOKE", raising=False)
    monkeypatch.delenv("GLONG_PROFILE", raising=False)
    book = shutil.copy(NOTEBOOKS[0], tmp_path / NOTEBOOKS[0].name)
    out = tmp_path / "out.ipynb"
    run = subprocess.run([sys.executable, "-m", "papermill", str(book), str(out), "-p", "SMOKE", "True",
                          "-k", "python3", "--cwd", str(tmp_path), "--no-progress-bar"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "unknown parameter" not in run.stderr.lower(), run.stderr[-2000:]
    printed = "".join(o.get("text", "") if isinstance(o.get("text", ""), str) else "".join(o["text"])
                      for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", []))
    assert "smoke: True" in printed, "the cell below the parameters did not report a smoke run"


def test_an_installed_glong_without_notebooks_says_where_to_get_them(tmp_path, capsys):
    from glong_lib.cli import main

    assert main(["notebooks", "--folder", str(tmp_path / "nowhere"), "--smoke"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no notebooks folder" in err and "--folder" in err, err
