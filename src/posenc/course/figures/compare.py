"""Figures of the side-by-side chapter: how each method's scores fall with distance.

The curves are computed in :mod:`posenc.compare`; this module only draws them.
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_int
from ...alibi import alibi_slopes
from ...compare import alibi_weight_factor, rope_mean_score, sinusoidal_similarity
from ...relative import t5_relative_bucket
from .style import METHOD_COLORS

__all__ = ["draw_distance_comparison"]


def draw_distance_comparison(fig, *, d_model: int = 512, head_dim: int = 64, num_heads: int = 8,
                             base: float = 10000.0, num_buckets: int = 32,
                             max_distance: int = 128, max_plot: int = 4096):
    """Four panels over every integer distance ``k = 1 .. max_plot`` (log axis; all are 1 at k=0).

    (a) sinusoidal similarity for ``d_model``; (b) RoPE's mean score for ``head_dim``;
    (c) ALiBi's weight factor for each head; (d) T5's bucket
    for a key ``k`` positions before the query (encoder and decoder), with
    ``max_distance`` marked -- each bucket's bias is learned, so it is not drawn.
    """
    k = np.arange(1, check_int("max_plot", max_plot, minimum=2) + 1)  # every integer distance
    axes = fig.subplots(2, 2, sharex=True).ravel()

    ax = axes[0]
    ax.plot(k, sinusoidal_similarity(k, d_model, base), color=METHOD_COLORS["sinusoidal"],
            lw=0.7)
    ax.set_title(f"(a) sinusoidal PE·PE, d = {d_model}")

    ax = axes[1]
    ax.plot(k, rope_mean_score(k, head_dim, base), color=METHOD_COLORS["rope"], lw=0.7)
    ax.set_title(f"(b) RoPE, mean q·R_k q, d_head = {head_dim}")
    for ax in axes[:2]:
        ax.axhline(0, color="#555555", lw=0.6)
        ax.set_ylim(-0.35, 1.05)
    axes[0].set_ylabel(f"relative to k = 0\n(base {base:g})")

    ax = axes[2]
    weights = alibi_weight_factor(k, num_heads)
    slopes = alibi_slopes(num_heads)
    shades = np.linspace(1.0, 0.35, num_heads)
    for h in range(num_heads):
        label = f"m = 1/{1 / slopes[h]:g}" if h in (0, num_heads - 1) else None
        ax.plot(k, weights[h], color=METHOD_COLORS["alibi"], alpha=float(shades[h]), lw=1.2,
                label=label)
    ax.set_title(f"(c) ALiBi, exp(−m k), {num_heads} heads")
    ax.set_ylabel("relative to k = 0")
    ax.legend(loc="lower left")

    ax = axes[3]
    for bidirectional, ls in ((True, "-"), (False, "--")):
        bucket = t5_relative_bucket(-k, bidirectional=bidirectional, num_buckets=num_buckets,
                                    max_distance=max_distance)
        ax.step(k, bucket, where="post", color=METHOD_COLORS["t5"], ls=ls, lw=1.4,
                label="encoder" if bidirectional else "decoder")
    ax.axvline(max_distance, color="#555555", ls=":", lw=1)
    ax.text(max_distance * 1.15, 2, f"max_distance\n= {max_distance}", color="#555555")
    ax.set_title(f"(d) T5 bucket of a key k back ({num_buckets})")
    ax.set_ylabel("bucket")
    ax.legend(loc="upper left")

    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlim(1, k[-1])
    for ax in axes[2:]:
        ax.set_xlabel("distance k (log axis)")
