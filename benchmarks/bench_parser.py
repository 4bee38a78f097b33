"""Time the tolerant model-output parser on adversarial inputs of growing size (1 KB to 1 MB) and
print how the time grows: a linear parser doubles its time when the input doubles.

    python benchmarks/bench_parser.py            # our parser
    python benchmarks/bench_parser.py --json-repair   # also the json-repair package, for comparison

Each shape is something a small model can emit (or a hostile input can contain): nested objects
whose keys are not triple keys, deep brackets, an unterminated quote, a long run of key: value
pairs, prose full of brackets, and many half-written objects.
"""

from __future__ import annotations

import argparse
import time

from glong_lib.extraction.parsing import parse_output

SIZES = [1_000, 10_000, 100_000, 1_000_000]


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


SHAPES = {
    "nested non-triple keys": lambda n: _repeat('{"a": [', n // 2) + _repeat("]}", n // 2),
    "deep brackets": lambda n: "[" * n,
    "unterminated quote": lambda n: "[{'subject': '" + "x" * n,
    "key: value run": lambda n: _repeat("subject: a, relation: b, object: c, ", n),
    "prose with brackets": lambda n: _repeat("see [1] and {note} ", n),
    "half objects": lambda n: "[" + _repeat("{'subject': 'i', 'relation': 'like', 'object': 'tea',", n),
    "single quotes and apostrophes": lambda n: "[" + _repeat("{'subject': 'i', 'relation': 'like', 'object': 'Leo's tea'}, ", n) + "]",
}


def timed(fn, text: str) -> float:
    start = time.perf_counter()
    fn(text)
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json-repair", action="store_true", help="also time json_repair.loads")
    p.add_argument("--max-size", type=int, default=SIZES[-1])
    args = p.parse_args()
    parsers = {"glong parse_output": parse_output}
    if args.json_repair:
        import json_repair

        parsers["json_repair.loads"] = json_repair.loads
    sizes = [s for s in SIZES if s <= args.max_size]
    print(f"{'parser':<20} {'shape':<30} " + " ".join(f"{s:>10,}" for s in sizes) + "   growth x10 (1 = linear)")
    worst = 0.0
    for pname, fn in parsers.items():
        for shape, make in SHAPES.items():
            times = []
            for size in sizes:
                try:
                    times.append(timed(fn, make(size)))
                except RecursionError:
                    times.append(float("nan"))
            growth = [(b / a) / 10 if a > 1e-4 else float("nan") for a, b in zip(times, times[1:])]
            worst = max([worst] + [t for t in times if t == t]) if pname.startswith("glong") else worst
            print(f"{pname:<20} {shape:<30} " + " ".join(f"{t:>9.4f}s" for t in times)
                  + "   " + " ".join(f"{g:.2f}" for g in growth))
    print(f"slowest glong parse: {worst:.3f} s (aim: under 1 s at 1 MB)")


if __name__ == "__main__":
    main()
