"""Draw functions for the figures of the first three chapters (order, sinusoidal, learned).

Each ``draw_*(fig, ...)`` draws into a fresh matplotlib figure, so it can be handed
to :func:`posenc.course.figures.sliders.slider_figure` (the slider values are its keyword
arguments) or called once for a static figure. The numbers come from :mod:`posenc.nn`:
nothing is computed twice. Chapter 2's sinusoidal figures are live ones, drawn in the
reader's browser (:data:`posenc.course.figures.live.LIVE`).
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_int
from .style import COLORS, METHOD_COLORS

__all__ = [
    "running_mean",
    "draw_stretched_columns",
    "draw_injection_schematic",
    "INJECTION_POINTS",
]


def running_mean(values, window: int) -> np.ndarray:
    """Centred moving average of a 1-D array over ``window`` samples (odd ``window``).

    Shape: ``[len(values) - window + 1]``: entry ``j`` averages
    ``values[j : j + window]``, i.e. it belongs to the centre sample ``j + window // 2``.
    The live dot-product figure's running mean (``runningMean`` in ``posenc-live.js``) is
    tested against it.
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
