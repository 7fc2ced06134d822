"""The course layer in two languages: figure text, slider labels and self-check questions.

The chapters' prose is translated by Sphinx's gettext catalogues (``locale/``,
:mod:`posenc_site.i18n`). What the notebooks *draw* cannot be: a figure's title, axis labels
and legend, a slider's label and a question are made by Python at execution. They are
translated here, from one table, ``locale/zh.json`` beside this module:

* ``phrases``: English phrase (more than one word) -> Chinese. A text is translated by
  replacing every phrase it contains outside inline math (``$...$``), the longest first,
  on word boundaries; what the table does not name (numbers, symbols, ``d_model=64``)
  stays as it is. So one entry, ``"PE heatmap"``, serves the title of every frame
  ``"PE heatmap: d_model=64, base=10000"``. A phrase may be a whole label with slots:
  ``{}`` for a number, ``{w}`` for a name, e.g. ``"{w}: {} unseen"`` -> ``"{}：{} 对未见过"``
  (``{w}`` is translated as a label: ``ntk`` -> ``NTK``).
* ``labels``: one word -> Chinese, used only when it is the *whole* text (a legend entry, a
  tick label, a slider's value: ``learned`` -> ``可学习``). A one-word phrase would be
  replaced inside every text that holds it (``of`` in ``column 2i of the pair``), so the
  table refuses one.
* ``examples``: the tokens of the course's example sentences (``I love you``, CoPE's
  ``He was late .``), which the course quotes as they are in both editions: prose, figure,
  output and exercise agree. A tick label made of them, or a quoted run of them
  (``"I love you"``), stays English and is not untranslated.
* ``latin``: the words that stay in Latin script in Chinese text (RoPE, ALiBi, YaRN ...).
* ``interface``: the site theme's strings its own Chinese catalogue lacks (:func:`interface_text`).

Half-width ``:``, ``,``, ``;``, ``?`` beside Chinese text become full-width, and so do
parentheses around Chinese (not a function's: ``cos(角度)``); in a text that holds Chinese,
so does a ``:``, ``,`` or ``;`` followed by a space between two Latin words or numbers
(``T = 32,768: 23 对`` -> ``T = 32,768：23 对``), but not a thousands comma (32,768), a
citation's ``et al.,``, or one inside math, quotes or a bracket that holds no Chinese
(``(16, 24, 24)``).

A translated text that still holds an English word outside these (:func:`leftover_english`)
is *untranslated*: the site's build records it (:data:`MISSING_ENV`) and the Chinese build
fails, listing it, just as it fails on an untranslated paragraph.

Which language a notebook draws in (:func:`output_languages`, from the environment variables
that :mod:`posenc.course.environment` alone reads):

* In Jupyter, one: :func:`set_language` (the Chinese notebooks' first cell calls it) or the
  environment variable :data:`LANGUAGE_ENV`; English by default.
* In the site's build, both (:data:`BUILD_ENV` = ``"en,zh"``, set by
  ``site/posenc_site/execute.py``): each figure, slider and quiz carries both editions'
  versions, marked with :func:`marked` (HTML) or in the output's metadata (static figures),
  and each edition's pages keep their own (``site/posenc_site/pages.py``). Notebooks are executed
  once for both languages.

Chinese figure text is drawn in the first CJK font matplotlib finds of :data:`CJK_FONTS`
(the site's build uses Debian's ``fonts-wqy-microhei``); Latin text keeps the course's font.
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from matplotlib.ticker import Formatter

from . import environment
from .environment import BUILD_ENV, LANGUAGE_ENV, LANGUAGES, MISSING_ENV, SEEN_ENV
from .figures.fonts import CJK_FONTS, cjk_font

__all__ = ["LANGUAGES", "BUILD_ENV", "LANGUAGE_ENV", "MISSING_ENV", "SEEN_ENV", "CJK_FONTS",
           "set_language", "language", "output_languages", "translate", "leftover_english",
           "marked", "keep_language", "interface_text", "translated_figure", "cjk_font"]

# LANGUAGES and the variables BUILD_ENV ("en,zh" in the site's build), LANGUAGE_ENV (a
# notebook's one language), MISSING_ENV and SEEN_ENV (the files the build records the
# untranslated and the translated texts in; ``python -m posenc_site.i18n retranslate``
# checks a change to the table against the seen ones) are posenc.course.environment's.
TABLE = Path(__file__).with_name("locale") / "zh.json"

_chosen: str | None = None
_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
# what is not prose: inline math, identifiers (d_model, head_dim=64), words glued to digits
_NOT_PROSE = re.compile(r"\$[^$]*\$|\b\w*[_\d]\w*\b|\b\w+(?==)")
_WORD = re.compile(r"[A-Za-z]{2,}")
_MATH = re.compile(r"(\$[^$]*\$)")  # split() keeps each inline formula as an odd part


_check_language = environment.check_language


def set_language(lang: str) -> None:
    """Draw this notebook's figures, sliders and questions in ``lang`` (``"en"``/``"zh"``)."""
    global _chosen
    _chosen = _check_language(lang)


def language() -> str:
    """The language a notebook run on its own draws in (:func:`set_language`, else
    :data:`LANGUAGE_ENV`, else English)."""
    return environment.notebook_language(_chosen)


def output_languages() -> tuple[str, ...]:
    """The languages each output carries: both in the site's build, else :func:`language`
    (:func:`posenc.course.environment.languages_to_draw`)."""
    return environment.languages_to_draw(_chosen)


class _Table:
    """``locale/zh.json`` ready to apply (see the module docstring)."""

    def __init__(self, data: dict):
        self.phrases = data.get("phrases", {})
        self.labels = data.get("labels", {})
        self.latin = frozenset(data.get("latin", []))
        self.examples = frozenset(data.get("examples", []))
        self.interface = data.get("interface", {})
        single = sorted(k for k in self.phrases if _is_word(k))
        if single:
            raise ValueError(f"{TABLE.name}: phrases must be more than one word (one word "
                             f"would be replaced inside every text); make these labels: "
                             f"{single}")
        # one pattern for the phrases outside math, the longest first where two start at
        # the same place (a question's whole sentence before the "{} keys" inside it); a
        # phrase may have slots: "{}" a number, "{w}" a name (translated as a label)
        keys = sorted((k for k in self.phrases if "$" not in k), key=len, reverse=True)
        self.slotted = {f"p{i}": _template(k) for i, k in enumerate(keys) if _SLOT.search(k)}
        self.keys = {f"p{i}": k for i, k in enumerate(keys)}
        self.prose = re.compile("|".join(
            f"(?P<p{i}>{self.slotted[f'p{i}'].pattern if f'p{i}' in self.slotted else _literal(k)})"
            for i, k in enumerate(keys))) if keys else None
        self.with_math = _alternatives(k for k in self.phrases if "$" in k)
        # a quoted example made of example tokens only ("He was late .")
        self.quoted = re.compile(r'("|“)([^"“”]+)("|”)')


#: A phrase's slots: ``{}`` a number as the figures print it (12, 1,024, 0.25, −3, 1e-4, 1/2,
#: 2^-0.5), ``{w}`` a name (``alibi``, ``ntk``), which is translated as a label.
_SLOT = re.compile(r"\{w?\}")
_NUMBER = r"([−+-]?\d+(?:,\d{3})*(?:\.\d+)?(?:e[−+-]?\d+)?(?:[/^][−+-]?\d+(?:\.\d+)?)?)"
_NAME = r"([A-Za-z_][\w-]*)"


def _template(key: str) -> re.Pattern:
    pattern = re.escape(key).replace(r"\{w\}", _NAME).replace(r"\{\}", _NUMBER)
    return re.compile(rf"(?<![A-Za-z0-9]){pattern}(?![A-Za-z])")


def _is_word(key: str) -> bool:
    """True for a key that is one word (``"left"``, ``" tokens"``, ``"d_head"``): as a phrase
    it would be replaced inside every text that holds it (``of`` in ``A of B``)."""
    return re.fullmatch(r"[A-Za-z][\w-]*", key.strip()) is not None


def _literal(key: str) -> str:
    """``key`` as a whole word: not inside ``num_heads`` or ``heads2``."""
    before = r"(?<![A-Za-z0-9_])" if re.match(r"\w", key) else ""
    after = r"(?![A-Za-z_])" if re.search(r"\w$", key) else ""  # "rate x" fits "rate x10"
    return before + re.escape(key) + after


def _alternatives(keys) -> re.Pattern | None:
    keys = sorted(keys, key=len, reverse=True)  # the longest phrase wins
    return re.compile("|".join(_literal(k) for k in keys)) if keys else None


@lru_cache(maxsize=1)
def _table() -> _Table:
    return _Table(json.loads(TABLE.read_text(encoding="utf-8")) if TABLE.exists() else {})


def _is_example(text: str, table: _Table) -> bool:
    """True for an example sentence's token or words (``I``, ``[late]``, ``He was late .``):
    the course quotes them as they are, in every edition."""
    words = text.strip().strip("[]").split()
    return bool(words) and all(w in table.examples for w in words)


#: Half-width punctuation beside Chinese text becomes full-width ("热图: d=64" -> "热图：d=64",
#: "token, 同样" -> "token，同样"); a parenthesis is full-width when it holds Chinese and
#: is not a function's (``cos(角度)`` keeps its own).
_CJK_BEFORE = r"(?<=[\u4e00-\u9fff）”])"
_CJK_AFTER = r"(?=[\u4e00-\u9fff（“])"
_FULL_WIDTH = [(re.compile(rf"{_CJK_BEFORE}{mark}[ ]*|[ ]*{mark}[ ]*{_CJK_AFTER}"), wide)
               for mark, wide in ((":", "："), (",", "，"), (";", "；"))]
_FULL_WIDTH += [(re.compile(_CJK_BEFORE + r"\?"), "？"),
                (re.compile(r"(?<![A-Za-z0-9_])[ ]?\(([^()$]*[\u4e00-\u9fff][^()$]*)\)[ ]?"),
                 r"（\1）")]
_HAN = re.compile(r"[\u4e00-\u9fff]")
#: In a label that holds Chinese, a separator between Latin words or numbers too
#: ("T = 32,768: 23 对" -> "T = 32,768：23 对", "4×, PI" -> "4×，PI"): a ``:``, ``,`` or ``;``
#: followed by a space or a line break. Not a thousands comma (32,768), a ratio (1:4) or a
#: decimal point, which no space follows; not the comma of a Latin citation ("et al., 2023");
#: and nothing inside inline math, straight quotes (``"I love you"``), or a parenthesis,
#: bracket or brace that holds no Chinese: ``(16, 24, 24)``, ``（0, 0, 0）`` and
#: ``(T, H, W, L)`` read as one Latin unit.
_SEPARATOR = re.compile(r"(?<!\.)([:,;])(?:[ ]+|(?=\n))")
_WIDE = {":": "：", ",": "，", ";": "；"}
_OPENING, _CLOSING = "([{（", ")]}）"


def _inside_latin_unit(text: str) -> list[bool]:
    """For each character of ``text``: whether it is inside inline math, straight double
    quotes, or a parenthesis, bracket or brace (half- or full-width) that holds no Chinese."""
    inside = [False] * len(text)
    math = quoted = False
    groups: list[int] = []  # where each open group starts
    for i, c in enumerate(text):
        if c == "$":
            math = not math
            inside[i] = True
        elif math:
            inside[i] = True
        elif c == '"':
            quoted = not quoted
            inside[i] = True
        elif quoted:
            inside[i] = True
        elif c in _OPENING:
            groups.append(i)
        elif c in _CLOSING and groups:
            start = groups.pop()
            if not _HAN.search(text, start, i):
                inside[start:i + 1] = [True] * (i + 1 - start)
    return inside


def _full_width(text: str) -> str:
    """``text`` with Chinese punctuation: half-width ``:``, ``,``, ``;``, ``?`` beside Chinese
    and parentheses around Chinese become full-width (outside inline math); and, where the
    text holds Chinese, a separator between Latin or digits too (:data:`_SEPARATOR`)."""
    parts = _MATH.split(text)  # odd parts: inline math
    for i in range(0, len(parts), 2):
        for pattern, replacement in _FULL_WIDTH:
            parts[i] = pattern.sub(replacement, parts[i])
    text = "".join(parts)
    if not _HAN.search(text):
        return text
    inside = _inside_latin_unit(text)
    return _SEPARATOR.sub(lambda m: m.group(0) if inside[m.start(1)] else _WIDE[m.group(1)],
                          text)


def translate(text: str, lang: str, *, record: bool = True) -> str:
    """``text`` in ``lang``: English as it is; Chinese by the table (see the module
    docstring). An untranslated Chinese result is appended to :data:`MISSING_ENV`'s file
    when that is set and ``record``."""
    _check_language(lang)
    if lang == "en" or not text:
        return text
    table = _table()
    if record:
        _record(text, "seen")
    out = _translated(text, table)
    if record and leftover_english(out):
        _record(text, "missing")
    return out


def _replace_phrase(m: re.Match, table: _Table) -> str:
    name = m.lastgroup
    chinese = table.phrases[table.keys[name]]
    if name not in table.slotted:
        return chinese
    slots = table.slotted[name].fullmatch(m.group(0)).groups()
    return chinese.format(*(table.labels.get(g, g) for g in slots))


def _translated(text: str, table: _Table) -> str:
    stripped = text.strip()
    if stripped in table.labels:  # a whole label: a legend entry, a tick, a slider value
        return text.replace(stripped, table.labels[stripped])
    if _is_example(text, table):
        return text

    def replace(m):
        return table.phrases[m.group(0)]

    # whole labels that contain math first; then the other phrases, never inside inline
    # math ("$A_0 = I$" keeps its I) or a quoted example ("He was late .")
    out = table.with_math.sub(replace, text) if table.with_math else text
    parts = _MATH.split(out)  # odd parts: inline math
    for i in range(0, len(parts), 2):
        if table.prose:
            parts[i] = table.prose.sub(lambda m: _replace_phrase(m, table), parts[i])
    # the punctuation of the whole label: whether it holds Chinese decides a separator
    # between two Latin words ("T = 32,768: 23 对" -> "T = 32,768：23 对")
    out = _full_width("".join(parts))
    # no space beside full-width punctuation ("正确。 注意力" -> "正确。注意力")
    return re.sub(r"(?<=[，。：；？！）（、])[ ]+|[ ]+(?=[，。：；？！）（、])", "", out)


def interface_text(text: str, lang: str) -> str:
    """The site theme's interface string ``text`` (a button's label, a link's title) in
    ``lang``: the table's ``interface`` entries, for what the theme's own catalogue leaves
    English (``"Link to this heading"``)."""
    _check_language(lang)
    return text if lang == "en" else _table().interface.get(text, text)


def leftover_english(text: str) -> list[str]:
    """The English words in a would-be Chinese ``text``: words of two or more Latin letters
    outside inline math and identifiers that the table's ``latin`` list does not allow."""
    table = _table()
    if _is_example(text, table):
        return []
    prose = table.quoted.sub(lambda m: " " if _is_example(m.group(2), table) else m.group(0),
                             text)
    return [w for w in _WORD.findall(_NOT_PROSE.sub(" ", prose)) if w not in table.latin]


_recorded: set[tuple[str, str]] = set()  # (file, text) this process has written


def _record(text: str, kind: str) -> None:
    """Append ``text`` to the build's file of ``kind`` texts
    (:func:`posenc.course.environment.record_file`), once per process: a slider figure
    translates the same labels for each of its frames, and the files are read as sets."""
    path = environment.record_file(kind)
    if path and (path, text) not in _recorded:
        _recorded.add((path, text))
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
