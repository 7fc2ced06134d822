import base64
import re

import ipywidgets as widgets
import pytest

from posenc.course.figures.sliders import format_value, log_steps, slider_figure


def draw(fig, a, b=1):
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, a * b])
    ax.set_title(f"a={a}, b={b}")


def frames_of(stack):
    if isinstance(stack, widgets.Stack):
        return [f for child in stack.children for f in frames_of(child)]
    return [stack]


def test_one_frame_per_combination_with_matching_alt_text():
    box = slider_figure(draw, {"a": [1, 2, 3], "b": [10, 20]}, title="demo")
    sliders, stack = box.children[:2], box.children[2]
    assert [s.description for s in sliders] == ["a", "b"]
    frames = frames_of(stack)
    assert len(frames) == 6
    alts = [re.search(r'alt="([^"]*)"', f.value).group(1) for f in frames]
    assert alts == [f"demo: a={a}, b={b}" for a in (1, 2, 3) for b in (10, 20)]
    assert all(re.search(r'src="data:image/(png|webp);base64,', f.value) for f in frames)
    # distinct pictures for distinct values
    assert len({f.value.split("base64,")[1][:2000] + f.value[-3000:] for f in frames}) == 6


def test_sliders_are_linked_in_the_browser():
    box = slider_figure(draw, {"a": [1, 2, 3], "b": [10, 20]}, title="demo",
                        initial={"a": 3, "b": 10})
    a, b, outer = box.children
    assert a.index == 2 and outer.selected_index == 2
    assert all(inner.selected_index == 0 for inner in outer.children)
    links = box.links
    assert all(lk.source[1] == "index" and lk.target[1] == "selected_index" for lk in links)
    targets = {(lk.source[0].model_id, lk.target[0].model_id) for lk in links}
    assert (a.model_id, outer.model_id) in targets
    for inner in outer.children:
        assert (b.model_id, inner.model_id) in targets


def test_png_frames_and_frame_size_on_the_page():
    from posenc.course.figures.style import CSS_PX_PER_INCH, FRAME_DPI

    box = slider_figure(draw, {"a": [1, 2]}, title="w", fmt="png")
    html = frames_of(box.children[1])[0].value
    assert "data:image/png;base64," in html
    png = base64.b64decode(re.search(r"base64,([^\"]+)", html).group(1))
    # PNG header: width and height are big-endian at bytes 16..24
    px_w, px_h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    css_w, css_h = (int(re.search(rf'{k}="(\d+)"', html).group(1)) for k in ("width", "height"))
    # the frame carries 2 device px per CSS px, and the page shows it at 100 CSS px/inch
    assert FRAME_DPI / CSS_PX_PER_INCH == 2
    assert abs(px_w / css_w - 2) < 0.01 and abs(px_h / css_h - 2) < 0.02


def test_helpers():
    assert format_value(10000.0) == "10000" and format_value(0.5) == "0.5"
    assert log_steps(10, 1e6) == [10, 100, 1000, 10000, 100000, 1000000]
    assert log_steps(10, 1000, per_decade=2) == [10, 32, 100, 320, 1000]


def test_bad_input():
    with pytest.raises(ValueError, match="title"):
        slider_figure(draw, {"a": [1, 2]}, title="")
    with pytest.raises(ValueError, match="at least 2"):
        slider_figure(draw, {"a": [1]}, title="t")
    with pytest.raises(ValueError, match="MAX_FRAMES"):
        slider_figure(draw, {"a": range(20), "b": range(20)}, title="t")
    with pytest.raises(ValueError, match="unknown slider"):
        slider_figure(draw, {"a": [1, 2]}, title="t", initial={"c": 1})
    with pytest.raises(ValueError, match="fmt must be"):
        slider_figure(draw, {"a": [1, 2]}, title="t", fmt="gif")


def test_auto_format_is_the_smaller_of_png_and_webp_for_the_figure():
    sizes = {}
    for fmt in ("png", "webp"):
        box = slider_figure(draw, {"a": [1, 1000000]}, title="w", fmt=fmt)
        sizes[fmt] = [len(base64.b64decode(re.search(r"base64,([^\"]+)", f.value).group(1)))
                      for f in frames_of(box.children[1])]
    auto = slider_figure(draw, {"a": [1, 1000000]}, title="w")
    chosen = "webp" if sizes["webp"][0] < sizes["png"][0] else "png"
    for frame, size in zip(frames_of(auto.children[1]), sizes[chosen], strict=True):
        assert f"data:image/{chosen};base64," in frame.value
        assert len(base64.b64decode(re.search(r"base64,([^\"]+)", frame.value).group(1))) == size


def test_webp_frames_and_one_size_for_every_frame():
    import io

    from PIL import Image

    box = slider_figure(draw, {"a": [1, 1000000]}, title="w", fmt="webp")
    sizes = set()
    for frame in frames_of(box.children[1]):
        assert "data:image/webp;base64," in frame.value
        data = base64.b64decode(re.search(r"base64,([^\"]+)", frame.value).group(1))
        with Image.open(io.BytesIO(data)) as img:
            sizes.add(img.size)
    assert len(sizes) == 1  # the page does not jump when the slider moves


def test_draft_frames_still_draw_every_combination_but_rasterise_one(monkeypatch):
    """POSENC_DRAFT_FRAMES=1 (nbval's setting): each combination is drawn, so one that
    raises still fails the cell; every frame shows the first picture, alt texts stay exact."""
    from posenc.course.environment import DRAFT_ENV

    seen = []

    def counting(fig, a, b=1):
        seen.append((a, b))
        draw(fig, a, b)

    monkeypatch.setenv(DRAFT_ENV, "1")
    frames = frames_of(slider_figure(counting, {"a": [1, 2, 3], "b": [10, 20]},
                                     title="demo").children[2])
    assert {(a, b) for a in (1, 2, 3) for b in (10, 20)} <= set(seen)
    assert len({f.value.split('src="')[1].split('"')[0] for f in frames}) == 1
    alts = [re.search(r'alt="([^"]*)"', f.value).group(1) for f in frames]
    assert alts == [f"demo: a={a}, b={b}" for a in (1, 2, 3) for b in (10, 20)]

    def fails_on_the_last(fig, a, b=1):
        if (a, b) == (3, 20):
            raise RuntimeError("cannot draw a=3, b=20")
        draw(fig, a, b)

    with pytest.raises(RuntimeError, match="a=3, b=20"):
        # the crop is measured on the first and last frames: fail in the middle instead
        slider_figure(lambda fig, a, b=1: fails_on_the_last(fig, a if a != 2 else 3, b),
                      {"a": [1, 2, 4], "b": [10, 20]}, title="demo")
    monkeypatch.setenv(DRAFT_ENV, "0")
    frames = frames_of(slider_figure(draw, {"a": [1, 2]}, title="demo").children[1])
    assert len({f.value.split('src="')[1].split('"')[0] for f in frames}) == 2


def test_values_that_are_names_get_buttons_or_a_menu_not_a_slider():
    """Names have no order a track could show: they become buttons, and where they are many
    (chapter 1's methods, chapter 15's models) the site shows them as a menu (the widget's
    class asks for it; in Jupyter they stay buttons, which a keyboard can work there). Numbers
    keep the slider. Every control has the ``index`` the frames' Stacks are linked to."""
    from posenc.course.figures.frame_contract import MENU_CLASS
    from posenc.course.figures.sliders import MAX_BUTTONS, control_kind

    assert control_kind([1, 2.5, 10]) == "slider"
    assert control_kind(["power", "log"]) == "buttons"
    assert control_kind([f"m{i}" for i in range(MAX_BUTTONS)]) == "buttons"
    assert control_kind([f"m{i}" for i in range(MAX_BUTTONS + 1)]) == "menu"

    def named(fig, kind, model, a):
        draw(fig, a, len(kind) + len(model))

    models = [f"model-{i}" for i in range(MAX_BUTTONS + 2)]
    box = slider_figure(named, {"kind": ["power", "log"], "model": models, "a": [1, 2]},
                        title="names", initial={"model": "model-3"})
    kind, model, a, outer = box.children
    assert isinstance(kind, widgets.ToggleButtons) and kind.options == ("power", "log")
    assert MENU_CLASS not in kind._dom_classes
    assert isinstance(model, widgets.ToggleButtons) and model.index == 3
    assert MENU_CLASS in model._dom_classes and model.options == tuple(models)
    assert isinstance(a, widgets.SelectionSlider)
    assert [c.description for c in (kind, model, a)] == ["kind", "model", "a"]
    # each control drives its level of Stacks, as a slider does
    targets = {(lk.source[0].model_id, lk.target[0].model_id) for lk in box.links}
    assert (kind.model_id, outer.model_id) in targets
    assert all((model.model_id, inner.model_id) in targets for inner in outer.children)
    alts = [re.search(r'alt="([^"]*)"', f.value).group(1) for f in frames_of(outer)]
    assert alts[0] == "names: kind=power, model=model-0, a=1" and len(alts) == 2 * len(models) * 2
