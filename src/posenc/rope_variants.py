"""RoPE as today's models ship it: partial RoPE, xPos, M-RoPE (Qwen2-VL), axial 2-D RoPE,
and how 2025-26 image and video models split position across axes.

Each RoPE variant is RoPE's rotation (:mod:`posenc.rope`) with other angles or an extra
per-pair scale. Chapter 11's image positions are here too: which axis owns each frequency
pair (M-RoPE's chunks, Qwen3-VL's interleaving, FLUX's per-axis ladders), SD3's cropped
2-D sin-cos table, SigLIP2 NaFlex's resized learned table and DINOv3's jittered
coordinates. Numpy only, like :mod:`posenc.rope`: the public functions take numpy
arrays, and :mod:`posenc.nn.rope_kernel` has the same functions for torch tensors
(one definition of each formula; only the :class:`~posenc.rope.Kernel` differs).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._validation import check_base, check_choice, check_even_int, check_float, check_int, to_numpy
from .rope import (
    NUMPY_KERNEL,
    Kernel,
    _as_positions,
    _check_x,
    _positions_for,
    apply_rope,
    rope_frequencies,
)
from .sinusoidal import sinusoidal_frequencies

__all__ = [
    "apply_partial_rope",
    "xpos_zeta",
    "xpos_scale",
    "apply_xpos",
    "mrope_angles",
    "apply_mrope",
    "mrope_position_ids",
    "axial_rope_angles",
    "apply_axial_rope",
    "AXIS_LAYOUTS",
    "axis_of_pair",
    "axis_frequency_assignment",
    "multi_axis_angles",
    "sincos_2d_table",
    "cropped_sincos_table",
    "resize_position_table",
    "patch_center_coordinates",
    "CoordinateJitter",
    "draw_coordinate_jitter",
    "jitter_coordinates",
    "normalized_axial_angles",
]


def apply_partial_rope(x, rotary_dim: int, positions=None, *, base: float = 10000.0,
                       layout: str = "interleaved", frequencies=None,
                       kernel: Kernel = NUMPY_KERNEL):
    """Partial RoPE: rotate the first ``rotary_dim`` features of ``x``, pass the rest.

    Shape: ``x`` ``[..., seq, head_dim]`` (numpy array), same shape and dtype out.
    ``rotary_dim`` (an even number ``<= head_dim``) features are rotated as if they were
    the whole head (frequencies ``base ** (-2i / rotary_dim)``, or ``frequencies`` of
    length ``rotary_dim // 2``; pairs laid out within those features); features
    ``rotary_dim ..`` pass through unchanged. This is GPT-NeoX's ``rotary_pct``, Phi's
    ``partial_rotary_factor`` and Hugging Face's
    ``rotary_dim = int(head_dim * partial_rotary_factor)``. ``rotary_dim=head_dim`` is
    :func:`posenc.rope.apply_rope`.
    """
    _check_x(x, kernel)
    head_dim = int(x.shape[-1])
    rotary_dim = check_even_int("rotary_dim", rotary_dim)
    if rotary_dim > head_dim:
        raise ValueError(f"rotary_dim must be an even integer in [2, head_dim={head_dim}], "
                         f"got {rotary_dim}")
    rotated = apply_rope(x[..., :rotary_dim], positions, base=base, layout=layout,
                         frequencies=frequencies, kernel=kernel)
    if rotary_dim == head_dim:
        return rotated
    return kernel.concat(rotated, x[..., rotary_dim:])



def _check_scale_base(scale_base) -> float:
    if isinstance(scale_base, bool) or not isinstance(scale_base, int | float | np.floating
                                                      | np.integer):
        raise TypeError(f"scale_base must be a real number > 0 (inf allowed), got {scale_base!r}")
    scale_base = float(scale_base)
    if np.isnan(scale_base) or not scale_base > 0:
        raise ValueError(f"scale_base must be a real number > 0 (inf allowed), got {scale_base}")
    return scale_base


def xpos_zeta(head_dim: int) -> np.ndarray:
    """xPos's per-pair base ``zeta_i = (2i / head_dim + 0.4) / 1.4``, float64 ``[head_dim // 2]``.

    Between ``0.4 / 1.4`` (pair 0, the fastest) and just under 1 (the slowest), so fast
    pairs decay most with distance (Sun et al., 2023; torchscale's ``XPOS.scale``).
    """
    head_dim = check_even_int("head_dim", head_dim)
    return (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim + 0.4) / 1.4


def xpos_scale(positions, head_dim: int, *, seq_len: int | None = None,
               scale_base: float = 512.0) -> np.ndarray:
    """The query scale of every pair at every position: ``zeta_i ** ((n - L//2) / scale_base)``.

    ``L`` is ``seq_len`` (default: the number of positions). Keys get the inverse, so
    the score of a query at ``m`` and a key at ``n`` is multiplied by
    ``zeta_i ** ((m - n) / scale_base)`` pair by pair: a decay with ``m - n`` (every
    ``zeta_i < 1``) that does not depend on ``L``. Shape ``positions.shape + [head_dim // 2]``.
    """
    pos = _as_positions(positions)
    scale_base = _check_scale_base(scale_base)
    seq_len = pos.shape[-1] if seq_len is None else check_int("seq_len", seq_len)
    power = (pos - seq_len // 2) / scale_base  # [..., seq]
    return xpos_zeta(head_dim) ** power[..., None]


def apply_xpos(q, k, positions=None, *, base: float = 10000.0, scale_base: float = 512.0,
               kernel: Kernel = NUMPY_KERNEL):
    """xPos (Sun et al., 2023, "A Length-Extrapolatable Transformer"): RoPE plus a decay.

    Shape: ``q`` and ``k`` are ``[..., seq, head_dim]`` (numpy arrays; tensors in
    ``nn.rope_kernel``; the same ``seq`` and ``head_dim``); returns ``(q', k')`` of the
    same shapes and types.
    Both are rotated by RoPE (interleaved pairs, ``base``); then pair ``i`` of the query
    at position ``n`` is multiplied by ``zeta_i ** ((n - L//2) / scale_base)`` and pair
    ``i`` of the key by its inverse (:func:`xpos_scale`, :func:`xpos_zeta`; ``L`` = ``seq``).
    ``q'_m . k'_n`` then carries the factor ``zeta_i ** ((m - n) / scale_base)``: keys far
    behind a query are damped. A key *ahead* of the query (``n > m``) would be amplified,
    which is why xPos needs a causal mask. ``scale_base=inf`` gives plain RoPE.

    Centring at ``L//2`` keeps the scales near 1 (rotary-embedding-torch's
    ``seq_len // 2``; torchscale centres at ``ceil(L/2)``, the same for even ``L`` and
    identical scores for any ``L``, since only ``m - n`` survives in ``q . k``).
    """
    _check_x(q, kernel, "q")
    _check_x(k, kernel, "k")
    if tuple(q.shape[-2:]) != tuple(k.shape[-2:]):
        raise ValueError(f"q and k must have the same [seq, head_dim], got "
                         f"{tuple(q.shape[-2:])} and {tuple(k.shape[-2:])}")
    pos = _positions_for(q, positions)
    _positions_for(k, positions)
    scale = xpos_scale(pos, int(q.shape[-1]), seq_len=int(q.shape[-2]), scale_base=scale_base)
    q_rot = apply_rope(q, pos, base=base, layout="interleaved", kernel=kernel)
    k_rot = apply_rope(k, pos, base=base, layout="interleaved", kernel=kernel)
    return kernel.scale_pairs(q_rot, scale), kernel.scale_pairs(k_rot, 1.0 / scale)


def _check_sections(sections, num_pairs: int) -> tuple[int, ...]:
    if isinstance(sections, str) or not hasattr(sections, "__len__") or len(sections) != 3:
        raise TypeError(f"sections must be three integers >= 0 (temporal, height, width "
                        f"pairs), got {sections!r}")
    sections = tuple(check_int(f"sections[{j}]", s, minimum=0) for j, s in enumerate(sections))
    if sum(sections) != num_pairs:
        raise ValueError(f"sections must add up to head_dim // 2 = {num_pairs}, got "
                         f"{sections} (sum {sum(sections)})")
    return sections


def mrope_angles(positions, head_dim: int, *, sections, base: float = 10000.0,
                 layout: str = "chunked") -> np.ndarray:
    """M-RoPE's angle for every pair: pair ``i`` owned by axis ``j`` turns by axis ``j``'s id.

    ``positions`` is an integer array ``[3, ...]`` (temporal, height, width ids);
    ``sections`` three counts of pairs adding to ``head_dim // 2``. With
    ``layout="chunked"`` (Qwen2-VL) the first ``sections[0]`` frequencies
    ``base ** (-2i / head_dim)`` take the temporal id, the next ``sections[1]`` the height
    id, the last ``sections[2]`` the width id; ``layout="interleaved"`` (Qwen3-VL) deals
    the pairs out in turn (:func:`axis_of_pair`). Float64, shape
    ``positions.shape[1:] + [head_dim // 2]``.
    """
    head_dim = check_even_int("head_dim", head_dim)
    sections = _check_sections(sections, head_dim // 2)
    check_choice("layout", layout, ("chunked", "interleaved"))
    pos = np.asarray(to_numpy(positions))
    if not np.issubdtype(pos.dtype, np.integer):
        raise TypeError(f"positions must be an integer array [3, seq], got dtype {pos.dtype}")
    if pos.ndim < 2 or pos.shape[0] != 3:
        raise ValueError(f"positions must have shape [3, seq] (temporal, height, width ids), "
                         f"got {pos.shape}")
    return multi_axis_angles(pos, head_dim, sections=sections, layout=layout, base=base)


def _check_angles_fit(x, angles, name: str, shape: str, broadcast: str, got) -> None:
    """Raise a ValueError naming ``name`` unless ``angles[..., :-1]`` broadcasts to ``x``'s."""
    lead = tuple(int(s) for s in x.shape[:-1])
    try:
        fits = np.broadcast_shapes(angles.shape[:-1], lead) == lead
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{name} must have shape {shape.format(seq=lead[-1])} or {broadcast} "
                         f"broadcasting to x.shape[:-1] = {lead}; got {tuple(got)}")


def apply_mrope(x, positions, *, sections, base: float = 10000.0, layout: str = "chunked",
                kernel: Kernel = NUMPY_KERNEL):
    """Multimodal RoPE of Qwen2-VL (Wang et al., 2024), half layout as Hugging Face's.

    Shape: ``x`` ``[..., seq, head_dim]`` (numpy array; a tensor in ``nn.rope_kernel``);
    ``positions`` integer ``[3, seq]`` (or ``[3, ...]`` broadcasting to
    ``x.shape[:-1]``): temporal, height and width ids, e.g. from
    :func:`mrope_position_ids`. ``sections`` splits the
    ``head_dim // 2`` frequencies into three consecutive chunks (``(16, 24, 24)`` for
    head_dim 128) that turn by axis 0, 1 and 2 (:func:`mrope_angles`). A text token has
    three equal ids, so it gets exactly ``apply_rope(x, layout="half")``.
    ``layout="interleaved"`` is Qwen3-VL's MRoPE-Interleave (:func:`axis_of_pair`); the
    features stay in the half layout either way.
    """
    _check_x(x, kernel)
    pos = np.asarray(to_numpy(positions))
    angles = mrope_angles(pos, int(x.shape[-1]), sections=sections, base=base, layout=layout)
    _check_angles_fit(x, angles, "positions", "(3, {seq})", "(3, ...)", pos.shape)
    return kernel.rotate(x, angles, "half")


def mrope_position_ids(segments) -> np.ndarray:
    """The ``[3, seq]`` M-RoPE ids of a sequence of text and vision blocks, as Qwen2-VL's
    ``get_rope_index`` builds them.

    ``segments`` lists the blocks in order: an ``int`` ``n`` is ``n`` text tokens; a tuple
    ``(t, h, w)`` is an image (``t = 1``) or a video (``t`` frames) whose patches, after
    merging, form a ``t x h x w`` grid, one token each, frame by frame, row by row. Text
    tokens get the same id on all three axes, counting on from the largest id so far;
    a grid starts at the next free id ``s`` and its token at ``(f, r, c)`` gets
    ``(s + f, s + r, s + c)``. Returns int64 ``[3, seq]``.
    """
    if isinstance(segments, str) or not hasattr(segments, "__iter__"):
        raise TypeError(f"segments must be a list of ints (text) and (t, h, w) tuples, "
                        f"got {segments!r}")
    blocks, start = [], 0
    for number, seg in enumerate(segments):
        if isinstance(seg, tuple | list):
            if len(seg) != 3:
                raise ValueError(f"segments[{number}] must be (t, h, w), got {seg!r}")
            t, h, w = (check_int(f"segments[{number}][{j}]", v) for j, v in enumerate(seg))
            f, r, c = np.meshgrid(np.arange(t), np.arange(h), np.arange(w), indexing="ij")
            ids = np.stack([f.ravel(), r.ravel(), c.ravel()]) + start  # [3, t*h*w]
        else:
            n = check_int(f"segments[{number}] (a text length)", seg)
            ids = np.broadcast_to(np.arange(start, start + n), (3, n))
        blocks.append(ids)
        start = int(ids.max()) + 1
    if not blocks:
        raise ValueError("segments must hold at least one block")
    return np.concatenate(blocks, axis=1).astype(np.int64)


def axial_rope_angles(rows, cols, head_dim: int, *, base: float = 100.0) -> np.ndarray:
    """Axial 2-D RoPE's angle for every pair (Heo et al., 2024, RoPE-ViT's ``RoPE-Axial``).

    With ``f_i = base ** (-4i / head_dim)`` for ``i < head_dim // 4``: pairs
    ``0 .. head_dim/4 - 1`` turn by ``col * f_i``, pairs ``head_dim/4 .. head_dim/2 - 1``
    by ``row * f_i``. ``rows`` and ``cols`` are the patch coordinates (same shape, or
    broadcastable). Float64, shape ``broadcast(rows, cols).shape + [head_dim // 2]``.
    """
    head_dim = check_int("head_dim", head_dim, minimum=4)
    if head_dim % 4:
        raise ValueError(f"head_dim must be a multiple of 4 for axial 2-D RoPE (half the "
                         f"pairs per axis), got {head_dim}")
    base = check_base(base)
    r, c = _as_positions(rows), _as_positions(cols)
    try:
        r, c = np.broadcast_arrays(r, c)
    except ValueError:
        raise ValueError(f"rows and cols must have the same shape, got {r.shape} and "
                         f"{c.shape}") from None
    freqs = base ** (-np.arange(0, head_dim, 4, dtype=np.float64) / head_dim)  # [d/4]
    return np.concatenate([c[..., None] * freqs, r[..., None] * freqs], axis=-1)


def apply_axial_rope(x, rows, cols, *, base: float = 100.0, kernel: Kernel = NUMPY_KERNEL):
    """Axial 2-D RoPE on a grid of image patches (Heo et al., 2024), interleaved pairs.

    Shape: ``x`` ``[..., seq, head_dim]`` (numpy array; a tensor in ``nn.rope_kernel``;
    ``head_dim`` a multiple of 4);
    ``rows`` and ``cols`` the patch coordinates, ``[seq]`` or broadcasting to
    ``x.shape[:-1]``. Angles from :func:`axial_rope_angles`. The score between patches
    then depends on the row and column offsets only.
    """
    _check_x(x, kernel)
    angles = axial_rope_angles(rows, cols, int(x.shape[-1]), base=base)
    _check_angles_fit(x, angles, "rows and cols", "({seq},)", "a shape",
                      angles.shape[:-1])
    return kernel.rotate(x, angles, "interleaved")


# --- How 2025-26 image and video models split position across axes (chapter 11) ---------

#: The ways a head's frequency pairs are shared among position axes:
#: ``"chunked"``: one ladder ``base ** (-2i / head_dim)`` cut into consecutive chunks
#: (Qwen2-VL's M-RoPE); ``"interleaved"``: the same ladder dealt out in turn (Qwen3-VL's
#: MRoPE-Interleave); ``"per_axis"``: each axis its own ladder over its own ``2 * s``
#: features, ``base ** (-j / s)`` (FLUX.1, FLUX.2: diffusers' ``FluxPosEmbed``).
AXIS_LAYOUTS = ("chunked", "interleaved", "per_axis")


def _check_axis_sections(sections, num_pairs: int | None = None) -> tuple[int, ...]:
    if isinstance(sections, str) or not hasattr(sections, "__len__") or len(sections) < 1:
        raise TypeError(f"sections must be a sequence of integers >= 0 (pairs per axis), "
                        f"got {sections!r}")
    sections = tuple(check_int(f"sections[{j}]", s, minimum=0) for j, s in enumerate(sections))
    if num_pairs is not None and sum(sections) != num_pairs:
        raise ValueError(f"sections must add up to head_dim // 2 = {num_pairs}, got "
                         f"{sections} (sum {sum(sections)})")
    return sections


def axis_of_pair(sections, *, layout: str = "chunked") -> np.ndarray:
    """Which axis owns each frequency pair: int64 ``[sum(sections)]``, values ``0 .. n-1``.

    ``sections`` gives the pairs of each of the ``n`` axes (``(16, 24, 24)`` for Qwen2-VL,
    ``(24, 20, 20)`` for Qwen3-VL, ``(8, 28, 28)`` for FLUX.1's ``axes_dims_rope``
    ``(16, 56, 56)`` features). ``"chunked"`` and ``"per_axis"``: axis 0's pairs first,
    then axis 1's, ... ``"interleaved"`` follows Hugging Face's Qwen3-VL
    (``Qwen3VLTextRotaryEmbedding.recomposition_frequencies`` in transformers 5.23): axis
    ``a >= 1`` takes pairs ``a, a + n, a + 2n, ...`` below ``n * sections[a]``, axis 0 every
    other pair; so every axis meets fast and slow frequencies. Refused (``ValueError``)
    when those strides do not give each axis ``sections[a]`` pairs.
    """
    check_choice("layout", layout, AXIS_LAYOUTS)
    sections = _check_axis_sections(sections)
    if layout != "interleaved":
        return np.repeat(np.arange(len(sections)), sections).astype(np.int64)
    n, owner = len(sections), np.zeros(sum(sections), dtype=np.int64)
    for a in range(1, n):
        owner[a:n * sections[a]:n] = a  # HF: slice(offset, length * 3, 3) for H and W
    counts = np.bincount(owner, minlength=n).tolist()
    if counts != list(sections):
        raise ValueError(f"sections {sections} cannot be interleaved: axis a >= 1 needs "
                         f"pairs a, a + {n}, ... below {n} * sections[a] within "
                         f"{sum(sections)} pairs (got counts {counts})")
    return owner


class AxisFrequencies(NamedTuple):
    """:func:`axis_frequency_assignment`'s answer: ``axis[i]`` owns pair ``i``, which turns by
    ``frequency[i]`` radians per unit of that axis's position id."""

    axis: np.ndarray
    frequency: np.ndarray


def axis_frequency_assignment(head_dim: int, sections, *, layout: str = "chunked",
                              base: float = 10000.0) -> AxisFrequencies:
    """Which axis owns each of the ``head_dim // 2`` frequency pairs, and its frequency.

    ``"chunked"`` and ``"interleaved"`` share one ladder ``base ** (-2i / head_dim)``
    among the axes (Qwen2-VL, Qwen3-VL); ``"per_axis"`` gives axis ``a`` a ladder of its
    own, ``base ** (-j / sections[a])`` for ``j < sections[a]``: diffusers' ``FluxPosEmbed``
    calls ``get_1d_rotary_pos_embed(axes_dim[a], ..., theta)`` once per axis, so every
    axis starts at frequency 1. Both arrays ``[head_dim // 2]`` (int64, float64).
    """
    head_dim = check_even_int("head_dim", head_dim)
    sections = _check_axis_sections(sections, head_dim // 2)
    base = check_base(base)
    owner = axis_of_pair(sections, layout=layout)
    if layout == "per_axis":
        frequency = np.concatenate([base ** (-np.arange(s, dtype=np.float64) / s)
                                    for s in sections if s])
    else:
        frequency = rope_frequencies(head_dim, base)
    return AxisFrequencies(owner, frequency)


def multi_axis_angles(positions, head_dim: int, *, sections, layout: str = "chunked",
                      base: float = 10000.0) -> np.ndarray:
    """The angle of every pair when position has ``n = len(sections)`` axes.

    ``positions`` ``[n, ...]`` (one id per axis; real numbers allowed): pair ``i`` turns by
    ``positions[axis[i]] * frequency[i]`` (:func:`axis_frequency_assignment`). Qwen2-VL's
    M-RoPE is ``layout="chunked"`` with ``n = 3``; FLUX.1 is ``"per_axis"`` with sections
    ``(8, 28, 28)`` and base 10000, FLUX.2 ``(16, 16, 16, 16)`` and base 2000. Float64,
    shape ``positions.shape[1:] + [head_dim // 2]``.
    """
    axis, frequency = axis_frequency_assignment(head_dim, sections, layout=layout, base=base)
    pos = np.asarray(to_numpy(positions))
    if not (np.issubdtype(pos.dtype, np.integer) or np.issubdtype(pos.dtype, np.floating)):
        raise TypeError(f"positions must be a real array [{len(sections)}, ...], got dtype "
                        f"{pos.dtype}")
    if pos.ndim < 1 or pos.shape[0] != len(sections):
        raise ValueError(f"positions must have shape [{len(sections)}, ...] (one row per "
                         f"axis of sections {tuple(sections)}), got {pos.shape}")
    chosen = np.moveaxis(pos[axis].astype(np.float64), 0, -1)  # [..., head_dim // 2]
    return chosen * frequency


def sincos_2d_table(height: int, width: int, dim: int, *, spacing: float = 1.0,
                    base: float = 10000.0) -> np.ndarray:
    """A fixed 2-D sin-cos table ``[height, width, dim]`` (MAE's and diffusers' layout).

    The first ``dim // 2`` features encode the column ``c * spacing``, the last
    ``dim // 2`` the row ``r * spacing``, each as ``[sin(p w_j) | cos(p w_j)]`` with
    ``w_j = base ** (-j / (dim / 4))``, ``j < dim / 4`` (diffusers'
    ``get_2d_sincos_pos_embed``, whose meshgrid puts the width coordinate first).
    ``dim`` must be a multiple of 4.
    """
    height, width = check_int("height", height), check_int("width", width)
    dim = check_int("dim", dim, minimum=4)
    if dim % 4:
        raise ValueError(f"dim must be a multiple of 4 (sin and cos for two axes), got {dim}")
    spacing = check_float("spacing", spacing, greater_than=0.0)
    w = sinusoidal_frequencies(dim // 2, base)  # [dim/4]: base ** (-2j / (dim/2))

    def half(p):  # [n] -> [n, dim/2], sin block then cos block
        angle = (np.arange(p, dtype=np.float64) * spacing)[:, None] * w
        return np.concatenate([np.sin(angle), np.cos(angle)], axis=-1)

    cols, rows = half(width), half(height)
    return np.concatenate([np.broadcast_to(cols[None, :, :], (height, width, dim // 2)),
                           np.broadcast_to(rows[:, None, :], (height, width, dim // 2))],
                          axis=-1)


def cropped_sincos_table(height: int, width: int, dim: int, *, max_size: int,
                         spacing: float = 1.0, base: float = 10000.0) -> np.ndarray:
    """SD3's position table: the centre ``height x width`` of one fixed ``max_size`` grid.

    Stable Diffusion 3 builds :func:`sincos_2d_table` once at ``max_size x max_size``
    (``pos_embed_max_size``, 96 in diffusers' ``SD3Transformer2DModel``) and crops each
    image's patch grid from its centre, ``top = (max_size - height) // 2`` and
    ``left = (max_size - width) // 2`` (``PatchEmbed.cropped_pos_embed``), so every
    resolution reads positions from one table. Shape ``[height, width, dim]``; a grid
    larger than ``max_size`` is refused, as in diffusers.
    """
    max_size = check_int("max_size", max_size)
    height, width = check_int("height", height), check_int("width", width)
    if height > max_size or width > max_size:
        raise ValueError(f"height and width must be <= max_size = {max_size}, got "
                         f"{height} x {width}")
    top, left = (max_size - height) // 2, (max_size - width) // 2
    table = sincos_2d_table(max_size, max_size, dim, spacing=spacing, base=base)
    return table[top:top + height, left:left + width]


def _antialiased_bilinear_weights(in_size: int, out_size: int) -> np.ndarray:
    """``[out_size, in_size]`` weights of PyTorch's ``interpolate(mode="bilinear",
    align_corners=False, antialias=True)`` along one axis (its CPU kernel's
    ``_compute_indices_min_size_weights_aa``, the triangle filter of PIL's resize).

    Output sample ``i`` sits at ``center = scale * (i + 0.5)`` in input units
    (``scale = in / out``); the triangle is widened by ``scale`` when shrinking, so every
    input row contributes (the antialiasing), and each row of weights is normalised.
    """
    scale = in_size / out_size
    support = scale if scale >= 1.0 else 1.0  # interp_size / 2 = 1, widened when shrinking
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    weights = np.zeros((out_size, in_size))
    for i in range(out_size):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)  # int() truncates, as the C++ cast
        hi = min(int(center + support + 0.5), in_size)
        j = np.arange(lo, hi)
        w = np.clip(1.0 - np.abs((j - center + 0.5) * invscale), 0.0, None)
        weights[i, lo:hi] = w / w.sum()
    return weights


def resize_position_table(table, height: int, width: int) -> np.ndarray:
    """A learned ``[H, W, dim]`` position table resized to a ``height x width`` patch grid.

    SigLIP2's NaFlex variant keeps one learned 16 x 16 table and, for each image, resizes
    it to that image's patch grid with bilinear interpolation, ``align_corners=False`` and
    ``antialias=True`` (Hugging Face's ``Siglip2VisionEmbeddings.resize_positional_embeddings``),
    so one table serves every aspect ratio and resolution. Separable: one weight matrix per
    axis (:func:`_antialiased_bilinear_weights`). Float64 ``[height, width, dim]``.
    """
    t = np.asarray(to_numpy(table), dtype=np.float64)
    if t.ndim != 3:
        raise ValueError(f"table must have shape [H, W, dim], got {t.shape}")
    height, width = check_int("height", height), check_int("width", width)
    rows = _antialiased_bilinear_weights(t.shape[0], height)  # [height, H]
    cols = _antialiased_bilinear_weights(t.shape[1], width)   # [width, W]
    return np.einsum("ri,cj,ijd->rcd", rows, cols, t)


def patch_center_coordinates(height: int, width: int) -> np.ndarray:
    """The centres of a ``height x width`` patch grid, normalised to ``[-1, 1]``.

    Row by row, ``[height * width, 2]`` as ``(y, x)``: ``2 (r + 0.5) / height - 1`` and
    ``2 (c + 0.5) / width - 1`` (DINOv3; Hugging Face's ``get_patches_center_coordinates``).
    Whatever the grid, the coordinates span the same box: a larger image gets denser
    coordinates, not larger ones.
    """
    height, width = check_int("height", height), check_int("width", width)
    y = (np.arange(height) + 0.5) / height * 2.0 - 1.0
    x = (np.arange(width) + 0.5) / width * 2.0 - 1.0
    yy, xx = np.meshgrid(y, x, indexing="ij")
    return np.stack([yy.ravel(), xx.ravel()], axis=-1)


class CoordinateJitter(NamedTuple):
    """One draw of DINOv3's coordinate augmentation: ``shift`` ``(dy, dx)`` added, then
    ``jitter`` ``(sy, sx)`` and the shared ``rescale`` multiplied."""

    shift: tuple[float, float] = (0.0, 0.0)
    jitter: tuple[float, float] = (1.0, 1.0)
    rescale: float = 1.0


def draw_coordinate_jitter(rng: np.random.Generator, *, shift: float | None = None,
                           jitter: float | None = None,
                           rescale: float | None = 2.0) -> CoordinateJitter:
    """Draw one :class:`CoordinateJitter` as DINOv3 does in training (``None`` skips a part).

    ``shift``: each axis uniform in ``[-shift, shift]``; ``jitter``: each axis log-uniform
    in ``[1/jitter, jitter]``; ``rescale``: one factor for both axes, log-uniform in
    ``[1/rescale, rescale]`` (Hugging Face's ``augment_patches_center_coordinates``;
    ``DINOv3ViTConfig`` defaults ``pos_embed_shift=None``, ``pos_embed_jitter=None``,
    ``pos_embed_rescale=2.0``).
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (np.random.default_rng(seed)), "
                        f"got {rng!r}")
    draw = CoordinateJitter()
    if shift is not None:
        s = check_float("shift", shift, at_least=0.0)
        draw = draw._replace(shift=tuple(rng.uniform(-s, s, 2).tolist()))
    if jitter is not None:
        j = np.log(check_float("jitter", jitter, at_least=1.0))
        draw = draw._replace(jitter=tuple(np.exp(rng.uniform(-j, j, 2)).tolist()))
    if rescale is not None:
        r = np.log(check_float("rescale", rescale, at_least=1.0))
        draw = draw._replace(rescale=float(np.exp(rng.uniform(-r, r))))
    return draw


def jitter_coordinates(coords, draw: CoordinateJitter) -> np.ndarray:
    """Apply one :class:`CoordinateJitter` to ``(y, x)`` coordinates ``[..., 2]``:
    ``(coords + shift) * jitter * rescale``, in DINOv3's order. Float64, same shape."""
    c = np.asarray(to_numpy(coords), dtype=np.float64)
    if c.ndim < 1 or c.shape[-1] != 2:
        raise ValueError(f"coords must have shape [..., 2] (y, x), got {c.shape}")
    if not isinstance(draw, CoordinateJitter):
        raise TypeError(f"draw must be a CoordinateJitter (from draw_coordinate_jitter), "
                        f"got {draw!r}")
    return (c + np.asarray(draw.shift)) * np.asarray(draw.jitter) * draw.rescale


def normalized_axial_angles(coords, head_dim: int, *, base: float = 100.0) -> np.ndarray:
    """DINOv3's RoPE angles from normalised ``(y, x)`` coordinates ``[..., 2]``.

    ``2 pi * coord * f_i`` with ``f_i = base ** (-4i / head_dim)``, ``i < head_dim // 4``;
    the ``y`` angles first, then the ``x`` angles (Hugging Face's
    ``DINOv3ViTRopePositionEmbedding``, which repeats them for the half layout). Float64
    ``[..., head_dim // 2]``.
    """
    head_dim = check_int("head_dim", head_dim, minimum=4)
    if head_dim % 4:
        raise ValueError(f"head_dim must be a multiple of 4 (half the pairs per axis), got "
                         f"{head_dim}")
    base = check_base(base)
    c = np.asarray(to_numpy(coords), dtype=np.float64)
    if c.ndim < 1 or c.shape[-1] != 2:
        raise ValueError(f"coords must have shape [..., 2] (y, x), got {c.shape}")
    f = base ** (-np.arange(0, head_dim, 4, dtype=np.float64) / head_dim)  # [head_dim / 4]
    angles = 2.0 * np.pi * c[..., :, None] * f  # [..., 2, head_dim / 4]
    return angles.reshape(*c.shape[:-1], head_dim // 2)
