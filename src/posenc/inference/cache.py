"""What an engine may do to a KV cache whose keys are already rotated: shift and evict.

RoPE rotations compose, ``R(m + delta) = R(delta) R(m)``: a key cached at position ``m``
moves to ``m + delta`` by one more rotation by ``delta``, without the token or the layer's
input (:func:`rerotate_keys`). That is how llama.cpp's context shift works
(``llama_memory_seq_add``, named ``llama_kv_cache_seq_add`` until 2025: new positions in
the cell metadata, then a "K-shift" that applies RoPE by the difference). An ALiBi layer's
keys hold no position: its bias depends on ``i - j`` only, so only the position ids (the
mask) change and nothing is re-rotated.

StreamingLLM (Xiao et al., ICLR 2024) keeps a few first tokens ("sinks") and a window of
the most recent ones (:func:`streaming_keep`), and gives the kept entries their positions
*in the cache*, ``0 .. n-1``, not in the text (:func:`evict` with ``reposition=True``), so
the model never sees a distance longer than the cache.
"""

from __future__ import annotations

import numpy as np
import torch

from .._validation import check_bool, check_choice, check_int
from ..nn.rope_kernel import apply_rope
from ..rope import LAYOUTS
from .forward import KVCache, _check_model

__all__ = ["rerotate_keys", "streaming_keep", "evict"]


def rerotate_keys(keys: torch.Tensor, delta, *, frequencies, layout: str) -> torch.Tensor:
    """Keys rotated at positions ``m``, moved to ``m + delta``: one more RoPE rotation by
    ``delta`` (``R(m + delta) = R(delta) R(m)``).

    ``keys`` ``[..., n, head_dim]``; ``delta`` a number or an integer tensor/array
    broadcasting to ``keys.shape[:-1]`` (e.g. ``[batch, 1, n]``), any sign; ``frequencies``
    ``[head_dim // 2]`` as the keys were rotated with; ``layout`` theirs. Same shape out.
    """
    layout = check_choice("layout", layout, LAYOUTS)
    if not isinstance(keys, torch.Tensor) or keys.ndim < 2:
        raise ValueError(f"keys must be a tensor [..., n, head_dim], got {type(keys).__name__}")
    delta = torch.as_tensor(delta)
    if delta.is_floating_point() or delta.is_complex():
        raise TypeError(f"delta must be integers (a position shift), got {delta.dtype}")
    if delta.ndim == 0:
        delta = delta.expand(keys.shape[-2])
    return apply_rope(keys, delta, layout=layout, frequencies=frequencies)


def streaming_keep(length: int, *, sinks: int, window: int) -> np.ndarray:
    """StreamingLLM's kept entries of a cache of ``length``: the first ``sinks`` and the last
    ``window``, in order (all of them while ``length <= sinks + window``). int64
    ``[min(length, sinks + window)]``."""
    length = check_int("length", length)
    sinks = check_int("sinks", sinks, minimum=0)
    window = check_int("window", window)
    if length <= sinks + window:
        return np.arange(length)
    return np.r_[np.arange(sinks), np.arange(length - window, length)]


def evict(model, cache: KVCache, keep, *, reposition: bool = True) -> KVCache:
    """The cache with only the entries ``keep`` (indices into it, increasing, the same for
    every row).

    ``reposition=True`` (StreamingLLM, llama.cpp's context shift) gives the kept entries
    positions ``0 .. len(keep)-1`` and re-rotates each RoPE layer's keys by the change
    (:func:`rerotate_keys`, with the block's frequencies and layout); ALiBi and NoPE layers
    keep their keys, their position is only the ids. ``reposition=False`` keeps the old
    positions (a gap where the evicted entries were).
    """
    _check_model(model)
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a KVCache, got {type(cache).__name__}")
    check_bool("reposition", reposition)
    keep = torch.as_tensor(np.asarray(keep))
    if keep.ndim != 1 or keep.is_floating_point() or keep.numel() == 0:
        raise ValueError("keep must be a non-empty 1-D array of integer indices")
    if keep.min() < 0 or keep.max() >= cache.length or torch.any(keep[1:] <= keep[:-1]):
        raise ValueError(f"keep must be increasing indices in [0, {cache.length}), "
                         f"got {keep.tolist()}")
    old = cache.positions[:, keep]  # [batch, n]
    new = torch.arange(len(keep)).expand_as(old) if reposition else old
    keys = []
    for block, k in zip(model.blocks, cache.keys, strict=True):
        k = k[:, :, keep]
        if reposition and block.attn.position == "rope":
            rotary = block.attn.encoding
            k = rerotate_keys(k, (new - old)[:, None, :], frequencies=rotary.frequencies,
                              layout=rotary.layout)
        keys.append(k)
    values = tuple(v[:, :, keep] for v in cache.values)
    return KVCache(tuple(keys), values, new.clone())
