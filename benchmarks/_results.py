"""Benchmark results as artifacts: ``write_result`` writes ``results/<name>.json`` with what a reader
needs to trust and repeat a number: the command, the commit, the SHA-256 of every input file, the
settings, the date, the machine (cores, CPU), the wall time, and the figures, each interval with what
it resamples. ``docs/results.md`` and the README render their tables from these files
(``python -m benchmarks.render_docs``, ``make docs``).

It lives beside the benchmarks, not in ``glong_lib``: the files describe runs of this checkout (a git
commit, the repository's ``results/`` folder), which an installed wheel has neither of.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> path = write_result("demo", {"p50_ms": 1.5}, inputs=[], settings={"k": 3},
...                     command=["python", "-m", "benchmarks.demo"], wall_s=0.25, folder=folder)
>>> saved = read_result("demo", folder)
>>> saved["figures"], saved["settings"], saved["wall_s"], sorted(saved["machine"])
({'p50_ms': 1.5}, {'k': 3}, 0.25, ['cores', 'cpu', 'platform', 'python'])
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from glong_lib.errors import DataError
from glong_lib.io import atomic_write_json

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results"
FORMAT = "glong-result/1"


def sha256(path: Path) -> str:
    """The SHA-256 of a file, or of every file under a folder (sorted relative paths and contents)."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        if path.is_dir():
            digest.update(str(f.relative_to(path)).encode() + b"\0")
        with open(f, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def git_commit(repo: Path = REPO) -> Optional[str]:
    """``git rev-parse HEAD`` of the checkout (with ``+dirty`` when a tracked file outside ``results/``
    changed: an earlier result file being rewritten does not change what the run computes), or None."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!results"],
                               cwd=repo, capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cores": cores, "cpu": cpu_name(), "platform": platform.platform(), "python": platform.python_version()}


def _label(path: Path) -> str:
    """An input's name in the file: relative to ``$GLONG_REAL_DATA`` or the repository when under either."""
    real = os.environ.get("GLONG_REAL_DATA")
    for root, prefix in ((Path(real) if real else None, "$GLONG_REAL_DATA/"), (REPO, "")):
        if root is not None:
            try:
                return prefix + str(path.resolve().relative_to(Path(root).resolve()))
            except ValueError:
                continue
    return str(path)


def write_result(name: str, figures: Any, inputs: Iterable[Path], settings: Any, command: Sequence[str],
                 wall_s: float, resamples: Optional[dict[str, str]] = None,
                 folder: Optional[Path] = None) -> Path:
    """Write ``<folder>/<name>.json`` (default ``results/``): ``figures`` with the run's provenance.

    ``resamples`` says, for each kind of interval in ``figures``, what its bootstrap draws (e.g.
    ``{"95% intervals": "conversations, 1,000 paired draws"}``); ``inputs`` are files or folders, each
    hashed. A missing input is a DataError (a result must name what it was computed from)."""
    hashed = {}
    for p in inputs:
        p = Path(p)
        if not p.exists():
            raise DataError("result input not found", path=p)
        hashed[_label(p)] = sha256(p)
    record = {"format": FORMAT, "name": name,
              "command": " ".join(shlex.quote(c) for c in command),
              "commit": git_commit(), "inputs": hashed, "settings": settings,
              "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "machine": machine(), "wall_s": round(float(wall_s), 2),
              "resamples": resamples or {}, "figures": figures}
    return atomic_write_json((folder or RESULTS) / f"{name}.json", record)


def read_result(name: str, folder: Optional[Path] = None) -> dict:
    """The record ``write_result`` wrote (a DataError when it is missing or not one)."""
    path = (folder or RESULTS) / f"{name}.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise DataError(f"cannot read the result ({e.__class__.__name__})", path=path) from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise DataError(f"not a {FORMAT} result file", path=path)
    return record


def this_command() -> list[str]:
    """The command line of the running benchmark, as it would be typed: ``python -m benchmarks.X ...``."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    head = ["python", "-m", spec.name] if spec is not None and spec.name else ["python", *sys.argv[:1]]
    return head + sys.argv[1:]
