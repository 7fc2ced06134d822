"""Tools for checking the built site in a real browser (Debian's Chromium + Playwright).

Used by tests/browser/ and benchmarks/bench_site.py:
it lives beside the site code so that the benchmarks never import test code.

The server serves ``_build/html`` on 127.0.0.1 and, like any static host (GitHub
Pages, Netlify, nginx with ``gzip on``), compresses text responses when the
browser accepts gzip. ``compress=False`` serves raw bytes, for comparison.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import shutil
import threading
from pathlib import Path

from posenc.course.environment import site_dir

from .pages import EDITIONS as SITE_EDITIONS  # the site's editions

ROOT = Path(__file__).resolve().parents[2]
SITE = site_dir(ROOT / "_build" / "html")  # POSENC_SITE, if set
SCREENSHOTS = SITE.parent / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# flags the machine needs: no sandbox as root, no GPU, and no background calls home
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
COMPRESSIBLE = (".html", ".js", ".css", ".json", ".svg", ".txt", ".map", ".ipynb", ".md")


class _Handler(http.server.SimpleHTTPRequestHandler):
    compress = True
    _cache: dict[str, bytes] = {}

    def log_message(self, *args):  # keep test output clean
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        gz_ok = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (self.compress and gz_ok and path.is_file() and path.suffix in COMPRESSIBLE):
            return super().send_head()
        key = str(path)
        if key not in self._cache:
            self._cache[key] = gzip.compress(path.read_bytes(), compresslevel=6)
        body = self._cache[key]
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        import io

        return io.BytesIO(body)


@contextlib.contextmanager
def serve(root: Path = SITE, *, compress: bool = True):
    """Serve ``root`` on 127.0.0.1 at a free port; yields the base URL."""
    handler = type("Handler", (_Handler,), {"compress": compress, "_cache": {}})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium():
    """Debian's Chromium under Playwright, with the flags above; closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


#: The site's editions' folders: English at the root, Chinese under zh/ (site/posenc_site/i18n.py).
EDITIONS = tuple(folder for folder, _name, _tag in SITE_EDITIONS.values())


def content_pages(root: Path = SITE, editions=EDITIONS) -> list[str]:
    """Every page of the course in every edition: the chapters and the pages beside them
    (``book/04_rope.html``, ``zh/book/04_rope.html``)."""
    return sorted(str(p.relative_to(root))
                  for e in editions for p in (root / e / "book").glob("*.html"))


# JavaScript run in the page -------------------------------------------------------------

JS_VISIBLE_FRAME = """
(root) => {
  const imgs = [...root.querySelectorAll('.posenc-stack img')];
  const img = imgs.find(i => i.offsetParent !== null);
  return img ? {alt: img.alt, src: img.src.slice(-200), complete: img.complete,
                width: img.naturalWidth} : null;
}
"""

#: The range sliders of the frame figures (a live figure's sliders, posenc-live.js, switch
#: no frame): values that are numbers.
RANGE_SLIDERS = ".posenc-widget input[type=range]:not(.posenc-live-input)"
#: Every control of the frame figures, one element per control, in page order: the range
#: sliders, the menus (values that are names, many) and, of each row of choice buttons (a few
#: names), the button chosen now -- the one that has the focus and takes the arrow keys.
FRAME_SLIDERS = (f"{RANGE_SLIDERS}, .posenc-widget select.posenc-menu, "
                 ".posenc-widget .posenc-buttons [role=radio][aria-checked=true]")

#: Each control of FRAME_SLIDERS: its label, the value it shows (``readout``), the index of
#: that value (``value``, from 0 to ``max``), its ``kind`` ("slider", "menu", "buttons") and
#: the index of its figure among the page's widgets.
JS_SLIDERS = """
() => [...document.querySelectorAll('FRAME_SLIDERS')].map((s, i) => {
  const wrap = s.closest('.posenc-slider');
  const kind = s.matches('select') ? 'menu' : s.matches('[role=radio]') ? 'buttons' : 'slider';
  const options = kind === 'menu' ? [...s.options]
                : kind === 'buttons' ? [...s.parentElement.children] : null;
  const value = kind === 'menu' ? s.selectedIndex
              : kind === 'buttons' ? options.indexOf(s) : Number(s.value);
  return {index: i, kind: kind, label: wrap.querySelector('.posenc-slider-label').textContent,
          readout: options ? options[value].textContent : wrap.querySelector('output').textContent,
          value: value, max: options ? options.length - 1 : Number(s.max),
          widget: [...document.querySelectorAll('.posenc-widget')]
                    .indexOf(s.closest('.posenc-widget'))};
})
""".replace("FRAME_SLIDERS", FRAME_SLIDERS)

# Resolves with ms from the keydown to the first animation frame at which the new
# figure is in the DOM, visible and decoded.
# The widgets are built and their prefetch (posenc-widgets.js) has nothing left to do for
# now -- or the page has no widgets. Under the prefetch policy that is not every frame:
# only those near what the figures in or near the viewport show.
JS_WIDGETS_SETTLED = """
() => !document.querySelector('script[type="application/vnd.jupyter.widget-state+json"]')
      || (document.documentElement.dataset.posencWidgets === 'warm'
          && ['idle', 'off'].includes(document.documentElement.dataset.posencPrefetch))
"""

# Widget `root` is in or near the viewport and has prefetched what the policy wants for it.
JS_FIGURE_PREFETCHED = """
(root) => root.hasAttribute('data-posenc-near') && root.dataset.posencPrefetch === 'idle'
"""

# The self-check questions (jupyterquiz) are drawn by their own script, after a timeout.
#: No CSS transition still running (the theme's colours settle after a switch of theme).
JS_TRANSITIONS_DONE = """
() => document.getAnimations().filter(a => a instanceof CSSTransition)
      .every(a => a.playState !== 'running')
"""

JS_QUIZZES_DRAWN = """
() => [...document.querySelectorAll('div[data-shufflequestions]')]
      .every(d => d.querySelector('.Quiz'))
"""

# The frame shown by widget `root` differs from `before` (an alt text) and is decoded.
JS_FRAME_CHANGED = """
([root, before]) => {
  const img = [...root.querySelectorAll('.posenc-stack img')].find(i => i.offsetParent !== null);
  return img && img.alt !== before && img.complete && img.naturalWidth > 0;
}
"""

JS_ARM_LATENCY = """
(index) => {
  const input = document.querySelectorAll('FRAME_SLIDERS')[index];
  const root = input.closest('.posenc-widget');
  const visible = () => [...root.querySelectorAll('.posenc-stack img')]
      .find(i => i.offsetParent !== null);
  const before = visible() ? visible().alt : null;
  window.__posencLatency = new Promise(resolve => {
    input.addEventListener('keydown', e => {
      const t0 = e.timeStamp;
      const check = () => {
        const img = visible();
        if (img && img.alt !== before && img.complete && img.naturalWidth > 0) {
          resolve(performance.now() - t0);
        } else {
          requestAnimationFrame(check);
        }
      };
      requestAnimationFrame(check);
    }, {once: true});
  });
}
""".replace("FRAME_SLIDERS", FRAME_SLIDERS)

JS_MATH_STATE = """
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  const maths = [...document.querySelectorAll('.math')];
  const untypeset = maths.filter(m => !m.querySelector('mjx-container')
                                      && m.tagName !== 'MJX-CONTAINER');
  const article = document.querySelector('article') || document.body;
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  const raw = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement.closest('pre, code, script, style, .highlight, mjx-container')) continue;
    const t = n.textContent;
    const tex = /\\$\\$|\\\\\\(|\\\\\\[|\\\\frac|\\\\sum|\\\\theta|\\\\sin|\\\\cos/;
    if (tex.test(t)) raw.push(t.slice(0, 80));
  }
  return {count: maths.length, untypeset: untypeset.map(m => m.textContent.slice(0, 80)),
          raw: raw};
}
"""

# The figures a reader would load by scrolling through the page (loading="lazy"), now.
JS_LOAD_LAZY_IMAGES = """
() => document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; })
"""

JS_LAZY_IMAGES_DONE = """
() => [...document.querySelectorAll('img[loading]')].every(i => i.complete)
"""

# every image the page has asked for (a slider frame not yet wanted has only a data-src)
JS_IMAGES = """
() => [...document.images].filter(i => !(i.dataset.src && !i.getAttribute('src')))
  .map(i => ({src: i.currentSrc.slice(0, 120), complete: i.complete,
                                      width: i.naturalWidth, height: i.naturalHeight}))
"""

# Paints each figure onto a canvas and reads its corner pixels: an opaque, light
# corner means the figure keeps its own white background on a dark page.
JS_FIGURE_BACKGROUNDS = """
() => [...document.querySelectorAll('.cell_output img, .posenc-stack img')]
  .filter(i => i.offsetParent !== null && i.naturalWidth > 0)
  .map(i => {
    const c = document.createElement('canvas');
    c.width = i.naturalWidth; c.height = i.naturalHeight;
    const ctx = c.getContext('2d');
    ctx.drawImage(i, 0, 0);
    const px = (x, y) => Array.from(ctx.getImageData(x, y, 1, 1).data);
    return {alt: i.alt, corners: [px(1, 1), px(c.width - 2, 1), px(1, c.height - 2),
                                  px(c.width - 2, c.height - 2)]};
  })
"""


# Prefetch policy ------------------------------------------------------------------------

#: Makes the page believe the reader asked to save data (as Chrome's Lite mode does).
JS_SAVE_DATA = """
Object.defineProperty(navigator, 'connection', {
  configurable: true, get: () => ({saveData: true, effectiveType: '4g'})});
"""


#: Issue 38's budget for a figure drawn in the page: slider input to new figure, one frame
#: at 60 Hz.
LIVE_REDRAW_BUDGET_MS = 16
#: Where a check moves each live slider to (its input runs from 0 to 1000): the ends, then
#: values in between in no order.
LIVE_MOVES = [0, 1000, 137, 871, 500, 420]

#: True once the page holds ``n`` live figures, each drawn (posenc-live.js has taken the page).
JS_LIVE_DRAWN = "n => document.querySelectorAll('.posenc-live canvas[role=img]').length === n"
#: Moves slider `index` of live figure `figure` to a few positions with `input` events, timing
#: each handler (it redraws synchronously) with performance.now.
JS_LIVE_MOVE = """
([figure, index, positions]) => {
  const root = document.querySelectorAll('.posenc-live')[figure];
  const input = root.querySelectorAll('input[type=range]')[index];
  const out = [];
  for (const p of positions) {
    const draws = Number(root.dataset.draws || 0);
    const shown = () => input.closest('.posenc-slider').querySelector('output').textContent;
    const before = shown();
    input.value = String(p);
    const t0 = performance.now();
    input.dispatchEvent(new Event('input', {bubbles: true}));
    out.push({ms: performance.now() - t0, redrawn: Number(root.dataset.draws) > draws,
              changed: shown() !== before, readout: shown(),
              title: root.querySelector('.posenc-live-title').textContent});
  }
  return out;
}
"""


#: Issue 38's budget for a page's first load: the bytes on the wire (gzip) of every response
#: that finished by the load event, in either edition.
FIRST_LOAD_BUDGET_BYTES = 650_000


class LoadEventLog:
    """Each response's bytes on the wire (CDP ``encodedDataLength``, i.e. gzip-6 bytes from
    :func:`serve`) with the time it finished, and the time of the page's load event,
    recorded through CDP from before the page is opened: :meth:`first_load` is what
    finished by the load event, :meth:`transfers` everything so far."""

    def __init__(self, context, page):
        self.cdp = context.new_cdp_session(page)
        self.cdp.send("Network.enable")
        self.cdp.send("Page.enable")
        self.urls: dict[str, str] = {}
        self.finished: list[tuple[float, str, int]] = []  # (CDP time, url, bytes)
        self.load_time: float | None = None
        self.cdp.on("Network.requestWillBeSent",
                    lambda e: self.urls.__setitem__(e["requestId"], e["request"]["url"]))
        self.cdp.on("Network.loadingFinished", lambda e: self.finished.append(
            (e["timestamp"], self.urls.get(e["requestId"], e["requestId"]),
             int(e["encodedDataLength"]))))
        self.cdp.on("Page.loadEventFired", self._loaded)

    def _loaded(self, event) -> None:
        if self.load_time is None:  # the first load, not a later navigation
            self.load_time = event["timestamp"]

    def transfers(self) -> dict[str, int]:
        """``{url: bytes}`` of every response so far; a URL fetched again counts again,
        under ``url#2``, ``url#3``..."""
        sizes: dict[str, int] = {}
        for _, url, n in self.finished:
            key, count = url, 1
            while key in sizes:
                count += 1
                key = f"{url}#{count}"
            sizes[key] = n
        return sizes

    def first_load(self) -> dict[str, int]:
        """``{url: bytes}`` of the responses that finished by the first load event."""
        if self.load_time is None:
            raise RuntimeError("the page has not fired its load event")
        sizes: dict[str, int] = {}
        for time, url, n in self.finished:
            if time <= self.load_time:
                sizes[url] = sizes.get(url, 0) + n
        return sizes


def idle_scroll(pages: list, seconds: float = 10.0, steps: int = 40) -> None:
    """A reader who scrolls from the top to the bottom of the page in ``seconds``, touching
    nothing (wheel events, as a reader's mouse or trackpad sends); several ``pages`` are
    scrolled side by side (one reader each, all at the same pace)."""
    heights = [p.evaluate("document.documentElement.scrollHeight - innerHeight") for p in pages]
    for _ in range(steps):
        for page, height in zip(pages, heights, strict=True):
            page.mouse.wheel(0, height / steps)
        # the reader's pace, not a wait for the page
        pages[0].wait_for_timeout(1000 * seconds / steps)


def idle_scroll_transfers(browser, base: str, path: str, seconds: float = 10.0) -> dict[str, int]:
    """``{url: bytes on the wire}`` for a visit of ``path`` by a reader who scrolls through
    it in ``seconds`` touching nothing, until the prefetch is idle (see
    :meth:`LoadEventLog.transfers`)."""
    return idle_scroll_transfers_all(browser, base, [path], seconds)[path]


def idle_scroll_transfers_all(browser, base: str, paths: list[str],
                              seconds: float = 10.0) -> dict[str, dict[str, int]]:
    """:func:`idle_scroll_transfers` for every page of ``paths`` at once, each in its own
    browser context: ``{path: {url: bytes}}``. What a page fetches is set by the prefetch
    policy (the figures near what the reader has seen), and each page is measured until its
    prefetch is idle, so readers side by side fetch what one alone would; they only take
    ``seconds`` once instead of once per page."""
    contexts, pages, logs = [], [], []
    for path in paths:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        logs.append(LoadEventLog(context, page))
        page.goto(f"{base}/{path}", wait_until="load")
        contexts.append(context)
        pages.append(page)
    idle_scroll(pages, seconds=seconds)
    out = {}
    for path, context, page, log in zip(paths, contexts, pages, logs, strict=True):
        page.wait_for_function(JS_WIDGETS_SETTLED, timeout=60000)
        out[path] = log.transfers()
        context.close()
    return out


# Accessibility (axe-core) -----------------------------------------------------------------

# Marks one span per distinct look among the syntax-highlighted code's spans: text of the
# same colour, size and weight on the same code background has the same contrast. axe's
# colour-contrast rule spent three quarters of its time on these spans (4,749 of chapter
# 4's 11,154 elements are inside <pre>), one by one, for a few dozen distinct looks.
#: The attribute :data:`JS_MARK_CODE_SAMPLES` puts on its samples.
SAMPLE = "data-posenc-contrast-sample"

JS_MARK_CODE_SAMPLES = """
() => {
  const seen = new Set();
  for (const span of document.querySelectorAll('pre span')) {
    // only spans whose own text shows (a wrapper's colour is its children's business)
    const own = [...span.childNodes].some(n => n.nodeType === Node.TEXT_NODE && n.data.trim());
    if (!own || !span.getClientRects().length) continue;
    const s = getComputedStyle(span), pre = getComputedStyle(span.closest('pre'));
    const box = span.closest('div.highlight');
    const key = [s.color, s.fontSize, s.fontWeight, s.backgroundColor, pre.backgroundColor,
                 box ? getComputedStyle(box).backgroundColor : ''].join('|');
    if (seen.has(key)) continue;
    seen.add(key);
    span.setAttribute('SAMPLE', '');
  }
}
""".replace("SAMPLE", SAMPLE)


def axe_violations(page, structure: bool = True, contrast: bool = True) -> list[dict]:
    """axe-core's violations on ``page``: every rule on the whole page, except that colour
    contrast inside code blocks is measured on one span per distinct look
    (:data:`JS_MARK_CODE_SAMPLES`) instead of on every span. ``structure=False`` leaves out
    every rule but the colour rule (what a second colour scheme of the same page can
    change); ``contrast=False`` leaves out the colour rule (a second edition of the page:
    the same stylesheet and colours, other words)."""
    from axe_playwright_python.sync_playwright import Axe

    if not (structure or contrast):
        raise ValueError("axe_violations needs structure or contrast (or both) to be True")
    axe = Axe()
    page.evaluate(axe.axe_script)
    violations = []
    if structure:
        violations += page.evaluate("""() => axe.run(document, {resultTypes: ['violations'],
            rules: {'color-contrast': {enabled: false}}}).then(r => r.violations)""")
    if not contrast:
        return violations
    page.evaluate(JS_MARK_CODE_SAMPLES)
    # the deepest include or exclude around a node decides: the samples are in, the rest
    # of each <pre> is out
    violations += page.evaluate(f"""() => axe.run(
        {{include: [['body'], ['pre [{SAMPLE}]']], exclude: [['pre']]}},
        {{resultTypes: ['violations'], runOnly: {{type: 'rule', values: ['color-contrast']}}}})
        .then(r => r.violations)""")
    return violations
