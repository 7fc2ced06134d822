"""site/posenc_site/download.py: the course archive and the repository buttons."""

import zipfile
from pathlib import Path

import pytest
from posenc_site import download as dl

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return dl.build_course_archive(ROOT, tmp_path_factory.mktemp("a") / dl.ARCHIVE_NAME)


def test_archive_holds_the_library_its_data_and_every_chapter(archive):
    names = set(zipfile.ZipFile(archive).namelist())
    top = dl.ARCHIVE_TOP
    for needed in ("pyproject.toml", "requirements.txt", "Makefile", "README.md", "_toc.yml",
                   "src/posenc/__init__.py",
                   "site/posenc_site/notebooks.py",  # make lab's git filter and make test run it
                   "src/posenc/course/results/extrapolation_results.json"):
        assert f"{top}/{needed}" in names, needed
    chapters = {p.name for p in (ROOT / "book").glob("*.ipynb")}
    assert chapters and {f"{top}/book/{c}" for c in chapters} <= names
    assert all(n.startswith(f"{top}/") for n in names)  # one folder: pip and unzip both use it
    assert not [n for n in names if "__pycache__" in n or "/.venv/" in n or "/_build/" in n
                or n.endswith(".pyc") or ".egg-info" in n]


def test_archive_is_deterministic(archive, tmp_path):
    again = dl.build_course_archive(ROOT, tmp_path / "again.zip")
    assert again.read_bytes() == archive.read_bytes()


def test_no_repository_no_buttons():
    options = {"repository_url": "", "launch_buttons": {"binderhub_url": "", "colab_url": ""}}
    assert dl.enable_repository_buttons(options) == options


def test_a_repository_url_shows_source_and_launch_buttons():
    options = {"repository_url": "https://example.org/course/repo",
               "launch_buttons": {"binderhub_url": "", "colab_url": "https://colab.example"}}
    out = dl.enable_repository_buttons(options)
    assert out["use_repository_button"] and out["use_source_button"] and out["use_issues_button"]
    assert out["launch_buttons"]["binderhub_url"] == "https://mybinder.org"
    assert out["launch_buttons"]["colab_url"] == "https://colab.example"  # a chosen one stays
    assert options["launch_buttons"]["binderhub_url"] == ""  # the input is not modified
