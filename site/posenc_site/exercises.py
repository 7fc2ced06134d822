"""Exercises numbered per chapter: "Exercise 6.2" is chapter 6's second exercise.

sphinx-exercise numbers its exercises through Sphinx's figure numbers, one count over the
whole book ("Exercise 59" in chapter 17). After Sphinx assigns them (``env-get-updated``),
each chapter's exercises are renumbered ``(chapter, k)`` in their order on the page, which
Sphinx writes as ``chapter.k`` in the exercise's title and in every reference to it. The
chapter is the number its notebook's name starts with (``book/06_alibi`` -> 6).
"""

from __future__ import annotations

import re

#: a chapter's document name: ``book/NN_topic``
CHAPTER = re.compile(r"(?:^|/)(\d\d)_[^/]+$")
#: sphinx-exercise's enumerable node type
FIGTYPE = "exercise"


def chapter_number(docname: str) -> int | None:
    """The chapter number of ``docname`` (``"book/06_alibi"`` -> 6), or None for other pages."""
    match = CHAPTER.search(docname)
    return int(match.group(1)) if match else None


def per_chapter(numbers: dict[str, tuple[int, ...]], chapter: int) -> dict[str, tuple[int, int]]:
    """``numbers`` (exercise id -> its book-wide number) renumbered ``(chapter, 1..n)`` in
    their book-wide order."""
    ordered = sorted(numbers, key=lambda key: numbers[key])
    return {key: (chapter, k) for k, key in enumerate(ordered, start=1)}


def renumber(app, env) -> list[str]:
    """``env-get-updated``: every chapter's exercises numbered within their chapter."""
    for docname, types in env.toc_fignumbers.items():
        chapter = chapter_number(docname)
        if chapter is not None and FIGTYPE in types:
            types[FIGTYPE] = per_chapter(types[FIGTYPE], chapter)
    return []


def setup(app):
    app.connect("env-get-updated", renumber, priority=900)  # after Sphinx's own numbering
    return {"parallel_read_safe": True, "parallel_write_safe": True}
