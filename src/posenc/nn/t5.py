"""T5's learned relative bias (Raffel et al., 2020): one scalar per (bucket, head), the
``score_bias`` hook; one table shared by every layer of a stack."""

from __future__ import annotations

import torch
from torch import nn

from .._validation import check_bool, check_float, check_int
from ..relative import relative_positions, t5_relative_bucket
from .positions import AttentionSpec, PositionEncoding, register_position

__all__ = ["T5RelativeBias"]


class T5RelativeBias(PositionEncoding):
    """T5's learned relative bias: one scalar per (bucket, head).

    Shape: ``forward(query_length, key_length=None)`` returns ``[num_heads, q, k]``.
    Buckets come from :func:`posenc.relative.t5_relative_bucket` with
    ``relative_position = key - query``; those of the longest sequence seen are cached
    in a non-persistent buffer. In T5 one such table is shared by all layers
    (``shared_across_layers``).
    """

    def __init__(self, num_heads: int, *, num_buckets: int = 32, max_distance: int = 128,
                 bidirectional: bool = True, shared_across_layers: bool = True):
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads)
        self.num_buckets = check_int("num_buckets", num_buckets, minimum=2)
        self.max_distance = check_int("max_distance", max_distance)
        self.bidirectional = bidirectional
        check_bool("share_t5_bias", shared_across_layers)
        self.shared_across_layers = shared_across_layers
        t5_relative_bucket(0, bidirectional=bidirectional, num_buckets=num_buckets,
                           max_distance=max_distance)  # validate the settings now
        self.embedding = nn.Embedding(self.num_buckets, self.num_heads)
        self.register_buffer("_buckets", torch.empty(0, 0, dtype=torch.int64),
                             persistent=False)

    def _bucket_array(self, query_length, key_length=None):
        rel = relative_positions(query_length, key_length)
        return torch.from_numpy(t5_relative_bucket(
            rel, bidirectional=self.bidirectional, num_buckets=self.num_buckets,
            max_distance=self.max_distance))

    def buckets(self, query_length: int, key_length: int | None = None) -> torch.Tensor:
        """Bucket index per pair, ``[q, k]`` int64."""
        if key_length is None or key_length == query_length:
            if query_length > self._buckets.shape[0]:
                self._buckets = self._bucket_array(query_length).to(self._buckets.device)
            return self._buckets[:query_length, :query_length]
        return self._bucket_array(query_length, key_length).to(self._buckets.device)

    def forward(self, query_length: int, key_length: int | None = None) -> torch.Tensor:
        buckets = self.buckets(query_length, key_length).to(self.embedding.weight.device)
        return self.embedding(buckets).permute(2, 0, 1)  # [q, k, h] -> [h, q, k]

    def score_bias(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return self(q.shape[-2], k.shape[-2]).to(q.dtype)


def _build_t5(spec: AttentionSpec, *, num_buckets: int = 32, max_distance: int = 128,
              share_t5_bias: bool = True, bias_lr_scale: float = 1.0):
    """``bias_lr_scale`` multiplies the learning rate of the bias table in a trainer that
    reads :attr:`~posenc.nn.PositionEncoding.param_lr_scale` (the experiment does): a
    learned bias must grow to several units to act like a recency penalty, and Adam moves
    a parameter by about one learning rate per step."""
    # T5's decoder uses one-sided buckets; its encoder two-sided ones
    module = T5RelativeBias(spec.num_heads, num_buckets=num_buckets, max_distance=max_distance,
                            bidirectional=not spec.causal, shared_across_layers=share_t5_bias)
    module.param_lr_scale = check_float("bias_lr_scale", bias_lr_scale, greater_than=0.0)
    return module


register_position('t5', T5RelativeBias, build=_build_t5)
