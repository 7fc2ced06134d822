"""Small Sphinx extension for the course site (loaded from _config.yml).

* Drops sphinx-thebe's scripts: the course has no live-kernel button, and Jupyter
  Book 1 includes thebe's inline script twice on every page, which throws
  "Identifier 'THEBE_JS_URL' has already been declared" and names a CDN URL.
* Drops the theme's ``fontawesome.js`` (1.5 MB, a third of a page's budget): it
  only swaps the icon ``<i>`` tags for inline SVGs, and the same icons already
  render from Font Awesome's webfont, which the theme's CSS loads locally.
"""

from __future__ import annotations

import re
from pathlib import Path

# the theme writes this tag from a template macro, not through app.add_js_file
_FONTAWESOME_JS = re.compile(
    r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>')


def _is_unused(asset) -> bool:
    name = getattr(asset, "filename", None) or str(asset)
    body = getattr(asset, "attributes", {}).get("body", "") or ""
    return "thebe" in (name or "") or "THEBE_JS_URL" in body


def _strip_unused(app, pagename, templatename, context, doctree):
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [a for a in context[key] if not _is_unused(a)]


def _drop_fontawesome_js(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        stripped = _FONTAWESOME_JS.sub("", text)
        if stripped != text:
            page.write_text(stripped, encoding="utf-8")


def setup(app):
    app.connect("html-page-context", _strip_unused, priority=900)
    app.connect("build-finished", _drop_fontawesome_js)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
