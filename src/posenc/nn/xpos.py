"""xPos (Sun et al., 2023): RoPE plus a per-pair exponential decay with distance.

Queries are scaled by ``zeta_i ** ((n - L//2) / scale_base)`` and keys by the inverse,
so ``q_m . k_n`` carries ``zeta_i ** ((m - n) / scale_base)``, below 1 for every key
behind the query. A key ahead of the query would be *boosted*: xPos is for causal
attention. The maths is :func:`posenc.rope_variants.apply_xpos`.
"""

from __future__ import annotations

import torch

from .._validation import check_base, check_even_int
from ..rope_variants import _check_scale_base
from .positions import AttentionSpec, PositionEncoding, register_position
from .rope_kernel import apply_xpos

__all__ = ["XPosEmbedding"]


class XPosEmbedding(PositionEncoding):
    """Rotate queries and keys by RoPE (interleaved) and scale them inversely (xPos).

    Shape: ``rotate(q, k)`` with ``q``, ``k`` ``[batch, heads, seq, head_dim]`` returns two
    tensors of the same shape and dtype. The scales are computed per call in float64.
    """

    def __init__(self, head_dim: int, base: float = 10000.0, *, scale_base: float = 512.0):
        super().__init__()
        self.head_dim = check_even_int("head_dim", head_dim)
        self.base = check_base(base)
        self.scale_base = _check_scale_base(scale_base)

    def rotate(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return apply_xpos(q, k, base=self.base, scale_base=self.scale_base)


def _xpos_cost(b: int, h: int, n: int, d: int) -> dict[str, int]:
    """RoPE's 6 operations per pair plus one multiply per feature of q and k for the
    scale; cos, sin and the scale ``[L, d_head / 2]`` each."""
    return {"matmul_flops": 0, "elementwise_flops": 8 * b * n * d,
            "memory": 3 * n * (d // h) // 2}


def _build_xpos(spec: AttentionSpec, *, base: float = 10000.0, xpos_scale_base: float = 512.0):
    return XPosEmbedding(spec.head_dim, base, scale_base=xpos_scale_base)


register_position("xpos", XPosEmbedding, build=_build_xpos)
