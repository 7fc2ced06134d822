"""posenc_site.shell, the lighter page shell (issue 38): the icon fonts cut to the glyphs the
site shows, the search scripts only on the search page, MathJax without its menu."""

import shutil
from pathlib import Path
from types import SimpleNamespace

import pydata_sphinx_theme
import pytest
from fontTools.ttLib import TTFont
from hypothesis import given
from hypothesis import strategies as st
from posenc_site import pages, shell

WEBFONTS = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" /
            "static" / shell.ICON_FONTS)

THEME_CSS = ('.fa-magnifying-glass:before,.fa-search:before{content:"\\f002"}'
             '.fa-moon:before{content:"\\f186"}.fa-sun:before{content:"\\f185"}'
             ':root{--pst-icon-pencil:"\uf303"}.onthispage:after{content:"\\f107"}')


def test_icon_codepoints_map_names_and_keep_the_stylesheets_own_icons():
    pages = ['<i class="fa-solid fa-search"></i>', "icon.className = 'fa-solid fa-moon';",
             '<i class="fa-unknown fa-2x"></i>']
    # search (an alias of magnifying-glass) and moon by name; sun is named nowhere; the
    # pencil variable and the sidebar arrow are the stylesheet's own
    assert shell.icon_codepoints([THEME_CSS], pages) == {0xF002, 0xF186, 0xF303, 0xF107}
    assert shell.icon_codepoints([THEME_CSS], []) == {0xF303, 0xF107}


@pytest.fixture
def fonts(tmp_path):
    folder = tmp_path / "webfonts"
    shutil.copytree(WEBFONTS, folder)
    return folder


def test_subset_keeps_exactly_the_used_glyphs_each_font_has(fonts):
    wanted = {0xF002, 0xF186, 0xF09B}  # solid's search and moon; brands' GitHub mark
    before = {p.name: set(TTFont(p).getBestCmap()) for p in fonts.iterdir()}
    sizes = shell.subset_icon_fonts(fonts, wanted)
    assert set(sizes) == set(before)
    for path in fonts.iterdir():
        assert set(TTFont(path).getBestCmap()) == before[path.name] & wanted, path.name
    solid = fonts / "fa-solid-900.woff2"
    assert solid.read_bytes()[:4] == b"wOF2"  # still WOFF2 under its own name
    assert sizes["fa-solid-900.woff2"][1] < sizes["fa-solid-900.woff2"][0] / 20
    assert (fonts / "fa-solid-900.ttf").read_bytes()[:4] == b"\x00\x01\x00\x00"
    again = shell.subset_icon_fonts(fonts, wanted)  # a second build: nothing left to cut
    assert all(b == a for b, a in again.values())


@given(prefix=st.sampled_from(["", "../", "../../"]))
def test_search_scripts_leave_a_page_and_nothing_else_does(prefix):
    head = (f'<script src="{prefix}_static/searchtools.js"></script>\n'
            f'<script src="{prefix}_static/language_data.js"></script>\n'
            f'<script src="{prefix}searchindex.js"></script>\n'
            f'<script src="{prefix}_static/posenc-page.js"></script>')
    assert pages.drop_search_scripts(head).strip() == \
        f'<script src="{prefix}_static/posenc-page.js"></script>'


@pytest.mark.parametrize("before", [None, {"options": {"processHtmlClass": "math"}},
                                    {"loader": {"load": ["[tex]/physics", "core"]}}])
def test_mathjax_loads_startup_and_its_components_not_the_menu(before):
    config = SimpleNamespace(mathjax_path="mathjax/tex-chtml.js", mathjax3_config=before)
    shell._mathjax_components(None, config)
    assert config.mathjax_path == "mathjax/startup.js"
    load = config.mathjax3_config["loader"]["load"]
    assert set(shell.MATHJAX_LOAD) <= set(load) and len(load) == len(set(load))
    assert "ui/menu" not in load
    for key, value in (before or {}).items():  # what was configured stays
        if key != "loader":
            assert config.mathjax3_config[key] == value
    if before and "loader" in before:
        assert "[tex]/physics" in load
