"""The course website's build (site/conf.py, site/glong_site.py) on a tiny copy of the project: one lesson,
a README, with and without docs/ pages. Needs the site extra (Sphinx, myst-nb); skips in one line without it.
The real site is built by `make site` and read in a browser by tests/test_site.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("myst_nb", reason="the site extra is not installed (pip install -e '.[site]')")

from testdata import ROOT  # noqa: E402

BADGE = "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/glong-suite/glong/blob/main/notebooks/02_attention_salience.ipynb)"  # noqa: E501


# a 1 x 1 white PNG
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGP4DwABAQEAWk1v8QAAAABJRU5ErkJggg=="


def _notebook(*markdown: str) -> str:
    cells = [{"cell_type": "markdown", "id": f"m{i}", "metadata": {}, "source": text}
             for i, text in enumerate(markdown)]
    cells.append({"cell_type": "code", "id": "c", "metadata": {}, "execution_count": 1, "source": "print(1 + 1)",
                  "outputs": [{"output_type": "stream", "name": "stdout", "text": "2\n"},
                              {"output_type": "display_data", "metadata": {},
                               "data": {"image/png": PIXEL, "text/plain": "<Figure>"}}]})
    return json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                  "language": "python"}},
                       "nbformat": 4, "nbformat_minor": 5})


def _project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "site", tmp_path / "site", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "02_attention_salience.ipynb").write_text(_notebook(
        f"# 00 · Demo lesson\n\n{BADGE}\n\nEq. 3: $$w_k = \\frac{{S(t_k)}}{{\\max_{{k'}} S(t_{{k'}})}} \\qquad (3)$$",
        "At $0.15 per million input tokens, $0.60 per million output tokens; a weight $w \\in [0, 1]$."))
    (tmp_path / "notebooks" / "04_associative_retrieval.ipynb").write_text(_notebook("# 04 · The home page links here"))
    (tmp_path / "README.md").write_text("# The project\n\nHello.\n")
    return tmp_path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return _project(tmp_path)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, int, str, Path]:
    """The tiny project built once: one lesson, a README, no docs/ page and no appendix yet."""
    project = _project(tmp_path_factory.mktemp("site"))
    return (project, *_build(project))


def _build(project: Path) -> tuple[int, str, Path]:
    out = project / "build" / "site"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-c", "site",
                           "-d", str(project / "build" / "doctrees"), ".", str(out)],
                          cwd=project, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stderr, out


def test_lessons_get_colab_and_download_links_and_the_site_reads_offline(built):
    project, rc, log, out = built
    assert rc == 0, log
    lesson = (out / "notebooks" / "02_attention_salience.html").read_text()
    links = re.search(r'<p class="lesson-links">(.*?)</p>', lesson).group(1)
    colab = "https://colab.research.google.com/github/glong-suite/glong/blob/main/notebooks/02_attention_salience.ipynb"
    assert f'href="{colab}"' in links
    download = re.search(r'class="lesson-download[^"]*"[^>]*href="\.\./([^"]+)"', links).group(1)
    assert (out / download).read_text() == (project / "notebooks" / "02_attention_salience.ipynb").read_text()
    assert "colab-badge.svg" not in lesson  # the remote badge is replaced by the links bar
    figure = re.search(r'<a class="figure-full-size[^"]*" href="\.\./(_images/[^"]+\.png)"><img ', lesson).group(1)
    assert (out / figure).is_file()  # a figure opens full size
    # maths from the site's own MathJax; money stays text
    assert (out / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert 'src="../_static/mathjax/tex-chtml.js"' in lesson
    assert "\\(w \\in [0, 1]\\)" in lesson and "$0.15 per million input tokens, $0.60" in lesson
    assert not re.search(r'<(script|link|img)\b[^>]*(src|href)="(https?:)?//', lesson)
    # the top of the site leads to the home page, which lists the lesson
    assert 'url=site/index.html' in (out / "index.html").read_text()
    assert 'href="../notebooks/02_attention_salience.html"' in (out / "site" / "index.html").read_text()


def test_docs_pages_and_appendices_appear_by_themselves(built, tmp_path):
    first, rc, log, out = built  # no docs/ and no appendix yet: no warning about an empty glob
    assert rc == 0, log
    assert "Guides" not in (out / "site" / "index.html").read_text()
    project = Path(shutil.copytree(first, tmp_path / "copy"))
    (project / "docs").mkdir()
    (project / "docs" / "gpu-server.md").write_text(
        "# Running on a GPU server\n\nSee the [README](../README.md) and [how to contribute](../CONTRIBUTING.md).\n")
    (project / "CONTRIBUTING.md").write_text("# Contributing\n")  # a Markdown file that is not a page
    (project / "notebooks" / "A1_more.ipynb").write_text(_notebook("# A1 · An appendix"))
    rc, log, out = _build(project)
    assert rc == 0, log
    home = (out / "site" / "index.html").read_text()
    assert 'href="../docs/gpu-server.html"' in home and 'href="../notebooks/A1_more.html"' in home
    guide = (out / "docs" / "gpu-server.html").read_text()
    assert 'href="../README.html"' in guide
    contributing = re.search(r'href="\.\./(_downloads/[^"]+/CONTRIBUTING\.md)"', guide).group(1)
    assert (out / contributing).read_text() == "# Contributing\n"


def test_a_remote_image_or_script_fails_the_build(project):
    (project / "README.md").write_text("# The project\n\n![logo](https://example.org/logo.png)\n")
    rc, log, _ = _build(project)
    assert rc != 0 and "remote image https://example.org/logo.png" in log
    (project / "README.md").write_text("# The project\n")
    (project / "site" / "conf.py").write_text((project / "site" / "conf.py").read_text().replace(
        'mathjax_path = "mathjax/tex-chtml.js"', 'mathjax_path = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"'))
    rc, log, _ = _build(project)
    assert rc != 0 and "loads https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js from the network" in log
