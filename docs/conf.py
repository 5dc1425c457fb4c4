"""Sphinx configuration of the documentation site (``make docs``; strict in ``make test``).

Sphinx with MyST: the pages are Markdown, readable on the repository's web view as they
are, and the site gets navigation, search and checked cross-references. docs/index.md
says why Sphinx.
"""

project = "gpudirect-cosim"
author = "gpudirect-cosim contributors"
copyright = "2026, gpudirect-cosim contributors"

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# GitHub-style anchors on every heading down to ####, so that [x](page.md#a-heading)
# links work both on the site and in the repository's web view; a missing one warns
# (and the strict build fails)
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
# a link to a source file (../tb/models/link.py) is not a page: shown as given, not resolved
myst_all_links_external = False
nitpicky = True

html_theme = "furo"
html_title = "gpudirect-cosim"
html_static_path: list[str] = []
