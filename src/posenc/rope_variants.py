"""RoPE as today's models ship it: partial RoPE, xPos, M-RoPE (Qwen2-VL), axial 2-D RoPE.

Each variant is RoPE's rotation (:mod:`posenc.rope`) with other angles or an extra
per-pair scale. Numpy only, like :mod:`posenc.rope`: the public functions take numpy
arrays, and :mod:`posenc.nn.rope_kernel` has the same functions for torch tensors
(one definition of each formula; only the :class:`~posenc.rope.Kernel` differs).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_base, check_even_int, check_int, to_numpy
from .rope import (
    NUMPY_KERNEL,
    Kernel,
    _as_positions,
    _check_x,
    _positions_for,
    apply_rope,
    rope_frequencies,
)

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


def mrope_angles(positions, head_dim: int, *, sections, base: float = 10000.0) -> np.ndarray:
    """M-RoPE's angle for every pair: pair ``i`` in section ``j`` turns by axis ``j``'s id.

    ``positions`` is an integer array ``[3, ...]`` (temporal, height, width ids);
    ``sections`` three counts of pairs adding to ``head_dim // 2``: the first
    ``sections[0]`` frequencies ``base ** (-2i / head_dim)`` take the temporal id, the next
    ``sections[1]`` the height id, the last ``sections[2]`` the width id. Float64, shape
    ``positions.shape[1:] + [head_dim // 2]``.
    """
    head_dim = check_even_int("head_dim", head_dim)
    sections = _check_sections(sections, head_dim // 2)
    pos = np.asarray(to_numpy(positions))
    if not np.issubdtype(pos.dtype, np.integer):
        raise TypeError(f"positions must be an integer array [3, seq], got dtype {pos.dtype}")
    if pos.ndim < 2 or pos.shape[0] != 3:
        raise ValueError(f"positions must have shape [3, seq] (temporal, height, width ids), "
                         f"got {pos.shape}")
    axis_of_pair = np.repeat(np.arange(3), sections)  # [head_dim // 2]: 0.., 1.., 2..
    chosen = np.moveaxis(pos[axis_of_pair].astype(np.float64), 0, -1)  # [..., head_dim // 2]
    return chosen * rope_frequencies(head_dim, base)


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


def apply_mrope(x, positions, *, sections, base: float = 10000.0,
                kernel: Kernel = NUMPY_KERNEL):
    """Multimodal RoPE of Qwen2-VL (Wang et al., 2024), half layout as Hugging Face's.

    Shape: ``x`` ``[..., seq, head_dim]`` (numpy array; a tensor in ``nn.rope_kernel``);
    ``positions`` integer ``[3, seq]`` (or ``[3, ...]`` broadcasting to
    ``x.shape[:-1]``): temporal, height and width ids, e.g. from
    :func:`mrope_position_ids`. ``sections`` splits the
    ``head_dim // 2`` frequencies into three consecutive chunks (``(16, 24, 24)`` for
    head_dim 128) that turn by axis 0, 1 and 2 (:func:`mrope_angles`). A text token has
    three equal ids, so it gets exactly ``apply_rope(x, layout="half")``.
    """
    _check_x(x, kernel)
    pos = np.asarray(to_numpy(positions))
    angles = mrope_angles(pos, int(x.shape[-1]), sections=sections, base=base)
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
