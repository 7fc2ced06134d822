"""Learned attention sinks: one extra logit per head that joins the softmax and holds no value.

GPT-OSS (OpenAI, 2025) gives every head a learned scalar ``sink[h]``. Its eager attention
in Hugging Face transformers (``modeling_gpt_oss.eager_attention_forward``) appends it as
one more column of the scores, takes the softmax over ``k + 1`` columns and drops the last
column: the weights on the real keys then sum to ``1 - p_sink < 1``, so a head can attend
to "nothing" instead of dumping its mass on the first tokens (the attention sinks that
StreamingLLM found in models without one; Xiao et al., ICLR 2024).

Two equal ways to compute it:

* :func:`softmax_with_sinks`: the weights themselves, as the eager path does;
* :func:`sink_key_value`: the fast path for ``scaled_dot_product_attention``: one extra key
  ``k = 0`` and value ``v = 0`` at the end, whose column of the additive float mask holds
  ``sink[h]`` (score ``q . 0 + sink[h] = sink[h]``, contribution ``p_sink * 0 = 0``).
"""

from __future__ import annotations

import torch

__all__ = ["softmax_with_sinks", "sink_key_value"]


def _check_sinks(sinks: torch.Tensor, heads: int) -> None:
    if not isinstance(sinks, torch.Tensor) or sinks.shape != (heads,):
        shape = tuple(sinks.shape) if isinstance(sinks, torch.Tensor) else type(sinks).__name__
        raise ValueError(f"sinks must be a tensor [heads] with heads = {heads}, got {shape}")


def softmax_with_sinks(scores: torch.Tensor, sinks: torch.Tensor) -> torch.Tensor:
    """Attention weights with a per-head sink logit (GPT-OSS's eager attention).

    ``scores``: ``[batch, heads, q, k]`` scaled (and masked: ``-inf`` where not allowed)
    logits; ``sinks``: ``[heads]``. Returns ``[batch, heads, q, k]`` weights; each row sums
    to ``1 - p_sink``, where ``p_sink = e^sink / (e^sink + sum_j e^score_j)``. Masked
    entries stay exactly 0. The row maximum (sink included) is subtracted before the
    softmax, as GPT-OSS does, so large logits do not overflow in low precision.
    """
    if not isinstance(scores, torch.Tensor) or scores.ndim != 4:
        raise ValueError(f"scores must be a tensor [batch, heads, q, k], got "
                         f"{getattr(scores, 'shape', type(scores).__name__)}")
    batch, heads, q, _ = scores.shape
    _check_sinks(sinks, heads)
    sink_col = sinks.to(scores.dtype).reshape(1, heads, 1, 1).expand(batch, heads, q, 1)
    combined = torch.cat([scores, sink_col], dim=-1)  # [b, h, q, k + 1]
    combined = combined - combined.amax(dim=-1, keepdim=True)
    probs = combined.softmax(dim=-1)
    return probs[..., :-1]


def sink_key_value(k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor,
                   sinks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Append a sink as one zero key/value and a bias column, for SDPA.

    ``k``, ``v``: ``[batch, heads, k, head_dim]``; ``bias``: additive float mask
    broadcastable to ``[batch, heads, q, k]`` (``0`` allowed, ``-inf`` not; a ``[q, k]``
    mask is fine); ``sinks``: ``[heads]``. Returns ``k'``, ``v'`` ``[batch, heads, k + 1,
    head_dim]`` and ``bias'`` ``[batch or 1, heads, q, k + 1]`` so that
    ``scaled_dot_product_attention(q, k', v', attn_mask=bias')`` equals
    ``softmax_with_sinks(q k^T / sqrt(d) + bias, sinks) @ v``. The score of the zero key is
    0 whatever the scale, so its bias column is the sink itself.
    """
    heads = k.shape[1]
    _check_sinks(sinks, heads)
    zero = k.new_zeros(k.shape[0], heads, 1, k.shape[-1])
    k = torch.cat([k, zero], dim=-2)
    v = torch.cat([v, zero.to(v.dtype)], dim=-2)
    while bias.ndim < 4:
        bias = bias.unsqueeze(0)
    bias = bias.expand(bias.shape[0], heads, *bias.shape[2:])
    sink_col = sinks.to(bias.dtype).reshape(1, heads, 1, 1).expand(bias.shape[0], heads,
                                                                  bias.shape[2], 1)
    return k, v, torch.cat([bias, sink_col], dim=-1)
