"""Draw functions for the slider figures of the RoPE chapter, and :func:`slope_label`, the
exact name of an ALiBi slope that chapter 6 prints. (Chapter 4's RoPE angles and chapter 6's
ALiBi figures are live ones, drawn in the reader's browser:
:data:`posenc.course.figures.live.LIVE`.)

Each ``draw_*(fig, **values)`` draws into a fresh matplotlib figure, the way
:func:`posenc.course.figures.sliders.slider_figure` calls it. The axes limits are fixed across
slider values wherever that is possible, so that moving a slider shows a real
change and not a rescaled axis.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..._validation import check_float, check_int
from ...rope import apply_rope, rope_relative_upper_bound
from .sliders import format_value
from .style import COLORS, METHOD_COLORS

__all__ = [
    "draw_rope_pair",
    "draw_rope_decay",
    "draw_layout_mismatch",
    "target_weight",
    "slope_label",
]

ROPE = METHOD_COLORS["rope"]
GREY = "#888888"
_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_label(base: int, exponent: int) -> str:
    """``10⁻⁴`` in plain unicode: tick labels without mathtext, which is slow to render."""
    return "1" if exponent == 0 else f"{base}{str(exponent).translate(_SUPERSCRIPTS)}"


def _log_ticks(axis, exponents, base: int = 10):
    """Major ticks at ``base ** exponents`` with plain-text labels, and no minor ticks."""
    from matplotlib.ticker import FixedLocator, NullLocator

    axis.set_major_locator(FixedLocator([float(base) ** e for e in exponents]))
    axis.set_ticklabels([_power_label(base, e) for e in exponents])
    axis.set_minor_locator(NullLocator())


def draw_rope_pair(fig, position: int, theta: float = 0.5, max_position: int = 11,
                   q=(1.0, 0.3)):
    """One feature pair ``q`` rotated by ``position * theta`` (left) and its two coordinates
    against position (right), with the current position marked."""
    position = check_int("position", position, minimum=0)
    max_position = check_int("max_position", max_position, minimum=position)
    theta = check_float("theta", theta, greater_than=0.0)
    q = np.asarray(q, dtype=np.float64)
    pos = np.arange(max_position + 1)
    trail = apply_rope(np.broadcast_to(q, (len(pos), 2)).copy(), pos,
                       frequencies=[theta])  # [positions, 2]: the pair at every position
    angle = position * theta
    radius = float(np.linalg.norm(q))

    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.5]})
    circle = np.linspace(0, 2 * np.pi, 200)
    ax.plot(radius * np.cos(circle), radius * np.sin(circle), color="#cccccc", lw=1)
    ax.scatter(trail[:, 0], trail[:, 1], s=12, color=GREY, zorder=2)
    ax.annotate("", xy=q, xytext=(0, 0),
                arrowprops={"arrowstyle": "->", "color": GREY, "lw": 1.5})
    ax.annotate("", xy=trail[position], xytext=(0, 0),
                arrowprops={"arrowstyle": "->", "color": ROPE, "lw": 2.2})
    start = np.arctan2(q[1], q[0])
    arc = start + np.linspace(0, angle, 60)
    ax.plot(0.35 * radius * np.cos(arc), 0.35 * radius * np.sin(arc), color=ROPE, lw=1)
    ax.text(q[0], q[1] - 0.22, "q (m=0)", color="#555555", fontsize=9, ha="center")
    ax.text(*(1.3 * trail[position]), f"m={position}", color=ROPE, fontsize=9,
            ha="center", va="center")
    lim = 1.45 * radius
    ax.set(xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal", xticks=[], yticks=[])
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_title(f"angle m·θ = {angle:.2f} rad", fontsize=10)

    ax2.plot(pos, trail[:, 0], "-o", ms=3, color=COLORS[0], label="first coordinate")
    ax2.plot(pos, trail[:, 1], "-o", ms=3, color=COLORS[1], label="second coordinate")
    ax2.axvline(position, color=ROPE, lw=1.2)
    ax2.set(xlabel="position m", ylim=(-1.25 * radius, 1.6 * radius))
    ax2.legend(loc="upper right", fontsize=8, ncol=2, frameon=False)
    fig.suptitle(f"RoPE on one pair: position m={position}, "
                 f"θ={format_value(theta)} rad per position", fontsize=11)
    fig.subplots_adjust(top=0.8)


def draw_rope_decay(fig, base: float, head_dim: int = 128, max_distance: int = 100_000,
                    reference_base: float = 10000.0):
    """RoFormer's upper bound against relative distance (log axis): the bound itself (thin)
    and its mean over log-spaced windows (thick), with ``reference_base`` in grey."""
    max_distance = check_int("max_distance", max_distance, minimum=10)
    r = np.unique(np.round(np.geomspace(1, max_distance, 1500)).astype(np.int64))
    edges = np.geomspace(1, max_distance + 1, 41)
    window = np.digitize(r, edges) - 1  # which log-spaced window each distance falls in
    centres = np.sqrt(edges[:-1] * edges[1:])

    def window_means(bound):
        filled = np.bincount(window, minlength=40) > 0
        sums = np.bincount(window, weights=bound, minlength=40)
        return centres[filled], sums[filled] / np.bincount(window, minlength=40)[filled]

    ax = fig.add_subplot()
    if base != reference_base:
        ref = rope_relative_upper_bound(r, head_dim, reference_base)
        ax.semilogx(*window_means(ref), color="#aaaaaa", lw=2,
                    label=f"base={format_value(reference_base)}, window mean")
    bound = rope_relative_upper_bound(r, head_dim, base)
    ax.semilogx(r, bound, color=ROPE, lw=0.5, alpha=0.45)
    ax.semilogx(*window_means(bound), color=ROPE, lw=2,
                label=f"base={format_value(base)}, window mean")
    top = (head_dim // 2 + 1) / 2  # the bound at distance 0: mean of 1 .. head_dim/2
    ax.set(xlabel="relative distance m − n", ylabel="bound (mean |Sⱼ|)", ylim=(0, 1.05 * top),
           xlim=(1, max_distance))
    _log_ticks(ax.xaxis, range(int(np.log10(max_distance)) + 1))
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    ax.set_title(f"RoFormer's bound: head_dim={head_dim}, base={format_value(base)}")


def slope_label(slope: float) -> str:
    """Short exact name of an ALiBi slope: ``0.125`` -> ``"1/8"``, ``2**-0.5`` -> ``"2^-0.5"``."""
    exponent = float(np.log2(slope))
    if abs(exponent - round(exponent)) < 1e-9:  # 2**-4 computed as (2**-0.5)**8 is not exact
        return str(Fraction(2.0 ** round(exponent)).limit_denominator(1 << 20))
    return f"2^{exponent:.6g}"


def target_weight(weights: np.ndarray, offset: int = 3) -> float:
    """The mean attention weight a ``[query, key]`` matrix puts on the key ``offset`` tokens
    back, over the queries that have one (``m >= offset``)."""
    weights = np.asarray(weights)
    return float(np.mean([weights[m, m - offset] for m in range(offset, len(weights))]))


def draw_layout_mismatch(fig, maps: dict[str, np.ndarray], offset: int = 3):
    """Chapter 4's head built to look ``offset`` tokens back, under each layout: one panel of
    attention weights ``[query m, key n]`` per entry of ``maps`` (the name is the panel's
    title). Every panel marks the cells the head was built to attend to, ``n = m - offset``,
    with a red outline, and its title gives the mean weight there (:func:`target_weight`):
    on a wrong layout the dark cells leave the marked diagonal. Returns the axes."""
    offset = check_int("offset", offset, minimum=1)
    axes = fig.subplots(1, len(maps))
    axes = np.atleast_1d(axes)
    for ax, (name, w) in zip(axes, maps.items(), strict=True):
        w = np.asarray(w)
        ax.imshow(w, cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
        m = np.arange(offset, len(w))
        ax.scatter(m - offset, m, s=22, marker="s", facecolors="none", edgecolors="#d62728",
                   linewidths=0.9, label=f"target: the key {offset} back")
        ax.set_title(f"{name}\n{target_weight(w, offset):.2f} on the key {offset} back",
                     fontsize=9)
        ax.set_xlabel("key n")
        ax.grid(False)
    axes[0].set_ylabel("query m")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, -0.06), fontsize=8,
               frameon=False)
    return axes
