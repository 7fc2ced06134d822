"""No figure's text is cut at the edge of the saved image.

Each figure is drawn as its chapter draws it and cropped as the course saves it
(:func:`posenc.course.figures.style.frame_geometry`); every visible text's extent, at
the resolution the image is saved at, must lie inside the crop. Chapter 13's separation
matrix lost the start of its longest label ("RoPE + NoPE layers (1 in 4)") when the crop
was measured at one resolution and the image saved at another.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from test_figures_legibility import SLIDER_FIGURES  # noqa: E402

from posenc.course.figures import long_context as lc  # noqa: E402
from posenc.course.figures.style import (  # noqa: E402
    COLUMN_CSS_PX,
    COURSE_RC,
    DEVICE_PX_PER_CSS_PX,
    FIGURE_WIDTH,
    FRAME_DPI,
    clipped_texts,
    frame_geometry,
)
from posenc.course.results import load_results  # noqa: E402


def _check(fig, width_px):
    bbox, dpi = frame_geometry(fig, width_px=width_px)
    cut = clipped_texts(fig, bbox, dpi)
    plt.close(fig)
    assert cut == [], f"text cut at the edge of the image: {cut}"


@pytest.mark.parametrize("draw, values, figsize", SLIDER_FIGURES)
def test_slider_figures_keep_all_their_text(draw, values, figsize):
    with plt.rc_context(COURSE_RC):
        fig = plt.figure(figsize=figsize, dpi=FRAME_DPI)
        draw(fig, **values)
        _check(fig, round(figsize[0] * FRAME_DPI))


def _long_context(kind):
    """Chapter 13's static figures, drawn as the chapter draws them."""
    results = load_results("full.json")
    trained = [v for v, entry in results["variants"].items() if entry.key.kind != "finetuned"]
    models = [v for v in trained if "history" in results["variants"][v]]
    if kind == "separation":
        fig, ax = plt.subplots(figsize=(FIGURE_WIDTH, 6.8), layout="constrained")
        lc.draw_separation(ax, results, "positional_accuracy", models)
    elif kind == "finetuning":
        fig, axes = plt.subplots(1, 2, figsize=(FIGURE_WIDTH, 2.9), layout="constrained")
        lc.draw_finetuning(axes, results, ["rope", "rope_pi", "rope_ft_none", "rope_ft_linear",
                                           "rope_ft_ntk", "rope_ft_yarn"], length_index=2)
    elif kind == "by_distance":
        fig, axes = plt.subplots(1, 2, figsize=(FIGURE_WIDTH, 3.6), sharey=True,
                                 layout="constrained")
        for ax, task in zip(axes, ("content", "positional"), strict=True):
            lc.draw_accuracy_by_distance(ax, results, models[:8], task=task)
        fig.legend(*axes[1].get_legend_handles_labels(), loc="outside lower center", ncol=4,
                   fontsize=8, frameon=False)
    else:
        fig, axes = plt.subplots(1, 2, figsize=(FIGURE_WIDTH, 7.2), sharey=True,
                                 layout="constrained")
        order = lc.draw_metric_rows(axes[1], results, "positional_accuracy", trained, order_by=0)
        lc.draw_metric_rows(axes[0], results, "retrieval_accuracy", order, order_by=None,
                            show_legend=False)
    return fig


@pytest.mark.parametrize("kind", ["separation", "finetuning", "metric_rows", "by_distance"])
def test_chapter_13_static_figures_keep_all_their_text(kind):
    with plt.rc_context(COURSE_RC):
        fig = _long_context(kind)
        # as the notebooks' inline figures are saved (style.inline_png)
        _check(fig, DEVICE_PX_PER_CSS_PX * COLUMN_CSS_PX)
