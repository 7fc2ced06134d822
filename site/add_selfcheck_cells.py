"""Give every chapter its closing self-check cells; safe to re-run (idempotent).

    .venv/bin/python site/add_selfcheck_cells.py            # add or refresh the cells
    .venv/bin/python site/add_selfcheck_cells.py --check    # exit 1 if a chapter lacks them

Each chapter in ``posenc.course.selfcheck.CHAPTERS`` ends with two cells: a heading and a
two-line code cell, ``show_questions("<chapter>")``, whose input is hidden on the site
(tag ``remove-input``). The questions themselves live in ``src/posenc/course/selfcheck.py``,
not in the notebook. Cells are found by their ids (``selfcheck-heading``,
``selfcheck-questions``): existing ones are replaced in place, missing ones appended
at the end. Notebooks are written as nbformat writes them (indent 1, no outputs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADING = ("## Check your understanding\n"
           "\n"
           "A few quick questions on this chapter. Pick an answer, or type a number and press "
           "Enter: the feedback appears at once.")


def cells_for(chapter: str) -> list[dict]:
    return [
        {"cell_type": "markdown", "id": "selfcheck-heading", "metadata": {},
         "source": HEADING.splitlines(keepends=True)},
        {"cell_type": "code", "execution_count": None, "id": "selfcheck-questions",
         "metadata": {"tags": ["remove-input"]}, "outputs": [],
         "source": ["from posenc.course.selfcheck import show_questions\n", "\n",
                    f'show_questions("{chapter}")']},
    ]


def update(path: Path, chapter: str) -> str:
    """The notebook's JSON text with its self-check cells in place."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    new = {c["id"]: c for c in cells_for(chapter)}
    present = {c.get("id") for c in nb["cells"]}
    nb["cells"] = [new.get(c.get("id"), c) for c in nb["cells"]]
    nb["cells"] += [c for cid, c in new.items() if cid not in present]
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT / "src"))
    from posenc.course.selfcheck import CHAPTERS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only report chapters to update")
    args = ap.parse_args(argv)
    stale = []
    for chapter in CHAPTERS:
        path = ROOT / "book" / f"{chapter}.ipynb"
        text = update(path, chapter)
        if text != path.read_text(encoding="utf-8"):
            stale.append(chapter)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    print(("needs self-check cells: " if args.check else "updated: ") + (", ".join(stale) or
                                                                          "none"))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
