"""Notebooks are committed without outputs: the build executes them."""

import json
from pathlib import Path

import nbformat
import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
NOTEBOOKS = sorted(BOOK.rglob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_has_no_outputs(path):
    nb = json.loads(path.read_text())
    dirty = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
             and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, f"{path.name}: cells {dirty} have outputs; clear them before committing"
    assert "widgets" not in nb.get("metadata", {}), f"{path.name} carries saved widget state"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_checked_cell_has_a_golden_output(path):
    """A tagged cell without a golden output would compare nothing (posenc_site.notebooks
    golden)."""
    from posenc_site.notebooks import golden_path, tagged_cells

    nb = nbformat.read(path, as_version=4)
    ids = [c.id for c in tagged_cells(nb)]
    golden = json.loads(golden_path(path).read_text()) if golden_path(path).exists() else {}
    assert sorted(golden) == sorted(ids), (
        f"{path.name}: golden outputs out of date; run `make book` then `make golden`")
    assert all(golden[i] for i in ids), f"{path.name}: a checked cell prints nothing"
