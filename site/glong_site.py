"""The course website's own build steps (a Sphinx extension, loaded by site/conf.py).

1. Offline maths: copies MathJax 3 out of the ``django-static-mathjax`` wheel (the official MathJax
   build, packaged as plain files; Django itself is not needed) into ``_static/mathjax``.
2. Each lesson (a page made from ``notebooks/*.ipynb``) gets a bar under its title with its
   "Open in Colab" address (``glong_lib.colab``, from ``[project.urls] Repository``) and a download of
   the notebook file; the notebook's own Colab badge, a remote image, is dropped (the bar replaces it).
3. A home-page toctree whose glob matches no page yet (no appendix notebook, no docs/ page) is left
   out instead of warning, so appendices and guides appear when their files do.
4. A link to a Markdown file of the repository that is not a page of the site (CONTRIBUTING.md,
   benchmarks/README.md) becomes a download of that file, as MyST already does for any other file
   (glong_lib/config/profiles.py), instead of an "unknown document" warning.
5. Every picture that is not already a link opens full size when tapped (on a phone a wide figure is
   shrunk to the screen's width; its file has all the pixels).
6. Nothing on the site loads from the network when it is read: a remote image in a page, or a
   ``<script>``, ``<link>``, ``<img>`` or ``<iframe>`` in the built HTML whose address starts with
   ``http(s)://`` or ``//``, is a build warning (an error under ``-W``, as ``make site`` builds).
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.matching import patfilter
from sphinx.util.osutil import relative_uri

from glong_lib.colab import BADGE_IMAGE, colab_url

logger = logging.getLogger(__name__)

#: Touched after every build: tests/test_site.py skips while a source is newer.
BUILT_STAMP = ".site-built"
#: MathJax's combined components other than the one the site loads (tex-chtml.js): not copied.
_UNUSED_COMPONENTS = {"mml-chtml.js", "mml-svg.js", "node-main.js", "tex-chtml-full-speech.js", "tex-chtml-full.js",
                      "tex-mml-chtml.js", "tex-mml-svg.js", "tex-svg-full.js", "tex-svg.js"}
_TOCTREE = re.compile(r"^```\{toctree\}\n(?P<body>.*?)^```\n?", re.MULTILINE | re.DOTALL)
_REMOTE_ASSET = re.compile(
    r"<(script|link|img|iframe|source|video|audio)\b[^>]*?\b(src|href)=[\"']((?:https?:)?//[^\"']+)", re.IGNORECASE)


def mathjax_source() -> Path:
    """The MathJax 3 build (``es5/``) inside the installed ``django-static-mathjax`` package."""
    spec = importlib.util.find_spec("mathjax")
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        es5 = Path(root) / "static" / "mathjax" / "es5"
        if (es5 / "tex-chtml.js").is_file():
            return es5
    raise RuntimeError("MathJax not found: install the site extra (pip install -e '.[site]')")


def copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        shutil.copytree(mathjax_source(), Path(app.outdir) / "_static" / "mathjax", dirs_exist_ok=True,
                        ignore=lambda folder, names: [n for n in names if n in _UNUSED_COMPONENTS])


def _is_badge_paragraph(image: nodes.image) -> bool:
    """The notebook's own Colab badge: a paragraph holding only a link around the badge image."""
    link, paragraph = image.parent, image.parent.parent
    return (image["uri"] == BADGE_IMAGE and isinstance(link, nodes.reference) and isinstance(paragraph, nodes.paragraph)
            and all(isinstance(child, nodes.reference) or not child.astext().strip() for child in paragraph.children))


def _lesson_links(docname: str, notebook: str) -> nodes.paragraph:
    colab = nodes.reference("", "Open in Colab", refuri=colab_url(notebook), classes=["lesson-colab"])
    download = addnodes.download_reference("", "", nodes.inline("", f"Download {notebook}"), refdoc=docname,
                                           reftarget=f"/notebooks/{notebook}", refexplicit=True,
                                           classes=["lesson-download"])
    return nodes.paragraph("", "", colab, nodes.Text(" · "), download, classes=["lesson-links"])


def _source_of(app: Sphinx, docname: str) -> Path | None:
    for suffix in app.config.source_suffix:
        path = Path(app.srcdir) / f"{docname}{suffix}"
        if path.is_file():
            return path
    return None


def download_other_files(app: Sphinx, doctree: nodes.document) -> None:
    """MyST's link to a Markdown file outside the site's pages, made a download like any other file's."""
    for xref in list(doctree.findall(addnodes.pending_xref)):
        target = xref.get("reftarget", "")
        source = _source_of(app, target) if xref.get("reftype") == "myst" and xref.get("refdomain") == "doc" else None
        if source is None or target in app.env.found_docs:
            continue
        download = addnodes.download_reference("", "", *xref.children, refdoc=xref["refdoc"], refexplicit=True,
                                               reftarget="/" + source.relative_to(app.srcdir).as_posix())
        xref.replace_self(download)


def lesson_page(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.docname
    download_other_files(app, doctree)
    for image in list(doctree.findall(nodes.image)):
        uri = image.get("uri", "")
        if "://" not in uri and not uri.startswith("//"):
            continue
        if _is_badge_paragraph(image):
            image.parent.parent.parent.remove(image.parent.parent)
        else:
            logger.warning("remote image %s: the site must read offline; commit the picture and link it", uri,
                           location=image)
    source = Path(app.env.doc2path(docname))
    if source.suffix == ".ipynb" and source.parent.name == "notebooks":
        title = next(doctree.findall(nodes.title), None)
        if title is None:
            logger.warning("lesson %s has no title: its Colab and download links have no place", docname)
            return
        section = title.parent
        section.insert(section.index(title) + 1, _lesson_links(docname, source.name))


def drop_empty_globs(app: Sphinx, docname: str, source: list[str]) -> None:
    """Leave out a globbing toctree of the home page that matches no page (Sphinx would warn)."""
    if docname != app.config.root_doc:
        return

    def keep(block: re.Match) -> str:
        lines = block["body"].splitlines()
        if ":glob:" not in lines:
            return block[0]
        patterns = [line.strip().lstrip("/") for line in lines if line.strip() and not line.startswith(":")]
        return block[0] if any(patfilter(app.env.found_docs, pattern) for pattern in patterns) else ""

    source[0] = _TOCTREE.sub(keep, source[0])


def link_figures(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    images = relative_uri(app.builder.get_target_uri(docname), app.builder.imagedir)
    for image in list(doctree.findall(nodes.image)):
        if isinstance(image.parent, nodes.reference) or image["uri"] not in app.env.images:
            continue
        link = nodes.reference("", "", refuri=f"{images}/{app.env.images[image['uri']][1]}", internal=True,
                               classes=["figure-full-size"])
        image.replace_self(link)
        link.append(image)


def refuse_remote_assets(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    (Path(app.outdir) / BUILT_STAMP).touch()  # when the site was last built (tests/test_site.py compares)
    for page in sorted(Path(app.outdir).rglob("*.html")):
        for match in _REMOTE_ASSET.finditer(page.read_text(encoding="utf-8")):
            logger.warning("%s loads %s from the network (<%s %s=...>): the site must read offline",
                           page.relative_to(app.outdir), match.group(3), match.group(1), match.group(2))


def setup(app: Sphinx) -> dict:
    app.connect("source-read", drop_empty_globs)
    app.connect("doctree-read", lesson_page, priority=100)  # before Sphinx collects the downloads
    app.connect("doctree-resolved", link_figures)
    app.connect("build-finished", copy_mathjax)
    app.connect("build-finished", refuse_remote_assets)
    # a new version of this file re-reads every page (Sphinx compares an extension's env_version)
    version = int(hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:8], 16)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": version}
