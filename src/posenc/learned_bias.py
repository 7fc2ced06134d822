"""Learned and contextual score biases: KERPLE, FIRE and CoPE, one formula each.

Every function here works on numpy arrays (float64, for figures and tests) and on
torch tensors alike (the modules in :mod:`posenc.nn.kerple`, :mod:`posenc.nn.fire` and
:mod:`posenc.nn.cope` call them with parameters, so gradients flow). Distances are
``i - j`` for query ``i`` and key ``j``.

* KERPLE (Chi et al., NeurIPS 2022): a conditionally positive definite kernel of the
  distance, negated, is the bias. Power: ``-r1 |i-j|^r2`` with ``r1 > 0``,
  ``0 < r2 <= 2``; ALiBi is the power kernel with ``r2 = 1`` and ``r1`` its slope.
  Logarithmic: ``-r1 log(1 + r2 |i-j|)`` with ``r1, r2 > 0``. The official code
  (``ParallelKerplePower`` / ``ParallelKerpleLog`` in gpt-neox) clamps both at 0.01
  and ``r2`` of the power kernel at 2.
* FIRE (Li et al., ICLR 2024): ``f(psi(i-j) / psi(max(L, i)))`` with
  ``psi(x) = log(c x + 1)`` and ``f`` a small MLP; the reference code takes
  ``|c x|`` and ``|L|`` (so both stay usable whatever sign training gives them) and
  adds ``eps = 1e-6`` to the denominator.
* CoPE (Golovneva et al., 2024): gates ``g_ij = sigmoid(q_i . k_j / sqrt(d))``; the
  position of key ``j`` seen from query ``i`` is ``p_ij = sum_{t=j}^{i} g_it``; the bias
  is ``q_i . e[p_ij] / sqrt(d)`` with ``e`` interpolated linearly between integer
  positions (the official ``ContextPosSelfAttn``, whose logits are divided by
  ``sqrt(d)`` after the position term is added).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_float, check_int

__all__ = [
    "KERPLE_EPS",
    "kerple_power",
    "kerple_log",
    "fire_psi",
    "fire_normalized_distance",
    "causal_distances",
    "cope_positions",
    "cope_interpolate",
]

#: The smallest value KERPLE's parameters take (the official code's clamp).
KERPLE_EPS = 1e-2


def _is_tensor(x) -> bool:
    return hasattr(x, "log1p") and hasattr(x, "detach")


def _log1p(x):
    return x.log1p() if _is_tensor(x) else np.log1p(x)


def _abs(x):
    return x.abs() if _is_tensor(x) else np.abs(x)


def _maximum(a, b):
    if _is_tensor(a):
        import torch  # only reached with tensors, so numpy callers need no torch

        return torch.maximum(a, torch.as_tensor(b, dtype=a.dtype, device=a.device))
    return np.maximum(a, b)


def causal_distances(query_length: int, key_length: int | None = None, *,
                     causal: bool = True) -> np.ndarray:
    """``i - j`` per (query, key) pair, float64 ``[q, k]``.

    Causal: clipped at 0 above the diagonal (those keys are masked anyway; the official
    KERPLE and FIRE codes use the same lower-triangular matrix). Otherwise ``|i - j|``.
    With ``key_length > query_length`` the queries are the last ``query_length`` keys (a
    KV cache), as in :func:`posenc.relative.relative_positions`.
    """
    query_length = check_int("query_length", query_length)
    key_length = query_length if key_length is None else check_int("key_length", key_length)
    if key_length < query_length:
        raise ValueError(f"key_length ({key_length}) must be >= query_length ({query_length})")
    i = np.arange(key_length - query_length, key_length, dtype=np.float64)[:, None]
    j = np.arange(key_length, dtype=np.float64)[None, :]
    return np.maximum(i - j, 0.0) if causal else np.abs(i - j)


def kerple_power(distance, r1, r2):
    """KERPLE's power-kernel bias ``-r1 |d|^r2`` (ALiBi when ``r2 = 1``, ``r1`` = slope)."""
    return -r1 * _abs(distance) ** r2


def kerple_log(distance, r1, r2):
    """KERPLE's logarithmic-kernel bias ``-r1 log(1 + r2 |d|)``."""
    return -r1 * _log1p(r2 * _abs(distance))


def fire_psi(x, c):
    """FIRE's monotone transform ``psi(x) = log(|c x| + 1)``: amplifies small distances."""
    return _log1p(_abs(c * x))


def fire_normalized_distance(distance, query_position, c=0.1, threshold=512.0,
                             eps: float = 1e-6):
    """``psi(i - j) / (psi(max(|L|, i)) + eps)``: FIRE's progressively normalised distance.

    ``distance`` is ``i - j`` (``[q, k]``), ``query_position`` is ``i`` (broadcastable,
    e.g. ``[q, 1]``). Past the threshold ``L`` the value depends on ``(i - j) / i``
    only through ``psi``; below it the normaliser is the constant ``psi(L)``. In
    ``[0, 1]`` for ``0 <= i - j <= i``.
    """
    if not _is_tensor(c):
        check_float("c", c, greater_than=0.0)
    if not _is_tensor(threshold):
        check_float("threshold", threshold, at_least=0.0)
    normaliser = _maximum(query_position, _abs(threshold))
    return fire_psi(distance, c) / (fire_psi(normaliser, c) + eps)


def cope_positions(gates, *, causal: bool = True):
    """CoPE's positions from gates ``[..., q, k]``: ``p_ij = sum_{t=j}^{i} g_it``.

    Causal: gates of future keys (``j > i``) are zeroed first, and ``p_ij`` is the sum
    of the gates from key ``j`` up to the query (a reversed cumulative sum, as in the
    official code), so key ``i`` itself counts ``g_ii``. Not causal: the sum runs over
    the keys between ``i`` and ``j`` on either side. With every gate 1, ``p_ij =
    |i - j| + 1``: plain relative positions, shifted by one. Square ``q = k`` only.
    """
    n = gates.shape[-1]
    if gates.shape[-2] != n:
        raise ValueError(f"gates must be square in the last two dims, got {tuple(gates.shape)}")
    if _is_tensor(gates):
        import torch

        if causal:
            future = torch.ones(n, n, dtype=torch.bool, device=gates.device).triu(1)
            return gates.masked_fill(future, 0.0).flip(-1).cumsum(-1).flip(-1)
        total = gates.cumsum(-1)  # total[i, t] = sum_{s <= t} g_is
        i = torch.arange(n, device=gates.device)
        low = torch.minimum(i[:, None], i[None, :]).expand(gates.shape)
        high = torch.maximum(i[:, None], i[None, :]).expand(gates.shape)
        return total.gather(-1, high) - total.gather(-1, low) + gates.gather(-1, low)
    gates = np.asarray(gates, dtype=np.float64)
    if causal:
        gates = np.where(np.triu(np.ones((n, n), dtype=bool), 1), 0.0, gates)
        return np.flip(np.cumsum(np.flip(gates, -1), -1), -1)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    low, high = np.minimum(i, j), np.maximum(i, j)
    total = np.cumsum(gates, -1)
    pick = lambda a, idx: np.take_along_axis(a, np.broadcast_to(idx, a.shape), -1)  # noqa: E731
    return pick(total, high) - pick(total, low) + pick(gates, low)


def cope_interpolate(logits, positions):
    """Linear interpolation of per-position logits at fractional positions.

    ``logits[..., q, P]`` are ``q_i . e[p]`` at integer ``p = 0..P-1``; ``positions``
    ``[..., q, k]`` lie in ``[0, P-1]``. Returns ``[..., q, k]``:
    ``(1 - w) logits[floor p] + w logits[ceil p]`` with ``w = p - floor p``.
    """
    if _is_tensor(logits):
        floor = positions.floor()
        w = positions - floor
        lo = logits.gather(-1, floor.long())
        hi = logits.gather(-1, positions.ceil().long())
        return lo * (1 - w) + hi * w
    positions = np.asarray(positions, dtype=np.float64)
    floor = np.floor(positions)
    w = positions - floor
    lo = np.take_along_axis(logits, floor.astype(np.int64), -1)
    hi = np.take_along_axis(logits, np.ceil(positions).astype(np.int64), -1)
    return lo * (1 - w) + hi * w
