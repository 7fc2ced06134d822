"""Chapter 8 runs top to bottom *with its solutions*: its code cells and then the Python of
its ``{solution}`` blocks (markdown, so no executor runs them unless asked), in one namespace,
as the build runs them (site/posenc_site/execute.py), here with the training shrunk.
Issue 19: after the chapter registers its own ``logdist`` method, the cost
exercise's solution crashed; a method without a cost formula is now measured."""

from pathlib import Path

import matplotlib
import pytest
from posenc_site import notebooks

import posenc.experiments.extrapolation as extrapolation
from posenc.nn import POSITIONS

pytestmark = pytest.mark.usefixtures("one_thread")

BOOK = Path(__file__).resolve().parents[1] / "book"


def chapter_code(path: Path) -> list[str]:
    """The chapter's code cells, then each solution's Python (as
    site/posenc_site/notebooks.py appends them for the build)."""
    nb = notebooks.read_notebook(path)
    notebooks.add_solution_cells(nb, path.name)
    return [cell.source for cell in nb.cells if cell.cell_type == "code"]


def test_chapter_8_runs_top_to_bottom_solutions_included(monkeypatch, tmp_path):
    matplotlib.use("Agg")
    code = chapter_code(BOOK / "08_side_by_side.ipynb")
    solutions = notebooks.solutions(notebooks.read_notebook(BOOK / "08_side_by_side.ipynb"))
    assert len(solutions) == 3 and all(any(sol in c for c in code) for _, _, sol in solutions)
    real = extrapolation.run_experiment

    def shrunk(config, **kwargs):  # the chapter trains for minutes: a few steps suffice here
        return real(config.replace(steps=4, eval_tokens=256, log_every=2), **kwargs)

    monkeypatch.setattr(extrapolation, "run_experiment", shrunk)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__chapter__"}
    before = set(POSITIONS)
    try:
        for n, source in enumerate(code):
            source = notebooks.code_without_magics(source)
            try:
                exec(compile(source, f"<chapter 8, block {n}>", "exec"), namespace)
            except Exception as error:  # name the block: the chapter is long
                raise AssertionError(f"block {n} failed:\n{source}") from error
        assert {"logdist", "gauss"} <= set(POSITIONS)
    finally:
        for name in set(POSITIONS) - before:
            del POSITIONS[name]
        matplotlib.pyplot.close("all")
