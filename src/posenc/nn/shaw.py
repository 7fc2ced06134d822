"""Relative position representations (Shaw, Uszkoreit & Vaswani, NAACL 2018).

Learned vectors ``a^K_{clip(j-i, -k, k)}`` (and optionally ``a^V``) of size
``head_dim``: the score of query ``i`` for key ``j`` gains ``q_i . a^K_{ij}``, and the
output gains ``sum_j p_ij a^V_{ij}``. ``2k + 1`` vectors per table, so any length runs.
"""

from __future__ import annotations

import torch
from torch import nn

from .._validation import check_int
from ..relative import shaw_relative_indices

__all__ = ["ShawRelativePosition"]


class ShawRelativePosition(nn.Module):
    """Tables of ``2 * max_distance + 1`` learned vectors for keys and (optionally) values.

    Shape: ``forward(query_length, key_length=None)`` returns ``(a_k, a_v)``, each
    ``[q, k, head_dim]`` (``a_v`` is ``None`` when ``use_values=False``).
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

    def indices(self, query_length: int, key_length: int | None = None) -> torch.Tensor:
        """Clipped relative index per pair, ``[q, k]`` int64 in ``0 .. 2k``."""
        return torch.from_numpy(shaw_relative_indices(query_length, self.max_distance,
                                                      key_length))

    def forward(self, query_length: int, key_length: int | None = None):
        idx = self.indices(query_length, key_length).to(self.keys.device)  # [q, k]
        a_k = self.keys[idx]  # [q, k, head_dim]
        a_v = None if self.values is None else self.values[idx]
        return a_k, a_v
