"""What a reader needs to run the course away from the site (loaded from _config.yml).

* Builds the course's source as one archive, ``_downloads/posenc-course.zip`` in the
  site: the library (``src/posenc``), the chapters, the tests and the build files.
  It is a pip-installable source tree, so a reader who downloaded one chapter runs::

      pip install --no-deps torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
      pip install "posenc-course.zip[lab]"

  (``book/running_locally.md`` explains the lines), and unzipped it is the whole course,
  ``make lab`` included. The archive is deterministic: the same sources give the same
  bytes, so a static host can cache it.
* A repository, once configured (``repository.url`` in ``_config.yml``), shows up as the
  usual buttons: the repository and source links, and Binder/Colab launch buttons
  (``launch_buttons`` in ``_config.yml`` picks other services). Without one, none appear.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

ARCHIVE_NAME = "posenc-course.zip"
ARCHIVE_TOP = "posenc-course"  # the folder the archive unpacks to
# What a reader needs to install the library, run the chapters and rebuild the site.
# site/: the site's build and the notebook tool (posenc_site), which `make lab`'s git filter
# and `make test` run.
INCLUDE = ("src", "book", "locale", "tests", "site", "benchmarks", "README.md", "Makefile",
           "requirements.txt", "pyproject.toml", "_config.yml", "_toc.yml", ".gitattributes")
EXCLUDE_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".hypothesis"}
EXCLUDE_SUFFIXES = (".pyc", ".egg-info", ".mo")  # .mo: compiled by each build
FIXED_TIME = (2026, 1, 1, 0, 0, 0)  # every entry: the same sources give the same bytes
DEFAULT_LAUNCH = {"binderhub_url": "https://mybinder.org",
                  "colab_url": "https://colab.research.google.com"}


def course_files(root: Path) -> list[Path]:
    """The files the archive holds, relative to ``root``, sorted."""
    files = []
    for name in INCLUDE:
        path = root / name
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        for file in candidates:
            rel = file.relative_to(root)
            if (file.is_file() and not EXCLUDE_PARTS.intersection(rel.parts)
                    and not any(part.endswith(EXCLUDE_SUFFIXES) for part in rel.parts)):
                files.append(rel)
    return sorted(files)


def build_course_archive(root: Path, destination: Path) -> Path:
    """Write the course archive (see the module docstring) to ``destination``; return it."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(destination, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for rel in course_files(root):
            info = zipfile.ZipInfo(f"{ARCHIVE_TOP}/{rel.as_posix()}", date_time=FIXED_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, (root / rel).read_bytes())
    return destination


def enable_repository_buttons(options: dict) -> dict:
    """Theme options with the source and launch buttons on when a repository URL is set."""
    if not options.get("repository_url"):
        return options
    options = dict(options, use_repository_button=True, use_source_button=True,
                   use_issues_button=True)
    launch = dict(options.get("launch_buttons") or {})
    for key, url in DEFAULT_LAUNCH.items():
        launch[key] = launch.get(key) or url
    options["launch_buttons"] = launch
    return options


def _on_config(app, config):
    config.html_theme_options = enable_repository_buttons(dict(config.html_theme_options))


def _write_archive(app, exception):
    if exception is None and app.builder.format == "html":
        build_course_archive(Path(app.confdir), Path(app.outdir) / "_downloads" / ARCHIVE_NAME)


def setup(app):
    app.connect("config-inited", _on_config)
    app.connect("build-finished", _write_archive)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
