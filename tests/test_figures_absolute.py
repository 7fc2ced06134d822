import matplotlib
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc.compare import METHODS
from posenc.course.figures.absolute import (
    INJECTION_POINTS,
    draw_injection_schematic,
    draw_stretched_columns,
    running_mean,
)
from posenc.course.figures.style import METHOD_COLORS
from posenc.nn.absolute import interpolate_table


@given(values=st.lists(st.floats(-1e3, 1e3), min_size=9, max_size=60),
       half=st.integers(0, 4))
def test_running_mean_matches_convolution(values, half):
    window = 2 * half + 1
    expected = np.convolve(values, np.ones(window) / window, mode="valid")
    np.testing.assert_allclose(running_mean(values, window), expected, atol=1e-9)


def test_running_mean_of_a_constant_and_window_one():
    np.testing.assert_allclose(running_mean(np.full(20, 3.5), 7), np.full(14, 3.5))
    x = np.arange(10.0)
    np.testing.assert_allclose(running_mean(x, 1), x)
    np.testing.assert_allclose(running_mean(x, 3), x[1:-1])  # a line averages to itself


def test_running_mean_bad_input():
    with pytest.raises(ValueError, match="window must be odd"):
        running_mean(np.arange(10.0), 4)
    with pytest.raises(ValueError, match="at least window"):
        running_mean(np.arange(3.0), 5)
    with pytest.raises(ValueError, match="1-D"):
        running_mean(np.ones((4, 4)), 3)
    with pytest.raises(TypeError, match="window"):
        running_mean(np.arange(10.0), 2.5)


def test_stretched_columns_plot_the_interpolated_table(fig):
    rng = np.random.default_rng(0)
    table = rng.normal(size=(20, 6))
    top, bottom = draw_stretched_columns(fig, table, 47, columns=(0, 4))
    stretched = interpolate_table(torch.tensor(table, dtype=torch.float32), 47).numpy()
    for line, col in zip(top.get_lines(), (0, 4), strict=False):
        np.testing.assert_allclose(line.get_ydata(), table[:, col], rtol=1e-6)
    for line, col in zip(bottom.get_lines(), (0, 4), strict=False):
        np.testing.assert_array_equal(line.get_xdata(), np.arange(47))
        np.testing.assert_allclose(line.get_ydata(), stretched[:, col], rtol=1e-6)
    assert "L=20" in top.get_title() and "L'=47" in top.get_title()


def test_stretched_columns_bad_length(fig):
    with pytest.raises(ValueError, match="new_length"):
        draw_stretched_columns(fig, np.zeros((10, 4)), 1, columns=(0,))


def test_schematic_tags_every_method(fig):
    ax = draw_injection_schematic(fig)
    texts = [t.get_text() for t in ax.texts]
    methods = {method for _, method, _ in INJECTION_POINTS}
    assert methods == set(METHODS)  # the course's compared methods (chapter 8's)
    for _, method, note in INJECTION_POINTS:
        assert note in texts
        patch = next(t for t in ax.texts if t.get_text() == note).get_bbox_patch()
        assert matplotlib.colors.same_color(patch.get_facecolor(), METHOD_COLORS[method])
