"""Committed experiment results, shipped with the library.

The chapters load their data through :func:`load_results`, not through a path
relative to the notebook, so a chapter downloaded on its own (with ``posenc``
installed) finds its data wherever it runs.

Each file is written by ``python -m posenc.experiments.extrapolation --output ...``
and holds its schema version, its configuration and the corpus hashes beside the
numbers (:mod:`posenc.experiments.extrapolation.results`).
"""

from __future__ import annotations

from pathlib import Path

from ...experiments.extrapolation.results import Results, read_results

RESULTS_DIR = Path(__file__).resolve().parent


def results_path(name: str) -> Path:
    """The path of the committed results file ``name`` (e.g. ``"extrapolation_results.json"``)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str naming a results file, got {type(name).__name__}")
    path = RESULTS_DIR / name
    if path.parent != RESULTS_DIR or not path.is_file():
        available = ", ".join(sorted(p.name for p in RESULTS_DIR.glob("*.json")))
        raise ValueError(
            f"name must be one of the committed results files ({available}), got {name!r}")
    return path


def load_results(name) -> Results:
    """A results file as typed records (:class:`~posenc.experiments.extrapolation.Results`,
    which also reads as its JSON: ``results["variants"]["rope"]["loss"]``), read through
    the migration of older files (:func:`~posenc.experiments.extrapolation.migrate`): a
    committed one by ``name`` (``"main.json"``), or any file by its path (a ``Path``, or a
    string holding a directory separator), e.g. one your own run wrote."""
    if isinstance(name, Path) or (isinstance(name, str) and ("/" in name or "\\" in name)):
        return read_results(name)
    return read_results(results_path(name))
