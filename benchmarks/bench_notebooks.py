"""Time each notebook cold (from an empty model cache) and, with ``--warm``, again with the cache the cold
run filled: the times every notebook states in its first cell and the README's notebook table renders
(``results/bench_notebooks.json``). One notebook runs at a time, each in its own ``glong notebooks`` process.

    python -m benchmarks.bench_notebooks --warm              # every notebook; executed copies in build/
    python -m benchmarks.bench_notebooks --warm --inplace    # the warm runs refresh the committed notebooks
    python -m benchmarks.bench_notebooks --only 01 03        # some of them
    python -m benchmarks.bench_notebooks --quick --json t.json   # notebook 00 in smoke mode (the smoke test)

Cold includes everything a first run on a fresh machine does: converting the bundled SmolLM2 into the cache,
training the summarizer, extracting and reading salience. The offline extractor adapter ships in the
package, so no notebook trains it. Run it on a quiet machine: times on shared cores are upper bounds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._common import bench_parser, write_results
from benchmarks._results import REPO, cpu_name
from glong_lib.notebook_runner import list_notebooks


def run_once(book: Path, cache: Path, out: Path, smoke: bool, inplace: bool = False) -> float:
    """Seconds of ``glong notebooks --only BOOK`` with ``GLONG_CACHE=cache`` (executed copy into ``out``,
    or, ``inplace``, the committed notebook refreshed)."""
    command = [sys.executable, "-m", "glong_lib.cli", "notebooks", "--only", book.name,
               *(["--inplace"] if inplace else ["--out", str(out)])]
    env = dict(os.environ, GLONG_CACHE=str(cache), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    start = time.perf_counter()
    subprocess.run(command + (["--smoke"] if smoke else []), env=env, check=True, cwd=REPO)
    return time.perf_counter() - start


def title(book: Path) -> str:
    """What the notebook teaches: its first heading without the number ("# 03 · The graph memory ...")."""
    first = "".join(json.loads(book.read_text(encoding="utf-8"))["cells"][0]["source"]).splitlines()[0]
    return first.lstrip("# ").split("·", 1)[-1].strip()


def main(argv=None) -> int:
    p = bench_parser(__doc__)
    p.add_argument("--only", nargs="*", default=None, metavar="PREFIX", help="notebooks whose names start so")
    p.add_argument("--warm", action="store_true", help="also time a second run with the filled cache")
    p.add_argument("--out", type=Path, default=REPO / "build" / "bench-notebooks", help="executed copies")
    p.add_argument("--inplace", action="store_true",
                   help="the warm run refreshes the committed notebook (its outputs then show the warm run)")
    p.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "glong-notebook-cache",
                   help="the model cache, emptied before each notebook's cold run")
    args = p.parse_args(argv)
    books = list_notebooks(only=["00"] if args.quick else args.only)
    rows = []
    for book in books:
        shutil.rmtree(args.cache, ignore_errors=True)  # cold: nothing converted, trained or read yet
        args.cache.mkdir(parents=True)
        row = {"notebook": book.stem, "title": title(book), "date": time.strftime("%Y-%m-%d", time.gmtime()),
               "cpu": cpu_name(), "cold_s": round(run_once(book, args.cache, args.out, args.quick), 1)}
        if args.warm:
            row["warm_s"] = round(run_once(book, args.cache, args.out, args.quick, args.inplace and not args.quick), 1)
        rows.append(row)
        print(f"{book.stem:<45} cold {row['cold_s']:7.1f} s" + (f"   warm {row['warm_s']:7.1f} s" if args.warm else ""))
    if not args.quick:  # a run of some notebooks keeps the other notebooks' rows of the result file
        earlier = args.results_dir / "bench_notebooks.json"
        before = json.loads(earlier.read_text()) if earlier.is_file() else {"figures": {"rows": []}}
        # each row names the CPU it was timed on: rows kept from a run on another machine keep that run's
        kept = [{**r, "cpu": r.get("cpu") or before["machine"]["cpu"]} for r in before["figures"]["rows"]]
        measured = {r["notebook"] for r in rows}
        rows = sorted([r for r in kept if r["notebook"] in {b.stem for b in list_notebooks()} - measured] + rows,
                      key=lambda r: r["notebook"])
    write_results(args, {"rows": rows, "smoke": args.quick}, "bench_notebooks", inputs=books)
    return 0


if __name__ == "__main__":
    sys.exit(main())
