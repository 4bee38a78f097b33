"""Render the result tables of README.md and docs/*.md from ``results/*.json`` (``make docs``).

A table lives between ``<!-- results:NAME -->`` and ``<!-- /results:NAME -->``; NAME picks its renderer
(:data:`RENDERERS`). Every renderer reads only result files (``benchmarks._results``), so a number in a
rendered table is in a committed result file. It also writes ``data/results/bench_salience.json``, the
figures of ``results/bench_salience.json`` that appendices A1 and A5 read from the installed package.

    python -m benchmarks.render_docs            # rewrite the blocks (and the shipped copy)
    python -m benchmarks.render_docs --check    # exit 1 naming each block that differs (what the tests run)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Callable

from benchmarks._results import REPO, RESULTS, read_result
from benchmarks.bench_tokens import render as render_tokens
from glong_lib.errors import GLongError
from glong_lib.io import atomic_write_json, atomic_write_text

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHIPPED_SALIENCE = REPO / "data" / "results" / "bench_salience.json"
BLOCK = re.compile(r"(<!-- results:([\w-]+) -->\n)(.*?)(<!-- /results:\2 -->)", re.S)


def _row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(head: list[str], rows: list[list]) -> str:
    return "\n".join([_row(head), "|" + "---|" * len(head), *(_row(r) for r in rows)])


def tokens(folder: Path) -> str:
    """Table 6 counted two ways, one row pair per ``bench_tokens-*.json`` (the samples first)."""
    names = sorted((p.stem for p in folder.glob("bench_tokens-*.json")), key=lambda n: n != "bench_tokens-samples")
    runs = {k: v for n in names for k, v in read_result(n, folder)["figures"]["runs"].items()}
    return render_tokens({"runs": runs}) + f"\n\nFrom {', '.join(f'`results/{n}.json`' for n in names)}."


def latency(folder: Path) -> str:
    """Query latency of the retriever on synthetic memories (``bench_retrieval --skip-locomo``)."""
    record = read_result("bench_retrieval", folder)
    rows = []
    for r in record["figures"]["latency"]:
        ppr = r.get("ppr")
        rows.append([f"{r['edges']:,}", f"{r['nodes']:,}", f"{r['glong']['p50_ms']} / {r['glong']['p95_ms']}",
                     f"{r['glong (hub anchor)']['p50_ms']} / {r['glong (hub anchor)']['p95_ms']}",
                     r["mean candidates"], f"{ppr['p50_ms']} / {ppr['p95_ms']}" if ppr else "not timed"])
    head = ["edges", "nodes", "G-Long p50 / p95 ms", "hub anchor p50 / p95 ms", "mean candidates", "PPR p50 / p95 ms"]
    return (_table(head, rows) + f"\n\n`results/bench_retrieval.json`: {record['machine']['cores']} cores "
            f"({record['machine']['cpu']}), shared with other jobs; {record['wall_s']:.0f} s wall.")


def salience(folder: Path) -> str:
    """Within-dialogue AUC of each salience reading on the report split (``bench_salience``)."""
    figures = read_result("bench_salience", folder)["figures"]
    rows = [[name, f"{m['within']:.3f} [{m['within_low']:.3f}, {m['within_high']:.3f}]", m["dialogues"],
             f"{m['pooled']:.3f}"] for name, m in figures["report"].items()]
    return (_table(["reading (chosen on the selection split)", "within-dialogue AUC [95% CI]", "dialogues",
                    "pooled AUC"], rows)
            + f"\n\n{figures['dialogues']} report dialogues, {figures['triples']} triples, {figures['positives']} "
              "in the human summary; `results/bench_salience.json`.")


def memory(folder: Path) -> str:
    """Graph memory size and speed on synthetic triples (``bench_memory``): every column of its rows."""
    record = read_result("bench_memory", folder)
    rows = record["figures"]["rows"]
    head = list(rows[0])
    return (_table(head, [[f"{r[k]:,}" if isinstance(r[k], int) else r[k] for k in head] for r in rows])
            + f"\n\n`results/bench_memory.json` (`{record['command']}`).")


def parser(folder: Path) -> str:
    """Seconds of the tolerant output parser per adversarial shape and input size (``bench_parser``)."""
    figures = read_result("bench_parser", folder)["figures"]
    rows = [[r["shape"], *(f"{s:.4f}" for s in r["seconds"])] for r in figures["rows"]]
    return (_table(["shape", *(f"{n:,} chars, s" for n in figures["sizes"])], rows)
            + f"\n\nSlowest at the largest size: {figures['slowest glong s']:.2f} s; `results/bench_parser.json`.")


def server(folder: Path) -> str:
    """Requests per second through the endpoint layer against a server with a fixed latency (``bench_server``)."""
    record = read_result("bench_server", folder)
    figures = record["figures"]
    rows = [[r["kind"], r["in flight"], r["requests"], f"{r['requests/s']:.1f}", f"{r['ideal requests/s']:.1f}",
             f"{r['share of ideal']:.2f}"] for r in figures["rows"]]
    return (_table(["LM call", "in flight", "requests", "requests/s", "ideal", "share of ideal"], rows)
            + f"\n\nServer latency {figures['latency_ms']:.0f} ms a request; `results/bench_server.json`: "
              f"{record['machine']['cores']} cores, shared with other jobs; {record['wall_s']:.0f} s wall.")


def notebooks(folder: Path) -> str:
    """Each notebook's cold and warm run time (``bench_notebooks --warm``), with its Colab link."""
    from glong_lib.colab import colab_url

    from .bench_notebooks import title

    if not (folder / "bench_notebooks.json").exists():  # not measured yet: the links, no times
        rows = [[f"`{b.stem}`", title(b), "not measured", "not measured", f"[open]({colab_url(b.name)})"]
                for b in sorted((folder.parent / "notebooks").glob("*.ipynb"))]
        return (_table(["notebook", "what it teaches", "warm", "cold (empty cache)", "Colab"], rows)
                + "\n\nNo `results/bench_notebooks.json` yet: run `python -m benchmarks.bench_notebooks --warm`.")
    record = read_result("bench_notebooks", folder)
    rows = [[f"`{r['notebook']}`", r["title"], f"{r['warm_s']:,.0f} s" if "warm_s" in r else "not measured",
             f"{r['cold_s']:,.0f} s", f"[open]({colab_url(r['notebook'] + '.ipynb')})"]
            for r in record["figures"]["rows"]]
    cpus = sorted({r.get("cpu") or record["machine"]["cpu"] for r in record["figures"]["rows"]})
    where = (f"({cpus[0]})" if len(cpus) == 1 else f"(each row on the CPU its `cpu` field names: {', '.join(cpus)})")
    return (_table(["notebook", "what it teaches", "warm", "cold (empty cache)", "Colab"], rows)
            + f"\n\n`results/bench_notebooks.json`: {record['machine']['cores']} cores {where}, "
              "one notebook at a time.")


def _commit(commit) -> str:
    """A short commit, keeping the ``+dirty`` mark (tracked files had changed when the run started)."""
    return "not recorded" if not commit else commit[:12] + ("+dirty" if commit.endswith("+dirty") else "")


def files(folder: Path) -> str:
    """Every result file with its command and provenance."""
    rows = []
    for path in sorted(folder.glob("*.json")):
        r = read_result(path.stem, folder)
        rows.append([f"`results/{path.name}`", f"`{r['command']}`", _commit(r["commit"]),
                     r["date"] or "not recorded", "not recorded" if r["wall_s"] is None else f"{r['wall_s']:.0f} s",
                     f"{r['machine']['cores']} cores" if r["machine"] else "not recorded"])
    return _table(["file", "command", "commit", "date", "wall", "machine"], rows)


RENDERERS: dict[str, Callable[[Path], str]] = {
    "tokens": tokens, "latency": latency, "salience": salience, "parser": parser, "memory": memory,
    "server": server, "notebooks": notebooks, "files": files}


def render_text(text: str, folder: Path = RESULTS) -> str:
    """``text`` with every results block replaced by its renderer's output (an unknown NAME is an error)."""
    def one(m: re.Match) -> str:
        if m.group(2) not in RENDERERS:
            raise GLongError(f"no renderer for results block '{m.group(2)}' (known: {', '.join(RENDERERS)})")
        return f"{m.group(1)}{RENDERERS[m.group(2)](folder).strip()}\n{m.group(4)}"
    return BLOCK.sub(one, text)


def stale(folder: Path = RESULTS) -> list[str]:
    """The documents (and the shipped salience copy) whose committed text differs from a fresh render."""
    out = [str(p.relative_to(REPO)) for p in DOCUMENTS
           if render_text(p.read_text(encoding="utf-8"), folder) != p.read_text(encoding="utf-8")]
    if json.loads(SHIPPED_SALIENCE.read_text(encoding="utf-8")) != read_result("bench_salience", folder)["figures"]:
        out.append(str(SHIPPED_SALIENCE.relative_to(REPO)))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().split("\n")[0])
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a block differs")
    args = p.parse_args(argv)
    if args.check:
        differ = stale()
        for name in differ:
            print(f"{name}: differs from its render (run `make docs`)")
        return 1 if differ else 0
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        new = render_text(text)
        if new != text:
            atomic_write_text(path, new)
            print(f"rendered {path.relative_to(REPO)}")
    atomic_write_json(SHIPPED_SALIENCE, read_result("bench_salience")["figures"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
