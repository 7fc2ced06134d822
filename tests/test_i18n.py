"""The Chinese edition's course layer (posenc.course.i18n) and its catalogues
(posenc_site.i18n)."""

import json
import re
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_figures_legibility import SLIDER_FIGURES  # noqa: E402
from test_figures_not_clipped import _check as check_not_clipped  # noqa: E402

from posenc.course import i18n  # noqa: E402
from posenc.course.figures.style import COURSE_RC, FRAME_DPI  # noqa: E402
from posenc.course.selfcheck import CHAPTERS, translated_questions  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
from posenc_site import i18n as site_i18n  # noqa: E402
from posenc_site.pages import language_switch  # noqa: E402

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_english_is_the_source_and_comes_back_unchanged():
    for text in ("PE heatmap: d_model=64, base=10000", "position p", ""):
        assert i18n.translate(text, "en") == text


def test_a_phrase_becomes_chinese_and_the_numbers_and_identifiers_stay():
    out = i18n.translate("PE heatmap: d_model=64, base=10000", "zh", record=False)
    assert CJK.search(out) and "d_model=64" in out and "10000" in out
    assert i18n.leftover_english(out) == []


def test_leftover_english_ignores_math_identifiers_and_allowed_names():
    assert i18n.leftover_english("RoPE 的 $\\theta_i$，d_model=64，head_dim") == []
    assert i18n.leftover_english("RoPE 的 frequency") == ["frequency"]


def test_an_unknown_text_is_recorded_as_untranslated(tmp_path, monkeypatch):
    record = tmp_path / "missing.jsonl"
    monkeypatch.setenv(i18n.MISSING_ENV, str(record))
    i18n.translate("a sentence the table has never seen", "zh")
    i18n.translate("PE heatmap", "zh")  # translated: not recorded
    lines = [json.loads(x) for x in record.read_text(encoding="utf-8").splitlines()]
    assert lines == ["a sentence the table has never seen"]


def test_bad_language_names_the_argument():
    with pytest.raises(ValueError, match="lang must be one of"):
        i18n.translate("x", "fr")
    with pytest.raises(ValueError, match="lang must be one of"):
        i18n.set_language("de")


def test_build_draws_both_languages_and_a_notebook_one(monkeypatch):
    monkeypatch.delenv(i18n.BUILD_ENV, raising=False)
    monkeypatch.delenv(i18n.LANGUAGE_ENV, raising=False)
    monkeypatch.setattr(i18n, "_chosen", None)
    assert i18n.output_languages() == ("en",)
    i18n.set_language("zh")
    assert i18n.output_languages() == ("zh",)
    monkeypatch.setenv(i18n.BUILD_ENV, "en,zh")
    assert i18n.output_languages() == ("en", "zh")


@given(st.dictionaries(st.sampled_from(i18n.LANGUAGES),
                       st.text(st.characters(blacklist_characters="<>"), max_size=30),
                       min_size=1))
def test_each_edition_keeps_exactly_its_own_version(versions):
    html = "<p>before</p>" + i18n.marked(versions) + "<p>after</p>"
    for lang in versions:
        kept = i18n.keep_language(html, lang)
        assert kept == "<p>before</p>" + versions[lang] + "<p>after</p>" or len(versions) == 1


def test_translated_figure_reletters_and_restores():
    fig, ax = plt.subplots()
    ax.set_title("PE heatmap: d_model=64, base=10000")
    ax.set_xlabel("position p")
    with i18n.translated_figure(fig, "zh"):
        assert CJK.search(ax.get_title())
        assert i18n.cjk_font() in ax.title.get_fontfamily()
    assert ax.get_title() == "PE heatmap: d_model=64, base=10000"
    assert i18n.cjk_font() not in ax.title.get_fontfamily()
    plt.close(fig)


def test_a_chinese_font_is_installed_for_the_figures():
    assert i18n.cjk_font() is not None, "make fonts installs Debian's fonts-wqy-microhei"


@pytest.mark.parametrize("draw, values, figsize", SLIDER_FIGURES)
def test_chinese_slider_figures_keep_all_their_text(draw, values, figsize):
    """Chinese labels are as uncut as English ones (test_figures_not_clipped.py's check)."""
    with plt.rc_context(COURSE_RC):
        fig = plt.figure(figsize=figsize, dpi=FRAME_DPI)
        draw(fig, **values)
        with i18n.translated_figure(fig, "zh"):
            check_not_clipped(fig, round(figsize[0] * FRAME_DPI))


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_every_question_reads_in_chinese(chapter):
    for q in translated_questions(chapter, "zh"):
        texts = [q["question"]] + [a.get("answer", "") for a in q["answers"]] \
            + [a["feedback"] for a in q["answers"]]
        for text in filter(None, texts):
            assert i18n.leftover_english(text) == [], text


def test_inline_math_is_never_translated():
    table = i18n._Table({"phrases": {"the identity I": "单位矩阵 I", "so I": "所以我"}})
    assert i18n._translated("$A_0 = I$, so I", table) == "$A_0 = I$，所以我"
    # a whole label with math in it is still one phrase of the table
    assert i18n.translate("distance $i - j$ (bytes)", "zh", record=False) == "距离 $i - j$（字节）"


def test_a_one_word_phrase_is_refused_and_a_label_is_only_a_whole_text():
    """`of` -> `/` as a phrase turned "column 2i of the pair" into "column 2i / the pair"."""
    with pytest.raises(ValueError, match="'of'"):
        i18n._Table({"phrases": {"of": "/"}})
    table = i18n._Table({"labels": {"learned": "可学习", "of": "/"},
                         "phrases": {"column {} of the pair": "维度对的第 {} 列"}})
    assert i18n._translated("learned", table) == "可学习"
    assert i18n._translated(" learned ", table) == " 可学习 "
    assert i18n._translated("learned table", table) == "learned table"  # not a whole text
    assert i18n._translated("column 12 of the pair", table) == "维度对的第 12 列"


@given(st.integers(0, 10**6), st.sampled_from(["ntk", "yarn", "linear"]))
def test_a_whole_label_template_keeps_its_numbers_and_translates_its_name(count, method):
    text = f"{method}: {count:,} unseen"
    chinese = i18n.translate(text, "zh", record=False)
    assert f"{count:,} 对未见过" in chinese and i18n.leftover_english(chinese) == []
    assert chinese.startswith(i18n.translate(method, "zh", record=False) + "：")


def test_the_example_sentences_stay_as_the_prose_quotes_them():
    """Chapter 1's "I love you" and chapter 12's CoPE sentence are quoted in English by both
    editions' prose, so the figures keep them too: never 我 for I, 离开了 for left."""
    from posenc.course.figures.learned_biases import COPE_SENTENCE

    for token in [*COPE_SENTENCE, "I", "love", "you", "[late]"]:
        assert i18n.translate(token, "zh", record=False) == token
        assert i18n.leftover_english(token) == []
    title = i18n.translate('"I love you" vs "you love I": position=rope', "zh", record=False)
    assert title == '"I love you" 与 "you love I"：位置编码 = RoPE'
    assert i18n.leftover_english(title) == []
    # an English word that is not an example's is still untranslated
    assert i18n.leftover_english('"I love cats"') == ["love", "cats"]


@pytest.mark.parametrize("english, chinese", [
    # a Chinese label's separator between two Latin settings is full-width too
    ("PE heatmap: d_model=64, base=10000", "PE 热力图：d_model=64，base=10000"),
    ("Same two tokens, same distance, different places", "同样两个 token，同样距离，不同位置"),
    ("wavelength (positions)", "波长（位置数）"),
    ("original\n(64 rows)", "原始\n（64 行）"),
    ("cos(angle) per token and pair (base 100)", "各 token 与维度对的 cos(角度) (base 100)"),
])
def test_chinese_figure_text_has_full_width_punctuation(english, chinese):
    assert i18n.translate(english, "zh", record=False) == chinese


@pytest.mark.parametrize("label, chinese", [
    # review 2026-11-29, F: a separator between two Latin or digit neighbours in a Chinese label
    ("T = 32,768: 23 对未见过", "T = 32,768：23 对未见过"),
    ("RoPE，微调长度 4×, PI", "RoPE，微调长度 4×，PI"),
    ("仅靠偏置的 ALiBi: 8 个头", "仅靠偏置的 ALiBi：8 个头"),
    ("角度 $a, b$, base 10", "角度 $a, b$，base 10"),  # never inside math
    ("相同 q, k\n在距离 r 处", "相同 q，k\n在距离 r 处"),
    # what stays: a thousands comma, a decimal point, a ratio, a Latin citation's comma ...
    ("d=1.5, 32,768 个 token, 比例 1:4", "d=1.5，32,768 个 token，比例 1:4"),
    ("见 Kazemnejad et al., 2023 的结论", "见 Kazemnejad et al., 2023 的结论"),
    # ... and a group that holds no Chinese, half- or full-width, or a quoted example
    ("划分（16, 24, 24），base 1e+06", "划分（16, 24, 24），base 1e+06"),
    ("四个轴 (T, H, W, L)，每个轴 16 对", "四个轴 (T, H, W, L)，每个轴 16 对"),
    ('"I love you, you" 的注意力', '"I love you, you" 的注意力'),
    ("（a 在 s, b 在 s + 3）", "（a 在 s，b 在 s + 3）"),  # a group with Chinese is prose
    # a label without Chinese keeps its punctuation
    ("T = 32,768: 23 unseen, PI", "T = 32,768: 23 unseen, PI"),
])
def test_a_chinese_label_gets_full_width_separators_between_latin_words(label, chinese):
    assert i18n._full_width(label) == chinese


def test_a_template_label_gets_a_full_width_separator_after_its_number():
    """The slider title of chapter 15 as the 2026-11-29 review found it: "T = 32,768: 23 对"."""
    table = i18n._Table({"phrases": {"T = {}: {} pairs unseen": "T = {}: {} 对未见过",
                                     "fine-tuned at {}×": "微调长度 {}×"}})
    assert i18n._translated("T = 32,768: 23 pairs unseen", table) == "T = 32,768：23 对未见过"
    assert i18n._translated("RoPE, fine-tuned at 4×, PI", table) == "RoPE，微调长度 4×，PI"


@given(st.integers(0, 10**9), st.integers(0, 999), st.sampled_from([",", ":", ";"]))
def test_numbers_keep_their_commas_and_points_in_a_chinese_label(n, m, mark):
    label = f"T = {n:,}{mark} {m / 8} 对"
    wide = {",": "，", ":": "：", ";": "；"}[mark]
    assert i18n._full_width(label) == f"T = {n:,}{wide}{m / 8} 对"


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_questions_keep_their_math(chapter):
    """Every formula of a question, its answers and feedback reads the same in Chinese."""
    math = re.compile(r"\$[^$]*\$")
    for q_en, q_zh in zip(translated_questions(chapter, "en"), translated_questions(chapter, "zh"),
                          strict=True):
        for key in ("question",):
            assert math.findall(q_en[key]) == math.findall(q_zh[key]), q_zh[key]
        for a_en, a_zh in zip(q_en["answers"], q_zh["answers"], strict=True):
            for key in ("answer", "feedback"):
                en, zh = a_en.get(key) or "", a_zh.get(key) or ""
                assert math.findall(en) == math.findall(zh), zh


def test_questions_keep_their_answers_and_numbers():
    for chapter in CHAPTERS:
        en, zh = translated_questions(chapter, "en"), translated_questions(chapter, "zh")
        for q_en, q_zh in zip(en, zh, strict=True):
            assert [a["correct"] for a in q_en["answers"] if "correct" in a] == \
                [a["correct"] for a in q_zh["answers"] if "correct" in a]
            assert [a.get("range") for a in q_en["answers"]] == \
                [a.get("range") for a in q_zh["answers"]]


# -- the catalogues -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def pot(tmp_path_factory):
    """The English messages as the source is now (Sphinx's gettext builder, ~8 s)."""
    return site_i18n.extract(tmp_path_factory.mktemp("gettext"))


def test_every_english_message_is_translated(pot):
    assert site_i18n.problems(pot) == []
    assert site_i18n.catalogue_markup() == []


def test_the_catalogues_and_the_figure_phrases_use_the_glossary_terms():
    assert site_i18n.catalogue_terms() == []


def test_a_term_rendered_another_way_is_caught_outside_math_and_code():
    terms = site_i18n.load_terms()
    caught = site_i18n.term_problems("增大底数，用 NTK 感知缩放，Su 等人（2021）的注意力汇聚点",
                                     terms)
    assert {p.split("'")[1] for p in caught} == {"底数", "NTK 感知", "Su 等人", "汇聚点",
                                                  "注意力汇聚"}
    kept = "底数 base 即 `底数` 与 $\\text{底数}$；Su et al.（2021）；attention sink；[x](底数.md)"
    assert site_i18n.term_problems(kept, terms) == []


# Issue 47 (review 2026-11-29, 3.1 and G.1): English fallbacks and the unlisted Chinese
# variants. Each row plants a variant in a message of a page (its catalogue's name) ...
PLANTED = [
    ("FoX 和 stick-breaking（1,100–1,500 步）都学得慢", "13_long_context", "stick-breaking"),
    ("长度为 5 倍时 rotary（即 RoPE）的困惑度", "08_side_by_side", "rotary"),
    ("把它交给一个看不到顺序的读者。", "13_long_context", "的读者"),
    ("两个读者都不是模型", "13_long_context", "个读者"),
    ("而不是对任意词元都照抄", "13_long_context", "词元"),
    ("常见陷阱：数据相关不等于与顺序无关", "17_data_dependent", "数据相关"),
    ("为每个 token 缓存一个压缩的潜向量", "16_inference", "潜向量"),
    ("库把两种混合模型注册为 `TinyLM` 的逐层模式", "17_data_dependent", "逐层模式"),
    ("随课程打包的模型，其各行", "15_reading_configs", "打包"),
    ("只有二维轴向 RoPE 除外", "13_long_context", "二维轴向"),
    ("轴向 2-D RoPE：各图像块的角度", "zh.json", "轴向 2-D"),
    ("这个任务需要的两步电路", "13_long_context", "电路"),
    ("并告诉内核每个请求从哪里开始", "16_inference", "内核"),
    ("作者写了自己的 Triton 核函数", "17_data_dependent", "核函数"),
    ("在 torch 可能选用的每一组 CPU 内核下", "16_inference", "CPU 内核"),
    ("在每一套 CPU 计算内核下再检验一遍", "03_learned", "CPU 计算内核"),
    # a title is exempt only when it is quoted as one
    ("Transformer升级之路：18、RoPE的底数选择原则", "10_rope_today", "底数"),
    ("*Transformer升级之路：18、RoPE的底数选择原则*", "10_rope_today", "底数"),
]
# ... and each of these is the legitimate use the patterns leave alone.
LEGITIMATE = [
    ("Olsson et al. (2022) 把这两步的头叫作**前一词元头**和**归纳头**", "13_long_context"),
    ("self-attention 把各个 token（词元）混合起来", "01_why_order"),
    ("写出 KERPLE 的两种核函数，并找到 ALiBi", "12_learned_biases"),
    ("KERPLE 的核函数、FIRE 学到的函数", "intro"),
    ("把几篇文档打包进同一行；打包的文档需要文档掩码", "16_inference"),
    ("变长 kernel（算子），让打包的序列互不相干", "references"),
    ("需要最长 131,072 的读者加上 `rope_scaling`", "15_reading_configs"),  # people
    ("读者可以自己运行这一节", "13_long_context"),
    ("页面背后不需要 Python 内核；然后重启内核；在内核启动之前", "running_locally"),
    ("**折棍注意力**（stick-breaking attention；Tan et al., 2025）", "17_data_dependent"),
    ("折棍注意力（stick-breaking）给最近的键更多权重；`stick_breaking`", "13_long_context"),
    ("长度为 5 倍时旋转位置编码（rotary）的困惑度", "08_side_by_side"),
    ("rotary-embedding-torch 与 partial_rotary_factor 为 0.25", "04_rope"),
    ("代码见 <https://github.com/x/stick-breaking-attention>", "17_data_dependent"),
    ("依赖数据的衰减，缓存一个潜在向量，层模式，轴向二维 RoPE，这个回路", "17_data_dependent"),
    ("在 torch 可能选用的每一套 CPU 算子实现下", "16_inference"),
    # E′.1: Su Jianlin's title, quoted: in 《》 on any page, in italics in the reference list
    ("见苏剑林的《Transformer升级之路：18、RoPE的底数选择原则》", "10_rope_today"),
    ("Su, J. (2024). *Transformer升级之路：18、RoPE的底数选择原则.* 博客文章", "references"),
]


@pytest.mark.parametrize("chinese, source, caught", PLANTED)
def test_a_planted_variant_fails_the_term_check(chinese, source, caught):
    found = site_i18n.term_problems(chinese, site_i18n.load_terms(), source)
    assert [p.split("'")[1] for p in found] == [caught], found


@pytest.mark.parametrize("chinese, source", LEGITIMATE)
def test_the_legitimate_uses_pass_the_term_check(chinese, source):
    assert site_i18n.term_problems(chinese, site_i18n.load_terms(), source) == []


def test_a_terms_files_restrict_it_and_a_misnamed_file_is_reported(tmp_path):
    """terms.yml's ``files`` and ``not_files``, through the catalogues as the check reads them."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    folder = tmp_path / "locale" / site_i18n.LANGUAGE / "LC_MESSAGES" / "book"
    folder.mkdir(parents=True)
    for page, chinese in (("15_reading_configs", "随课程打包的模型"),
                          ("16_inference", "把几篇文档打包进同一行")):
        catalog = Catalog(locale="zh_CN")
        catalog.add("an English paragraph", chinese)
        with (folder / f"{page}.po").open("wb") as f:
            write_po(f, catalog)
    terms = tmp_path / "terms.yml"
    terms.write_text("- en: bundled\n  zh: 收录\n  files: [15_reading_configs]\n"
                     "  avoid: ['打包']\n"
                     "- en: packing\n  zh: 打包\n  not_files: [16_inference, 17_typo]\n"
                     "  avoid: ['收录']\n", encoding="utf-8")
    found = site_i18n.catalogue_terms(tmp_path / "locale", terms, tmp_path / "zh.json")
    assert found[0].startswith("15_reading_configs.po: '打包' for 'bundled'")
    assert len(found) == 2 and "'17_typo'" in found[1], found
    terms.write_text("- en: x\n  zh: y\n  file: [a]\n  avoid: []\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown keys"):
        site_i18n.load_terms(terms)


def test_every_term_is_in_the_glossary_as_the_edition_writes_it():
    """terms.yml is what the check enforces; the glossary page is what readers see."""
    rows = [line.split("|") for line in (ROOT / "book" / "glossary.md").read_text(
        encoding="utf-8").splitlines() if line.startswith("| ") and "---" not in line]
    chinese = " ".join(cells[2] for cells in rows if len(cells) > 3)
    for term in site_i18n.load_terms():
        assert term["zh"] in chinese, term["en"]
        # the rendering the edition uses is not itself avoided
        assert not any(p.search(term["zh"]) for p in term["avoid"]), term["en"]


def test_a_changed_english_paragraph_shows_up_as_untranslated(pot, tmp_path):
    """An author edits a paragraph: after `make translations` (sphinx-intl update) the
    check lists it, until its Chinese is updated."""
    changed = tmp_path / "gettext"
    shutil.copytree(pot, changed)
    template = changed / "book" / "04_rope.pot"
    text = template.read_text(encoding="utf-8")
    first = re.search(r'msgid "(The fastest pair completes a turn[^"]*)"', text).group(1)
    template.write_text(text.replace(first, first.replace("fastest", "quickest")),
                        encoding="utf-8")
    locale = tmp_path / "locale"
    shutil.copytree(site_i18n.LOCALE, locale)
    site_i18n.update(changed, locale)
    found = site_i18n.problems(changed, locale)
    assert len(found) == 1 and "04_rope.po" in found[0] and "quickest" in found[0]
    assert "fuzzy" in found[0] or "untranslated" in found[0]


def test_markup_must_survive_translation():
    english = "turn by $m\\theta_i$ with `base` ([RoPE](04_rope.ipynb)) **slowly**"
    kept = "以 $m\\theta_i$ 旋转，`base`（[RoPE](04_rope.ipynb)）**缓慢**"
    assert site_i18n.markup_problems(english, kept) == []
    broken = site_i18n.markup_problems(english, "以 $m\\theta$ 旋转（[RoPE](04.ipynb)）**缓慢")
    assert len(broken) == 4  # math, code, link target, bold


@pytest.mark.parametrize("page", sorted(p.stem for p in (ROOT / "book").glob("*.ipynb")))
def test_chinese_notebook_has_every_prose_cell_translated(page):
    nb = site_i18n.chinese_notebook(ROOT / "book" / f"{page}.ipynb", site_i18n.catalogue(page))
    english = json.loads((ROOT / "book" / f"{page}.ipynb").read_text(encoding="utf-8"))
    assert [c["source"] for c in nb["cells"] if c["cell_type"] == "code"][:1] == \
        [c["source"] for c in english["cells"] if c["cell_type"] == "code"][:1]
    assert any(site_i18n.ZH_SETUP in "".join(c["source"]) for c in nb["cells"])
    for cell in (c for c in nb["cells"] if c["cell_type"] == "markdown"):
        prose = re.sub(r"(`{3,}|~{3,}).*?\1", "", "".join(cell["source"]), flags=re.S)
        prose = re.sub(r"\$\$.*?\$\$|`[^`]*`|\]\([^)]*\)|^:[a-z]+:[^\n]*", "", prose,
                       flags=re.S | re.M)
        if re.search(r"[A-Za-z]{3,}", prose):
            assert CJK.search(prose), f"an English cell in the Chinese notebook: {prose[:80]!r}"


def test_language_switch_links_the_same_page_in_the_other_edition():
    page = '<html><head></head><body><div class="article-header-buttons"></div></body></html>'
    en = language_switch(page, "book/04_rope.html", "en")
    assert 'href="../zh/book/04_rope.html"' in en and 'hreflang="zh-CN"' in en
    zh = language_switch(page, "book/04_rope.html", "zh_CN")
    assert 'href="../../book/04_rope.html"' in zh and 'hreflang="en"' in zh
    assert language_switch(en, "book/04_rope.html", "en") == en  # idempotent


def test_chinese_beside_math_and_on_tick_labels_has_every_glyph(caplog):
    """A label with math in it is drawn by matplotlib's math renderer, and tick labels are
    written at draw time: both must reach the CJK font (no "does not have a glyph" boxes,
    no "findfont" warnings in a notebook's output), and both come back in English."""
    import io
    import logging

    fig, ax = plt.subplots()
    ax.set_yticks([0, 1], labels=["learned", "sinusoidal"])
    ax.set_xlabel("evaluation length $L_{eval}$ (bytes)")
    ax.set_xscale("log")
    with caplog.at_level(logging.WARNING), i18n.translated_figure(fig, "zh"):
        fig.savefig(io.BytesIO(), format="png")
        assert [t.get_text() for t in ax.get_yticklabels()] == ["可学习", "正弦"]
        assert CJK.search(ax.get_xlabel()) and "$L_{eval}$" in ax.get_xlabel()
    assert [r.getMessage() for r in caplog.records] == []
    fig.canvas.draw()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["learned", "sinusoidal"]
    plt.close(fig)


def test_the_quiz_script_speaks_the_pages_language():
    from posenc.course.selfcheck import QUIZ_UI, quiz_html

    _, english = quiz_html("06_alibi", "en")
    _, chinese = quiz_html("06_alibi", "zh")
    assert all(ui in english for ui in QUIZ_UI[:1])  # the script still writes them
    assert [ui for ui in QUIZ_UI if ui in chinese] == []
    assert all(i18n.leftover_english(i18n.translate(ui, "zh")) == [] for ui in QUIZ_UI)


def test_the_quick_chinese_search_indexes_as_sphinx_does():
    """site/posenc_site/i18n.py's search language (Latin words kept in a set) splits and stems every
    text as Sphinx's own SearchChinese does, fed the same texts in the same order."""
    from sphinx.search.zh import SearchChinese

    texts = ["RoPE 旋转位置编码 rotates pairs; ALiBi 的斜率 slopes", "外推 extrapolation ALiBi",
             "the base 10000 and d_model", "NTK-aware 插值 interpolation, YaRN 温度 Abc",
             "ies 与 ais"]  # Latin words whose stems are short: kept whole, as Sphinx does
    sphinx_own, quick = SearchChinese({}), site_i18n._quick_chinese_search()({})
    sphinx_own.latin_terms = []  # the class's list is shared: start from an empty one
    for text in texts:
        words = sphinx_own.split(text)
        assert quick.split(text) == words
        assert [quick.stem(w) for w in words] == [sphinx_own.stem(w) for w in words]
    assert quick.latin_terms == set(sphinx_own.latin_terms)
    assert quick.stem("ies") == "ies" and quick.stem("ais") == "ais"
    assert site_i18n._quick_chinese_search()({}).latin_terms == set()  # none shared


def test_retranslate_checks_the_table_against_every_text_the_build_translated(tmp_path):
    seen = tmp_path / "seen.jsonl"
    seen.write_text('"PE heatmap: d_model=64, base=10"\n"a text the table has no words for"\n',
                    encoding="utf-8")
    assert site_i18n.retranslated(seen) == ["a text the table has no words for"]


# -- the built Chinese pages (posenc_site.zhcheck) -----------------------------------------

def _page(article: str, outside: str = "") -> str:
    """A page as the site's theme builds it: the prose in ``<article class="bd-article">``."""
    return (f'<html lang="zh-CN"><head><title>*标题*</title></head><body>{outside}'
            f'<div class="bd-content"><article class="bd-article" role="main">{article}'
            f'</article></div></body></html>')


#: Prose that passes, beside what is not prose: a heading's link, code, math, a cell's input
#: and output, a run-in head, a title in 《》.
CLEAN = _page(
    '<section id="x"><h1>长上下文<a class="headerlink" href="#x" title="链接">#</a></h1>'
    '<p><strong>用时</strong> 约 30 分钟。<strong>前提</strong> 第 <a href="02.html">2</a> 章。</p>'
    '<p><em>对照</em>：一个只看上下文里有哪些 token 的解题程序，<code>d_model</code> 与 '
    '<span class="math notranslate nohighlight">\\(x_1 * y\\)</span> 的积；一次“K-shift”'
    '按差值施加 RoPE（见上文）。见苏剑林的《Transformer升级之路：18、RoPE的底数选择原则》，'
    '<a href="https://kexue.fm/a_b">https://kexue.fm/a_b</a>。</p>'
    '<div class="cell docutils container"><div class="cell_input"><pre>a = b * c_</pre></div>'
    '<div class="cell_output"><div class="output text_html">**T = 32,768:**</div></div></div>'
    '<ul><li><p>head_dim 为 64 的头 · 4 个 token</p></li></ul></section>',
    outside='<nav class="bd-links"><p>*侧栏* _x_ 这里不查</p></nav>')


def test_a_clean_chinese_page_passes_the_page_check():
    from posenc_site.zhcheck import page_problems

    assert page_problems(CLEAN, "zh/book/13_long_context.html") == []


@pytest.mark.parametrize("planted, what", [
    # B.2: the closing * after full-width punctuation, before a Chinese letter, stays literal
    ("<p>*对照：*一个只看上下文包含哪些 token 的解题程序。</p>", "a literal '*'"),
    ("<p>两者<strong>都**不是动态 NTK。</p>", "a literal '**'"),
    ("<p>_对照_：答案位于指定距离处。</p>", "a literal '_'"),
    # D.1 and E.2: a space beside full-width quotes or brackets, or between Chinese letters
    ("<p>然后一次 “K-shift”按差值施加 RoPE。</p>", "a space beside full-width punctuation"),
    ("<p>都不是“那个” 动态 NTK 模型（见上文） 。</p>", "a space beside full-width punctuation"),
    ("<p>折棍注意力 <em>从查询往回</em>折断棍子。</p>", "a space between Chinese characters"),
    # the edition's space between Chinese and Latin, code or math
    ("<p>见<a href='05.html'>RoPE 缩放一章</a>。</p>", "no space between Chinese and Latin"),
    ("<p>它的<code>rope_theta</code> 为 10000。</p>", "no space between Chinese and Latin"),
    ("<p>可学习的<strong>sink</strong>（sink）。</p>", "no space between Chinese and Latin"),
])
def test_a_planted_slip_fails_the_page_check(planted, what):
    from posenc_site.zhcheck import page_problems

    page = _page(CLEAN.split('role="main">')[1].split("</article>")[0] + planted)
    found = page_problems(page, "zh/book/13_long_context.html")
    assert len(found) >= 1 and all(what in p for p in found), found
    assert found[0].startswith("zh/book/13_long_context.html: ")


def test_the_reference_lists_italic_titles_keep_their_spacing():
    from posenc_site.zhcheck import page_problems

    entry = _page("<p>Su, J. (2024). <em>Transformer升级之路：18、RoPE的底数选择原则.</em> "
                  "博客文章，<a href='https://kexue.fm/archives/10122'>"
                  "https://kexue.fm/archives/10122</a>。</p>")
    assert page_problems(entry, "zh/book/references.html") == []
    # elsewhere the same italics are prose: Transformer升, RoPE的
    assert len(page_problems(entry, "zh/book/04_rope.html")) == 2


def test_a_catalogue_message_is_checked_as_the_page_will_show_it(tmp_path):
    """posenc_site.zhcheck.catalogue_problems: the same check before a build, each message
    rendered by MyST's parser (B.2 as the review found it, and its correction)."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po
    from posenc_site.zhcheck import catalogue_problems

    folder = tmp_path / site_i18n.LANGUAGE / "LC_MESSAGES" / "book"
    folder.mkdir(parents=True)
    catalog = Catalog(locale="zh_CN")
    catalog.add("*The control:* a reader", "*对照：*一个只看上下文的解题程序")
    catalog.add("*The control*: a reader", "*对照*：一个只看上下文的解题程序")
    catalog.add("\nA_{ij} = x_1 * y\n", "\nA_{ij} = x_1 * y 的\n")  # a formula's source
    with (folder / "13_long_context.po").open("wb") as f:
        write_po(f, catalog)
    found = catalogue_problems(tmp_path)
    assert len(found) == 2 and all(p.startswith("13_long_context.po: a literal '*'")
                                   for p in found), found
