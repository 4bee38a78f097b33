"""Time the tolerant model-output parser on adversarial inputs of growing size (1 KB to 1 MB) and
print how the time grows: a linear parser doubles its time when the input doubles.

Run time on 2 shared cores: ``--quick`` (1 KB and 10 KB) under a second; the full run (up to 1 MB)
a few seconds.

    python -m benchmarks.bench_parser            # our parser
    python -m benchmarks.bench_parser --json-repair   # also the json-repair package, for comparison
    python -m benchmarks.bench_parser --quick --json parser.json

Each shape is something a small model can emit (or a hostile input can contain): nested objects
whose keys are not triple keys, deep brackets, an unterminated quote, a long run of key: value
pairs, prose full of brackets, and many half-written objects.
"""

from __future__ import annotations

import math
import sys

from benchmarks._common import bench_parser, time_calls, write_results
from glong_lib.extraction.parsing import parse_output

SIZES = [1_000, 10_000, 100_000, 1_000_000]
QUICK_MAX_SIZE = 10_000


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


SHAPES = {
    "nested non-triple keys": lambda n: _repeat('{"a": [', n // 2) + _repeat("]}", n // 2),
    "deep brackets": lambda n: "[" * n,
    "unterminated quote": lambda n: "[{'subject': '" + "x" * n,
    "key: value run": lambda n: _repeat("subject: a, relation: b, object: c, ", n),
    "prose with brackets": lambda n: _repeat("see [1] and {note} ", n),
    "half objects": lambda n: "[" + _repeat("{'subject': 'i', 'relation': 'like', 'object': 'tea',", n),
    "single quotes and apostrophes": lambda n: (
        "[" + _repeat("{'subject': 'i', 'relation': 'like', 'object': 'Leo's tea'}, ", n) + "]"),
}


def seconds(fn, text: str) -> float:
    """Seconds ``fn(text)`` took; NaN when it gave up on the nesting (RecursionError)."""
    try:
        return time_calls(fn, [text])[0]
    except RecursionError:
        return float("nan")


def growth(times: list[float]) -> list[float]:
    """Time ratio per tenfold size step, divided by ten: 1 means linear."""
    return [(b / a) / 10 if a > 1e-4 else float("nan") for a, b in zip(times, times[1:])]


def no_nan(values: list[float]):
    """JSON has no NaN: None instead."""
    return [None if math.isnan(v) else round(v, 5) for v in values]


def main(argv=None) -> int:
    p = bench_parser(__doc__)
    p.add_argument("--json-repair", action="store_true", help="also time json_repair.loads")
    p.add_argument("--max-size", type=int, default=SIZES[-1])
    args = p.parse_args(argv)
    parsers = {"glong parse_output": parse_output}
    if args.json_repair:
        import json_repair

        parsers["json_repair.loads"] = json_repair.loads
    max_size = QUICK_MAX_SIZE if args.quick else args.max_size
    sizes = [s for s in SIZES if s <= max_size]
    print(f"{'parser':<20} {'shape':<30} " + " ".join(f"{s:>10,}" for s in sizes) + "   growth x10 (1 = linear)")
    rows = []
    for pname, fn in parsers.items():
        for shape, make in SHAPES.items():
            times = [seconds(fn, make(size)) for size in sizes]
            rows.append({"parser": pname, "shape": shape, "seconds": no_nan(times), "growth": no_nan(growth(times))})
            print(f"{pname:<20} {shape:<30} " + " ".join(f"{t:>9.4f}s" for t in times)
                  + "   " + " ".join(f"{g:.2f}" for g in growth(times)))
    ours = [t for r in rows if r["parser"].startswith("glong") for t in r["seconds"] if t is not None]
    worst = max(ours, default=0.0)
    print(f"slowest glong parse: {worst:.3f} s (aim: under 1 s at 1 MB)")
    write_results(args, {"sizes": sizes, "rows": rows, "slowest glong s": worst}, "bench_parser")
    return 0


if __name__ == "__main__":
    sys.exit(main())
