"""posenc.course.tables: result tables in the text column, in every edition's language."""

import pytest

from posenc.course import i18n
from posenc.course.tables import table_html


def test_one_language_gives_one_plain_table(monkeypatch):
    monkeypatch.delenv(i18n.BUILD_ENV, raising=False)
    monkeypatch.setattr(i18n, "_chosen", "en")
    out = table_html(["method", "ratio"], [["RoPE <x>", 1.5]], "ratios at 8x", numbers_from=1)
    assert out.count("<table") == 1 and "RoPE &lt;x&gt;" in out  # text is escaped
    assert "text-align:right" in out and "ratios at 8x" in out


def test_the_build_gets_both_editions_and_each_keeps_its_own(monkeypatch):
    monkeypatch.setenv(i18n.BUILD_ENV, "en,zh")
    out = table_html(["method", "L"], [["RoPE", 3]], "L")
    english, chinese = (i18n.keep_language(out, lang) for lang in ("en", "zh"))
    assert english.count("<table") == chinese.count("<table") == 1
    assert "<th>method</th>" in english and "<th>方法</th>" in chinese
    assert "<td>RoPE</td>" in chinese  # a name stays as it is


def test_a_ragged_row_is_refused_by_name():
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        table_html(["a", "b"], [["x"]], "t")
