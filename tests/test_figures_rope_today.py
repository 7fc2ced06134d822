"""The figures of chapters 10 and 11 draw the library's numbers; those of 10-12 are legible."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from posenc.course.figures import rope_today as figs  # noqa: E402
from posenc.rope import rope_frequencies, wrap_angle  # noqa: E402
from posenc.rope_variants import mrope_position_ids  # noqa: E402


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


def _fire_fit(fig, **values):
    from posenc.course.figures.learned_biases import draw_fire_fit, fire_fits

    return draw_fire_fit(fig, fits=fire_fits(steps=(0, 500)), **values)


# Chapters 10-12's figures (also learned_biases.py's), at the values with the longest
# labels and the figsize the chapter gives them.
CHAPTER_FIGURES = [
    ("rope_today.draw_base_wavelengths", {"base": 1e7}, (6.88, 3.2)),
    ("rope_today.draw_position_pairs", {"fraction": 0.125}, (6.88, 2.4)),
    ("rope_today.draw_xpos_decay", {"scale_base": 4096}, (6.88, 3.2)),
    ("rope_today.draw_axial_angles", {"pair": 15}, (6.88, 3.6)),
    ("rope_today.draw_mrope_ids", {}, (6.4, 3.0)),
    ("rope_today.draw_mrope_sections", {"temporal": 8}, (6.88, 4.2)),
    ("learned_biases.draw_kerple_kernel", {"kernel": "power", "r1": 0.25, "r2": 0.25},
     (6.88, 3.2)),
    ("learned_biases.draw_fire_normalized", {"c": 0.001, "threshold": 512}, (7.2, 3.0)),
    ("fire_fit", {"target": "T5-like", "steps": 500}, (6.88, 3.2)),
    ("learned_biases.draw_cope_positions", {"counting": "sentences", "query": 15}, (6.88, 3.2)),
]


@pytest.mark.parametrize("name, values, figsize", CHAPTER_FIGURES,
                         ids=[n.split(".")[-1] for n, _, _ in CHAPTER_FIGURES])
def test_text_is_at_least_11_css_px_where_the_site_shows_it(name, values, figsize):
    # the site crops a figure to its content and shows it across the 688-px column, so
    # s-point text is s / 72 * 688 / (content width in inches) CSS px tall
    import importlib

    from matplotlib.text import Text

    from posenc.course.figures.style import COLUMN_CSS_PX, COURSE_RC, FRAME_DPI, tight_bbox

    if name == "fire_fit":
        draw = _fire_fit
    else:
        module, func = name.split(".")
        draw = getattr(importlib.import_module(f"posenc.course.figures.{module}"), func)
    with plt.rc_context(COURSE_RC):
        f = plt.figure(figsize=figsize, dpi=FRAME_DPI)
        draw(f, **values)
        f.canvas.draw()
        width = tight_bbox(f).width
        sizes = [t.get_fontsize() for t in f.findobj(Text)
                 if t.get_visible() and t.get_text().strip() and t.get_window_extent().width > 0]
        plt.close(f)
    smallest = min(sizes) / 72 * COLUMN_CSS_PX / width
    assert smallest >= 11, f"{name}: {min(sizes)} pt text is {smallest:.1f} CSS px"
