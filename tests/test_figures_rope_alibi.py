import re

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc.alibi import alibi_bias, alibi_slopes
from posenc.course.figures.rope_alibi import (
    draw_alibi_bias,
    draw_alibi_slopes,
    draw_rope_angles,
    draw_rope_decay,
    draw_rope_pair,
    slope_label,
)
from posenc.course.figures.sliders import slider_figure
from posenc.rope import apply_rope, rope_angles, rope_relative_upper_bound


@pytest.fixture
def fig():
    figure = plt.figure(figsize=(6.4, 3.0))
    yield figure
    plt.close(figure)


def all_text(figure):
    texts = [t.get_text() for t in figure.findobj(matplotlib.text.Text)]
    return " | ".join(texts)


def test_rope_pair_draws_the_rotated_vector(fig):
    draw_rope_pair(fig, position=5, theta=0.5, q=(1.0, 0.3))
    rotated = apply_rope(np.array([[1.0, 0.3]]), [5], frequencies=[0.5])[0]
    arrows = [a for a in fig.axes[0].texts if isinstance(a, matplotlib.text.Annotation)]
    tips = [np.asarray(a.xy, dtype=float) for a in arrows]
    assert any(np.allclose(t, rotated) for t in tips)
    assert "m=5" in all_text(fig) and "2.50 rad" in all_text(fig)
    with pytest.raises(ValueError, match="position"):
        draw_rope_pair(plt.figure(), position=12, max_position=11)


@pytest.mark.parametrize("base,head_dim,position", [(10000.0, 128, 1024), (100.0, 16, 1),
                                                    (1e6, 64, 32768)])
def test_rope_angles_plots_every_pair_mod_two_pi(fig, base, head_dim, position):
    draw_rope_angles(fig, base, head_dim, position)
    angles = rope_angles(np.array([position]), head_dim, base)[0]
    lines = fig.axes[0].get_lines()
    xs = np.concatenate([ln.get_xdata() for ln in lines])
    ys = np.concatenate([ln.get_ydata() for ln in lines])
    order = np.argsort(xs)
    np.testing.assert_array_equal(xs[order], np.arange(head_dim // 2))
    np.testing.assert_allclose(ys[order], np.mod(angles, 2 * np.pi))
    below = int((angles < 2 * np.pi).sum())
    assert f"({below} pairs)" in all_text(fig)
    assert f"head_dim={head_dim}, position={position}" in fig.axes[0].get_title()


def test_rope_decay_draws_the_bound(fig):
    draw_rope_decay(fig, base=1e6, head_dim=64, max_distance=1000)
    thin = [ln for ln in fig.axes[0].get_lines() if ln.get_linewidth() < 1][0]
    r = thin.get_xdata()
    np.testing.assert_allclose(thin.get_ydata(), rope_relative_upper_bound(r, 64, 1e6))
    assert "base=1000000" in fig.axes[0].get_title()


def test_slope_label():
    assert slope_label(0.125) == "1/8" and slope_label(1 / 256) == "1/256"
    assert slope_label(2**-0.5) == "2^-0.5" and slope_label(1.0) == "1"


@pytest.mark.parametrize("num_heads", [1, 6, 8, 12, 16])
def test_alibi_slopes_figure_shows_the_official_slopes(fig, num_heads):
    draw_alibi_slopes(fig, num_heads)
    markers = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "None"]
    ys = np.concatenate([ln.get_ydata() for ln in markers])
    np.testing.assert_allclose(ys, alibi_slopes(num_heads))
    assert len(markers) == (1 if num_heads in (1, 8, 16) else 2)


@pytest.mark.parametrize("num_heads,head,length", [(8, 3, 8), (12, 10, 16), (16, 1, 32)])
def test_alibi_bias_figure_shows_that_head(fig, num_heads, head, length):
    draw_alibi_bias(fig, num_heads, head, length)
    image = fig.axes[0].get_images()[0].get_array()
    expected = alibi_bias(num_heads, length)[head - 1]
    assert np.array_equal(image.mask, np.isinf(expected))
    np.testing.assert_allclose(image.filled(0), np.where(np.isinf(expected), 0, expected))
    assert f"heads={num_heads}, head {head}" in fig.axes[0].get_title()
    assert f"length={length}" in fig.axes[0].get_title()


def test_alibi_bias_rejects_a_head_that_does_not_exist():
    with pytest.raises(ValueError, match="head"):
        draw_alibi_bias(plt.figure(), 8, 9, 8)


def test_bias_slider_frames_name_what_they_show():
    box = slider_figure(draw_alibi_bias, {"num_heads": [8, 12], "head": [1, 4], "length": [8, 9]},
                        title="ALiBi bias", labels={"num_heads": "heads"})

    def frames(widget):
        children = getattr(widget, "children", None)
        if children is None or not hasattr(widget, "selected_index"):
            return [widget]
        return [f for c in children for f in frames(c)]

    alts = [re.search(r'alt="([^"]*)"', f.value).group(1) for f in frames(box.children[-1])]
    assert "ALiBi bias: heads=12, head=4, length=9" in alts and len(alts) == 8
    plt.close("all")
