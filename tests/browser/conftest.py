import os
import re

import pytest

# the helpers live in site/ so that benchmarks/bench_site.py uses them without test code
from posenc_site.sitecheck import (
    SCREENSHOTS,
    SITE,
    LoadEventLog,
    chromium,
    content_pages,
    serve,
)

if not (SITE / "index.html").exists():
    raise pytest.UsageError(f"{SITE} has no built site: run `make book` before the browser tests")


@pytest.fixture(scope="session")
def base_url():
    with serve(SITE) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture(scope="session")
def screenshots():
    """Where full-page screenshots of every page go (light and dark), for a person to look
    at -- only with ``POSENC_SCREENSHOTS=1`` (each costs ~2.5 s); else None."""
    if os.environ.get("POSENC_SCREENSHOTS", "") in ("", "0"):
        return None
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


class Visit:
    """One page load with everything the checks need recorded."""

    def __init__(self, browser, base_url, path, color_scheme="light"):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900},
                                           color_scheme=color_scheme)
        self.page = self.context.new_page()
        self.requests, self.console_errors, self.page_errors = [], [], []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: m.type == "error" and self.console_errors.append(
            f"{m.text} [{m.location.get('url', '')}]"))
        self.page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        self.transfers = LoadEventLog(self.context, self.page)  # the first load's bytes
        self.response = self.page.goto(f"{base_url}/{path}", wait_until="networkidle")
        self.page.wait_for_function("document.readyState === 'complete'")

    def close(self):
        self.context.close()


@pytest.fixture
def visit(browser, base_url):
    opened = []

    def _visit(path, **kw):
        v = Visit(browser, base_url, path, **kw)
        opened.append(v)
        return v

    yield _visit
    for v in opened:
        v.close()


@pytest.fixture(scope="module")
def reader(browser, base_url, page_path):
    """One visit of ``page_path`` (its system asks for the light theme until a check asks
    otherwise: ``test_site._in_theme``) shared by the page's checks, in the order the
    test module defines them (pytest groups a module-scoped parameter's tests together): the
    read-only checks first, then the ones that move sliders, answer questions, reveal
    solutions and, last, switch the theme. A fresh page per check cost ~2 s each."""
    v = Visit(browser, base_url, page_path)
    yield v
    v.close()


def _page_id(path: str) -> str:
    """A page's test id: ``04_rope.html``, ``zh/04_rope.html``."""
    return path.replace("book/", "")


# a test of one page (its id first in the brackets: [zh/04_rope.html] or [04_rope.html-dark])
_PAGE_TEST = re.compile(r"\[((?:zh/)?[0-9a-z_]+\.html)(?:-[^\]]*)?\]$")


def page_group(nodeid: str) -> str | None:
    """The page (its test id) whose shared visit the test ``nodeid`` reads, or None."""
    m = _PAGE_TEST.search(nodeid)
    return m.group(1) if m else None


def pytest_generate_tests(metafunc):
    if "page_path" in metafunc.fixturenames:
        pages = content_pages()
        # module scope: a page's tests run one after another, on one shared visit
        metafunc.parametrize("page_path", pages, ids=[_page_id(p) for p in pages],
                             scope="module")


def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist with ``--dist loadgroup`` (``make test``), each page's tests go to
    one worker, so that they share its visits (:func:`reader`); every other test is handed
    out on its own. pytest-xdist's own groups (its ``xdist_group`` mark) do not form under
    pytest 9.2, whose node ids it can no longer extend: a page's checks were spread over
    both workers, and each page was visited twice. Here the page comes from the test's id."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class PageScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return page_group(nodeid) or nodeid

    return PageScheduling(config, log)


def pytest_collection_modifyitems(items):
    """The order the tests are handed out in (``make test`` turns off xdist's own,
    ``--no-loadscope-reorder``): the tests marked ``slow`` first, then the pages, then the
    other short tests, so that the last minute is not one worker on a slow test while the
    other waits (the idle-scroll check, ~60 s, came last and did just that). A stable sort:
    a page's tests keep pytest's order, one after another on one visit."""
    def rank(item):
        if item.get_closest_marker("slow"):
            return 0
        spec = getattr(item, "callspec", None)
        return 1 if spec is not None and "page_path" in spec.params else 2

    items.sort(key=rank)
