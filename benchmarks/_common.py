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

from benchmarks._results import RESULTS, this_command, write_result
from glong_lib.datasets import REAL_DATA_ENV, describe, split_file, split_names, split_path
from glong_lib.io import atomic_write_json
from glong_lib.memory import HashEncoder
from glong_lib.retrieval import CachingEncoder

_STARTED = time.perf_counter()  # a benchmark imports this harness first: its wall time counts from here


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
    results there), ``--quick`` (the smallest size: seconds, no real data, no trained model
    beyond the smoke profile's) and ``--results-dir`` (where a full run's result file goes)."""
    p = argparse.ArgumentParser(description=doc.strip().split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the results to this JSON file")
    p.add_argument("--quick", action="store_true", help="the smallest size (seconds; what the smoke test runs)")
    p.add_argument("--results-dir", type=Path, default=RESULTS, metavar="DIR",
                   help="a full run writes DIR/<name>.json with its provenance (default results/; --quick writes none)")
    return p


def settings_of(args: argparse.Namespace) -> dict[str, Any]:
    """The command-line settings of a run, as JSON values (the output options left out)."""
    skip = {"json", "quick", "results_dir"}
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in sorted(vars(args).items()) if k not in skip}


def write_results(args: argparse.Namespace, results: Any, name: str, inputs: Iterable[Path] = (),
                  settings: Optional[dict[str, Any]] = None, resamples: Optional[dict[str, str]] = None) -> None:
    """Write ``results`` to ``--json`` as they are (when given) and, unless ``--quick``, to
    ``--results-dir/<name>.json`` with their provenance (``_results.write_result``: the command, commit,
    SHA-256 of ``inputs``, ``settings`` beside the command-line ones, machine, wall time)."""
    if args.json is not None:
        atomic_write_json(args.json, results)
    if not args.quick:
        path = write_result(name, results, inputs=inputs, settings={"options": settings_of(args), **(settings or {})},
                            command=this_command(), wall_s=time.perf_counter() - _STARTED,
                            resamples=resamples, folder=args.results_dir)
        print(f"result written to {path}")


def run_locomo_or_probes(args, locomo: Callable[[Any], Any], probes: Callable[[Any], Any], name: str,
                         resamples: Optional[dict[str, str]] = None) -> int:
    """The ``main`` of a LoCoMo benchmark: ``probes(args)`` with ``--quick`` or when ``args.split``
    is not under ``$GLONG_REAL_DATA`` (saying so), else ``locomo(args)`` with the split recorded
    beside its numbers (``"data"``); the results go to ``--json``."""
    real = None if args.quick else real_split(args.split)
    if real is None:
        if not args.quick:
            print(f"LoCoMo split '{args.split}': not found (GLONG_REAL_DATA); running on the shipped probes instead")
        out = {"data": "the shipped probes", **probes(args)}
    else:
        print(f"LoCoMo split '{args.split}' ({', '.join(describe(args.split).get('samples', []))})")
        out = {"data": describe(args.split), **locomo(args)}  # which split the numbers come from
    write_results(args, out, name, inputs=[real] if real else [], resamples=resamples)
    return 0
