"""Result tables as the chapters show them: an HTML table inside the text column, in every
language the notebook draws in.

A printed table runs off the text column on the site, and off a phone's screen long before;
:func:`posenc.compare.html_table` scrolls inside its own box instead. :func:`table_html` adds
the Chinese edition: the header, the label and every text cell go through
:func:`posenc.course.i18n.translate` (numbers and names such as ``L_train`` or ``RoPE`` stay as
they are), and the versions are joined by :func:`~posenc.course.i18n.marked`, so that each
edition's pages keep their own, as they do for a figure.
"""

from __future__ import annotations

from IPython.display import HTML, display

from ..compare import html_table
from .i18n import marked, output_languages, translate

__all__ = ["table_html", "show_table"]


def table_html(header, rows, label: str, **options) -> str:
    """:func:`posenc.compare.html_table` (``options``: ``numbers_from``, ``compact``) in each
    of :func:`~posenc.course.i18n.output_languages`, with the header, the label and each
    cell that is a string translated; a cell that is a number is shown as ``str`` gives it."""

    def words(value, lang):
        return translate(value, lang) if isinstance(value, str) else value

    def version(lang: str) -> str:
        return html_table([words(str(h), lang) for h in header],
                          [[words(v, lang) for v in row] for row in rows],
                          words(label, lang), **options)

    return marked({lang: version(lang) for lang in output_languages()})


def show_table(header, rows, label: str, **options) -> None:
    """Display :func:`table_html` in the notebook (on the site: in the text column)."""
    display(HTML(table_html(header, rows, label, **options)))
