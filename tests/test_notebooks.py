"""Every notebook runs top to bottom in smoke mode (papermill), fails on any error, and writes
its figures. (pytest's --nbval-lax, set in pyproject.toml, separately re-runs the committed
notebooks and compares the cells marked NBVAL_CHECK_OUTPUT.)"""

from __future__ import annotations

import json

import pytest

from glong_lib.notebook_runner import NOTEBOOKS_DIR, list_notebooks, run_notebooks

NOTEBOOKS = list_notebooks(NOTEBOOKS_DIR)


def test_notebooks_are_collected():
    assert NOTEBOOKS, f"no notebooks found in {NOTEBOOKS_DIR}"
    assert NOTEBOOKS[0].name == "00_quickstart.ipynb"


@pytest.mark.parametrize("book", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebook_is_a_real_run(book):
    """Committed notebooks carry outputs: every code cell executed, in order, none with an error."""
    cells = [c for c in json.loads(book.read_text())["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    counts = [c["execution_count"] for c in cells]
    assert None not in counts, f"{book.name}: unexecuted cells"
    assert counts == sorted(counts), f"{book.name}: cells not run top to bottom"
    assert not [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    params = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1 and "SMOKE" in "".join(params[0]["source"])


@pytest.mark.slow
@pytest.mark.parametrize("book", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_smoke_run(book, tmp_path):
    runs = run_notebooks(smoke=True, out=tmp_path, only=[book.name], log=lambda *_: None)
    assert [r.name for r in runs] == [book.name]
    executed = json.loads((tmp_path / book.name).read_text())
    errors = [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    figures = list((tmp_path / "figures").glob(f"{book.name[:2]}_*.png"))
    assert figures, f"{book.name} saved no figure in smoke mode"
