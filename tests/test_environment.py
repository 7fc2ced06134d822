"""The course's environment variables are read in one module, posenc.course.environment:
what the site's build sets there is what every reader of them sees."""

import re
from pathlib import Path

import posenc_site
import pytest

import posenc
from posenc.course import environment as env
from posenc.course import i18n

ALL = (env.BUILD_ENV, env.LANGUAGE_ENV, env.MISSING_ENV, env.SEEN_ENV, env.DRAFT_ENV,
       env.SITE_ENV)


@pytest.fixture
def clean(monkeypatch):
    for name in ALL:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(i18n, "_chosen", None)
    return monkeypatch


def test_no_other_module_reads_the_courses_variables():
    """Neither a POSENC_ name nor os.environ/getenv beside one, outside environment.py."""
    roots = [Path(posenc.__file__).parent, Path(posenc_site.__file__).parent]
    readers = []
    for root in roots:
        for path in root.rglob("*.py"):
            text = path.read_text()
            if path.name != "environment.py" and re.search(r"[\"']POSENC_[A-Z_]+[\"']", text):
                readers.append(path.name)
    assert readers == []


def test_outside_the_build_a_notebook_draws_one_language(clean):
    assert env.languages_to_draw() == ("en",) == i18n.output_languages()
    clean.setenv(env.LANGUAGE_ENV, "zh")
    assert env.languages_to_draw() == ("zh",) and i18n.language() == "zh"
    assert env.languages_to_draw("en") == ("en",)  # set_language wins over the variable
    i18n.set_language("en")
    assert i18n.output_languages() == ("en",) and i18n.language() == "en"


def test_the_builds_settings_reach_every_reader(clean, tmp_path):
    missing, seen = tmp_path / "missing.jsonl", tmp_path / "seen.jsonl"
    for name, value in env.build_environment(missing, seen).items():
        clean.setenv(name, value)
    i18n.set_language("zh")  # a Chinese notebook in the build still draws both
    assert env.languages_to_draw() == env.LANGUAGES == i18n.output_languages()
    assert i18n.language() == "zh"
    assert (env.record_file("missing"), env.record_file("seen")) == (missing, seen)
    i18n.translate("a text no table has", "zh")
    assert missing.read_text(encoding="utf-8") == '"a text no table has"\n'
    assert '"a text no table has"' in seen.read_text(encoding="utf-8")


@pytest.mark.parametrize("name, value", [(env.BUILD_ENV, "en,fr"), (env.LANGUAGE_ENV, "de")])
def test_a_language_the_course_lacks_names_the_variable(clean, name, value):
    clean.setenv(name, value)
    with pytest.raises(ValueError, match=f"{name} must be one of"):
        env.languages_to_draw()


def test_draft_frames_the_record_files_and_the_site(clean, tmp_path):
    assert not env.draft_frames() and env.record_file("missing") is None
    for value, draft in (("1", True), ("0", False), ("", False), ("yes", True)):
        clean.setenv(env.DRAFT_ENV, value)
        assert env.draft_frames() is draft
    with pytest.raises(ValueError, match="kind must be one of"):
        env.record_file("lost")
    assert env.site_dir(tmp_path) == tmp_path
    clean.setenv(env.SITE_ENV, str(tmp_path / "site"))
    assert env.site_dir(tmp_path) == tmp_path / "site"
