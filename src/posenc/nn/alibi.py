"""ALiBi's fixed linear bias on the scores (Press, Smith & Lewis, ICLR 2022): the
``score_bias`` hook, from :func:`posenc.alibi.alibi_bias`."""

from __future__ import annotations

import torch

from .._validation import check_bool, check_int
from ..alibi import alibi_bias
from .positions import AttentionSpec, PositionEncoding, register_position

__all__ = ["ALiBiBias", "bias_cost"]


def bias_cost(b: int, h: int, n: int, d: int) -> dict[str, int]:
    """A ``[heads, L, L]`` bias added to the scores: ``b h L^2`` additions, ``h L^2`` numbers."""
    return {"matmul_flops": 0, "elementwise_flops": b * h * n * n, "memory": h * n * n}


class ALiBiBias(PositionEncoding):
    """ALiBi's fixed bias, from :func:`posenc.alibi.alibi_bias`.

    Shape: ``forward(query_length, key_length=None)`` returns ``[num_heads, q, k]``,
    float32, with ``-inf`` above the diagonal when ``causal``. No parameters. The
    square bias for the longest sequence seen is cached in a non-persistent buffer,
    so it follows ``.to()``; a shorter sequence takes its top-left corner.
    """

    def __init__(self, num_heads: int, *, causal: bool = True):
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads)
        check_bool("causal", causal)
        self.causal = causal
        self.register_buffer("_bias", torch.empty(self.num_heads, 0, 0), persistent=False)

    def _square(self, length: int) -> torch.Tensor:
        if length > self._bias.shape[-1]:
            bias = torch.from_numpy(alibi_bias(self.num_heads, length, causal=self.causal))
            self._bias = bias.to(self._bias.device, torch.float32)
        return self._bias[:, :length, :length]

    def forward(self, query_length: int, key_length: int | None = None) -> torch.Tensor:
        query_length = check_int("query_length", query_length)
        if key_length is None or key_length == query_length:
            return self._square(query_length)
        # queries are the last query_length of the keys' positions (a KV cache)
        bias = alibi_bias(self.num_heads, query_length, key_length, causal=self.causal)
        return torch.from_numpy(bias).to(self._bias.device, torch.float32)

    def score_bias(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return self(q.shape[-2], k.shape[-2]).to(q.device, q.dtype)


def _build_alibi(spec: AttentionSpec):
    return ALiBiBias(spec.num_heads, causal=spec.causal)


register_position("alibi", ALiBiBias, build=_build_alibi)
