"""FoX, the Forgetting Transformer (Lin et al., ICLR 2025): a forget gate per token and head.

The ``score_bias`` hook, read from the layer's input: head ``h`` computes a forget gate
``f_l = sigmoid(w_h . x_l + b_h)`` for every token and adds ``sum_{l=j+1..i} log f_l`` to
the logit of key ``j`` at query ``i`` (:func:`posenc.data_dependent.forgetting_attention_bias`):
ALiBi with a slope that each token sets for itself. No other position (FoX as the paper's
"FoX (LLaMA)": no RoPE).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .._validation import check_bool, check_int
from .positions import AttentionSpec, PositionEncoding, register_position

__all__ = ["ForgettingAttentionBias"]


class ForgettingAttentionBias(PositionEncoding):
    """FoX's bias ``[batch, heads, q, k]`` from the layer's input ``x`` ``[batch, seq, d_model]``.

    The gate is one ``nn.Linear(d_model, num_heads)`` with PyTorch's default
    initialisation, as the authors' ``fgate_proj`` (``fgate_type="full"``,
    zhixuan-lin/forgetting-transformer); so at the start ``f`` is near ``1/2`` and every
    head forgets at about ``log 2`` per token, which training then sets token by token.
    ``log f = logsigmoid(.)`` and its cumulative sum ``c`` are computed in at least float32
    (the authors keep ``log_fgate`` in float32 too); the bias ``c_i - c_j`` is returned in
    the queries' dtype. Causal layers get ``-inf`` above the diagonal; bidirectional ones
    ``-|c_i - c_j|``, the sum over the tokens between either way (the course's extension,
    as ALiBi's symmetric bias).
    """

    def __init__(self, d_model: int, num_heads: int, *, causal: bool = True):
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads)
        check_bool("causal", causal)
        self.causal = causal
        self.gate = nn.Linear(check_int("d_model", d_model), self.num_heads)

    def log_forget(self, x: torch.Tensor) -> torch.Tensor:
        """``log f``: ``[batch, seq, d_model]`` -> ``[batch, heads, seq]``, at least float32."""
        logits = self.gate(x.to(self.gate.weight.dtype))  # [b, seq, h]
        dtype = torch.promote_types(logits.dtype, torch.float32)
        return F.logsigmoid(logits.to(dtype)).transpose(-1, -2)

    def bias_from_log_forget(self, log_f: torch.Tensor) -> torch.Tensor:
        """``[..., n]`` -> ``[..., n, n]``: the sums of ``log f`` between query and key, in
        ``log_f``'s dtype (the torch form of ``forgetting_attention_bias``)."""
        c = log_f.cumsum(dim=-1)  # c_i = sum_{l<=i} log f_l
        between = c[..., :, None] - c[..., None, :]  # sum_{l=j+1..i} log f_l for j <= i
        n = log_f.shape[-1]
        below = torch.ones(n, n, dtype=torch.bool, device=log_f.device).tril()
        if self.causal:
            return between.masked_fill(~below, float("-inf"))
        return torch.where(below, between, between.transpose(-1, -2))

    def score_bias(self, q: torch.Tensor, k: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        if not q.shape[-2] == k.shape[-2] == x.shape[-2]:
            raise ValueError(f"FoX needs one query and one key per input token, got "
                             f"{q.shape[-2]} queries, {k.shape[-2]} keys, {x.shape[-2]} tokens")
        return self.bias_from_log_forget(self.log_forget(x)).to(q.dtype)


def _fox_cost(b: int, h: int, n: int, d: int) -> dict[str, int]:
    """The gate ``[b, L, d_model] -> [b, L, h]`` (``2 b L d h`` FLOPs), its log-sigmoid and
    cumulative sum (``2 b h L``), the differences and adding them (``2 b h L^2``); memory:
    the ``[h, L]`` gates and the ``[h, L, L]`` bias per sequence."""
    return {"matmul_flops": 2 * b * n * d * h, "elementwise_flops": 2 * b * h * n * (n + 1),
            "memory": h * n * (n + 1)}


def _build_fox(spec: AttentionSpec):
    return ForgettingAttentionBias(spec.d_model, spec.num_heads, causal=spec.causal)


register_position("fox", ForgettingAttentionBias, build=_build_fox)
