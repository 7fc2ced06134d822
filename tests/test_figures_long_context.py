"""Chapter 13's tables and figures (posenc.course.figures.long_context) on hand-made results
whose answers are known, and on the committed main run."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from posenc.course.figures import long_context as lc  # noqa: E402
from posenc.course.results import load_results  # noqa: E402


def _entry(label, loss, acc, loss_range=None, acc_range=None):
    entry = {"label": label, "loss": loss, "retrieval_accuracy": acc,
             "retrieval_distances": [[1, 2]] * 2, "retrieval_by_distance": [[a, a] for a in acc]}
    if loss_range:
        entry["loss_min"], entry["loss_max"] = loss_range
    if acc_range:
        entry["retrieval_accuracy_min"], entry["retrieval_accuracy_max"] = acc_range
    return entry


RESULTS = {"train_length": 8, "eval_lengths": [8, 16], "variants": {
    "rope": _entry("RoPE", [1.0, 2.0], [0.9, 0.3], ([0.9, 1.9], [1.1, 2.1]),
                   ([0.85, 0.2], [0.95, 0.4])),
    "alibi": _entry("ALiBi", [1.1, 1.1], [0.95, 0.5], ([1.0, 1.0], [1.2, 1.2]),
                    ([0.9, 0.35], [1.0, 0.65])),
    "none": _entry("NoPE", [1.5, 1.6], [0.97, 0.9], ([1.4, 1.5], [1.6, 1.7]),
                   ([0.95, 0.88], [0.99, 0.92])),
}}


def test_separated_means_ranges_that_do_not_overlap():
    assert lc.separated(RESULTS, "rope", "none", "loss", 0)  # [0.9, 1.1] vs [1.4, 1.6]
    assert not lc.separated(RESULTS, "rope", "alibi", "loss", 0)  # [0.9, 1.1] vs [1.0, 1.2]
    assert not lc.separated(RESULTS, "rope", "alibi", "retrieval_accuracy", 1)  # 0.35-0.4
    assert lc.separated(RESULTS, "none", "alibi", "retrieval_accuracy", 1)
    # better first: lower loss, higher accuracy
    assert lc.separated_pairs(RESULTS, "loss", 1) == [("alibi", "rope"), ("none", "rope"),
                                                      ("alibi", "none")]
    assert lc.separated_pairs(RESULTS, "retrieval_accuracy", 1) == [("none", "rope"),
                                                                    ("none", "alibi")]


def test_spread_text_and_markdown_table():
    assert lc.spread_text(1.0, 0.9, 1.1, "loss") == "1.000 ±0.100"
    assert lc.spread_text(0.5, 0.35, 0.65, "retrieval_accuracy") == "50.0% ±15.0"
    assert lc.spread_text(0.5, 0.5, 0.5, "retrieval_accuracy") == "50.0%"  # one seed
    assert lc.spread_text(0.5, 0.5, 0.5, "retrieval_accuracy", seeds=True) == "50.0% ±0.0"
    assert lc.spread_text(float("nan"), np.nan, np.nan, "loss") == "—"
    table = lc.summary_markdown(RESULTS, "retrieval_accuracy").splitlines()
    assert table[0] == "| method | 1× (8) | 2× (16) |"
    assert table[2] == "| RoPE | 90.0% ±5.0 | 30.0% ±10.0 |"
    assert len(table) == 2 + 3


def test_rows_are_sorted_best_first_and_every_figure_draws():
    fig, axes = plt.subplots(1, 2)
    order = lc.draw_metric_rows(axes[1], RESULTS, "retrieval_accuracy")
    assert order == ["none", "alibi", "rope"]  # by accuracy at the longest length
    assert lc.draw_metric_rows(axes[0], RESULTS, "loss", order_by=-1) == ["alibi", "none", "rope"]
    assert [t.get_text() for t in axes[1].get_yticklabels()] == ["RoPE", "ALiBi", "NoPE"]
    fig, ax = plt.subplots()
    lc.draw_separation(ax, RESULTS, "retrieval_accuracy", order)
    grid = ax.images[0].get_array()
    assert grid[0, 1] < 0 < grid[1, 0] and grid[1, 2] == grid[2, 1] == 0  # better: blue end
    fig, ax = plt.subplots()
    lc.draw_loss_vs_retrieval(ax, RESULTS, label_offsets={"rope": (-4, -3)})
    assert [t.get_text() for t in ax.texts] == ["RoPE", "ALiBi", "NoPE"]
    fig, axes = plt.subplots(1, 2)
    lc.draw_finetuning(axes, RESULTS, ["rope", "alibi"], length_index=1)
    fig, ax = plt.subplots()
    lc.draw_accuracy_by_distance(ax, RESULTS, ["rope", "none"])
    assert len(ax.lines) == 3  # two methods and the L_train line
    plt.close("all")


def test_committed_main_run_draws_with_every_variant():
    results = load_results("take3_main.json")
    fig, ax = plt.subplots()
    order = lc.draw_metric_rows(ax, results, "retrieval_accuracy")
    assert set(order) == set(results["variants"])
    accuracy = [lc.metric(results, v, "retrieval_accuracy")[0][-1] for v in order]
    defined = [a for a in accuracy if not np.isnan(a)]
    assert defined == sorted(defined, reverse=True)
    plt.close("all")


@pytest.mark.parametrize("key", ["loss", "retrieval_accuracy", "positional_accuracy"])
def test_metric_of_one_seed_has_no_spread(key):
    results = load_results("take3_main.json")
    mean, low, high = lc.metric(results, "rope", key)
    assert np.array_equal(mean, low) and np.array_equal(mean, high)


def test_a_constrained_layout_figure_is_not_cropped_before_its_layout_runs():
    from posenc.course.figures.style import tight_bbox
    fig, axes = plt.subplots(1, 2, figsize=(6.88, 4), layout="constrained")
    lc.draw_metric_rows(axes[1], RESULTS, "retrieval_accuracy")
    lc.draw_metric_rows(axes[0], RESULTS, "loss", show_legend=False)
    box = tight_bbox(fig)  # before any draw: the layout must run first
    assert box.x0 > -0.1 and box.y0 > -0.1 and box.x1 < 6.88 + 0.1 and box.y1 < 4 + 0.1
    plt.close(fig)


def test_html_table_has_the_same_cells_as_the_markdown_one():
    html = lc.summary_html(RESULTS, "loss")
    assert html.count("<tr>") == 1 + 3 and ">2× (16)</th>" in html
    assert 'text-align:right">1.000 ±0.100</td>' in html
    assert "| RoPE | 1.000 ±0.100 | 2.000 ±0.100 |" in lc.summary_markdown(RESULTS, "loss")


def test_mean_at_and_beats_read_the_hand_made_results():
    assert lc.mean_at(RESULTS, "rope", "loss", 1) == 2.0
    assert lc.beats(RESULTS, "none", "alibi", "retrieval_accuracy", 1)  # 0.88-0.92 vs 0.35-0.65
    assert not lc.beats(RESULTS, "alibi", "none", "retrieval_accuracy", 1)  # worse, not better
    assert not lc.beats(RESULTS, "rope", "alibi", "loss", 0)  # ranges overlap


def test_middle_dip_is_the_ends_minus_the_middle():
    """A U-shaped accuracy over distance (Liu et al.'s "lost in the middle") gives a
    positive dip; a flat or falling one gives zero or less."""
    def results(by_distance):
        return {"variants": {"m": {"positional_by_distance": [by_distance],
                                   "retrieval_by_distance": [None]}}}
    assert lc.middle_dip(results([0.9, 0.5, 0.4, 0.8]), "m", "positional", 0) == (
        pytest.approx((0.9 + 0.8) / 2 - 0.45))
    assert lc.middle_dip(results([0.6, 0.6, 0.6]), "m", "positional", 0) == pytest.approx(0)
    assert lc.middle_dip(results([1.0, 0.8, 0.6, 0.4]), "m", "positional", 0) == (
        pytest.approx(0.0))  # a straight fall: the ends average the middle
    assert np.isnan(lc.middle_dip(results([0.5, 0.5]), "m", "positional", 0))
    assert np.isnan(lc.middle_dip(results([0.5, 0.5, 0.5]), "m", "content", 0))  # undefined
    assert lc.spread_text(0.25, 0.2, 0.3, "positional_accuracy") == "25.0% ±5.0"


def test_length_markers_differ_in_shape_and_colour_not_only_in_shade():
    """The review could not tell 2x, 4x and 8x apart as grey squares, diamonds and triangles:
    each length has its own shape and a colour of its own hue (1x stays black)."""
    from matplotlib.colors import rgb_to_hsv, to_rgb

    markers, colours = zip(*lc.LENGTH_MARKERS, strict=True)
    assert len(set(markers)) == len(markers) == 4
    hsv = [rgb_to_hsv(to_rgb(c)) for c in colours[1:]]
    assert all(s > 0.5 for _, s, _ in hsv)  # saturated: not greys
    hues = sorted(h for h, _, _ in hsv)
    assert min(b - a for a, b in zip(hues, hues[1:], strict=False)) > 0.1
