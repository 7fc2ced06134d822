"""Longer contexts without new frequencies: remapped relative distances (ReRoPE, Self-Extend).

RoPE's frequencies stay as trained; what changes is the relative distance ``i - j`` the
rotations are computed for, so that no query-key pair is ever rotated by a distance the
model did not see in training:

* :func:`rerope_distance`: ReRoPE (Su, 2023, ``bojone/rerope``) caps the distance at a
  window, ``min(i - j, window)``; leaky ReRoPE lets it grow ``k`` times slower beyond.
* :func:`self_extend_distance`: Self-Extend (Jin et al., 2024, LongLM) keeps exact
  distances inside a neighbour window and floor-divided (grouped) positions beyond it.

Both take and return numpy arrays of whole-number positions or distances (any shape that
broadcasts); the caller feeds the result to RoPE as the distance for each logit.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_float, check_int

__all__ = ["rerope_distance", "self_extend_distance"]


def _distances(name: str, value) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer)
                                 or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be an array of integer positions or distances, "
                        f"got {arr.dtype}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr != np.floor(arr)):
        raise ValueError(f"{name} must hold whole numbers >= 0")
    return arr.astype(np.int64)


def rerope_distance(distance, *, window: int, leak: float | None = None) -> np.ndarray:
    """The relative distance ReRoPE lets RoPE see, for true distances ``i - j >= 0``.

    ReRoPE (Su, 2023, reference code ``bojone/rerope``) runs attention twice: once with the
    ordinary rotations and once with every query rotated to position ``window`` and the keys
    left unrotated (position 0), then keeps the first logits where ``i - j < window`` and the
    second elsewhere. The distance the model sees is therefore ``min(i - j, window)``: never
    a distance it was not trained on. Leaky ReRoPE (``leak=k > 1``) rotates the second pass's
    queries to ``(i + window * (k - 1)) / k`` and keys to ``j / k``, so beyond the window the
    distance grows again, ``k`` times slower: ``window + (i - j - window) / k``.

    ``distance``: integer array (any shape) of true distances ``>= 0``; returns float64
    distances of the same shape. Both passes need the un-rotated keys (the second rotates
    them by a position that depends on the query), so no rotated key can be cached.
    """
    d = _distances("distance", distance).astype(np.float64)
    window = check_int("window", window)
    if leak is None:
        return np.minimum(d, float(window))
    leak = check_float("leak", leak, greater_than=1.0)
    return np.where(d < window, d, window + (d - window) / leak)


def self_extend_distance(query_pos, key_pos, *, group: int, window: int) -> np.ndarray:
    """The relative distance Self-Extend uses (Jin et al., 2024, LongLM ``self_extend_forward``).

    ``query_pos`` ``i`` and ``key_pos`` ``j``: integer position arrays that broadcast
    (``query_pos[:, None]`` and ``key_pos[None, :]`` give a ``[q, k]`` matrix), with
    ``j <= i``. Inside the neighbour window (``i - j < window``) the distance is the true
    ``i - j``. Beyond it both positions are floor-divided by ``group`` ``G`` and the query's
    grouped position is shifted by ``window - window // G`` so that the grouped distances
    start where the neighbour ones stop::

        (i // G + window - window // G) - j // G

    LongLM sets the shift to 0 when every position is below ``window``
    (``_re_group_size_2 = 0 if position_ids.max() < group_size_2``); the grouped logits are
    then never selected (``i - j < window`` holds everywhere), so the distances used are the
    same and this function does not model the switch. Returns an int64 array.
    """
    i = _distances("query_pos", query_pos)
    j = _distances("key_pos", key_pos)
    group = check_int("group", group)
    window = check_int("window", window)
    if np.any(j > i):
        raise ValueError("self_extend_distance needs key_pos <= query_pos (causal attention)")
    grouped = (i // group + window - window // group) - j // group
    return np.where(i - j < window, i - j, grouped)
