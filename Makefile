# Two commands for a fresh machine with Python 3.11 to 3.13 (and its venv module):
#   make book   -- build the site into _build/html
#   make test   -- lint and every test (unit, notebooks, the -W site build, the browser)
# Both create .venv and install requirements.txt into it first.

# The first of these that is Python 3.11 or newer (make PYTHON=/path/to/python to choose)
PYTHON ?= $(shell for p in python3.11 python3.12 python3.13 python3; do \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { echo $$p; break; }; \
	done)
# Where torch comes from: PyTorch's CPU-only wheels by default (a few hundred MB). On Linux the
# ordinary package index serves the CUDA build, several GB with its nvidia-* packages.
# A GPU build instead: make lab TORCH_INDEX=https://download.pytorch.org/whl/cu128
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_PIN := $(shell sed -n 's/^torch==//p' requirements.txt)
# make lab: JupyterLab's address and extra options, e.g. on a remote or headless machine
#   make lab LAB_IP=0.0.0.0 LAB_PORT=8890 LAB_ARGS="--no-browser"
LAB_IP   ?= 127.0.0.1
LAB_PORT ?= 8888
LAB_ARGS ?=
LAB_DIR  ?= book
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export OMP_NUM_THREADS ?= 2

.PHONY: help book execute book-cached test lint unit notebooks nbval golden browser chromium fonts lab git-filter local bench clean translations

help:
	@echo "make book         build the site into _build/html (every notebook executed)"
	@echo "make test         lint + unit tests + the -W build (every notebook and solution run) + golden outputs + browser tests"
	@echo "make lab          open the chapters in JupyterLab (LAB_IP, LAB_PORT, LAB_ARGS; TORCH_INDEX)"
	@echo "make book-cached  quicker rebuild for authors: re-runs only notebooks whose code changed"
	@echo "make bench        run the benchmarks in benchmarks/"

$(STAMP): requirements.txt pyproject.toml site/jupyterlab/posenc-course.json
	@[ -n "$(PYTHON)" ] || { echo "need Python 3.11, 3.12 or 3.13 on PATH (python3.11 ... python3), or: make PYTHON=/path/to/python"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
		echo "$(PYTHON) -m venv failed: on Debian/Ubuntu, sudo apt install python3-venv"; exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# torch alone first, from TORCH_INDEX (a wheel that pip already finds locally counts too);
	@# its dependencies then come from the ordinary index with everything else.
	$(BIN)/python -m pip install --quiet --no-deps "torch==$(TORCH_PIN)" --index-url $(TORCH_INDEX)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@# JupyterLab defaults for the course (save widget state, so sliders survive a reopen; no
	@# news pop-up): pyproject's data-files install them, but not always in editable mode
	mkdir -p $(VENV)/share/jupyter/lab/settings/overrides.d
	cp site/jupyterlab/posenc-course.json $(VENV)/share/jupyter/lab/settings/overrides.d/
	touch $(STAMP)

# The site. -W: any warning (a broken reference, a failing cell) fails the build.
# Every notebook is executed afresh, two at a time (site/posenc_site/execute.py fills the
# execution cache from an empty one), then Jupyter Book builds from that cache.
# Then the Chinese edition into _build/html/zh (site/posenc_site/i18n.py): from the same execution, no
# kernel runs again; it fails on any figure or question text that has no Chinese.
CACHED_CONFIG := .config_cached.yml
book: $(STAMP) fonts execute
	sed 's/^  execute_notebooks: force.*/  execute_notebooks: cache/' _config.yml > $(CACHED_CONFIG)
	@# --all: every page is written again from the new outputs (Sphinx would keep the pages
	@# of notebooks whose source did not change)
	@# the two editions' Sphinx builds side by side: both only read the execution cache
	$(BIN)/jupyter-book build . --config $(CACHED_CONFIG) --all -W -n --keep-going & \
		$(BIN)/python -m posenc_site.i18n build; zh=$$?; wait $$! && exit $$zh
	@echo
	@echo "The site is in _build/html (the Chinese edition in _build/html/zh):"
	@echo "open file://$(CURDIR)/_build/html/index.html"
	@echo "or serve it: $(BIN)/python -m http.server -d _build/html 8000"

# Every notebook executed afresh into the build's execution cache (make book's first step)
execute: $(STAMP) fonts
	$(BIN)/python -m posenc_site.execute --fresh

# Same build, but notebooks are re-executed only when their code cells changed.
# Caveat: an edit to src/posenc does NOT re-run the notebooks; use `make book` for that.
book-cached: $(STAMP) fonts
	@# beside _config.yml, because paths in it (local_extensions) are relative to it
	sed 's/^  execute_notebooks: force.*/  execute_notebooks: cache/' _config.yml > $(CACHED_CONFIG)
	$(BIN)/python -m posenc_site.execute
	$(BIN)/jupyter-book build . --config $(CACHED_CONFIG) -W -n --keep-going
	$(BIN)/python -m posenc_site.i18n build

# ruff, and every chapter as committed: header, self-check cells, no outputs, kernelspec
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks book site
	$(BIN)/python -m posenc_site.notebooks check
	$(BIN)/python -m posenc_site.i18n check

# The Chinese edition after an English change: refresh the catalogues, then translate what
# `python -m posenc_site.i18n check` lists (locale/zh_CN/LC_MESSAGES/book/*.po)
translations: $(STAMP)
	$(BIN)/python -m posenc_site.i18n update
	-$(BIN)/python -m posenc_site.i18n check

# fonts: the unit tests draw Chinese figures (tests/test_i18n.py)
unit: $(STAMP) fonts
	$(BIN)/python -m pytest tests -q --ignore=tests/browser --ignore=tests/local

# Every notebook runs, with its exercises' solutions after its last cell, in the build's own
# execution (posenc_site.execute: only the notebooks not already run with their current code),
# and cells tagged nbval-check-output must have printed exactly their golden output
# (tests/golden/, see site/posenc_site/notebooks.py golden): no chapter runs twice.
notebooks: $(STAMP) fonts
	$(BIN)/python -m posenc_site.execute
	$(BIN)/python -m posenc_site.notebooks golden check

# The same check by nbval, each chapter run again on its own (as nbval runs a reader's
# notebook), for an author without a build. Draft frames: every slider combination is drawn
# but only its figure's first frame is rasterised (posenc.course.figures.sliders).
nbval: $(STAMP)
	$(BIN)/python -m posenc_site.notebooks golden prepare
	cd _build/nbval && POSENC_DRAFT_FRAMES=1 ../../$(BIN)/python -m pytest book -q -p no:cacheprovider \
		--rootdir=. --nbval-lax --nbval-current-env \
		--nbval-sanitize-with ../../tests/nbval_sanitize.cfg

# After an intended change to a taught number: make book, then make golden, review the diff.
golden: $(STAMP)
	$(BIN)/python -m posenc_site.notebooks golden update

# Debian's Chromium drives the browser tests (never `playwright install`).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the browser tests"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium >/dev/null; }

# The Chinese figures' font: Debian's WenQuanYi Micro Hei (1.6 MB; the README names it)
fonts:
	@fc-list 2>/dev/null | grep -qi "wenquanyi micro hei\|wqy-microhei" || { \
		echo "installing Debian's fonts-wqy-microhei for the Chinese figures"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq fonts-wqy-microhei >/dev/null; }

# BROWSER_ARGS: e.g. -m budget (make test runs the timing budgets on their own, after the
# parallel stage, so that JupyterLab's tests beside them do not set the figure)
browser: $(STAMP) chromium
	$(BIN)/python -m pytest tests/browser -q $(BROWSER_ARGS)

# The reader's local path: JupyterLab in a browser (tests/local/test_lab.py) and a downloaded
# chapter run outside the repository after the documented one-line install.
local: $(STAMP) chromium fonts
	$(BIN)/python -m pytest tests/local -q

# Stages that do not need each other run side by side on the machine's two cores: the unit
# tests and the reader's local path (which waits on pip and JupyterLab much of its time)
# first; then the -W build, which runs every notebook and every exercise's solution once, and
# the golden outputs read from that run (no notebook runs again); then the browser suite on
# two pytest-xdist workers, each page's checks on one of them (they share the page's visit:
# tests/browser/conftest.py), the slow checks handed out first; last, alone, the timing
# budgets. (The build's notebook execution in the first stage, after the local path and
# beside the unit tests, took as long in all: the stage is CPU-bound, 842 CPU-s in 446 s.)
test: lint
	@# what apt installs, one after the other (two apt-gets at once would fight over its lock)
	$(MAKE) --no-print-directory chromium
	$(MAKE) --no-print-directory fonts
	OMP_NUM_THREADS=1 $(MAKE) --no-print-directory -o $(STAMP) -j2 --output-sync=target \
		unit local
	$(MAKE) --no-print-directory -o $(STAMP) book
	$(BIN)/python -m posenc_site.notebooks golden check
	OMP_NUM_THREADS=1 $(MAKE) --no-print-directory -o $(STAMP) browser \
		BROWSER_ARGS="-m 'not budget' -n 2 --dist loadgroup --no-loadscope-reorder"
	$(MAKE) --no-print-directory -o $(STAMP) browser BROWSER_ARGS="-m budget"

# Opens JupyterLab on book/. As root (e.g. in a container) it adds --allow-root. In a git clone
# it also turns on the notebook filter in .gitattributes, so outputs and saved widget state
# never reach a commit (the working copy keeps them).
lab: $(STAMP) git-filter
	$(BIN)/jupyter lab --notebook-dir=$(LAB_DIR) --ip=$(LAB_IP) --port=$(LAB_PORT) $(ROOT_FLAG) $(LAB_ARGS)

git-filter:
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git config filter.posenc-notebook.clean "$(CURDIR)/$(BIN)/python -m posenc_site.notebooks strip"; \
		git config filter.posenc-notebook.smudge cat; \
	fi

# rotary-embedding-torch is a peer in the RoPE benchmark only, so it is not in requirements.txt
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet rotary-embedding-torch==0.9.1
	$(BIN)/python benchmarks/bench_rope.py
	$(BIN)/python benchmarks/bench_site.py

clean:
	rm -rf _build
