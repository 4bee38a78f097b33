"""The README's reproduction map names every table (1-14) and figure (1-8) of the paper once, each with one
of the three statuses; its Table 6 block is what ``benchmarks/bench_tokens.py`` renders from the shipped
result; and it cites no module the library does not have."""

from __future__ import annotations

import json
import re

from testdata import DATA, ROOT

STATUSES = ("reproduced in shape", "measured differently", "not reproduced")


def _map_rows() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## What the suite reproduces: a map of the paper", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
            if re.match(r"\| (Table|Figure) \d+ \|", line)]


def test_the_map_lists_every_table_and_figure_once_with_a_status():
    rows = _map_rows()
    items = [r[0] for r in rows]
    assert sorted(items) == sorted([f"Table {i}" for i in range(1, 15)] + [f"Figure {i}" for i in range(1, 9)])
    assert all(len(r) == 6 and r[4] in STATUSES and r[5] for r in rows), [r for r in rows if r[4] not in STATUSES]
    counts = {s: sum(r[4] == s for r in rows) for s in STATUSES}
    assert counts == {"reproduced in shape": 5, "measured differently": 9, "not reproduced": 8}


def test_table6_block_is_rendered_from_the_shipped_result():
    from benchmarks import bench_tokens as bench
    results = json.loads((DATA / "results" / "bench_tokens.json").read_text())
    text = (ROOT / "README.md").read_text()
    block = text.split(bench.START, 1)[1].split(bench.END, 1)[0].strip()
    assert block == bench.render(results).strip()
    assert {"samples", "msc4_valid"} <= set(results["runs"])
    for run in results["runs"].values():
        every, first = run["saving"]
        assert every["counted over"] == "every turn of every scored session"
        assert first["counted over"].startswith("first 2 user turns") and first["replies"] < every["replies"]


def test_no_module_that_does_not_exist_is_cited():
    for name in ("README.md", "data/README.md"):
        for module in re.findall(r"glong_lib\.([a-z_]+)", (ROOT / name).read_text()):
            assert (ROOT / "glong_lib" / module).exists() or (ROOT / "glong_lib" / f"{module}.py").exists(), module
