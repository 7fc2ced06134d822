"""Every slider figure of the course is legible at the width the site shows it.

The site shows a figure across the whole text column (``COLUMN_CSS_PX`` CSS px at a
1280-px window), so a figure whose drawn content is ``w`` inches wide is shown at
``COLUMN_CSS_PX / w`` CSS px per inch, and text of ``s`` points is
``s / 72 * COLUMN_CSS_PX / w`` CSS px tall. The issue asks for >= 11 CSS px. The
figures are drawn as the chapters draw them (same figure size), at the slider values
with the longest labels.
"""

import io

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from PIL import Image  # noqa: E402

from posenc.course.figures import absolute  # noqa: E402
from posenc.course.figures.catalogue import SLIDERS  # noqa: E402
from posenc.course.figures.style import (  # noqa: E402
    COLUMN_CSS_PX,
    COURSE_RC,
    DIVERGING,
    FRAME_DPI,
    figure_bytes,
)

MIN_CSS_PX = 11


def sample_data() -> dict:
    """Data of the shape the chapters compute for their data-driven slider figures (the
    figure's layout, not its numbers, is under test)."""
    from posenc.catalogue import METHOD_ORDER
    from posenc.course.figures.learned_biases import fire_fit_targets
    from posenc.sinusoidal import sinusoidal_encoding

    rng = np.random.default_rng(0)
    targets = fire_fit_targets()
    return {
        "changes": {m: dict(zip(("I", "love", "you"), rng.uniform(0, 1, 3), strict=True))
                    for m in METHOD_ORDER},
        "causal": {m: dict(zip(("I", "love", "you"), rng.uniform(0, 2, 3), strict=True))
                   for m in METHOD_ORDER},
        "blind": ["none", "alibi", "kerple_power", "kerple_log", "fire", "cope"],
        "table": sinusoidal_encoding(64, 16, base=100),
        "fits": {name: {"distance": np.arange(len(t)), "target": t,
                        "snapshots": {s: t + rng.normal(0, 1, len(t)) for s in (0, 50, 200, 1000)}}
                 for name, t in targets.items()},
        "runs": {run: {s: {"by_key": rng.uniform(0, 0.2, (2, 4, 64)), "uniform": 1 / 32,
                           "sink": rng.uniform(0, 1, (2, 4)), "gate": rng.uniform(0, 1, (2, 4))}
                       for s in (0, 50, 100, 200)} for run in ("sinks", "no sinks", "gated")},
    }


def _slider_figures():
    data = sample_data()
    for key, figure in SLIDERS.items():
        given = {name: data[name] for name in figure.data}
        yield pytest.param(figure.drawing(**given), figure.longest(**given), figure.figsize,
                           id=key)


#: Every slider figure of the catalogue (the chapters show these), as
#: ``(draw, slider values with the longest labels, figsize)``.
SLIDER_FIGURES = list(_slider_figures())


def _draw(draw, values, figsize):
    fig = plt.figure(figsize=figsize, dpi=FRAME_DPI)
    draw(fig, **values)
    fig.canvas.draw()
    return fig


@pytest.mark.parametrize("draw, values, figsize", SLIDER_FIGURES)
def test_text_is_at_least_11_css_px_at_the_column_width(draw, values, figsize):
    with plt.rc_context(COURSE_RC):
        fig = _draw(draw, values, figsize)
        width_in = fig.get_tightbbox(fig.canvas.get_renderer()).padded(0.05).width
        texts = [t for t in fig.findobj(Text)
                 if t.get_visible() and t.get_text().strip() and t.get_window_extent().width > 0]
        smallest = min(t.get_fontsize() for t in texts)
        plt.close(fig)
    css_px = smallest / 72 * COLUMN_CSS_PX / width_in
    assert css_px >= MIN_CSS_PX, f"{smallest} pt text is {css_px:.1f} CSS px"


def test_a_frame_carries_two_device_px_per_css_px_of_the_column():
    # a sample figure of the course's style (chapter 3's stretched table, a slider figure)
    values = {"table": sample_data()["table"], "new_length": 128}
    with plt.rc_context(COURSE_RC):
        fig = _draw(absolute.draw_stretched_columns, values, (6.88, 3.4))
        data = figure_bytes(fig, "webp", width_px=round(6.88 * FRAME_DPI))
        plt.close(fig)
    with Image.open(io.BytesIO(data)) as img:
        assert img.format == "WEBP" and img.width == 2 * COLUMN_CSS_PX


def _srgb_to_lightness(rgb):
    """CIE L* of sRGB colours (independent of posenc's Lab -> sRGB direction)."""
    rgb = np.asarray(rgb, dtype=np.float64)
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    y = lin @ np.array([0.2126729, 0.7151522, 0.0721750])
    return np.where(y > (6 / 29) ** 3, 116 * np.cbrt(y) - 16, y * (29 / 3) ** 3)


def test_reference_lightness():
    # published values: sRGB white L* = 100, #777777 L* = 50.0 (to 0.1)
    assert _srgb_to_lightness([1.0, 1.0, 1.0]) == pytest.approx(100, abs=1e-3)
    assert _srgb_to_lightness([0x77 / 255] * 3) == pytest.approx(50.0, abs=0.1)


def test_diverging_map_is_perceptually_even_and_symmetric():
    values = np.linspace(0, 1, 255)
    lightness = _srgb_to_lightness(DIVERGING(values)[:, :3])
    low, high = lightness[:127], lightness[128:]
    # lightness rises steadily to the middle and falls steadily after it, in even steps
    assert np.all(np.diff(low) > 0) and np.all(np.diff(high) < 0)
    steps = np.abs(np.diff(lightness))
    steps = steps[(steps > 0) & (np.arange(len(steps)) != 126) & (np.arange(len(steps)) != 127)]
    assert steps.max() < 1.5 * np.median(steps)
    # the two ends are equally dark, so neither sign looks stronger
    assert abs(lightness[0] - lightness[-1]) < 1.5
    assert lightness[127] > 90


@pytest.mark.parametrize("draw, values, figsize", SLIDER_FIGURES[1:5])
def test_frames_are_the_pixels_a_saved_png_has(draw, values, figsize):
    """style._rendered reads Agg's raw buffer instead of encoding and decoding a PNG: the
    same pixels, the same size."""
    from posenc.course.figures.style import _rendered, frame_geometry

    with plt.rc_context(COURSE_RC):
        fig = plt.figure(figsize=figsize, dpi=FRAME_DPI)
        draw(fig, **values)
        bbox, dpi = frame_geometry(fig, width_px=round(figsize[0] * FRAME_DPI))
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches=bbox)
        png = np.asarray(Image.open(buf).convert("RGB"))
        raw = np.asarray(_rendered(fig, dpi, bbox))
        plt.close(fig)
    assert raw.shape == png.shape and np.array_equal(raw, png)
