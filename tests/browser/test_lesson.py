"""The lesson as its reader meets it (issue 46): the checks folded out of the way, and a
phone's reading -- on every page of both editions with code cells, one visit each, on a
phone (test_site.py's checks of the page have their own, at 1280 px).

A chapter's cells that assert or check a claim are folded (tags ``check`` and
``hide-input``): no code cell shown by default asserts anything, a click on a fold's summary
shows its code, and the chapter's switch (posenc-page.js) shows every one. On a 390-px
phone (touch, 2 device px per CSS px) code keeps its lines and scrolls sideways, printed
outputs and display equations scroll rather than being cut off (their hidden edge shaded),
and a static figure's smallest text is at least 9 CSS px (its box scrolls sideways).
"""

import re

import pytest
from posenc_site.sitecheck import JS_LAZY_IMAGES_DONE, JS_LOAD_LAZY_IMAGES, SITE

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2,
         "is_mobile": True, "has_touch": True}

#: An assertion in code: an ``assert`` statement, or numpy's/torch's assert helpers.
ASSERTION = re.compile(r"^\s*assert\b|\bassert_(?:all)?close\b", re.M)

#: The smallest text of a static figure: 7 pt at the dpi it is drawn at (2 device px per CSS
#: px of the 688-px column at 100 CSS px per figure inch: posenc.course.figures.style), in
#: image pixels; and the least it may be shown at, in CSS px.
SMALLEST_FIGURE_TEXT_PX = 7 / 72 * 200
MIN_FIGURE_TEXT_CSS_PX = 9


class PhoneVisit:
    """A page loaded on a phone, and the script errors it has had."""

    def __init__(self, browser, url):
        self.context = browser.new_context(**PHONE)
        self.page = self.context.new_page()
        self.errors = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        # the slider frames are no part of these checks: not fetched
        self.page.route("**/posenc-frames/**", lambda route: route.abort())
        self.page.goto(url, wait_until="load")


@pytest.fixture(scope="module")
def lesson(browser, base_url, page_path):
    """One visit of the page on a phone, shared by this module's checks of it (conftest's
    grouping sends them to the worker that has the page's other checks); a page without
    code cells (intro, glossary, references, running locally) is not visited: its checks
    are skipped."""
    if "cell_input" not in (SITE / page_path).read_text(encoding="utf-8"):
        yield None
        return
    visit = PhoneVisit(browser, f"{base_url}/{page_path}")
    page = visit.page
    # the equations typeset, and posenc-page.js's watch has measured them (two frames on)
    page.wait_for_function("""() => !window.MathJax || !MathJax.startup
        || MathJax.startup.promise.then(() => new Promise(r =>
             requestAnimationFrame(() => requestAnimationFrame(() => r(true)))))""")
    page.evaluate("document.fonts.ready.then(() => true)")
    yield visit
    visit.context.close()


def _page(lesson):
    if lesson is None:
        pytest.skip("no code cells on this page")
    return lesson.page


def test_no_code_cell_shows_an_assertion_until_asked(lesson):
    shown = _page(lesson).evaluate("""() => [...document.querySelectorAll('.cell_input')]
        .filter(c => c.checkVisibility()).map(c => c.innerText)""")
    asserting = [text[:200] for text in shown if ASSERTION.search(text)]
    assert asserting == [], f"{len(asserting)} code cells shown with an assertion: {asserting[:3]}"


JS_FOLDS = """() => [...document.querySelectorAll('div.cell.tag_check')].map(cell => {
    const details = cell.querySelector('details.hide.above-input');
    const summary = details && details.querySelector(':scope > summary');
    return {folded: !!details && !details.open,
            summary: summary && summary.checkVisibility() ? summary.innerText.trim() : null,
            input: cell.querySelector('.cell_input').checkVisibility()}; })"""

# Each fold opened by a click on its summary and closed again: what it showed each time.
JS_EACH_FOLD_BY_ITS_SUMMARY = """() => [...document.querySelectorAll('div.cell.tag_check')]
    .map(cell => {
      const summary = cell.querySelector('details > summary');
      const input = cell.querySelector('.cell_input');
      summary.click();
      const opened = input.checkVisibility();
      summary.click();
      return [opened, input.checkVisibility()]; })"""

JS_SWITCH = """() => { const b = document.querySelector('.posenc-checks-switch');
    return b && {tag: b.tagName, type: b.type, pressed: b.getAttribute('aria-pressed'),
                 text: b.innerText, shown: [...document.querySelectorAll(
                   'div.cell.tag_check .cell_input')].map(i => i.checkVisibility())}; }"""


def test_checks_are_folded_and_open_one_by_one_or_all_at_once(lesson):
    page = _page(lesson)
    folds = page.evaluate(JS_FOLDS)
    switch = page.evaluate(JS_SWITCH)
    if not folds:
        assert switch is None, "a switch for checks on a page without any"
        pytest.skip("no checks on this page")
    assert [f for f in folds if not (f["folded"] and f["summary"] and not f["input"])] == [], \
        "a check not folded by default, or its summary not shown"
    # a reader's tap on the first fold's summary shows its code; a second folds it again
    summary = page.locator("div.cell.tag_check details > summary").first
    code = page.locator("div.cell.tag_check .cell_input").first
    summary.tap()
    code.wait_for(state="visible", timeout=2000)
    summary.tap()
    code.wait_for(state="hidden", timeout=2000)
    assert page.evaluate(JS_EACH_FOLD_BY_ITS_SUMMARY) == [[True, False]] * len(folds)
    # the chapter's switch: a real button, by keyboard, for every check at once
    assert switch["tag"] == "BUTTON" and switch["type"] == "button", switch
    assert switch["pressed"] == "false" and f"({len(folds)})" in switch["text"].replace(
        "（", "(").replace("）", ")"), switch
    button = page.locator(".posenc-checks-switch")
    button.focus()
    page.keyboard.press("Enter")
    shown = page.evaluate(JS_SWITCH)
    assert shown["pressed"] == "true" and all(shown["shown"]), shown
    assert shown["text"] != switch["text"]
    page.keyboard.press("Space")
    hidden = page.evaluate(JS_SWITCH)
    assert hidden["pressed"] == "false" and not any(hidden["shown"]), hidden
    assert hidden["text"] == switch["text"]
    # the switch says "all shown" once the reader has opened every fold by hand
    page.evaluate("""() => document.querySelectorAll('div.cell.tag_check details')
        .forEach(d => { d.open = true; })""")
    page.wait_for_function("""() => document.querySelector('.posenc-checks-switch')
        .getAttribute('aria-pressed') === 'true'""", timeout=2000)
    page.evaluate("""() => document.querySelector('.posenc-checks-switch').click()""")
    assert not any(page.evaluate(JS_SWITCH)["shown"])
    assert lesson.errors == []


# Every code block a reader sees: its lines as laid out (distinct line tops of its text)
# against its lines of code, and how it scrolls.
JS_CODE_LINES = """() => [...document.querySelectorAll('div.cell_input div.highlight pre')]
  .filter(p => p.checkVisibility()).map(p => {
    const range = document.createRange();
    range.selectNodeContents(p);
    const tops = new Set([...range.getClientRects()].filter(r => r.width > 0)
                           .map(r => Math.round(r.top + p.scrollTop)));
    const s = getComputedStyle(p);
    return {text: p.textContent.slice(0, 60), code: p.textContent.trimEnd().split('\\n').length,
            laid: tops.size, whiteSpace: s.whiteSpace, overflowX: s.overflowX,
            wide: p.scrollWidth > p.clientWidth + 1}; })"""


def test_phone_code_keeps_its_lines_and_scrolls_sideways(lesson):
    blocks = _page(lesson).evaluate(JS_CODE_LINES)
    wrapped = [b for b in blocks if b["laid"] > b["code"] or b["whiteSpace"] != "pre"]
    assert wrapped == [], f"code soft-wrapped on a phone: {wrapped[:3]}"
    stuck = [b for b in blocks if b["wide"] and b["overflowX"] not in ("auto", "scroll")]
    assert stuck == [], stuck


# Every printed output and display equation: whether it fits, and else how it scrolls; a
# block cut off is one that is wider than its box without scrolling, sticks out of the page
# or of a box that clips it, starts left of its box (no scrolling reaches that), or scrolls
# with nothing to say so (posenc-page.js shades the hidden edge: data-posenc-more).
JS_BLOCKS = """() => {
  const clipper = el => { for (let a = el.parentElement; a && a !== document.body;
                               a = a.parentElement)
                            if (getComputedStyle(a).overflowX !== 'visible') return a;
                          return null; };
  return [...document.querySelectorAll('.cell_output pre, mjx-container[display="true"]')]
    .filter(b => b.checkVisibility()).map(b => {
      const box = b.getBoundingClientRect(), s = getComputedStyle(b);
      const inner = b.matches('mjx-container') && b.firstElementChild
        ? b.firstElementChild.getBoundingClientRect() : box;
      const a = clipper(b), outer = a ? a.getBoundingClientRect() : null;
      return {text: b.textContent.slice(0, 50), kind: b.tagName.toLowerCase(),
              wide: b.scrollWidth > b.clientWidth + 1, overflowX: s.overflowX,
              more: b.getAttribute('data-posenc-more'), scrollLeft: b.scrollLeft,
              left: box.left, right: box.right, innerLeft: inner.left, page: innerWidth,
              outside: !!outer && (box.left < outer.left - 1 || box.right > outer.right + 1)
                       && !['auto', 'scroll'].includes(getComputedStyle(a).overflowX)};
    }); }"""


def test_phone_outputs_and_equations_scroll_and_are_never_cut_off(lesson):
    blocks = _page(lesson).evaluate(JS_BLOCKS)
    cut = [b for b in blocks
           if b["left"] < -1 or b["right"] > b["page"] + 1 or b["outside"]
           or b["innerLeft"] < b["left"] - 1
           or b["wide"] and (b["overflowX"] not in ("auto", "scroll")
                             or b["scrollLeft"] == 0 and b["more"] != "right")]
    assert cut == [], f"{len(cut)} of {len(blocks)} blocks cut off on a phone: {cut[:3]}"


JS_FIGURES = """() => [...document.querySelectorAll('.cell_output img')]
  .filter(i => /_images\\//.test(i.getAttribute('src') || '') && i.checkVisibility())
  .map(i => {
    const box = i.parentElement, s = getComputedStyle(box), r = box.getBoundingClientRect();
    const width = i.getBoundingClientRect().width;
    return {alt: i.alt.slice(0, 60), natural: i.naturalWidth, width,
            scrolls: width <= box.clientWidth + 1 || ['auto', 'scroll'].includes(s.overflowX),
            inPage: r.left >= -1 && r.right <= innerWidth + 1}; })"""


def test_phone_static_figures_keep_their_text_at_9_px(lesson):
    page = _page(lesson)
    page.evaluate(JS_LOAD_LAZY_IMAGES)
    page.wait_for_function(JS_LAZY_IMAGES_DONE, timeout=30000)
    figures = page.evaluate(JS_FIGURES)
    small = [dict(f, text_px=round(f["width"] / f["natural"] * SMALLEST_FIGURE_TEXT_PX, 1))
             for f in figures
             if f["width"] / f["natural"] * SMALLEST_FIGURE_TEXT_PX < MIN_FIGURE_TEXT_CSS_PX]
    assert small == [], f"figure text under {MIN_FIGURE_TEXT_CSS_PX} CSS px: {small[:3]}"
    assert [f for f in figures if not (f["scrolls"] and f["inPage"])] == []
