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

This module is numpy only. The same functions for torch tensors are in
:mod:`posenc.nn.rope_kernel` (they share this module's angles and checks through a
:class:`Kernel`, the three array operations RoPE needs); RoPE's variants (partial RoPE,
xPos, M-RoPE, axial 2-D RoPE) are in :mod:`posenc.rope_variants`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

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
    "Kernel",
    "NUMPY_KERNEL",
    "rope_frequencies",
    "rope_angles",
    "apply_rope",
    "rotate_pairs",
    "apply_rope_complex",
    "rope_rotation_matrix",
    "interleaved_to_half",
    "rope_relative_upper_bound",
    "wrap_angle",
    "interleaved_to_half_weight",
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


class Kernel(NamedTuple):
    """The array operations RoPE and its variants need, for one array library.

    The maths (angles, checks, which pair turns by what) is written once, in this module
    and :mod:`posenc.rope_variants`; a kernel only does the arithmetic on ``x``.
    :data:`NUMPY_KERNEL` is here; ``posenc.nn.rope_kernel.TORCH_KERNEL`` is torch's.
    """

    name: str  #: what the public functions of this kernel take, for messages
    is_array: Callable  #: x -> whether x is this library's array
    is_float: Callable  #: x -> whether x has a floating-point dtype
    rotate: Callable  #: (x [..., d], angles float64 [..., d // 2], layout) -> rotated x
    concat: Callable  #: (a, b) -> a and b joined on the last axis
    scale_pairs: Callable  #: (x [..., d], scale float64 [..., d // 2]) -> x, pair i times scale_i
    other: str  #: where the same functions for the other library live


def _rotate_numpy(x: np.ndarray, angles: np.ndarray, layout: str) -> np.ndarray:
    work = x.astype(np.float64) if x.dtype != np.float64 else x
    return rotate_pairs(work, np.cos(angles), np.sin(angles), layout).astype(x.dtype, copy=False)


def _scale_pairs_numpy(x: np.ndarray, scale: np.ndarray) -> np.ndarray:
    full = np.repeat(scale, 2, axis=-1)  # [..., head_dim], pairs (2i, 2i+1)
    work = x.astype(np.float64) if x.dtype != np.float64 else x
    return (work * full).astype(x.dtype, copy=False)


NUMPY_KERNEL = Kernel(
    name="a numpy array",
    is_array=lambda x: isinstance(x, np.ndarray),
    is_float=lambda x: np.issubdtype(x.dtype, np.floating),
    rotate=_rotate_numpy,
    concat=lambda a, b: np.concatenate([a, b], axis=-1),
    scale_pairs=_scale_pairs_numpy,
    other="for torch tensors use the function of the same name in posenc.nn.rope_kernel",
)


def _check_x(x, kernel: Kernel = NUMPY_KERNEL, name: str = "x"):
    if not kernel.is_array(x):
        hint = f" ({kernel.other})" if is_tensor(x) or isinstance(x, np.ndarray) else ""
        raise TypeError(f"{name} must be {kernel.name}, got {type(x).__name__}{hint}")
    if not kernel.is_float(x):
        raise TypeError(f"{name} must have a floating-point dtype, got {x.dtype}")
    if x.ndim < 2:
        raise ValueError(f"{name} must have shape [..., seq, head_dim], got shape "
                         f"{tuple(x.shape)}")
    check_even_int(f"head_dim ({name}.shape[-1])", int(x.shape[-1]))


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
               frequencies=None, kernel: Kernel = NUMPY_KERNEL):
    """Rotate the last axis of ``x`` by RoPE.

    Shape: ``x`` is ``[..., seq, head_dim]`` (a numpy array; torch tensors go to
    :func:`posenc.nn.rope_kernel.apply_rope`); the result has the same shape and dtype.
    ``positions`` defaults to ``0 .. seq-1`` and may be any shape that broadcasts to
    ``x.shape[:-1]`` (e.g. ``[seq]`` or ``[batch, 1, seq]`` for per-sequence offsets).
    ``frequencies`` (``[head_dim // 2]``) replaces ``rope_frequencies(head_dim, base)``,
    e.g. with the scaled ones of a context-extension method.

    ``layout="interleaved"`` rotates pairs ``(2i, 2i+1)`` (RoFormer, Meta llama);
    ``layout="half"`` rotates ``(i, i + head_dim/2)`` (GPT-NeoX, Hugging Face).
    Partial RoPE (a head's first features only) is
    :func:`posenc.rope_variants.apply_partial_rope`. ``kernel`` does the arithmetic
    (:class:`Kernel`; the torch front-end passes its own).
    """
    _check_x(x, kernel)
    layout = check_choice("layout", layout, LAYOUTS)
    angles = rope_angles(_positions_for(x, positions), int(x.shape[-1]), base,
                         frequencies=frequencies)  # float64 [..., seq, head_dim // 2]
    return kernel.rotate(x, angles, layout)


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


# --- helpers for the RoPE chapter: angle wrapping, checkpoint layouts ---

def wrap_angle(angles) -> np.ndarray:
    """Angles wrapped into ``(-pi, pi]``: where a rotation by ``angles`` points, float64.

    Two angles that differ by a whole number of turns give the same rotation, so
    an angle *error* is only meaningful after wrapping. Shape: that of ``angles``.
    """
    a = np.asarray(angles, dtype=np.float64)
    return np.pi - np.mod(np.pi - a, 2 * np.pi)


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
    return weight[index]  # a torch tensor takes the numpy index too (no torch import here)
