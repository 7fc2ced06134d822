# Two commands for a fresh machine with Python 3.11:
#   make book   -- build the site into _build/html
#   make test   -- lint and every test (unit, notebooks, the -W site build)
# Both create .venv and install requirements.txt into it first.

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: book test lint unit notebooks site-check lab bench clean help

help:
	@echo "make book   build the site into _build/html"
	@echo "make test   lint + unit tests + every notebook (nbval) + the -W site build"
	@echo "make lab    open the chapters in JupyterLab"
	@echo "make bench  run the benchmarks in benchmarks/"

$(STAMP): requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH (or make PYTHON=python3)"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo
	@echo "The site is in _build/html: open file://$(CURDIR)/_build/html/index.html"
	@echo "(or serve it: $(BIN)/python -m http.server -d _build/html 8000)"

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks book

unit: $(STAMP)
	$(BIN)/python -m pytest tests -q

notebooks: $(STAMP)
	$(BIN)/python -m pytest --nbval-lax --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg book -q -p no:randomly

test: lint unit notebooks book

lab: $(STAMP)
	$(BIN)/jupyter lab book/

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_rope.py

clean:
	rm -rf _build
