"""Relative position indices: Shaw et al. (2018) clipping and T5's log buckets.

Both map a pair (query ``i``, key ``j``) to a small integer, which then looks up
something learned: a vector added to the key (Shaw) or a scalar bias per head (T5).
Both use ``relative_position = key - query`` (``j - i``).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_int

__all__ = ["relative_positions", "shaw_relative_indices", "t5_relative_bucket"]


def relative_positions(query_length: int, key_length: int | None = None) -> np.ndarray:
    """``key - query`` for every pair, shape ``[query_length, key_length]``, int64.

    Queries sit at the *last* ``query_length`` positions (as with cached keys).
    """
    query_length = check_int("query_length", query_length)
    key_length = query_length if key_length is None else check_int("key_length", key_length)
    if key_length < query_length:
        raise ValueError(f"key_length must be >= query_length, got {key_length} < {query_length}")
    query_pos = np.arange(key_length - query_length, key_length)
    return np.arange(key_length)[None, :] - query_pos[:, None]  # [q, k]


def shaw_relative_indices(query_length: int, max_distance: int,
                          key_length: int | None = None) -> np.ndarray:
    """Shaw et al.'s index ``clip(j - i, -k, k) + k`` into a table of ``2k + 1`` vectors.

    Shape ``[query_length, key_length]``, values in ``0 .. 2 * max_distance``. Beyond
    distance ``k = max_distance`` every pair shares the edge vector, which is what lets
    the model run on sequences longer than it was trained on.
    """
    k = check_int("max_distance", max_distance)
    return np.clip(relative_positions(query_length, key_length), -k, k) + k


def t5_relative_bucket(relative_position, *, bidirectional: bool = True, num_buckets: int = 32,
                       max_distance: int = 128) -> np.ndarray:
    """T5's bucket for each ``relative_position = key - query`` (Raffel et al., 2020).

    Same numbers as Hugging Face ``T5Attention._relative_position_bucket``:
    bidirectional halves the buckets by sign (keys after the query get the upper
    half); of each half, the first ``n/2`` buckets are exact distances 0 .. n/2-1 and
    the rest grow logarithmically up to ``max_distance``, past which everything
    shares the last bucket. Unidirectional (decoder) buckets only look back: keys
    after the query land in bucket 0. The log is taken in float32, as T5 and
    Hugging Face do, so bucket edges agree exactly. Shape: that of
    ``relative_position``, int64.
    """
    num_buckets = check_int("num_buckets", num_buckets, minimum=2)
    max_distance = check_int("max_distance", max_distance)
    if not isinstance(bidirectional, bool):
        raise TypeError(f"bidirectional must be True or False, got {bidirectional!r}")
    rel = np.asarray(relative_position)
    if not np.issubdtype(rel.dtype, np.integer):
        raise TypeError(f"relative_position must be integers, got dtype {rel.dtype}")
    rel = rel.astype(np.int64)
    buckets = np.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        buckets += (rel > 0).astype(np.int64) * num_buckets
        distance = np.abs(rel)
    else:
        distance = -np.minimum(rel, 0)
    max_exact = num_buckets // 2
    if max_exact < 1 or max_distance <= max_exact:
        raise ValueError(
            f"need num_buckets >= {4 if bidirectional else 2} and max_distance > "
            f"num_buckets // {4 if bidirectional else 2}; got num_buckets="
            f"{num_buckets * (2 if bidirectional else 1)}, max_distance={max_distance}"
        )
    # log bucket for large distances, float32 as in T5 / Hugging Face
    safe = np.maximum(distance, 1).astype(np.float32)
    log_ratio = np.log(safe / np.float32(max_exact)) / np.float32(np.log(max_distance / max_exact))
    large = max_exact + (log_ratio * np.float32(num_buckets - max_exact)).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return buckets + np.where(distance < max_exact, distance, large)
