"""What a reader of the Chinese edition sees that no check of the catalogues can: the built
pages' text (``_build/html/zh/book/*.html``).

    python -m posenc_site.zhcheck [DIR]     the pages of DIR (default _build/html/zh)
    python -m posenc_site.zhcheck --catalogues
                                            each translated message rendered on its own
                                            (no build needed; what the pages will show)

Two kinds of slip, in the visible text of a page's article outside code, preformatted
text, math and cell outputs (which code prints: the course layer's tests check the figure
and slider text):

* **Stray Markdown marks**: a literal ``*``, ``**`` or ``_`` (``_`` not inside an identifier
  such as d_model). CommonMark closes an emphasis only at a right-flanking delimiter, and a
  ``*`` after full-width punctuation and before a Chinese character is not one, so
  ``*对照：*答案`` shows its asterisks (write ``*对照*：答案``).
* **Spacing**, the edition's rule, which its catalogues follow (6,150 times against 9, all
  in cited titles): one space between a Chinese character and a Latin letter or digit, or
  code or math (``64 个 token``, ``RoPE 的``, ``$x$ 的``); no space beside full-width
  punctuation, quotes or brackets (``一次“K-shift”按差值``, ``（见上文）RoPE``); no space
  between two Chinese characters (``折棍注意力*从查询往回*`` renders as one word run, not
  ``折棍注意力 从查询往回``). A bold run-in head may be followed by a space
  (``**用时** 约 30 分钟``). Cited titles keep their author's spacing: text in 《》, and the
  italic titles of the reference list (:data:`posenc_site.i18n.ITALIC_TITLES`).

Each problem reads ``page: what: …context…``.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

from .i18n import CITED_TITLE, ITALIC_TITLES, LANGUAGE, LOCALE, ZH_HTML

#: Elements whose content is no prose to check; code and math stand in the text as one
#: Latin word (:data:`LATIN`), for the spacing beside them.
_SKIP = {"script", "style", "pre", "svg", "textarea", "template", "noscript", "head",
         "title", "button", "select", "nav"}
_AS_LATIN = {"code", "kbd", "samp", "tt", "var", "math"}
#: Classes whose element is skipped: math (MathJax's source), heading links (¶), cell
#: outputs (printed by code), highlighted code.
_SKIP_CLASSES = {"headerlink", "cell_output", "highlight", "MathJax", "posenc-widget"}
_MATH_CLASSES = {"math"}
#: Elements inside a line of text; any other starts or ends one.
_INLINE = {"a", "abbr", "b", "bdi", "bdo", "cite", "data", "del", "dfn", "em", "i", "ins",
           "mark", "q", "s", "small", "span", "strong", "sub", "sup", "time", "u", "wbr",
           "font", "label"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
         "param", "source", "track", "wbr"}

LATIN = "\ue000"  # code or math, in the text checked: spaced as a Latin word
_HAN = "\u4e00-\u9fff"
_LAT = f"A-Za-z0-9{LATIN}"
#: Full-width punctuation, quotes and brackets: no space beside them.
_WIDE = "，。、：；！？“”‘’（）《》【】「」"

#: Letters an identifier's ``_`` may join (d_model, α_ij).
_WORDY = "A-Za-z0-9\u0370-\u03ff"
_STRAY = re.compile(f"\\*+|(?<![{_WORDY}])_+|_+(?![{_WORDY}])")
_NO_SPACE = re.compile(f"[{_HAN}](?=[{_LAT}])|[{_LAT}](?=[{_HAN}])")
#: (a separator between links, `` · `` or `` | ``, keeps its spaces)
_SPACE_BY_WIDE = re.compile(f"(?<![·|/]) (?=[{_WIDE}])|(?<=[{_WIDE}]) (?![·|/])")
_SPACE_IN_HAN = re.compile(f"(?<=[{_HAN}]) (?=[{_HAN}])")
#: A web address shown as text (``<https://github.com/a_b/c>``): its marks are its own.
_URL = re.compile(r"(?:https?://|www\.)[^\s，。；：、）》”]+")
#: What may end a sentence before a bold run-in head.
_BEFORE_HEAD = "。！？；："


class _Line:
    """One line of visible text (a paragraph, a heading, a list item, a cell): its characters,
    with, for each, whether it is inside a cited title, and the ends of its bold heads."""

    def __init__(self):
        self.chars: list[str] = []
        self.title: list[bool] = []
        self.head_ends: set[int] = set()

    def add(self, text: str, title: bool) -> None:
        for c in text:
            if c.isspace():
                if not self.chars or self.chars[-1] == " ":
                    continue  # white space collapses, as the browser shows it
                c = " "
            self.chars.append(c)
            self.title.append(title)


class _PageText(HTMLParser):
    """The lines of visible prose of a page (see the module docstring), in order."""

    def __init__(self, italic_titles: bool, article_only: bool):
        super().__init__(convert_charrefs=True)
        self.italic_titles = italic_titles
        self.in_article = not article_only
        self.article_depth = 0
        self.stack: list[tuple[str, str]] = []  # (tag, role): "skip", "latin", "em", ...
        self.skipping = 0
        self.em = 0
        self.lines: list[_Line] = []
        self.line = _Line()
        self.strong_starts: list[int] = []

    def _end_line(self) -> None:
        if self.line.chars:
            self.lines.append(self.line)
        self.line = _Line()
        self.strong_starts = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        if tag == "article" and "bd-article" in classes:
            self.in_article = True
            self.article_depth = 1
            self.stack.append((tag, "article"))
            return
        if tag == "article" and self.article_depth:
            self.article_depth += 1
        if tag in _VOID:
            if tag in ("br", "hr") and not self.skipping:
                self._end_line()
            return
        if self.skipping or tag in _SKIP or classes & _SKIP_CLASSES or "hidden" in attrs \
                or attrs.get("aria-hidden") == "true":
            role = "skip"
            self.skipping += 1
        elif tag in _AS_LATIN or classes & _MATH_CLASSES:
            role = "latin"
            self.skipping += 1
            if self.in_article:
                self.line.add(LATIN, self.em > 0 and self.italic_titles)
        elif tag in _INLINE:
            role = tag
            if tag in ("em", "i", "cite"):
                self.em += 1
            elif tag in ("strong", "b"):
                self.strong_starts.append(len(self.line.chars))
        else:
            role = "block"
            self._end_line()
        self.stack.append((tag, role))

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        # close up to the matching element (an unclosed <p> or <li> ends with its parent)
        for depth in range(len(self.stack) - 1, -1, -1):
            if self.stack[depth][0] == tag:
                break
        else:
            return
        while len(self.stack) > depth:
            open_tag, role = self.stack.pop()
            self._close(open_tag, role)

    def _close(self, tag, role):
        if role == "article":
            self._end_line()
            self.in_article = False
            self.article_depth = 0
        elif role in ("skip", "latin"):
            self.skipping -= 1
        elif role in ("em", "i", "cite"):
            self.em -= 1
        elif role in ("strong", "b") and self.strong_starts:
            start = self.strong_starts.pop()
            before = "".join(self.line.chars[:start]).rstrip()
            if not before or before[-1] in _BEFORE_HEAD:  # a run-in head
                self.line.head_ends.add(len(self.line.chars))
        elif role == "block":
            self._end_line()

    def handle_data(self, data):
        if self.in_article and not self.skipping:
            self.line.add(data, self.em > 0 and self.italic_titles)

    def close(self):
        super().close()
        self._end_line()


#: The theme's title of a folded solution (sphinx-exercise writes it, not a translator).
_SOLUTION_TITLE = "解答 练习"


def _context(text: str, start: int, end: int, width: int = 12) -> str:
    shown = text[max(0, start - width):end + width].replace(LATIN, "`…`")
    return f"…{shown}…"


def line_problems(line: _Line) -> list[tuple[str, str]]:
    """``(what, context)`` of each slip of one line of text."""
    text = "".join(line.chars).strip(" ")
    offset = len(line.chars) - len("".join(line.chars).lstrip(" "))
    title = line.title[offset:offset + len(text)]
    for m in CITED_TITLE.finditer(text):  # a title in 《》 keeps its own spacing
        title[m.start():m.end()] = [True] * (m.end() - m.start())
    urls = [m.span() for m in _URL.finditer(text)]
    out = []
    for m in _STRAY.finditer(text):
        if any(a <= m.start() < b for a, b in urls):
            continue
        out.append((f"a literal {m.group(0)!r} (unclosed Markdown emphasis?)",
                    _context(text, m.start(), m.end())))
    for m in _NO_SPACE.finditer(text):
        if not (title[m.start()] or title[m.start() + 1]):
            out.append(("no space between Chinese and Latin", _context(text, m.start(),
                                                                       m.start() + 2)))
    for m in _SPACE_BY_WIDE.finditer(text):
        if not title[m.start()]:
            out.append(("a space beside full-width punctuation",
                        _context(text, m.start(), m.end())))
    for m in _SPACE_IN_HAN.finditer(text):
        if _SOLUTION_TITLE in text[max(0, m.start() - 3):m.end() + 3]:
            continue  # sphinx-exercise's own title, "解答" then the linked "练习 1.1"
        if not title[m.start()] and m.start() + offset not in line.head_ends:
            out.append(("a space between Chinese characters",
                        _context(text, m.start(), m.end())))
    return out


def page_problems(html: str, page: str = "page") -> list[str]:
    """Every slip (see the module docstring) of one built page, as ``page: what:
    …context…``; ``page`` also says whether its italics are cited titles (``references``).
    Only the article of a site page is read (``<article class="bd-article">``), else the
    whole body."""
    parser = _PageText(italic_titles=Path(page).stem in ITALIC_TITLES,
                       article_only=re.search(r'<article[^>]*class="[^"]*\bbd-article\b',
                                              html) is not None)
    parser.feed(html)
    parser.close()
    return [f"{page}: {what}: {context}"
            for line in parser.lines for what, context in line_problems(line)]


def site_problems(root: Path = ZH_HTML) -> list[str]:
    """:func:`page_problems` of every page of the Chinese site at ``root`` (its chapters and
    the pages beside them, ``book/*.html``)."""
    out = []
    for path in sorted((root / "book").glob("*.html")):
        out += page_problems(path.read_text(encoding="utf-8"),
                             str(path.relative_to(root.parent)))
    return out


def render_message(text: str) -> str:
    """One catalogue message as the Chinese build renders it: MyST Markdown to HTML (its
    inline markup, math and roles as MyST parses them)."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    global _MD
    if _MD is None:
        _MD = create_md_parser(MdParserConfig(enable_extensions={"dollarmath", "colon_fence"}),
                               RendererHTML)
    return _MD.render(text)


_MD = None


def catalogue_problems(locale: Path = LOCALE) -> list[str]:
    """:func:`page_problems` of every translated message of the catalogues, each rendered on
    its own (:func:`render_message`): the pages' slips before a build, message by message
    (``13_long_context.po: a literal '*' …: …``)."""
    from babel.messages.pofile import read_po

    out = []
    for po_path in sorted((locale / LANGUAGE / "LC_MESSAGES").rglob("*.po")):
        with po_path.open("rb") as f:
            catalog = read_po(f)
        for message in catalog:
            # (a message that starts with a line break is a display formula's source)
            if message.id and message.string and message.string != message.id \
                    and not message.id.startswith("\n"):
                out += page_problems(render_message(message.string), po_path.name)
    return out


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--catalogues"]:
        found = catalogue_problems()
    else:
        root = Path(args[0]) if args else ZH_HTML
        if not (root / "book").is_dir():
            raise SystemExit(f"no built Chinese pages in {root}: run `make book` first")
        found = site_problems(root)
    for line in found:
        print(line)
    print(f"{len(found)} problems" if found else "no problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
