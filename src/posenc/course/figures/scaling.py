"""Draw functions for the figures of the RoPE-scaling chapter.

Each ``draw_*(fig, **values)`` draws into a fresh matplotlib figure, the way
:func:`posenc.course.figures.sliders.slider_figure` calls it. The numbers come from
:func:`posenc.scaling.rope_scaling_frequencies`; the figures only draw them.
"""

from __future__ import annotations

import matplotlib
import numpy as np

from ..._validation import check_float, check_int
from ...compare import rope_mean_score
from ...rope import rope_frequencies
from ...scaling import (
    SCALING_METHODS,
    rerope_distance,
    rope_base_reach,
    rope_scaling_frequencies,
    self_extend_distance,
)
from ..base_bound_table import load_table
from .style import COLORS

__all__ = [
    "SCALING_COLORS",
    "SCALING_STYLES",
    "scaled_frequency_table",
    "draw_turns_within_context",
    "draw_turns_at_position",
    "draw_short_range_scores",
    "seen_distances",
    "draw_remapped_distances",
    "SHIPPED_BASES",
    "draw_base_bound",
]

#: One colour per scaling method, used by every figure of the chapter.
SCALING_COLORS = {
    "default": "#000000",
    "linear": COLORS[0],
    "ntk": COLORS[1],
    "dynamic": COLORS[5],
    "yarn": COLORS[2],
    "llama3": COLORS[3],
}
#: Line styles, so that overlapping curves stay apart (and for colour-blind readers).
SCALING_STYLES = {
    "default": (0, (4, 2)),
    "linear": "-",
    "ntk": "-",
    "dynamic": (0, (1, 1)),
    "yarn": "-",
    "llama3": (0, (6, 1.5, 1.5, 1.5)),
}


def scaled_frequency_table(factor: float, base: float = 10000.0, head_dim: int = 128,
                           original_max_position_embeddings: int = 4096,
                           seq_len: float | None = None) -> dict[str, np.ndarray]:
    """``{method: inv_freq}`` for every method in :data:`SCALING_METHODS` at one setting.

    ``dynamic`` is evaluated at ``seq_len`` (default ``factor * L0``: the length the
    extension is for); YaRN and llama3 use their default options. Shape of each
    value: ``[head_dim // 2]``.
    """
    length0 = check_int("original_max_position_embeddings", original_max_position_embeddings)
    factor = check_float("factor", factor, at_least=1.0)
    seq_len = factor * length0 if seq_len is None else seq_len
    return {m: rope_scaling_frequencies(m, head_dim, base=base, factor=factor,
                                        original_max_position_embeddings=length0,
                                        seq_len=seq_len)[0]
            for m in SCALING_METHODS}


def draw_turns_within_context(fig, head_dim: int = 128, base: float = 10000.0,
                              original_max_position_embeddings: int = 4096,
                              factor: float = 8.0):
    """Full turns each pair makes within ``L0`` and within ``s * L0`` (log scale), with the
    pairs that never complete one turn within ``L0`` shaded."""
    length0 = check_int("original_max_position_embeddings", original_max_position_embeddings)
    theta = rope_frequencies(head_dim, base)
    pairs = np.arange(head_dim // 2)
    turns = length0 * theta / (2 * np.pi)
    ax = fig.add_subplot()
    never = turns < 1
    if never.any():
        first = int(np.argmax(never))
        ax.axvspan(first - 0.5, pairs[-1] + 0.5, color="#f2d0c4", alpha=0.6, lw=0,
                   label=f"< 1 turn within L0: pairs {first}-{pairs[-1]} ({never.sum()})")
    ax.semilogy(pairs, turns, "o-", ms=2.5, color=SCALING_COLORS["default"],
                label=f"within L0 = {length0}")
    ax.semilogy(pairs, factor * turns, "o-", ms=2.5, color=SCALING_COLORS["llama3"],
                label=f"within s·L0 = {factor * length0:g} (no scaling)")
    ax.axhline(1, color="#555555", lw=0.8)
    ax.text(1, 1.25, "one full turn", fontsize=8, color="#555555")
    ax.set(xlabel="pair index i", ylabel="full turns  L·θᵢ / 2π", xlim=(-1, pairs[-1] + 1))
    ax.legend(fontsize=8, loc="upper right", frameon=True, framealpha=0.9)
    ax.set_title(f"Turns per pair (head_dim={head_dim}, base={base:g}, s={factor:g})")


def draw_turns_at_position(fig, position: int, factor: float, base: float = 10000.0,
                           head_dim: int = 128, original_max_position_embeddings: int = 4096):
    """Each pair's angle at position ``m`` divided by the largest angle it reached in
    training (``m * theta'_i / (L0 * theta_i)``, log scale), for every method.

    Above 1 on the shaded pairs (less than one turn within ``L0``) is an angle the model
    never saw; on the other pairs every angle was seen, modulo full turns. ``dynamic`` is
    evaluated at ``seq_len = m``. The legend counts the unseen pairs per method.
    """
    position = check_int("position", position)
    length0 = original_max_position_embeddings
    table = scaled_frequency_table(factor, base, head_dim, length0, seq_len=position)
    theta = table["default"]
    pairs = np.arange(head_dim // 2)
    partial = length0 * theta < 2 * np.pi  # less than one turn in training
    ax = fig.add_subplot()
    if partial.any():
        ax.axvspan(int(np.argmax(partial)) - 0.5, pairs[-1] + 0.5, color="#f2d0c4",
                   alpha=0.6, lw=0, label="< 1 turn in training")
    ax.axhline(1, color="#555555", lw=1.2, label="1 = largest angle in training")
    for method, inv in table.items():
        ratio = position * inv / (length0 * theta)
        unseen = int(np.sum(partial & (ratio > 1 + 1e-9)))
        ax.semilogy(pairs, ratio, color=SCALING_COLORS[method], lw=1.8,
                    ls=SCALING_STYLES[method], label=f"{method}: {unseen} unseen")
    ax.set_ylim(4e-3, 40)
    ax.set(xlabel="pair index i", ylabel="angle at m ÷ angle at L0", xlim=(-1, pairs[-1] + 1))
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
    ax.set_title(f"Angles at m={position} = {position / length0:g}·L0 (s={factor:g}, "
                 f"base={base:g}, L0={length0})", fontsize=10)


def draw_short_range_scores(fig, factor: float = 8.0, base: float = 10000.0,
                            head_dim: int = 128, original_max_position_embeddings: int = 4096,
                            max_distance: int = 48):
    """RoPE's score between a query and an identical key ``r`` tokens apart,
    ``mean_i cos(r * theta'_i)``, for small ``r``: how quickly neighbours become
    distinguishable under each method."""
    max_distance = check_int("max_distance", max_distance)
    table = scaled_frequency_table(factor, base, head_dim, original_max_position_embeddings)
    r = np.arange(max_distance + 1)
    ax = fig.add_subplot()
    for method in ("default", "linear", "ntk", "yarn", "llama3"):
        score = np.cos(r[:, None] * table[method]).mean(-1)
        ax.plot(r, score, color=SCALING_COLORS[method], lw=1.8, ls=SCALING_STYLES[method],
                label=method)
    ax.set(xlabel="distance r (tokens)", ylabel="mean cos(r·θ′ᵢ)", xlim=(0, max_distance))
    ax.legend(fontsize=8, loc="upper right", frameon=False)
    ax.set_title(f"Score of identical q, k at distance r (s={factor:g}, base={base:g})",
                 fontsize=10)


#: The methods of :func:`draw_remapped_distances`, with their colours and line styles.
REMAP_METHODS = {
    "PI": (COLORS[0], "-"),
    "NTK-aware": (COLORS[1], "-"),
    "YaRN": (COLORS[2], (0, (1, 1))),
    "ReRoPE": (COLORS[3], "-"),
    "Leaky ReRoPE": (COLORS[4], (0, (4, 1.5))),
    "Self-Extend": (COLORS[5], (0, (6, 1.5, 1.5, 1.5))),
}


def _critical_pair(head_dim: int, base: float, length0: int) -> int:
    """The fastest pair that turns less than once in ``length0`` tokens (Liu et al.'s
    critical dimension, counted in pairs)."""
    return int(np.argmax(length0 * rope_frequencies(head_dim, base) < 2 * np.pi))


def seen_distances(query_pos, key_pos, *, window: int, group: int, factor: float,
                   length0: int, head_dim: int = 64, base: float = 10000.0) -> dict:
    """The distance each method makes RoPE see, ``{method: array}`` (broadcast of ``i - j``).

    Remapping methods (ReRoPE, Leaky ReRoPE with ``leak = factor``, Self-Extend) change the
    distance itself. Frequency methods (PI, NTK-aware, YaRN) change the angles instead; they
    are reduced to one number per distance by the *critical pair*, the fastest pair that turns
    less than once in ``length0``: the distance at which the original frequency gives the
    same angle, ``(i - j) * theta'_c / theta_c``."""
    i, j = np.broadcast_arrays(np.asarray(query_pos), np.asarray(key_pos))
    true = (i - j).astype(np.float64)
    theta = rope_frequencies(head_dim, base)
    c = _critical_pair(head_dim, base, length0)
    out = {}
    for name, method in (("PI", "linear"), ("NTK-aware", "ntk"), ("YaRN", "yarn")):
        new, _ = rope_scaling_frequencies(method, head_dim, base=base, factor=factor,
                                          original_max_position_embeddings=length0)
        out[name] = true * new[c] / theta[c]
    out["ReRoPE"] = rerope_distance(i - j, window=window)
    out["Leaky ReRoPE"] = rerope_distance(i - j, window=window, leak=factor)
    out["Self-Extend"] = self_extend_distance(i, j, group=group, window=window).astype(float)
    return out


def draw_remapped_distances(fig, window: int, group: int, factor: float, length0: int = 64,
                            head_dim: int = 64, base: float = 10000.0):
    """Top: the distance RoPE sees against the true one, for the last query of a sequence
    ``factor * length0`` long. Bottom: the ``[q, k]`` matrix of seen distances for each
    method (query down, key across, as the first panel's labels say), coloured by the
    colour bar beside them, red where it exceeds ``length0`` (a distance never seen in
    training). Every parameter is named in words in the title. Returns the axes."""
    factor = check_float("factor", factor, greater_than=1.0)
    n = int(round(factor * length0))
    last = np.full(n, n - 1)
    keys = np.arange(n)
    line = seen_distances(last, keys, window=window, group=group, factor=factor,
                          length0=length0, head_dim=head_dim, base=base)
    grid = fig.add_gridspec(2, len(REMAP_METHODS), height_ratios=(2.2, 1.2), hspace=0.55,
                            wspace=0.15)
    ax = fig.add_subplot(grid[0, :])
    true = (n - 1) - keys
    ax.plot(true, true, color="#777777", lw=1, ls=(0, (3, 2)), label="true distance")
    for name, (color, style) in REMAP_METHODS.items():
        ax.plot(true, line[name], color=color, ls=style, lw=1.8, label=name)
    ax.axhline(length0, color="#b00000", lw=0.8)
    ax.text(2, length0 * 1.03, f"trained length L₀ = {length0}", color="#b00000", fontsize=8,
            va="bottom")
    ax.set(xlabel="true distance i − j", ylabel="distance RoPE sees", xlim=(0, n - 1),
           ylim=(0, n - 1))
    ax.legend(fontsize=8, ncol=2, loc="upper left", frameon=False)
    ax.set_title(f"window w = {window}, group size G = {group}, scale factor s = {factor:g}:"
                 f" a text of {n} tokens", fontsize=10)
    i, j = np.tril_indices(n)
    cmap = matplotlib.colormaps["viridis"].with_extremes(over="#d62728", bad="white")
    mats = seen_distances(i, j, window=window, group=group, factor=factor, length0=length0,
                          head_dim=head_dim, base=base)
    for col, name in enumerate(REMAP_METHODS):
        m = np.full((n, n), np.nan)
        m[i, j] = mats[name]
        small = fig.add_subplot(grid[1, col])
        image = small.imshow(m, cmap=cmap, vmin=0, vmax=length0, interpolation="nearest")
        small.set_xticks([])
        small.set_yticks([])
        small.grid(False)
        small.set_title(name.replace(" ", "\n", 1) if len(name) > 9 else name, fontsize=8)
        if col == 0:
            small.set_ylabel("query i", fontsize=8, labelpad=2)
            small.set_xlabel("key j", fontsize=8, labelpad=2)
            first = small
        small.set_anchor("N")  # up under the line plot, leaving the colour bar room below
        small.apply_aspect()  # where the square image really sits: the colour bar goes below
    middle = fig.axes[-len(REMAP_METHODS) + 1:-1]
    x0, x1 = middle[0].get_position().x0, middle[-1].get_position().x1
    y0 = first.get_position().y0
    bar = fig.colorbar(image, cax=fig.add_axes((x0, y0 - 0.06, x1 - x0, 0.014)),
                       orientation="horizontal", extend="max", extendfrac=0.06,
                       ticks=np.linspace(0, length0, 5).astype(int))
    bar.ax.tick_params(labelsize=8)
    bar.set_label(f"distance RoPE sees; red: beyond L₀ = {length0}, never seen in training",
                  fontsize=8)
    return ax


#: (model, base, context length) as shipped (configurations on Hugging Face).
SHIPPED_BASES = [("Llama 2", 1e4, 4096), ("Llama 3", 5e5, 8192), ("Qwen2.5 / Qwen3", 1e6, 32768),
                 ("Llama 3.1 (×8 scaling)", 5e5, 131072), ("Gemma 3 global (×8)", 1e6, 131072)]


def draw_base_bound(fig, base: float, head_dim: int = 128, max_length: int = 1 << 18):
    """Left: Men et al.'s similar-token margin ``B(m) = sum_i cos(m theta_i)`` (d/2 times
    RoPE's mean score) against the distance ``m`` for one base; it first drops below 0 at
    the longest context the base supports. Right: the bound against the context length,
    the exact scan (:mod:`posenc.course.base_bound_table`, filled) beside Su's table rounded
    to two digits (hollow: those that fail the criterion are marked ×), and the base's own
    reach: its line is solid up to the length it supports, dotted beyond. Shipped models are
    points. ``head_dim`` must be the table's (128). Returns the two axes."""
    check_float("base", base, greater_than=1.0)
    table = load_table()
    if head_dim != table["head_dim"]:
        raise ValueError(f"head_dim must be {table['head_dim']} (the committed table's), "
                         f"got {head_dim}")
    m = np.unique(np.geomspace(1, max_length, 1500).astype(int))
    margin = rope_mean_score(m, head_dim, base) * head_dim / 2
    rows = table["rows"]
    lengths = np.array([r["length"] for r in rows])
    # one scan, as far as the right panel reaches; the left panel shows it within max_length
    own = rope_base_reach(base, head_dim, max_length=4 * int(lengths[-1]))
    reach = own if own is not None and own <= max_length else None
    left, right = fig.subplots(1, 2, gridspec_kw={"wspace": 0.35})
    left.semilogx(m, margin, color=COLORS[0], lw=1.2)
    left.axhline(0, color="#444444", lw=0.8)
    if reach:
        left.axvline(reach, color=COLORS[3], lw=1.2, ls=(0, (4, 2)))
        left.text(reach / 1.3, head_dim / 2 * 0.95, f"first < 0\nat m = {reach:,}",
                  fontsize=8, ha="right", color=COLORS[3])
    left.set(xlabel="distance m (tokens)", ylabel="B(m) = Σᵢ cos(m θᵢ)", xlim=(1, max_length))
    left.set_title(f"base {base:.0e}, d = {head_dim}", fontsize=10)
    right.loglog(lengths, [r["bound"] for r in rows], "^-", color=COLORS[0], ms=4, lw=1,
                 label="bound (exact scan)")
    fails = [r for r in rows if r["su_reach"] is not None and r["su_reach"] < r["length"]]
    right.plot(lengths, [r["su"] for r in rows], "o", mfc="none", mec="#777777", ms=5,
               label="Su's table, rounded")
    right.plot([r["length"] for r in fails], [r["su"] for r in fails], "x", color="#777777",
               ms=4, label=f"rounded value fails ({len(fails)} of {len(rows)})")
    end = own if own is not None else 4 * int(lengths[-1])
    right.plot([lengths[0], end], [base, base], color=COLORS[3], lw=1.4,
               label=f"base {base:.0e}: reaches {end:,}" if own else f"base {base:.0e}")
    right.plot([end, 4 * lengths[-1]], [base, base], color=COLORS[3], lw=1, ls=(0, (1, 2)))
    if own is not None:
        right.plot([own], [base], "|", color=COLORS[3], ms=12, mew=1.6)
    for k, (name, b, length) in enumerate(SHIPPED_BASES):
        right.plot(length, b, "s", color=COLORS[(k + 1) % len(COLORS)], ms=4, label=name)
    right.set(xlabel="context length L", ylabel="lower bound on the base",
              xlim=(lengths[0] / 1.5, 4 * lengths[-1]))
    # below both panels (inside the right one it would cover the points); the slider's
    # frames are drawn without a layout engine, so the room is made here
    fig.subplots_adjust(bottom=0.27)
    fig.legend(*right.get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8,
               frameon=False, bbox_to_anchor=(0.5, 0.0))
    return left, right
