"""The live figures (posenc-live.js) on the built site, both editions: drawn by the page with no
kernel, a slider moved redraws within one frame's time and asks the network for nothing, the
readout shows the value under the mouse and under a finger, and a phone does not scroll
sideways."""

import re
import statistics

import numpy as np
import pytest
from posenc_site.sitecheck import (
    JS_LIVE_DRAWN,
    JS_LIVE_MOVE,
    JS_WIDGETS_SETTLED,
    LIVE_MOVES,
    LIVE_REDRAW_BUDGET_MS,
)

from posenc.alibi import alibi_slopes
from posenc.sinusoidal import sinusoidal_encoding

LIVE_PAGES = [f"{edition}book/{chapter}.html" for chapter in
              ("02_sinusoidal", "04_rope", "05_rope_scaling", "06_alibi")
              for edition in ("", "zh/")]
# live figures per chapter
KINDS = {"02_sinusoidal": 3, "04_rope": 1, "05_rope_scaling": 1, "06_alibi": 2}

def _chapter(path):
    return path.rsplit("/", 1)[-1].removesuffix(".html")


def _open(browser, base_url, path, **context):
    ctx = browser.new_context(**({"viewport": {"width": 1280, "height": 900}} | context))
    page = ctx.new_page()
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(f"{base_url}/{path}", wait_until="networkidle")
    page.wait_for_function(JS_LIVE_DRAWN, arg=KINDS[_chapter(path)], timeout=15000)
    return ctx, page, requests, errors


@pytest.mark.parametrize("path", LIVE_PAGES)
def test_live_figures_redraw_fast_with_no_request_and_no_kernel(browser, base_url, path):
    ctx, page, requests, errors = _open(browser, base_url, path)
    try:
        assert errors == []
        assert page.locator(".posenc-live .posenc-widget-note").count() == 0
        # no kernel: nothing asked of a Jupyter server, nothing of another origin
        assert not [u for u in requests if "/api/kernels" in u or "/api/sessions" in u]
        assert all(u.startswith(base_url) or u.startswith(("data:", "blob:")) for u in requests)
        assert sum(u.endswith("/_static/posenc-live.js") for u in requests) == 1
        timings = []
        for figure in range(KINDS[_chapter(path)]):
            root = page.locator(".posenc-live").nth(figure)
            root.scroll_into_view_if_needed()
            _quiet(page, requests)
            for index in range(root.locator("input[type=range]").count()):
                before = len(requests)
                moves = page.evaluate(JS_LIVE_MOVE, [figure, index, LIVE_MOVES])
                assert len(requests) == before, requests[before:]  # nothing while moving
                for move in moves:  # a new value redraws the figure, the same one need not
                    assert move["redrawn"] == move["changed"] and move["readout"] != "", move
                assert len({m["title"] for m in moves}) > 2, moves  # the figure follows
                timings += [_best_of(page, figure, index, LIVE_MOVES, step, move["ms"])
                            for step, move in enumerate(moves) if move["changed"]]
        median, worst = statistics.median(timings), max(timings)
        print(f"{path}: redraw median {median:.2f} ms, max {worst:.2f} ms ({len(timings)} moves)")
        assert median <= LIVE_REDRAW_BUDGET_MS, timings
        assert worst <= SLOW_MOVE_MS, timings
    finally:
        ctx.close()


#: A move slower than this (three frames) is timed again before it counts against the figure.
SLOW_MOVE_MS = 3 * LIVE_REDRAW_BUDGET_MS


def _best_of(page, figure, index, positions, step, ms, tries=3):
    """The move to ``positions[step]`` at its fastest: ``ms`` as timed, or, when that is over
    :data:`SLOW_MOVE_MS`, the least of ``tries`` more moves from the position before it. A
    redraw costs the same each time; a pause of the shared machine (the other test worker, a
    garbage collection, a font looked up for the first glyph of a script) does not come back,
    so only a figure that is slow every time fails."""
    if ms <= SLOW_MOVE_MS:
        return ms
    again = [page.evaluate(JS_LIVE_MOVE, [figure, index, [positions[step - 1], positions[step]]])
             for _ in range(tries)]
    return min([ms] + [moves[1]["ms"] for moves in again if moves[1]["changed"]])


def _quiet(page, requests, ms=600):
    """Wait until the frame figures near the viewport have prefetched what they want
    (posenc-widgets.js: its IntersectionObserver reports a scroll a little later) and no request
    has started for ``ms``: what is asked for after that, the live figure asked for."""
    for _ in range(40):
        page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
        count = len(requests)
        page.wait_for_timeout(ms)
        if len(requests) == count:
            return
    raise AssertionError("the page never stopped requesting")


def _readout(page, figure):
    return page.locator(".posenc-live").nth(figure).locator(".posenc-live-readout").inner_text()


def _number(text):
    return float(re.split(r"[ ：]", text)[-1].replace("−", "-"))


@pytest.mark.parametrize("path", ["book/02_sinusoidal.html", "zh/book/02_sinusoidal.html"])
def test_the_readout_shows_the_value_under_the_mouse(browser, base_url, path):
    ctx, page, _, _ = _open(browser, base_url, path)
    try:
        canvas = page.locator(".posenc-live").first.locator("canvas[role=img]")
        canvas.scroll_into_view_if_needed()
        box = canvas.bounding_box()
        seen = []
        for fx, fy in [(0.3, 0.3), (0.7, 0.3), (0.7, 0.7)]:
            page.mouse.move(box["x"] + fx * box["width"], box["y"] + fy * box["height"])
            text = _readout(page, 0)
            dim, pos = (int(x) for x in re.findall(r"(?<![\d.])(\d+)(?![\d.])", text)[:2])
            # the value shown is PE[position, dimension] of the table the sliders set
            assert abs(_number(text) - sinusoidal_encoding(128, 64)[pos, dim]) <= 5e-4, text
            seen.append((dim, pos))
        assert seen[1][0] > seen[0][0] and seen[1][1] == seen[0][1]  # right: a higher dimension
        assert seen[2][1] > seen[1][1] and seen[2][0] == seen[1][0]  # down: a later position
    finally:
        ctx.close()


PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3,
         "is_mobile": True, "has_touch": True}


@pytest.mark.parametrize("path", LIVE_PAGES)
def test_on_a_phone_a_touch_reads_a_value_and_nothing_scrolls_sideways(browser, base_url, path):
    ctx, page, _, errors = _open(browser, base_url, path, **PHONE)
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        for figure in range(KINDS[_chapter(path)]):
            root = page.locator(".posenc-live").nth(figure)
            root.scroll_into_view_if_needed()
            assert root.bounding_box()["width"] <= 390
            heights = root.evaluate("r => [...r.querySelectorAll('input')].map(i => "
                                    "i.getBoundingClientRect().height)")
            assert min(heights) >= 24, heights
            hint = _readout(page, figure)
            box = root.locator("canvas[role=img]").bounding_box()
            page.touchscreen.tap(box["x"] + 0.55 * box["width"], box["y"] + 0.5 * box["height"])
            text = _readout(page, figure)
            assert text != hint and re.search(r"\d", text), (hint, text)
        assert errors == []
    finally:
        ctx.close()


def test_the_slopes_readout_is_the_official_slope_of_the_head_touched(browser, base_url):
    ctx, page, _, _ = _open(browser, base_url, "book/06_alibi.html", **PHONE)
    try:
        root = page.locator(".posenc-live").first
        root.scroll_into_view_if_needed()
        page.evaluate(JS_LIVE_MOVE, [0, 0, [1000 * 5 / 63]])  # num_heads 1..64: 6 heads
        assert root.locator("output").first.inner_text() == "6"
        slopes = alibi_slopes(6)
        box = root.locator("canvas[role=img]").bounding_box()
        for _ in range(2):
            page.touchscreen.tap(box["x"] + 0.4 * box["width"], box["y"] + 0.5 * box["height"])
        text = _readout(page, 0)
        head = int(re.search(r"head (\d+)", text).group(1))
        assert np.isclose(_number(text), slopes[head - 1], rtol=1e-3), (text, slopes)
    finally:
        ctx.close()


def test_a_page_read_from_a_file_draws_its_live_figures(browser):
    """Opened as file:// (the README's first way to read the built site), where a page may not
    import a module: the classic copy of the same code draws the figures."""
    from posenc_site.sitecheck import SITE

    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto((SITE / "book" / "06_alibi.html").as_uri(), wait_until="load")
        page.wait_for_function(JS_LIVE_DRAWN, arg=KINDS["06_alibi"], timeout=15000)
        assert page.locator(".posenc-widget-note").count() == 0 and errors == []
    finally:
        ctx.close()


def test_the_sliders_work_from_the_keyboard(browser, base_url):
    """Arrow keys step to the next value the control takes (the next even d_model, the next
    three-digit base), PageUp a twentieth of the track, Home and End to the ends; each is
    announced."""
    ctx, page, _, _ = _open(browser, base_url, "book/02_sinusoidal.html")
    try:
        root = page.locator(".posenc-live").first
        d_model, base = (root.locator("input[type=range]").nth(i) for i in (0, 1))
        shown = [root.locator(".posenc-slider output").nth(i) for i in (0, 1)]
        assert root.locator("label").nth(0).inner_text() == "d_model"
        d_model.focus()
        for key, want in [("ArrowRight", "66"), ("ArrowLeft", "64"), ("ArrowDown", "62"),
                          ("PageUp", "84"), ("End", "1024"), ("Home", "2")]:
            page.keyboard.press(key)
            assert shown[0].inner_text() == want, key
            assert d_model.get_attribute("aria-valuetext") == f"d_model {want}"
            assert "d_model=" + want in root.locator(".posenc-live-title").inner_text()
        base.focus()
        page.keyboard.press("ArrowRight")
        assert shown[1].inner_text() == "10100"
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        assert shown[1].inner_text() == "9990"
    finally:
        ctx.close()


# A page with one anywidget model the site does not render (another module) and one whose
# kind posenc-live.js does not draw: each must be a short note, never a dead control.
UNKNOWN_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<script src="../_static/posenc-text.js"></script>
<script src="../_static/posenc-widgets.js"></script></head><body>
<script type="application/vnd.jupyter.widget-state+json">{"version_major": 2, "version_minor": 0,
"state": {"a": {"model_name": "AnyModel", "state": {"module": "elsewhere.js", "kind": "x"}},
          "b": {"model_name": "AnyModel", "state": {"module": "posenc-live.js", "kind": "nope",
                "values": {}, "controls": [], "text": {"en": {}}}}}}</script>
<script type="application/vnd.jupyter.widget-view+json">{"model_id": "a"}</script>
<script type="application/vnd.jupyter.widget-view+json">{"model_id": "b"}</script>
</body></html>"""


def test_a_model_the_site_does_not_draw_is_a_note_not_a_dead_control(browser, base_url):
    ctx = browser.new_context()
    page = ctx.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.route("**/book/__unknown.html", lambda route: route.fulfill(
        status=200, content_type="text/html", body=UNKNOWN_PAGE))
    try:
        page.goto(f"{base_url}/book/__unknown.html", wait_until="networkidle")
        page.wait_for_function("document.querySelectorAll('.posenc-widget-note').length === 2",
                               timeout=10000)
        notes = page.locator(".posenc-widget-note").all_inner_texts()
        assert "needs a live Jupyter kernel" in notes[0] and "nope" in notes[1], notes
        assert page.locator("input, canvas").count() == 0
        assert not any("elsewhere.js" in u for u in requests)  # only the site's own module
    finally:
        ctx.close()


#: Written into a readout before a fresh pick: still there after it, nothing was picked.
UNREAD = "(not read)"

JS_OTHER_VALUE = """([figure, index]) => {
  const input = document.querySelectorAll('.posenc-live')[figure]
    .querySelectorAll('input[type=range]')[index];
  return Number(input.value) !== Number(input.min) ? Number(input.min) : Number(input.max);
}"""


@pytest.mark.parametrize("path", LIVE_PAGES)
def test_a_readout_follows_the_figure_after_a_control_moves(browser, base_url, path):
    """After any slider moves, the readout is what the figure now shows under the pointer's
    last place (a fresh pick there, after the pointer went elsewhere and came back), or the
    figure's hint where nothing is drawn there any more: never the old figure's number."""
    ctx, page, _, errors = _open(browser, base_url, path)
    try:
        for figure in range(KINDS[_chapter(path)]):
            root = page.locator(".posenc-live").nth(figure)
            root.scroll_into_view_if_needed()
            hint = _readout(page, figure)
            canvas = root.locator("canvas[role=img]")
            for index in range(root.locator("input[type=range]").count()):
                box = canvas.bounding_box()
                here = (box["x"] + 0.55 * box["width"], box["y"] + 0.5 * box["height"])
                elsewhere = (box["x"] + 0.3 * box["width"], box["y"] + 0.35 * box["height"])
                page.mouse.move(*here)
                before = _readout(page, figure)
                assert before != hint, (figure, index, before)  # a value is read there
                value = page.evaluate(JS_OTHER_VALUE, [figure, index])
                moves = page.evaluate(JS_LIVE_MOVE, [figure, index, [value]])
                after = _readout(page, figure)
                page.mouse.move(*elsewhere)
                root.evaluate(f"r => {{ r.querySelector('.posenc-live-readout').textContent = "
                              f"'{UNREAD}'; }}")
                page.mouse.move(*here)
                fresh = _readout(page, figure)
                where = (path, figure, index, value, before, after, fresh)
                if fresh == UNREAD:  # the pointer there picks nothing any more
                    assert after == hint, where
                else:
                    assert after == fresh, where
                if moves[0]["changed"] and after == before:  # same text: the figure kept it
                    assert fresh == before, where
        assert errors == []
    finally:
        ctx.close()
