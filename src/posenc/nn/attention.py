"""One multi-head self-attention whose ``position=`` argument picks the encoding.

The position method is a module from the registry (:mod:`posenc.nn.positions`, which
documents the protocol); this layer calls its four hooks in order and names no method:
``embed`` (added to the input before the q/k/v projections; in a full model that
happens once, at the embeddings, and the layer does it here so one class can show
every method), ``rotate`` (queries and keys after projection), ``score_bias`` (added to
the scaled scores; with no value term it goes to ``scaled_dot_product_attention`` as
``attn_mask``) and ``value_term`` (added to the output; the weights are then computed
explicitly).

Scores are scaled by ``1/sqrt(head_dim)`` for every method (T5 itself drops the
scale and folds it into its initialisation).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .._validation import check_int
from .positions import (
    POSITION_METHODS,
    AttentionSpec,
    build_position,
    check_score_bias,
    check_value_term,
    get_position,
)

__all__ = ["POSITION_METHODS", "MultiHeadSelfAttention"]


class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention with a switchable position method.

    Shape: ``forward(x)`` maps ``[batch, seq, d_model]`` to ``[batch, seq, d_model]``.

    ``position`` names a registered method (:data:`posenc.nn.POSITIONS`); the other
    keywords are the methods' options, e.g. ``max_positions`` and ``interpolate``
    (learned), ``base`` (sinusoidal, rope), ``rope_layout`` and ``rope_frequencies``
    (rope), ``num_buckets`` and ``max_distance`` (t5), ``shaw_max_distance`` (shaw).
    Options of another method are ignored, so one set of keywords fits every method.
    ``in_model=True`` when a whole model builds the layer (see :class:`AttentionSpec`).
    """

    def __init__(self, d_model: int, num_heads: int, position: str = "none", *,
                 causal: bool = False, bias: bool = True, in_model: bool = False, **options):
        super().__init__()
        self.d_model = check_int("d_model", d_model)
        self.num_heads = check_int("num_heads", num_heads)
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
        self.head_dim = self.d_model // self.num_heads
        self.position = get_position(position).name
        if not isinstance(causal, bool):
            raise TypeError(f"causal must be True or False, got {causal!r}")
        self.causal = causal

        self.qkv = nn.Linear(self.d_model, 3 * self.d_model, bias=bias)
        self.out = nn.Linear(self.d_model, self.d_model, bias=bias)
        spec = AttentionSpec(self.d_model, self.num_heads, causal=causal, in_model=in_model)
        self.encoding = build_position(position, spec, **options)
        self._hooks = frozenset(self.encoding.hooks())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(
                f"x must have shape [batch, seq, d_model={self.d_model}], got {tuple(x.shape)}"
            )
        batch, seq, _ = x.shape
        encoding, hooks = self.encoding, self._hooks
        if "embed" in hooks:
            x = encoding.embed(x)
        qkv = self.qkv(x).view(batch, seq, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each [batch, heads, seq, head_dim]
        if "rotate" in hooks:
            q, k = encoding.rotate(q, k)
        bias = encoding.score_bias(q, k) if "score_bias" in hooks else None
        check_score_bias(self.position, bias, q, k)  # shapes only: a clear error, not torch's
        if bias is not None and self.causal:
            bias = bias + _causal_mask(seq, q.device, q.dtype)
        if "value_term" in hooks:
            y = self._explicit_attention(q, k, v, bias)
        else:
            y = F.scaled_dot_product_attention(
                q, k, v, attn_mask=bias, is_causal=self.causal and bias is None)
        y = y.transpose(1, 2).reshape(batch, seq, self.d_model)  # [batch, seq, d_model]
        return self.out(y)

    def _explicit_attention(self, q, k, v, bias):
        """Attention with the weights in hand, for a method that adds a value term."""
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)  # [b, h, q, k]
        if bias is not None:
            scores = scores + bias
        elif self.causal:
            scores = scores + _causal_mask(q.shape[-2], q.device, q.dtype)
        weights = scores.softmax(dim=-1)
        y = weights @ v  # [b, h, q, head_dim]
        extra = self.encoding.value_term(weights, v)
        check_value_term(self.position, extra, weights, v)
        return y if extra is None else y + extra


def _causal_mask(seq: int, device, dtype) -> torch.Tensor:
    """``0`` on and below the diagonal, ``-inf`` above: ``[seq, seq]``."""
    return torch.full((seq, seq), float("-inf"), device=device, dtype=dtype).triu(1)
