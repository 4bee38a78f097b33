"""Shared fixtures: the project's sample data and, when GLONG_REAL_DATA is set, the real data sets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def real_data_dir() -> Path | None:
    value = os.environ.get("GLONG_REAL_DATA")
    return Path(value) if value and Path(value).is_dir() else None


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
