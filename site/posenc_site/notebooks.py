"""The course's one notebook tool: every edit the project makes to ``book/*.ipynb``.

    python -m posenc_site.notebooks COMMAND

    header [NOTEBOOK ...]      the run-it-yourself note and posenc check
    selfcheck                  each chapter's closing self-check cells
    strip < NB.ipynb           the git clean filter: prints the clean form
    strip NB.ipynb ... --in-place
    golden check               the checked cells' outputs in the last `make book`
                               against tests/golden/ (no kernel runs)
    golden prepare             book/ -> _build/nbval/book/ with goldens and every
                               exercise's solution as a cell (`make nbval`)
    golden update              tests/golden/ from the last `make book`
    split-checks [NOTEBOOK ...] fold each chapter's checks (split a cell that also teaches)
    check                      exit 1 when a chapter is not as committed

``header`` and ``selfcheck`` are idempotent (cells are found by their ids and refreshed), and
every command writes a notebook as nbformat does (indent 1, keys sorted, one final newline),
so re-running them on the committed chapters changes no byte. ``check`` runs in ``make lint``:
it fails when a chapter lacks its header or its question cells, carries outputs or volatile
metadata, or has a kernelspec other than the one JupyterLab saves.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import configparser
import difflib
import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"

# ---------------------------------------------------------------- reading and writing


def read_notebook(path: Path | str):
    """The notebook at ``path`` as an nbformat v4 node (multi-line strings joined)."""
    return nbformat.read(str(path), as_version=4)


def notebook_text(nb) -> str:
    """``nb`` as the course commits it: nbformat's layout, one final newline."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def write_if_changed(path: Path | str, nb) -> bool:
    """Write ``nb`` to ``path`` unless the file already holds exactly that; True if written."""
    path, text = Path(path), notebook_text(nb)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def place_cell(nb, cell, index: int | Callable[[list], int] | None = None) -> None:
    """Put ``cell`` in ``nb``, found by its id: idempotent, never two cells with one id.

    ``index=None``: replace the cell with that id where it stands, or append it when absent.
    An int (or a function of the other cells giving one): the cell goes there, moved if needed.
    """
    at = next((i for i, c in enumerate(nb.cells) if c.get("id") == cell.id), None)
    if index is None and at is not None:
        nb.cells[at] = cell
        return
    if at is not None:
        del nb.cells[at]
    if callable(index):
        index = index(nb.cells)
    nb.cells.insert(len(nb.cells) if index is None else index, cell)


def chapters() -> list[Path]:
    """The chapters, ``book/NN_*.ipynb``, in order."""
    return sorted(BOOK.glob("[0-9][0-9]_*.ipynb"))


# ---------------------------------------------------------------- header
# Every chapter opens with two cells a reader needs to run it away from the site:
# * a one-line note under the title: how to run this chapter yourself;
# * a first code cell that stops with instructions when the course's library is missing,
#   instead of a bare ``ModuleNotFoundError`` from the imports (hidden on the site, where
#   the library is always there; it is in the downloaded ``.ipynb``).

NOTE_ID, CHECK_ID = "run-it-yourself", "posenc-check"
# The one-chapter install, as make does it: PyTorch's CPU build alone from its own index first
# (fast to fail where that index is out of reach), then everything else from the ordinary one.
# Both lines are documented in book/running_locally.md (tests/test_notebooks_tool.py).
INSTALL_TORCH = ("pip install --no-deps torch==2.13.0 "
                 "--index-url https://download.pytorch.org/whl/cpu")
INSTALL = "pip install 'posenc-course.zip[lab]'"
INSTALLS = (INSTALL_TORCH, INSTALL)
# Reads right on the site and in JupyterLab: where the download is (the site), what to run
# (Lab). The link is relative: the site page on the site; in a clone's JupyterLab the rendered
# page (the course's settings open .md files in Markdown Preview, site/jupyterlab/).
NOTE = ("*Run it yourself:* this chapter is a Jupyter notebook. On the course site, the "
        "download button at the top of the page gives its `.ipynb`; the course's library "
        "installs with one `pip install` (the site's page "
        "[Running the course on your machine](running_locally.md)). In JupyterLab, "
        "*Run → Run All Cells* runs it top to bottom.")
CHECK = f'''# The course's library, posenc: without it, stop here and say how to install it.
try:
    import posenc  # noqa: F401
except ModuleNotFoundError:
    raise ModuleNotFoundError(
        "This chapter needs the course's library, posenc. Download posenc-course.zip from the "
        "course site (page 'Running the course on your machine') and install it, PyTorch's "
        "CPU build first: {INSTALL_TORCH} ; then: {INSTALL}"
    ) from None'''


def add_header(nb) -> None:
    """Insert or refresh the note (under the title) and the check (before the first code)."""
    check = nbformat.v4.new_code_cell(CHECK, metadata={"tags": ["remove-cell"]})
    check.id = CHECK_ID
    place_cell(nb, check, lambda cells: next(i for i, c in enumerate(cells)
                                             if c.cell_type == "code"))
    note = nbformat.v4.new_markdown_cell(NOTE)
    note.id = NOTE_ID
    place_cell(nb, note, 1)  # under the title cell


# ---------------------------------------------------------------- selfcheck
# Each chapter in ``posenc.course.selfcheck.CHAPTERS`` ends with two cells: a heading and a
# two-line code cell, ``show_questions("<chapter>")``, whose input is hidden on the site (tag
# ``remove-input``). The questions live in ``src/posenc/course/questions/``, not here.

SELFCHECK_HEADING = ("## Check your understanding\n"
                     "\n"
                     "A few quick questions on this chapter. Pick an answer, or type a number "
                     "and press Enter: the feedback appears at once.")


def add_selfcheck(nb, chapter: str) -> None:
    """Refresh the self-check cells where they stand, or append them at the end."""
    heading = nbformat.v4.new_markdown_cell(SELFCHECK_HEADING)
    heading.id = "selfcheck-heading"
    questions = nbformat.v4.new_code_cell(
        f'from posenc.course.selfcheck import show_questions\n\nshow_questions("{chapter}")',
        metadata={"tags": ["remove-input"]})
    questions.id = "selfcheck-questions"
    place_cell(nb, heading)
    place_cell(nb, questions)


def selfcheck_chapters() -> tuple[str, ...]:
    """The chapters with questions (posenc is installed from this checkout, editable)."""
    from posenc.course.selfcheck import CHAPTERS

    return tuple(CHAPTERS)


# ---------------------------------------------------------------- checks
# A chapter proves what it says: asserts and claim checks run in the build and in nbval. On the
# page they are folded: a code cell that checks carries the tags ``check`` and ``hide-input``
# (MyST-NB folds its input behind "Show the check"; its output stays) and is collapsed in
# JupyterLab too (``jupyter.source_hidden``). A cell that both teaches and checks is split:
# ``split-checks`` moves its top-level checks into a folded cell right after it.

CHECK_TAG = "check"
FOLD_TAG = "hide-input"


def _is_check(node: ast.AST) -> bool:
    """An ``assert`` statement, or a call of an ``assert*`` function as a statement
    (``torch.testing.assert_close(...)``, ``np.testing.assert_allclose(...)``)."""
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name.startswith("assert")
    return False


def _walk_outside_defs(node: ast.AST):
    """``ast.walk`` that does not enter function or class bodies (a helper's own guards
    are part of its definition, not a check of the chapter's claims)."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                  ast.Lambda)):
            yield from _walk_outside_defs(child)


def _has_check(node: ast.AST) -> bool:
    """Whether ``node`` holds a check outside a definition."""
    return _is_check(node) or any(_is_check(n) for n in _walk_outside_defs(node))


def checks(source: str) -> bool:
    """Whether the code ``source`` checks something outside a definition."""
    try:
        tree = ast.parse(code_without_magics(source))
    except SyntaxError:
        return False
    return _has_check(tree)


def shown_code_cells(nb):
    """The code cells a reader sees on the page (not removed, not appended solutions)."""
    hidden = {"remove-cell", "remove-input", SOLUTION_TAG}
    return [c for c in nb.cells if c.cell_type == "code"
            and not hidden & set(c.metadata.get("tags", []))]


def fold(cell) -> None:
    """Mark ``cell`` as a check: folded on the site and in JupyterLab."""
    tags = cell.metadata.setdefault("tags", [])
    tags += [t for t in (CHECK_TAG, FOLD_TAG) if t not in tags]
    cell.metadata.setdefault("jupyter", {})["source_hidden"] = True


def _stored(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, (ast.Store, ast.Del))}


def _loaded(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}


def split_checks(nb) -> tuple[int, int]:
    """Fold every shown code cell that checks: a cell of checks only is folded whole; from a
    cell that also teaches, the top-level checks move into a folded cell after it (id
    ``<id>-check``) where no later statement of the cell rebinds a name they read (else the
    cell is folded whole). Returns (cells split, cells folded whole)."""
    split = whole = 0
    cells = []
    shown = {id(c) for c in shown_code_cells(nb)}
    for cell in nb.cells:
        cells.append(cell)
        if id(cell) not in shown or not checks(cell.source):
            continue
        if CHECK_TAG in cell.metadata.get("tags", []):
            continue
        source = cell.source
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython magics: fold the cell whole
            fold(cell)
            whole += 1
            continue
        body = tree.body
        moved = [i for i, node in enumerate(body) if _is_check(node)
                 and not any(_loaded(node) & _stored(later) for later in body[i + 1:])]
        kept = [node for i, node in enumerate(body) if i not in moved]
        if not moved or not kept or any(_has_check(node) for node in kept):
            fold(cell)
            whole += 1
            continue
        lines = source.splitlines()
        taken: set[int] = set()
        for i in moved:
            node = body[i]
            start = node.lineno - 1
            # the comment lines right above a check belong to it, back to the statement before
            previous_end = max((n.end_lineno for n in body if n.end_lineno < node.lineno),
                               default=0)
            while (start > previous_end and start - 1 not in taken
                   and lines[start - 1].strip().startswith("#")):
                start -= 1
            taken.update(range(start, node.end_lineno))
        teaching = "\n".join(line for j, line in enumerate(lines) if j not in taken).strip()
        checked = "\n".join(line for j, line in enumerate(lines) if j in taken).strip()
        cell.source = teaching
        new = nbformat.v4.new_code_cell(checked)
        new.id = f"{cell.id}-check"[:64]
        fold(new)
        cells.append(new)
        split += 1
    nb.cells = cells
    return split, whole


def check_problems(nb) -> list[str]:
    """Shown code cells that check but are not folded, and folded cells not tagged both ways."""
    found = []
    for cell in shown_code_cells(nb):
        tags = set(cell.metadata.get("tags", []))
        if checks(cell.source) and CHECK_TAG not in tags:
            found.append(f"cell {cell.id} checks a claim but is not tagged '{CHECK_TAG}' "
                         "(run: python -m posenc_site.notebooks split-checks)")
        if CHECK_TAG in tags and (FOLD_TAG not in tags
                                  or not cell.metadata.get("jupyter", {}).get("source_hidden")):
            found.append(f"cell {cell.id} is a check but not folded "
                         f"(tag '{FOLD_TAG}' and jupyter.source_hidden)")
    return found


# ---------------------------------------------------------------- strip
# A git "clean" filter (``make lab`` configures it; see ``.gitattributes``): git pipes a
# notebook in on stdin and commits what comes out on stdout, so a reader's executed, saved
# notebook stays as it is on disk while the commit holds the clean source.

# Cell metadata that JupyterLab adds while a reader works, and that says nothing about the course.
VOLATILE_CELL_METADATA = ("execution", "collapsed", "scrolled", "jp-MarkdownHeadingCollapsed")


def strip_notebook(text: str) -> str:
    """The committed form of a notebook's JSON text: no outputs, no widget state."""
    nb = nbformat.reads(text, as_version=4)
    nb.metadata.pop("widgets", None)
    if "language_info" in nb.metadata:  # JupyterLab fills in the kernel's version and lexer
        nb.metadata["language_info"] = {"name": nb.metadata["language_info"].get("name",
                                                                                "python")}
    for cell in nb.cells:
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return notebook_text(nb)


# ---------------------------------------------------------------- golden
# Notebooks are committed without outputs, but a cell that prints a number the course teaches
# must fail the tests when that number changes. The expected text output of every cell tagged
# ``nbval-check-output`` lives in ``tests/golden/<name>.json`` (keyed by cell id). ``check``
# compares it with the build's own execution, so no chapter runs twice (`make test`);
# ``prepare`` copies the book with those outputs put back in, for nbval (`make nbval`: the
# same check with each chapter run again, on its own, as nbval runs a reader's notebook).
# After an intended change: ``make book`` then ``golden update`` (or ``make golden``), and
# review the diff like any other change.

GOLDEN = ROOT / "tests" / "golden"
#: The build's execution cache (posenc_site.execute fills it; the build reads it). The golden
#: outputs come from here: the copies MyST-NB writes to _build/jupyter_execute carry no outputs.
CACHE = ROOT / "_build" / ".jupyter_cache"
STAGING = ROOT / "_build" / "nbval" / "book"
TAG = "nbval-check-output"


def tagged_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and TAG in c.metadata.get("tags", [])]


def text_outputs(outputs) -> list[dict]:
    """The outputs nbval compares as text: streams (consecutive writes to one stream as one
    output, as a notebook front end shows them and nbval compares them) and plain-text
    results."""
    kept = []
    for out in outputs:
        if out["output_type"] == "stream":
            last = kept[-1] if kept else None
            if last and last["output_type"] == "stream" and last["name"] == out["name"]:
                last["text"] += out["text"]
            else:
                kept.append({"output_type": "stream", "name": out["name"], "text": out["text"]})
        elif out["output_type"] == "execute_result" and "text/plain" in out["data"]:
            kept.append({"output_type": "execute_result", "execution_count": None,
                         "metadata": {}, "data": {"text/plain": out["data"]["text/plain"]}})
    return kept


def golden_path(notebook: Path) -> Path:
    return GOLDEN / f"{notebook.stem}.json"


def executed_notebook(source: Path):
    """``source`` with the outputs of its last execution, from the build's execution cache
    (matched by its code, so an edited notebook is refused until ``make book`` runs it)."""
    from jupyter_cache import get_cache

    if not CACHE.is_dir():
        sys.exit(f"{CACHE} is missing: run `make book` first")
    try:
        _, nb = get_cache(str(CACHE)).merge_match_into_notebook(read_notebook(source))
    except KeyError:
        sys.exit(f"{source.name} has no execution in {CACHE} that matches its code: "
                 "run `make book` first")
    return nb


#: The replacements applied to both sides before comparing (memory addresses and the like;
#: nbval's ``--nbval-sanitize-with`` format: sections with ``regex`` and ``replace``).
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"


def sanitize(text: str, path: Path = SANITIZE) -> str:
    """``text`` with every ``regex`` of ``path``'s sections replaced by its ``replace``."""
    rules = configparser.ConfigParser()
    rules.read(path)
    for section in rules.sections():
        text = re.sub(rules[section]["regex"], rules[section]["replace"], text)
    return text


def golden_differences(outputs: dict[str, list[dict]], golden: dict[str, list[dict]]
                       ) -> dict[str, str]:
    """``{cell id: unified diff}`` for each checked cell whose text outputs (as
    :func:`text_outputs` keeps them) differ from its golden ones after :func:`sanitize`;
    a cell missing from either side differs from nothing."""
    def text(cell_outputs):  # one block per output, headed by its stream or "result"
        return sanitize("".join(
            f"[{o['name']}]\n{o['text']}" if o["output_type"] == "stream"
            else f"[result]\n{o['data']['text/plain']}\n" for o in cell_outputs))

    differences = {}
    for cell_id in sorted(set(outputs) | set(golden)):
        got, want = text(outputs.get(cell_id, [])), text(golden.get(cell_id, []))
        if got != want:
            differences[cell_id] = "".join(difflib.unified_diff(
                want.splitlines(keepends=True), got.splitlines(keepends=True),
                "golden", "executed"))
    return differences


def golden_check() -> int:
    """Compare each checked cell's output in the build's execution (the cache ``make book``
    filled; no kernel runs here) with tests/golden/: 1 and the differences if any differ."""
    failed = 0
    for source in sorted(BOOK.glob("*.ipynb")):
        nb = executed_notebook(source)
        cells = tagged_cells(nb)
        path = golden_path(source)
        golden = json.loads(path.read_text()) if path.exists() else {}
        differences = golden_differences(
            {cell.id: text_outputs(cell.outputs) for cell in cells}, golden)
        for cell_id, diff in differences.items():
            failed += 1
            print(f"{source.name}, cell {cell_id}: the output is not the golden one "
                  f"(after an intended change: make golden, and review the diff)\n{diff}")
        print(f"{'ok' if not differences else 'FAILED'}  {source.name}: {len(cells)} checked "
              "cells", flush=True)
    return 1 if failed else 0


def golden_update() -> None:
    """Refresh tests/golden/ from the notebooks the last `make book` executed."""
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for source in sorted(BOOK.glob("*.ipynb")):
        nb = executed_notebook(source)
        golden = {cell.id: text_outputs(cell.outputs) for cell in tagged_cells(nb)}
        path = golden_path(source)
        if golden:
            path.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
            print(f"{path.relative_to(ROOT)}: {len(golden)} cells")
        elif path.exists():
            path.unlink()


# ---------------------------------------------------------------- solutions
# Exercise solutions are markdown (``{solution}`` blocks, folded on the site), so no executor
# runs them. The build (posenc_site.execute) appends each one's Python as a code cell after the
# chapter's last cell, runs the chapter, and drops those cells before the site reads it: every
# solution runs in its chapter's context, and no page shows an output that a solution changed.
# :func:`solution_scope_problems` keeps that context the one a reader has at the exercise (every
# name a solution reads is bound before it, and no later cell binds it again).
# A solution with no Python to run is named here with the reason; any other is an error.

SOLUTION = re.compile(r"````\{solution\}\s*(\S+)\n(.*?)\n````", re.S)
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
#: label -> why the solution has no code to run
SOLUTIONS_NOT_RUN: dict[str, str] = {}
#: The tag of an appended solution cell (and the prefix of its id, ``solution-<label>``).
SOLUTION_TAG = "solution"


def solutions(nb) -> list[tuple[int, str, str]]:
    """Every exercise solution in ``nb``: ``(cell index, label, its Python)`` in reading order,
    the Python of all its ``python`` blocks joined ("" when it has none)."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for label, body in SOLUTION.findall(cell.source):
                found.append((index, label, "\n".join(PYTHON_BLOCK.findall(body)).rstrip()))
    return found


def add_solution_cells(nb, name: str = "") -> list[str]:
    """Append a code cell (id ``solution-<label>``, tag ``solution``) with each solution's
    Python after the chapter's last cell, in reading order; returns the labels appended. A
    solution without Python that :data:`SOLUTIONS_NOT_RUN` does not name, or a name there
    that is not a solution without Python, is a ``ValueError``."""
    found = solutions(nb)
    silent = sorted(label for _, label, code in found
                    if not code and label not in SOLUTIONS_NOT_RUN)
    if silent:
        raise ValueError(f"{name}: solutions {silent} have no python block to run; give them "
                         "one, or name them in posenc_site.notebooks.SOLUTIONS_NOT_RUN with why")
    stale = sorted(label for _, label, code in found if code and label in SOLUTIONS_NOT_RUN)
    if stale:
        raise ValueError(f"{name}: {stale} now have code: take them out of SOLUTIONS_NOT_RUN")
    appended = []
    for _, label, code in found:
        if code:
            source = f"# the solution of exercise {label}\n{code}"
            nb.cells.append(nbformat.v4.new_code_cell(
                source, id=f"{SOLUTION_TAG}-{label}", metadata={"tags": [SOLUTION_TAG]}))
            appended.append(label)
    return appended


def drop_solution_cells(nb) -> int:
    """Remove the cells :func:`add_solution_cells` appended; returns how many."""
    kept = [c for c in nb.cells if SOLUTION_TAG not in c.metadata.get("tags", [])
            or not c.get("id", "").startswith(f"{SOLUTION_TAG}-")]
    dropped = len(nb.cells) - len(kept)
    nb.cells = kept
    return dropped


def code_without_magics(source: str) -> str:
    """A cell's Python without its IPython lines (``%`` magics, ``!`` shell commands)."""
    return "\n".join(line for line in source.splitlines()
                     if not line.lstrip().startswith(("%", "!")))


def _bound_names(source: str) -> set[str]:
    """Names a cell binds at any depth (assignments, imports, definitions, arguments)."""
    bound = set()
    for node in ast.walk(ast.parse(code_without_magics(source))):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound


def _read_names(source: str) -> set[str]:
    return {node.id for node in ast.walk(ast.parse(code_without_magics(source)))
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def solution_scope_problems(nb) -> list[str]:
    """Why a solution run after the chapter's last cell could see other names than at its
    exercise: a name it reads (not bound by itself, not a builtin) that no code cell before
    the exercise binds, or that a code cell after it binds again. Empty when none."""
    problems = []
    bound = [(i, _bound_names(c.source)) for i, c in enumerate(nb.cells)
             if c.cell_type == "code"]  # each cell parsed once, not once per solution
    for index, label, solution in solutions(nb):
        if not solution:
            continue
        reads = _read_names(solution) - _bound_names(solution) - set(dir(builtins))
        before = set().union(*(names for i, names in bound if i < index))
        after = set().union(*(names for i, names in bound if i > index))
        if reads - before:
            problems.append(f"{label} reads {sorted(reads - before)}, bound only after it")
        if reads & after:
            problems.append(f"{label} reads {sorted(reads & after)}, bound again after it")
    return problems


def golden_prepare() -> None:
    """Copy book/ to _build/nbval/book/, put the golden outputs back in and add every
    exercise's solution as a code cell (:func:`add_solution_cells`)."""
    shutil.rmtree(STAGING, ignore_errors=True)
    shutil.copytree(BOOK, STAGING, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for staged in sorted(STAGING.glob("*.ipynb")):
        nb = read_notebook(staged)
        try:
            add_solution_cells(nb, staged.name)
        except ValueError as error:
            sys.exit(str(error))
        cells = tagged_cells(nb)
        if not cells:
            nbformat.write(nb, staged)
            continue
        path = golden_path(staged)
        golden = json.loads(path.read_text()) if path.exists() else {}
        missing = [c.id for c in cells if c.id not in golden]
        if missing:
            sys.exit(f"{staged.name}: tagged cells {missing} have no golden output; "
                     f"run `make book` then `make golden`")
        for count, cell in enumerate(cells, start=1):
            cell.outputs = [nbformat.from_dict(o) for o in golden[cell.id]]
            cell.execution_count = count  # nbval rejects outputs on a cell marked unrun
            for out in cell.outputs:
                if out["output_type"] == "execute_result":
                    out["execution_count"] = count
        nbformat.write(nb, staged)


# ---------------------------------------------------------------- check
# What JupyterLab writes on save with ipykernel's default spec (tests/test_lab_settings.py):
# any other kernelspec makes a reader's save change the file.
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def problems(path: Path, with_questions: bool) -> list[str]:
    """What is wrong with the chapter at ``path`` (empty when it is as the course commits it)."""
    text = path.read_text(encoding="utf-8")
    found = []
    clean = strip_notebook(text)  # each problem once: outputs are the strip check's alone
    nb = nbformat.reads(clean, as_version=4)
    fixed = nbformat.reads(clean, as_version=4)
    add_header(fixed)
    if notebook_text(fixed) != clean:
        found.append("header cells missing or stale (run: site/posenc_site/notebooks.py header)")
    if with_questions:
        fixed = nbformat.reads(clean, as_version=4)
        add_selfcheck(fixed, path.stem)
        if notebook_text(fixed) != clean:
            found.append("self-check cells missing or stale "
                         "(run: python -m posenc_site.notebooks selfcheck)")
    if clean != text:
        found.append("not stripped: outputs, widget state or volatile metadata "
                     "(run: site/posenc_site/notebooks.py strip --in-place, or `make git-filter`)")
    found += check_problems(nb)
    if nb.metadata.get("kernelspec") != KERNELSPEC:
        found.append(f"kernelspec is {nb.metadata.get('kernelspec')}, not {KERNELSPEC}")
    return found


def check(paths: list[Path]) -> int:
    with_questions = set(selfcheck_chapters())
    failed = 0
    for path in paths:
        for problem in problems(path, path.stem in with_questions):
            print(f"{path.name}: {problem}")
            failed = 1
    return failed


# ---------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m posenc_site.notebooks",
                                 description=__doc__.split("\n\n")[0])
    commands = ap.add_subparsers(dest="command", required=True)
    header = commands.add_parser("header", help="add or refresh each chapter's header cells")
    header.add_argument("notebooks", nargs="*", type=Path, help="default: every chapter")
    commands.add_parser("selfcheck", help="add or refresh each chapter's self-check cells")
    strip = commands.add_parser("strip", help="stdin to stdout, or files with --in-place")
    strip.add_argument("notebooks", nargs="*", type=Path)
    strip.add_argument("--in-place", action="store_true")
    golden = commands.add_parser("golden", help="golden outputs of nbval-check-output cells")
    golden.add_argument("action", choices=("check", "prepare", "update"))
    split = commands.add_parser("split-checks", help="fold the checks of each chapter")
    split.add_argument("notebooks", nargs="*", type=Path, help="default: every chapter")
    check_ = commands.add_parser("check", help="exit 1 when a chapter is not as committed")
    check_.add_argument("notebooks", nargs="*", type=Path, help="default: every chapter")
    args = ap.parse_args(argv)

    if args.command == "header":
        for path in args.notebooks or chapters():
            nb = read_notebook(path)
            add_header(nb)
            if write_if_changed(path, nb):
                print(f"updated {path.name}")
    elif args.command == "selfcheck":
        for chapter in selfcheck_chapters():
            path = BOOK / f"{chapter}.ipynb"
            nb = read_notebook(path)
            add_selfcheck(nb, chapter)
            if write_if_changed(path, nb):
                print(f"updated {path.name}")
    elif args.command == "split-checks":
        for path in args.notebooks or chapters():
            nb = read_notebook(path)
            split, whole = split_checks(nb)
            if write_if_changed(path, nb):
                print(f"{path.name}: {split} cells split, {whole} folded whole")
    elif args.command == "strip":
        if not args.in_place:
            sys.stdout.write(strip_notebook(sys.stdin.read()))
        for path in args.notebooks if args.in_place else ():
            path.write_text(strip_notebook(path.read_text(encoding="utf-8")), encoding="utf-8")
    elif args.command == "golden":
        if args.action == "check":
            return golden_check()
        {"prepare": golden_prepare, "update": golden_update}[args.action]()
    else:
        return check(args.notebooks or chapters())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
