import sys
from pathlib import Path

import pytest

# the helpers live in site/ so that benchmarks/bench_site.py uses them without test code
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "site"))

from sitecheck import SCREENSHOTS, SITE, chromium, content_pages, serve  # noqa: E402

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
        self.page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        self.page.on("pageerror", lambda e: self.page_errors.append(str(e)))
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


def pytest_generate_tests(metafunc):
    if "page_path" in metafunc.fixturenames:
        pages = content_pages()
        metafunc.parametrize("page_path", pages, ids=[p.split("/")[-1] for p in pages])
