"""Rotary position embedding, RoPE (Su et al., 2021, "RoFormer").

Position ``m`` rotates feature pair ``i`` by the angle ``m * theta_i`` with
``theta_i = base ** (-2i / head_dim)``. Because rotations compose,
``<R_m q, R_n k> = <q, R_{n-m} k>`` depends on ``n - m`` only.

Two layouts of the pairs exist in the wild, and they are *not* interchangeable
for a trained checkpoint:

* ``layout="interleaved"``: pairs ``(x[2i], x[2i+1])`` -- RoFormer, Meta's llama
  ``apply_rotary_emb`` (complex numbers), torchtune, rotary-embedding-torch.
* ``layout="half"``: pairs ``(x[i], x[i + d/2])`` -- GPT-NeoX and Hugging Face
  transformers ``rotate_half``.

They are equal up to the fixed permutation :func:`interleaved_to_half`.

Angles are computed in float64 (numpy) and the rotation in float32 or float64:
never in half precision, where ``m * theta`` loses whole radians at long
positions (bf16 holds integers exactly only up to 256). Like Meta's llama, a
half-precision input is rotated in float32 and cast back.
"""

from __future__ import annotations

import numpy as np

from ._validation import (
    check_base,
    check_choice,
    check_even_int,
    check_frequencies,
    check_int,
    is_tensor,
    to_numpy,
)

__all__ = [
    "LAYOUTS",
    "rope_frequencies",
    "rope_angles",
    "apply_rope",
    "rotate_pairs",
    "apply_rope_complex",
    "rope_rotation_matrix",
    "interleaved_to_half",
    "rope_relative_upper_bound",
    "wrap_angle",
    "rope_angles_in_dtype",
    "interleaved_to_half_weight",
    "xpos_zeta",
    "xpos_scale",
    "apply_xpos",
    "mrope_angles",
    "apply_mrope",
    "mrope_position_ids",
    "axial_rope_angles",
    "apply_axial_rope",
]

LAYOUTS = ("interleaved", "half")


def rope_frequencies(head_dim: int, base: float = 10000.0) -> np.ndarray:
    """Rotation frequency ``theta_i = base ** (-2i / head_dim)`` per pair, radians/position.

    Shape ``[head_dim // 2]``, float64. Hugging Face calls this ``inv_freq``.
    """
    head_dim = check_even_int("head_dim", head_dim)
    base = check_base(base)
    return base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)


def rope_angles(positions, head_dim: int, base: float = 10000.0, *,
                frequencies=None) -> np.ndarray:
    """Rotation angle ``m * theta_i`` of every pair at every position, float64 radians.

    Shape: ``positions.shape + [head_dim // 2]``.
    """
    freqs = _resolve_frequencies(head_dim, base, frequencies)
    pos = _as_positions(positions)
    return pos[..., None] * freqs  # [..., head_dim // 2]


def _resolve_frequencies(head_dim, base, frequencies) -> np.ndarray:
    head_dim = check_even_int("head_dim", head_dim)
    if frequencies is None:
        return rope_frequencies(head_dim, base)
    check_base(base)
    return check_frequencies(to_numpy(frequencies), head_dim // 2)


def _as_positions(positions) -> np.ndarray:
    pos = np.asarray(to_numpy(positions))
    if pos.dtype == object or not (np.issubdtype(pos.dtype, np.integer)
                                   or np.issubdtype(pos.dtype, np.floating)):
        raise TypeError(f"positions must be integers or real numbers, got dtype {pos.dtype}")
    pos = pos.astype(np.float64)
    if not np.all(np.isfinite(pos)):
        raise ValueError("positions must be finite")
    return pos


def _check_x(x):
    if is_tensor(x):
        if not x.is_floating_point():
            raise TypeError(f"x must be a floating-point tensor, got {x.dtype}")
    elif isinstance(x, np.ndarray):
        if not np.issubdtype(x.dtype, np.floating):
            raise TypeError(f"x must be a floating-point array, got {x.dtype}")
    else:
        raise TypeError(f"x must be a numpy array or a torch tensor, got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"x must have shape [..., seq, head_dim], got shape {tuple(x.shape)}")
    check_even_int("head_dim (x.shape[-1])", int(x.shape[-1]))


def _positions_for(x, positions) -> np.ndarray:
    seq = int(x.shape[-2])
    if positions is None:
        return np.arange(seq, dtype=np.float64)
    pos = _as_positions(positions)
    lead = tuple(int(s) for s in x.shape[:-1])
    try:
        ok = np.broadcast_shapes(pos.shape, lead) == lead
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"positions must have shape ({seq},) or broadcast to x.shape[:-1] = {lead}; "
            f"got {pos.shape}"
        )
    return pos


def apply_rope(x, positions=None, *, base: float = 10000.0, layout: str = "interleaved",
               frequencies=None, rotary_dim: int | None = None):
    """Rotate the last axis of ``x`` by RoPE.

    Shape: ``x`` is ``[..., seq, head_dim]`` (numpy array or torch tensor); the
    result has the same shape, type and dtype. ``positions`` defaults to
    ``0 .. seq-1`` and may be any shape that broadcasts to ``x.shape[:-1]``
    (e.g. ``[seq]`` or ``[batch, 1, seq]`` for per-sequence offsets).
    ``frequencies`` (``[head_dim // 2]``) replaces ``rope_frequencies(head_dim, base)``,
    e.g. with the scaled ones of a context-extension method.

    ``layout="interleaved"`` rotates pairs ``(2i, 2i+1)`` (RoFormer, Meta llama);
    ``layout="half"`` rotates ``(i, i + head_dim/2)`` (GPT-NeoX, Hugging Face).

    Partial RoPE: ``rotary_dim=r`` (an even number ``<= head_dim``) rotates only the
    first ``r`` features, as if they were the whole head (frequencies
    ``base ** (-2i / r)``, or ``frequencies`` of length ``r // 2``; pairs laid out within
    those ``r`` features), and passes features ``r ..`` through unchanged. This is
    GPT-NeoX's ``rotary_pct``, Phi's ``partial_rotary_factor`` and Hugging Face's
    ``rotary_dim = int(head_dim * partial_rotary_factor)``. ``rotary_dim=head_dim`` is
    full RoPE.
    """
    _check_x(x)
    layout = check_choice("layout", layout, LAYOUTS)
    head_dim = int(x.shape[-1])
    if rotary_dim is not None:
        rotary_dim = check_even_int("rotary_dim", rotary_dim)
        if rotary_dim > head_dim:
            raise ValueError(f"rotary_dim must be an even integer in [2, head_dim={head_dim}], "
                             f"got {rotary_dim}")
        if rotary_dim < head_dim:
            rotated = apply_rope(x[..., :rotary_dim], positions, base=base, layout=layout,
                                 frequencies=frequencies)
            return _concat_last(rotated, x[..., rotary_dim:])
    angles = rope_angles(_positions_for(x, positions), head_dim, base,
                         frequencies=frequencies)  # float64 [..., seq, head_dim // 2]
    return _rotate(x, angles, layout)


def _rotate(x, angles: np.ndarray, layout: str):
    """Rotate the pairs of ``x`` (array or tensor) by float64 ``angles`` ``[..., d // 2]``."""
    if is_tensor(x):  # the torch kernel lives with the torch modules (which import this one)
        from .nn.rotary import rotate_by_angles

        return rotate_by_angles(x, angles, layout)
    work = x.astype(np.float64) if x.dtype != np.float64 else x
    return rotate_pairs(work, np.cos(angles), np.sin(angles), layout).astype(x.dtype, copy=False)


def _concat_last(a, b):
    """``a`` and ``b`` joined on the last axis (numpy or torch alike)."""
    if is_tensor(a):
        import torch

        return torch.cat([a, b], dim=-1)
    return np.concatenate([a, b], axis=-1)


def _scale_pairs(x, scale: np.ndarray):
    """``x`` ``[..., head_dim]`` times a per-pair float64 ``scale`` ``[..., head_dim // 2]``
    (each pair's two features by the same number, interleaved), dtype of ``x`` kept."""
    full = np.repeat(scale, 2, axis=-1)  # [..., head_dim], pairs (2i, 2i+1)
    if is_tensor(x):
        import torch

        compute = torch.float64 if x.dtype == torch.float64 else torch.float32
        return (x.to(compute) * torch.from_numpy(full).to(x.device, compute)).to(x.dtype)
    work = x.astype(np.float64) if x.dtype != np.float64 else x
    return (work * full).astype(x.dtype, copy=False)



def rotate_pairs(x, cos, sin, layout, cat=np.concatenate, stack=np.stack):
    """The rotation itself, written once for numpy and torch (pass ``torch.cat`` and
    ``torch.stack`` for tensors). ``x`` ``[..., head_dim]``, ``cos``/``sin``
    ``[..., head_dim // 2]``."""
    half = x.shape[-1] // 2
    if layout == "half":
        x1, x2 = x[..., :half], x[..., half:]
        return cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)  # [..., half, 2]
    return out.reshape(x.shape)  # back to [..., head_dim], pairs interleaved


def apply_rope_complex(x: np.ndarray, positions=None, *, base: float = 10000.0,
                       frequencies=None) -> np.ndarray:
    """RoPE in complex-number form, as Meta's llama writes it (interleaved layout).

    Each pair ``(x[2i], x[2i+1])`` is the complex number ``x[2i] + 1j * x[2i+1]``,
    multiplied by ``exp(1j * m * theta_i)``. Numpy only; equal to
    ``apply_rope(x, layout="interleaved")``. Shape ``[..., seq, head_dim]``.
    """
    _check_x(x)
    angles = rope_angles(_positions_for(x, positions), int(x.shape[-1]), base,
                         frequencies=frequencies)
    z = x[..., 0::2] + 1j * x[..., 1::2]  # [..., seq, head_dim // 2], complex
    z = z * np.exp(1j * angles)
    out = np.empty(x.shape, dtype=np.float64)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out.astype(x.dtype, copy=False)


def rope_rotation_matrix(position: float, head_dim: int, base: float = 10000.0, *,
                         layout: str = "interleaved", frequencies=None) -> np.ndarray:
    """The explicit rotation ``R_m``, ``[head_dim, head_dim]``: ``apply_rope(x)[m] = R_m @ x[m]``.

    Block-diagonal ``[[cos, -sin], [sin, cos]]`` per pair (for ``layout="half"``
    the blocks sit on rows/columns ``i`` and ``i + head_dim/2``). Orthogonal, and
    ``R_m.T @ R_n = R_{n-m}``.
    """
    layout = check_choice("layout", layout, LAYOUTS)
    angles = rope_angles(np.float64(position), head_dim, base, frequencies=frequencies)
    c, s = np.cos(angles), np.sin(angles)
    half = len(angles)
    a, b = ((np.arange(half), np.arange(half) + half) if layout == "half"
            else (np.arange(0, 2 * half, 2), np.arange(1, 2 * half, 2)))
    r = np.zeros((2 * half, 2 * half), dtype=np.float64)
    r[a, a], r[a, b], r[b, a], r[b, b] = c, -s, s, c
    return r


def interleaved_to_half(head_dim: int) -> np.ndarray:
    """Permutation ``perm`` of the feature axis from the interleaved to the half layout.

    ``apply_rope(x[..., perm], layout="half") == apply_rope(x)[..., perm]``: feature
    ``2i`` moves to slot ``i`` and feature ``2i+1`` to slot ``i + head_dim/2``. This is
    the permutation a checkpoint converter applies to the rows of W_q and W_k
    (Hugging Face's llama conversion script does exactly this). Shape ``[head_dim]``.
    """
    head_dim = check_even_int("head_dim", head_dim)
    return np.concatenate([np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)])


def rope_relative_upper_bound(distances, head_dim: int, base: float = 10000.0) -> np.ndarray:
    """RoFormer's long-term-decay bound (Su et al., section 3.4.3), as they plot it.

    For relative distance ``r`` it is ``mean_j |S_j|`` with
    ``S_j = sum_{k<j} exp(1j * r * theta_k)``, j = 1 .. head_dim/2: the attention
    score is bounded by ``max_i |h_i - h_{i+1}|`` times this. It decays (while
    wiggling) as ``|r|`` grows. Shape: that of ``distances``.
    """
    theta = rope_frequencies(head_dim, base)  # [d/2]
    r = np.asarray(distances, dtype=np.float64)
    partial_sums = np.cumsum(np.exp(1j * r[..., None] * theta), axis=-1)  # [..., d/2]
    return np.abs(partial_sums).mean(axis=-1)


# --- helpers for the RoPE chapter: angle wrapping, half-precision angles, checkpoint layouts ---

def wrap_angle(angles) -> np.ndarray:
    """Angles wrapped into ``(-pi, pi]``: where a rotation by ``angles`` points, float64.

    Two angles that differ by a whole number of turns give the same rotation, so
    an angle *error* is only meaningful after wrapping. Shape: that of ``angles``.
    """
    a = np.asarray(angles, dtype=np.float64)
    return np.pi - np.mod(np.pi - a, 2 * np.pi)


def rope_angles_in_dtype(num_positions: int, head_dim: int, base: float = 10000.0, *,
                         dtype) -> np.ndarray:
    """The angles ``m * theta_i`` as an implementation gets them when it works in torch ``dtype``.

    Positions come from ``torch.arange(num_positions, dtype=dtype)`` and are multiplied
    by the frequencies cast to ``dtype`` -- what a RoPE module did once its buffers
    were cast with the rest of a bf16/fp16 model (the bug Hugging Face fixed by
    forcing float32, transformers PR #29285). Returned as float64 so they can be
    compared with :func:`rope_angles`. Shape ``[num_positions, head_dim // 2]``.
    """
    import torch

    num_positions = check_int("num_positions", num_positions)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a torch floating-point dtype, got {dtype!r}")
    positions = torch.arange(num_positions, dtype=dtype)  # rounded to what dtype can hold
    inv_freq = torch.from_numpy(rope_frequencies(head_dim, base)).to(dtype)
    return to_numpy((positions[:, None] * inv_freq[None, :]).double())


def interleaved_to_half_weight(weight, num_heads: int):
    """Reorder a query/key projection trained with interleaved RoPE for a half-layout model.

    ``weight`` holds ``num_heads * head_dim`` output rows on its first axis (a
    ``[out, in]`` weight or an ``[out]`` bias; numpy array or torch tensor). Within
    each head the rows are permuted by :func:`interleaved_to_half`, so that
    ``apply_rope(x @ W_half.T, layout="half")`` equals the interleaved result with its
    features permuted -- and attention scores are unchanged. Apply it to W_q and W_k
    (never W_v). It equals the ``permute`` of Hugging Face's
    ``convert_llama_weights_to_hf.py``. Shape: that of ``weight``.
    """
    num_heads = check_int("num_heads", num_heads)
    if not (isinstance(weight, np.ndarray) or is_tensor(weight)) or weight.ndim < 1:
        raise TypeError("weight must be a numpy array or torch tensor with rows on axis 0, "
                        f"got {type(weight).__name__}")
    rows = int(weight.shape[0])
    if rows % num_heads:
        raise ValueError(f"weight.shape[0] ({rows}) must be divisible by num_heads ({num_heads})")
    head_dim = check_even_int("head_dim (weight.shape[0] // num_heads)", rows // num_heads)
    index = (np.arange(num_heads)[:, None] * head_dim + interleaved_to_half(head_dim)).ravel()
    if is_tensor(weight):
        import torch

        return weight[torch.from_numpy(index).to(weight.device)]
    return weight[index]


# --- RoPE as today's models ship it: xPos, M-RoPE (Qwen2-VL), axial 2-D RoPE (RoPE-ViT) ---

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


def apply_xpos(q, k, positions=None, *, base: float = 10000.0, scale_base: float = 512.0):
    """xPos (Sun et al., 2023, "A Length-Extrapolatable Transformer"): RoPE plus a decay.

    Shape: ``q`` and ``k`` are ``[..., seq, head_dim]`` (numpy arrays or torch tensors,
    the same ``seq`` and ``head_dim``); returns ``(q', k')`` of the same shapes and types.
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
    _check_x(q)
    _check_x(k)
    if tuple(q.shape[-2:]) != tuple(k.shape[-2:]):
        raise ValueError(f"q and k must have the same [seq, head_dim], got "
                         f"{tuple(q.shape[-2:])} and {tuple(k.shape[-2:])}")
    pos = _positions_for(q, positions)
    _positions_for(k, positions)
    scale = xpos_scale(pos, int(q.shape[-1]), seq_len=int(q.shape[-2]), scale_base=scale_base)
    q_rot = apply_rope(q, pos, base=base, layout="interleaved")
    k_rot = apply_rope(k, pos, base=base, layout="interleaved")
    return _scale_pairs(q_rot, scale), _scale_pairs(k_rot, 1.0 / scale)


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


def apply_mrope(x, positions, *, sections, base: float = 10000.0):
    """Multimodal RoPE of Qwen2-VL (Wang et al., 2024), half layout as Hugging Face's.

    Shape: ``x`` ``[..., seq, head_dim]`` (array or tensor); ``positions`` integer
    ``[3, seq]`` (or ``[3, ...]`` broadcasting to ``x.shape[:-1]``): temporal, height and
    width ids, e.g. from :func:`mrope_position_ids`. ``sections`` splits the
    ``head_dim // 2`` frequencies into three consecutive chunks (``(16, 24, 24)`` for
    head_dim 128) that turn by axis 0, 1 and 2 (:func:`mrope_angles`). A text token has
    three equal ids, so it gets exactly ``apply_rope(x, layout="half")``.
    """
    _check_x(x)
    pos = np.asarray(to_numpy(positions))
    angles = mrope_angles(pos, int(x.shape[-1]), sections=sections, base=base)
    _check_angles_fit(x, angles, "positions", "(3, {seq})", "(3, ...)", pos.shape)
    return _rotate(x, angles, "half")


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


def apply_axial_rope(x, rows, cols, *, base: float = 100.0):
    """Axial 2-D RoPE on a grid of image patches (Heo et al., 2024), interleaved pairs.

    Shape: ``x`` ``[..., seq, head_dim]`` (array or tensor, ``head_dim`` a multiple of 4);
    ``rows`` and ``cols`` the patch coordinates, ``[seq]`` or broadcasting to
    ``x.shape[:-1]``. Angles from :func:`axial_rope_angles`. The score between patches
    then depends on the row and column offsets only.
    """
    _check_x(x)
    angles = axial_rope_angles(rows, cols, int(x.shape[-1]), base=base)
    _check_angles_fit(x, angles, "rows and cols", "({seq},)", "a shape",
                      angles.shape[:-1])
    return _rotate(x, angles, "interleaved")
