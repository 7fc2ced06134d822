"""Relative position representations (Shaw, Uszkoreit & Vaswani, NAACL 2018).

Learned vectors ``a^K_{clip(j-i, -k, k)}`` (and optionally ``a^V``) of size
``head_dim``: the score of query ``i`` for key ``j`` gains ``q_i . a^K_{ij}`` (the
``score_bias`` hook, which reads the queries), and the output gains
``sum_j p_ij a^V_{ij}`` (the ``value_term`` hook). ``2k + 1`` vectors per table, so any
length runs.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .._validation import check_int
from ..relative import shaw_relative_indices
from .positions import AttentionSpec, PositionEncoding, register_position

__all__ = ["ShawRelativePosition"]


class ShawRelativePosition(PositionEncoding):
    """Tables of ``2 * max_distance + 1`` learned vectors for keys and (optionally) values.

    Shape: ``forward(query_length, key_length=None)`` returns ``(a_k, a_v)``, each
    ``[q, k, head_dim]`` (``a_v`` is ``None`` when ``use_values=False``). The index
    matrix of the longest sequence seen is cached in a non-persistent buffer.
    """

    def __init__(self, head_dim: int, max_distance: int = 16, *, use_values: bool = True,
                 init_std: float = 0.02):
        super().__init__()
        self.head_dim = check_int("head_dim", head_dim)
        self.max_distance = check_int("max_distance", max_distance)
        size = 2 * self.max_distance + 1
        self.keys = nn.Parameter(torch.randn(size, self.head_dim) * init_std)
        self.values = (nn.Parameter(torch.randn(size, self.head_dim) * init_std)
                       if use_values else None)
        self.register_buffer("_index", torch.empty(0, 0, dtype=torch.int64), persistent=False)

    def indices(self, query_length: int, key_length: int | None = None) -> torch.Tensor:
        """Clipped relative index per pair, ``[q, k]`` int64 in ``0 .. 2k``."""
        if key_length is None or key_length == query_length:
            if query_length > self._index.shape[0]:
                index = shaw_relative_indices(query_length, self.max_distance)
                self._index = torch.from_numpy(index).to(self._index.device)
            return self._index[:query_length, :query_length]
        index = shaw_relative_indices(query_length, self.max_distance, key_length)
        return torch.from_numpy(index).to(self._index.device)

    def forward(self, query_length: int, key_length: int | None = None):
        idx = self.indices(query_length, key_length).to(self.keys.device)  # [q, k]
        a_k = self.keys[idx]  # [q, k, head_dim]
        a_v = None if self.values is None else self.values[idx]
        return a_k, a_v

    def score_bias(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """``q_i . a^K_{ij} / sqrt(head_dim)``, ``[batch, heads, q, k]``."""
        idx = self.indices(q.shape[-2], k.shape[-2]).to(q.device)
        a_k = self.keys[idx].to(q.dtype)  # [q, k, head_dim]
        return torch.einsum("bhqd,qkd->bhqk", q, a_k) / math.sqrt(self.head_dim)

    def value_term(self, weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor | None:
        """``sum_j p_ij a^V_{ij}``, ``[batch, heads, q, head_dim]``."""
        if self.values is None:
            return None
        idx = self.indices(weights.shape[-2], weights.shape[-1]).to(v.device)
        return torch.einsum("bhqk,qkd->bhqd", weights, self.values[idx].to(v.dtype))


def _shaw_cost(b: int, h: int, n: int, d: int) -> dict[str, int]:
    """Two einsums (``q . a^K``, ``p . a^V``), each as costly as one of attention's own
    products; ``a^K`` and ``a^V`` are ``[L, L, d_head]``."""
    d_head = d // h
    return {"matmul_flops": 4 * b * h * n * n * d_head,
            "elementwise_flops": b * h * n * n + b * h * n * d_head,
            "memory": 2 * n * n * d_head}


def _build_shaw(spec: AttentionSpec, *, shaw_max_distance: int = 16):
    return ShawRelativePosition(spec.head_dim, shaw_max_distance)


register_position("shaw", ShawRelativePosition, build=_build_shaw)
