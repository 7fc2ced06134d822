"""The self-check questions checked in a browser: the same steps on the site (tests/browser)
and in JupyterLab (tests/local). A reader answers one question wrong, then right, and
reads the feedback; every text the quiz shows must meet WCAG AA contrast (4.5:1) and the
answer box's outline 3:1 (WCAG 1.4.11), measured from the colours the browser computed.
"""

from __future__ import annotations

# Contrast of what a reader must read or find in one .Quiz box, from computed styles: the
# background is the first opaque one up the tree (the quiz card, or the page).
JS_QUIZ_CONTRAST = """
(quiz) => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = c => {
    const l = c.slice(0, 3).map(v => v / 255)
      .map(v => v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  };
  const ratio = (a, b) => {
    const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const background = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.99)) return c;
    }
    return [255, 255, 255];
  };
  const out = [];
  const text = (what, el) => {
    if (!el || el.offsetParent === null || !el.textContent.trim() && el.tagName !== 'INPUT')
      return;
    out.push({what, ratio: ratio(rgb(getComputedStyle(el).color), background(el)),
              need: 4.5, color: getComputedStyle(el).color,
              background: getComputedStyle(el).backgroundColor});
  };
  text('question', quiz.querySelector('[id^=quizQn]'));
  text('label', quiz.querySelector('.InpLabel'));
  const input = quiz.querySelector('input.Input-text');
  if (input) {
    text('typed digits', input);
    const around = background(input.parentElement);
    const border = rgb(getComputedStyle(input).borderTopColor);
    const width = parseFloat(getComputedStyle(input).borderTopWidth);
    // the box must be findable: an outline of 3:1 against what surrounds it, or a fill that is
    out.push({what: 'answer box outline', need: 3,
              ratio: Math.max(width > 0 ? ratio(border, around) : 1,
                              ratio(background(input), around))});
  }
  quiz.querySelectorAll('.MCButton').forEach((b, i) => text(`choice ${i}`, b));
  text('feedback', quiz.querySelector('.Feedback'));
  return out;
}
"""


def low_contrast(page, quiz) -> list[dict]:
    """The parts of the quiz box ``quiz`` (a locator) below their contrast threshold."""
    return [c for c in quiz.evaluate(JS_QUIZ_CONTRAST) if c["ratio"] < c["need"]]


def answer_wrong_then_right(page, quiz, question, correct,
                            feedback=("Not quite.", "Correct.")) -> list[dict]:
    """Answer ``question`` (shown in the .Quiz ``quiz``) wrong, then right (``correct``).

    Checks the feedback text each time and returns every contrast failure seen on the way
    (before answering, after the wrong answer, after the right one). ``feedback``: how the
    wrong and the right answer's feedback begin (in the page's language)."""
    failures = low_contrast(page, quiz)
    if question["type"] == "numeric":
        field = quiz.locator("input")
        field.scroll_into_view_if_needed()
        field.click()
        field.press_sequentially("123456789")  # typed, as a reader does
        field.press("Enter")
    else:
        wrong = next(a["answer"] for a in question["answers"] if not a.get("correct"))
        quiz.locator("label", has_text=wrong).first.click()
    bad = quiz.locator(".Feedback.incorrect")
    bad.wait_for(state="visible", timeout=5000)
    assert bad.inner_text().startswith(feedback[0]), bad.inner_text()
    failures += low_contrast(page, quiz)
    if question["type"] == "numeric":
        field.click()
        field.press_sequentially(f"{correct:g}")
        field.press("Enter")
    else:
        quiz.locator("label", has_text=correct).first.click()
    good = quiz.locator(".Feedback.correct")
    good.wait_for(state="visible", timeout=5000)
    assert good.inner_text().startswith(feedback[1]), good.inner_text()
    failures += low_contrast(page, quiz)
    return failures
