import os

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


def pytest_generate_tests(metafunc):
    if "page_path" in metafunc.fixturenames:
        pages = content_pages()
        # module scope: a page's tests run one after another, on one shared visit
        metafunc.parametrize("page_path", pages, ids=[p.replace("book/", "") for p in pages],
                             scope="module")


def pytest_collection_modifyitems(items):
    """Under pytest-xdist (``--dist loadgroup``) a page's tests stay on one worker, so they
    share its visits; other tests spread over the workers one by one. The order they are
    handed out in (``make test`` turns off xdist's own, ``--no-loadscope-reorder``): the
    tests marked ``slow`` first, then the pages, then the other short tests, so that the
    last minute is not one worker on a slow test while the other waits (the idle-scroll
    check, ~60 s, came last and did just that)."""
    def rank(item):
        if item.get_closest_marker("slow"):
            return 0
        spec = getattr(item, "callspec", None)
        return 1 if spec is not None and "page_path" in spec.params else 2

    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is not None and "page_path" in spec.params:
            item.add_marker(pytest.mark.xdist_group(spec.params["page_path"]))
    items.sort(key=rank)  # stable: a page's tests keep pytest's order, one visit each
