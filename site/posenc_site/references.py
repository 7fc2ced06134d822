"""Sphinx extension: every citation in the book has its entry on the references page.

A citation is ``Surname et al. (2024``, ``Surname et al., 2024``, ``A and B (2022``,
``A, B & C, 2022`` or ``Name (2025)``; its entry is a bullet of ``book/references.md``
whose first author (or the organisation in parentheses after the authors) is that name and
whose year is that year. A citation with no entry is a Sphinx warning, so the ``-W`` build
fails on it (issue 34: six works cited in chapter 13 were missing). Text in code, math and
cell outputs is not read; the Chinese build is not checked again (its citations are the
English ones, translated).
"""

from __future__ import annotations

import re
from pathlib import Path

REFERENCES = Path(__file__).resolve().parents[2] / "book" / "references.md"
_NAME = r"[A-Z][A-Za-zÀ-ÿ'’\-]+"
_YEAR = r"(?:19|20)\d\d"
#: (name, year) of each citation form: "A et al. (2024", "A, B & C, 2022", "Name (2025"
#: (a single name needs its year in parentheses); a venue may sit before the year
#: ("(ICLR 2024"), and any whitespace, a line break included, between the words
_VENUE = r"(?:[A-Z][A-Za-z]+\s+)?"
CITATION = re.compile(
    rf"\b(?P<a>{_NAME})\s+et\s+al\.(?:'s)?,?\s+\(?{_VENUE}(?P<ya>{_YEAR})\b"
    rf"|\b(?P<b>{_NAME})(?:,\s+{_NAME})*,?\s+(?:and|&)\s+{_NAME}(?:'s)?,?\s+\(?{_VENUE}"
    rf"(?P<yb>{_YEAR})\b"
    rf"|\b(?P<c>{_NAME}(?:\s+Team)?)\s+\({_VENUE}(?P<yc>{_YEAR})\b")
#: Names before a year in parentheses that are not authors (models, papers by their name)
NOT_AUTHORS = {"GPT-OSS", "MPT", "BLOOM", "RoFormer"}


def citations(text: str) -> list[tuple[str, str]]:
    """Every ``(name, year)`` cited in ``text``."""
    found = []
    for m in CITATION.finditer(text):
        name = m["a"] or m["b"] or m["c"]
        if name not in NOT_AUTHORS:
            found.append((name, m["ya"] or m["yb"] or m["yc"]))
    return found


def reference_entries(text: str) -> list[tuple[str, str]]:
    """``(first author line, year)`` of every bullet of the references page."""
    entries = []
    for entry in re.split(r"\n(?=- )", text):
        if entry.startswith("- "):
            head = entry.split("*", 1)[0]  # the authors and year, before the title
            year = re.search(rf"\(({_YEAR})", head)
            entries.append((head[2:], year.group(1) if year else ""))
    return entries


def missing_citations(text: str, references: str) -> list[str]:
    """The citations of ``text`` that ``references`` has no entry for (first author and year)."""
    entries = reference_entries(references)
    return sorted({f"{name} ({year})" for name, year in citations(text)
                   if not any((head.startswith(name) or f"({name}" in head) and y == year
                              for head, y in entries)})


def _check(app, doctree) -> None:
    from docutils import nodes
    from sphinx.util import logging

    if app.config.language not in (None, "en") or app.env.docname.endswith("references"):
        return
    skip = (nodes.literal_block, nodes.raw, nodes.math, nodes.math_block)
    text = []
    for paragraph in doctree.findall(nodes.paragraph):
        ancestors, parent = [], paragraph.parent
        while parent is not None:
            ancestors.append(parent)
            parent = parent.parent
        if any(isinstance(a, skip) or "cell_output" in a.get("classes", []) for a in ancestors):
            continue
        text.append(paragraph.astext())
    for cited in missing_citations("\n".join(text), REFERENCES.read_text(encoding="utf-8")):
        logging.getLogger(__name__).warning(
            f"{cited} is cited but has no entry in book/references.md",
            location=app.env.docname)


def setup(app):
    app.connect("doctree-read", _check)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
