"""posenc_site.notebooks, the one notebook tool: every chapter says how to run it and stops with
instructions when posenc is missing; the git filter keeps outputs out of commits; `check`
fails on a chapter that is not as the course commits it."""

import copy
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from posenc_site import notebooks
from posenc_site.notebooks import (
    CHECK_ID,
    INSTALL,
    INSTALL_TORCH,
    INSTALLS,
    KERNELSPEC,
    NOTE_ID,
    add_header,
    add_selfcheck,
    notebook_text,
    problems,
    read_notebook,
    strip_notebook,
)

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "book").glob("[0-9]*.ipynb"))
TOOL = ["-m", "posenc_site.notebooks"]  # the tool as make and the git filter run it
STRIPPED = ROOT / "book" / "06_alibi.ipynb"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_has_the_note_and_the_library_check_first(path):
    nb = nbformat.read(path, as_version=4)
    ids = [c.get("id") for c in nb.cells]
    assert ids[1] == NOTE_ID, "run `python -m posenc_site.notebooks header`"
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert first_code.id == CHECK_ID, "run `python -m posenc_site.notebooks header`"


def test_the_check_names_what_to_install_when_posenc_is_missing():
    cells = nbformat.read(CHAPTERS[0], as_version=4).cells
    check = next(c for c in cells if c.get("id") == CHECK_ID)
    # -I -S: no site-packages, so posenc (and everything else) is missing, as on a fresh machine
    run = subprocess.run([sys.executable, "-I", "-S", "-c", check.source],
                         capture_output=True, text=True)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: This chapter needs the course's library")
    assert INSTALL in last and INSTALL_TORCH in last and "posenc-course.zip" in last


def test_the_install_line_is_the_one_the_running_locally_page_documents():
    page = (ROOT / "book" / "running_locally.md").read_text()
    documented = re.findall(r"^pip install .*$", page, flags=re.M)
    assert [line.replace('"', "'") for line in documented] == list(INSTALLS)


def test_the_torch_line_installs_the_pinned_torch_alone_from_the_cpu_index():
    # the same two steps as make: torch alone (no dependencies) from the CPU index, pinned as
    # in requirements.txt; then the rest with nothing but the ordinary index
    pin = re.search(r"^torch==(\S+)", (ROOT / "requirements.txt").read_text(), re.M).group(1)
    assert f"torch=={pin}" in INSTALL_TORCH.split() and "--no-deps" in INSTALL_TORCH.split()
    make = (ROOT / "Makefile").read_text()
    index = re.search(r"^TORCH_INDEX \?= (\S+)", make, re.M).group(1)
    assert INSTALL_TORCH.split()[-2:] == ["--index-url", index]
    assert "index-url" not in INSTALL


def test_header_and_selfcheck_put_back_exactly_the_committed_cells():
    # the cells removed, then added by the tool: the chapter comes back byte for byte
    for path in (CHAPTERS[0], STRIPPED):
        committed = path.read_text()
        nb = read_notebook(path)
        nb.cells = [c for c in nb.cells if c.id not in (NOTE_ID, CHECK_ID, "selfcheck-heading",
                                                        "selfcheck-questions")]
        add_header(nb)
        add_selfcheck(nb, path.stem)
        assert notebook_text(nb) == committed
        add_header(nb)  # idempotent: a second run changes nothing
        add_selfcheck(nb, path.stem)
        assert notebook_text(nb) == committed


def test_a_misplaced_header_cell_is_moved_not_doubled():
    nb = read_notebook(STRIPPED)
    note = next(c for c in nb.cells if c.id == NOTE_ID)
    nb.cells.remove(note)
    nb.cells.append(note)
    add_header(nb)
    ids = [c.id for c in nb.cells]
    assert ids.count(NOTE_ID) == 1 and ids[1] == NOTE_ID
    assert notebook_text(nb) == STRIPPED.read_text()


def executed_and_saved(text: str) -> str:
    """What JupyterLab writes after Run All and Save: outputs, counts, widget state, lexer."""
    nb = json.loads(text)
    for n, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
        cell["execution_count"] = n + 1
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["hello\n"]}]
        cell["metadata"]["execution"] = {"iopub.status.idle": "2026-11-23T00:00:00Z"}
    nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.7",
                                       "codemirror_mode": {"name": "ipython", "version": 3}}
    return json.dumps(nb, indent=1)


def test_stripping_a_saved_chapter_gives_back_the_committed_file():
    committed = STRIPPED.read_text()
    assert strip_notebook(executed_and_saved(committed)) == committed
    assert strip_notebook(committed) == committed


def test_tags_and_sources_are_kept():
    nb = json.loads(STRIPPED.read_text())
    before = copy.deepcopy([(c["source"], c["metadata"].get("tags")) for c in nb["cells"]])
    after = json.loads(strip_notebook(executed_and_saved(STRIPPED.read_text())))
    assert [(c["source"], c["metadata"].get("tags")) for c in after["cells"]] == before


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_filter_keeps_outputs_out_of_commits(tmp_path):
    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True,
                              text=True).stdout

    git("init", "-q")
    git("config", "user.email", "reader@example.org")
    git("config", "user.name", "reader")
    # the two lines `make lab` runs (Makefile, target git-filter)
    clean = 'filter.posenc-notebook.clean "$(CURDIR)/$(BIN)/python -m posenc_site.notebooks strip"'
    assert clean in (ROOT / "Makefile").read_text()
    git("config", "filter.posenc-notebook.clean",
        f"{sys.executable} -m posenc_site.notebooks strip")
    git("config", "filter.posenc-notebook.smudge", "cat")
    shutil.copy(ROOT / ".gitattributes", tmp_path / ".gitattributes")
    (tmp_path / "book").mkdir()
    saved = executed_and_saved(STRIPPED.read_text())
    (tmp_path / "book" / STRIPPED.name).write_text(saved)
    git("add", ".")
    git("commit", "-qm", "a reader's save")
    assert git("show", f"HEAD:book/{STRIPPED.name}") == STRIPPED.read_text()
    assert (tmp_path / "book" / STRIPPED.name).read_text() == saved  # the working copy keeps all
    assert git("status", "--porcelain") == ""


def test_the_kernelspec_check_is_what_ipykernel_saves():
    from ipykernel.kernelspec import get_kernel_dict

    assert KERNELSPEC["display_name"] == get_kernel_dict()["display_name"]


def test_check_passes_on_the_book():
    run = subprocess.run([sys.executable, *TOOL, "check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "-m posenc_site.notebooks check" in (ROOT / "Makefile").read_text()  # in make lint


def _broken(tmp_path, change):
    """A copy of a chapter with one thing wrong, otherwise in the committed layout."""
    nb = json.loads(STRIPPED.read_text())
    change(nb)
    path = tmp_path / STRIPPED.name
    path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return path


def _with_outputs(nb):
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]
    cell["execution_count"] = 1


def _without(*ids):
    def change(nb):
        nb["cells"] = [c for c in nb["cells"] if c.get("id") not in ids]
    return change


def _kernel(nb):
    nb["metadata"]["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                    "name": "python3"}


@pytest.mark.parametrize("change, says", [
    (_with_outputs, "not stripped"),
    (_without(NOTE_ID), "header"),
    (_without(CHECK_ID), "header"),
    (_without("selfcheck-questions"), "self-check"),
    (_kernel, "kernelspec"),
], ids=["outputs", "no-note", "no-check", "no-questions", "kernelspec"])
def test_check_fails_on_a_chapter_that_is_not_as_committed(tmp_path, change, says):
    path = _broken(tmp_path, change)
    found = problems(path, with_questions=True)
    assert len(found) == 1 and says in found[0], found
    run = subprocess.run([sys.executable, *TOOL, "check", str(path)], capture_output=True,
                         text=True)
    assert run.returncode == 1 and says in run.stdout


def test_check_passes_on_a_clean_copy(tmp_path):
    path = tmp_path / STRIPPED.name
    path.write_text(STRIPPED.read_text())
    assert problems(path, with_questions=True) == []
    assert notebooks.main(["check", str(path)]) == 0


# ---------------------------------------------------------------- solutions (issue 32)


def test_every_solution_is_appended_in_reading_order_or_named_with_why():
    """The build runs each chapter with one code cell per solution with Python appended after
    its last cell, in reading order; the only ones left out are named with a reason; dropping
    them gives back the chapter."""
    total, skipped = 0, []
    for path in notebooks.chapters():
        nb = notebooks.read_notebook(path)
        chapter = copy.deepcopy(nb.cells)
        found = notebooks.solutions(nb)
        appended = notebooks.add_solution_cells(nb, path.name)
        total += len(found)
        skipped += [label for _, label, code in found if not code]
        assert appended == [label for _, label, code in found if code]
        assert nb.cells[:len(chapter)] == chapter
        for cell, (_, label, code) in zip(nb.cells[len(chapter):],
                                          [f for f in found if f[2]], strict=True):
            assert cell.cell_type == "code" and cell.metadata["tags"] == ["solution"]
            assert cell.id == f"solution-{label}" and cell.source.endswith(code)
        assert notebooks.drop_solution_cells(nb) == len(appended)
        assert nb.cells == chapter
    assert total >= 45 and sorted(skipped) == sorted(notebooks.SOLUTIONS_NOT_RUN)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_solution_sees_at_the_end_the_names_it_sees_at_its_exercise(path):
    """Run after the chapter's last cell, a solution reads what a reader's kernel holds at
    the exercise: every name it reads is bound before it and not bound again after it."""
    assert notebooks.solution_scope_problems(notebooks.read_notebook(path)) == []


def test_the_scope_check_catches_a_name_bound_late_or_bound_again():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1\nimport numpy as np"),
                nbformat.v4.new_markdown_cell(
                    "````{solution} ex-a\n```python\nprint(x, y, np.pi, len([]))\n```\n````"),
                nbformat.v4.new_code_cell("y = 2\nfor x in range(3):\n    pass")]
    assert notebooks.solution_scope_problems(nb) == [
        "ex-a reads ['y'], bound only after it", "ex-a reads ['x', 'y'], bound again after it"]
    nb.cells[2].source = "z = 2"
    nb.cells[1].source = nb.cells[1].source.replace("x, y", "x")
    assert notebooks.solution_scope_problems(nb) == []


def test_a_solution_without_python_must_be_named(monkeypatch):
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell(
        "````{solution} ex-x\n:class: dropdown\nJust words.\n````"))
    with pytest.raises(ValueError, match=r"\['ex-x'\] have no python block"):
        notebooks.add_solution_cells(nb, "x.ipynb")
    monkeypatch.setitem(notebooks.SOLUTIONS_NOT_RUN, "ex-x", "its answer is words only")
    assert notebooks.add_solution_cells(nb, "x.ipynb") == []  # named: nothing to append
    nb.cells[0].source = "````{solution} ex-x\n```python\nprint(1)\n```\n````"
    with pytest.raises(ValueError, match="take them out of SOLUTIONS_NOT_RUN"):
        notebooks.add_solution_cells(nb, "x.ipynb")
