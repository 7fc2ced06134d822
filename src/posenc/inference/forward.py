"""A :class:`~posenc.model.TinyLM` run as a serving engine runs it: explicit position ids, an
explicit mask, and a KV cache that holds the keys *already rotated*.

``model(tokens)`` gives token ``t`` position ``t`` and a causal mask, and keeps nothing.
:func:`run` takes the same model's weights (its embeddings, LayerNorms, projections, MLPs
and head: no copy, no second model) and lets the caller say

* ``positions`` (int64 ``[batch, seq]``): each token's position id (left padding, packing,
  a suffix after a cached prefix, a shift);
* ``allowed`` (bool ``[batch, seq, keys]`` or ``[seq, keys]``): which keys each query may
  read, keys being the cached ones then the new ones (default: causal in cache order, as
  Hugging Face's ``cache_position`` mask);
* ``cache`` (:class:`KVCache`): the keys and values of earlier calls, as an engine stores
  them, RoPE already applied; the call appends the new ones and returns the longer cache.

With none of them, ``run(model, tokens).logits`` equals ``model(tokens)`` (tested): the same
formulas, RoPE from :func:`posenc.nn.rope_kernel.apply_rope` with each block's own
frequencies, layout and attention factor, ALiBi's slopes from :func:`posenc.alibi.alibi_slopes`
on the distance between position ids. The attention weights are computed explicitly so
they can be returned (``return_weights=True``).

Supported: blocks with ``rope``, ``alibi`` or no position (``none``, NoPE blocks), full
causal reach, no sinks or temperature, no absolute table (a ``ValueError`` names what is
not). Run it in float64 (``model.double()``) and an identity holds to ~1e-15.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from .._validation import check_frequencies
from ..alibi import alibi_slopes
from ..nn.rope_kernel import apply_rope

__all__ = ["KVCache", "RunOutput", "run", "SUPPORTED_POSITIONS"]

#: The blocks' position methods :func:`run` knows how to place at explicit positions.
SUPPORTED_POSITIONS = ("rope", "alibi", "none")


class KVCache(NamedTuple):
    """What a serving engine keeps between calls, per layer.

    ``keys[l]``, ``values[l]``: ``[batch, heads, n, head_dim]``, the keys of a RoPE layer
    stored rotated by their positions (as vLLM, llama.cpp and Hugging Face store them);
    ``positions``: int64 ``[batch, n]``, the position id each cached entry was given.
    Immutable: :func:`run` and :func:`posenc.inference.evict` return new caches.
    """

    keys: tuple
    values: tuple
    positions: torch.Tensor

    @property
    def length(self) -> int:
        """Entries per row, ``n``."""
        return int(self.positions.shape[1])

    def next_positions(self) -> torch.Tensor:
        """int64 ``[batch]``: each row's *last* cached position + 1, where a plain
        continuation starts.

        This is Hugging Face's rule (``GenerationMixin._update_model_kwargs_for_generation``:
        ``position_ids[..., -1:] + 1``; tested against it). The last entry, not the largest:
        a left-padded row's padding may hold any id (transformers 4.x gave it 1, so a
        one-token prompt, ids ``1 .. 1 0``, would continue at 2 from the largest instead of
        1). Entries are in cache order, so after an eviction the last kept one is the most
        recent; a right-padded row has no real last entry, as in Hugging Face's ``generate``.
        """
        return self.positions[:, -1] + 1


class RunOutput(NamedTuple):
    """``logits`` ``[batch, seq, vocab]``; ``cache``: the cache with this call's keys and
    values appended; ``weights``: per layer the attention ``[batch, heads, seq, keys]``
    (``None`` unless asked for)."""

    logits: torch.Tensor
    cache: KVCache
    weights: tuple | None


def _check_model(model) -> None:
    from ..model import TinyLM  # the model module imports posenc.nn; keep this module light

    if not isinstance(model, TinyLM):
        raise TypeError(f"model must be a posenc.model.TinyLM, got {type(model).__name__}")
    if model.position_embedding is not None:
        raise ValueError(f"run places positions inside attention; position "
                         f"{model.config.position!r} is an absolute table added at the "
                         f"embeddings (supported: {', '.join(SUPPORTED_POSITIONS)})")
    for k, block in enumerate(model.blocks):
        attn = block.attn
        if attn is None:  # a recurrent layer's state is not a KV cache
            raise ValueError(f"block {k} is a recurrent layer; run supports attention layers "
                             "only")
        if attn.position not in SUPPORTED_POSITIONS:
            raise ValueError(f"block {k} uses position {attn.position!r}; run supports "
                             f"{', '.join(SUPPORTED_POSITIONS)}")
        if (attn.window or attn.chunk or attn.sinks is not None or attn.temperature
                or getattr(attn, "gate", None) is not None):
            raise ValueError(f"block {k} has a window, chunk, sinks, temperature or output "
                             "gate; run "
                             "supports plain causal layers")


def _int_tensor(name: str, value, shape: tuple[int, ...]) -> torch.Tensor:
    if not isinstance(value, torch.Tensor) or value.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"{name} must be an integer tensor of shape {shape}, got "
                        f"{type(value).__name__} {getattr(value, 'dtype', '')}")
    value = value.long()
    if value.ndim == 1:
        value = value.expand(shape[0], -1)
    if tuple(value.shape) != shape:
        raise ValueError(f"{name} must have shape {shape} (or [{shape[1]}]), got "
                         f"{tuple(value.shape)}")
    return value


def _check_query_scale(query_scale, batch: int, seq: int) -> np.ndarray | None:
    if query_scale is None:
        return None
    scale = np.asarray(query_scale, dtype=np.float64)
    if scale.shape not in ((seq,), (batch, seq)) or not np.all(np.isfinite(scale)) \
            or np.any(scale <= 0):
        raise ValueError(f"query_scale must be finite numbers > 0 of shape ({seq},) or "
                         f"({batch}, {seq}), got shape {scale.shape}")
    return np.broadcast_to(scale, (batch, seq))


def run(model, tokens: torch.Tensor, *, positions: torch.Tensor | None = None,
        allowed: torch.Tensor | None = None, cache: KVCache | None = None,
        frequencies=None, attention_factor: float | None = None, query_scale=None,
        return_weights: bool = False) -> RunOutput:
    """Run ``model`` on ``tokens`` (int64 ``[batch, seq]``) with explicit positions, mask and
    cache (module docstring).

    ``positions`` defaults to continuing the cache (``cache.next_positions()``, or 0) one by
    one. ``allowed`` covers ``cache.length + seq`` keys. ``frequencies`` (``[head_dim // 2]``)
    replaces every RoPE block's frequencies for *this call's* queries and keys (dynamic NTK
    computes new ones at each length; the cached keys keep theirs); ``attention_factor``
    replaces the blocks' own (YaRN's; ``1.0`` drops it). ``query_scale`` (``[seq]`` or
    ``[batch, seq]``) multiplies every layer's queries, as Qwen's log-n or Llama 4's
    temperature do.
    """
    _check_model(model)
    if not isinstance(tokens, torch.Tensor) or tokens.ndim != 2:
        raise ValueError(f"tokens must be an integer tensor [batch, seq], got "
                         f"{type(tokens).__name__}")
    batch, seq = tokens.shape
    past = 0 if cache is None else cache.length
    if cache is not None and (not isinstance(cache, KVCache) or cache.positions.shape[0] != batch
                              or len(cache.keys) != len(model.blocks)):
        raise ValueError(f"cache must be a KVCache from a run of this model with batch {batch}")
    if positions is None:
        start = torch.zeros(batch, dtype=torch.long) if cache is None else cache.next_positions()
        positions = start[:, None] + torch.arange(seq)[None, :]
    positions = _int_tensor("positions", positions, (batch, seq))
    if torch.any(positions < 0):
        raise ValueError("positions must be >= 0")
    total = past + seq
    if allowed is None:  # causal in cache order (slot j <= slot i)
        slot = torch.arange(total)
        allowed = slot[None, :] <= slot[past:, None]
    if not isinstance(allowed, torch.Tensor) or allowed.dtype != torch.bool:
        raise TypeError("allowed must be a bool tensor (True = may attend)")
    if allowed.shape[-2:] != (seq, total) or allowed.ndim not in (2, 3) or (
            allowed.ndim == 3 and allowed.shape[0] != batch):
        raise ValueError(f"allowed must have shape [{batch}, {seq}, {total}] or [{seq}, "
                         f"{total}] (queries, cached + new keys), got {tuple(allowed.shape)}")
    allowed = allowed.expand(batch, seq, total)[:, None]  # [batch, 1, seq, total]
    scale = _check_query_scale(query_scale, batch, seq)
    key_positions = positions if cache is None else torch.cat([cache.positions, positions], 1)

    x = model.token_embedding(tokens)  # [batch, seq, d_model]
    keys, values, weights = [], [], []
    for k, block in enumerate(model.blocks):
        attn = block.attn
        h = block.ln_attn(x)
        qkv = attn.qkv(h).view(batch, seq, 3, attn.num_heads, attn.head_dim)
        q, key, value = qkv.permute(2, 0, 3, 1, 4)  # each [batch, heads, seq, head_dim]
        bias = None
        if attn.position == "rope":
            rotary = attn.encoding
            freqs = rotary.frequencies if frequencies is None else check_frequencies(
                frequencies, attn.head_dim // 2)
            factor = rotary.attention_factor if attention_factor is None else attention_factor
            ids = positions[:, None, :]  # [batch, 1, seq]: the same for every head
            q = apply_rope(q, ids, layout=rotary.layout, frequencies=freqs) * factor
            key = apply_rope(key, ids, layout=rotary.layout, frequencies=freqs) * factor
        elif attn.position == "alibi":  # -m_h (i - j) on the position ids, not the slots
            slopes = torch.from_numpy(alibi_slopes(attn.num_heads)).to(q.dtype)
            distance = (positions[:, :, None] - key_positions[:, None, :]).to(q.dtype)
            bias = -slopes[None, :, None, None] * distance[:, None]  # [b, h, seq, total]
        if scale is not None:
            q = q * torch.from_numpy(np.ascontiguousarray(scale)).to(q.dtype)[:, None, :, None]
        if cache is not None:  # the cached keys are used as stored: rotated when cached
            key = torch.cat([cache.keys[k], key], dim=2)
            value = torch.cat([cache.values[k], value], dim=2)
        keys.append(key)
        values.append(value)
        scores = q @ key.transpose(-1, -2) / math.sqrt(attn.head_dim)  # [b, h, seq, total]
        if bias is not None:
            scores = scores + bias
        w = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)
        weights.append(w)
        y = (w @ value).transpose(1, 2).reshape(batch, seq, attn.d_model)
        x = x + attn.out(y)
        x = x + block.mlp(block.ln_mlp(x))
    logits = model.head(model.ln_final(x))
    new_cache = KVCache(tuple(keys), tuple(values), key_positions)
    return RunOutput(logits, new_cache, tuple(weights) if return_weights else None)

