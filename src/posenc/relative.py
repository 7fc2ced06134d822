"""Relative position indices: Shaw et al. (2018) clipping and T5's log buckets.

Both map a pair (query ``i``, key ``j``) to a small integer, which then looks up
something learned: a vector added to the key (Shaw) or a scalar bias per head (T5).
Both use ``relative_position = key - query`` (``j - i``).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_base, check_bool, check_int, to_numpy
from .sinusoidal import sinusoidal_frequencies

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
    the rest are logarithmically wider bins reaching ``max_distance``; every distance
    from ``max_distance`` on shares the last bucket (which, rounded down, can start
    well before ``max_distance``: at 91 for T5's encoder defaults). Unidirectional
    (decoder) buckets only look back: keys after the query land in bucket 0. The
    log is taken in float32, as T5 and Hugging Face do, so bucket edges agree
    exactly. Shape: that of ``relative_position``, int64.
    """
    num_buckets = check_int("num_buckets", num_buckets, minimum=2)
    max_distance = check_int("max_distance", max_distance)
    check_bool("bidirectional", bidirectional)
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


# --- helpers for the relative-position chapter -----------------------------------------

__all__ += ["shaw_attention_loop", "t5_bucket_boundaries", "transformer_xl_score_terms"]


def _as_float64(name: str, a) -> np.ndarray:
    """A numpy float64 copy of an array or a (detached) torch tensor."""
    arr = np.asarray(to_numpy(a))
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating)
                                   or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be a real array, got dtype {arr.dtype}")
    return arr.astype(np.float64)


def shaw_attention_loop(q, k, v, rel_keys, rel_values=None):
    """One head of Shaw et al.'s attention, written as plain loops (slow: for checking).

    Straight from the paper's equations, with ``k_max = (len(rel_keys) - 1) // 2``::

        a^K_ij = rel_keys[clip(j - i, -k_max, k_max) + k_max]     (a^V_ij likewise)
        e_ij   = q_i . (k_j + a^K_ij) / sqrt(d)
        p_ij   = softmax over j of e_ij
        z_i    = sum_j p_ij (v_j + a^V_ij)

    Queries sit at the last ``n_q`` of the ``n_k`` positions, as in
    :func:`relative_positions`. Accepts numpy arrays or torch tensors; computes
    in float64 numpy. Shapes: ``q`` ``[n_q, d]``, ``k`` and ``v`` ``[n_k, d]``,
    ``rel_keys`` and ``rel_values`` ``[2 k_max + 1, d]``. Returns ``(z, p)`` with
    ``z`` ``[n_q, d]`` and ``p`` ``[n_q, n_k]``.
    """
    q, k, v = _as_float64("q", q), _as_float64("k", k), _as_float64("v", v)
    rel_keys = _as_float64("rel_keys", rel_keys)
    rel_values = None if rel_values is None else _as_float64("rel_values", rel_values)
    if q.ndim != 2 or k.ndim != 2 or v.shape != k.shape or q.shape[1] != k.shape[1]:
        raise ValueError(f"need q [n_q, d], k and v [n_k, d]; got q {q.shape}, k {k.shape}, "
                         f"v {v.shape}")
    n_q, d = q.shape
    n_k = k.shape[0]
    if n_k < n_q:
        raise ValueError(f"need at least as many keys as queries, got {n_k} < {n_q}")
    for name, table in (("rel_keys", rel_keys), ("rel_values", rel_values)):
        if table is not None and (table.ndim != 2 or table.shape[1] != d
                                  or table.shape[0] % 2 == 0):
            raise ValueError(f"{name} must have shape [2k+1, d={d}] (an odd number of rows), "
                             f"got {table.shape}")
    k_max = (rel_keys.shape[0] - 1) // 2
    if rel_values is not None and rel_values.shape != rel_keys.shape:
        raise ValueError("rel_values must have the same shape as rel_keys")
    z = np.zeros((n_q, d))
    p = np.zeros((n_q, n_k))
    for row in range(n_q):
        i = n_k - n_q + row  # absolute position of this query
        e = np.empty(n_k)
        for j in range(n_k):
            r = max(-k_max, min(k_max, j - i)) + k_max  # clipped, shifted distance
            e[j] = q[row] @ (k[j] + rel_keys[r]) / np.sqrt(d)
        p[row] = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
        for j in range(n_k):
            r = max(-k_max, min(k_max, j - i)) + k_max
            extra = 0.0 if rel_values is None else rel_values[r]
            z[row] += p[row, j] * (v[j] + extra)
    return z, p


def t5_bucket_boundaries(*, num_buckets: int = 32, max_distance: int = 128,
                         bidirectional: bool = True):
    """Where each T5 bucket starts, for keys *before* the query (distance ``i - j >= 0``).

    Returns ``(buckets, first_distance)``, two int64 arrays of equal length: bucket
    ``buckets[n]`` holds the distances ``first_distance[n] .. first_distance[n+1] - 1``;
    the last bucket holds every distance from its start on. Buckets that no
    integer distance reaches (possible when ``max_distance`` is small) are absent.
    With ``bidirectional=True`` keys *after* the query at distance ``d >= 1`` use
    bucket ``num_buckets // 2 + (its looking-back bucket)``, the mirror image.
    """
    max_distance = check_int("max_distance", max_distance)
    distance = np.arange(max_distance + 1)
    bucket = t5_relative_bucket(-distance, bidirectional=bidirectional,
                                num_buckets=num_buckets, max_distance=max_distance)
    starts = np.flatnonzero(np.r_[True, np.diff(bucket) != 0])
    return bucket[starts], distance[starts]


def _sinusoid_at(positions: np.ndarray, d_model: int, base: float) -> np.ndarray:
    """Sinusoidal encoding (interleaved sin/cos) at any real positions, ``[..., d_model]``."""
    angles = positions[..., None] * sinusoidal_frequencies(d_model, base)  # [..., ceil(d/2)]
    out = np.empty(positions.shape + (d_model,))
    out[..., 0::2] = np.sin(angles)
    out[..., 1::2] = np.cos(angles[..., : d_model // 2])
    return out


def transformer_xl_score_terms(content, w_q, w_k_content, w_k_position, u, v, *,
                               base: float = 10000.0) -> dict[str, np.ndarray]:
    """The four terms of Transformer-XL's relative attention score (Dai et al., 2019, eq. 2).

    With ``q_i = E_i W_q``, ``k_j = E_j W_kE`` (row vectors) and ``R_{i-j}`` the
    sinusoidal encoding of the distance ``i - j`` (fixed, not learned)::

        (a) content-content      q_i . k_j
        (b) content-position     q_i . (R_{i-j} W_kR)
        (c) global content bias  u . k_j
        (d) global position bias v . (R_{i-j} W_kR)

    and the score is their sum. No absolute position enters anywhere.

    Shapes: ``content`` ``[L, d_model]``; ``w_q``, ``w_k_content``, ``w_k_position``
    ``[d_model, d_head]``; ``u``, ``v`` ``[d_head]``. Returns ``{"a", "b", "c", "d"}``,
    each ``[L, L]`` (query ``i`` by key ``j``; apply a causal mask yourself).
    ``R`` uses the course's interleaved sin/cos layout (Transformer-XL's code
    concatenates ``[sin | cos]``; the learned ``W_kR`` absorbs the permutation).
    """
    base = check_base(base)
    e = _as_float64("content", content)
    if e.ndim != 2:
        raise ValueError(f"content must have shape [L, d_model], got {e.shape}")
    length, d_model = e.shape
    mats = {}
    for name, w in (("w_q", w_q), ("w_k_content", w_k_content), ("w_k_position", w_k_position)):
        w = _as_float64(name, w)
        if w.ndim != 2 or w.shape[0] != d_model:
            raise ValueError(f"{name} must have shape [d_model={d_model}, d_head], got {w.shape}")
        mats[name] = w
    d_head = mats["w_q"].shape[1]
    if mats["w_k_content"].shape[1] != d_head or mats["w_k_position"].shape[1] != d_head:
        raise ValueError("w_q, w_k_content and w_k_position must share d_head (their columns)")
    u, v = _as_float64("u", u), _as_float64("v", v)
    if u.shape != (d_head,) or v.shape != (d_head,):
        raise ValueError(f"u and v must have shape [d_head={d_head}], got {u.shape}, {v.shape}")
    q = e @ mats["w_q"]  # [L, d_head]
    k = e @ mats["w_k_content"]  # [L, d_head]
    i, j = np.indices((length, length))
    r = _sinusoid_at((i - j).astype(np.float64), d_model, base) @ mats["w_k_position"]  # [L,L,dh]
    return {
        "a": q @ k.T,
        "b": np.einsum("id,ijd->ij", q, r),
        "c": np.broadcast_to(k @ u, (length, length)).copy(),
        "d": r @ v,
    }
