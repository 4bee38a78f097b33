"""Where the test data lives: the project's samples and, when GLONG_REAL_DATA is set, the real data."""

from __future__ import annotations

import os
import subprocess
import sys
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


def serve(script: Path):
    """The body of a ``server`` fixture: yields ``start(*args)``, which runs ``script`` (a test chat
    server that prints its port on its first line) and returns its base URL; every server started
    is stopped when the test ends."""
    procs = []

    def start(*args):
        proc = subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        return f"http://127.0.0.1:{int(proc.stdout.readline().split()[1])}/v1"

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=10)
