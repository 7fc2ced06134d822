"""Give every chapter the two cells a reader needs to run it away from the site.

* a one-line note under the title: how to run this chapter yourself;
* a first code cell that stops with instructions when the course's library is missing,
  instead of a bare ``ModuleNotFoundError`` from the imports (hidden on the site, where
  the library is always there; it is in the downloaded ``.ipynb``).

Idempotent: ``python tests/chapter_header.py book/*.ipynb`` adds or refreshes the cells;
``tests/test_chapter_header.py`` checks that every chapter has them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

NOTE_ID, CHECK_ID = "run-it-yourself", "posenc-check"
# The one-chapter install, as make does it: PyTorch's CPU build alone from its own index first
# (fast to fail where that index is out of reach), then everything else from the ordinary one.
# Both lines are documented in book/running_locally.md (tests/test_chapter_header.py).
INSTALL_TORCH = ("pip install --no-deps torch==2.13.0 "
                 "--index-url https://download.pytorch.org/whl/cpu")
INSTALL = "pip install 'posenc-course.zip[lab]'"
INSTALLS = (INSTALL_TORCH, INSTALL)
# Reads right on the site and in JupyterLab: where the download is (the site), what to run
# (Lab). The link is relative: the site page on the site; in a clone's JupyterLab the rendered
# page (the course's settings open .md files in Markdown Preview, site/jupyterlab/).
NOTE = ("*Run it yourself:* this chapter is a Jupyter notebook. On the course site, the "
        "download button at the top of the page gives its `.ipynb`; the course's library "
        "installs with one `pip install` (the site's page "
        "[Running the course on your machine](running_locally.md)). In JupyterLab, "
        "*Run → Run All Cells* runs it top to bottom.")
CHECK = f'''# The course's library, posenc: without it, stop here and say how to install it.
try:
    import posenc  # noqa: F401
except ModuleNotFoundError:
    raise ModuleNotFoundError(
        "This chapter needs the course's library, posenc. Download posenc-course.zip from the "
        "course site (page 'Running the course on your machine') and install it, PyTorch's "
        "CPU build first: {INSTALL_TORCH} ; then: {INSTALL}"
    ) from None'''


def add_header(nb) -> bool:
    """Insert or refresh the note and the check in ``nb``; True when ``nb`` changed."""
    before = nbformat.writes(nb)
    nb.cells = [c for c in nb.cells if c.get("id") not in (NOTE_ID, CHECK_ID)]
    note = nbformat.v4.new_markdown_cell(NOTE)
    note.id = NOTE_ID
    check = nbformat.v4.new_code_cell(CHECK, metadata={"tags": ["remove-cell"]})
    check.id = CHECK_ID
    first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    nb.cells.insert(first_code, check)
    nb.cells.insert(1, note)  # under the title cell
    return nbformat.writes(nb) != before


def main(paths: list[str]) -> int:
    for name in paths:
        nb = nbformat.read(name, as_version=4)
        if add_header(nb):
            nbformat.write(nb, name)
            print(f"updated {Path(name).name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
