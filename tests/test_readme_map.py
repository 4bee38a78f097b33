"""The paper map (docs/paper-map.md; the README links it) gives the statuses the review settled on, and no
document cites a module the library does not have. Its full checks are in tests/test_docs.py; the Table 6
numbers are rendered from the result files (tests/test_results_docs.py)."""

from __future__ import annotations

import re

from testdata import ROOT

STATUSES = ("reproduced in shape", "measured differently", "not reproduced")


def _map_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "paper-map.md").read_text()
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if re.match(r"\| (Table|Figure) \d+ \|", line)]


def test_the_map_lists_every_table_and_figure_once_with_a_status():
    rows = _map_rows()
    expected = [f"Table {i}" for i in range(1, 15)] + [f"Figure {i}" for i in range(1, 9)]
    assert sorted(r[0] for r in rows) == sorted(expected)
    assert all(r[2] in STATUSES and r[5] for r in rows), [r[0] for r in rows if r[2] not in STATUSES]


def test_the_readme_links_the_map_and_holds_no_copy():
    readme = (ROOT / "README.md").read_text()
    assert "docs/paper-map.md" in readme and not re.search(r"^\| (Table|Figure) \d+ \|", readme, flags=re.M)


def test_no_module_that_does_not_exist_is_cited():
    for path in [ROOT / "README.md", ROOT / "data" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for module in re.findall(r"glong_lib\.([a-z_]+)", path.read_text()):
            where = ROOT / "glong_lib"
            assert (where / module).exists() or (where / f"{module}.py").exists(), (path, module)
