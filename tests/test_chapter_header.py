"""Every chapter says how to run it, and stops with instructions when posenc is missing."""

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from chapter_header import CHECK_ID, INSTALL, INSTALL_TORCH, INSTALLS, NOTE_ID

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "book").glob("[0-9]*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_has_the_note_and_the_library_check_first(path):
    nb = nbformat.read(path, as_version=4)
    ids = [c.get("id") for c in nb.cells]
    assert ids[1] == NOTE_ID, "run `python tests/chapter_header.py book/*.ipynb`"
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert first_code.id == CHECK_ID, "run `python tests/chapter_header.py book/*.ipynb`"


def test_the_check_names_what_to_install_when_posenc_is_missing():
    cells = nbformat.read(CHAPTERS[0], as_version=4).cells
    check = next(c for c in cells if c.get("id") == CHECK_ID)
    # -I -S: no site-packages, so posenc (and everything else) is missing, as on a fresh machine
    run = subprocess.run([sys.executable, "-I", "-S", "-c", check.source],
                         capture_output=True, text=True)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: This chapter needs the course's library")
    assert INSTALL in last and INSTALL_TORCH in last and "posenc-course.zip" in last


def test_the_install_line_is_the_one_the_running_locally_page_documents():
    page = (ROOT / "book" / "running_locally.md").read_text()
    documented = re.findall(r"^pip install .*$", page, flags=re.M)
    assert [line.replace('"', "'") for line in documented] == list(INSTALLS)


def test_the_torch_line_installs_the_pinned_torch_alone_from_the_cpu_index():
    # the same two steps as make: torch alone (no dependencies) from the CPU index, pinned as
    # in requirements.txt; then the rest with nothing but the ordinary index
    pin = re.search(r"^torch==(\S+)", (ROOT / "requirements.txt").read_text(), re.M).group(1)
    assert f"torch=={pin}" in INSTALL_TORCH.split() and "--no-deps" in INSTALL_TORCH.split()
    make = (ROOT / "Makefile").read_text()
    index = re.search(r"^TORCH_INDEX \?= (\S+)", make, re.M).group(1)
    assert INSTALL_TORCH.split()[-2:] == ["--index-url", index]
    assert "index-url" not in INSTALL
