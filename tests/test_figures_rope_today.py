"""The figures of chapters 10 and 11 draw the library's numbers."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from posenc.figures import rope_today as figs  # noqa: E402
from posenc.rope import mrope_position_ids, rope_frequencies, wrap_angle  # noqa: E402


@pytest.fixture
def fig():
    f = plt.figure()
    yield f
    plt.close(f)


def test_base_wavelengths(fig):
    ax = figs.draw_base_wavelengths(fig, 5e5, head_dim=64)
    line = ax.get_lines()[1]
    np.testing.assert_allclose(line.get_ydata(), 2 * np.pi / rope_frequencies(64, 5e5))
    slow = int(np.sum(2 * np.pi / rope_frequencies(64, 5e5) > 16384))
    assert ax.get_legend().get_texts()[2].get_text().startswith(f"{slow} pairs")


def test_position_pair_table_and_figure(fig):
    table = figs.position_pair_table(0.25, 64)
    assert [int(np.count_nonzero(f)) for f in table.values()] == [32, 8, 8]
    np.testing.assert_allclose(table["partial RoPE"][:8], rope_frequencies(16))
    np.testing.assert_allclose(table["p-RoPE"][:8], rope_frequencies(64)[:8])
    ax = figs.draw_position_pairs(fig, 0.25, 64)
    image = ax.get_images()[0].get_array()
    assert image.mask[1, 8:].all() and not image.mask[0].any()


def test_xpos_decay(fig):
    ax = figs.draw_xpos_decay(fig, 512.0, head_dim=64, pairs=(0,))
    x, y = ax.get_lines()[0].get_data()
    np.testing.assert_allclose(y, (0.4 / 1.4) ** (x / 512.0))


def test_axial_angles(fig):
    ax = figs.draw_axial_angles(fig, 9, grid=5, head_dim=32)
    data = ax.get_images()[0].get_array()
    rows = np.arange(5)[:, None] * np.ones(5)
    np.testing.assert_allclose(data, wrap_angle(rows * 100.0 ** (-4 / 32)))
    with pytest.raises(ValueError, match="pair"):
        figs.draw_axial_angles(fig, 16, head_dim=32)


def test_mrope_figures(fig):
    ax = figs.draw_mrope_ids(fig)
    ids = mrope_position_ids(figs.MROPE_EXAMPLE)
    for axis, line in enumerate(ax.get_lines()[:3]):
        np.testing.assert_array_equal(line.get_ydata(), ids[axis])
    plt.close(fig)
    fig2 = plt.figure()
    figs.draw_mrope_sections(fig2, 4)
    assert "(4, 6, 6)" in fig2.axes[0].get_title()
    with pytest.raises(ValueError, match="temporal"):
        figs.draw_mrope_sections(fig2, 3)
    plt.close(fig2)
