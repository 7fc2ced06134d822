"""Figures and tables of chapter 13 (train short, test long, take two), drawn from a
results dict of the long-context presets (:data:`~posenc.experiments.extrapolation.PRESETS`
``main``/``full``/``small``, or a committed file).

Error bars are the range over seeds (min to max); with one seed there are none. A
difference is called *separated* when the two ranges do not overlap.
"""

from __future__ import annotations

import numpy as np

from ...compare import html_table
from ...experiments.extrapolation.config import task_key
from ...experiments.extrapolation.results import Numbers
from ...experiments.extrapolation.variants import VariantKey
from .extrapolation import variant_color, variant_linestyle
from .style import DIVERGING

__all__ = ["LENGTH_MARKERS", "metric", "mean_at", "beats", "spread_text", "summary_table",
           "summary_markdown", "summary_html", "middle_dip", "separated", "separated_pairs",
           "draw_metric_rows", "draw_accuracy_by_distance", "draw_loss_vs_retrieval",
           "draw_finetuning", "draw_separation"]

#: Marker and colour per evaluation multiple (1x, 2x, 4x, 8x), for the row plots: a shape and
#: a colour each (Okabe and Ito's colour-blind-safe palette), so no two need telling apart by
#: shade alone.
LENGTH_MARKERS = (("o", "#1b1b1b"), ("s", "#0072B2"), ("D", "#009E73"), ("^", "#D55E00"))

_NAMES = {"loss": "loss (nats / byte)", "retrieval_accuracy": "content retrieval accuracy",
          "positional_accuracy": "positional retrieval accuracy"}


def _is_accuracy(key: str) -> bool:
    """Whether ``key`` is a retrieval accuracy (either task), not the loss."""
    return key.endswith("_accuracy")


def metric(results: dict, variant: str, key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mean, low, high)`` of ``key`` ("loss", "retrieval_accuracy" (content) or
    "positional_accuracy") per evaluation
    length, each float ``[lengths]`` (NaN where not defined); low = high = mean for one seed
    (the variant's :class:`~posenc.experiments.extrapolation.Numbers`)."""
    return Numbers.of(results["variants"][variant], key).arrays()


def mean_at(results: dict, variant: str, key: str, length_index: int) -> float:
    """The mean over seeds of ``key`` for ``variant`` at one evaluation length (NaN where
    not defined)."""
    return float(metric(results, variant, key)[0][length_index])


def beats(results: dict, a: str, b: str, key: str, length_index: int) -> bool:
    """Whether ``a`` is better than ``b`` (lower loss, higher accuracy) beyond the spread
    at that length: their seed ranges do not overlap (:func:`separated`)."""
    return separated_pairs(results, key, length_index, [a, b]) == [(a, b)]


def spread_text(mean: float, low: float, high: float, key: str, *,
                seeds: bool | None = None) -> str:
    """``"1.234 ±0.010"`` (loss) or ``"87.5% ±2.3"`` (accuracy, in points): the mean and
    half the range over seeds; "—" where not defined. ``seeds`` says whether there were
    several (then "±0.0" is shown when they agree); by default, whether the range is wide."""
    if np.isnan(mean):
        return "—"
    half = (high - low) / 2
    shown = high > low if seeds is None else seeds
    if _is_accuracy(key):
        return f"{mean:.1%}" + (f" ±{100 * half:.1f}" if shown else "")
    return f"{mean:.3f}" + (f" ±{half:.3f}" if shown else "")


def summary_table(results: dict, key: str, variants=None) -> tuple[list[str], list[list[str]]]:
    """``(header, rows)``: one row per variant (its label, then one cell per evaluation
    length), each cell the mean ± half the seed range (:func:`spread_text`)."""
    variants = list(results["variants"]) if variants is None else list(variants)
    train = results["train_length"]
    lengths = results["eval_lengths"]
    header = ["method", *(f"{n // train}× ({n})" for n in lengths)]
    rows = [[results["variants"][v]["label"],
             *(spread_text(*(a[i] for a in metric(results, v, key)), key,
                           seeds=f"{key}_min" in results["variants"][v])
               for i in range(len(lengths)))] for v in variants]
    return header, rows


def summary_markdown(results: dict, key: str, variants=None) -> str:
    """:func:`summary_table` as a Markdown table."""
    header, rows = summary_table(results, key, variants)
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def summary_html(results: dict, key: str, variants=None) -> str:
    """:func:`summary_table` as an HTML table (numbers right-aligned), for a notebook."""
    header, rows = summary_table(results, key, variants)
    return html_table(header, rows, f"{key.replace('_', ' ')} by evaluation length",
                      numbers_from=1, compact=True)


def middle_dip(results: dict, variant: str, task: str = "content",
               length_index: int = -1) -> float:
    """How much lower a variant's accuracy is in the middle of the window than at its two
    ends ("lost in the middle", Liu et al., 2024): the mean accuracy at the nearest and the
    farthest distance minus the mean over the distances between them (percentage points
    as a fraction; positive: a dip in the middle). NaN where not defined."""
    accuracy = results["variants"][variant][task_key(task, "by_distance")][length_index]
    if accuracy is None or len(accuracy) < 3:
        return float("nan")
    accuracy = np.asarray(accuracy, dtype=np.float64)  # [distances], nearest first
    return float((accuracy[0] + accuracy[-1]) / 2 - accuracy[1:-1].mean())


def separated(results: dict, a: str, b: str, key: str, length_index: int) -> bool:
    """Whether ``a`` and ``b`` differ by more than the spread: their seed ranges of ``key``
    at evaluation length ``length_index`` do not overlap (False where either is undefined)."""
    _, low_a, high_a = metric(results, a, key)
    _, low_b, high_b = metric(results, b, key)
    i = length_index
    if np.isnan([low_a[i], low_b[i]]).any():
        return False
    return bool(high_a[i] < low_b[i] or high_b[i] < low_a[i])


def separated_pairs(results: dict, key: str, length_index: int, variants=None):
    """Every pair ``(better, worse)`` whose ranges at that length do not overlap (lower loss
    or higher accuracy is better), in the order of ``variants``."""
    variants = list(results["variants"]) if variants is None else list(variants)
    sign = -1.0 if key == "loss" else 1.0
    pairs = []
    for i, a in enumerate(variants):
        for b in variants[i + 1:]:
            if separated(results, a, b, key, length_index):
                mean_a = metric(results, a, key)[0][length_index]
                mean_b = metric(results, b, key)[0][length_index]
                pairs.append((a, b) if sign * mean_a > sign * mean_b else (b, a))
    return pairs


def draw_metric_rows(ax, results: dict, key: str, variants=None, *, order_by: int | None = -1,
                     show_legend: bool = True) -> list[str]:
    """One row per variant, a marker per evaluation length (:data:`LENGTH_MARKERS`) with the
    seed range as a horizontal bar. Rows sorted by the value at evaluation length
    ``order_by`` (best on top; ``None`` keeps the given order). Returns the row order."""
    variants = list(results["variants"]) if variants is None else list(variants)
    if order_by is not None:
        sign = 1.0 if key == "loss" else -1.0

        def rank(v):
            value = metric(results, v, key)[0][order_by]
            return np.inf if np.isnan(value) else sign * value
        variants.sort(key=rank)
    train = results["train_length"]
    for row, variant in enumerate(variants):
        mean, low, high = metric(results, variant, key)
        y = len(variants) - 1 - row
        ax.plot(mean, np.full_like(mean, y), color="#cccccc", lw=1, zorder=1)
        for i, (marker, shade) in enumerate(LENGTH_MARKERS[:len(mean)]):
            if np.isnan(mean[i]):
                continue
            ax.plot([low[i], high[i]], [y, y], color=shade, lw=2.2, zorder=2,
                    solid_capstyle="butt")
            ax.plot(mean[i], y, marker=marker, color=shade, ms=5.5, ls="none", zorder=3,
                    mec="white", mew=0.6,
                    label=f"{results['eval_lengths'][i] // train}× $L_{{train}}$"
                    if row == 0 else None)
    ax.set_yticks(range(len(variants)),
                  [results["variants"][v]["label"] for v in reversed(variants)])
    ax.set_ylim(-0.6, len(variants) - 0.4)
    ax.set_xlabel(_NAMES[key])
    ax.grid(axis="x", color="#e6e6e6", lw=0.8)
    ax.set_axisbelow(True)
    if _is_accuracy(key):
        ax.set_xlim(-0.02, 1.02)
        ax.xaxis.set_major_formatter(lambda x, _: f"{x:.0%}")
    if show_legend:
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(LENGTH_MARKERS),
                  frameon=False, handletextpad=0.2, columnspacing=1.0)
    return variants


def draw_accuracy_by_distance(ax, results: dict, variants, *, length_index: int = -1,
                              task: str = "content") -> None:
    """Retrieval accuracy of ``task`` against the answer's distance, at one evaluation
    length (default the longest), one line per variant (mean over seeds), the training
    length marked."""
    train = results["train_length"]
    for variant in variants:
        entry = results["variants"][variant]
        distances = entry[task_key(task, "distances")][length_index]
        accuracy = entry[task_key(task, "by_distance")][length_index]
        if distances is None:
            continue
        ax.plot(distances, accuracy, marker="o", ms=3.5, lw=1.6, color=variant_color(variant),
                ls=variant_linestyle(variant), label=entry["label"])
    ax.axvline(train, color="#555555", ls=":", lw=1.2)
    ax.text(train, 0.02, " $L_{train}$", transform=ax.get_xaxis_transform(), va="bottom",
            fontsize=9, color="#555555")
    ax.set_ylim(-0.03, 1.03)
    ax.yaxis.set_major_formatter(lambda y, _: f"{y:.0%}")
    ax.set_xlabel(f"distance from the query back to the answer (bytes), in windows of "
                  f"{results['eval_lengths'][length_index]}")
    ax.set_ylabel(_NAMES[task_key(task, "accuracy")].replace(" retrieval", ""))


def draw_loss_vs_retrieval(ax, results: dict, variants=None, *, length_index: int = -1,
                           annotate: bool = True, label_offsets=None, x: str = "loss",
                           y: str = "retrieval_accuracy") -> None:
    """Each variant as a point: x its ``x`` (default the held-out loss), y its ``y``
    (default content retrieval accuracy), both at one evaluation length (default the
    longest), with the seed ranges as error bars: two rankings of the same models.
    ``label_offsets`` moves labels that would collide: ``{variant: (dx, dy)}`` in points
    (default ``(4, 3)``: up and to the right)."""
    offsets = {} if label_offsets is None else dict(label_offsets)
    variants = list(results["variants"]) if variants is None else list(variants)
    i = length_index
    for variant in variants:
        loss, loss_low, loss_high = (a[i] for a in metric(results, variant, x))
        acc, acc_low, acc_high = (a[i] for a in metric(results, variant, y))
        if np.isnan(loss) or np.isnan(acc):
            continue
        color = variant_color(variant)
        ax.errorbar(loss, acc, xerr=[[loss - loss_low], [loss_high - loss]],
                    yerr=[[acc - acc_low], [acc_high - acc]], fmt="o", ms=5, color=color,
                    ecolor=color, elinewidth=1, capsize=0)
        if annotate:
            dx, dy = offsets.get(variant, (4, 3))
            ax.annotate(results["variants"][variant]["label"], (loss, acc),
                        xytext=(dx, dy), textcoords="offset points", fontsize=8,
                        color="#333333", ha="left" if dx >= 0 else "right",
                        va="bottom" if dy >= 0 else "top")
    n = results["eval_lengths"][i] // results["train_length"]
    ax.set_xlabel(f"held-out loss at {n}× (nats / byte; left is better)" if x == "loss"
                  else f"{_NAMES[x]} at {n}×")
    ax.set_ylabel(f"{_NAMES[y]} at {n}×")
    ax.yaxis.set_major_formatter(lambda value, _: f"{value:.0%}")
    if _is_accuracy(x):
        ax.xaxis.set_major_formatter(lambda value, _: f"{value:.0%}")


def draw_finetuning(axes, results: dict, variants, *, length_index: int,
                    keys=("loss", "retrieval_accuracy")) -> None:
    """One panel per key (``axes`` as many; default held-out loss and content retrieval
    accuracy) at one evaluation length for each variant, as horizontal bars with the seed
    range."""
    labels = [results["variants"][v]["label"] for v in variants]
    y = np.arange(len(variants))[::-1]
    for ax, key in zip(axes, keys, strict=True):
        for row, variant in zip(y, variants, strict=True):
            mean, low, high = (a[length_index] for a in metric(results, variant, key))
            ax.barh(row, mean, color=variant_color(variant), zorder=2,
                    alpha=1.0 if VariantKey.of(variant).kind == "finetuned" else 0.45, height=0.7)
            ax.plot([low, high], [row, row], color="#222222", lw=1.4)
            text = spread_text(mean, low, high, key)
            ax.text(max(mean, high), row, f"  {text}", va="center", fontsize=8, color="#222222")
        ax.set_xlabel(_NAMES[key])
        ax.set_yticks(y, labels if ax is axes[0] else [""] * len(labels))
        if _is_accuracy(key):
            ax.set_xlim(0, 1.3)
            ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
            ax.xaxis.set_major_formatter(lambda x, _: f"{x:.0%}")
        else:
            ax.set_xlim(0, max(metric(results, v, "loss")[2][length_index]
                               for v in variants) * 1.35)


def draw_separation(ax, results: dict, key: str, variants, *, length_index: int = -1) -> None:
    """Which differences are larger than the spread: cell (row, column) is filled when the
    row's method is better than the column's and their seed ranges do not overlap
    (:func:`separated`), blue for better, orange for worse, blank when they overlap."""
    variants = list(variants)
    n = len(variants)
    grid = np.zeros((n, n))
    for better, worse in separated_pairs(results, key, length_index, variants):
        i, j = variants.index(better), variants.index(worse)
        grid[i, j], grid[j, i] = -1.0, 1.0  # the map's blue end: better
    ax.imshow(grid, cmap=DIVERGING, vmin=-1.6, vmax=1.6, interpolation="nearest")
    labels = [results["variants"][v]["label"] for v in variants]
    ax.set_xticks(range(n), labels, rotation=60, ha="right", rotation_mode="anchor",
                  fontsize=8)
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.set_xticks(np.arange(n + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(n + 1) - 0.5, minor=True)
    ax.grid(False)
    ax.grid(which="minor", color="white", lw=1)
    ax.tick_params(which="minor", length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    times = results["eval_lengths"][length_index] // results["train_length"]
    ax.set_title(f"{_NAMES[key]} at {times}×: blue, row beats column beyond the spread",
                 fontsize=9, loc="right")
