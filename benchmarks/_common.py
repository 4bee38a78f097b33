"""What every benchmark shares: timing and percentiles, the fake encoder, the real-data folder and
its named splits (``--split``: a benchmark asks for a split, never a file, and records which), and
the two options every script takes (``--json PATH`` and ``--quick``).

Run a benchmark from the repository root as a module, so that this harness imports without any
``sys.path`` edit: ``python -m benchmarks.bench_memory --quick --json /tmp/memory.json``.

>>> percentiles([0.001, 0.002, 0.003, 0.004])
{'p50_ms': 2.5, 'p95_ms': 3.0}
>>> fake_encoder(dim=8).encode(["a", "a"]).shape
(2, 8)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from glong_lib.datasets import REAL_DATA_ENV, describe, split_file, split_names, split_path
from glong_lib.io import atomic_write_json
from glong_lib.memory import HashEncoder
from glong_lib.retrieval import CachingEncoder


def time_calls(fn: Callable[[Any], Any], inputs: Iterable[Any]) -> list[float]:
    """Seconds each ``fn(x)`` took, one per input, in order (``time.perf_counter``)."""
    out = []
    for x in inputs:
        start = time.perf_counter()
        fn(x)
        out.append(time.perf_counter() - start)
    return out


def percentiles(seconds: list[float]) -> dict[str, float]:
    """Median and 95th percentile (nearest rank below) of ``seconds``, in milliseconds."""
    ms = sorted(s * 1000 for s in seconds)
    return {"p50_ms": round(statistics.median(ms), 2), "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2)}


def fake_encoder(dim: int = 384) -> CachingEncoder:
    """Random unit vectors (``HashEncoder``, 384-d like MiniLM), each distinct text encoded once: the
    numbers then measure the memory or the retriever, not a sentence encoder. ``prime`` it with
    the texts before timing to keep even the first encoding out of the clock."""
    return CachingEncoder(HashEncoder(dim))


def real_data_dir(*parts: str) -> Optional[Path]:
    """``$GLONG_REAL_DATA`` joined with ``parts`` when the variable is set and that path exists,
    else None (the benchmark then skips its real-data part and says so)."""
    folder = os.environ.get(REAL_DATA_ENV)
    path = Path(folder, *parts) if folder else None
    return path if path is not None and path.exists() else None


def real_split(name: str) -> Optional[Path]:
    """A file holding exactly the named split (``locomo-report``, ``msc-valid``; ``glong data splits``)
    under ``$GLONG_REAL_DATA``, or None when the variable is unset or the folder lacks it."""
    return split_path(name) if split_file(name) is not None else None


def add_split_option(parser: argparse.ArgumentParser, prefix: str, default: str, what: str = "real data") -> None:
    """``--split NAME``: which named split of the real data (``docs/data.md``) the numbers come from."""
    parser.add_argument("--split", default=default, choices=split_names(prefix),
                        help=f"{what}: the named split (default {default}; docs/data.md)")


def bench_parser(doc: str) -> argparse.ArgumentParser:
    """An argument parser with the options every benchmark takes: ``--json PATH`` (write the
    results there) and ``--quick`` (the smallest size: seconds, no real data, no trained model
    beyond the smoke profile's)."""
    p = argparse.ArgumentParser(description=doc.strip().split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the results to this JSON file")
    p.add_argument("--quick", action="store_true", help="the smallest size (seconds; what the smoke test runs)")
    return p


def write_results(path: Optional[Path], results: Any) -> None:
    """Write ``results`` to ``path`` as JSON (atomically) when a path was given."""
    if path is not None:
        atomic_write_json(path, results)


def run_locomo_or_probes(args, locomo: Callable[[Any], Any], probes: Callable[[Any], Any]) -> int:
    """The ``main`` of a LoCoMo benchmark: ``probes(args)`` with ``--quick`` or when ``args.split``
    is not under ``$GLONG_REAL_DATA`` (saying so), else ``locomo(args)`` with the split recorded
    beside its numbers (``"data"``); the results go to ``--json``."""
    if args.quick or not real_split(args.split):
        if not args.quick:
            print(f"LoCoMo split '{args.split}': not found (GLONG_REAL_DATA); running on the shipped probes instead")
        out = {"data": "the shipped probes", **probes(args)}
    else:
        print(f"LoCoMo split '{args.split}' ({', '.join(describe(args.split).get('samples', []))})")
        out = {"data": describe(args.split), **locomo(args)}  # which split the numbers come from
    write_results(args.json, out)
    return 0
