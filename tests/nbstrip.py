"""Strip a notebook to what the course commits: sources only, no outputs, no widget state.

A git "clean" filter (``make lab`` configures it; see ``.gitattributes``): git pipes a
notebook in on stdin and commits what comes out on stdout, so a reader's or contributor's
executed, saved notebook stays as it is on disk while the commit holds the clean source.

    python tests/nbstrip.py < book/02_sinusoidal.ipynb      # prints the clean notebook
    python tests/nbstrip.py book/*.ipynb --in-place         # cleans files
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# Cell metadata that JupyterLab adds while a reader works, and that says nothing about the course.
VOLATILE_CELL_METADATA = ("execution", "collapsed", "scrolled", "jp-MarkdownHeadingCollapsed")


def strip_notebook(text: str) -> str:
    """The committed form of a notebook's JSON text (nbformat's layout: indent 1, keys sorted)."""
    nb = json.loads(text)
    metadata = nb.setdefault("metadata", {})
    metadata.pop("widgets", None)
    if "language_info" in metadata:  # JupyterLab fills in the kernel's version and lexer
        metadata["language_info"] = {"name": metadata["language_info"].get("name", "python")}
    for cell in nb.get("cells", []):
        for key in VOLATILE_CELL_METADATA:
            cell.get("metadata", {}).pop(key, None)
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if "--in-place" in argv:
        for name in (a for a in argv if a != "--in-place"):
            path = Path(name)
            path.write_text(strip_notebook(path.read_text(encoding="utf-8")), encoding="utf-8")
        return 0
    sys.stdout.write(strip_notebook(sys.stdin.read()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
