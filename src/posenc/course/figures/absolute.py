"""Draw functions for the figures of the first three chapters (order, sinusoidal, learned).

Each ``draw_*(fig, ...)`` draws into a fresh matplotlib figure, so it can be handed
to :func:`posenc.course.figures.sliders.slider_figure` (the slider values are its keyword
arguments) or called once for a static figure. The numbers come from
:mod:`posenc.sinusoidal` and :mod:`posenc.nn`: nothing is computed twice.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from ..._validation import check_int
from ...sinusoidal import sinusoidal_dot_product, sinusoidal_encoding, sinusoidal_wavelengths
from .sliders import format_value
from .style import COLORS, DIVERGING, METHOD_COLORS

__all__ = [
    "running_mean",
    "draw_pe_heatmap",
    "draw_wavelengths",
    "draw_dot_product",
    "draw_stretched_columns",
    "draw_injection_schematic",
    "INJECTION_POINTS",
    "MIN_PX_PER_CELL",
]


def running_mean(values, window: int) -> np.ndarray:
    """Centred moving average of a 1-D array over ``window`` samples (odd ``window``).

    Shape: ``[len(values) - window + 1]``: entry ``j`` averages
    ``values[j : j + window]``, i.e. it belongs to the centre sample ``j + window // 2``.
    """
    window = check_int("window", window)
    if window % 2 == 0:
        raise ValueError(f"window must be odd so the average is centred, got {window}")
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size < window:
        raise ValueError(f"values must be 1-D with at least window={window} entries, "
                         f"got shape {values.shape}")
    cumsum = np.concatenate([[0.0], np.cumsum(values)])
    return (cumsum[window:] - cumsum[:-window]) / window


def draw_pe_heatmap(fig, d_model: int, base: float, num_positions: int = 128):
    """Heatmap of the sinusoidal table: positions down, dimensions across.

    Shows ``sinusoidal_encoding(num_positions, d_model, base)`` on a fixed colour
    scale ``[-1, 1]`` in 16 levels of the course's perceptually uniform diverging map
    (:data:`posenc.course.figures.style.DIVERGING`). Where the frame has at least
    :data:`MIN_PX_PER_CELL` pixels per column, every cell is drawn crisp (no blending
    of a sin column into its cos neighbour); a wider table is resampled with an
    anti-aliasing filter before colour mapping, never subsampled, which would draw
    moire stripes that are not in the data. Returns the axes.
    """
    pe = sinusoidal_encoding(num_positions, d_model, base)  # [positions, d_model]
    ax = fig.add_subplot()
    # 16 colour levels, applied after resampling: a frame compresses to a third, and the
    # bands still show every stripe
    image = ax.imshow(pe, aspect="auto", cmap=DIVERGING.resampled(16), vmin=-1, vmax=1,
                      interpolation="nearest", interpolation_stage="data")
    ax.set_xlabel("dimension (column 2i = sin, 2i+1 = cos)")
    ax.set_ylabel("position p")
    ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))  # fewer labels, faster frames
    ax.yaxis.set_major_locator(MaxNLocator(4, integer=True))
    ax.grid(False)
    ax.set_title(f"PE heatmap: d_model={d_model}, base={format_value(base)}")
    colorbar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02, ticks=[-1, 0, 1])
    colorbar.ax.minorticks_off()
    axes_px = ax.get_position().width * fig.get_figwidth() * fig.dpi  # after the colorbar
    if axes_px / d_model < MIN_PX_PER_CELL:
        image.set_interpolation("hanning")
    return ax


#: Fewer image pixels per heatmap cell than this and nearest-neighbour drawing aliases.
MIN_PX_PER_CELL = 4

_DECADE_LABELS = ["10", "100", "1k", "10k", "100k", "1M", "10M"]


def draw_wavelengths(fig, d_model: int, base: float, seq_len: int = 128):
    """Wavelength ``2 pi base^(2i/d)`` of every sin/cos pair, on a log scale.

    Dashed line: the sequence length ``seq_len`` (pairs above it do not complete
    one cycle over the sequence); dotted line: ``2 pi``, the shortest wavelength.
    The y-range is fixed for every ``d_model`` and ``base`` of the course's sliders.
    (It plots ``log10`` of the wavelength on a linear axis labelled in decades:
    the same picture as a log axis at half the drawing time.) Returns the axes.
    """
    wavelengths = sinusoidal_wavelengths(d_model, base)  # [ceil(d/2)]
    columns = np.arange(0, d_model, 2)
    slow = int(np.sum(wavelengths > seq_len))
    ax = fig.add_subplot()
    ax.plot(columns, np.log10(wavelengths), "o-", color=METHOD_COLORS["sinusoidal"],
            markersize=3 if d_model <= 64 else 0, linewidth=1.5)
    ax.axhline(np.log10(seq_len), color=COLORS[3], linestyle="--", linewidth=1)
    ax.axhline(np.log10(2 * np.pi), color="#555555", linestyle=":", linewidth=1)
    ax.text(0.01 * d_model, np.log10(seq_len) + 0.12, f"sequence length {seq_len}",
            color=COLORS[3], fontsize=9)
    ax.text(0.99 * d_model, np.log10(2 * np.pi) + 0.12, "2π (pair 0)", color="#555555",
            fontsize=9, ha="right")
    ax.set_yticks(np.arange(1, 8), _DECADE_LABELS)
    ax.set_ylim(0.3, 7.5)
    ax.set_xlim(-0.02 * d_model, 1.02 * d_model)
    ax.set_xlabel("column 2i of the pair")
    ax.set_ylabel("wavelength (positions)")
    ax.set_title(f"Wavelengths: d_model={d_model}, base={format_value(base)} "
                 f"({slow}/{len(wavelengths)} pairs > {seq_len})")
    return ax


def draw_dot_product(fig, d_model: int, base: float, max_distance: int = 256,
                     window: int = 31):
    """``PE[p] . PE[p+k] / (d_model / 2)`` against the distance ``k``, with its running mean.

    The curve is symmetric in ``k`` and oscillates; the dashed running mean over
    ``window`` distances shows the decay that holds only on average. Returns the axes.
    """
    k = np.arange(-max_distance, max_distance + 1)
    similarity = sinusoidal_dot_product(k, d_model, base) / (d_model / 2)
    smooth = running_mean(similarity, window)
    ax = fig.add_subplot()
    ax.plot(k, similarity, color=METHOD_COLORS["sinusoidal"], linewidth=1.0,
            label="PE[p]·PE[p+k] / (d/2)")
    ax.plot(k[window // 2 : len(k) - window // 2], smooth, color=COLORS[1], linestyle="--",
            linewidth=1.8, label=f"running mean ({window} distances)")
    ax.axhline(0, color="#888888", linewidth=0.8)
    ax.set_ylim(-0.7, 1.05)
    ax.set_xlim(-max_distance, max_distance)
    ax.set_xlabel("distance k")
    ax.set_ylabel("normalised dot product")
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9)
    ax.set_title(f"PE[p]·PE[p+k]: d_model={d_model}, base={format_value(base)}")
    return ax


def draw_stretched_columns(fig, table, new_length: int, columns=(3, 5, 9)):
    """A few columns of a ``[L, d]`` position table before and after linear stretching.

    Top: the columns of ``table`` over its ``L`` positions. Bottom: the same columns
    of ``interpolate_table(table, new_length)`` (what
    ``LearnedPositionalEmbedding(interpolate="linear")`` returns for a longer
    sequence). The dashed line marks the last trained position ``L - 1``.
    Returns the two axes.
    """
    import torch

    from ...nn.absolute import interpolate_table

    table = torch.as_tensor(np.asarray(table, dtype=np.float32))
    length = table.shape[0]
    new_length = check_int("new_length", new_length, minimum=2)
    stretched = interpolate_table(table, new_length).numpy()
    top, bottom = fig.subplots(2, 1, sharex=True)
    for color, col in zip(COLORS, columns, strict=False):
        top.plot(np.arange(length), table[:, col].numpy(), color=color, linewidth=1.2,
                 label=f"column {col}")
        bottom.plot(np.arange(new_length), stretched[:, col], color=color, linewidth=1.2)
    for ax in (top, bottom):
        ax.axvline(length - 1, color="#555555", linestyle="--", linewidth=1)
        ax.set_ylim(-1.5, 1.5)
    top.set_title(f"Learned table stretched from L={length} to L'={new_length} rows",
                  fontsize=10)
    top.set_ylabel(f"original\n({length} rows)")
    bottom.set_ylabel(f"stretched\n({new_length} rows)")
    bottom.set_xlabel("position")
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    return top, bottom


_SCHEMATIC_STAGES = ["token\nvectors x", "project\n$W_q, W_k, W_v$", "q, k, v",
                     "scores\n$q\\cdot k/\\sqrt{d}$", "softmax", "weights\n× v"]

#: (stage index, method key, note): where each method injects position.
INJECTION_POINTS = [
    (0, "sinusoidal", "sinusoidal\n$x_p + PE_p$"),
    (0, "learned", "learned\n$x_p + E_p$"),
    (2, "rope", "RoPE\nrotate $q_i$, $k_j$"),
    (2, "shaw", "Shaw\n$k_j + a^K_{j-i}$"),
    (3, "alibi", "ALiBi\n$-m\\,(i-j)$"),
    (3, "t5", "T5\n$+\\,b_{\\mathrm{bucket}(j-i)}$"),
    (5, "shaw", "Shaw\n$v_j + a^V_{j-i}$"),
]


def draw_injection_schematic(fig):
    """Schematic of one attention layer with the point where each method adds position.

    Boxes are the stages of self-attention, left to right; coloured tags (one
    colour per method, :data:`posenc.course.figures.style.METHOD_COLORS`) hang at the stage
    where that method injects position: above the row for the first method at a
    stage, below it for the second. Returns the axes.
    """
    ax = fig.add_subplot()
    ax.set_axis_off()
    xs = np.arange(len(_SCHEMATIC_STAGES)) * 1.6
    for i, label in enumerate(_SCHEMATIC_STAGES):
        ax.text(xs[i], 0, label, ha="center", va="center", fontsize=8.5,
                bbox={"boxstyle": "round,pad=0.4", "facecolor": "#f2f2f2",
                      "edgecolor": "#555555"})
        if i:
            ax.annotate("", xy=(xs[i] - 0.55, 0), xytext=(xs[i - 1] + 0.55, 0),
                        arrowprops={"arrowstyle": "->", "color": "#555555"})
    placed: dict[int, int] = {}
    for stage, method, note in INJECTION_POINTS:
        side = 1 if placed.get(stage, 0) == 0 else -1
        placed[stage] = placed.get(stage, 0) + 1
        color = METHOD_COLORS[method]
        ax.annotate(note, xy=(xs[stage], 0.42 * side), xytext=(xs[stage], 1.35 * side),
                    ha="center", va="center", fontsize=8, color="white",
                    bbox={"boxstyle": "round,pad=0.3", "facecolor": color, "edgecolor": color},
                    arrowprops={"arrowstyle": "->", "color": color, "linewidth": 1.5})
    ax.set_xlim(xs[0] - 0.8, xs[-1] + 0.8)
    ax.set_ylim(-1.9, 1.9)
    ax.set_title("Where each method injects position into self-attention")
    return ax
