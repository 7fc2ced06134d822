"""The course's environment variables, read in this one module.

The site's build and the test runs talk to the kernels that execute the chapters through
environment variables: a kernel is another process, and nothing else reaches it. This
module is the only one that reads them, each through one function; the site's build sets
them with :func:`build_environment`. Every other module (:mod:`posenc.course.i18n`, the
slider figures, the site's execution and browser helpers) calls these.

* ``POSENC_LANGUAGES`` (:func:`languages_to_draw`): ``en,zh`` in the site's build, so every
  figure, slider and quiz carries both editions' versions;
* ``POSENC_LANGUAGE`` (:func:`notebook_language`): the one language a notebook run on its own
  draws in (default ``en``; :func:`posenc.course.i18n.set_language` overrides it);
* ``POSENC_I18N_MISSING``, ``POSENC_I18N_SEEN`` (:func:`record_file`): the files the build
  appends every untranslated, and every translated, text to;
* ``POSENC_DRAFT_FRAMES`` (:func:`draft_frames`): ``1`` makes a slider figure draw every
  frame but rasterise only the first (``make nbval``);
* ``POSENC_SITE`` (:func:`site_dir`): the built site the browser helpers serve.

Pure Python, so the site's helpers and the figure style read it without torch.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["LANGUAGES", "BUILD_ENV", "LANGUAGE_ENV", "MISSING_ENV", "SEEN_ENV", "DRAFT_ENV",
           "SITE_ENV", "check_language", "notebook_language", "languages_to_draw",
           "record_file", "draft_frames", "site_dir", "build_environment"]

#: The course's languages: English (the source) and Simplified Chinese.
LANGUAGES = ("en", "zh")
BUILD_ENV = "POSENC_LANGUAGES"
LANGUAGE_ENV = "POSENC_LANGUAGE"
MISSING_ENV = "POSENC_I18N_MISSING"
SEEN_ENV = "POSENC_I18N_SEEN"
DRAFT_ENV = "POSENC_DRAFT_FRAMES"
SITE_ENV = "POSENC_SITE"
#: The record files, by the name :func:`record_file` takes.
_RECORDS = {"missing": MISSING_ENV, "seen": SEEN_ENV}


def check_language(lang: str, name: str = "lang") -> str:
    """``lang`` if it is one of :data:`LANGUAGES`, else ``ValueError`` naming ``name``."""
    if lang not in LANGUAGES:
        raise ValueError(f"{name} must be one of {LANGUAGES}, got {lang!r}")
    return lang


def notebook_language(chosen: str | None = None) -> str:
    """The one language a notebook run on its own draws in: ``chosen`` (its
    :func:`~posenc.course.i18n.set_language`), else :data:`LANGUAGE_ENV`, else English;
    ``ValueError`` naming the variable for a language the course does not have."""
    if chosen:
        return check_language(chosen)
    return check_language(os.environ.get(LANGUAGE_ENV) or "en", LANGUAGE_ENV)


def languages_to_draw(chosen: str | None = None) -> tuple[str, ...]:
    """The languages each output carries: both in the site's build (:data:`BUILD_ENV`),
    else the notebook's one (:func:`notebook_language`)."""
    both = os.environ.get(BUILD_ENV, "")
    if both:
        return tuple(check_language(x.strip(), BUILD_ENV) for x in both.split(","))
    return (notebook_language(chosen),)


def record_file(kind: str) -> Path | None:
    """The file the site's build records ``kind`` texts in (``"missing"``: untranslated,
    ``"seen"``: translated), or ``None`` outside the build."""
    if kind not in _RECORDS:
        raise ValueError(f"kind must be one of {tuple(_RECORDS)}, got {kind!r}")
    path = os.environ.get(_RECORDS[kind])
    return Path(path) if path else None


def draft_frames() -> bool:
    """Whether slider figures draw draft frames (:data:`DRAFT_ENV` set and not ``0``)."""
    return os.environ.get(DRAFT_ENV, "") not in ("", "0")


def site_dir(default: Path) -> Path:
    """The built site the browser helpers serve: :data:`SITE_ENV`, else ``default``."""
    return Path(os.environ.get(SITE_ENV) or default)


def build_environment(missing: Path, seen: Path) -> dict[str, str]:
    """The variables the site's build sets for the kernels it starts: every output in both
    languages, the untranslated texts recorded in ``missing``, every translated one in
    ``seen``."""
    return {BUILD_ENV: ",".join(LANGUAGES), MISSING_ENV: str(missing), SEEN_ENV: str(seen)}
