"""The slider figures' catalogue (posenc.course.figures.catalogue) is what the chapters show:
every slider figure of a chapter is an entry, shown once, from its own chapter; so the
legibility and clipping tests, which draw every entry, check every slider of the site."""

import re
from pathlib import Path

import pytest
from posenc_site.notebooks import read_notebook

from posenc.course.figures.catalogue import SLIDERS, SliderFigure
from posenc.course.figures.live import LIVE

ROOT = Path(__file__).resolve().parents[1]

SHOWN = re.compile(r'SLIDERS\["(\w+)"\]\.show\(')
SHOWN_LIVE = re.compile(r'LIVE\["(\w+)"\]\.show\(')


def _code(chapter: str) -> list[str]:
    nb = read_notebook(ROOT / "book" / f"{chapter}.ipynb")
    return [c.source for c in nb.cells if c.cell_type == "code"]


def test_every_chapter_slider_is_a_catalogue_entry_shown_once_in_its_chapter():
    shown = {}
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        for source in _code(path.stem):
            code = "\n".join(line.split("#")[0] for line in source.splitlines())
            assert "slider_figure(" not in code, f"{path.stem}: a slider figure not in SLIDERS"
            for key in SHOWN.findall(code):
                assert key not in shown, f"{key} shown in {shown[key]} and {path.stem}"
                shown[key] = path.stem
    assert shown == {key: figure.chapter for key, figure in SLIDERS.items()}


def test_every_chapter_live_figure_is_a_live_entry_shown_once_in_its_chapter():
    """The same for the figures the browser computes (posenc.course.figures.live.LIVE): every
    entry is shown, once, by its own chapter, and no key is both a live and a frame figure."""
    shown = {}
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        for source in _code(path.stem):
            code = "\n".join(line.split("#")[0] for line in source.splitlines())
            for key in SHOWN_LIVE.findall(code):
                assert key not in shown, f"{key} shown in {shown[key]} and {path.stem}"
                shown[key] = path.stem
    assert shown == {key: spec.chapter for key, spec in LIVE.items()}
    assert not set(LIVE) & set(SLIDERS)


def test_an_entry_refuses_data_it_does_not_take_and_wants_what_it_does():
    with pytest.raises(TypeError, match="fits"):
        SLIDERS["fire_fit"].drawing()
    with pytest.raises(TypeError, match="none"):
        SLIDERS["rope_decay"].drawing(fits={})


def test_a_data_named_slider_takes_the_data_keys():
    figure = SliderFigure("01_why_order", lambda fig, changes, method: None,
                          {"method": "changes"}, "t", data=("changes",))
    assert figure.values(changes={"rope": {}, "kerple_power": {}}) == {
        "method": ["rope", "kerple_power"]}
    assert figure.longest(changes={"rope": {}, "kerple_power": {}}) == {"method": "kerple_power"}
