"""Figures of the chapter "Reading a model's position settings": a bundled model's layers,
its pairs within the trained length and at a target length, and the two meanings of
``partial_rotary_factor``.

Every number comes from :mod:`posenc.configs` (the reader, :mod:`~posenc.configs.angles`,
:mod:`~posenc.configs.kv_cache`) or :func:`posenc.scaling.rope_scaling_frequencies`; each
``draw_*`` draws into the figure it is given and returns its axes, so a slider
(:func:`posenc.course.figures.sliders.slider_figure`) can call it per frame.
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..._validation import check_float, check_int
from ...configs import (
    kv_cache,
    load_bundled,
    pair_regions,
    reach,
    read_config,
    trained_length,
    turns,
    unscaled_frequencies,
    unseen_pairs,
)
from ...configs.angles import angle_ratio
from ...scaling import rope_scaling_frequencies
from .style import COLORS

__all__ = ["LAYER_KINDS", "layer_kind", "rotating_groups", "draw_model_layers",
           "draw_target_length", "partial_rotary_frequencies", "draw_partial_rotary"]

#: The kinds of layer the figures tell apart, in legend order, with their colours.
LAYER_KINDS = {"full RoPE": COLORS[0], "sliding RoPE": COLORS[5], "chunked RoPE": COLORS[2],
               "NoPE": COLORS[1], "linear attention": "#999999"}
_REGION_MARKERS = {"kept": "o", "blended": "^", "interpolated": "s"}
_GROUP_STYLES = ("-", "--", ":")
# the target-length legend: "< 1 turn", a line per kind (3 at most), the 3 regions, "1 = ..."
_LEGEND_COLUMNS, _LEGEND_ROWS = 3, 3


def layer_kind(layer) -> str:
    """The figure's name for a layer's kind (a key of :data:`LAYER_KINDS`)."""
    if layer.layer_type == "linear_attention":
        return "linear attention"
    if layer.rope is None:
        return "NoPE"
    return {"sliding_attention": "sliding RoPE",
            "chunked_attention": "chunked RoPE"}.get(layer.layer_type, "full RoPE")


def rotating_groups(model) -> dict[str, object]:
    """One representative rotating layer per kind (``"full RoPE"``, ``"sliding RoPE"``,
    ``"chunked RoPE"``), in that order: the layers of one kind share their rotation."""
    groups = {}
    for layer in model.layers:
        kind = layer_kind(layer)
        if layer.rope is not None and kind not in groups:
            groups[kind] = layer
    return {k: groups[k] for k in LAYER_KINDS if k in groups}


def _layer_strip(ax, model):
    kinds = [layer_kind(la) for la in model.layers]
    names = list(LAYER_KINDS)
    codes = np.array([[names.index(k) for k in kinds]])
    ax.imshow(codes, cmap=ListedColormap(list(LAYER_KINDS.values())), vmin=-0.5,
              vmax=len(names) - 0.5, aspect="auto", interpolation="nearest")
    ax.set_yticks([])
    n = len(kinds)
    step = 1 if n <= 16 else 4 if n <= 40 else 8
    ax.set_xticks(range(0, n, step))
    ax.set_xticks(np.arange(-0.5, n, 1), minor=True)
    ax.tick_params(axis="x", which="minor", length=0)
    ax.grid(False)
    ax.grid(True, which="minor", axis="x", color="white", lw=0.6)
    ax.set_xlabel("layer")
    present = [k for k in names if k in kinds]
    ax.legend(handles=[Patch(color=LAYER_KINDS[k], label=k) for k in present], fontsize=8,
              loc="lower center", bbox_to_anchor=(0.5, 1.02), ncol=len(present),
              frameon=False)


def draw_model_layers(fig, model):
    """The config ``model`` (a bundled name, :func:`posenc.configs.bundled_names`, or a
    config dict; ``python -m posenc.configs PATH --plot FILE`` draws this): top, one cell
    per layer coloured by its kind; bottom, the turns each pair makes within the trained
    length ``L0`` (unscaled frequencies, reach capped by a window or chunk), one line per
    kind of rotating layer, the line at 1 turn dividing the pairs that saw every angle from
    those that did not. The suptitle names the scaling and the KV cache per token at the
    model's length, in bf16. Returns the two axes."""
    config = load_bundled(model) if isinstance(model, str) else dict(model)
    positions = read_config(config, strict=False)
    groups = rotating_groups(positions)
    top, bottom = fig.subplots(2, 1, height_ratios=[1, 3.4], gridspec_kw={"hspace": 0.75})
    _layer_strip(top, positions)
    first = next(iter(groups.values()), None)
    if first is not None:  # a model with no rotating layer (Kimi Linear) gets no suptitle
        length = positions.max_position_embeddings
        per_token = kv_cache(config).bytes_per_token(length) / 1024
        spec = first.rope
        scaling = (f"{spec.rope_type} ×{spec.factor:g}" if spec.factor else spec.rope_type)
        length0 = trained_length(positions, first)
        # the slider shows the model's name: the title says what it is set to
        fig.suptitle(f"{scaling}, base {spec.theta:g}, L0 {length0:,}"
                     f"\nKV cache {per_token:,.1f} KiB per token at {length:,} (bf16)",
                     fontsize=9, y=1.06)
    for style, (kind, layer) in zip(_GROUP_STYLES, groups.items(), strict=False):
        length0 = trained_length(positions, layer)
        spins = turns(unscaled_frequencies(layer), reach(layer, length0))
        pairs = np.arange(spins.size)
        shown = spins > 0
        under = int(np.sum(shown & (spins < 1)))
        bottom.semilogy(pairs[shown], spins[shown], ls=style, color=LAYER_KINDS[kind], lw=1.8,
                        label=f"{kind}: {under} of {spins.size} pairs < 1 turn")
    bottom.axhline(1, color="#555555", lw=1.0)
    bottom.set(xlabel="pair i  (fast → slow)", ylabel="turns within L0")
    if groups:
        bottom.legend(fontsize=8, loc="upper right")
    return top, bottom


def draw_target_length(fig, model: str, target: int):
    """The bundled config ``model`` read at ``target`` tokens: per pair, the largest angle
    there over the largest angle in training (:func:`posenc.configs.angle_ratio`, log
    scale), one line per kind of rotating layer, the first kind's markers showing what
    the scaling did to each pair (:func:`posenc.configs.pair_regions`); above 1 on a
    shaded pair (less than one turn in training) is an angle never seen. The title counts
    those pairs and gives the KV cache of one sequence of ``target`` tokens (bf16).
    Returns the axes."""
    target = check_int("target", target)
    config = load_bundled(model) if isinstance(model, str) else dict(model)
    positions = read_config(config, strict=False)
    groups = rotating_groups(positions)
    ax = fig.add_subplot()
    ax.set_yscale("log")
    ax.set_ylim(1e-3, 1e3)  # fixed before drawing: a flat ratio must not collapse the axis
    cache = kv_cache(config)
    gib = cache.bytes_at(target) / 2**30
    per_token = cache.bytes_per_token(target) / 1024
    unseen_total = 0
    for n, (style, (kind, layer)) in enumerate(zip(_GROUP_STYLES, groups.items(),
                                                   strict=False)):
        ratio = angle_ratio(positions, layer, target)
        unseen = unseen_pairs(positions, layer, target)
        unseen_total = max(unseen_total, int(unseen.sum()))
        pairs = np.arange(ratio.size)
        length0 = trained_length(positions, layer)
        old = unscaled_frequencies(layer)
        if n == 0:
            under = (old > 0) & (turns(old, reach(layer, length0)) < 1)
            if under.any():
                ax.axvspan(int(np.argmax(under)) - 0.5, pairs[-1] + 0.5, color="#f2d0c4",
                           alpha=0.6, lw=0, label="< 1 turn in training")
        ax.plot(pairs, ratio, ls=style, color=LAYER_KINDS[kind], lw=1.6,
                    label=f"{kind}: {int(unseen.sum())} pairs unseen")
        if n == 0 and layer.rope.factor:
            regions = pair_regions(layer, target)
            for region, marker in _REGION_MARKERS.items():
                at = (regions == region) & np.isfinite(ratio)
                if at.any():
                    ax.plot(pairs[at], ratio[at], marker, ms=3.5, color=LAYER_KINDS[kind],
                            ls="none", label=region)
    ax.axhline(1, color="#555555", lw=1.2, label="1 = largest angle in training")
    ax.set(xlabel="pair i  (fast → slow)", ylabel="angle at T ÷ angle at L0")
    ax.set_title(f"T = {target:,}: {unseen_total} pairs unseen"
                 f"\nKV cache {gib:,.2f} GiB per sequence, {per_token:,.1f} KiB per token "
                 "(bf16)", fontsize=9)
    # always three full rows, also for a model with no rotating layer (Kimi Linear): every
    # model's frame has the legend's height, so the one crop of the slider figure (measured
    # on two frames) holds every model's legend
    handles, names = ax.get_legend_handles_labels()
    blank = Line2D([], [], ls="none")
    if not groups:
        handles, names = [blank, *handles], ["no layer applies RoPE", *names]
    slots = _LEGEND_COLUMNS * _LEGEND_ROWS
    if len(handles) > slots:
        raise ValueError(f"{len(handles)} legend entries for {slots} slots")
    ax.legend(handles + [blank] * (slots - len(handles)),
              names + [" "] * (slots - len(handles)), fontsize=8, loc="upper center",
              bbox_to_anchor=(0.5, -0.22), ncol=_LEGEND_COLUMNS, frameon=False)
    return ax


def partial_rotary_frequencies(fraction: float, head_dim: int = 256,
                               base: float = 1e6) -> dict[str, np.ndarray]:
    """The two meanings of ``partial_rotary_factor = fraction``, per pair of a
    ``head_dim``-wide head (float64 ``[head_dim // 2]``, 0 where a pair does not rotate):

    * ``"partial (GPT-NeoX)"``: ``rotary_dim = int(head_dim * fraction)`` features rotate
      with ``base^(-2i/rotary_dim)`` (every frequency of the full range, squeezed into
      fewer pairs), the rest pass through;
    * ``"proportional (p-RoPE)"``: the head's own ``base^(-2i/head_dim)``, kept on the first
      ``int(fraction * head_dim // 2)`` pairs and 0 on the rest (Barbero et al., 2025;
      Hugging Face's ``proportional`` rope type).

    Both come from :func:`posenc.scaling.rope_scaling_frequencies`."""
    fraction = check_float("fraction", fraction, greater_than=0.0)
    if fraction > 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    head_dim = check_int("head_dim", head_dim, minimum=2)
    rotary = int(head_dim * fraction)
    squeezed, _ = rope_scaling_frequencies("default", rotary, base=base)
    neox = np.zeros(head_dim // 2)
    neox[: rotary // 2] = squeezed
    prope, _ = rope_scaling_frequencies("proportional", head_dim, base=base,
                                        partial_rotary_factor=fraction)
    return {"partial (GPT-NeoX)": neox, "proportional (p-RoPE)": prope}


def draw_partial_rotary(fig, fraction: float, head_dim: int = 256, base: float = 1e6):
    """Frequency per pair for the two meanings of ``partial_rotary_factor`` (log scale);
    the pairs that do not rotate are marked at the bottom. Returns the axes."""
    table = partial_rotary_frequencies(fraction, head_dim, base)
    ax = fig.add_subplot()
    floor = base ** -1.2
    for n, (name, freqs) in enumerate(table.items()):
        pairs = np.arange(freqs.size)
        on = freqs > 0
        color = COLORS[3] if n else COLORS[0]
        ax.semilogy(pairs[on], freqs[on], "o" if n else "s", ms=2.6, color=color,
                    label=f"{name}: {int(on.sum())} pairs, slowest {freqs[on].min():.1e}")
        ax.plot(pairs[~on], np.full(int((~on).sum()), floor * (1.6 if n else 1)), "|",
                color=color, ms=5)
    ax.set_ylim(floor / 2, 3)
    ax.set(xlabel="pair i of the head  (fast → slow)", ylabel="θ (rad per token)")
    ax.set_title(f"partial_rotary_factor {fraction:g}, head_dim {head_dim}, base {base:g} "
                 "(ticks at the bottom: not rotated)", fontsize=9)
    ax.legend(fontsize=8, loc="upper right")
    return ax
