"""Golden outputs for the notebook cells tagged ``nbval-check-output``.

Notebooks are committed without outputs (the build executes them), but a cell that
prints a number the course teaches must fail the tests when that number changes.
So the expected text output of every tagged cell lives in ``tests/golden/<name>.json``
(keyed by cell id), and the notebook check runs nbval on copies of the notebooks with
those outputs put back in:

    python tests/nbgolden.py prepare   # book/ -> _build/nbval/book/ with golden outputs
    pytest --nbval-lax _build/nbval/book ...   (what `make notebooks` does)

After an intended change, rebuild the site and refresh the goldens from the executed
notebooks, then review the diff like any other change:

    make book && python tests/nbgolden.py update    (or: make golden)
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
GOLDEN = ROOT / "tests" / "golden"
EXECUTED = ROOT / "_build" / "jupyter_execute" / "book"
STAGING = ROOT / "_build" / "nbval" / "book"
TAG = "nbval-check-output"
TEXT_OUTPUTS = ("stream", "execute_result")


def tagged_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and TAG in c.metadata.get("tags", [])]


def text_outputs(outputs) -> list[dict]:
    """The outputs nbval compares as text: streams and plain-text results."""
    kept = []
    for out in outputs:
        if out["output_type"] == "stream":
            kept.append({"output_type": "stream", "name": out["name"], "text": out["text"]})
        elif out["output_type"] == "execute_result" and "text/plain" in out["data"]:
            kept.append({"output_type": "execute_result", "execution_count": None,
                         "metadata": {}, "data": {"text/plain": out["data"]["text/plain"]}})
    return kept


def golden_path(notebook: Path) -> Path:
    return GOLDEN / f"{notebook.stem}.json"


def update() -> None:
    """Refresh tests/golden/ from the notebooks the last `make book` executed."""
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for source in sorted(BOOK.glob("*.ipynb")):
        executed = EXECUTED / source.name
        if not executed.exists():
            sys.exit(f"{executed} is missing: run `make book` first")
        nb = nbformat.read(executed, as_version=4)
        golden = {cell.id: text_outputs(cell.outputs) for cell in tagged_cells(nb)}
        path = golden_path(source)
        if golden:
            path.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
            print(f"{path.relative_to(ROOT)}: {len(golden)} cells")
        elif path.exists():
            path.unlink()


def prepare() -> None:
    """Copy book/ to _build/nbval/book/ and put the golden outputs back in."""
    shutil.rmtree(STAGING, ignore_errors=True)
    shutil.copytree(BOOK, STAGING, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for staged in sorted(STAGING.glob("*.ipynb")):
        nb = nbformat.read(staged, as_version=4)
        cells = tagged_cells(nb)
        if not cells:
            continue
        path = golden_path(staged)
        golden = json.loads(path.read_text()) if path.exists() else {}
        missing = [c.id for c in cells if c.id not in golden]
        if missing:
            sys.exit(f"{staged.name}: tagged cells {missing} have no golden output; "
                     f"run `make book` then `make golden`")
        for count, cell in enumerate(cells, start=1):
            cell.outputs = [nbformat.from_dict(o) for o in golden[cell.id]]
            cell.execution_count = count  # nbval rejects outputs on a cell marked unrun
            for out in cell.outputs:
                if out["output_type"] == "execute_result":
                    out["execution_count"] = count
        nbformat.write(nb, staged)


if __name__ == "__main__":
    {"update": update, "prepare": prepare}[sys.argv[1]]()
