"""pytest set-up for the whole suite (one conftest at the root: with --doctest-modules, a conftest.py
inside tests/ or notebooks/ would be imported twice under the same module name).

* Offline: no model hub.
* Notebooks run once each, in smoke mode (``tests/test_notebooks.py``), with figures sent to a
  scratch folder so the committed figures/ stay as the full run left them (``viz.save_figure``
  honours GLONG_FIGURES_DIR); the outputs of cells marked NBVAL_CHECK_OUTPUT (which do not depend
  on the mode) are compared with the committed ones there.
* Fixtures for the sample data and the real data sets (skipped where GLONG_REAL_DATA is unset).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from tests.testdata import DATA, real_data_dir

# hypothesis: fewer examples under mutation testing (each mutant reruns the property tests)
settings.register_profile("mutation", max_examples=25, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ["GLONG_SMOKE"] = "1"
os.environ["GLONG_FIGURES_DIR"] = tempfile.mkdtemp(prefix="glong-test-figures-")


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

