"""Draw functions for the relative-position chapter (Shaw indices, T5 buckets).

Each takes a matplotlib ``Figure`` (or ``Axes``) and draws into it, so the same
function serves a static figure and every frame of a
:func:`posenc.course.figures.sliders.slider_figure`.
"""

from __future__ import annotations

import numpy as np

from ...relative import relative_positions, t5_bucket_boundaries, t5_relative_bucket
from .style import METHOD_COLORS

__all__ = ["draw_index_matrix", "draw_t5_bucket_map", "draw_t5_bucket_images"]

T5_DIRECTIONS = ("bidirectional", "causal")


def draw_index_matrix(ax, matrix, *, title: str, annotate: bool = True, cmap: str = "viridis",
                      colorbar: bool = False):
    """Show an integer ``[query, key]`` matrix as an image, each cell labelled with its value.

    Rows are queries ``i``, columns keys ``j`` (both from 0, top-left). A matrix with
    both signs gets colour limits symmetric about 0 (so 0 sits at the middle of a
    diverging colormap). Labels are black or white, whichever reads on the cell's
    colour. Returns the image.
    """
    matrix = np.asarray(matrix)
    lo, hi = matrix.min(), matrix.max()
    if lo < 0 < hi:
        lo, hi = -max(-lo, hi), max(-lo, hi)
    im = ax.imshow(matrix, cmap=cmap, interpolation="nearest", vmin=lo, vmax=hi)
    ax.set_xlabel("key position j")
    ax.set_ylabel("query position i")
    ax.set_title(title)
    ax.grid(False)
    if annotate:
        ax.set_xticks(range(matrix.shape[1]))
        ax.set_yticks(range(matrix.shape[0]))
        for (i, j), value in np.ndenumerate(matrix):
            r, g, b, _ = im.cmap(im.norm(value))
            light = 0.299 * r + 0.587 * g + 0.114 * b > 0.5
            ax.text(j, i, str(value), ha="center", va="center", fontsize=8,
                    color="black" if light else "white")
    if colorbar:
        ax.figure.colorbar(im, ax=ax, shrink=0.8)
    return im


def _signed_log(x):
    """``sign(x) * log10(1 + |x|)``: a log axis for both signs (a fast stand-in for symlog)."""
    x = np.asarray(x, dtype=np.float64)
    return np.sign(x) * np.log10(1.0 + np.abs(x))


def draw_t5_bucket_map(fig, num_buckets: int = 32, max_distance: int = 128, *,
                       span: int = 4096):
    """T5's bucket against ``relative_position = key - query``, encoder and decoder.

    The x axis is logarithmic on both sides of 0. Solid: the encoder's two-sided
    buckets; dashed: the decoder's (keys after the query all get bucket 0, and are
    masked anyway). The title says how many buckets each uses and where its last
    bucket begins, after which every distance shares one bias. A setting T5's
    formula cannot use (``max_distance`` not above the exact buckets) is named in
    the title instead of drawn.
    """
    ax = fig.add_subplot()
    rel = np.arange(-span, span + 1)
    notes = []
    for direction, style in zip(T5_DIRECTIONS, ("-", "--"), strict=True):
        bidirectional = direction == "bidirectional"
        name = "encoder" if bidirectional else "decoder"
        try:
            bucket = t5_relative_bucket(rel, bidirectional=bidirectional,
                                        num_buckets=num_buckets, max_distance=max_distance)
        except ValueError:
            exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
            notes.append(f"{name}: invalid (max_distance must exceed {exact})")
            continue
        _, starts = t5_bucket_boundaries(num_buckets=num_buckets, max_distance=max_distance,
                                         bidirectional=bidirectional)
        ax.step(_signed_log(rel), bucket, where="mid", color=METHOD_COLORS["t5"], ls=style,
                lw=1.5, label=name)
        notes.append(f"{name}: {len(np.unique(bucket))} used, last from {int(starts[-1])}")
    ax.set_xlim(_signed_log(-span), _signed_log(span))
    ax.set_ylim(-1, num_buckets)
    ticks = np.array([-1000, -100, -10, -1, 0, 1, 10, 100, 1000])
    ax.set_xticks(_signed_log(ticks), [str(t) for t in ticks])
    ax.set_xlabel("j - i = key - query, log spaced  (left: key before the query)")
    ax.set_ylabel("bucket")
    ax.legend(loc="upper center", fontsize=8)
    ax.set_title(f"T5 buckets: num_buckets={num_buckets}, max_distance={max_distance}\n"
                 + "; ".join(notes), fontsize=9)


def draw_t5_bucket_images(fig, length: int = 200, *, num_buckets: int = 32,
                          max_distance: int = 128):
    """Two ``[query, key]`` bucket images side by side: encoder (bidirectional) and decoder.

    One colour scale (``0 .. num_buckets - 1``) for both, so equal colours are equal buckets.
    """
    fig.set_layout_engine("constrained")
    rel = relative_positions(length)
    axes = fig.subplots(1, 2)
    names = ("encoder (bidirectional)", "decoder (causal)")
    for ax, direction, name in zip(axes, T5_DIRECTIONS, names, strict=True):
        buckets = t5_relative_bucket(rel, bidirectional=direction == "bidirectional",
                                     num_buckets=num_buckets, max_distance=max_distance)
        im = draw_index_matrix(ax, buckets, title=name, annotate=False)
        im.set_clim(0, num_buckets - 1)
    axes[1].set_ylabel("")
    fig.colorbar(im, ax=axes, shrink=0.85, label="bucket")
    fig.suptitle(f"T5 bucket of every (query, key) pair: num_buckets={num_buckets}, "
                 f"max_distance={max_distance}", fontsize=10)
