"""Where the test data lives: the project's samples and, when GLONG_REAL_DATA is set, the real data."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


def real_data_dir() -> Path | None:
    value = os.environ.get("GLONG_REAL_DATA")
    return Path(value) if value and Path(value).is_dir() else None


def examples(n: int) -> int:
    """Hypothesis examples for a property test: ``n``, or a few under mutation testing (each
    mutant reruns the tests; ``HYPOTHESIS_PROFILE=mutation``)."""
    return min(n, 25) if os.environ.get("HYPOTHESIS_PROFILE") == "mutation" else n
