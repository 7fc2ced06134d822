"""ALiBi: attention with linear biases (Press, Smith & Lewis, ICLR 2022).

No position embedding at all: head ``h`` adds ``-m_h * (i - j)`` to the score of
query ``i`` for key ``j``. The slopes ``m_h`` are a fixed geometric sequence.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import check_bool, check_float, check_int

__all__ = ["alibi_slopes", "mpt_alibi_slopes", "alibi_bias", "bias_only_attention",
           "attention_span"]


def _power_of_two_slopes(n: int) -> list[float]:
    start = 2.0 ** (-8.0 / n)  # first slope 2^(-8/n), and the ratio is the same number
    return [start ** (h + 1) for h in range(n)]


def alibi_slopes(num_heads: int) -> np.ndarray:
    """Per-head slopes ``m_h``, shape ``[num_heads]``, float64, in the official order.

    For ``n`` a power of two: ``2^(-8/n), 2^(-16/n), ..., 2^(-8)``, largest first (8
    heads give 1/2 ... 1/256). Otherwise, with ``c`` the largest power of two below
    ``n``: the ``c`` slopes for ``c`` heads (decreasing), then every other slope of the
    ``2c`` sequence (the 1st, 3rd, ...; decreasing again, and larger than the last of the
    first group) until there are ``n``. So the order is *not* sorted then: 6 heads give
    1/4, 1/16, 1/64, 1/256, 1/2, 1/8. This is the official ``get_slopes`` and BLOOM's
    ``build_alibi_tensor``.
    """
    num_heads = check_int("num_heads", num_heads)
    c = 2 ** math.floor(math.log2(num_heads))
    slopes = _power_of_two_slopes(c)
    if c < num_heads:
        slopes += _power_of_two_slopes(2 * c)[0::2][: num_heads - c]
    return np.asarray(slopes, dtype=np.float64)


def mpt_alibi_slopes(num_heads: int, alibi_bias_max: float = 8.0) -> np.ndarray:
    """MPT's per-head slopes, shape ``[num_heads]``, float64 (``build_alibi_bias`` in
    MosaicML's and Hugging Face's MPT code).

    With ``N`` the power of two at or above ``n``: ``2^(-alibi_bias_max * k / N)`` for
    ``k = 1 .. N``; for ``n < N`` the odd-numbered ones (2nd, 4th, ...) first, then the
    others, the first ``n`` kept. With ``alibi_bias_max = 8`` this is :func:`alibi_slopes`
    for every ``n`` (a second formulation of the official order, tested equal).
    """
    num_heads = check_int("num_heads", num_heads)
    if isinstance(alibi_bias_max, bool) or not isinstance(alibi_bias_max, int | float) \
            or not math.isfinite(alibi_bias_max) or alibi_bias_max <= 0:
        raise ValueError(f"alibi_bias_max must be a finite number > 0, got {alibi_bias_max!r}")
    n = 2 ** math.ceil(math.log2(num_heads))
    slopes = 2.0 ** (-float(alibi_bias_max) * np.arange(1, n + 1, dtype=np.float64) / n)
    if n != num_heads:
        slopes = np.concatenate([slopes[1::2], slopes[::2]])[:num_heads]
    return slopes


def alibi_bias(num_heads: int, query_length: int, key_length: int | None = None, *,
               causal: bool = True) -> np.ndarray:
    """The additive score bias, shape ``[num_heads, query_length, key_length]``, float64.

    Query ``i`` sits at absolute position ``key_length - query_length + i`` (so with
    cached keys the last query is the newest token). ``causal=True`` gives
    ``-m * (i - j)`` for ``j <= i`` and ``-inf`` above the diagonal (the mask is part
    of the bias). ``causal=False`` gives the symmetric ``-m * |i - j|`` used for
    encoders. (The official code adds ``+m * j`` instead of ``-m * (i - j)``: the
    two differ by a constant per row, equal after softmax under a causal mask.)
    """
    query_length = check_int("query_length", query_length)
    key_length = query_length if key_length is None else check_int("key_length", key_length)
    if key_length < query_length:
        raise ValueError(
            f"key_length must be >= query_length (keys include every query), "
            f"got key_length={key_length} < query_length={query_length}"
        )
    check_bool("causal", causal)
    query_pos = np.arange(key_length - query_length, key_length)  # absolute positions
    distance = query_pos[:, None] - np.arange(key_length)[None, :]  # [q, k], i - j
    slopes = alibi_slopes(num_heads)[:, None, None]  # [h, 1, 1]
    # "+ 0.0" turns the -0.0 on the diagonal into 0.0, so printed tables read cleanly
    if not causal:
        return -slopes * np.abs(distance) + 0.0
    bias = -slopes * distance + 0.0
    return np.where(distance[None] >= 0, bias, -np.inf)


# --- helpers for the ALiBi chapter: what a head attends to from its bias alone ---

def bias_only_attention(slopes, key_length: int) -> np.ndarray:
    """Attention weights a causal linear-bias head gives its keys when every ``q . k`` is equal.

    For a query with ``key_length`` keys behind it (itself included), the key at
    distance ``r = 0 .. key_length-1`` gets ``softmax_r(-m * r)``: the bias alone
    decides. ``slopes`` may be any real numbers (ALiBi's are positive; a negative
    slope favours *far* keys). Shape: ``slopes`` ``[h]`` -> ``[h, key_length]``,
    column ``r`` is distance ``r``, each row sums to 1.
    """
    m = np.asarray(slopes, dtype=np.float64)
    if m.ndim != 1 or m.size == 0 or not np.all(np.isfinite(m)):
        raise ValueError(f"slopes must be a non-empty 1-D array of finite numbers, got {slopes!r}")
    key_length = check_int("key_length", key_length)
    logits = -m[:, None] * np.arange(key_length)[None, :]  # [h, L]
    logits -= logits.max(axis=-1, keepdims=True)  # stable softmax
    weights = np.exp(logits)
    return weights / weights.sum(axis=-1, keepdims=True)


def attention_span(weights, mass: float = 0.9) -> np.ndarray:
    """How many of the nearest keys together hold at least ``mass`` of the attention.

    ``weights`` are ordered by distance (as :func:`bias_only_attention` returns them)
    and sum to 1 along the last axis. Shape ``[..., L]`` -> ``[...]``, int.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim < 1 or w.shape[-1] == 0 or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite and >= 0, with keys on the last axis")
    if not np.allclose(w.sum(axis=-1), 1.0):
        raise ValueError("weights must sum to 1 along the last axis")
    mass = check_float("mass", mass, greater_than=0.0)
    if mass > 1:
        raise ValueError(f"mass must be in (0, 1], got {mass}")
    # a tiny tolerance so that mass=1 counts keys up to round-off, not past it
    return (np.cumsum(w, axis=-1) < mass - 1e-12).sum(axis=-1) + 1
