"""The built site, checked the way a reader uses it: in Chromium, page by page.

Runs after `make book` (part of `make test`). Every chapter page must load cleanly,
stay on its own origin, show all its images and typeset math, and every slider
must switch its figure -- to the figure for the value it shows.
"""

import re
import statistics

import pytest
import yaml
from posenc_site.sitecheck import (
    FIRST_LOAD_BUDGET_BYTES,
    FRAME_SLIDERS,
    JS_ARM_LATENCY,
    JS_FIGURE_BACKGROUNDS,
    JS_FIGURE_PREFETCHED,
    JS_FRAME_CHANGED,
    JS_IMAGES,
    JS_LAZY_IMAGES_DONE,
    JS_LOAD_LAZY_IMAGES,
    JS_MATH_STATE,
    JS_QUIZZES_DRAWN,
    JS_SAVE_DATA,
    JS_SLIDERS,
    JS_TRANSITIONS_DONE,
    JS_VISIBLE_FRAME,
    JS_WIDGETS_SETTLED,
    ROOT,
    SAMPLE,
    SITE,
    axe_violations,
    content_pages,
    idle_scroll,
    idle_scroll_transfers_all,
)

# Console messages the course cannot fix, each as "<text> [<the URL it is about>]". Each
# entry: a regex and why it is harmless. (Thebe's duplicated script and the theme-mode
# message were fixed in site/posenc_site/pages.py and _config.yml.)
CONSOLE_ALLOWLIST: list[tuple[str, str]] = [
    (r"^Failed to load resource: .* 404 .*\[http://127\.0\.0\.1:\d+/(zh/)?basic\.css\]$",
     "axe-core, not the page: its CSSOM preload resolves the theme's `@import \"../basic.css\"` "
     "(in _static/styles/theme.css) against the page's folder instead of the stylesheet's "
     "(zh/basic.css for the Chinese pages); a reader's browser loads _static/basic.css"),
]

SLIDER_BUDGET_MS = 50


def allowed(message: str) -> bool:
    return any(re.search(pattern, message) for pattern, _why in CONSOLE_ALLOWLIST)


def test_every_chapter_is_built():
    """Every file of _toc.yml is a page of the site."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert len(files) >= 15  # intro, 12 chapters, running locally, references
    pages = {p.split("/")[-1] for p in content_pages()}
    for name in files:
        assert f"{name.split('/')[-1]}.html" in pages


# Every page, as one reader visit (`reader`), whose system asks for the light or the dark
# theme as a check needs (`_in_theme`). The checks run in the order written here: those that
# only look come first, then those that move sliders, answer questions, reveal solutions
# and, last, switch the theme with the theme's own button.

def _foreign(v, base_url) -> list[str]:
    """The requests of visit ``v`` that left the site's origin."""
    return [u for u in v.requests
            if not u.startswith(base_url) and not u.startswith(("data:", "blob:"))]


def _in_theme(request, theme: str):
    """The shared visit of the page, its reader's system now asking for ``theme`` ("light"
    or "dark"), once the theme (in its default "auto" mode) has followed and its colour
    transitions are over. (A second visit per page, loaded dark, cost ~3 s of CPU each;
    that a page loaded dark starts dark is checked once, in
    ``test_a_system_in_dark_mode_gets_the_dark_theme_at_load``.)"""
    v = request.getfixturevalue("reader")
    v.page.emulate_media(color_scheme=theme)
    v.page.wait_for_function("t => document.documentElement.dataset.theme === t", arg=theme,
                             timeout=10000)
    # transitions start at the next style update: two frames on, then wait for them to end
    v.page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    v.page.wait_for_function(JS_TRANSITIONS_DONE, timeout=10000)
    return v


def test_a_system_in_dark_mode_gets_the_dark_theme_at_load(visit):
    for path in ("book/04_rope.html", "zh/book/04_rope.html"):
        v = visit(path, color_scheme="dark")
        assert v.page.evaluate("document.documentElement.dataset.theme") == "dark", path
        background = v.page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert _luminance(background) < 0.3, f"{path}: page did not load dark: {background}"


def test_the_workers_get_each_pages_checks_together(request):
    """conftest.pytest_xdist_make_scheduler's groups: every test that reads a page's shared
    visit is in that page's group, and no other test is."""
    from . import conftest

    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        page = spec.params.get("page_path") if spec is not None else None
        expected = conftest._page_id(page) if page is not None else None
        assert conftest.page_group(item.nodeid) == expected, item.nodeid


def test_page_loads_cleanly_and_stays_on_its_origin(reader, base_url):
    v = reader
    assert v.response.status == 200
    assert v.page_errors == []
    assert [m for m in v.console_errors if not allowed(m)] == []
    foreign = _foreign(v, base_url)
    assert foreign == [], f"requests left the site's origin: {foreign}"


def _edition(page_path: str) -> str:
    """``"zh"`` for a page of the Chinese edition (under zh/), else ``"en"``."""
    return "zh" if page_path.startswith("zh/") else "en"


def _english_only(page_path: str, why: str) -> None:
    """Skip a check on the Chinese edition where it would repeat the English page's: the
    same stylesheet, scripts and colours (only the words differ)."""
    if _edition(page_path) != "en":
        pytest.skip(why)


def test_first_load_is_within_budget(reader):
    """Issue 38: every page's first load, the bytes on the wire (gzip) of what finished by the
    load event, is at most 650 KB, in both editions: the page shell (theme, MathJax, icon
    font: posenc_site.shell) plus the chapter."""
    first = reader.transfers.first_load()
    total = sum(first.values())
    heaviest = sorted(first.items(), key=lambda kv: -kv[1])[:5]
    assert total <= FIRST_LOAD_BUDGET_BYTES, (total, heaviest)
    assert any(url.endswith(".html") for url in first)  # the page itself was counted


def test_chapter_offers_its_notebook_download(reader, page_path):
    folder = SITE / ("zh" if _edition(page_path) == "zh" else "")
    source = folder / "_sources" / "book" / page_path.split("/")[-1].replace(".html", ".ipynb")
    if not source.exists():
        pytest.skip("not a notebook chapter")
    hrefs = reader.page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
    assert any(h and h.endswith(".ipynb") for h in hrefs), f"{page_path}: no .ipynb download"


def test_images_load_and_math_is_typeset(reader):
    v = reader
    # as a reader scrolls through: lazy figures load, and the frames prefetched load
    v.page.evaluate(JS_LOAD_LAZY_IMAGES)
    v.page.wait_for_function(JS_LAZY_IMAGES_DONE, timeout=30000)
    v.page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
    images = v.page.evaluate(JS_IMAGES)
    broken = [i for i in images if not (i["complete"] and i["width"] > 0 and i["height"] > 0)]
    assert broken == []
    math = v.page.evaluate(JS_MATH_STATE)
    assert math["untypeset"] == [], "math left as raw TeX"
    assert math["raw"] == [], "TeX source visible in the page text"


# every icon drawn from a Font Awesome font: its family, weight and code point
JS_ICONS = """() => {
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('.highlight, mjx-container')) continue;
    for (const pseudo of ['::before', '::after']) {
      const s = getComputedStyle(el, pseudo);
      if (!s.fontFamily.includes('Font Awesome')) continue;
      const m = /^"(.)"$/u.exec(s.content);
      if (m) out.push([s.fontFamily, s.fontWeight, m[1].codePointAt(0), el.className]);
    }
  }
  return out;
}"""


def test_every_icon_has_its_glyph_in_the_cut_icon_font(reader, page_path):
    """posenc_site.shell cuts the theme's icon fonts to the glyphs the site names; each icon
    the page draws (shown or hidden) must still be in the font it is drawn from."""
    from fontTools.ttLib import TTFont
    from posenc_site.shell import ICON_FONTS

    edition = SITE / "zh" if page_path.startswith("zh/") else SITE
    fonts = edition / "_static" / ICON_FONTS
    cmap = {("Free", "900"): set(TTFont(fonts / "fa-solid-900.woff2").getBestCmap()),
            ("Free", "400"): set(TTFont(fonts / "fa-regular-400.woff2").getBestCmap()),
            ("Brands", "400"): set(TTFont(fonts / "fa-brands-400.woff2").getBestCmap())}
    icons = reader.page.evaluate(JS_ICONS)
    assert icons, "no icon found: the check would pass on nothing"
    missing = [(family, weight, hex(code), cls) for family, weight, code, cls in icons
               if code not in cmap[("Brands" if "Brands" in family else "Free", weight)]]
    assert missing == []


def test_figures_fill_the_column_at_two_device_px(reader):
    v = reader
    v.page.evaluate(JS_LOAD_LAZY_IMAGES)
    v.page.wait_for_function(JS_LAZY_IMAGES_DONE, timeout=30000)
    figures = v.page.evaluate("""() => {
      const a = document.querySelector('article.bd-article'), s = getComputedStyle(a);
      const column = a.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
      return [...document.querySelectorAll('.cell_output img, .posenc-stack img')]
        .filter(i => i.offsetParent !== null)
        .map(i => ({src: i.currentSrc.slice(-40), width: i.clientWidth, column,
                    natural: i.naturalWidth, frame: i.classList.contains('posenc-frame')}));
    }""")
    for f in figures:
        assert f["width"] >= 0.97 * f["column"], f
        # slider frames and static figures alike: 2 device px per CSS px
        assert f["natural"] >= 1.98 * f["width"], f


def test_no_page_scrolls_sideways_on_a_phone(reader):
    """At 390 CSS px nothing widens the page: a long identifier in a paragraph
    (``models/granitemoehybrid/modeling_granitemoehybrid.py``) breaks (posenc.css)."""
    page = reader.page
    size = page.viewport_size
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.wait_for_timeout(100)
        width, wide = page.evaluate("""() => [document.documentElement.scrollWidth,
            [...document.querySelectorAll('main *')]
            .filter(el => el.getBoundingClientRect().right > innerWidth + 1)
            .map(el => el.tagName + ': ' + (el.textContent || '').slice(0, 60)).slice(0, 5)]""")
    finally:
        page.set_viewport_size(size)
    assert width <= 390, f"the page is {width} px wide on a 390-px phone: {wide}"


def test_code_cells_are_not_cut_off(reader):
    v = reader
    # the folded cells too (the checks: a folded block has no layout, and no innerText)
    folded = v.page.evaluate("""() => [...document.querySelectorAll('div.cell details.hide')]
        .filter(d => !d.open).map(d => { d.open = true; return d; })""")
    try:
        cut = v.page.evaluate("""() => [...document.querySelectorAll('div.cell_input pre')]
            .filter(p => p.scrollWidth > p.clientWidth + 1).map(p => p.textContent.slice(0, 60))""")
        # copying a wrapped cell still gives the code back, line for line
        same = v.page.evaluate("""() => [...document.querySelectorAll('div.cell_input pre')]
            .every(p => p.innerText.trimEnd() === p.textContent.trimEnd())""")
    finally:
        v.page.evaluate("ds => ds.forEach(d => { d.open = false; })", folded)
    assert cut == []
    assert same


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_or_critical_accessibility_violations(request, page_path, scheme):
    if scheme == "dark":
        _english_only(page_path, "the dark theme's colours are the English page's")
    v = _in_theme(request, scheme)
    assert v.page.evaluate("document.documentElement.dataset.theme") == scheme, page_path
    v.page.wait_for_function(JS_QUIZZES_DRAWN, timeout=10000)  # drawn after a timeout
    # colours are measured once they have settled: mid-transition, the search button's
    # text was once caught between the themes' colours (a contrast failure that is not there)
    v.page.wait_for_function(JS_TRANSITIONS_DONE, timeout=10000)
    # the dark theme changes colours only: its run is the colour rule alone. A Chinese page
    # has the English page's stylesheet and colours, but its own words, labels and language:
    # every rule but the colour rule
    violations = axe_violations(v.page, structure=scheme == "light",
                                contrast=_edition(page_path) == "en")
    serious = [(x["id"], x["impact"], [n["target"] for n in x["nodes"][:3]])
               for x in violations if x["impact"] in ("serious", "critical")]
    assert serious == [], serious


def test_axe_code_samples_still_catch_a_low_contrast_token(visit):
    """The sampled colour-contrast check (sitecheck.axe_violations) fails when one kind of
    code token becomes unreadable."""
    v = visit("book/01_why_order.html")
    assert axe_violations(v.page, structure=False) == []
    v.page.evaluate("""() => document.querySelectorAll('pre span.kn').forEach(s =>
        s.style.color = 'rgb(245, 245, 245)')""")
    caught = [(x["id"], n["target"])
              for x in axe_violations(v.page, structure=False) for n in x["nodes"]]
    assert [i for i, _ in caught] == ["color-contrast"] and SAMPLE in str(caught), caught


def test_every_slider_moves_its_figure_to_the_value_it_shows(reader):
    page = reader.page
    sliders = page.evaluate(JS_SLIDERS)
    if not sliders:
        pytest.skip("no sliders on this page")
    page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
    widgets = page.locator(".posenc-widget")
    for s in sliders:
        root = widgets.nth(s["widget"])
        before = root.evaluate(JS_VISIBLE_FRAME)
        assert before and before["complete"] and before["width"] > 0
        key = "ArrowLeft" if s["value"] == s["max"] else "ArrowRight"
        page.locator(FRAME_SLIDERS).nth(s["index"]).press(key)
        # fetched on demand where the prefetch policy did not want it
        page.wait_for_function(JS_FRAME_CHANGED, arg=[root.element_handle(), before["alt"]],
                               timeout=15000)
        after = root.evaluate(JS_VISIBLE_FRAME)
        moved = page.evaluate(JS_SLIDERS)[s["index"]]
        assert moved["value"] != s["value"] and moved["readout"] != s["readout"]
        assert after["alt"] != before["alt"] and after["src"] != before["src"]
        assert after["complete"] and after["width"] > 0
        # the frame shown is the one for every slider value now on display
        for other in page.evaluate(JS_SLIDERS):
            if other["widget"] == s["widget"]:
                assert f"{other['label']}={other['readout']}" in after["alt"], after["alt"]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_self_check_questions_answer_and_stay_readable(request, base_url, page_path, theme):
    """Every question of the chapter answered wrong, then right: the feedback says so, and
    the box, the digits typed and the feedback meet WCAG AA contrast in both themes."""
    from posenc_site.quizcheck import answer_wrong_then_right

    from posenc.course.i18n import translate
    from posenc.course.selfcheck import CHAPTERS, correct_answer, translated_questions

    chapter = page_path.split("/")[-1].removesuffix(".html")
    if chapter not in CHAPTERS:
        pytest.skip("no self-check questions on this page")
    if theme == "dark":
        _english_only(page_path, "the quiz's colours are the English page's")
    lang = _edition(page_path)
    v = _in_theme(request, theme)
    v.page.locator(".Quiz").first.wait_for(timeout=10000)
    failures = []
    for i, q in enumerate(translated_questions(chapter, lang)):
        failures += answer_wrong_then_right(
            v.page, v.page.locator(".Quiz").nth(i), q, correct_answer(q),
            feedback=(translate("Not quite.", lang), translate("Correct.", lang)))
    assert failures == [], failures
    assert v.page_errors == [] and [m for m in v.console_errors if not allowed(m)] == []
    assert _foreign(v, base_url) == []


def test_exercises_hide_their_solutions(reader):
    solutions = reader.page.locator(".solution")
    if solutions.count() == 0:
        pytest.skip("no exercises on this page")
    # numbered within their chapter: chapter 6's are 6.1, 6.2, ... (posenc_site.exercises)
    chapter = int(re.search(r"/(\d\d)_", reader.page.url).group(1))
    numbers = reader.page.locator(".exercise > .admonition-title").all_inner_texts()
    found = [m.groups() for t in numbers for m in [re.search(r"(\d+)\.(\d+)", t)] if m]
    assert found == [(str(chapter), str(k)) for k in range(1, len(found) + 1)] and found, numbers
    for i in range(solutions.count()):
        solution = solutions.nth(i)
        body = solution.locator("section").first
        assert not body.is_visible(), f"solution {i} is visible before it is clicked"
        solution.locator("button.toggle-button").click()
        body.wait_for(state="visible", timeout=5000)  # raises if clicking does not reveal it


def test_dark_mode_toggle_and_readable_figures(request, page_path, screenshots):
    _english_only(page_path, "the theme switch and the figures' ground are the English page's")
    v = _in_theme(request, "light")  # a light system: the page turns dark by the button alone
    name = page_path.split("/")[-1].removesuffix(".html")
    if screenshots:
        v.page.screenshot(path=str(screenshots / f"{name}-light.png"), full_page=True)
    button = v.page.locator("button.theme-switch-button").first
    for _ in range(3):  # the button cycles light -> dark -> auto
        if v.page.evaluate("document.documentElement.dataset.theme") == "dark":
            break
        button.click()
    assert v.page.evaluate("document.documentElement.dataset.theme") == "dark"
    background = v.page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert _luminance(background) < 0.3, f"page did not turn dark: {background}"
    for fig in v.page.evaluate(JS_FIGURE_BACKGROUNDS):
        for r, g, b, a in fig["corners"]:
            assert a == 255 and min(r, g, b) >= 235, f"figure not on an opaque light ground: {fig}"
    if screenshots:
        v.page.screenshot(path=str(screenshots / f"{name}-dark.png"), full_page=True)


@pytest.mark.budget
def test_slider_response_is_fast(visit, page_path):
    # as the idle-scroll budget: a Chinese page runs the same script on frames of the same
    # sizes (its sliders' frames are checked to switch in test_every_slider_moves...)
    _english_only(page_path, "the same script and frame sizes as the English page's")
    v = visit(page_path)
    sliders = v.page.evaluate(JS_SLIDERS)
    if not sliders:
        pytest.skip("no sliders on this page")
    v.page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
    widgets = v.page.locator(".posenc-widget")
    typical = {}
    for s in sliders:
        presses = []
        # as a reader finds it: in view, and its prefetch (+-2 steps of each slider) done
        root = widgets.nth(s["widget"])
        root.scroll_into_view_if_needed()
        for _ in range(3):  # the median of three presses, so one scheduler hiccup is not a verdict
            v.page.wait_for_function(JS_FIGURE_PREFETCHED, arg=root.element_handle(),
                                     timeout=30000)
            now = v.page.evaluate(JS_SLIDERS)[s["index"]]
            v.page.evaluate(JS_ARM_LATENCY, s["index"])
            key = "ArrowLeft" if now["value"] == now["max"] else "ArrowRight"
            v.page.locator(FRAME_SLIDERS).nth(s["index"]).press(key)
            presses.append(v.page.evaluate("window.__posencLatency"))
        typical[f"{s['index']}:{s['label']}"] = statistics.median(presses)
    slow = {k: round(ms, 1) for k, ms in typical.items() if ms > SLIDER_BUDGET_MS}
    assert slow == {}, f"sliders slower than {SLIDER_BUDGET_MS} ms: {slow}"


def test_search_works_offline(visit, base_url):
    for term, page in [("ALiBi", "06_alibi"), ("interleaved", "04_rope"),
                       ("wavelength", "02_sinusoidal")]:
        v = visit(f"search.html?q={term}")
        v.page.wait_for_selector("#search-results ul.search li", timeout=10000)
        links = v.page.eval_on_selector_all("#search-results ul.search li a",
                                            "els => els.map(e => e.href)")
        assert any(page in href for href in links), (term, links)
        foreign = [u for u in v.requests if not u.startswith(base_url)
                   and not u.startswith("data:")]
        assert foreign == []


JS_SEARCH_BOXES = """() => [...document.querySelectorAll('.search-button__button, form.bd-search')]
    .filter(e => e.checkVisibility() && e.getBoundingClientRect().width > 0)
    .map(e => e.parentElement.className)"""


def test_a_wide_screen_has_one_search_box_and_it_searches(visit):
    """Issue 46: the theme drew the same search field twice from 992 px (the top bar's and
    the sidebar's); one is left at every wide width, and it finds a chapter."""
    v = visit("book/04_rope.html")
    page = v.page
    for width in (1280, 1000, 960):
        page.set_viewport_size({"width": width, "height": 900})
        boxes = page.evaluate(JS_SEARCH_BOXES)
        assert len(boxes) == 1, (width, boxes)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.locator(".search-button__button:visible").first.click()
    field = page.locator("form.bd-search input[type=search]:visible").first
    field.fill("ALiBi")
    field.press("Enter")
    page.wait_for_selector("#search-results ul.search li", timeout=10000)
    links = page.eval_on_selector_all("#search-results ul.search li a",
                                      "els => els.map(e => e.href)")
    assert any("06_alibi" in href for href in links), links


def test_no_launch_button_without_a_configured_repository(visit):
    import yaml

    config = yaml.safe_load((SITE.parents[1] / "_config.yml").read_text())
    repo_url = (config.get("repository") or {}).get("url")
    v = visit("book/01_why_order.html")
    launch_links = v.page.eval_on_selector_all(
        ".launch-buttons a, a[href*='mybinder'], a[href*='colab.research']",
        "els => els.map(e => e.href)")
    if not repo_url:
        assert launch_links == [], "a launch button without a configured repository URL"
    else:
        assert all(repo_url.rstrip("/").split("/")[-1] in h for h in launch_links)


def _luminance(css_rgb: str) -> float:
    r, g, b = (int(x) for x in re.findall(r"\d+", css_rgb)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


# Frames on demand, accessibility, layout, self-check questions --------------------------

# chapters 2, 4, 5 and 6 draw their sliders' figures live (posenc-live.js): the page with the
# most frames left
ON_DEMAND_PAGE = "book/15_reading_configs.html"


def test_frames_are_files_fetched_after_load(visit):
    html = (SITE / ON_DEMAND_PAGE).read_text(encoding="utf-8")
    inline = html.count("data:image/webp;base64,") + html.count("data:image/png;base64,")
    on_demand = html.count('data-src=\\"posenc-frames/') + html.count('data-src="posenc-frames/')
    widgets = html.count("application/vnd.jupyter.widget-view+json")
    assert on_demand > 60 and inline <= widgets, (inline, on_demand, widgets)
    v = visit(ON_DEMAND_PAGE)
    early = v.page.evaluate("""() => {
        const load = performance.getEntriesByType('navigation')[0].loadEventStart;
        return performance.getEntriesByType('resource')
          .filter(r => r.name.includes('/posenc-frames/') && r.startTime < load).length; }""")
    assert early == 0, "frames were fetched before the page had loaded"
    v.page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)  # prefetched in idle time
    frames = v.page.evaluate("""() => [...document.querySelectorAll('img.posenc-frame')]
        .filter(i => i.getAttribute('src')).map(i => i.complete && i.naturalWidth > 0)""")
    assert frames and all(frames)


# Prefetch that respects the reader --------------------------------------------------------

IDLE_SCROLL_BUDGET = 2_000_000  # bytes on the wire (gzip-6 text) after 10 s of scrolling


def _pages_with_sliders():
    # the English pages: a Chinese page's prefetch is the same script on frames of the same sizes
    return [p for p in content_pages(editions=("",))
            if "application/vnd.jupyter.widget-view+json" in (SITE / p).read_text("utf-8")]


@pytest.mark.slow
def test_idle_scroll_downloads_at_most_2_mb_and_no_file_twice(browser, base_url):
    """Every page with sliders, each scrolled top to bottom in 10 s by its own reader (the
    pages side by side, so the suite waits 10 s once, not once per page)."""
    transfers = idle_scroll_transfers_all(browser, base_url, _pages_with_sliders(), seconds=10)
    over, twice = {}, {}
    for path, sizes in transfers.items():
        total = sum(sizes.values())
        if total > IDLE_SCROLL_BUDGET:
            over[path] = f"{total / 1e6:.2f} MB"
        if again := [u for u in sizes if "#" in u.rsplit("/", 1)[-1]]:
            twice[path] = again
    assert over == {}, f"more than {IDLE_SCROLL_BUDGET / 1e6:.0f} MB after 10 s of scrolling"
    assert twice == {}, f"fetched more than once: {twice}"


def test_prefetch_only_for_figures_near_the_viewport(visit):
    v = visit(ON_DEMAND_PAGE)
    v.page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
    assert v.page.evaluate("""() => [...document.querySelectorAll('.posenc-widget img')]
        .filter(i => i.dataset.src && i.getAttribute('src')).length""") == 0, \
        "frames prefetched for figures out of view"
    v.page.evaluate("""() => window.scrollTo(0, document.querySelector('.posenc-widget')
        .getBoundingClientRect().top + scrollY - 100)""")  # the reader reaches the first one
    v.page.wait_for_function(JS_FIGURE_PREFETCHED, arg=v.page.query_selector(".posenc-widget"),
                             timeout=30000)
    v.page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
    figures = v.page.evaluate("""() => [...document.querySelectorAll('.posenc-widget')].map(w => {
        const r = w.getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, height: innerHeight,
                asked: [...w.querySelectorAll('img[data-src]')]
                         .filter(i => i.getAttribute('src')).length,
                frames: w.querySelectorAll('img[data-src]').length}; })""")
    near = [f for f in figures if f["top"] < 2 * f["height"] and f["bottom"] > -f["height"]]
    far = [f for f in figures if f not in near]
    assert far and all(f["asked"] == 0 for f in far), figures
    assert any(f["asked"] for f in near), figures
    # a bounded number: one slider at a time, at most 2 steps either way
    assert all(f["asked"] <= 4 * 3 for f in near), figures


def test_save_data_means_no_prefetch_but_frames_on_demand(browser, base_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(JS_SAVE_DATA)
    page = context.new_page()
    frames = []
    page.on("request", lambda r: "/posenc-frames/" in r.url and frames.append(r.url))
    page.goto(f"{base_url}/{ON_DEMAND_PAGE}", wait_until="load")
    page.wait_for_function(JS_WIDGETS_SETTLED, timeout=30000)
    idle_scroll([page], seconds=2)
    assert page.evaluate("document.documentElement.dataset.posencPrefetch") == "off"
    assert frames == []
    # a slider the reader moves still gets its frame
    root = page.locator(".posenc-widget").first
    before = root.evaluate(JS_VISIBLE_FRAME)
    page.locator(FRAME_SLIDERS).first.press("ArrowRight")
    page.wait_for_function(JS_FRAME_CHANGED, arg=[root.element_handle(), before["alt"]],
                           timeout=15000)
    assert len(frames) == 1
    context.close()


def test_slider_moved_before_its_frame_arrived_shows_loading_then_the_frame(browser, base_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    held, released = [], []  # frame requests wait here until the test lets them through

    def hold(route):
        if released:
            route.continue_()
        else:
            held.append(route)
    page.route("**/posenc-frames/**", hold)
    page.goto(f"{base_url}/{ON_DEMAND_PAGE}", wait_until="domcontentloaded")
    page.wait_for_function("document.documentElement.dataset.posencWidgets")
    root = page.locator(".posenc-widget").first
    before = root.evaluate(JS_VISIBLE_FRAME)
    page.locator(FRAME_SLIDERS).first.press("ArrowRight")
    page.wait_for_function("el => el.dataset.loading", arg=root.element_handle(), timeout=5000)
    during = root.evaluate(JS_VISIBLE_FRAME)
    assert during["alt"] == before["alt"] and during["complete"] and during["width"] > 0
    assert root.get_attribute("data-loading") and root.get_attribute("aria-busy") == "true"
    assert "Loading" in root.locator(".posenc-status").inner_text()
    # Playwright hands the held request to `hold` on its own event loop, which runs only while
    # the test waits on the page: the loading state can show before that callback has run.
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the frame was not requested within 5 s of the slider moving"
    released.append(True)
    for route in held:
        route.continue_()
    page.wait_for_function("""(el) => !el.dataset.loading""", arg=root.element_handle(),
                           timeout=15000)
    after = root.evaluate(JS_VISIBLE_FRAME)
    label = page.evaluate(JS_SLIDERS)[0]
    assert after["alt"] != before["alt"] and after["complete"] and after["width"] > 0
    assert f"{label['label']}={label['readout']}" in after["alt"]
    assert root.locator(".posenc-status").inner_text() == ""
    context.close()


def test_a_frame_that_cannot_load_keeps_the_previous_one(browser, base_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route("**/posenc-frames/**", lambda route: route.abort())
    page.goto(f"{base_url}/{ON_DEMAND_PAGE}", wait_until="domcontentloaded")
    page.wait_for_function("document.documentElement.dataset.posencWidgets")
    root = page.locator(".posenc-widget").first
    before = root.evaluate(JS_VISIBLE_FRAME)
    page.locator(FRAME_SLIDERS).first.press("ArrowRight")
    page.wait_for_function("""(el) => !el.dataset.loading""", arg=root.element_handle(),
                           timeout=15000)
    after = root.evaluate(JS_VISIBLE_FRAME)
    assert after["alt"] == before["alt"] and after["complete"] and after["width"] > 0
    assert "could not be loaded" in root.locator(".posenc-status").inner_text()
    context.close()


def test_root_page_has_a_favicon(visit, base_url):
    v = visit("index.html")
    v.page.wait_for_load_state("networkidle")
    assert not any(u.endswith("/favicon.ico") for u in v.requests)


def test_choices_between_names_are_buttons_and_menus_by_pointer_and_keyboard(visit):
    """A slider figure whose values are names gets a row of radio buttons (a few names) or a
    menu (many), not a range slider (sliders.control_kind): chapter 1's figure has both. Each
    is labelled, has one tab stop, and switches the frame by pointer and by keyboard."""
    v = visit("book/01_why_order.html")
    page = v.page
    page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
    assert {"menu", "buttons"} <= {s["kind"] for s in page.evaluate(JS_SLIDERS)}
    root = page.locator(".posenc-widget").filter(has=page.locator(".posenc-buttons")).first
    root.scroll_into_view_if_needed()

    def switched(before, act):
        act()
        page.wait_for_function(JS_FRAME_CHANGED, arg=[root.element_handle(), before["alt"]],
                               timeout=15000)
        return root.evaluate(JS_VISIBLE_FRAME)

    group = root.locator("[role=radiogroup]").first
    name = page.locator(f"#{group.get_attribute('aria-labelledby')}").inner_text()
    radios = group.locator("[role=radio]")
    count = radios.count()
    assert name and count >= 2
    assert [radios.nth(i).get_attribute("tabindex") for i in range(count)].count("0") == 1
    # a click on the button at one end (the one not chosen), then keys back to the other end
    at_first = radios.first.get_attribute("aria-checked") == "true"
    end, other, home, step = ((radios.last, radios.first, "Home", "ArrowRight") if at_first
                              else (radios.first, radios.last, "End", "ArrowLeft"))
    after = switched(root.evaluate(JS_VISIBLE_FRAME), lambda: end.click())
    assert end.get_attribute("aria-checked") == "true"
    assert f"{name}={end.inner_text()}" in after["alt"], after["alt"]
    after = switched(after, lambda: end.press(home))
    assert other.get_attribute("aria-checked") == "true"
    assert page.evaluate("document.activeElement.getAttribute('aria-checked')") == "true"
    after = switched(after, lambda: other.press(step))
    assert radios.nth(1 if at_first else count - 2).get_attribute("aria-checked") == "true"
    assert f"{name}={radios.nth(1 if at_first else count - 2).inner_text()}" in after["alt"]

    menu = root.locator("select.posenc-menu").first
    label = root.locator(f"label[for='{menu.get_attribute('id')}']").inner_text()
    assert label and menu.locator("option").count() > 2
    pick = 1 if menu.evaluate("s => s.selectedIndex") != 1 else 2  # another name than now
    after = switched(after, lambda: menu.select_option(index=pick))
    assert f"{label}={menu.locator('option').nth(pick).inner_text()}" in after["alt"]
    after = switched(after, lambda: menu.press("ArrowRight"))  # steps as a slider's key does
    assert menu.evaluate("s => s.selectedIndex") == pick + 1
    assert f"{label}={menu.locator('option').nth(pick + 1).inner_text()}" in after["alt"]


# Phones ---------------------------------------------------------------------------------

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3,
         "is_mobile": True, "has_touch": True}


@pytest.fixture
def phone(browser, base_url):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    page.goto(f"{base_url}/{ON_DEMAND_PAGE}", wait_until="load")
    page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
    yield page
    context.close()


JS_MATH_FOCUS = """() => [...document.querySelectorAll('mjx-container[display="true"]')]
    .map(m => ({wide: m.scrollWidth > m.clientWidth + 1, focus: m.getAttribute('tabindex')}))"""


def test_a_block_that_starts_to_scroll_becomes_focusable(visit):
    """posenc-page.js gives an equation wider than the column tabindex=0 (so a keyboard can
    scroll it) whenever it becomes so: after a change of the window, and after a change of
    its own size with the window unchanged (MathJax's fonts arriving late), and takes it back
    when the equation fits again; a code block that starts to overflow gets its tab stop
    within two frames (the theme's own check waits for 300 ms without a change)."""
    v = visit("book/04_rope.html")
    v.page.wait_for_function("() => window.MathJax.startup.promise.then(() => true)")
    fits = v.page.evaluate(JS_MATH_FOCUS)
    assert fits and all((m["focus"] == "0") == m["wide"] for m in fits), fits
    narrow = [i for i, m in enumerate(fits) if not m["wide"]]
    assert narrow, "chapter 4 has no equation that fits the column at 1280 px"
    grown = v.page.evaluate("""(i) => {
        const m = document.querySelectorAll('mjx-container[display="true"]')[i];
        m.firstElementChild.style.fontSize = '600%';
        return i; }""", narrow[0])
    v.page.wait_for_function("""(i) => document.querySelectorAll(
        'mjx-container[display="true"]')[i].getAttribute('tabindex') === '0'""", arg=grown)
    v.page.evaluate("""(i) => { document.querySelectorAll('mjx-container[display="true"]')[i]
        .firstElementChild.style.fontSize = ''; }""", grown)
    v.page.wait_for_function("""(i) => !document.querySelectorAll(
        'mjx-container[display="true"]')[i].hasAttribute('tabindex')""", arg=grown)
    v.page.set_viewport_size({"width": 390, "height": 800})
    v.page.wait_for_function(f"""() => ({JS_MATH_FOCUS})().some(m => m.wide)
        && ({JS_MATH_FOCUS})().every(m => (m.focus === '0') === m.wide)""")
    marked = v.page.evaluate("""async () => {
        const pre = [...document.querySelectorAll('div.cell_input div.highlight pre')]
            .find(p => p.tabIndex === -1 && p.checkVisibility());  // not a folded check's
        const wide = document.createElement('span');
        wide.style.display = 'inline-block';
        wide.style.width = '3000px';
        pre.appendChild(wide);
        await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
        return pre.tabIndex; }""")
    assert marked == 0


def test_phone_no_sideways_scroll_and_slider_handles_of_24_px(phone):
    assert phone.evaluate("document.documentElement.scrollWidth <= innerWidth")
    heights = phone.evaluate("""() => [...document.querySelectorAll(
        '.posenc-widget input, .posenc-widget select, .posenc-widget .posenc-button')]
        .map(i => i.getBoundingClientRect().height)""")
    assert heights and min(heights) >= 24, heights
    thumbs = phone.evaluate("""() => [...document.styleSheets].flatMap(s => {
        try { return [...s.cssRules]; } catch (e) { return []; } })
      .filter(r => r.selectorText && r.selectorText.includes('.posenc-slider')
                   && r.selectorText.includes('::-webkit-slider-thumb'))
      .map(r => [parseFloat(r.style.width), parseFloat(r.style.height)])""")
    assert thumbs and all(w >= 24 and h >= 24 for w, h in thumbs), thumbs


def test_phone_a_slider_moved_by_touch_changes_its_frame(phone):
    # the first figure with a range slider (the page's first control may be a menu)
    track = "input[type=range]:not(.posenc-live-input)"
    root = phone.locator(".posenc-widget").filter(has=phone.locator(track)).first
    slider = root.locator(track).first
    root.scroll_into_view_if_needed()
    before = root.evaluate(JS_VISIBLE_FRAME)
    box = slider.bounding_box()
    value, top = int(slider.input_value()), int(slider.get_attribute("max"))
    target = 0 if value > top / 2 else top  # a tap at the far end of the track
    x = box["x"] + (8 if target == 0 else box["width"] - 8)
    phone.touchscreen.tap(x, box["y"] + box["height"] / 2)
    phone.wait_for_function(JS_FRAME_CHANGED, arg=[root.element_handle(), before["alt"]],
                            timeout=15000)
    assert int(slider.input_value()) != value


def test_phone_a_figure_opens_full_screen_and_closes(phone):
    frame = phone.locator("img.posenc-frame").first
    frame.scroll_into_view_if_needed()
    natural = frame.evaluate("i => i.naturalWidth")
    for close in ("Escape", "back"):
        frame.tap()
        dialog = phone.locator("dialog.posenc-lightbox")
        dialog.wait_for(state="visible", timeout=5000)
        big = dialog.locator("img")
        shown = big.evaluate("i => ({natural: i.naturalWidth, width: i.clientWidth})")
        # full resolution: every pixel of the frame, drawn at the size its text was made for
        assert shown["natural"] == natural and shown["width"] >= natural / 2 - 1, shown
        assert phone.evaluate("document.documentElement.scrollWidth <= innerWidth")
        url = phone.url
        if close == "Escape":
            phone.keyboard.press("Escape")
        else:
            phone.go_back()
        dialog.wait_for(state="detached", timeout=5000)
        assert phone.url == url  # "back" closed the figure, it did not leave the page


def test_phone_back_to_top_never_covers_a_figure(phone):
    height = phone.evaluate("document.documentElement.scrollHeight")
    for y in range(0, height, 400):
        phone.evaluate(f"window.scrollTo(0, {y})")
        phone.wait_for_function("() => new Promise(r => requestAnimationFrame(() => "
                                "requestAnimationFrame(() => r(true))))")
        overlap = phone.evaluate("""() => {
          const b = document.getElementById('pst-back-to-top');
          const style = b && getComputedStyle(b);
          if (!b || style.visibility === 'hidden' || style.display === 'none') return null;
          const r = b.getBoundingClientRect();
          if (!r.width) return null;
          return [...document.querySelectorAll('.posenc-widget, .cell_output img')].some(f => {
            const q = f.getBoundingClientRect();
            return q.left < r.right && q.right > r.left && q.top < r.bottom && q.bottom > r.top; });
        }""")
        assert not overlap, f"'Back to top' covers a figure at scrollY={y}"


def test_every_figure_has_alt_text_that_describes_it_not_its_file():
    """A screen reader reads a figure's alt text: the figure's own title (static figures:
    posenc.course.figures.style.figure_alt; slider frames: their title and values), in the
    page's language, never the image's path."""
    for path in content_pages():
        html = (SITE / path).read_text(encoding="utf-8")
        alts = re.findall(r'<img\b[^>]*?\balt="([^"]*)"', html)
        assert not [a for a in alts if not a.strip() or re.search(r"\.(png|webp|svg)$", a)
                    and "logo" not in a], (path, [a for a in alts if a.endswith(".png")][:3])
        if path.startswith("zh/"):
            figures = re.findall(r'<img\b[^>]*?\balt="([^"]*)"[^>]*_images/', html)
            assert all(re.search(r"[\u4e00-\u9fff]", a) for a in figures), (path, figures[:3])
