"""A chapter in JupyterLab, driven the way a reader does it (shared by test_lab.py, the
`make lab` path, and test_download.py, the one-chapter path): open, run all, save, reopen,
move a slider, answer the questions; and everything the page did on the way."""

from __future__ import annotations

import json

from .conftest import TOKEN

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
# What the first slider figure shows: its frame, or a live figure's (posenc-live.js) title and
# the number of times it has drawn
JS_FIRST_SLIDER_FRAME = """
() => {
  const first = document.querySelector('.jp-OutputArea-output .posenc-live, '
      + '.jp-OutputArea-output .widget-vbox .widget-slider');
  if (!first) return null;
  if (first.classList.contains('posenc-live')) {
    const canvas = first.querySelector('canvas[role=img]');
    return canvas && first.dataset.draws
      ? 'live: ' + first.querySelector('.posenc-live-title').textContent : null;
  }
  const box = first.closest('.widget-vbox');
  const img = [...box.querySelectorAll('img')].find(i => i.offsetParent !== null);
  return img ? img.src.slice(-120) : null;
}
"""
# ipywidgets' red broken-link mark, where it is drawn: its pseudo-element has content
JS_DISCONNECTED_MARKS = """
() => [...document.querySelectorAll('.jupyter-widgets-disconnected')]
  .filter(e => !['none', 'normal', ''].includes(getComputedStyle(e, '::before').content)).length
"""


class Opened:
    """One notebook open in a browser page, with its console messages and requests."""

    def __init__(self, browser, lab, name):
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.console, self.errors, self.requests = [], [], []
        self.page.on("console", lambda m: self.console.append((m.type, m.text)))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.lab = lab
        self.page.goto(f"{lab.url}/lab/tree/{name}?token={TOKEN}")
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
        self.page.wait_for_function("window.jupyterapp && window.jupyterapp.commands",
                                    timeout=30_000)

    def command(self, name, args=None):
        self.page.evaluate("([c, a]) => window.jupyterapp.commands.execute(c, a)",
                           [name, args or {}])

    def run_all(self):
        self.page.evaluate(JS_KERNEL_READY)
        self.command("notebook:run-all-cells")
        self.page.wait_for_function(JS_ALL_RAN, timeout=300_000, polling=500)

    def save(self, path):
        """Save, wait until written; the saved notebook's JSON."""
        self.command("docmanager:save")
        self.page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')",
                                    timeout=20_000)
        return json.loads(path.read_text())

    def move_first_slider(self):
        """Press → on the first slider (a frame figure's or a live figure's); waits until its
        figure changes."""
        before = self.page.evaluate(JS_FIRST_SLIDER_FRAME)
        assert before, "no slider figure rendered"
        live = before.startswith("live: ")
        handle = self.page.locator(".jp-OutputArea-output .posenc-live input[type=range]"
                                   if live else ".jp-OutputArea-output .widget-slider "
                                   ".noUi-handle").first
        handle.scroll_into_view_if_needed()
        handle.focus()
        self.page.keyboard.press("ArrowRight")
        self.page.wait_for_function(
            f"() => ({JS_FIRST_SLIDER_FRAME})() !== {json.dumps(before)}", timeout=10_000)

    def foreign_requests(self):
        return [u for u in self.requests if not u.startswith(self.lab.url)
                and not u.startswith(("data:", "blob:"))]

    def console_problems(self):
        """Console errors, and the widget manager's version warnings (a mismatched build)."""
        return [t for kind, t in self.console
                if kind == "error" or "Unsatisfied version" in t] + self.errors

    def close(self):
        self.page.close()


def shut_down_kernels(lab):
    for session in lab.api("sessions"):  # reopening then starts with no kernel attached
        lab.api(f"sessions/{session['id']}", method="DELETE")


def reopen_and_move_a_slider(browser, lab, name):
    """Open a saved chapter again, no kernel running: sliders render, move, and carry no
    "disconnected" mark. Returns the page (still open)."""
    shut_down_kernels(lab)
    again = Opened(browser, lab, name)
    again.page.wait_for_function(f"() => ({JS_FIRST_SLIDER_FRAME})() !== null", timeout=60_000)
    assert "Error displaying widget" not in again.page.inner_text(".jp-Notebook")
    again.move_first_slider()  # jslink works without a kernel
    assert again.page.evaluate(JS_DISCONNECTED_MARKS) == 0
    return again


def answer_the_questions(opened, chapter, theme):
    """Every question answered wrong then right in the given JupyterLab theme; contrast
    failures (site/posenc_site/quizcheck.py) returned."""
    from posenc_site.quizcheck import answer_wrong_then_right

    from posenc.course.selfcheck import correct_answer, questions

    name = "JupyterLab Dark" if theme == "dark" else "JupyterLab Light"
    opened.command("apputils:change-theme", {"theme": name})
    opened.page.wait_for_function(
        f"() => document.body.dataset.jpThemeLight === '{str(theme == 'light').lower()}'",
        timeout=20_000)
    failures = []
    for i, q in enumerate(questions(chapter)):
        quiz = opened.page.locator(".jp-Notebook .Quiz").nth(i)
        quiz.wait_for(timeout=10_000)
        failures += answer_wrong_then_right(opened.page, quiz, q, correct_answer(q))
    return failures
