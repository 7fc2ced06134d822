"""RoPE and its variants for torch tensors: the torch :class:`~posenc.rope.Kernel`.

The angles, the checks and the formulas are those of the numpy modules
(:mod:`posenc.rope`, :mod:`posenc.rope_variants`), written once there; this module
supplies the torch arithmetic (:data:`TORCH_KERNEL`: the rotation, a concatenation and a
per-pair scale) and the same public functions for tensors, so ``apply_rope(tensor)``
here equals ``posenc.rope.apply_rope(array)`` (tested). Angles stay float64 (numpy);
the rotation runs in float32 or float64, half precision in float32 and cast back, as
Meta's llama does.
"""

from __future__ import annotations

import numpy as np
import torch

from .. import rope, rope_variants
from .._validation import check_even_int, check_int, to_numpy

__all__ = [
    "TORCH_KERNEL",
    "rotate",
    "rotate_by_angles",
    "apply_rope",
    "apply_partial_rope",
    "apply_xpos",
    "apply_mrope",
    "apply_axial_rope",
    "rope_angles_in_dtype",
]


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    """float64 stays float64; everything else (half precision too) rotates in float32."""
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str) -> torch.Tensor:
    """Rotate the pairs of ``x`` ``[..., seq, head_dim]`` by angles given as ``cos``/``sin``
    ``[..., seq, head_dim // 2]`` (float64 or float32, any device); same shape and dtype out.

    The fastest form measured: interleaved pairs as one complex multiply (Meta llama's
    form, one pass over memory); half-layout pairs with in-place multiply-adds into one
    output (no concatenation); with autograd on, the half layout takes the plain form
    (:func:`posenc.rope.rotate_pairs`, the numpy kernel's own).
    Half precision is rotated in float32 and cast back, as Meta's llama does.
    Timings in benchmarks/README.md.
    """
    compute = _compute_dtype(x)
    xw = x.to(compute)
    cos, sin = cos.to(x.device, compute), sin.to(x.device, compute)
    if layout == "interleaved":
        rotation = torch.complex(cos, sin)  # e^{i m theta}, rounded once to compute precision
        pairs = xw.reshape(*xw.shape[:-1], -1, 2)  # [..., head_dim // 2, 2]
        if pairs.storage_offset() % 2 or any(st % 2 for st in pairs.stride()[:-1]):
            pairs = pairs.contiguous()  # view_as_complex needs aligned (re, im) pairs
        z = torch.view_as_complex(pairs) * rotation
        return torch.view_as_real(z).flatten(-2).to(x.dtype)  # [..., head_dim]
    if torch.is_grad_enabled() and xw.requires_grad:
        return rope.rotate_pairs(xw, cos, sin, layout, torch.cat, torch.stack).to(x.dtype)
    half = xw.shape[-1] // 2
    x1, x2 = xw[..., :half], xw[..., half:]
    out = torch.empty(xw.shape, dtype=compute, device=x.device)
    o1, o2 = out[..., :half], out[..., half:]
    torch.mul(x1, cos, out=o1).addcmul_(x2, sin, value=-1)  # x1 cos - x2 sin
    torch.mul(x2, cos, out=o2).addcmul_(x1, sin)  # x2 cos + x1 sin
    return out.to(x.dtype)


def rotate_by_angles(x: torch.Tensor, angles: np.ndarray, layout: str) -> torch.Tensor:
    """:func:`rotate` by float64 numpy ``angles`` (``[..., seq, head_dim // 2]``), as
    :func:`posenc.rope.rope_angles` computes them."""
    cos = torch.from_numpy(np.cos(angles))
    sin = torch.from_numpy(np.sin(angles))
    return rotate(x, cos, sin, layout)


def _scale_pairs(x: torch.Tensor, scale: np.ndarray) -> torch.Tensor:
    """``x`` ``[..., head_dim]`` times a per-pair float64 ``scale`` ``[..., head_dim // 2]``
    (each pair's two features by the same number, interleaved), dtype of ``x`` kept."""
    full = np.repeat(scale, 2, axis=-1)  # [..., head_dim], pairs (2i, 2i+1)
    compute = _compute_dtype(x)
    return (x.to(compute) * torch.from_numpy(full).to(x.device, compute)).to(x.dtype)


TORCH_KERNEL = rope.Kernel(
    name="a torch tensor",
    is_array=lambda x: isinstance(x, torch.Tensor),
    is_float=lambda x: x.is_floating_point(),
    rotate=rotate_by_angles,
    concat=lambda a, b: torch.cat([a, b], dim=-1),
    scale_pairs=_scale_pairs,
    other="for numpy arrays use the function of the same name in posenc.rope or "
          "posenc.rope_variants",
)


def apply_rope(x: torch.Tensor, positions=None, *, base: float = 10000.0,
               layout: str = "interleaved", frequencies=None) -> torch.Tensor:
    """:func:`posenc.rope.apply_rope` for a tensor ``x`` ``[..., seq, head_dim]``."""
    return rope.apply_rope(x, positions, base=base, layout=layout, frequencies=frequencies,
                           kernel=TORCH_KERNEL)


def apply_partial_rope(x: torch.Tensor, rotary_dim: int, positions=None, *,
                       base: float = 10000.0, layout: str = "interleaved",
                       frequencies=None) -> torch.Tensor:
    """:func:`posenc.rope_variants.apply_partial_rope` for a tensor ``x``."""
    return rope_variants.apply_partial_rope(x, rotary_dim, positions, base=base, layout=layout,
                                            frequencies=frequencies, kernel=TORCH_KERNEL)


def apply_xpos(q: torch.Tensor, k: torch.Tensor, positions=None, *, base: float = 10000.0,
               scale_base: float = 512.0) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`posenc.rope_variants.apply_xpos` for tensors ``q``, ``k``."""
    return rope_variants.apply_xpos(q, k, positions, base=base, scale_base=scale_base,
                                    kernel=TORCH_KERNEL)


def apply_mrope(x: torch.Tensor, positions, *, sections, base: float = 10000.0,
                layout: str = "chunked") -> torch.Tensor:
    """:func:`posenc.rope_variants.apply_mrope` for a tensor ``x``: ``layout="chunked"``
    (Qwen2-VL) or ``"interleaved"`` (Qwen3-VL)."""
    return rope_variants.apply_mrope(x, positions, sections=sections, base=base, layout=layout,
                                     kernel=TORCH_KERNEL)


def apply_axial_rope(x: torch.Tensor, rows, cols, *, base: float = 100.0) -> torch.Tensor:
    """:func:`posenc.rope_variants.apply_axial_rope` for a tensor ``x``."""
    return rope_variants.apply_axial_rope(x, rows, cols, base=base, kernel=TORCH_KERNEL)


def rope_angles_in_dtype(num_positions: int, head_dim: int, base: float = 10000.0, *,
                         dtype) -> np.ndarray:
    """The angles ``m * theta_i`` as an implementation gets them when it works in torch ``dtype``.

    Positions come from ``torch.arange(num_positions, dtype=dtype)`` and are multiplied
    by the frequencies cast to ``dtype`` -- what a RoPE module did once its buffers
    were cast with the rest of a bf16/fp16 model (the bug Hugging Face fixed by
    forcing float32, transformers PR #29285). Returned as float64 so they can be
    compared with :func:`posenc.rope.rope_angles`. Shape ``[num_positions, head_dim // 2]``.
    """
    num_positions = check_int("num_positions", num_positions)
    check_even_int("head_dim", head_dim)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a torch floating-point dtype, got {dtype!r}")
    positions = torch.arange(num_positions, dtype=dtype)  # rounded to what dtype can hold
    inv_freq = torch.from_numpy(rope.rope_frequencies(head_dim, base)).to(dtype)
    return to_numpy((positions[:, None] * inv_freq[None, :]).double())
