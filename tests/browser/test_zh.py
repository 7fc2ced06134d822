"""The Chinese edition as its reader meets it: the language switch, Chinese search, Chinese
figures and sliders, and the Chinese notebooks to download. (Every page check of
test_site.py also runs on each Chinese page: it loads cleanly and offline, axe, sliders,
questions, exercises.)"""

import json
import re
import urllib.request

import pytest
from posenc_site.sitecheck import (
    JS_SLIDERS,
    JS_VISIBLE_FRAME,
    JS_WIDGETS_SETTLED,
    SITE,
    content_pages,
)
from posenc_site.zhcheck import page_problems

CJK = re.compile(r"[\u4e00-\u9fff]")


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url) as r:  # the local test server
        return r.read()


def test_every_page_has_its_chinese_twin():
    english = content_pages(editions=("",))
    chinese = content_pages(editions=("zh/",))
    assert [f"zh/{p}" for p in english] == chinese


def test_language_switch_goes_to_the_same_page_and_back(visit):
    v = visit("book/04_rope.html")
    assert v.page.evaluate("document.documentElement.lang") == "en"
    v.page.locator("a.posenc-lang-switch").click()
    v.page.wait_for_url("**/zh/book/04_rope.html")
    assert v.page.evaluate("document.documentElement.lang") == "zh-CN"
    assert CJK.search(v.page.locator("h1").first.inner_text())
    v.page.locator("a.posenc-lang-switch").click()
    v.page.wait_for_url("**/book/04_rope.html")
    assert "/zh/" not in v.page.url


# The section a reader is in: the last shown whose top has passed the top third of the window
# (posenc-page.js), by its index among the page's sections, with how far its top is from
# where a jump to it puts it.
JS_READERS_SECTION = """() => {
    const pad = parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop) || 0;
    const line = Math.max(pad, innerHeight / 3);
    const sections = [...document.querySelectorAll('article.bd-article section')];
    let here = -1;
    sections.forEach((s, i) => {
      if (s.checkVisibility() && s.getBoundingClientRect().top <= line) here = i; });
    return {index: here, id: here >= 0 ? sections[here].id : null, count: sections.length,
            offset: here >= 0 ? Math.round(sections[here].getBoundingClientRect().top - pad) : null,
            scrollY: scrollY}; }"""


def test_language_switch_keeps_the_readers_section(visit):
    """Issue 46: a reader halfway down a chapter who switches language lands on the same
    section of the twin (by its place among the page's sections: the ids differ between
    editions), and on the same section again on the way back; its id is in the address."""
    v = visit("book/04_rope.html")
    page = v.page
    page.wait_for_function("() => MathJax.startup.promise.then(() => true)")
    page.evaluate("""() => { const s = document.querySelectorAll(
        'article.bd-article section')[5]; s.scrollIntoView(); scrollBy(0, 150); }""")
    before = page.evaluate(JS_READERS_SECTION)
    assert before["index"] == 5, before
    for lang, twin in (("zh-CN", re.compile(r"/zh/book/04_rope\.html#")),
                       ("en", re.compile(r"//[^/]+/book/04_rope\.html#"))):
        # a reader's click where the switch is (Playwright's own click scrolls the page first,
        # for a link in the sticky header: 458 px up, another section)
        box = page.locator("a.posenc-lang-switch").bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_url(twin)
        page.wait_for_function("() => MathJax.startup.promise.then(() => true)")
        assert page.evaluate("document.documentElement.lang") == lang
        # arrived: the section's top where a jump to it puts it, as the page settles
        page.wait_for_function(f"""() => {{ const r = ({JS_READERS_SECTION})();
            return r.index === 5 && Math.abs(r.offset) <= 2; }}""", timeout=5000)
        after = page.evaluate(JS_READERS_SECTION)
        assert after["count"] == before["count"] and after["scrollY"] > 0, after
        assert page.url.endswith(f"#{after['id']}"), (page.url, after)


def test_every_page_links_its_twin(base_url):
    for path in content_pages():
        html = (SITE / path).read_text(encoding="utf-8")
        match = re.search(r'<a class="btn posenc-lang-switch" href="([^"]+)"', html)
        assert match, f"{path}: no language switch"
        target = (SITE / path).parent / match.group(1)
        assert target.resolve().exists(), f"{path}: switch points to {match.group(1)}"
        lang = re.search(r'<html lang="([^"]+)"', html).group(1)
        assert lang == ("zh-CN" if path.startswith("zh/") else "en"), path


@pytest.mark.parametrize("term, page", [("外推", "09_extrapolation"), ("旋转", "04_rope"),
                                        ("斜率", "06_alibi"), ("ALiBi", "06_alibi")])
def test_search_finds_chinese_words_offline(visit, base_url, term, page):
    v = visit(f"zh/search.html?q={term}")
    v.page.wait_for_selector("#search-results ul.search li", timeout=10000)
    links = v.page.eval_on_selector_all("#search-results ul.search li a",
                                        "els => els.map(e => e.href)")
    assert any(f"zh/book/{page}" in href for href in links), (term, links)
    assert [u for u in v.requests if not u.startswith((base_url, "data:"))] == []


def test_chinese_sliders_are_labelled_and_drawn_in_chinese(visit):
    """Labels in words are Chinese (``scale factor s`` -> 缩放因子 s; ``d_model`` stays), and
    so is every frame figure's alt text and every live figure's title (the name its canvas
    is read by)."""
    v = visit("zh/book/05_rope_scaling.html")
    v.page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
    sliders = v.page.evaluate(JS_SLIDERS)
    assert any(CJK.search(s["label"]) for s in sliders), [s["label"] for s in sliders]
    widgets = v.page.locator(".posenc-widget")
    kinds = []
    for i in range(widgets.count()):
        widget = widgets.nth(i)
        if widget.locator(".posenc-live").count():
            kinds.append("live")
            title = widget.locator(".posenc-live-title").first
            title.wait_for(timeout=10000)
            canvas = widget.locator("canvas[role=img]").first
            assert canvas.get_attribute("aria-labelledby") == title.get_attribute("id")
            assert CJK.search(title.inner_text()), title.inner_text()
        else:
            kinds.append("frames")
            frame = widget.evaluate(JS_VISIBLE_FRAME)
            assert frame and CJK.search(frame["alt"]), frame
    assert {"live", "frames"} <= set(kinds), kinds  # chapter 5 has both kinds


def test_chinese_static_figures_are_their_own_images():
    """A static figure of a Chinese page is the Chinese drawing, not the English one."""
    english = {p.name: p.read_bytes() for p in (SITE / "_images").glob("*.png")}
    chinese = {p.name: p.read_bytes() for p in (SITE / "zh" / "_images").glob("*.png")}
    shared = set(english) & set(chinese)
    assert shared and sum(english[n] != chinese[n] for n in shared) >= len(shared) // 2


def test_chinese_download_is_the_chinese_notebook(base_url):
    nb = json.loads(_get(f"{base_url}/zh/_sources/book/04_rope.ipynb"))
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert CJK.search(text) and any('set_language("zh")' in c for c in code)
    english = json.loads(_get(f"{base_url}/_sources/book/04_rope.ipynb"))
    assert [c["source"] for c in english["cells"] if c["cell_type"] == "code"] == \
        [c["source"] for c in nb["cells"] if c["cell_type"] == "code"
         and c.get("id") != "posenc-zh"]


def test_chinese_sidebar_names_the_parts_in_chinese():
    html = (SITE / "zh" / "book" / "04_rope.html").read_text(encoding="utf-8")
    captions = re.findall(r'<span class="caption-text">([^<]+)</span>', html)
    assert len(captions) >= 3 and all(CJK.search(c) for c in captions), captions


#: English words a Chinese page's interface may show: names, as the text writes them
UI_LATIN = {"English", "Ctrl", "RoPE", "ALiBi", "Jupyter", "JupyterLab", "Python", "GitHub",
            "PDF", "ipynb", "md", "Binder", "Colab", "KERPLE", "FIRE", "CoPE", "token", "base",
            "NTK", "YaRN"}


def test_a_chinese_page_has_no_english_interface(visit):
    """The slider values, the widgets' announcements, the logo and the theme's buttons and
    labels read in Chinese (the figures and prose are checked at build time)."""
    v = visit("zh/book/12_learned_biases.html")
    v.page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
    ui = v.page.evaluate("""() => {
        const out = [];
        for (const e of document.querySelectorAll('[aria-label], [title], button, label, '
                                                  + '.posenc-slider-readout, .posenc-status'))
            out.push(e.getAttribute('aria-label') || '', e.getAttribute('title') || '',
                     e.matches('button, label, .posenc-slider-readout') ? e.innerText : '');
        for (const s of document.querySelectorAll('.posenc-slider input[type=range]'))
            out.push(...JSON.parse(s.dataset.labels || '[]'));
        for (const o of document.querySelectorAll('.posenc-slider select option'))
            out.push(o.textContent);  // a menu's names (its choice buttons are buttons above)
        const logo = document.querySelector('img.logo__image');
        out.push(logo ? logo.getAttribute('src') : 'no logo');
        return out; }""")
    english = sorted({w for text in ui for w in re.findall(r"[A-Za-z]{2,}", text)
                      if not re.search(r"[/.]", text) and w not in UI_LATIN})
    assert english == [], english
    logo = ui[-1]
    assert logo.endswith("logo-zh.svg"), logo


def test_chinese_emphasis_is_upright_with_emphasis_dots(visit):
    v = visit("zh/book/01_why_order.html")
    style = v.page.evaluate("""() => { const em = document.querySelector('main em');
        const s = getComputedStyle(em);
        return [em.innerText, s.fontStyle, s.textEmphasisStyle || s.webkitTextEmphasisStyle]; }""")
    assert style[1] == "normal" and "dot" in style[2], style


def test_chinese_pages_show_no_markdown_marks_and_keep_the_spacing_rule():
    """Issue 47 (review 2026-11-29, B.2, D.1, E.2): what the catalogue checks cannot see, in
    every built Chinese page's prose (posenc_site.zhcheck): no ``*``, ``**`` or ``_`` left
    from an emphasis CommonMark did not close (``*对照：*答案``), one space between Chinese and
    Latin, none beside full-width punctuation, quotes and brackets or between Chinese letters.
    Before a build: ``python -m posenc_site.zhcheck --catalogues``."""
    pages = content_pages(editions=("zh/",))
    assert pages
    found = [problem for path in pages
             for problem in page_problems((SITE / path).read_text(encoding="utf-8"), path)]
    assert found == [], "\n".join(found)
