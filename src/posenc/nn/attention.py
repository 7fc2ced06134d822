"""One multi-head self-attention whose ``position=`` argument picks the encoding.

Where each method injects position:

* ``"none"``       -- nowhere: attention is then permutation-equivariant.
* ``"sinusoidal"``, ``"learned"`` -- added to the input before the q/k/v projections
  (in a full model this happens once, at the embeddings; here the layer does it so
  one class can show every method).
* ``"rope"``       -- queries and keys are rotated after projection.
* ``"alibi"``, ``"t5"`` -- a bias added to the scores, passed to
  ``scaled_dot_product_attention`` as ``attn_mask``.
* ``"shaw"``       -- learned vectors added to keys (and values) per relative
  distance; the extra terms need the weights, so this path computes attention itself.

Scores are scaled by ``1/sqrt(head_dim)`` for every method (T5 itself drops the
scale and folds it into its initialisation).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .._validation import check_base, check_choice, check_int
from .absolute import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from .bias import ALiBiBias, T5RelativeBias
from .rotary import RotaryEmbedding
from .shaw import ShawRelativePosition

__all__ = ["POSITION_METHODS", "MultiHeadSelfAttention"]

POSITION_METHODS = ("none", "sinusoidal", "learned", "rope", "alibi", "shaw", "t5")


class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention with a switchable position method.

    Shape: ``forward(x)`` maps ``[batch, seq, d_model]`` to ``[batch, seq, d_model]``.

    Options by method: ``max_positions`` and ``interpolate`` (learned), ``base``
    (sinusoidal, rope), ``rope_layout`` and ``rope_frequencies`` (rope),
    ``num_buckets`` and ``max_distance`` (t5), ``shaw_max_distance`` (shaw).
    """

    def __init__(self, d_model: int, num_heads: int, position: str = "none", *,
                 causal: bool = False, base: float = 10000.0, max_positions: int = 512,
                 interpolate: str = "none", rope_layout: str = "interleaved",
                 rope_frequencies=None, num_buckets: int = 32, max_distance: int = 128,
                 shaw_max_distance: int = 16, bias: bool = True):
        super().__init__()
        self.d_model = check_int("d_model", d_model)
        self.num_heads = check_int("num_heads", num_heads)
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
        self.head_dim = self.d_model // self.num_heads
        self.position = check_choice("position", position, POSITION_METHODS)
        if not isinstance(causal, bool):
            raise TypeError(f"causal must be True or False, got {causal!r}")
        self.causal = causal
        check_base(base)

        self.qkv = nn.Linear(self.d_model, 3 * self.d_model, bias=bias)
        self.out = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.encoding = None
        if position == "sinusoidal":
            self.encoding = SinusoidalPositionalEncoding(self.d_model, base)
        elif position == "learned":
            self.encoding = LearnedPositionalEmbedding(max_positions, self.d_model,
                                                       interpolate=interpolate)
        elif position == "rope":
            self.encoding = RotaryEmbedding(self.head_dim, base, layout=rope_layout,
                                            frequencies=rope_frequencies)
        elif position == "alibi":
            self.encoding = ALiBiBias(self.num_heads, causal=causal)
        elif position == "t5":
            # T5's decoder uses one-sided buckets; its encoder two-sided ones
            self.encoding = T5RelativeBias(self.num_heads, num_buckets=num_buckets,
                                           max_distance=max_distance, bidirectional=not causal)
        elif position == "shaw":
            self.encoding = ShawRelativePosition(self.head_dim, shaw_max_distance)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(
                f"x must have shape [batch, seq, d_model={self.d_model}], got {tuple(x.shape)}"
            )
        batch, seq, _ = x.shape
        if self.position in ("sinusoidal", "learned"):
            x = x + self.encoding(seq).to(x.dtype)  # [seq, d] broadcasts over batch
        qkv = self.qkv(x).view(batch, seq, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each [batch, heads, seq, head_dim]
        if self.position == "rope":
            q, k = self.encoding(q), self.encoding(k)

        if self.position == "shaw":
            y = self._shaw_attention(q, k, v)
        else:
            mask = None
            if self.position in ("alibi", "t5"):
                mask = self.encoding(seq).to(q.dtype)  # [heads, seq, seq]
                if self.position == "t5" and self.causal:
                    mask = mask + _causal_mask(seq, q.device, q.dtype)
            y = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, is_causal=self.causal and mask is None)
        y = y.transpose(1, 2).reshape(batch, seq, self.d_model)  # [batch, seq, d_model]
        return self.out(y)

    def _shaw_attention(self, q, k, v):
        seq = q.shape[-2]
        a_k, a_v = self.encoding(seq)  # [seq, seq, head_dim] each
        scores = q @ k.transpose(-1, -2)  # [b, h, q, k]
        scores = scores + torch.einsum("bhqd,qkd->bhqk", q, a_k.to(q.dtype))
        scores = scores / math.sqrt(self.head_dim)
        if self.causal:
            scores = scores + _causal_mask(seq, q.device, q.dtype)
        weights = scores.softmax(dim=-1)
        y = weights @ v  # [b, h, q, head_dim]
        if a_v is not None:
            y = y + torch.einsum("bhqk,qkd->bhqd", weights, a_v.to(q.dtype))
        return y


def _causal_mask(seq: int, device, dtype) -> torch.Tensor:
    """``0`` on and below the diagonal, ``-inf`` above: ``[seq, seq]``."""
    return torch.full((seq, seq), float("-inf"), device=device, dtype=dtype).triu(1)
