"""CoPE, contextual position encoding (Golovneva et al., 2024): positions counted by gates.

The ``score_bias`` hook, read from the queries and keys: gates
``g_ij = sigmoid(q_i . k_j / sqrt(d))`` decide which keys count; the position of key
``j`` seen from query ``i`` is the sum of the gates from ``j`` to ``i``
(:func:`posenc.learned_bias.cope_positions`), and the bias is ``q_i . e[p_ij] / sqrt(d)``
with ``e`` a learned table interpolated between integer positions
(:func:`posenc.learned_bias.cope_interpolate`).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .._validation import check_bool, check_int
from ..learned_bias import cope_interpolate, cope_positions
from .positions import AttentionSpec, PositionEncoding, register_position

__all__ = ["CoPEBias"]


class CoPEBias(PositionEncoding):
    """CoPE's bias ``[batch, heads, q, k]`` from q and k, as in the official
    ``ContextPosSelfAttn`` (facebookresearch/RAM, ``projects/cope``).

    ``npos`` integer positions ``0 .. npos-1`` have an embedding each (one
    ``[head_dim, npos]`` table per layer, shared by its heads, as in the official
    code); positions beyond ``npos - 1`` are clamped there, so any length runs. The
    official code starts the table at zero (a fresh CoPE layer is then NoPE); this one
    starts at ``N(0, 0.02^2)`` so a fresh layer already sees order. Gates, positions and
    logits are computed in at least float32 and the bias returned in the queries' dtype.
    Causal layers zero the gates of future keys before counting (otherwise a key's
    position would depend on keys after the query); bidirectional ones count the keys
    between ``i`` and ``j`` on either side (the course's extension).
    """

    def __init__(self, head_dim: int, *, npos: int = 64, causal: bool = True):
        super().__init__()
        self.head_dim = check_int("head_dim", head_dim)
        self.npos = check_int("npos", npos, minimum=2)
        check_bool("causal", causal)
        self.causal = causal
        self.pos_emb = nn.Parameter(torch.randn(self.head_dim, self.npos) * 0.02)

    def gates(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """``sigmoid(q k^T / sqrt(head_dim))``: ``[..., q, k]``, at least float32."""
        dtype = torch.promote_types(q.dtype, torch.float32)
        return torch.sigmoid(q.to(dtype) @ k.to(dtype).transpose(-1, -2)
                             / math.sqrt(self.head_dim))

    def positions(self, gates: torch.Tensor) -> torch.Tensor:
        """Contextual positions from gates, clamped to ``npos - 1``: ``[..., q, k]``."""
        return cope_positions(gates, causal=self.causal).clamp(max=self.npos - 1)

    def bias_from_gates(self, q: torch.Tensor, gates: torch.Tensor) -> torch.Tensor:
        """The bias for given gates: ``q_i . e[p_ij] / sqrt(head_dim)``, at least float32."""
        dtype = torch.promote_types(q.dtype, torch.float32)
        logits = q.to(dtype) @ self.pos_emb.to(dtype)  # [..., q, npos]: q_i . e[p], integer p
        return cope_interpolate(logits, self.positions(gates)) / math.sqrt(self.head_dim)

    def score_bias(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        if q.shape[-2] != k.shape[-2]:
            raise ValueError(f"CoPE needs as many queries as keys, got {q.shape[-2]} "
                             f"and {k.shape[-2]}")
        return self.bias_from_gates(q, self.gates(q, k)).to(q.dtype)


def _cope_cost(b: int, h: int, n: int, d: int, npos: int = 64) -> dict[str, int]:
    """``q . e`` for every query and integer position: ``2 b h L npos d_head`` FLOPs (the
    gates reuse ``q k^T``'s products in the official code; this module recomputes them:
    ``2 b h L^2 d_head`` more). Elementwise: sigmoid, cumulative sum, two gathers and the
    interpolation, about ``8 b h L^2``. Memory: gates and positions, ``2 b h L^2``."""
    d_head = d // h
    return {"matmul_flops": 2 * b * h * n * npos * d_head + 2 * b * h * n * n * d_head,
            "elementwise_flops": 8 * b * h * n * n, "memory": 2 * b * h * n * n}


def _build_cope(spec: AttentionSpec, *, cope_npos: int = 64):
    return CoPEBias(spec.head_dim, npos=cope_npos, causal=spec.causal)


register_position("cope", CoPEBias, build=_build_cope)
