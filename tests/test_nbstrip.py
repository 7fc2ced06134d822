"""The git filter `make lab` turns on: commits hold clean chapters, working copies keep outputs."""

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nbstrip import strip_notebook

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "book" / "06_alibi.ipynb"


def executed_and_saved(text: str) -> str:
    """What JupyterLab writes after Run All and Save: outputs, counts, widget state, lexer."""
    nb = json.loads(text)
    for n, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
        cell["execution_count"] = n + 1
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["hello\n"]}]
        cell["metadata"]["execution"] = {"iopub.status.idle": "2026-11-23T00:00:00Z"}
    nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.7",
                                       "codemirror_mode": {"name": "ipython", "version": 3}}
    return json.dumps(nb, indent=1)


def test_stripping_a_saved_chapter_gives_back_the_committed_file():
    committed = CHAPTER.read_text()
    assert strip_notebook(executed_and_saved(committed)) == committed
    assert strip_notebook(committed) == committed


def test_tags_and_sources_are_kept():
    nb = json.loads(CHAPTER.read_text())
    before = copy.deepcopy([(c["source"], c["metadata"].get("tags")) for c in nb["cells"]])
    after = json.loads(strip_notebook(executed_and_saved(CHAPTER.read_text())))
    assert [(c["source"], c["metadata"].get("tags")) for c in after["cells"]] == before


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_filter_keeps_outputs_out_of_commits(tmp_path):
    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True,
                              text=True).stdout

    git("init", "-q")
    git("config", "user.email", "reader@example.org")
    git("config", "user.name", "reader")
    # the two lines `make lab` runs (Makefile, target git-filter)
    git("config", "filter.posenc-notebook.clean", f"{sys.executable} {ROOT / 'tests/nbstrip.py'}")
    git("config", "filter.posenc-notebook.smudge", "cat")
    shutil.copy(ROOT / ".gitattributes", tmp_path / ".gitattributes")
    (tmp_path / "book").mkdir()
    saved = executed_and_saved(CHAPTER.read_text())
    (tmp_path / "book" / CHAPTER.name).write_text(saved)
    git("add", ".")
    git("commit", "-qm", "a reader's save")
    assert git("show", f"HEAD:book/{CHAPTER.name}") == CHAPTER.read_text()
    assert (tmp_path / "book" / CHAPTER.name).read_text() == saved  # the working copy keeps all
    assert git("status", "--porcelain") == ""
