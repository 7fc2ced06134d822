"""The chapter-5 figures of position remapping and the base bound draw the library's numbers."""

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402

from posenc.course.figures import rope_today  # noqa: E402
from posenc.course.figures import scaling as figs  # noqa: E402
from posenc.rope import rope_frequencies  # noqa: E402


def test_seen_distances_of_pi_and_remapping():
    i, j = np.array([63, 63, 63]), np.array([63, 40, 0])
    seen = figs.seen_distances(i, j, window=16, group=4, factor=4, length0=64)
    # PI divides every frequency by s: at any pair the angle is that of (i - j) / s
    np.testing.assert_allclose(seen["PI"], (i - j) / 4)
    np.testing.assert_allclose(seen["ReRoPE"], [0, 16, 16])
    np.testing.assert_allclose(seen["Leaky ReRoPE"], [0, 16 + 7 / 4, 16 + 47 / 4])
    # Self-Extend past the window: 63 // 4 + 16 - 16 // 4 - j // 4
    np.testing.assert_array_equal(seen["Self-Extend"], [0, 15 + 12 - 10, 15 + 12 - 0])


def test_critical_pair_is_the_first_that_turns_less_than_once():
    c = figs._critical_pair(64, 1e4, 64)
    theta = rope_frequencies(64, 1e4)
    assert 64 * theta[c] < 2 * np.pi <= 64 * theta[c - 1]


def test_remapped_distances_draws_every_method(fig):
    ax = figs.draw_remapped_distances(fig, 32, 4, 4)
    labels = [line.get_label() for line in ax.get_lines()]
    assert set(figs.REMAP_METHODS) <= set(labels)
    # the line plot, a small panel per method, and the panels' colour bar
    assert len(fig.axes) == 2 + len(figs.REMAP_METHODS)


def test_remapped_distances_says_in_words_what_its_panels_show(fig):
    """The review found one-letter sliders (w, G, s) and small panels whose red was explained
    nowhere in the figure: the title and the sliders name each parameter in words, the first
    panel its axes, and a colour bar what the colours and the red mean."""
    from posenc.course.figures.catalogue import SLIDERS

    ax = figs.draw_remapped_distances(fig, 32, 4, 4)
    assert ax.get_title() == ("window w = 32, group size G = 4, scale factor s = 4: "
                              "a text of 256 tokens")
    assert set(SLIDERS["remapped_distances"].labels.values()) == {
        "window w", "group size G", "scale factor s"}
    small = fig.axes[1:1 + len(figs.REMAP_METHODS)]
    assert (small[0].get_ylabel(), small[0].get_xlabel()) == ("query i", "key j")
    bar = fig.axes[-1]
    assert "red: beyond L₀ = 64, never seen in training" in bar.get_xlabel()
    # the colour bar sits below the panels, not over them
    assert bar.get_position().y1 < min(a.get_position().y0 for a in small)


def test_base_bound_marks_the_first_negative_margin(fig):
    left, _ = figs.draw_base_bound(fig, 1e4)
    reach = left.get_lines()[-1].get_xdata()[0]
    m = np.arange(1, reach + 1)
    margin = np.cos(np.outer(m, rope_frequencies(128, 1e4))).sum(1)
    assert margin[-1] < 0 and np.all(margin[:-1] >= 0)


def test_mla_paths_draws(fig):
    ax = rope_today.draw_mla_paths(fig)
    assert any("latent" in t.get_text() for t in ax.texts)


def test_base_bound_right_panel_plots_the_scan_and_the_base_reach(fig):
    from posenc.course.base_bound_table import base_bound_rows
    from posenc.scaling import rope_base_reach

    _, right = figs.draw_base_bound(fig, 1e6)
    lines = {line.get_label(): line for line in right.get_lines()}
    rows = base_bound_rows()
    assert list(lines["bound (exact scan)"].get_ydata()) == [r["bound"] for r in rows]
    reach = rope_base_reach(1e6, 128)
    solid = lines[f"base 1e+06: reaches {reach:,}"]
    assert solid.get_xdata()[-1] == reach and set(solid.get_ydata()) == {1e6}
    assert lines["rounded value fails (7 of 11)"].get_xdata().size == 7
