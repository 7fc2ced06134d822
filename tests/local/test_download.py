"""A reader with one downloaded chapter and the course archive, outside the repository.

The chapter's first cell stops with install instructions; the one-line install the site
documents (``book/running_locally.md``) is run as written in a fresh virtual environment;
then the chapter executes there top to bottom. Chapter 9 is the one that also needs data
files, which it must find through the library.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import venv

import nbformat
import pytest
from posenc_site.download import ARCHIVE_NAME, build_course_archive
from posenc_site.notebooks import CHECK_ID, INSTALL, INSTALLS

from .conftest import BOOK, ROOT

CHAPTER = "09_extrapolation.ipynb"


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    """A folder with the chapter and the archive, and a fresh venv beside it."""
    home = tmp_path_factory.mktemp("reader")
    (home / CHAPTER).write_bytes((BOOK / CHAPTER).read_bytes())
    build_course_archive(ROOT, home / ARCHIVE_NAME)
    venv.create(home / "venv", with_pip=True)
    # HOME: no user-level Jupyter config or kernels; PIP_RETRIES: where PyTorch's index is not
    # reachable (as on the course's own build machine) pip moves on at once instead of retrying.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env.update(HOME=str(home), PATH=f"{home / 'venv' / 'bin'}:{env['PATH']}", PIP_RETRIES="0",
               OMP_NUM_THREADS="2")
    return home, env


def test_without_the_library_the_chapter_says_what_to_install(reader):
    home, env = reader
    check = next(c for c in nbformat.read(home / CHAPTER, as_version=4).cells
                 if c.get("id") == CHECK_ID)
    run = subprocess.run(["python", "-c", check.source], cwd=home, env=env,
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert INSTALL in run.stderr and "Traceback" in run.stderr


@pytest.fixture(scope="module")
def installed(reader):
    """The documented install, line by line, in the reader's fresh environment."""
    home, env = reader
    runs = []
    for line in INSTALLS:  # as documented: torch's CPU build first, then the course
        runs.append(subprocess.run(shlex.split(line), cwd=home, env=env, capture_output=True,
                                   text=True, timeout=900))
        if runs[-1].returncode:
            break
    return runs


def test_the_documented_install_then_the_chapter_runs(reader, installed):
    home, env = reader
    for install in installed:
        assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    packages = subprocess.run(["python", "-m", "pip", "list", "--format=json"], cwd=home,
                              env=env, capture_output=True, text=True, check=True)
    names = {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(packages.stdout)}
    assert "posenc" in names and "jupyterlab-myst" in names
    assert not [n for n in names if n.startswith("nvidia") or n == "triton"], "a CUDA build"

    out = home / "executed.ipynb"
    run = subprocess.run(["jupyter", "nbconvert", "--to", "notebook", "--execute", CHAPTER,
                          "--output", out.name, "--ExecutePreprocessor.timeout=600"],
                         cwd=home, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    executed = nbformat.read(out, as_version=4)
    errors = [o for c in executed.cells if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"]
    assert not errors
    assert sum(bool(c.outputs) for c in executed.cells if c.cell_type == "code") > 5


# --- The same reader in JupyterLab: `jupyter lab 04_rope.ipynb` from that environment ---

ONE = "04_rope.ipynb"


@pytest.fixture(scope="module")
def reader_lab(reader, installed, tmp_path_factory):
    from .conftest import Lab

    home, env = reader
    if any(i.returncode for i in installed):
        pytest.skip("the install failed (see test_the_documented_install_then_the_chapter_runs)")
    folder = tmp_path_factory.mktemp("one-chapter")
    (folder / ONE).write_bytes((BOOK / ONE).read_bytes())
    server = Lab(folder, tmp_path_factory.mktemp("lab-home"),
                 jupyter=home / "venv" / "bin" / "jupyter", env=env)
    yield server
    server.stop()


def test_the_install_carries_the_course_jupyterlab_settings(reader, installed):
    home, _ = reader
    venv_settings = home / "venv" / "share" / "jupyter" / "lab" / "settings" / "overrides.d"
    course = json.loads((ROOT / "site" / "jupyterlab" / "posenc-course.json").read_text())
    assert json.loads((venv_settings / "posenc-course.json").read_text()) == course


def test_one_chapter_saved_and_reopened_keeps_working_sliders(reader_lab, browser):
    from .labpage import Opened, answer_the_questions, reopen_and_move_a_slider

    opened = Opened(browser, reader_lab, ONE)
    opened.run_all()
    errors = opened.page.locator(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")
    assert errors.count() == 0
    opened.move_first_slider()
    for theme in ("light", "dark"):
        assert answer_the_questions(opened, ONE.removesuffix(".ipynb"), theme) == []
    saved = opened.save(reader_lab.folder / ONE)
    assert saved["metadata"].get("widgets"), "widget state was not saved with the notebook"
    committed = json.loads((BOOK / ONE).read_text())["metadata"]["kernelspec"]
    assert saved["metadata"]["kernelspec"] == committed
    assert "Jupyter news" not in opened.page.inner_text("body")
    assert opened.foreign_requests() == [] and opened.console_problems() == []
    opened.close()
    again = reopen_and_move_a_slider(browser, reader_lab, ONE)
    assert again.foreign_requests() == [] and again.console_problems() == []
    again.close()


def test_the_chinese_download_runs_in_chinese(reader, installed):
    """The Chinese edition's download of a chapter (what zh/_sources/ serves), in the same
    environment: it runs, and its figures, sliders and questions come out in Chinese, with
    every glyph (no matplotlib font warning in any output)."""
    import re

    from posenc_site import i18n as site_i18n

    home, env = reader
    chapter = "06_alibi"
    nb = site_i18n.chinese_notebook(BOOK / f"{chapter}.ipynb", site_i18n.catalogue(chapter))
    (home / f"{chapter}.zh.ipynb").write_text(json.dumps(nb, ensure_ascii=False), "utf-8")
    run = subprocess.run(["jupyter", "nbconvert", "--to", "notebook", "--execute",
                          f"{chapter}.zh.ipynb", "--output", "executed.zh.ipynb",
                          "--ExecutePreprocessor.timeout=600"],
                         cwd=home, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    executed = nbformat.read(home / "executed.zh.ipynb", as_version=4)
    # the figures are in the saved widget state, the quiz in the last cell's output
    everything = json.dumps(executed, ensure_ascii=False)
    stderr = [o.get("text", "") for c in executed.cells if c.cell_type == "code"
              for o in c.outputs if o.get("name") == "stderr"]
    assert not [s for s in stderr if "findfont" in s or "glyph" in s], stderr
    alts = re.findall(r'alt=\\"([^"\\]*)', everything)  # frame figures' alt text, if any
    assert all(re.search(r"[\u4e00-\u9fff]", a) for a in alts), alts[:3]
    # chapter 6's figures are live ones (posenc-live.js): the saved state carries their words,
    # in the notebook's language only, each title in Chinese
    state = executed.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    live = [m["state"] for m in state.values() if m["model_name"] == "AnyModel"]
    assert sorted(s["kind"] for s in live) == ["alibi_bias", "alibi_slopes"]
    assert all(list(s["text"]) == ["zh"] for s in live), [list(s["text"]) for s in live]
    assert all(re.search(r"[\u4e00-\u9fff]", s["text"]["zh"][key]) for s in live
               for key in ("hint", "xlabel", "ylabel"))
    assert f"posencQuiz{chapter[3:]}zh" in everything  # the questions, in Chinese
