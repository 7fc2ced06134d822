"""A chapter reads as a lesson: its checks run but are folded, each check cell is a real check,
exercises are numbered per chapter."""

import ast
import contextlib
import io
import re
from pathlib import Path

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st
from posenc_site import exercises
from posenc_site.notebooks import (
    CHECK_TAG,
    FOLD_TAG,
    check_problems,
    checks,
    shown_code_cells,
    split_checks,
)

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


def _run(cells) -> str:
    """What the cells print when run in order in one namespace (raises what they raise)."""
    out, scope = io.StringIO(), {}
    with contextlib.redirect_stdout(out):
        for source in cells:
            exec(compile(source, "<cell>", "exec"), scope)  # noqa: S102
    return out.getvalue()


def _notebook(*sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    for i, cell in enumerate(nb.cells):
        cell.id = f"c{i}"
    return nb


def test_a_cell_that_teaches_and_checks_is_split_and_prints_the_same():
    source = ("x = 3\n"
              "# the square\n"
              "assert x * x == 9\n"
              "print('x', x)\n"
              "import math\n"
              "math.isclose(1, 1)\n")
    nb = _notebook(source)
    assert split_checks(nb) == (1, 0)
    shown, folded = nb.cells
    assert "assert" not in shown.source and "print('x', x)" in shown.source
    assert folded.source == "# the square\nassert x * x == 9"
    assert folded.id == "c0-check" and {CHECK_TAG, FOLD_TAG} <= set(folded.metadata.tags)
    assert folded.metadata["jupyter"]["source_hidden"] is True
    assert _run([shown.source, folded.source]) == _run([source])
    assert check_problems(nb) == []


def test_a_check_whose_names_are_rebound_later_folds_the_whole_cell():
    nb = _notebook("x = 1\nassert x == 1\nx = 2\nprint(x)")
    assert split_checks(nb) == (0, 1)
    assert len(nb.cells) == 1 and CHECK_TAG in nb.cells[0].metadata.tags


def test_checks_inside_a_loop_fold_the_whole_cell_but_a_helper_guard_does_not_count():
    nb = _notebook("for i in range(3):\n    print(i)\n    assert i < 3",
                   "def f(x):\n    assert x > 0\n    return x\nprint(f(2))")
    assert split_checks(nb) == (0, 1)
    assert CHECK_TAG in nb.cells[0].metadata.tags
    assert "tags" not in nb.cells[1].metadata and not checks(nb.cells[1].source)


def test_an_unfolded_check_is_a_lint_problem():
    nb = _notebook("y = 2\ntorch_like.testing.assert_close(y, 2)")
    assert "not tagged 'check'" in check_problems(nb)[0]
    nb.cells[0].metadata["tags"] = [CHECK_TAG]
    assert "not folded" in check_problems(nb)[0]


statements = st.lists(st.sampled_from([
    "a = a + 1", "b = a * 2", "print(a, b)", "assert a >= 0", "assert b >= 0",
    "# a comment", "print('x')"]), min_size=1, max_size=8)


@given(statements)
def test_splitting_never_changes_what_a_cell_prints(lines):
    source = "a, b = 1, 0\n" + "\n".join(lines)
    nb = _notebook(source)
    split_checks(nb)
    assert _run([c.source for c in nb.cells]) == _run([source])
    for cell in nb.cells:  # a folded cell holds the checks; a shown one none
        assert checks(cell.source) == (CHECK_TAG in cell.metadata.get("tags", []))


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_check_of_the_chapter_is_folded_and_each_folded_cell_checks(path):
    nb = nbformat.read(path, as_version=4)
    assert check_problems(nb) == []
    for cell in shown_code_cells(nb):
        if CHECK_TAG in cell.metadata.get("tags", []):
            assert checks(cell.source), f"{cell.id} is folded as a check but checks nothing"
        else:  # what a reader sees has no assert outside a definition
            tree = ast.parse(cell.source)
            assert not any(isinstance(n, ast.Assert) for n in tree.body), cell.id


def test_exercises_are_numbered_within_their_chapter():
    assert exercises.chapter_number("book/06_alibi") == 6
    assert exercises.chapter_number("book/intro") is None
    numbers = {"ex-b": (21,), "ex-a": (20,), "ex-c": (23,)}
    assert exercises.per_chapter(numbers, 6) == {"ex-a": (6, 1), "ex-b": (6, 2), "ex-c": (6, 3)}


# ---------------------------------------------------------------- the front door

CARD = re.compile(r":::\{admonition\} This chapter at a glance\n:class: chapter-card\n"
                  r"\*\*You will learn\*\*\n\n(?P<items>(?:- .+\n(?:  .+\n)*)+)\n"
                  r"\*\*Time\*\* about (?P<minutes>\d+) minutes\. \*\*Assumes\*\* .+\n:::",
                  re.S)


def chapter_minutes() -> dict[str, int]:
    """Each chapter's reading time, from its card."""
    minutes = {}
    for path in CHAPTERS:
        nb = nbformat.read(path, as_version=4)
        card = next(c for c in nb.cells if c.get("id") == "chapter-card")
        minutes[path.stem] = int(CARD.fullmatch(card.source.strip()).group("minutes"))
    return minutes


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_each_chapter_opens_with_what_it_teaches_its_time_and_what_it_assumes(path):
    nb = nbformat.read(path, as_version=4)
    ids = [c.get("id") for c in nb.cells]
    assert "chapter-card" in ids, "no chapter card"
    assert ids.index("chapter-card") == ids.index("run-it-yourself") + 1
    match = CARD.fullmatch(nb.cells[ids.index("chapter-card")].source.strip())
    assert match, "the card is not in the course's form (tests/test_lesson_structure.py CARD)"
    assert 3 <= match.group("items").count("\n- ") + 1 <= 5
    assert 10 <= int(match.group("minutes")) <= 90


def test_the_reading_paths_add_up_to_the_chapters_times():
    minutes = chapter_minutes()
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    paths = re.findall(r"^.*\((\d+) min\).*$", intro, re.M)
    assert len(paths) >= 3, "the home page gives at least three reading paths with times"
    for line in re.findall(r"^.*\(\d+ min\).*$", intro, re.M):
        total = int(re.search(r"\((\d+) min\)", line).group(1))
        # the path's chapters: the links in its line and the list right under it
        block = intro[intro.index(line):].split("\n\n", 2)
        chapters = set(re.findall(r"\((\d\d_[a-z0-9_]+)\.(?:ipynb|md)\)",
                                  line + "\n" + "\n".join(block[:2])))
        assert chapters, f"a path lists no chapters: {line!r}"
        assert sum(minutes[c] for c in chapters) == total, line
    core = re.search(r"^.*\((\d+) min\).*$", intro, re.M)
    assert 150 <= int(core.group(1)) <= 210, "the first path is the ~3-hour core path"


def test_no_page_mentions_notes_the_reader_never_sees():
    pages = [*CHAPTERS, *(ROOT / "book").glob("*.md")]
    pattern = re.compile(r"source notes|notes (?:this|the) course|course grew from|"
                         r"the notes'", re.I)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not pattern.search(text), (page.name, pattern.search(text).group(0))
