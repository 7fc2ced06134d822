"""Self-check questions drawn with ``jupyterquiz``: its HTML and script, patched for the course.

``jupyterquiz`` embeds the questions and its own JavaScript in a cell's output, so they work
offline on the static site and in Jupyter alike. :func:`render` draws a list of questions
(:mod:`posenc.course.questions`, already in the page's language) with the course's colours
(:data:`QUIZ_COLORS`) and ``course.css``, and puts jupyterquiz's own words
(:data:`QUIZ_UI`) in that language.
"""

from __future__ import annotations

import json
import re

from .i18n import translate

__all__ = ["QUIZ_COLORS", "QUIZ_UI", "render", "inline"]

#: jupyterquiz's colours; with course.css every text/background pair is at least 4.5:1 (WCAG AA)
#: in both themes. The question sits on dark blue in white; a chosen answer turns dark green
#: (right) or dark red (wrong) under white text, and the feedback line is written in those
#: colours on the quiz's light card.
QUIZ_COLORS = {
    "--jq-multiple-choice-bg": "#1f4e79",
    "--jq-mc-button-bg": "#fafafa",
    "--jq-mc-button-border": "#767676",
    "--jq-mc-button-inset-shadow": "#555555",
    "--jq-many-choice-bg": "#1f4e79",
    "--jq-numeric-bg": "#1f4e79",
    "--jq-numeric-input-bg": "#ffffff",
    "--jq-numeric-input-label": "#1a1a1a",
    "--jq-numeric-input-shadow": "#767676",
    "--jq-string-bg": "#1f4e79",
    "--jq-incorrect-color": "#a4001d",
    "--jq-correct-color": "#1e6b24",
    "--jq-text-color": "#ffffff",
    "--jq-link-color": "#cfe3ff",
}

#: What jupyterquiz's script itself writes on the page (a label, default feedback).
QUIZ_UI = ("Type numeric answer here:", "Type your answer here:", "Correct!",
           "Incorrect -- try again.", "Incorrect. Try again.")


def render(questions: list[dict], name: str, lang: str = "en") -> tuple[str, str]:
    """``questions`` as jupyterquiz draws them: (HTML with its styles, JavaScript), on a page
    in ``lang``; ``name`` (the chapter) gives the quiz its id.

    What ``jupyterquiz.display_quiz`` would display, with three changes: the course's
    ``course.css`` (contrast in both themes; in JupyterLab, no "disconnected" mark on the
    kernel-free sliders) is added to the styles; the quiz's id comes from ``name`` and
    ``lang`` (a rebuilt page is the same page); and the script cannot load MathJax from a
    CDN. jupyterquiz typesets with a page's MathJax 3 when it finds one, but where
    ``window.MathJax`` exists without ``typeset`` (JupyterLab's) it overwrites it and fetches
    MathJax from jsDelivr, a request to another origin that fails offline and then throws.
    The questions use no TeX, so the script gets a ``MathJax`` of its own: the page's when it
    can typeset, else none; and the fetch line is cut out as well.

    A question's ``id`` is the course's name for it, not jupyterquiz's: it is left out of the
    page.
    """
    from importlib.resources import files

    from jupyterquiz.dynamic.loader import load_questions_script
    from jupyterquiz.dynamic.renderer import build_script, build_styles, render_div

    qs = [{key: value for key, value in q.items() if key != "id"} for q in questions]
    div_id = "posencQuiz" + "".join(c for c in name if c.isalpha())  # a JS identifier too
    div_id += "" if lang == "en" else lang
    prefix, static, url = load_questions_script(qs, div_id)
    div = render_div(div_id, False, False, False, 1_000_000, 700, 10, "left")
    css = files(__package__).joinpath("course.css").read_text(encoding="utf-8")
    html = (f'<div class="posenc-quiz">{div}</div></div>'
            f"{build_styles(div_id, QUIZ_COLORS)}<style>{css}</style>")
    script = re.sub(r"script\.src\s*=\s*'[^']*';", "return;", build_script(prefix, static, url,
                                                                        div_id, True))
    for ui in QUIZ_UI if lang != "en" else ():  # jupyterquiz's own words, in its script
        script = script.replace(json.dumps(ui), json.dumps(translate(ui, lang), ensure_ascii=False))
    script = ("(function (MathJax) {\n" + script + "\n})(typeof MathJax !== 'undefined' && "
              "typeof MathJax.typeset === 'function' ? MathJax : undefined);\n")
    return html, script


def inline(html: str, script: str) -> str:
    """One quiz of :func:`render` as a single piece of HTML, its script inside (the site's
    build, where one output holds every language's quiz)."""
    script = script.replace("</script", "<\\/script")
    return f'{html}<script type="text/javascript">{script}</script>'
