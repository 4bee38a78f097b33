"""Every notebook fits one class session (rubric criterion 8): at most 40 cells, 2,500 words of
markdown, 500 lines of code, no code cell over 40 lines; its parameters cell holds plain literals only
(papermill's convention, so ``-p SMOKE True`` works); and no code cell writes prose with f-strings
("what to notice" is markdown a person wrote, beside the output it reads).

The limits apply to core notebooks (``00``-``05``) and appendices (``A1_...``) alike.
"""
import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MAX_CELLS, MAX_WORDS, MAX_CODE_LINES, MAX_CELL_LINES = 40, 2500, 500, 40
PROSE_WORDS = 12  # a string literal in code with more words than this is a sentence, not a label


def cells(book: Path) -> list[dict]:
    return json.loads(book.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def budget(book: Path) -> dict:
    """Cells, markdown words, code lines and the longest code cell of a notebook."""
    cs = cells(book)
    code = [source(c).splitlines() for c in cs if c["cell_type"] == "code"]
    return {"cells": len(cs),
            "words": sum(len(source(c).split()) for c in cs if c["cell_type"] == "markdown"),
            "code_lines": sum(len(lines) for lines in code),
            "longest_cell": max((len(lines) for lines in code), default=0)}


def python_of(cell: dict) -> str:
    """A code cell without its IPython magics and shell lines (they are not Python)."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source(cell).splitlines())


def prose_literals(code: str) -> list[str]:
    """String constants (f-string parts included) in ``code`` that read as sentences.

    >>> prose_literals('print(f"the {k} nearest entities are joined by one hop and reranked with Eq. 4 here: {x}")')
    ['the  nearest entities are joined by one hop and reranked with Eq. 4 here: ']
    >>> prose_literals('print("k =", k, "| hits:", hits)')
    []
    """
    tree = ast.parse(code)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        else:
            continue
        if len(re.findall(r"[A-Za-z]{2,}", text)) > PROSE_WORDS:
            found.append(text)
    return found


@pytest.mark.parametrize("book", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_fits_one_class_session(book):
    b = budget(book)
    assert b["cells"] <= MAX_CELLS, f"{book.name}: {b['cells']} cells (at most {MAX_CELLS})"
    assert b["words"] <= MAX_WORDS, f"{book.name}: {b['words']} words of markdown (at most {MAX_WORDS})"
    assert b["code_lines"] <= MAX_CODE_LINES, f"{book.name}: {b['code_lines']} lines of code (at most {MAX_CODE_LINES})"
    assert b["longest_cell"] <= MAX_CELL_LINES, \
        f"{book.name}: a code cell of {b['longest_cell']} lines (at most {MAX_CELL_LINES})"


@pytest.mark.parametrize("book", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_code_cell_writes_prose(book):
    for i, cell in enumerate(cells(book)):
        if cell["cell_type"] != "code":
            continue
        sentences = prose_literals(python_of(cell))
        assert not sentences, f"{book.name} cell {i} writes prose in code: {sentences[0][:80]!r}"


@pytest.mark.parametrize("book", NOTEBOOKS, ids=lambda p: p.stem)
def test_parameters_cell_holds_plain_literals(book):
    tagged = [c for c in cells(book) if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{book.name}: {len(tagged)} cells tagged 'parameters' (want one)"
    tree = ast.parse(python_of(tagged[0]))
    for stmt in tree.body:
        assert isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name), \
            f"{book.name} parameters cell: only NAME = literal lines (line {stmt.lineno})"
        try:
            ast.literal_eval(stmt.value)
        except ValueError:
            pytest.fail(f"{book.name} parameters cell: {stmt.targets[0].id} is computed, not a literal "
                        "(compute it in the cell below, from the parameters)")


def test_the_checks_fire():
    """Controls: an over-long notebook, a prose f-string and a computed parameter are each caught."""
    assert prose_literals('x = f"{a} is the anchor, and the one-hop expansion adds every neighbour of it to the pool"')
    with pytest.raises(ValueError):
        ast.literal_eval(ast.parse('SMOKE = os.environ.get("GLONG_SMOKE") == "1"').body[0].value)
    fake = {"cells": [{"cell_type": "code", "source": ["x = 1\n"] * 41, "metadata": {}}]}
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "99_fake.ipynb"
        path.write_text(json.dumps(fake))
        assert budget(path)["longest_cell"] == 41
