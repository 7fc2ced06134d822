"""MLA's decoupled RoPE key, and why shifting its cache touches only part of each key.

DeepSeek-V2/V3's multi-head latent attention (DeepSeek-AI, 2024, arXiv:2405.04434) caches a
compressed latent ``c`` per token, from which the keys' content part ``k_nope`` is
recomputed, plus one small key ``k_rope`` shared by all heads, the only part that RoPE
rotates (RoPE cannot be folded into the latent's up-projection). A head's key is
``[k_nope | R(m) k_rope]`` and its query ``[q_nope | R(n) q_rope]``, so a score is a
content term plus a RoPE term (:func:`decoupled_scores`).

A shift therefore re-rotates the cached ``k_rope`` only (``R(m + delta) = R(delta) R(m)``);
``c`` and ``k_nope`` hold no position. A generic context-shift kernel that rotates whole
keys would rotate the content part too: llama.cpp disabled context shifts for DeepSeek-V2
in July 2024, and since November 2024 each of its caches says whether it can shift
(``can_shift``). Numpy, float64.
"""

from __future__ import annotations

import numpy as np

from ..rope import apply_rope

__all__ = ["decoupled_keys", "decoupled_scores"]


def _check(name: str, x) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 2 or not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"{name} must be a float array [tokens, dim], got shape {x.shape}")
    return x


def decoupled_keys(k_nope, k_rope, positions, *, base: float = 10000.0) -> np.ndarray:
    """The keys as the cache serves them: ``[k_nope | R(m) k_rope]``, ``[n, d_nope + d_rope]``.

    ``k_nope`` ``[n, d_nope]`` (from the latent, no position), ``k_rope`` ``[n, d_rope]``
    (even ``d_rope``), ``positions`` ``[n]``; interleaved layout, as DeepSeek's reference code.
    """
    k_nope, k_rope = _check("k_nope", k_nope), _check("k_rope", k_rope)
    if len(k_nope) != len(k_rope):
        raise ValueError(f"k_nope and k_rope must have as many tokens, got {len(k_nope)} and "
                         f"{len(k_rope)}")
    return np.concatenate([k_nope, apply_rope(k_rope, positions, base=base)], axis=-1)


def decoupled_scores(q_nope, q_rope, keys, q_positions, *, base: float = 10000.0) -> np.ndarray:
    """Scores ``[q, n]`` of queries ``[q_nope | R(n) q_rope]`` against cached ``keys`` (as
    :func:`decoupled_keys` gives them): ``q_nope . k_nope + R(n) q_rope . R(m) k_rope``."""
    q_nope, q_rope, keys = _check("q_nope", q_nope), _check("q_rope", q_rope), _check("keys", keys)
    if keys.shape[1] != q_nope.shape[1] + q_rope.shape[1]:
        raise ValueError(f"keys must have d_nope + d_rope = {q_nope.shape[1] + q_rope.shape[1]} "
                         f"features, got {keys.shape[1]}")
    queries = np.concatenate([q_nope, apply_rope(q_rope, q_positions, base=base)], axis=-1)
    return queries @ keys.T
