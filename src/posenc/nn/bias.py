"""Position as an additive bias on the attention scores: ALiBi and T5.

Both return ``[num_heads, query_length, key_length]`` tensors that go straight
into ``scaled_dot_product_attention(..., attn_mask=bias)``.
"""

from __future__ import annotations

import torch
from torch import nn

from .._validation import check_int
from ..alibi import alibi_bias
from ..relative import relative_positions, t5_relative_bucket

__all__ = ["ALiBiBias", "T5RelativeBias"]


class ALiBiBias(nn.Module):
    """ALiBi's fixed bias (Press et al., 2022), from :func:`posenc.alibi.alibi_bias`.

    Shape: ``forward(query_length, key_length=None)`` returns ``[num_heads, q, k]``,
    float32, with ``-inf`` above the diagonal when ``causal``. No parameters.
    """

    def __init__(self, num_heads: int, *, causal: bool = True):
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads)
        self.causal = causal
        self._cache: dict[tuple[int, int], torch.Tensor] = {}

    def forward(self, query_length: int, key_length: int | None = None) -> torch.Tensor:
        key = (query_length, query_length if key_length is None else key_length)
        if key not in self._cache:
            bias = alibi_bias(self.num_heads, query_length, key_length, causal=self.causal)
            self._cache[key] = torch.from_numpy(bias).float()
        return self._cache[key]


class T5RelativeBias(nn.Module):
    """T5's learned relative bias: one scalar per (bucket, head) (Raffel et al., 2020).

    Shape: ``forward(query_length, key_length=None)`` returns ``[num_heads, q, k]``.
    Buckets come from :func:`posenc.relative.t5_relative_bucket` with
    ``relative_position = key - query``. In T5 one such table is shared by all layers.
    """

    def __init__(self, num_heads: int, *, num_buckets: int = 32, max_distance: int = 128,
                 bidirectional: bool = True):
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads)
        self.num_buckets = check_int("num_buckets", num_buckets, minimum=2)
        self.max_distance = check_int("max_distance", max_distance)
        self.bidirectional = bidirectional
        t5_relative_bucket(0, bidirectional=bidirectional, num_buckets=num_buckets,
                           max_distance=max_distance)  # validate the settings now
        self.embedding = nn.Embedding(self.num_buckets, self.num_heads)

    def buckets(self, query_length: int, key_length: int | None = None) -> torch.Tensor:
        """Bucket index per pair, ``[q, k]`` int64."""
        rel = relative_positions(query_length, key_length)
        return torch.from_numpy(t5_relative_bucket(
            rel, bidirectional=self.bidirectional, num_buckets=self.num_buckets,
            max_distance=self.max_distance))

    def forward(self, query_length: int, key_length: int | None = None) -> torch.Tensor:
        buckets = self.buckets(query_length, key_length).to(self.embedding.weight.device)
        return self.embedding(buckets).permute(2, 0, 1)  # [q, k, h] -> [h, q, k]
