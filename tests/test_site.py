"""The course website (`make site`, build/site/) read in a real browser: Debian's headless Chromium,
driven by Playwright, on a 390-pixel-wide phone screen, over a server on 127.0.0.1.

Every page opens without a console error, a failed request, a request off this machine (the site reads
offline: fonts, MathJax and scripts come from the site itself), a broken link or image, or a page wider
than the screen. The maths renders (no TeX left as text, no MathJax error), the lessons carry their Colab
and download links, the search finds a word, and in the dark colour scheme the figures sit on white. Each
lesson is saved as a full-page screenshot, light and dark, in build/site-shots/.

Runs only once the site is built and current (`make site`; CI builds it after `make test` and runs this
file), and only where a browser is installed (`apt-get install chromium`); otherwise it skips in one line.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import tempfile
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parents[1]
SITE = REPO / "build" / "site"
SHOTS = REPO / "build" / "site-shots"
PHONE = {"width": 390, "height": 844}
# Debian's Chromium in a sandbox with no network: without these it tries (and fails) to reach Google.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SOURCES = [REPO / "README.md", *REPO.glob("notebooks/0*.ipynb"), *REPO.glob("notebooks/A*.ipynb"),
           *REPO.glob("docs/*.md"), *REPO.glob("site/*.*"), *REPO.glob("site/_static/*")]

pytestmark = pytest.mark.site
playwright = pytest.importorskip("playwright.sync_api",
                                 reason="the site extra is not installed (pip install -e '.[site]')")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("no Chromium here: apt-get install chromium to read the site in a browser", allow_module_level=True)
if not (SITE / "site" / "index.html").is_file():
    pytest.skip("the site is not built: make site", allow_module_level=True)
BUILT = SITE / ".site-built"  # touched by every build (site/glong_site.py)
if not BUILT.is_file() or max(p.stat().st_mtime for p in SOURCES) > BUILT.stat().st_mtime:
    pytest.skip("the site is older than its sources: make site", allow_module_level=True)

REDIRECT = "index.html"  # the top of the site sends the reader on to the home page, site/index.html
PAGES = sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html")
               if not p.relative_to(SITE).parts[0].startswith("_") and str(p.relative_to(SITE)) != REDIRECT)
LESSONS = [p for p in PAGES if p.startswith("notebooks/")]

# Elements that reach past the right edge of the screen, unless a box of their own scrolls them (a table, code,
# a displayed equation, a notebook's HTML output). The page's own column does not count as such a box: Furo lets
# the whole column scroll sideways on a phone, which is the page being wider than the screen.
_TOO_WIDE = """() => {
  const width = document.documentElement.clientWidth, found = [];
  // off the screen on purpose: Furo's drawers (they slide in), MathJax's copy of each formula for screen readers
  const OFF_SCREEN = '.toc-drawer, .sidebar-drawer, mjx-assistive-mml';
  const page = new Set([document.documentElement, document.body,
                        ...document.querySelectorAll('.page, .main, .content, article')]);
  for (const el of document.body.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.right <= width + 1 || el.closest(OFF_SCREEN)) continue;
    let boxed = false;
    for (let up = el.parentElement; up && !page.has(up); up = up.parentElement) {
      const o = getComputedStyle(up).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden') { boxed = true; break; }
    }
    if (!boxed) found.push(el.tagName.toLowerCase() + [...el.classList].map(c => '.' + c).join('') + ' to '
                           + Math.round(box.right) + 'px: ' + (el.textContent || '').trim().slice(0, 60));
  }
  return found.slice(0, 5);
}"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(SITE)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                       args=CHROMIUM_FLAGS, viewport=PHONE)
        yield context
        context.close()


class Visit:
    """One page opened in the browser, with every problem it showed on the way."""

    def __init__(self, browser, server: str, page: str, scheme: str = "light", lands_on: str | None = None):
        self.server, self.problems = server, []
        self.tab = browser.new_page()
        self.tab.emulate_media(color_scheme=scheme)
        self.tab.on("console", lambda m: m.type == "error" and self.problems.append(f"console error: {m.text}"))
        self.tab.on("pageerror", lambda e: self.problems.append(f"script error: {e}"))
        self.tab.on("requestfailed", lambda r: self.problems.append(f"request failed: {r.url} ({r.failure})"))
        self.tab.on("response", lambda r: r.status >= 400 and self.problems.append(f"HTTP {r.status}: {r.url}"))
        self.tab.route("**/*", self._local_only)
        self.tab.goto(f"{server}/{page}", wait_until="load")
        if lands_on:
            self.tab.wait_for_url(f"{server}/{lands_on}", wait_until="load")
        # MathJax typesets after the page loads: wait until it has finished
        self.tab.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise.then(() => 1) : 1")

    def _local_only(self, route):
        if route.request.url.startswith(self.server):
            route.continue_()
        else:
            self.problems.append(f"request off this machine: {route.request.url}")
            route.abort()

    def close(self):
        self.tab.close()


@functools.cache
def _ids(path: Path) -> frozenset[str]:
    return frozenset(re.findall(r'\bid="([^"]+)"', path.read_text(encoding="utf-8")))


def _broken_links(visit: Visit) -> list[str]:
    broken = []
    for href in visit.tab.eval_on_selector_all("a[href]", "els => els.map(a => a.href)"):
        if not href.startswith(visit.server):  # another site (Colab, arXiv, GitHub): not reachable offline
            continue
        parts = urlsplit(href)
        target = SITE / unquote(parts.path).lstrip("/")
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            broken.append(f"{href}: no such file")
        elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in _ids(target):
            broken.append(f"{href}: no element with that id")
    return broken


@pytest.mark.parametrize("page", PAGES)
def test_page_reads_on_a_phone(browser, server, page):
    visit = Visit(browser, server, page)
    try:
        problems = list(visit.problems) + _broken_links(visit)
        problems += [f"broken image: {src}" for src in visit.tab.eval_on_selector_all(
            "img", "els => els.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")]
        too_wide = visit.tab.evaluate(_TOO_WIDE)
        if too_wide or visit.tab.evaluate("document.documentElement.scrollWidth") > PHONE["width"]:
            problems.append(f"wider than a {PHONE['width']}px screen: {too_wide}")
        problems += [f"TeX left as text: {t}" for t in visit.tab.eval_on_selector_all(
            ".math", "els => els.filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 60))")]
        problems += [f"a pair of dollar amounts read as maths: {t}" for t in re.findall(
            r"\\\(\d[^<]*?\s\\\)", (SITE / page).read_text(encoding="utf-8"))]
        problems += [f"MathJax error: {t}" for t in visit.tab.eval_on_selector_all(
            "mjx-merror", "els => els.map(e => e.getAttribute('data-mjx-error') || e.textContent)")]
    finally:
        visit.close()
    assert not problems, f"{page}:\n" + "\n".join(problems)


def test_the_home_page_shows_the_papers_equations_as_maths(browser, server):
    visit = Visit(browser, server, "site/index.html")
    try:
        display = visit.tab.eval_on_selector_all("mjx-container[display='true']", "els => els.length")
        cut = visit.tab.eval_on_selector_all("mjx-container[display='true']",
                                             "els => els.filter(e => e.scrollWidth > e.clientWidth + 1).length")
        text = visit.tab.inner_text("article")
        lessons = visit.tab.eval_on_selector_all("article a[href*='notebooks/0']", "els => els.map(a => a.href)")
    finally:
        visit.close()
    assert display >= 4, f"{display} displayed equations on the home page, Eq. 1-4 need 4"
    assert cut == 0, f"{cut} of the home page's equations wider than a {PHONE['width']}px screen"
    assert "\\frac" not in text and "$$" not in text
    assert len(set(lessons)) >= len(list(REPO.glob("notebooks/0*.ipynb"))), "the home page lists every lesson"


def test_the_redirect_at_the_top_reaches_the_home_page(browser, server):
    visit = Visit(browser, server, REDIRECT, lands_on="site/index.html")
    try:
        title, problems = visit.tab.title(), visit.problems
    finally:
        visit.close()
    assert "G-Long" in title
    assert not problems


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_links_figures_and_screenshot(browser, server, lesson, scheme):
    visit = Visit(browser, server, lesson, scheme)
    try:
        colab = visit.tab.get_attribute("p.lesson-links a.lesson-colab", "href")
        download = visit.tab.get_attribute("p.lesson-links a.lesson-download", "href")
        backgrounds = visit.tab.eval_on_selector_all("article img",
                                                     "els => els.map(i => getComputedStyle(i).backgroundColor)")
        SHOTS.mkdir(parents=True, exist_ok=True)
        visit.tab.screenshot(path=SHOTS / f"{Path(lesson).stem}-{scheme}.png", full_page=True)
        problems = visit.problems
    finally:
        visit.close()
    notebook = Path(lesson).stem + ".ipynb"
    assert colab.startswith("https://colab.research.google.com/github/") and colab.endswith(f"/notebooks/{notebook}")
    assert download.endswith(notebook)
    assert not problems
    if scheme == "dark":  # figures are drawn on white: each keeps a white card in the dark scheme
        assert backgrounds and set(backgrounds) == {"rgb(255, 255, 255)"}, backgrounds


def test_search_finds_a_word_of_a_lesson(browser, server):
    visit = Visit(browser, server, "search.html?q=salience")
    try:
        visit.tab.wait_for_selector("#search-results li", timeout=15_000)
        hits = visit.tab.eval_on_selector_all("#search-results li a", "els => els.map(a => a.getAttribute('href'))")
        problems = visit.problems
    finally:
        visit.close()
    assert any("02_attention_salience" in h for h in hits), hits
    assert not problems
