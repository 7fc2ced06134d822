import re

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc.course.figures.rope_alibi import (
    draw_rope_decay,
    draw_rope_pair,
    slope_label,
)
from posenc.course.figures.sliders import slider_figure
from posenc.rope import apply_rope, rope_relative_upper_bound


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


def test_rope_decay_draws_the_bound(fig):
    draw_rope_decay(fig, base=1e6, head_dim=64, max_distance=1000)
    thin = [ln for ln in fig.axes[0].get_lines() if ln.get_linewidth() < 1][0]
    r = thin.get_xdata()
    np.testing.assert_allclose(thin.get_ydata(), rope_relative_upper_bound(r, 64, 1e6))
    assert "base=1000000" in fig.axes[0].get_title()


def test_slope_label():
    assert slope_label(0.125) == "1/8" and slope_label(1 / 256) == "1/256"
    assert slope_label(2**-0.5) == "2^-0.5" and slope_label(1.0) == "1"


def test_slider_frames_name_what_they_show():
    """Every frame's alt text names each slider, by its label where it has one, at the value
    the frame shows (three sliders: nested stacks, 2 x 2 x 2 frames)."""
    box = slider_figure(draw_rope_pair,
                        {"position": [3, 5], "theta": [0.25, 0.5], "max_position": [11, 12]},
                        title="RoPE on one pair", labels={"position": "position m"})

    def frames(widget):
        children = getattr(widget, "children", None)
        if children is None or not hasattr(widget, "selected_index"):
            return [widget]
        return [f for c in children for f in frames(c)]

    alts = [re.search(r'alt="([^"]*)"', f.value).group(1) for f in frames(box.children[-1])]
    assert "RoPE on one pair: position m=5, theta=0.5, max_position=12" in alts
    assert len(alts) == len(set(alts)) == 8
    plt.close("all")


def test_layout_mismatch_marks_the_key_the_head_was_built_for(fig):
    """Chapter 4's layout-mismatch panels: the review found the wrong layout's panel still
    looked diagonal at a glance. Each panel outlines the target cells n = m - 3 and its title
    gives the weight there, so the one that misses them says so."""
    from posenc.course.figures.rope_alibi import draw_layout_mismatch, target_weight

    right = np.eye(8)[np.maximum(np.arange(8) - 3, 0)]  # every query on the key 3 back
    wrong = np.eye(8)  # every query on itself
    axes = draw_layout_mismatch(fig, {"as built": right, "wrong layout": wrong})
    assert target_weight(right) == 1.0 and target_weight(wrong) == 0.0
    assert [ax.get_title() for ax in axes] == ["as built\n1.00 on the key 3 back",
                                               "wrong layout\n0.00 on the key 3 back"]
    marked = axes[1].collections[0].get_offsets()
    assert [tuple(p) for p in marked] == [(m - 3, m) for m in range(3, 8)]
    assert fig.legends[0].get_texts()[0].get_text() == "target: the key 3 back"
