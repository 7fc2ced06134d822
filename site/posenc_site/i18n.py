"""The Chinese edition: catalogues, the check that every message is translated, the zh site.

    python -m posenc_site.i18n COMMAND

    update        English changed: refresh locale/zh_CN/LC_MESSAGES/**.po
    check         fails on any message untranslated, fuzzy or stale, or a term rendered
                  another way (locale/zh_CN/terms.yml)
    build         the Chinese site into _build/html/zh (after `make book`)
    retranslate   zh.json changed: every text of the last execution, translated again

One source, two languages (Sphinx's gettext workflow): the English pages and notebooks are
the source; Sphinx's ``gettext`` builder extracts every paragraph, heading, list item,
admonition and exercise of their Markdown (code cells and their outputs are not
messages) into ``.pot`` templates, one per page; ``sphinx-intl`` keeps the Chinese
catalogues ``locale/zh_CN/LC_MESSAGES/<page>.po`` in step with them, marking a changed
English paragraph *fuzzy* and a new one empty. The Chinese build (``language = zh_CN``)
reads the same doctrees' text through those catalogues.

Notebooks execute once for both languages: the Chinese build reads the outputs that the
English build's execution left in the jupyter-cache (``nb_execution_mode = cache``),
and the course layer's outputs carry both languages (``posenc.course.i18n``): the
site keeps the page's own (``site/posenc_site/pages.py``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale"
LANGUAGE = "zh_CN"
#: Where the Chinese site goes: beside the English one, under its root.
ZH_HTML = ROOT / "_build" / "html" / "zh"
CACHE = ROOT / "_build" / ".jupyter_cache"
#: What the execution could not translate (site/posenc_site/execute.py writes it).
MISSING = ROOT / "_build" / "i18n-missing.jsonl"
#: Every text the execution translated (site/posenc_site/execute.py writes it).
SEEN = ROOT / "_build" / "i18n-seen.jsonl"


def _sphinx(builder: str, outdir: Path, doctrees: Path, overrides: dict | None = None,
            quiet: bool = True) -> None:
    """One Sphinx build of the book with Jupyter Book 1's configuration (``_config.yml``,
    ``_toc.yml``) and ``overrides``; raises if it fails or warns (``-W``)."""
    from jupyter_book.sphinx import build_sphinx

    result = build_sphinx(
        str(ROOT), str(outdir), doctreedir=str(doctrees), builder=builder,
        path_config=str(ROOT / "_config.yml"), use_external_toc=True,
        confoverrides={"external_toc_path": str(ROOT / "_toc.yml"),
                       "latex_individualpages": False, **(overrides or {})},
        noconfig=True, warningiserror=True, keep_going=True, quiet=quiet, freshenv=True)
    if result:
        raise SystemExit(f"sphinx {builder} build failed ({result})")


def extract(outdir: Path) -> Path:
    """The ``.pot`` templates of every page, written under ``outdir`` (about 8 s)."""
    _sphinx("gettext", outdir, outdir / ".doctrees",
            {"nb_execution_mode": "off"})
    return outdir


def update(pot_dir: Path | None = None, locale: Path = LOCALE) -> None:
    """Bring the Chinese catalogues in step with the English source (``sphinx-intl update``)."""
    with tempfile.TemporaryDirectory() as tmp:
        pot_dir = pot_dir or extract(Path(tmp) / "gettext")
        subprocess.run([sys.executable, "-m", "sphinx_intl", "update", "-p", str(pot_dir),
                        "-l", LANGUAGE, "-d", str(locale), "-w", "0"], check=True,
                       stdout=subprocess.DEVNULL)


def problems(pot_dir: Path, locale: Path = LOCALE) -> list[str]:
    """Every English message of ``pot_dir`` that the catalogues do not translate: missing,
    empty, or fuzzy (its English changed since it was translated). ``[]`` when complete."""
    from babel.messages.pofile import read_po

    out = []
    for pot in sorted(pot_dir.rglob("*.pot")):
        rel = pot.relative_to(pot_dir).with_suffix(".po")
        po_path = locale / LANGUAGE / "LC_MESSAGES" / rel
        if not po_path.exists():
            out.append(f"{rel}: no catalogue (run: python -m posenc_site.i18n update)")
            continue
        with pot.open("rb") as f:
            template = read_po(f)
        with po_path.open("rb") as f:
            catalog = read_po(f)
        for message in template:
            if not message.id:
                continue
            entry = catalog.get(message.id)
            first = message.id.splitlines()[0][:70]
            if entry is None:
                out.append(f"{rel}: not in the catalogue: {first!r}")
            elif not entry.string:
                out.append(f"{rel}: untranslated: {first!r}")
            elif entry.fuzzy:
                out.append(f"{rel}: fuzzy (the English changed): {first!r}")
    return out


#: What a translation must carry over from its English unchanged: inline math, code
#: spans, link and image targets, and MyST roles/references.
_KEPT = {
    "math": re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<!\\)\$"),
    "code": re.compile(r"`([^`]+)`"),
    "link target": re.compile(r"\]\(([^)\s]+)\)"),
    "role": re.compile(r"\{[a-z:-]+\}`[^`]*`"),
}


def markup_problems(english: str, chinese: str) -> list[str]:
    """What ``chinese`` lost or changed of ``english``'s markup (``[]`` if nothing): the
    same inline math, code spans, link targets and roles, each as many times."""
    from collections import Counter

    out = []
    for kind, pattern in _KEPT.items():
        want, got = Counter(pattern.findall(english)), Counter(pattern.findall(chinese))
        if want != got:
            lost, added = want - got, got - want
            out.append(f"{kind} differs: missing {sorted(lost)}, added {sorted(added)}")
    if english.count("**") % 2 == 0 and chinese.count("**") % 2:
        out.append("unbalanced ** (bold)")
    return out


def catalogue_markup(locale: Path = LOCALE) -> list[str]:
    """:func:`markup_problems` of every translated message in the catalogues."""
    from babel.messages.pofile import read_po

    out = []
    for po_path in sorted((locale / LANGUAGE / "LC_MESSAGES").rglob("*.po")):
        with po_path.open("rb") as f:
            catalog = read_po(f)
        for message in catalog:
            if message.id and message.string:
                for problem in markup_problems(message.id, message.string):
                    first = message.id.splitlines()[0][:60]
                    out.append(f"{po_path.name}: {problem}: in {first!r}")
    return out


#: The Chinese edition's terms (``zh``) and the renderings it does not use (``avoid``).
TERMS = LOCALE / LANGUAGE / "terms.yml"
#: What a term check skips: inline math, code spans, link targets and web addresses
#: (``$\\text{base}$``, ```rope_base```, ``](x.ipynb)`` and ``<https://...>`` may hold any word).
_NOT_TEXT = re.compile(r"\$[^$]*\$|`[^`]*`|\]\([^)]*\)|<[a-z]+://[^>\s]*>|\bhttps?://[^\s)>）]*")
#: A cited title, kept as its author wrote it: a term check skips it (Su Jianlin's
#: 《Transformer升级之路：18、RoPE的底数选择原则》 keeps its 底数). In the text of every page
#: a title is in 《》; in the reference list (:data:`ITALIC_TITLES`) it is in italics.
CITED_TITLE = re.compile(r"《[^》\n]*》")
_ITALIC = re.compile(r"(?<![*\\])\*(?![*\s])(?:[^*\n]|\*\*)*?(?<![\s*\\])\*(?!\*)")
#: The pages whose italics are cited titles (``Su, J. (2024). *Transformer升级之路……*``).
ITALIC_TITLES = frozenset({"references"})
#: The keys of a term in terms.yml: ``files``/``not_files`` restrict it to (or exempt) these
#: sources, a catalogue by its page (``15_reading_configs``) or the figure phrases (``zh.json``).
_TERM_KEYS = {"en", "zh", "avoid", "note", "files", "not_files"}


def load_terms(path: Path = TERMS) -> list[dict]:
    """The terms of ``terms.yml``, each with its ``avoid`` patterns compiled."""
    import yaml

    terms = yaml.safe_load(path.read_text(encoding="utf-8"))
    for term in terms:
        missing = {"en", "zh", "avoid"} - set(term)
        if missing:
            raise ValueError(f"{path.name}: term {term!r} lacks {sorted(missing)}")
        unknown = set(term) - _TERM_KEYS
        if unknown:
            raise ValueError(f"{path.name}: term {term['en']!r} has unknown keys "
                             f"{sorted(unknown)} (known: {sorted(_TERM_KEYS)})")
        if "files" in term and "not_files" in term:
            raise ValueError(f"{path.name}: term {term['en']!r} has both files and not_files")
        for key in ("files", "not_files"):
            if key in term and not (isinstance(term[key], list)
                                    and all(isinstance(f, str) for f in term[key])):
                raise ValueError(f"{path.name}: term {term['en']!r}: {key} must be a list of "
                                 f"page names (15_reading_configs) or zh.json")
        term["avoid"] = [re.compile(a) for a in term["avoid"]]
    return terms


def applies(term: dict, source: str | None) -> bool:
    """Whether ``term`` is checked in ``source`` (a page's name, ``zh.json``, or None for a
    text of no file: then only a term without ``files`` is)."""
    if "files" in term:
        return source in term["files"]
    return source not in term.get("not_files", ())


def checked_text(chinese: str, source: str | None = None) -> str:
    """``chinese`` with what a term check skips blanked: math, code, link targets and web
    addresses (:data:`_NOT_TEXT`), and cited titles (:data:`CITED_TITLE`; the italics of the
    pages in :data:`ITALIC_TITLES`)."""
    text = CITED_TITLE.sub(" ", _NOT_TEXT.sub(" ", chinese))
    if source in ITALIC_TITLES:
        text = _ITALIC.sub(" ", text)
    return text


def term_problems(chinese: str, terms: list[dict], source: str | None = None) -> list[str]:
    """Each avoided rendering in ``chinese`` (outside math, code, link targets and cited
    titles: :func:`checked_text`), as ``'底数' for 'base (of the frequencies)': write
    'base'``, of the terms that apply to ``source`` (:func:`applies`)."""
    text = checked_text(chinese, source)
    return [f"{m.group(0)!r} for {t['en']!r}: write {t['zh']!r}"
            for t in terms if applies(t, source)
            for pattern in t["avoid"] for m in pattern.finditer(text)]


def catalogue_terms(locale: Path = LOCALE, terms_path: Path = TERMS,
                    phrases: Path = ROOT / "src" / "posenc" / "course" / "locale" / "zh.json"
                    ) -> list[str]:
    """:func:`term_problems` of every translated message and of every figure phrase and
    label (a catalogue's messages are of its page, ``13_long_context``; the table's of
    ``zh.json``), and a term whose ``files`` or ``not_files`` names no such source."""
    import json

    from babel.messages.pofile import read_po

    terms = load_terms(terms_path)
    out = []
    sources = {phrases.name}
    for po_path in sorted((locale / LANGUAGE / "LC_MESSAGES").rglob("*.po")):
        sources.add(po_path.stem)
        with po_path.open("rb") as f:
            catalog = read_po(f)
        for message in catalog:
            # a message kept as it is (the glossary's English column) is English, not a rendering
            if message.id and message.string and message.string != message.id:
                out += [f"{po_path.name}: {p}"
                        for p in term_problems(message.string, terms, po_path.stem)]
    if phrases.exists():
        data = json.loads(phrases.read_text(encoding="utf-8"))
        # the phrases and the whole labels (a legend entry, a slider's value)
        for english, chinese in {**data.get("labels", {}), **data["phrases"]}.items():
            out += [f"{phrases.name} ({english!r}): {p}"
                    for p in term_problems(chinese, terms, phrases.name)]
    for term in terms:
        for name in term.get("files", []) + term.get("not_files", []):
            if name not in sources:
                out.append(f"{terms_path.name}: term {term['en']!r} names {name!r}, which is "
                           f"no catalogue's page and not {phrases.name}")
    return out


def check(locale: Path = LOCALE) -> list[str]:
    """:func:`problems` against the English source as it is now, :func:`catalogue_markup`
    and :func:`catalogue_terms`."""
    with tempfile.TemporaryDirectory() as tmp:
        return (problems(extract(Path(tmp) / "gettext"), locale) + catalogue_markup(locale)
                + catalogue_terms(locale))


#: The cell a Chinese notebook gets after its header: figures, sliders and questions in Chinese.
ZH_SETUP = ("# 中文版：图中的文字、滑块的标签和自测题都用中文（posenc.course.i18n）\n"
            "from posenc.course.i18n import set_language\n\n"
            'set_language("zh")')
_SHORT = 25  # a message shorter than this is matched only as a whole heading, item or cell


def catalogue(page: str, locale: Path = LOCALE) -> dict[str, str]:
    """``{English: Chinese}`` of ``page``'s translated, non-fuzzy messages."""
    from babel.messages.pofile import read_po

    path = locale / LANGUAGE / "LC_MESSAGES" / "book" / f"{page}.po"
    with path.open("rb") as f:
        return {m.id: m.string for m in read_po(f) if m.id and m.string and not m.fuzzy}


def translate_markdown(source: str, messages: dict[str, str]) -> str:
    """A Markdown cell in Chinese: each message of ``messages`` found in ``source`` replaced
    by its translation, longest first. Sphinx made each message from one paragraph, heading,
    list item or table cell, joining its lines with spaces: a space of a message matches any
    run of white space (a line break and a list item's indent), and a short message matches
    only a whole heading, item, line or table cell, never a word inside a sentence."""
    for english in sorted(messages, key=len, reverse=True):
        body = r"\s+".join(re.escape(w) for w in english.split())
        if len(english) >= _SHORT:
            pattern = rf"(?<![\w\\]){body}(?!\w)"
        else:  # after a line's Markdown marker or a cell's bar, up to the line's or cell's end
            pattern = rf"(?:(?<=^)|(?<=[#|>*-] )|(?<=\d\. )|(?<=\| )){body}(?=[ \t]*(?:\||$))"
        chinese = messages[english]
        source = re.sub(pattern, lambda _m, c=chinese: c, source, flags=re.M)
    return source


def chinese_notebook(path: Path, messages: dict[str, str]) -> dict:
    """The notebook at ``path`` with its Markdown in Chinese and :data:`ZH_SETUP` after its
    header cell, the one that checks for the library (code cells are the English ones: the
    same code for both editions)."""
    import json

    from .notebooks import CHECK_ID  # the header cell's id, as the notebook tool writes it

    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            text = translate_markdown("".join(cell["source"]), messages)
            cell = dict(cell, source=text.splitlines(keepends=True))
        cells.append(cell)
        if cell.get("id") == CHECK_ID:
            cells.append({"cell_type": "code", "execution_count": None, "id": "posenc-zh",
                          "metadata": {"tags": ["remove-cell"]}, "outputs": [],
                          "source": ZH_SETUP.splitlines(keepends=True)})
    nb = dict(nb, cells=cells)
    nb["metadata"] = dict(nb.get("metadata", {}), language="zh-CN")
    return nb


def write_chinese_notebooks(sources: Path, locale: Path = LOCALE) -> list[Path]:
    """Each chapter's Chinese notebook in place of the English one among the site's
    downloadable sources (``zh/_sources/book/*.ipynb``)."""
    import json

    written = []
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        target = sources / "book" / path.name
        if target.exists():
            nb = chinese_notebook(path, catalogue(path.stem, locale))
            target.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n",
                              encoding="utf-8")
            written.append(target)
    return written


def untranslated_outputs(missing: Path = MISSING) -> list[str]:
    """The figure, slider and question texts the last execution found no translation for
    (``posenc.course.i18n``: add them to ``src/posenc/course/locale/zh.json``)."""
    import json

    if not missing.exists():
        return []
    return sorted({json.loads(line) for line in missing.read_text(encoding="utf-8").splitlines()
                   if line.strip()})


def retranslated(seen: Path = SEEN) -> list[str]:
    """The texts the last execution translated (:data:`SEEN`) that the table *as it is now*
    leaves untranslated: a change to ``zh.json`` checked without executing a notebook."""
    import json

    from posenc.course.i18n import leftover_english, translate

    texts = {json.loads(line) for line in seen.read_text(encoding="utf-8").splitlines()
             if line.strip()} if seen.exists() else set()
    return sorted(t for t in texts if leftover_english(translate(t, "zh", record=False)))


def glossary_terms(glossary: Path = ROOT / "book" / "glossary.md") -> list[str]:
    """The Chinese terms of the glossary's tables (``外推``, ``位置编码``, ``注意力汇聚点`` ...),
    each as one word: jieba, which splits the Chinese text for the search index, does not
    know them all (it cuts 外推 into 外 and 推, and the index keeps no one-character word,
    so a search for 外推 would find nothing)."""
    terms = []
    for line in glossary.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and re.search(r"[\u4e00-\u9fff]", cells[1]):
            for term in re.split(r"[，、（）()\s]+", cells[1]):
                if re.fullmatch(r"[\u4e00-\u9fff]{2,}", term) and term not in terms:
                    terms.append(term)
    return terms


def site_title() -> str:
    """The Chinese site's title: ``title`` of _config.yml as the first page's catalogue
    translates it (the first page's heading is the same title)."""
    import yaml

    english = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["title"]
    return catalogue("intro").get(english, english)


def _quick_chinese_search():
    """Sphinx 7.4's Chinese search language with its record of Latin words as a set.

    ``SearchChinese.split`` extends a list with every Latin word it meets and ``stem`` looks
    each word up in it: quadratic in the site's text, 8 s of the Chinese build's 34 s for
    22,789 words. A set holds the same words, so the index is the same; Sphinx's own
    ``split`` and ``stem`` run unchanged."""
    from sphinx.search.zh import SearchChinese

    class LatinTerms(set):
        extend = set.update  # what SearchChinese.split calls on its list

    class QuickSearchChinese(SearchChinese):
        def init(self, options: dict[str, str]) -> None:
            super().init(options)
            self.latin_terms = LatinTerms()  # the class's list is shared by every instance, too

    return QuickSearchChinese


def build(outdir: Path = ZH_HTML, cache: Path = CACHE) -> None:
    """The Chinese site from the English build's jupyter-cache: no notebook is executed.
    Fails if an executed notebook drew a text that has no Chinese."""
    if not cache.exists():
        raise SystemExit(f"no execution cache at {cache}: run `make book` first")
    missing = untranslated_outputs()
    if missing:
        raise SystemExit("no Chinese for these texts of figures, sliders or questions (add "
                         "them to src/posenc/course/locale/zh.json, then `python -m "
                         "posenc_site.i18n retranslate` checks the table without executing "
                         "again):\n  "
                         + "\n  ".join(repr(t) for t in missing))
    # built beside the English site, then moved under it: MyST-NB writes its output files
    # next to the output folder (here _build/zh/jupyter_execute), which must not be published
    staging = ROOT / "_build" / "zh" / "html"
    words = ROOT / "_build" / "zh" / "search-words.txt"  # jieba's user dictionary
    words.parent.mkdir(parents=True, exist_ok=True)
    words.write_text("".join(f"{t} 100000\n" for t in glossary_terms()), encoding="utf-8")
    import sphinx.search

    sphinx.search.languages["zh"] = _quick_chinese_search()
    _sphinx("html", staging, ROOT / "_build" / "zh" / ".doctrees", {
        "language": LANGUAGE,
        "html_title": site_title(),
        "html_logo": "site/static/logo-zh.svg",  # the logo's words in Chinese
        "html_search_options": {"dict": str(words)},
        "nb_execution_mode": "cache",
        "nb_execution_cache_path": str(cache),
        # a notebook missing from the cache must fail, never run here
        "nb_execution_raise_on_error": True,
        # the folded checks' control (_config.yml has the English)
        "nb_code_prompt_show": "显示检查代码",
        "nb_code_prompt_hide": "隐藏检查代码",
    }, quiet=False)
    write_chinese_notebooks(staging / "_sources")
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(staging, outdir)
    print(f"The Chinese edition is in {outdir.relative_to(ROOT)}.")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["update", "check", "build", "pot", "retranslate"])
    ap.add_argument("pages", nargs="*", help="check: only these pages (e.g. 04_rope)")
    ap.add_argument("--out", type=Path, default=ROOT / "_build" / "gettext",
                    help="pot: where the templates go")
    args = ap.parse_args(argv)
    if args.command == "pot":
        shutil.rmtree(args.out, ignore_errors=True)
        extract(args.out)
    elif args.command == "update":
        update()
    elif args.command == "retranslate":
        left = retranslated()
        for text in left:
            print(repr(text))
        print(f"{len(left)} texts of the last execution have no Chinese in zh.json")
        return 1 if left else 0
    elif args.command == "check":
        found = [line for line in check()
                 if not args.pages or any(f"{p}.po" in line for p in args.pages)]
        for line in found:
            print(line)
        total = "every message is translated" if not found else f"{len(found)} messages to do"
        print(f"{LANGUAGE}: {total}")
        return 1 if found else 0
    else:
        build()
    return 0


if __name__ == "__main__":
    sys.exit(main())
