"""Figures of the chapters "RoPE in today's models" and "Position in two and three dimensions".

Every function draws into the figure (or axes) it is given, from the library's one
definition of each formula (:mod:`posenc.rope`, :mod:`posenc.scaling`), and returns what
it drew on, so a slider (:func:`posenc.course.figures.sliders.slider_figure`) can call it per frame.
"""

from __future__ import annotations

import matplotlib
import matplotlib.colors as mcolors
import numpy as np

from ..._validation import check_base, check_even_int, check_float, check_int
from ...rope import rope_frequencies, wrap_angle
from ...rope_variants import (
    axial_rope_angles,
    axis_frequency_assignment,
    mrope_angles,
    mrope_position_ids,
    xpos_zeta,
)
from ...scaling import rope_scaling_frequencies
from .style import COLORS, METHOD_COLORS

__all__ = [
    "draw_base_wavelengths",
    "position_pair_table",
    "draw_position_pairs",
    "draw_xpos_decay",
    "draw_axial_angles",
    "MROPE_EXAMPLE",
    "draw_mrope_ids",
    "draw_mrope_sections",
    "AXIS_SPLITS",
    "draw_axis_frequencies",
    "draw_mla_paths",
]


def draw_base_wavelengths(fig, base: float, head_dim: int = 128,
                          contexts=(4096, 8192, 16384)):
    """Wavelength ``2 pi / theta_i`` of every pair for ``base`` (and for 10^4 in grey), log
    scale, with the context lengths as dotted lines; pairs that turn less than once within
    the last context are marked. Returns the axes."""
    base = check_base(base)
    head_dim = check_even_int("head_dim", head_dim)
    ax = fig.add_subplot()
    pairs = np.arange(head_dim // 2)
    ax.semilogy(pairs, 2 * np.pi / rope_frequencies(head_dim, 1e4), color="#999999", lw=1.5,
                label="base 10⁴ (Llama 2)")
    wave = 2 * np.pi / rope_frequencies(head_dim, base)
    ax.semilogy(pairs, wave, color=METHOD_COLORS["rope"], lw=2.2, label=f"base {base:g}")
    longest = contexts[-1]
    slow = wave > longest
    ax.semilogy(pairs[slow], wave[slow], "o", ms=3, color=METHOD_COLORS["rope"],
                label=f"{slow.sum()} pairs turn < once in {longest}")
    for n, c in enumerate(contexts):
        ax.axhline(c, color="#555555", ls=":", lw=1)
        ax.text(head_dim // 2 - 1 - 7 * n, c * 1.2, f"{c}", fontsize=8, color="#555555",
                ha="right")
    ax.set(xlabel=f"pair i (head_dim {head_dim})", ylabel="wavelength (tokens per turn)",
           ylim=(3, 3e8), xlim=(0, head_dim // 2 - 1),
           title=f"RoPE wavelengths, base {base:g}")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    return ax


def position_pair_table(fraction: float, head_dim: int = 64,
                        base: float = 10000.0) -> dict[str, np.ndarray]:
    """The frequency of every feature pair ``[head_dim // 2]`` under RoPE, partial RoPE
    (``rotary_dim = int(head_dim * fraction)``, its pairs first; 0 for the features passed
    through) and p-RoPE (``"proportional"`` with ``partial_rotary_factor=fraction``).
    Pair ``i`` means features ``(2i, 2i+1)`` (interleaved layout)."""
    fraction = check_float("fraction", fraction, greater_than=0.0)
    rope = rope_frequencies(head_dim, base)
    rotary_dim = int(head_dim * fraction) // 2 * 2
    partial = np.zeros(head_dim // 2)
    if rotary_dim:
        partial[: rotary_dim // 2] = rope_frequencies(rotary_dim, base)
    p_rope, _ = rope_scaling_frequencies("proportional", head_dim, base=base,
                                         partial_rotary_factor=fraction)
    return {"RoPE": rope, "partial RoPE": partial, "p-RoPE": p_rope}


def draw_position_pairs(fig, fraction: float, head_dim: int = 64, base: float = 10000.0):
    """Which pairs carry position, and how fast they turn: one row per method, one cell per
    pair, coloured by log10 of the frequency; grey cells have frequency 0 (content only).
    Returns the axes."""
    table = position_pair_table(fraction, head_dim, base)
    ax = fig.add_subplot()
    values = np.array([np.where(f > 0, np.log10(np.where(f > 0, f, 1.0)), np.nan)
                       for f in table.values()])
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#d9d9d9")
    image = ax.imshow(values, aspect="auto", cmap=cmap, vmin=np.log10(base ** -1), vmax=0,
                      interpolation="nearest")
    ax.set_yticks(range(len(table)), list(table))
    ax.grid(False)
    for row, f in enumerate(table.values()):
        n = int(np.count_nonzero(f))
        ax.text(head_dim // 2 - 0.4, row, f"  {n} of {head_dim // 2} turn", va="center",
                fontsize=8, clip_on=False)
    ax.set_xlabel("pair i  (fast → slow)")
    ax.set_title(f"Pairs that carry position, fraction {fraction:g} (grey: none)")
    cbar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.2)
    cbar.set_label("log10 θ (rad/token)", fontsize=8)
    return ax


def draw_xpos_decay(fig, scale_base: float, head_dim: int = 64, max_distance: int = 2048,
                    pairs=(0, 8, 16, 31)):
    """xPos's factor ``zeta_i ** (r / scale_base)`` on the score of a key ``r`` tokens
    behind the query (``r > 0``) or ahead of it (``r < 0``), for a few pairs, log scale.
    Returns the axes."""
    scale_base = check_float("scale_base", scale_base, greater_than=0.0)
    max_distance = check_int("max_distance", max_distance)
    zeta = xpos_zeta(head_dim)
    r = np.linspace(-max_distance / 4, max_distance, 400)
    ax = fig.add_subplot()
    for n, i in enumerate(pairs):
        ax.semilogy(r, zeta[i] ** (r / scale_base), color=COLORS[n % len(COLORS)],
                    label=f"pair {i}: ζ = {zeta[i]:.3f}")
    ax.axvspan(r[0], 0, color="#f4cccc", alpha=0.6, lw=0)
    ax.text(r[0] * 0.97, 2e-3, "key ahead:\nboosted", fontsize=8, color="#990000")
    ax.axhline(1, color="#555555", lw=0.8)
    ax.set(xlabel="distance r = query − key (tokens)", ylabel="factor on the score",
           ylim=(1e-3, 1e3), title=f"xPos decay, scale_base {scale_base:g}")
    ax.legend(fontsize=8, frameon=False, loc="upper right")
    return ax


def draw_axial_angles(fig, pair: int, grid: int = 8, head_dim: int = 32, base: float = 100.0):
    """The angle (wrapped to (-pi, pi]) by which axial 2-D RoPE turns ``pair`` at each patch of
    a ``grid x grid`` image. Pairs below ``head_dim // 4`` follow the column, the others the
    row. Returns the axes."""
    pair = check_int("pair", pair, minimum=0)
    grid = check_int("grid", grid)
    if pair >= head_dim // 2:
        raise ValueError(f"pair must be < head_dim // 2 = {head_dim // 2}, got {pair}")
    rows, cols = np.meshgrid(np.arange(grid), np.arange(grid), indexing="ij")
    angle = wrap_angle(axial_rope_angles(rows, cols, head_dim, base=base)[..., pair])
    ax = fig.add_subplot()
    image = ax.imshow(angle, cmap="twilight", vmin=-np.pi, vmax=np.pi, origin="upper")
    ax.grid(False)
    axis = "column" if pair < head_dim // 4 else "row"
    freq = base ** (-4 * (pair % (head_dim // 4)) / head_dim)
    ax.set(xlabel="column", ylabel="row",
           title=f"pair {pair}: turns with the {axis}, {freq:.3g} rad/patch")
    cbar = fig.colorbar(image, ax=ax, fraction=0.046)
    cbar.set_label("angle (rad)", fontsize=8)
    return ax


#: The example sequence of the M-RoPE figures: text, an image (2 x 3 patches after
#: merging), text, a 3-frame video (2 x 2 each), text.
MROPE_EXAMPLE = (4, (1, 2, 3), 3, (3, 2, 2), 3)
_AXES = ("temporal", "height", "width")


def _segment_spans(segments):
    spans, start = [], 0
    for seg in segments:
        n = int(np.prod(seg)) if isinstance(seg, tuple) else int(seg)
        spans.append((start, start + n, "text" if not isinstance(seg, tuple) else
                      ("image" if seg[0] == 1 else "video")))
        start += n
    return spans


def draw_mrope_ids(fig, segments=MROPE_EXAMPLE):
    """The three M-RoPE ids (temporal, height, width) of every token of ``segments``
    (:func:`posenc.rope_variants.mrope_position_ids`), with the image and video spans shaded.
    Returns the axes."""
    ids = mrope_position_ids(segments)
    ax = fig.add_subplot()
    t = np.arange(ids.shape[1])
    for a, (name, marker) in enumerate(zip(_AXES, ("o", "s", "^"), strict=True)):
        ax.plot(t + (a - 1) * 0.12, ids[a], marker=marker, ms=4, lw=1,
                color=COLORS[a], label=name)
    for lo, hi, kind in _segment_spans(segments):
        if kind != "text":
            ax.axvspan(lo - 0.5, hi - 0.5, color="#f2f2f2" if kind == "image" else "#e6eef7",
                       lw=0)
            ax.text((lo + hi - 1) / 2, ids.max() + 0.4, kind, ha="center", fontsize=8)
    ax.set(xlabel="token", ylabel="position id", ylim=(-0.5, ids.max() + 1.2),
           title="M-RoPE ids along text, image, text, video, text")
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    return ax


def draw_mrope_sections(fig, temporal: int, head_dim: int = 32, segments=MROPE_EXAMPLE):
    """How ``sections = (temporal, rest/2, rest/2)`` assigns pairs to axes (top strip), and
    the cosine of each pair's angle at every token of ``segments`` (bottom). Returns the
    bottom axes."""
    half = head_dim // 2
    temporal = check_int("temporal", temporal, minimum=0)
    if temporal > half or (half - temporal) % 2:
        raise ValueError(f"temporal must leave an even number of the {half} pairs, got "
                         f"{temporal}")
    sections = (temporal, (half - temporal) // 2, (half - temporal) // 2)
    ids = mrope_position_ids(segments)
    angles = mrope_angles(ids, head_dim, sections=sections, base=100.0)  # [seq, half]
    top, bottom = fig.subplots(2, 1, height_ratios=(1, 6), sharex=True)
    owner = np.repeat(np.arange(3), sections)
    top.imshow(owner[None, :], aspect="auto", interpolation="nearest",
               cmap=mcolors.ListedColormap(COLORS[:3]), vmin=0, vmax=2)
    top.set_yticks([])
    top.grid(False)
    top.set_title(f"sections {sections}: temporal | height | width", fontsize=10)
    bottom.imshow(np.cos(angles), aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1,
                  interpolation="nearest")
    bottom.grid(False)
    for lo, _, _ in _segment_spans(segments)[1:]:
        bottom.axhline(lo - 0.5, color="#333333", lw=0.8)
    bottom.set(xlabel="pair i (fast → slow)", ylabel="token",
               title="cos(angle) per token and pair (base 100)")
    return bottom


#: How four models share a 128-wide head's frequency pairs among their position axes:
#: (sections in pairs, layout, base, axis names). Qwen2-VL and Qwen3-VL: Hugging Face's
#: ``mrope_section`` and the configuration classes' default ``rope_theta`` (transformers
#: 5.23); FLUX.1 and FLUX.2: diffusers' ``axes_dims_rope`` (16, 56, 56) and (32, 32, 32, 32)
#: in features, with theta 10000 and 2000 (``FluxTransformer2DModel``,
#: ``Flux2Transformer2DModel``).
AXIS_SPLITS = {
    "Qwen2-VL": ((16, 24, 24), "chunked", 1e6, ("temporal", "height", "width")),
    "Qwen3-VL": ((24, 20, 20), "interleaved", 5e5, ("temporal", "height", "width")),
    "FLUX.1": ((8, 28, 28), "per_axis", 1e4, ("image index", "height", "width")),
    "FLUX.2": ((16, 16, 16, 16), "per_axis", 2000.0,
               ("image index", "height", "width", "text position")),
}
_LADDERS = {"chunked": "one ladder in chunks", "interleaved": "one ladder, interleaved",
            "per_axis": "a ladder per axis"}


def draw_axis_frequencies(fig, model: str, head_dim: int = 128):
    """Which position axis owns each frequency pair of ``model``'s head
    (:data:`AXIS_SPLITS`, :func:`posenc.rope_variants.axis_frequency_assignment`): the
    pair's wavelength ``2 pi / frequency`` (position ids per turn, log scale) against its
    index, coloured by axis. Returns the axes."""
    if model not in AXIS_SPLITS:
        raise ValueError(f"model must be one of {', '.join(map(repr, AXIS_SPLITS))}; "
                         f"got {model!r}")
    sections, layout, base, names = AXIS_SPLITS[model]
    axis, freq = axis_frequency_assignment(head_dim, sections, layout=layout, base=base)
    wave = 2 * np.pi / freq
    ax = fig.add_subplot()
    for a, (name, marker) in enumerate(zip(names, ("o", "s", "^", "D"), strict=False)):
        mine = axis == a
        ax.semilogy(np.flatnonzero(mine), wave[mine], marker, ms=4.5, color=COLORS[a],
                    label=name, ls="none")
    ax.set(xlabel=f"pair i (head_dim {head_dim})", ylabel="wavelength (positions)",
           ylim=(3, 1e7), xlim=(-1, head_dim // 2),
           title=f"{model}: {_LADDERS[layout]}\nsections {tuple(sections)}, base {base:g}")
    ax.legend(fontsize=8, frameon=False, loc="upper left", ncol=2)
    return ax


def draw_mla_paths(fig):
    """DeepSeek-V2's decoupled RoPE as a diagram: the content path (latent ``c_j``, its
    up-projection absorbed into the query) and the position path (a small rotated key
    ``k^R_j`` shared by all heads), for a query at ``i`` and a cached token at ``j``.
    Returns the axes."""
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set(xlim=(0, 10), ylim=(0, 4.2))
    boxes = {
        "h_j": (0.7, 3.2, "token j\nh_j"), "c": (3.2, 3.2, "latent c_j\n(cached, d_c)"),
        "qc": (6.2, 3.2, "W^UKᵀ q\n(absorbed)"), "kr": (3.2, 1.0, "R_j W^KR h_j\n(cached, d_R)"),
        "qr": (6.2, 1.0, "R_i q^R\n(query at i)"), "score": (9.0, 2.1, "score\n(i, j)"),
    }
    colors = {"c": COLORS[0], "qc": COLORS[0], "kr": COLORS[3], "qr": COLORS[3]}
    for key, (x, y, text) in boxes.items():
        ax.text(x, y, text, ha="center", va="center", fontsize=9,
                bbox=dict(boxstyle="round,pad=0.35", fc="white",
                          ec=colors.get(key, "#444444"), lw=1.6))
    arrows = [("h_j", "c", "W^DKV"), ("h_j", "kr", "W^KR, rotate by j"),
              ("c", "qc", "· content"), ("kr", "qr", "· position"),
              ("qc", "score", "+"), ("qr", "score", "+")]
    for a, b, label in arrows:
        (x0, y0, _), (x1, y1, _) = boxes[a], boxes[b]
        ax.annotate("", xy=(x1 - 0.9 * np.sign(x1 - x0), y1), xytext=(x0 + 0.9, y0),
                    arrowprops=dict(arrowstyle="->", color="#444444", lw=1.2))
        if y0 != y1 and a == "h_j":  # the diagonal arrow: label to its right, off the line
            ax.text((x0 + x1) / 2 + 0.35, (y0 + y1) / 2, label, ha="left", fontsize=8)
        else:
            ax.text((x0 + x1) / 2, (y0 + y1) / 2 + 0.28, label, ha="center", fontsize=8)
    ax.set_title("Decoupled RoPE in MLA: a content path without rotation, a rotated slice",
                 fontsize=10)
    return ax
