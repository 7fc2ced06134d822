"""The course layer in two languages: figure text, slider labels and self-check questions.

The chapters' prose is translated by Sphinx's gettext catalogues (``locale/``,
``site/i18n.py``). What the notebooks *draw* cannot be: a figure's title, axis labels and
legend, a slider's label and a question are made by Python at execution. They are
translated here, from one table, ``locale/zh.json`` beside this module:

* ``phrases``: English phrase -> Chinese. A text is translated by replacing every phrase
  it contains outside inline math (``$...$``), longest first, on word boundaries; what the
  table does not name (numbers, symbols, ``d_model=64``, method names) stays as it is. So
  one entry, ``"PE heatmap"``, serves the title of every frame
  ``"PE heatmap: d_model=64, base=10000"``.
* ``latin``: the words that stay in Latin script in Chinese text (RoPE, ALiBi, YaRN ...).

A translated text that still holds an English word outside these (:func:`leftover_english`)
is *untranslated*: the site's build records it (:data:`MISSING_ENV`) and the Chinese build
fails, listing it, just as it fails on an untranslated paragraph.

Which language a notebook draws in:

* In Jupyter, one: :func:`set_language` (the Chinese notebooks' first cell calls it) or the
  environment variable :data:`LANGUAGE_ENV`; English by default.
* In the site's build, both (:data:`BUILD_ENV` = ``"en,zh"``, set by
  ``site/execute_notebooks.py``): each figure, slider and quiz carries both editions'
  versions, marked with :func:`marked` (HTML) or in the output's metadata (static figures),
  and each edition's pages keep their own (``site/posenc_site.py``). Notebooks are executed
  once for both languages.

Chinese figure text is drawn in the first CJK font matplotlib finds of :data:`CJK_FONTS`
(the site's build uses Debian's ``fonts-wqy-microhei``); Latin text keeps the course's font.
"""

from __future__ import annotations

import json
import os
import re
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from matplotlib.ticker import Formatter

from .figures.fonts import CJK_FONTS, cjk_font

__all__ = ["LANGUAGES", "BUILD_ENV", "LANGUAGE_ENV", "MISSING_ENV", "SEEN_ENV", "CJK_FONTS",
           "set_language", "language", "output_languages", "translate", "leftover_english",
           "marked", "keep_language", "translated_figure", "cjk_font"]

#: The course's languages: English (the source) and Simplified Chinese.
LANGUAGES = ("en", "zh")
#: ``"en,zh"`` in the site's build: every output carries both languages.
BUILD_ENV = "POSENC_LANGUAGES"
#: The one language a notebook draws in when run on its own (default ``en``).
LANGUAGE_ENV = "POSENC_LANGUAGE"
#: A file the build appends every untranslated text to (one per line), if set.
MISSING_ENV = "POSENC_I18N_MISSING"
#: A file the build appends every text it translates to (one per line), if set: a change to
#: the table is then checked against every text of the course without executing a notebook
#: again (``site/i18n.py retranslate``).
SEEN_ENV = "POSENC_I18N_SEEN"
TABLE = Path(__file__).with_name("locale") / "zh.json"

_chosen: str | None = None
_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# what is not prose: inline math, identifiers (d_model, head_dim=64), words glued to digits
_NOT_PROSE = re.compile(r"\$[^$]*\$|\b\w*[_\d]\w*\b|\b\w+(?==)")
_WORD = re.compile(r"[A-Za-z]{2,}")
_MATH = re.compile(r"(\$[^$]*\$)")  # split() keeps each inline formula as an odd part


def _check_language(lang: str, name: str = "lang") -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"{name} must be one of {LANGUAGES}, got {lang!r}")
    return lang


def set_language(lang: str) -> None:
    """Draw this notebook's figures, sliders and questions in ``lang`` (``"en"``/``"zh"``)."""
    global _chosen
    _chosen = _check_language(lang)


def language() -> str:
    """The language a notebook run on its own draws in (:func:`set_language`, else
    :data:`LANGUAGE_ENV`, else English)."""
    return _chosen or _check_language(os.environ.get(LANGUAGE_ENV) or "en", LANGUAGE_ENV)


def output_languages() -> tuple[str, ...]:
    """The languages each output carries: both in the site's build, else :func:`language`."""
    both = os.environ.get(BUILD_ENV, "")
    if both:
        return tuple(_check_language(x.strip(), BUILD_ENV) for x in both.split(","))
    return (language(),)


@lru_cache(maxsize=1)
def _table() -> tuple[re.Pattern | None, dict[str, str], frozenset[str], re.Pattern | None]:
    """The phrases as two patterns, longest first: those without math (applied outside
    inline math only) and whole labels with math in them (applied to the whole text)."""
    data = json.loads(TABLE.read_text(encoding="utf-8")) if TABLE.exists() else {}
    phrases = data.get("phrases", {})

    def pattern(keys):
        keys = sorted(keys, key=len, reverse=True)
        return re.compile("|".join(rf"(?<![A-Za-z]){re.escape(k)}(?![A-Za-z])"
                                   for k in keys)) if keys else None

    return (pattern(k for k in phrases if "$" not in k), phrases,
            frozenset(data.get("latin", [])), pattern(k for k in phrases if "$" in k))


def translate(text: str, lang: str, *, record: bool = True) -> str:
    """``text`` in ``lang``: English as it is; Chinese by the table's phrases (see the module
    docstring). An untranslated Chinese result is appended to :data:`MISSING_ENV`'s file
    when that is set and ``record``."""
    _check_language(lang)
    if lang == "en" or not text:
        return text
    pattern, phrases, _, with_math = _table()

    def replace(m):
        return phrases[m.group(0)]

    # whole labels that contain math first; then the other phrases, never inside inline
    # math: "$A_0 = I$" keeps its I (the table's "I" is the pronoun)
    out = with_math.sub(replace, text) if with_math else text
    out = "".join(part if i % 2 or not pattern else pattern.sub(replace, part)
                  for i, part in enumerate(_MATH.split(out)))
    # no space beside full-width punctuation ("正确。 注意力" -> "正确。注意力")
    out = re.sub(r"(?<=[，。：；？！）（、])[ ]+|[ ]+(?=[，。：；？！）（、])", "", out)
    if record:
        _record(text, SEEN_ENV)
        if leftover_english(out):
            _record(text, MISSING_ENV)
    return out


def leftover_english(text: str) -> list[str]:
    """The English words in a would-be Chinese ``text``: words of two or more Latin letters
    outside inline math and identifiers that the table's ``latin`` list does not allow."""
    _, _, latin, _ = _table()
    return [w for w in _WORD.findall(_NOT_PROSE.sub(" ", text)) if w not in latin]


def _record(text: str, env: str) -> None:
    path = os.environ.get(env)
    if path:
        with open(path, "a", encoding="utf-8") as f:  # one write: safe beside another kernel
            f.write(json.dumps(text, ensure_ascii=False) + "\n")


_MARK = "<!--posenc:{}-->"
_END = "<!--/posenc:{}-->"


def marked(versions: dict[str, str]) -> str:
    """One HTML output for several languages: each ``versions[lang]`` between markers that
    :func:`keep_language` reads. A single language is returned as it is, unmarked."""
    if len(versions) == 1:
        return next(iter(versions.values()))
    return "".join(_MARK.format(lang) + body + _END.format(lang)
                   for lang, body in versions.items())


def keep_language(html: str, lang: str) -> str:
    """``html`` with every :func:`marked` version of another language removed, and the markers
    of ``lang``'s own (what each edition's pages keep)."""
    _check_language(lang)
    for other in LANGUAGES:
        start, end = re.escape(_MARK.format(other)), re.escape(_END.format(other))
        if other == lang:
            html = re.sub(f"{start}|{end}", "", html)
        else:
            html = re.sub(f"{start}.*?{end}", "", html, flags=re.S)
    return html


@contextmanager
def translated_figure(fig, lang: str):
    """Within the block, every text of ``fig`` reads in ``lang``, Chinese characters in the
    CJK font; afterwards the figure is as it was.

    Tick labels (``set_yticklabels``, ``set_ticks(labels=...)``) are written by their axis'
    formatter at every draw, so each formatter is wrapped in one that translates what it
    writes (:class:`_TranslatedTicks`)."""
    from matplotlib.text import Text

    _check_language(lang)
    if lang == "en":
        yield fig
        return
    import matplotlib as mpl

    font = cjk_font()
    texts, formatters, mixed = [], [], []
    # tick labels written from strings (not numbers): they get their Chinese at draw time
    worded = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            saved = (axis.get_major_formatter(), axis.get_minor_formatter(),
                     axis.isDefault_majfmt, axis.isDefault_minfmt)
            formatters.append((axis, saved))
            axis.set_major_formatter(_TranslatedTicks(saved[0], lang))
            axis.set_minor_formatter(_TranslatedTicks(saved[1], lang))
            if type(saved[0]).__name__ in ("FuncFormatter", "FixedFormatter"):
                worded.update(id(t) for t in axis.get_ticklabels(which="both"))
    for text in fig.findobj(Text):
        texts.append((text, text.get_text(), text.get_fontfamily()))
        if text.get_text().strip():
            text.set_text(translate(text.get_text(), lang))
        # the CJK font behind the text's own (Latin glyphs keep theirs); never on numbers and
        # math, where matplotlib's math fonts would look for it
        if font and (_CJK.search(text.get_text()) or id(text) in worded):
            text.set_fontfamily([*text.get_fontfamily(), font])
            if "$" in text.get_text():  # math and Chinese in one text: see _mixed_rc
                mixed.append((text, text.get_fontproperties().get_math_fontfamily()))
                text.set_fontfamily([font, *text.get_fontfamily()])
                text.set_math_fontfamily("custom")
    try:
        with mpl.rc_context(_mixed_rc(font) if mixed else {}):
            yield fig
    finally:
        for text, math_family in mixed:
            text.set_math_fontfamily(math_family)
        for text, english, family in texts:
            text.set_text(english)
            text.set_fontfamily(family)
        for axis, (major, minor, default_major, default_minor) in formatters:
            axis.set_major_formatter(major)
            axis.set_minor_formatter(minor)
            axis.isDefault_majfmt, axis.isDefault_minfmt = default_major, default_minor


def _mixed_rc(font: str) -> dict:
    """A text with math in it is drawn by matplotlib's math renderer, words included, in the
    text's first font alone (no fallback), and its math in the math font set's. Such a text
    gets the CJK font first (it has Latin letters too) and the ``custom`` set: roman in the
    CJK font, the math in DejaVu Sans as the course's other math."""
    return {"mathtext.rm": font, "mathtext.sf": font, "mathtext.it": "DejaVu Sans:italic",
            "mathtext.bf": "DejaVu Sans:bold", "mathtext.tt": "DejaVu Sans Mono",
            "mathtext.cal": "DejaVu Sans",
            "mathtext.fallback": "stixsans"}


class _TranslatedTicks(Formatter):
    """An axis formatter that writes what ``inner`` writes, in ``lang``."""

    def __init__(self, inner, lang):
        self.inner, self.lang = inner, lang

    def set_axis(self, axis):
        super().set_axis(axis)
        self.inner.set_axis(axis)

    def set_locs(self, locs):
        self.inner.set_locs(locs)

    def format_ticks(self, values):
        return [translate(s, self.lang) for s in self.inner.format_ticks(values)]

    def __call__(self, x, pos=None):
        return translate(self.inner(x, pos), self.lang)

    def get_offset(self):
        return translate(self.inner.get_offset(), self.lang)

    def format_data(self, value):
        return self.inner.format_data(value)

    def format_data_short(self, value):
        return self.inner.format_data_short(value)
