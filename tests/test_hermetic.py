"""The suite is hermetic: with HOME pointed at an empty folder and GLONG_CACHE unset, tests pass and
write nothing there (conftest.py sends every cache to a scratch folder). CI runs the whole suite
that way (.ci/run); this test runs a few tests that load a model, save a memory and draw a figure,
and shows with a control that the check sees a write to the default cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CACHES = ("GLONG_CACHE", "MPLCONFIGDIR", "HF_HOME", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR",
          "GLONG_FIGURES_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")


def _written(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*"))


@pytest.mark.slow
def test_tests_write_nothing_in_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in CACHES} | {"HOME": str(home)}
    tests = ["tests/test_latent_bugs.py::test_glong_build_records_the_encoder",
             "tests/test_memory.py::test_drawings_render_and_mark_superseded_edges",
             "tests/test_hermetic.py::test_the_check_sees_a_write_to_the_default_cache"]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", *tests], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert _written(home) == []


def test_the_check_sees_a_write_to_the_default_cache(tmp_path):
    """The control: outside the suite's set-up, the model cache defaults to ~/.cache/glong."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in CACHES} | {"HOME": str(home)}
    subprocess.run([sys.executable, "-c", "from glong_lib.models import cache_dir; cache_dir('extracted')"],
                   cwd=tmp_path, env=env, check=True, timeout=120)
    assert _written(home) == [".cache", ".cache/glong", ".cache/glong/extracted"]
