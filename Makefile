# Two commands for a fresh machine with Python 3.11:
#   make book   -- build the site into _build/html
#   make test   -- lint and every test (unit, notebooks, the -W site build, the browser)
# Both create .venv and install requirements.txt into it first.

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export OMP_NUM_THREADS ?= 2

.PHONY: help book book-cached test lint unit notebooks golden browser chromium lab bench clean

help:
	@echo "make book         build the site into _build/html (every notebook executed)"
	@echo "make test         lint + unit tests + nbval on every notebook + the -W build + browser tests"
	@echo "make lab          open the chapters in JupyterLab"
	@echo "make book-cached  quicker rebuild for authors: re-runs only notebooks whose code changed"
	@echo "make bench        run the benchmarks in benchmarks/"

$(STAMP): requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH (or: make PYTHON=python3)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# The site. -W: any warning (a broken reference, a failing cell) fails the build.
book: $(STAMP)
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo
	@echo "The site is in _build/html: open file://$(CURDIR)/_build/html/index.html"
	@echo "or serve it: $(BIN)/python -m http.server -d _build/html 8000"

# Same build, but notebooks are re-executed only when their code cells changed.
# Caveat: an edit to src/posenc does NOT re-run the notebooks; use `make book` for that.
book-cached: $(STAMP)
	@# beside _config.yml, because paths in it (local_extensions) are relative to it
	sed 's/^  execute_notebooks: force.*/  execute_notebooks: cache/' _config.yml > .config_cached.yml
	$(BIN)/jupyter-book build . --config .config_cached.yml -W -n --keep-going

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks book site

unit: $(STAMP)
	$(BIN)/python -m pytest tests -q --ignore=tests/browser

# nbval runs every cell of every notebook; cells tagged nbval-check-output must print
# exactly their golden output (tests/golden/, see tests/nbgolden.py).
notebooks: $(STAMP)
	$(BIN)/python tests/nbgolden.py prepare
	cd _build/nbval && ../../$(BIN)/python -m pytest book -q -p no:cacheprovider \
		--rootdir=. --nbval-lax --nbval-current-env \
		--nbval-sanitize-with ../../tests/nbval_sanitize.cfg

# After an intended change to a taught number: make book, then make golden, review the diff.
golden: $(STAMP)
	$(BIN)/python tests/nbgolden.py update

# Debian's Chromium drives the browser tests (never `playwright install`).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the browser tests"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium >/dev/null; }

browser: $(STAMP) chromium
	$(BIN)/python -m pytest tests/browser -q

test: lint unit notebooks book browser

lab: $(STAMP)
	$(BIN)/jupyter lab book/

# rotary-embedding-torch is a peer in the RoPE benchmark only, so it is not in requirements.txt
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet rotary-embedding-torch==0.9.1
	$(BIN)/python benchmarks/bench_rope.py
	$(BIN)/python benchmarks/bench_site.py

clean:
	rm -rf _build
