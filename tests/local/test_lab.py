"""JupyterLab as a reader meets it after `make lab`: run a chapter, move a slider, open a
solution, answer the questions, save, restart and reopen. Headless Chromium against a
server on 127.0.0.1."""

from __future__ import annotations

import json
import shutil

import pytest

from .conftest import BOOK
from .labpage import Opened, answer_the_questions, reopen_and_move_a_slider

CHAPTER = "06_alibi.ipynb"  # sliders and exercises, and quick to run


@pytest.fixture(scope="module")
def chapter(lab, browser):
    shutil.copy(BOOK / CHAPTER, lab.folder / CHAPTER)
    opened = Opened(browser, lab, CHAPTER)
    opened.run_all()
    yield opened
    opened.close()


def test_every_cell_runs_without_an_error(chapter):
    errors = chapter.page.locator(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")
    assert errors.count() == 0, errors.first.inner_text()[:2000]
    assert "Error displaying widget" not in chapter.page.inner_text(".jp-Notebook")


def test_a_slider_moves_its_figure(chapter):
    chapter.move_first_slider()


def test_exercises_render_and_solutions_stay_hidden_until_clicked(chapter):
    page = chapter.page
    notebook = page.inner_text(".jp-Notebook")
    for raw in ("```{exercise}", ":label:", ":class: dropdown", ":::{admonition}"):
        assert raw not in notebook, f"raw MyST shown: {raw}"
    solution = page.locator("details.myst-exercise", has_text="Solution to").first
    solution.scroll_into_view_if_needed()
    assert solution.get_attribute("open") is None
    body = solution.locator(":scope > :not(summary)").first
    assert not body.is_visible()
    solution.locator("summary").click()
    assert body.is_visible()
    assert page.locator(".myst .katex").count() > 0  # math typeset (jupyterlab-myst: KaTeX)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_questions_answer_and_stay_readable(chapter, theme):
    assert answer_the_questions(chapter, CHAPTER.removesuffix(".ipynb"), theme) == []


def test_no_foreign_request_no_console_error_no_news(chapter):
    assert chapter.foreign_requests() == []  # jupyterquiz's MathJax CDN included
    assert chapter.console_problems() == []
    assert "Jupyter news" not in chapter.page.inner_text("body")


def test_saved_notebook_reopens_with_working_sliders(chapter, lab, browser):
    saved = chapter.save(lab.folder / CHAPTER)
    assert saved["metadata"].get("widgets"), "widget state was not saved with the notebook"
    committed = json.loads((BOOK / CHAPTER).read_text())["metadata"]["kernelspec"]
    assert saved["metadata"]["kernelspec"] == committed  # a save leaves git status clean
    again = reopen_and_move_a_slider(browser, lab, CHAPTER)
    assert again.console_problems() == [] and again.foreign_requests() == []
    again.close()
