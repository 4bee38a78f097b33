"""Sphinx configuration of the course website (`make site` -> build/site/).

The source folder is the repository root, so the README, the notebooks and docs/ are read where they
live and their relative links (figures/..., ../README.md) resolve as they do on GitHub; this folder
holds only the configuration, the home page (site/index.md), the theme's CSS and `glong_site`, the
few build steps that no extension does for us (offline MathJax, the lessons' Colab and download
links, remote images refused). The notebooks are rendered from their committed outputs, never run.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

project = "G-Long notebook suite"
author = "G-Long suite authors"
copyright = "the G-Long suite authors, MIT licence"

extensions = ["myst_nb", "glong_site"]

root_doc = "site/index"
# Only these files are pages; everything else in the repository is not (a link to one is a download).
include_patterns = ["site/index.md", "README.md", "notebooks/0*.ipynb", "notebooks/A*.ipynb", "docs/*.md"]
exclude_patterns = [".venv", "build", "mutants", "**/.ipynb_checkpoints", "**/glong-cache", ".git"]

# The committed outputs are the content: never execute a notebook here.
nb_execution_mode = "off"
nb_render_markdown_format = "myst"  # display(Markdown(...)) outputs hold tables
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_dmath_double_inline = True
# "$0.15 per million input tokens, $0.60 per million" is money, not maths (GitHub reads it so too):
# no space inside the dollars, no digit right after the closing one
myst_dmath_allow_space = False
myst_dmath_allow_digits = False
myst_heading_anchors = 3

html_theme = "furo"
html_title = "G-Long: the course"
html_static_path = ["_static"]
html_css_files = ["glong-site.css"]
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_use_index = False  # no index entries: an empty "Index" page is not worth a link
html_domain_indices = False
# MathJax from the site itself (glong_site copies it out of the django-static-mathjax wheel).
mathjax_path = "mathjax/tex-chtml.js"
# build/site/index.html: the home page lives at site/index.html (the source folder is the repository root)
templates_path = ["_templates"]
html_additional_pages = {"index": "redirect.html"}
