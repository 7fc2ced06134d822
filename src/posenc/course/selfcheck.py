"""Self-check questions at the end of each chapter, shown with ``jupyterquiz``.

Each chapter's last cell is ``show_questions("02_sinusoidal")``: five to eight quick
questions a reader answers on the page (multiple choice, or a number typed in and
Enter pressed) with immediate feedback. ``jupyterquiz`` embeds the questions and its
own JavaScript in the cell output, so they work offline on the static site and in
Jupyter alike. Every number in a question or an answer is computed from ``posenc``
(never typed in), so the questions stay true when the library changes.

This module is the notebooks' entry; it puts together what lives apart:

* :mod:`posenc.course.questions` -- the questions, one module per chapter, each with a
  stable id (``"rope.pairs-under-one-turn"``, :func:`question`);
* :mod:`posenc.course.quiz` -- how jupyterquiz draws them (HTML, script, colours);
* :mod:`posenc.course.i18n` -- their Chinese, from the table keyed by the English text.
"""

from __future__ import annotations

from .i18n import marked, output_languages, translate
from .questions import CHAPTERS, correct_answer, question, question_ids, questions
from .quiz import QUIZ_COLORS, QUIZ_UI, inline, render

__all__ = ["CHAPTERS", "questions", "question", "question_ids", "translated_questions",
           "show_questions", "quiz_html", "correct_answer", "QUIZ_COLORS", "QUIZ_UI"]


def translated_questions(chapter: str, lang: str = "en") -> list[dict]:
    """:func:`questions` with every question, answer and feedback in ``lang``
    (:func:`posenc.course.i18n.translate`); ids and numbers as they are."""
    def walk(node, key=None):
        if isinstance(node, dict):
            return {k: walk(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        if isinstance(node, str) and key in ("question", "answer", "feedback"):
            return translate(node, lang)
        return node

    return walk(questions(chapter))


def quiz_html(chapter: str, lang: str = "en") -> tuple[str, str]:
    """``chapter``'s questions as jupyterquiz draws them: (HTML with its styles, JavaScript),
    in ``lang`` (:func:`posenc.course.quiz.render`; the quiz's id comes from the chapter)."""
    return render(translated_questions(chapter, lang), chapter, lang)


def show_questions(chapter: str) -> None:
    """Display ``chapter``'s questions (the last cell of each chapter)."""
    from IPython.display import HTML, Javascript, display

    langs = output_languages()
    if len(langs) == 1:
        html, script = quiz_html(chapter, langs[0])
        display(HTML(html))
        display(Javascript(script))
        return
    # the site's build: one output holding every language's quiz, each with its script
    display(HTML(marked({lang: inline(*quiz_html(chapter, lang)) for lang in langs})))
