"""The course's JupyterLab settings and the notebooks' kernelspec: what keeps a chapter that a
reader saved and reopened working, and `git status` clean after a save."""

import json
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = ROOT / "site" / "jupyterlab" / "posenc-course.json"
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def test_the_package_installs_the_settings_where_jupyterlab_merges_them():
    # `pip install "posenc-course.zip[lab]"` (one chapter) gets them as `make lab` does
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = project["tool"]["setuptools"]["data-files"]
    assert data["share/jupyter/lab/settings/overrides.d"] == [str(SETTINGS.relative_to(ROOT))]
    assert "site/jupyterlab/posenc-course.json" in (ROOT / "Makefile").read_text()


def test_settings_save_widget_state_and_fetch_no_news():
    settings = json.loads(SETTINGS.read_text())
    assert settings["@jupyter-widgets/jupyterlab-manager:plugin"]["saveState"] is True
    news = settings["@jupyterlab/apputils-extension:notification"]
    assert news["fetchNews"] == "false" and news["checkForUpdates"] is False


def test_every_setting_exists_in_the_installed_jupyterlab():
    # a misspelt plugin or key would be ignored by JupyterLab without a word
    share = Path(sys.prefix) / "share" / "jupyter"
    schemas = [share / "lab" / "schemas", *(share / "labextensions").glob("**/schemas")]
    for plugin, values in json.loads(SETTINGS.read_text()).items():
        package, name = plugin.split(":")
        found = [s / package / f"{name}.json" for s in schemas
                 if (s / package / f"{name}.json").exists()]
        assert found, f"no schema for {plugin}"
        properties = json.loads(found[0].read_text())["properties"]
        assert set(values) <= set(properties), plugin


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_kernelspec_is_what_jupyterlab_saves(path):
    # JupyterLab writes the running kernel's spec on save; ipykernel's default python3 spec
    # says "Python 3 (ipykernel)". Any other display_name makes a save change the file.
    from ipykernel.kernelspec import get_kernel_dict

    spec = json.loads(path.read_text())["metadata"]["kernelspec"]
    assert spec == {"display_name": get_kernel_dict()["display_name"], "language": "python",
                    "name": "python3"}
