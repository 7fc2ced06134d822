"""The slider-frame contract (posenc.course.figures.frame_contract) is what the three
pieces actually use: the widgets sliders.py makes, the Sphinx extension's patterns and the
names the site's JavaScript looks for."""

import re
from pathlib import Path

import pytest

from posenc.course.figures import frame_contract as contract
from posenc.course.figures.sliders import slider_figure

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "site" / "static"
JS = (STATIC / "posenc-widgets.js").read_text(encoding="utf-8")
#: the site's scripts, by job: strings per edition, slider figures, the page's own fixes
SCRIPTS = {name: (STATIC / name).read_text(encoding="utf-8")
           for name in ("posenc-text.js", "posenc-widgets.js", "posenc-page.js")}


def _js_strings() -> set[str]:
    """Every string literal in the JavaScript (double-quoted, as the file writes them)."""
    return set(re.findall(r'"((?:[^"\\]|\\.)*)"', JS))


def _draw(fig, a, b, name="x", kind="y"):
    fig.add_subplot().plot([0, 1], [b, a])


def test_sliders_make_only_contract_models_and_frames():
    # numbers (sliders) and names: a few (buttons), many (a menu)
    box = slider_figure(_draw, {"a": [1, 2], "b": [3, 4], "name": ["p", "q"],
                                "kind": [f"k{i}" for i in range(8)]}, title="t")
    # models of the whole widget tree, as the widget state will list them
    seen, todo = set(), [box, *box.links]
    while todo:
        w = todo.pop()
        seen.add(w._model_name)
        todo.extend(getattr(w, "children", ()))
    assert seen <= set(contract.MODELS), seen - set(contract.MODELS)
    assert {*contract.CONTROL_MODELS, "StackModel", "HTMLModel"} <= seen
    menus = [w for w in _walk(box) if contract.MENU_CLASS in getattr(w, "_dom_classes", ())]
    assert [w.description for w in menus] == ["kind"]  # the eight names; "name" has two
    assert all((lk.source[1], lk.target[1]) == contract.LINKED_TRAITS for lk in box.links)
    frames = [w for w in _walk(box) if w._model_name == "HTMLModel"]
    assert frames and all(f'<img class="{contract.FRAME_CLASS}"' in f.value for f in frames)


def _walk(w):
    yield w
    for c in getattr(w, "children", ()):
        yield from _walk(c)


def test_the_extension_uses_the_contract():
    from posenc_site import pages as posenc_site

    assert posenc_site.FRAMES_DIR == contract.FRAMES_DIR
    assert contract.STATE_MIME in posenc_site._STATE.pattern.replace("\\", "")
    assert contract.VIEW_MIME in posenc_site._VIEW.pattern.replace("\\", "")
    page = f'{contract.FRAME_SRC_ATTR}="{contract.FRAMES_DIR}/0123abcd.webp"'
    assert posenc_site._DATA_SRC.findall(page) == ["0123abcd.webp"]


@pytest.mark.parametrize("control", contract.CONTROL_MODELS)
def test_the_extension_gives_every_control_its_chinese_labels(tmp_path, control):
    """A Chinese page shows each control's label and its names in Chinese, whichever control
    the values got (sliders.control_kind)."""
    import json

    from posenc_site.pages import extract_frames

    state = {"s": {"model_name": control, "state": {
        "index": 0, "description": "counting", "_options_labels": ["tokens", "sentences"]}}}
    page = (f'<script type="{contract.STATE_MIME}">'
            + json.dumps({"version_major": 2, "version_minor": 0, "state": state})
            + "</script>")
    out, _ = extract_frames(page, tmp_path, lang="zh")
    shown = json.loads(out.split(">", 1)[1].split("</script>")[0])["state"]["s"]["state"]
    assert shown["description"] == "计数方式" and shown["_options_labels"] == ["token", "句子"]


def test_the_javascript_spells_every_name_the_same_way():
    strings = _js_strings()
    for name in (contract.STATE_MIME, contract.VIEW_MIME, contract.MODEL_PREFIX,
                 *contract.MODELS, *contract.LINKED_TRAITS, contract.LIVE_MODEL,
                 contract.LIVE_MODULE):
        assert name in strings, f"posenc-widgets.js does not name {name!r}"
    # the class that asks for a menu, as the JavaScript reads it and gives its <select>
    assert f'MENU_CLASS = "{contract.MENU_CLASS}"' in JS
    # the frame's class appears in a selector, its data-src as img.dataset.<name>
    assert any(re.search(rf"(^|[ .]){re.escape(contract.FRAME_CLASS)}\b", s) for s in strings)
    assert contract.FRAME_SRC_ATTR == "data-" + contract.FRAME_SRC_DATASET
    assert f"dataset.{contract.FRAME_SRC_DATASET}" in JS
    # and it names no model the contract does not know
    models = {s for s in strings if re.fullmatch(r"[A-Z]\w*Model", s)}
    assert models <= set(contract.MODELS) | {"HTMLMathModel", "LabelModel",
                                             contract.LIVE_MODEL}, models


def _ui_strings(lang: str) -> dict[str, str]:
    block = re.search(rf"\n\s+{lang}: \{{(.*?)\n\s+\}}", SCRIPTS["posenc-text.js"],
                      re.S).group(1)
    return dict(re.findall(r'(\w+): "([^"]*)"', block))


def test_every_ui_string_of_the_widgets_has_its_chinese():
    """What the site's script shows or announces (loading, a failed frame, the lightbox's
    labels) reads in the page's language: the Chinese pages say 正在加载图…"""
    english, chinese = _ui_strings("en"), _ui_strings("zh")
    assert english and set(english) == set(chinese)
    for key, text in chinese.items():
        assert re.search(r"[\u4e00-\u9fff]", text), key
        assert set(re.findall(r"[A-Za-z]{2,}", text)) <= {"Jupyter", "name"}, key
        assert ("{name}" in text) == ("{name}" in english[key]), key


@pytest.mark.parametrize("script", ["posenc-widgets.js", "posenc-page.js"])
def test_the_scripts_show_no_english_outside_the_string_table(script):
    """A UI string written straight into the code would reach the Chinese pages in English."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", SCRIPTS[script], flags=re.S)
    assert "say(" in code  # it does show strings, through posenc-text.js
    shown = re.findall(r'(?:textContent\s*=|setAttribute\("(?:aria-label|title)",|note\()'
                       r'\s*"([^"]*[A-Za-z]{2,}[^"]*)"', code)
    assert shown == []
