"""ALiBi: attention with linear biases (Press, Smith & Lewis, ICLR 2022).

No position embedding at all: head ``h`` adds ``-m_h * (i - j)`` to the score of
query ``i`` for key ``j``. The slopes ``m_h`` are a fixed geometric sequence.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import check_int

__all__ = ["alibi_slopes", "alibi_bias"]


def _power_of_two_slopes(n: int) -> list[float]:
    start = 2.0 ** (-8.0 / n)  # first slope 2^(-8/n), and the ratio is the same number
    return [start ** (h + 1) for h in range(n)]


def alibi_slopes(num_heads: int) -> np.ndarray:
    """Per-head slopes ``m_h``, shape ``[num_heads]``, float64, largest first.

    For ``n`` a power of two: ``2^(-8/n), 2^(-16/n), ..., 2^(-8)`` (8 heads give
    1/2 ... 1/256). Otherwise, with ``c`` the largest power of two below ``n``:
    the ``c`` slopes for ``c`` heads, then every other slope of the ``2c`` sequence
    (the 1st, 3rd, ...) until there are ``n``. This is the official ``get_slopes``
    and BLOOM's ``build_alibi_tensor``.
    """
    num_heads = check_int("num_heads", num_heads)
    c = 2 ** math.floor(math.log2(num_heads))
    slopes = _power_of_two_slopes(c)
    if c < num_heads:
        slopes += _power_of_two_slopes(2 * c)[0::2][: num_heads - c]
    return np.asarray(slopes, dtype=np.float64)


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
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    query_pos = np.arange(key_length - query_length, key_length)  # absolute positions
    distance = query_pos[:, None] - np.arange(key_length)[None, :]  # [q, k], i - j
    slopes = alibi_slopes(num_heads)[:, None, None]  # [h, 1, 1]
    # "+ 0.0" turns the -0.0 on the diagonal into 0.0, so printed tables read cleanly
    if not causal:
        return -slopes * np.abs(distance) + 0.0
    bias = -slopes * distance + 0.0
    return np.where(distance[None] >= 0, bias, -np.inf)
