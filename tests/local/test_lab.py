"""JupyterLab as a reader meets it after `make lab`: run a chapter, move a slider, open a
solution, save, restart and reopen. Headless Chromium against a server on 127.0.0.1."""

from __future__ import annotations

import json
import shutil

import pytest

from .conftest import BOOK, TOKEN

CHAPTER = "06_alibi.ipynb"  # sliders and exercises, and quick to run

# The open notebook's kernel is idle and every code cell has an execution count.
JS_ALL_RAN = """
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (!kernel || kernel.status !== 'idle') return false;
  const cells = panel.content.model.cells;
  let code = 0;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== 'code') continue;
    code += 1;
    if (cell.executionCount === null) return false;
  }
  return code > 0;
}
"""
JS_KERNEL_READY = """
async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
  return panel.sessionContext.session.kernel.status;
}
"""
JS_FIRST_SLIDER_FRAME = """
() => {
  const box = [...document.querySelectorAll('.jp-OutputArea-output .widget-vbox')]
      .find(b => b.querySelector('.widget-slider'));
  if (!box) return null;
  const img = [...box.querySelectorAll('img')].find(i => i.offsetParent !== null);
  return img ? img.src.slice(-120) : null;
}
"""


def open_notebook(browser, lab, name):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{lab.url}/lab/tree/{name}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    page.wait_for_function("window.jupyterapp && window.jupyterapp.commands", timeout=30_000)
    return page


def run(page, command):
    page.evaluate(f"window.jupyterapp.commands.execute('{command}')")


@pytest.fixture(scope="module")
def chapter(lab, browser):
    shutil.copy(BOOK / CHAPTER, lab.folder / CHAPTER)
    page = open_notebook(browser, lab, CHAPTER)
    page.evaluate(JS_KERNEL_READY)
    run(page, "notebook:run-all-cells")
    page.wait_for_function(JS_ALL_RAN, timeout=180_000, polling=500)
    yield page
    page.close()


def test_every_cell_runs_without_an_error(chapter):
    errors = chapter.locator(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")
    assert errors.count() == 0, errors.first.inner_text()[:2000]
    assert "Error displaying widget" not in chapter.inner_text(".jp-Notebook")


def test_a_slider_moves_its_figure(chapter):
    before = chapter.evaluate(JS_FIRST_SLIDER_FRAME)
    assert before, "no slider figure rendered"
    handle = chapter.locator(".jp-OutputArea-output .widget-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    chapter.keyboard.press("ArrowRight")
    chapter.wait_for_function(f"() => ({JS_FIRST_SLIDER_FRAME})() !== {json.dumps(before)}",
                              timeout=10_000)


def test_exercises_render_and_solutions_stay_hidden_until_clicked(chapter):
    notebook = chapter.inner_text(".jp-Notebook")
    for raw in ("```{exercise}", ":label:", ":class: dropdown", ":::{admonition}"):
        assert raw not in notebook, f"raw MyST shown: {raw}"
    solution = chapter.locator("details.myst-exercise", has_text="Solution to").first
    solution.scroll_into_view_if_needed()
    assert solution.get_attribute("open") is None
    body = solution.locator(":scope > :not(summary)").first
    assert not body.is_visible()
    solution.locator("summary").click()
    assert body.is_visible()
    assert chapter.locator(".myst .katex").count() > 0  # math typeset (jupyterlab-myst: KaTeX)


def test_saved_notebook_reopens_with_working_sliders(chapter, lab, browser):
    run(chapter, "docmanager:save")
    path = lab.folder / CHAPTER
    chapter.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=20_000)
    saved = json.loads(path.read_text())
    assert saved["metadata"].get("widgets"), "widget state was not saved with the notebook"
    for session in lab.api("sessions"):  # shut the kernel down: reopening starts a new one
        lab.api(f"sessions/{session['id']}", method="DELETE")
    chapter.close()

    page = open_notebook(browser, lab, CHAPTER)
    page.wait_for_function(f"() => ({JS_FIRST_SLIDER_FRAME})() !== null", timeout=60_000)
    assert "Error displaying widget" not in page.inner_text(".jp-Notebook")
    before = page.evaluate(JS_FIRST_SLIDER_FRAME)
    handle = page.locator(".jp-OutputArea-output .widget-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    page.keyboard.press("ArrowRight")  # jslink works without a kernel
    page.wait_for_function(f"() => ({JS_FIRST_SLIDER_FRAME})() !== {json.dumps(before)}",
                           timeout=10_000)
    page.close()
