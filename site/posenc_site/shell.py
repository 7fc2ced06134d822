"""The page shell, lighter (issue 38): what a first load carries besides the chapter.

A Sphinx extension (loaded from _config.yml after ``sphinx-mathjax-offline``). Measured on
chapter 1 before it (``benchmarks/bench_site.py``), the shell was about 700 of the page's
860 KB gzip; three parts of it did no work for the reader:

* **The icon font.** The theme styles its buttons with Font Awesome's webfont: 153 KB
  (``fa-solid-900.woff2``) for about twenty glyphs. After the build, each icon font is cut
  to the code points the site can show (:func:`icon_codepoints`: every ``fa-NAME`` class in
  a page or a script, mapped through the theme's stylesheet, and every private-use
  character a stylesheet's own rules use), a few KB (:func:`subset_icon_fonts`).
* **MathJax's menu.** ``tex-chtml.js`` (257 KB) bundles the right-click menu (108 KB) with
  the TeX input and the HTML output. The pages load ``startup.js`` and the parts they use
  (:data:`MATHJAX_LOAD`: the core, TeX with its autoloaded packages, HTML output, and the
  hidden MathML that screen readers read, which the menu would otherwise switch on).
* **The search index on every page.** The theme puts Sphinx's search scripts and the whole
  index (41 KB English, 64 KB Chinese) on every page for a search-as-you-type this site
  does not turn on: its search box opens ``search.html``, which loads them itself. pages.py
  drops them from every other page as it rewrites it
  (:func:`posenc_site.pages.drop_search_scripts`); this extension only reads the pages.
"""

from __future__ import annotations

import re
from pathlib import Path

from .pages import own_pages

__all__ = ["ICON_FONTS", "MATHJAX_LOAD", "icon_codepoints", "subset_icon_fonts"]

#: Where the theme's icon fonts are, under an edition's ``_static/``.
ICON_FONTS = Path("vendor") / "fontawesome" / "webfonts"
#: The MathJax components every page loads with ``startup.js`` (``ui/menu`` left out).
MATHJAX_LOAD = ["core", "input/tex", "output/chtml", "a11y/assistive-mml"]

# `.fa-magnifying-glass:before,.fa-search:before{content:"\f002"}` in the theme's stylesheet
_ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:{1,2}before,?)+)\{content:"\\([0-9a-fA-F]{4,5})"\}')
_ICON_NAME = re.compile(r"\bfa-([a-z0-9-]+)")
# a private-use character in a stylesheet, written as itself or as a CSS escape
_PRIVATE_USE = re.compile(r"[\ue000-\uf8ff]|\\([eEfF][0-9a-fA-F]{3})(?![0-9a-fA-F])")


def icon_codepoints(stylesheets: list[str], pages_and_scripts: list[str]) -> set[int]:
    """The icon code points a site can show: the glyph of every ``fa-NAME`` class named in
    ``pages_and_scripts`` (texts of HTML pages and scripts), as ``stylesheets`` (texts)
    map names to code points, and every private-use character that a stylesheet's other
    rules use (the theme's admonition and sidebar icons)."""
    names: dict[str, int] = {}
    rest = []
    for css in stylesheets:
        for selectors, code in _ICON_RULE.findall(css):
            for name in _ICON_NAME.findall(selectors):
                names[name] = int(code, 16)
        rest.append(_ICON_RULE.sub("", css))
    used = {names[n] for text in pages_and_scripts for n in _ICON_NAME.findall(text)
            if n in names}
    for css in rest:
        for m in _PRIVATE_USE.finditer(css):
            used.add(int(m.group(1), 16) if m.group(1) else ord(m.group(0)))
    return used


def subset_icon_fonts(folder: Path, codepoints: set[int]) -> dict[str, tuple[int, int]]:
    """Cut every font in ``folder`` (``.woff2`` and ``.ttf``) to the glyphs of
    ``codepoints`` it has, in place and in its own format; returns ``{file name: (bytes
    before, bytes after)}``. A font already cut to them is left as it is."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    sizes = {}
    for path in sorted(folder.glob("*")):
        if path.suffix not in (".woff2", ".ttf"):
            continue
        before = path.stat().st_size
        font = TTFont(path)
        has = set(font.getBestCmap())
        if has <= codepoints:  # nothing to cut: already done, or every glyph is used
            sizes[path.name] = (before, before)
            continue
        options = subset.Options()
        options.flavor = "woff2" if path.suffix == ".woff2" else None
        options.layout_features = ["*"]
        options.name_IDs = ["*"]  # keep the licence and names
        options.notdef_outline = True
        cutter = subset.Subsetter(options)
        cutter.populate(unicodes=sorted(has & codepoints))
        cutter.subset(font)
        font.flavor = options.flavor
        font.save(path)
        sizes[path.name] = (before, path.stat().st_size)
    return sizes


def _lighten(app, exception) -> None:
    """After the HTML build and pages.py's rewrite: the icon fonts cut to what this
    edition's pages and scripts name."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    static = outdir / "_static"
    if not (static / ICON_FONTS).is_dir():
        return
    texts = [page.read_text(encoding="utf-8")  # not the other edition's pages
             for page in own_pages(outdir, app.config.language)]
    texts += [p.read_text(encoding="utf-8", errors="ignore") for p in static.rglob("*.js")
              if "mathjax" not in p.parts]
    stylesheets = [p.read_text(encoding="utf-8", errors="ignore") for p in static.rglob("*.css")]
    subset_icon_fonts(static / ICON_FONTS, icon_codepoints(stylesheets, texts))


def _mathjax_components(app, config) -> None:
    """``startup.js`` and :data:`MATHJAX_LOAD` in place of ``tex-chtml.js`` (and its menu)."""
    config.mathjax_path = "mathjax/startup.js"
    settings = dict(config.mathjax3_config or {})
    loader = dict(settings.get("loader", {}))
    loader["load"] = list(dict.fromkeys([*loader.get("load", []), *MATHJAX_LOAD]))
    settings["loader"] = loader
    config.mathjax3_config = settings


def setup(app):
    app.connect("config-inited", _mathjax_components, priority=900)
    # after pages.py (900) has rewritten the pages and copied its scripts
    app.connect("build-finished", _lighten, priority=950)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
