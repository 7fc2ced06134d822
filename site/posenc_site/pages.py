"""Small Sphinx extension for the course site (loaded from _config.yml).

* Drops sphinx-thebe's scripts: the course has no live-kernel button, and Jupyter
  Book 1 includes thebe's inline script twice on every page, which throws
  "Identifier 'THEBE_JS_URL' has already been declared" and names a CDN URL.
* Drops the theme's ``fontawesome.js`` (1.5 MB, a third of a page's budget): it
  only swaps the icon ``<i>`` tags for inline SVGs, and the same icons already
  render from Font Awesome's webfont, which the theme's CSS loads locally.
* Frames on demand: a slider figure (``posenc.course.figures.sliders.slider_figure``) carries
  every frame inline as a ``data:`` URI, so a notebook works anywhere. On the site,
  each frame except the one shown first moves into its own content-hashed file in
  ``posenc-frames/`` beside the page; the ``<img>`` keeps only ``data-src``, and
  ``posenc-widgets.js`` fetches it on demand (and in idle time after load). A figure
  whose frames total at most :data:`INLINE_FIGURE_BYTES` stays inline.
* Live figures (:mod:`posenc.course.figures.live`, anywidget models): the build copies their
  ES module (``posenc-live.js``, package data of ``posenc.course``) into ``_static/``, where
  ``posenc-widgets.js`` imports it; each model keeps only its edition's words and loses its
  ``_esm`` copy of the module (the page never runs it).
* Static figures (``_images/*.png``, saved at 2x by the notebooks' inline backend) are
  stored as 256-colour palette PNGs, about a third of the bytes, and load lazily
  (``loading="lazy"``): a page's first load fetches only the figures near the top.
* The root ``index.html`` (Jupyter Book's redirect to the first page) gets the
  favicon, so a browser does not ask for ``/favicon.ico`` and get a 404.
* Two editions, one site: the English one at the root, the Chinese one (``language =
  zh_CN``, built by ``site/posenc_site/i18n.py``) in :data:`EDITIONS` ``["zh_CN"]`` = ``zh/``. Every
  page gets a language switch in its header that links to the same page in the other
  edition (and ``<link rel="alternate" hreflang>`` for search engines); the English
  build leaves the Chinese pages under ``zh/`` alone.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

from posenc.course.figures.frame_contract import (
    CONTROL_MODELS,
    FRAME_CLASS,
    FRAME_SRC_ATTR,
    FRAMES_DIR,
    LIVE_MODEL,
    LIVE_MODULE,
    MODEL_PREFIX,
    STATE_MIME,
    VIEW_MIME,
    live_module_source,
)
from posenc.course.figures.style import ALT_KEY, TRANSLATED_KEY
from posenc.course.i18n import interface_text, keep_language, translate

# the theme writes this tag from a template macro, not through app.add_js_file
_FONTAWESOME_JS = re.compile(
    r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>')
_STATE = re.compile(rf'(<script type="{re.escape(STATE_MIME)}">)(.*?)(</script>)', re.S)
_VIEW = re.compile(rf'<script type="{re.escape(VIEW_MIME)}">(.*?)</script>', re.S)
_DATA_URI = re.compile(r'src="data:image/(png|webp);base64,([A-Za-z0-9+/=]+)"')
# a static figure, its alt text already what it shows (describe_images runs first)
_OUTPUT_IMG = re.compile(r'<img (alt="[^"]*" src="[^"]*_images/[^"]*")')
_DATA_SRC = re.compile(
    rf'{FRAME_SRC_ATTR}=\\?"{FRAMES_DIR}/([0-9a-f]+\.(?:png|webp))\\?"')
#: A slider figure whose frames together are at most this many bytes stays inline.
INLINE_FIGURE_BYTES = 40_000
_PREFIX = MODEL_PREFIX
#: Each edition's folder under the site's root, and how its switch names it.
EDITIONS = {"en": ("", "English", "en"), "zh_CN": ("zh/", "中文", "zh-CN")}
_SEARCH_SCRIPTS = re.compile(
    r'\s*<script src="(?:\.\./)*(?:_static/searchtools\.js|_static/language_data\.js|'
    r'searchindex\.js)"></script>')
_HEADER_BUTTONS = '<div class="article-header-buttons">'
_HEAD_END = "</head>"


def _is_unused(asset) -> bool:
    name = getattr(asset, "filename", None) or str(asset)
    body = getattr(asset, "attributes", {}).get("body", "") or ""
    return "thebe" in (name or "") or "THEBE_JS_URL" in body


def _strip_unused(app, pagename, templatename, context, doctree):
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [a for a in context[key] if not _is_unused(a)]


def _ref(model_id: str) -> str:
    return model_id[len(_PREFIX):] if model_id.startswith(_PREFIX) else model_id


def figure_frames(state: dict, root: str) -> list[tuple[str, bool]]:
    """The frame models under the widget ``root``: ``(model id, shown first)`` for each.

    A frame is an ``HTMLModel`` holding a ``posenc-frame`` image; it is shown first when
    every ``Stack`` above it selects the branch it is on.
    """
    out = []

    def walk(model_id: str, shown: bool):
        model = state.get(model_id)
        if model is None:
            return
        name, st = model.get("model_name"), model.get("state", {})
        if name == "HTMLModel":
            if FRAME_CLASS in (st.get("value") or ""):
                out.append((model_id, shown))
            return
        for i, child in enumerate(st.get("children") or []):
            walk(_ref(child), shown and (name != "StackModel" or i == st.get("selected_index")))

    walk(root, True)
    return out


def extract_frames(html: str, frames_dir: Path, inline_bytes: int = INLINE_FIGURE_BYTES,
                   lang: str = "en"):
    """Move a page's slider frames out of ``html`` into ``frames_dir``.

    Returns the new HTML and the set of frame file names the page refers to. Files are
    named by the SHA-256 of their bytes, so a frame shared by pages is stored once and
    a browser may cache it for good. Idempotent: a page already processed is unchanged.
    ``lang`` (``"en"``/``"zh"``): the edition; its sliders' labels are translated.
    """
    match = _STATE.search(html)
    if not match:
        return html, set()
    state_doc = json.loads(match.group(2).replace(r"<\/script>", "</script>"))
    state = state_doc.get("state", {})
    roots = [json.loads(v).get("model_id") for v in _VIEW.findall(html)]
    used: set[str] = set()

    def to_file(m: re.Match) -> str:
        ext, data = m.group(1), base64.b64decode(m.group(2))
        name = f"{hashlib.sha256(data).hexdigest()[:20]}.{ext}"
        path = frames_dir / name
        if not path.exists():
            frames_dir.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        used.add(name)
        return f'{FRAME_SRC_ATTR}="{FRAMES_DIR}/{name}"'

    if lang != "en":
        for model in state.values():
            fields = model.get("state", {})
            if model.get("model_name") in CONTROL_MODELS:
                # the label and each value's label ("sentences", "power"; numbers stay)
                if fields.get("description"):
                    fields["description"] = translate(fields["description"], lang, record=False)
                fields["_options_labels"] = [translate(label, lang, record=False)
                                             for label in fields.get("_options_labels", [])]
    for model in state.values():
        fields = model.get("state", {})
        if model.get("model_name") == LIVE_MODEL and isinstance(fields.get("text"), dict):
            words = fields["text"]
            fields["text"] = {lang: words[lang]} if lang in words else words
    for root in roots:
        frames = figure_frames(state, root)
        total = sum(len(state[mid]["state"]["value"]) * 3 // 4 for mid, _ in frames)
        on_demand = total > inline_bytes or any(
            f"{FRAME_SRC_ATTR}=" in state[mid]["state"]["value"] for mid, _ in frames)
        for mid, shown in frames:
            value = state[mid]["state"]["value"]
            if on_demand:
                value = _DATA_URI.sub(_as_webp if shown else to_file, value)
            state[mid]["state"]["value"] = value
    for value in (m.get("state", {}).get("value") for m in state.values()):
        if isinstance(value, str):
            used.update(_DATA_SRC.findall(value))
    _drop_unrendered(state)
    text = json.dumps(state_doc).replace("</", r"<\/")
    return html[:match.start(2)] + text + html[match.end(2):], used


#: Widget models posenc-widgets.js never reads (sizes and styles come from posenc.css).
_UNRENDERED = ("LayoutModel", "HTMLStyleModel", "SliderStyleModel", "DescriptionStyleModel",
               "ToggleButtonsStyleModel")


def _drop_unrendered(state: dict) -> None:
    """Drop what the site's renderer does not read: layout/style models and empty fields
    (about half of a slider figure's page weight before compression)."""
    for model_id in [k for k, m in state.items() if m.get("model_name") in _UNRENDERED]:
        del state[model_id]
    for model in state.values():
        fields = model.get("state", {})
        for key in [k for k, v in fields.items() if v is None or k.startswith("_view_")
                    or k in ("layout", "style", "_model_module", "_model_module_version",
                             "_esm", "_css", "_anywidget_id")]:
            del fields[key]
        for key in ("model_module", "model_module_version"):
            model.pop(key, None)


def _as_webp(m: re.Match) -> str:
    """The frame shown first stays in the page: as lossless WebP where that is smaller
    (about 0.7x a palette PNG), since it counts towards the page's first load."""
    import io

    from PIL import Image

    data = base64.b64decode(m.group(2))
    if m.group(1) != "png":
        return m.group(0)
    out = io.BytesIO()
    with Image.open(io.BytesIO(data)) as img:
        img.save(out, format="webp", lossless=True, method=4)
    if out.tell() >= len(data):
        return m.group(0)
    return f'src="data:image/webp;base64,{base64.b64encode(out.getvalue()).decode()}"'


def edition(language: str | None) -> str:
    """The key of :data:`EDITIONS` for a Sphinx ``language`` (``None``/``en`` -> ``en``)."""
    return language if language in EDITIONS else "en"


_UI_ATTRIBUTE = re.compile(r'((?:aria-label|title|placeholder)=")([^"<>]*)(")')


def interface_language(html: str, lang: str) -> str:
    """``html`` with the theme's interface strings (``aria-label``, ``title`` and
    ``placeholder`` values such as "Link to this heading") in ``lang``
    (:func:`posenc.course.i18n.interface_text`)."""
    if lang == "en":
        return html
    return _UI_ATTRIBUTE.sub(lambda m: m.group(1) + interface_text(m.group(2), lang)
                             + m.group(3), html)


_EMPHASIS = re.compile(r"<em>([^<]*)</em>")
_LATIN_RUN = re.compile(r"[\x21-\x7e→][\x20-\x7e→]*[\x21-\x7e→]|[\x21-\x7e]")


def latin_in_emphasis(html: str) -> str:
    """Each Latin run inside an ``<em>`` of a Chinese page marked ``posenc-latin``: the
    Chinese pages draw emphasis as dots under the characters (posenc.css), which Latin
    text does not take; it keeps its italics instead (*Run → Run All Cells*)."""
    def mark(m):
        inner = _LATIN_RUN.sub(lambda r: f'<span class="posenc-latin">{r.group(0)}</span>'
                               if re.search(r"[A-Za-z0-9]", r.group(0)) else r.group(0),
                               m.group(1))
        return f"<em>{inner}</em>"

    return _EMPHASIS.sub(mark, html)


def language_switch(html: str, rel_path: str, language: str) -> str:
    """``html`` (the page at ``rel_path`` under its edition's root) with a link to the same
    page in the other edition: a button in the article header and an ``alternate`` link
    in the head. Idempotent."""
    if "posenc-lang-switch" in html:
        return html
    own = edition(language)
    other = "en" if own != "en" else "zh_CN"
    depth = rel_path.count("/") + EDITIONS[own][0].count("/")
    href = "../" * depth + EDITIONS[other][0] + rel_path
    name, tag = EDITIONS[other][1], EDITIONS[other][2]
    button = (f'<a class="btn posenc-lang-switch" href="{href}" hreflang="{tag}" lang="{tag}" '
              f'title="{name}">{name}</a>')
    html = html.replace(_HEADER_BUTTONS, _HEADER_BUTTONS + button, 1)
    return html.replace(_HEAD_END,
                        f'<link rel="alternate" hreflang="{tag}" href="{href}" />\n{_HEAD_END}', 1)


_CAPTION = re.compile(r'(<span class="caption-text">)([^<]+)(</span>)')


def toc_captions(app):
    """The table of contents' part captions in the build's language: a function of the English
    caption. They are messages of the root page's catalogue, and Sphinx translates them there,
    but the theme draws every page's sidebar from the untranslated ``_toc.yml``."""
    import gettext
    import html as html_lib

    if edition(app.config.language) == "en":
        return lambda caption: caption
    root = app.config.master_doc
    found = [gettext.translation(root, str(Path(app.srcdir) / d), [app.config.language],
                                 fallback=True) for d in app.config.locale_dirs]
    # a folder without the catalogue gives a NullTranslations, which translates nothing
    messages = next((m for m in found if type(m) is not gettext.NullTranslations), found[0])
    return lambda caption: html_lib.escape(messages.gettext(html_lib.unescape(caption)),
                                           quote=False)


def own_pages(outdir: Path, language: str):
    """The HTML pages of this build: the English build skips the other editions' folders."""
    others = [outdir / folder for key, (folder, _, _) in EDITIONS.items()
              if folder and key != edition(language)]
    for page in outdir.rglob("*.html"):
        if not any(o in page.parents for o in others):
            yield page


def _finish_pages(app, exception):
    """After the HTML build (``build-finished``), this edition's jobs, in order: rewrite its
    pages (:func:`_rewrite_pages`), delete the frames no page uses any more
    (:func:`_remove_stale_frames`), give the redirect page the favicon
    (:func:`_favicon_on_redirect`), swap the static figures for this edition's
    (:func:`_translate_static_figures`) and shrink them (:func:`_shrink_static_figures`).
    Nothing after a failed build or for another builder."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    lang = "zh" if edition(app.config.language) == "zh_CN" else "en"
    figures = _static_figures(app)  # read once: alt texts and translated images
    used = _rewrite_pages(app, outdir, lang, _figure_alts(figures, lang))
    _remove_stale_frames(used)
    _copy_live_module(outdir / "_static")
    _favicon_on_redirect(app, outdir)
    _translate_static_figures(outdir / "_images", figures, lang)
    _shrink_static_figures(outdir / "_images")


def _rewrite_pages(app, outdir: Path, lang: str, alts: dict[str, str]) -> dict[Path, set[str]]:
    """Rewrite each page of this build (:func:`own_pages`) with :func:`_rewrite_page`,
    writing only those that changed; returns ``{frames folder: the frame files its pages
    use}``."""
    used: dict[Path, set[str]] = {}
    caption = toc_captions(app)
    for page in own_pages(outdir, app.config.language):
        text = page.read_text(encoding="utf-8")
        rel_path = page.relative_to(outdir).as_posix()
        redirect = page.name == "index.html" and page.parent == outdir
        new, names = _rewrite_page(text, page.parent / FRAMES_DIR, lang=lang,
                                   language=app.config.language, caption=caption, alts=alts,
                                   rel_path=None if redirect else rel_path)
        used.setdefault(page.parent / FRAMES_DIR, set()).update(names)
        if new != text:
            page.write_text(new, encoding="utf-8")
    return used


def _rewrite_page(html: str, frames: Path, *, lang: str, language: str, caption, alts,
                  rel_path: str | None) -> tuple[str, set[str]]:
    """One page's HTML for its edition ``lang``: without the theme's ``fontawesome.js`` and
    the other language's outputs (:func:`~posenc.course.i18n.keep_language`), its table
    of contents' captions (``caption``, :func:`toc_captions`) and the theme's strings
    (:func:`interface_language`) in ``lang``, each static figure's alt text from ``alts``
    (:func:`describe_images`), Latin kept italic in Chinese emphasis
    (:func:`latin_in_emphasis`), the language switch (:func:`language_switch`; none when
    ``rel_path`` is ``None``: the root's redirect page), the search scripts only on the
    search page (:func:`drop_search_scripts`), static figures loaded lazily, and the slider
    frames moved to ``frames`` (:func:`extract_frames`). Returns the new HTML and the frame
    files it uses."""
    html = keep_language(_FONTAWESOME_JS.sub("", html), lang)
    if rel_path is None or rel_path.rsplit("/", 1)[-1] != "search.html":
        html = drop_search_scripts(html)
    html = _CAPTION.sub(lambda m: m.group(1) + caption(m.group(2)) + m.group(3), html)
    html = describe_images(interface_language(html, lang), alts)
    if lang == "zh":
        html = latin_in_emphasis(html)
    if rel_path is not None:
        html = language_switch(html, rel_path, language)
    html = _OUTPUT_IMG.sub(r'<img loading="lazy" decoding="async" \1', html)
    return extract_frames(html, frames, lang=lang)


def drop_search_scripts(html: str) -> str:
    """``html`` without Sphinx's search scripts and index. The theme puts them (41 KB of
    index in English, 64 KB in Chinese) on every page for a search-as-you-type this site does
    not turn on: its search box opens ``search.html``, the one page that keeps them."""
    return _SEARCH_SCRIPTS.sub("", html)


def _remove_stale_frames(used: dict[Path, set[str]]) -> None:
    """Delete the frame files of an earlier build that no page refers to any more (``used``:
    :func:`_rewrite_pages`'s ``{folder: names in use}``)."""
    for folder, names in used.items():
        if not folder.is_dir():
            continue
        for stale in folder.iterdir():
            if stale.name not in names:
                stale.unlink()


def classic_script(module: str) -> str:
    """The ES module ``module`` as a classic script that sets ``window.posencLive`` to its
    exports: a page opened from a ``file://`` URL may not import a module (the browser refuses
    a module from the origin ``null``), but it runs a classic script. The same code: only the
    ``export`` keywords go."""
    names = re.findall(r"^export (?:async )?(?:function\*?|const|let|class) (\w+)", module, re.M)
    body = re.sub(r"^export default .*$", "", module, flags=re.M)
    body = re.sub(r"^export ", "", body, flags=re.M)
    return (f"/* {LIVE_MODULE} as a classic script (site/posenc_site/pages.py) */\n"
            f"(function () {{\n{body}\nwindow.posencLive = {{ {', '.join(names)} }};\n}})();\n")


def _copy_live_module(static: Path) -> None:
    """The live figures' ES module into the site's ``_static/`` (``posenc-widgets.js`` imports
    it from there): the same file Jupyter runs, from the installed package; beside it, the
    same code as a classic script (:func:`classic_script`) for a page read from ``file://``."""
    source = live_module_source()
    classic = LIVE_MODULE.replace(".js", ".classic.js")
    for name, text in ((LIVE_MODULE, source), (classic, classic_script(source))):
        target = static / name
        if not target.exists() or target.read_text("utf-8") != text:
            static.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


def _translate_static_figures(images: Path, figures, lang: str) -> None:
    """In an edition other than English, replace each static figure in ``images`` by its
    ``lang`` version (:func:`_translated_images` of ``figures``, :func:`translate_images`)."""
    if lang != "en":
        translate_images(images, _translated_images(figures, lang))


def _shrink_static_figures(images: Path) -> None:
    """Store every static figure in ``images`` as a palette PNG where that is smaller
    (:func:`shrink_png`)."""
    for image in images.glob("*.png"):
        shrink_png(image)


def _static_figures(app) -> list[tuple[str, dict]]:
    """``(sha256 of the English PNG, its output metadata)`` for every static figure of the
    notebooks' outputs in the execution cache (MyST-NB names the image file by that hash;
    :func:`posenc.course.figures.style.inline_png` made the metadata). Read once a build:
    the alt texts and the translated images both come from it."""
    from jupyter_cache import get_cache

    # Jupyter Book leaves the option empty and uses <build>/.jupyter_cache; an empty path
    # would open (and create) a cache in the working folder
    path = Path(app.config.nb_execution_cache_path or Path(app.outdir).parent / ".jupyter_cache")
    if not path.is_dir():
        return []
    cache = get_cache(str(path))
    return [(hashlib.sha256(base64.b64decode(png)).hexdigest(),
             output.get("metadata", {}).get("image/png", {}))
            for record in cache.list_cache_records()
            for cell in cache.get_cache_bundle(record.pk).nb.cells
            for output in cell.get("outputs", [])
            if (png := output.get("data", {}).get("image/png"))]


def _translated_images(figures, lang: str) -> dict[str, bytes]:
    """``{sha256 of an English static figure: its lang version}`` (``figures``:
    :func:`_static_figures`)."""
    return {key: base64.b64decode(meta[TRANSLATED_KEY][lang])
            for key, meta in figures if lang in meta.get(TRANSLATED_KEY, {})}


def _figure_alts(figures, lang: str) -> dict[str, str]:
    """``{sha256 of an English static figure: its alt text in lang}``."""
    return {key: meta[ALT_KEY][lang] for key, meta in figures if lang in meta.get(ALT_KEY, {})}


_IMAGE_ALT = re.compile(r'(<img\b[^>]*?\balt=")((?:\.\./)*_images/([0-9a-f]{64})\.png)(")')


def describe_images(html: str, alts: dict[str, str]) -> str:
    """``html`` with each static figure's alt text (MyST-NB writes the image's path there)
    replaced by what the figure says (:func:`_figure_alts`)."""
    import html as html_lib

    def alt(m):
        text = alts.get(m.group(3))
        return m.group(0) if text is None else (m.group(1) + html_lib.escape(text, quote=True)
                                                 + m.group(4))

    return _IMAGE_ALT.sub(alt, html)


def translate_images(images: Path, translated: dict[str, bytes]) -> int:
    """Replace each static figure in ``images`` (named by the SHA-256 of its bytes, as
    MyST-NB names them) by its translation; returns how many were replaced."""
    done = 0
    for image in images.glob("*.png"):
        if image.stem in translated:
            image.write_bytes(translated[image.stem])
            done += 1
    return done


def shrink_png(path: Path, colors: int = 256) -> bool:
    """Rewrite an opaque full-colour PNG as a palette PNG of ``colors`` colours when that is
    smaller (exact for line plots; heatmaps keep 256 levels). Returns whether it changed."""
    import io

    from PIL import Image

    with Image.open(path) as img:
        if img.mode == "P" or img.mode not in ("RGB", "RGBA"):
            return False
        if img.mode == "RGBA" and img.getchannel("A").getextrema()[0] < 255:
            return False  # keep real transparency
        small = img.convert("RGB").quantize(colors, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    small.save(out, format="png", optimize=True)
    if out.tell() >= path.stat().st_size:
        return False
    path.write_bytes(out.getvalue())
    return True


def _favicon_on_redirect(app, outdir: Path):
    """Give the root ``index.html`` (Jupyter Book's redirect to the first page) the site's
    favicon, so a browser does not ask for ``/favicon.ico`` and get a 404."""
    index = outdir / "index.html"
    favicon = Path(app.config.html_favicon or "").name
    if not (index.exists() and favicon):
        return
    text = index.read_text(encoding="utf-8")
    if 'rel="icon"' not in text:
        link = f'<link rel="icon" href="_static/{favicon}" />\n'
        index.write_text(link + text, encoding="utf-8")


def setup(app):
    app.connect("html-page-context", _strip_unused, priority=900)
    # late, so that Jupyter Book's redirect index.html is already written
    app.connect("build-finished", _finish_pages, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
