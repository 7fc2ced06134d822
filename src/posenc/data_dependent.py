"""Position computed from the data: FoX's forget gates, stick-breaking, PaTH (numpy only).

RoPE, ALiBi and T5 put the same position into every sequence: how key ``j`` is seen from
query ``i`` depends on ``i - j`` alone. The three methods here make it depend on the tokens
*between* them, so order comes out of the content (float64 throughout; the torch methods
:mod:`posenc.nn.fox` and :mod:`posenc.nn.stick_breaking` are tested equal to these).

* FoX, the Forgetting Transformer (Lin et al., ICLR 2025): each token ``l`` has a forget
  gate ``f_l = sigmoid(w . x_l + b)`` per head, and the logit of key ``j`` at query ``i``
  gains ``sum_{l=j+1..i} log f_l`` (:func:`forgetting_attention_bias`). A constant gate
  ``f = exp(-m)`` is ALiBi with slope ``m``; ``f = 1`` is no position at all (NoPE).
* Stick-breaking attention (Tan et al., ICLR 2025): no softmax. Going back from the query,
  key ``j`` takes the share ``sigmoid(z_ij)`` of what the nearer keys left, so its weight is
  ``sigmoid(z_ij) prod_{j<k<=i} (1 - sigmoid(z_ik))`` (:func:`stick_breaking_weights`): a
  nearer key that takes much leaves little for the ones behind it.
* PaTH (Yang et al., 2025): RoPE's rotation ``R_{i-j}`` replaced by a product of
  Householder-like matrices ``H_t = I - beta_t w_t w_t^T`` of the tokens between, with
  ``w_t`` (unit) and ``beta_t`` in ``[0, 2]`` computed from each token
  (:func:`householder`, :func:`path_transforms`, :func:`path_logits`).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_bool, check_int

__all__ = [
    "forgetting_attention_bias",
    "stick_breaking_weights",
    "stick_breaking_order",
    "householder",
    "path_transforms",
    "path_logits",
]


def _float_array(name: str, value, *, min_ndim: int) -> np.ndarray:
    """``value`` as a float64 array of at least ``min_ndim`` dimensions, or ``ValueError``."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be an array of real numbers, got {value!r}") from error
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape "
                         f"{arr.shape}")
    return arr


def _check_causal(causal) -> bool:
    check_bool("causal", causal)
    return causal


def forgetting_attention_bias(log_f, *, causal: bool = True) -> np.ndarray:
    """FoX's bias on the logits: ``log_f`` ``[..., n]`` -> ``[..., n, n]``, float64.

    ``log_f[..., l]`` is ``log f_l``, the log of token ``l``'s forget gate (``<= 0``;
    ``f_l = sigmoid(w . x_l + b)`` in the paper, so ``log f_l = logsigmoid(...)``). Query
    ``i`` sees key ``j <= i`` with ``D_ij = sum_{l=j+1..i} log f_l`` (0 on the diagonal:
    a token does not forget itself), computed as ``c_i - c_j`` with ``c`` the cumulative
    sum, as the authors' code does (``log_lambda``); ``-inf`` above the diagonal when
    ``causal``. ``causal=False`` gives the course's bidirectional extension, the sum over
    the tokens between either way, ``-|c_i - c_j|`` (as ALiBi's ``-m |i - j|``).
    """
    log_f = _float_array("log_f", log_f, min_ndim=1)
    if not np.all(np.isfinite(log_f)) or np.any(log_f > 0):
        raise ValueError("log_f must hold logs of forget gates in (0, 1], i.e. finite values "
                         "<= 0 (logsigmoid of the gate's logit)")
    causal = _check_causal(causal)
    c = np.cumsum(log_f, axis=-1)  # c_i = sum_{l<=i} log f_l
    between = c[..., :, None] - c[..., None, :]  # [..., i, j]: sum_{l=j+1..i} for j <= i
    n = log_f.shape[-1]
    below = np.tril(np.ones((n, n), dtype=bool))
    if causal:
        return np.where(below, between, -np.inf)
    return np.where(below, between, np.swapaxes(between, -1, -2))


def stick_breaking_order(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The order in which a query's keys break the stick: nearest first, and of two keys
    at the same distance the earlier one first (``i, i-1, i+1, i-2, i+2, ...``).

    Returns ``(order, rank)``, each ``[n, n]`` int64: ``order[i, r]`` is the key query ``i``
    visits ``r``-th, ``rank[i, j]`` the visit number of key ``j`` (the inverse permutation).
    Under a causal mask only ``j <= i`` take part and this is the paper's order
    (``i, i-1, ..., 0``); the keys after the query matter only in a bidirectional layer,
    the course's extension.
    """
    n = check_int("n", n)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    distance = np.abs(i - j)
    key = 2 * distance - (j < i)  # i -> 0, i-d -> 2d-1, i+d -> 2d
    order = np.argsort(key, axis=-1, kind="stable")
    rank = np.argsort(order, axis=-1, kind="stable")
    return order, rank


def stick_breaking_weights(logits, *, causal: bool = True) -> np.ndarray:
    """Stick-breaking attention weights: logits ``z`` ``[..., n, n]`` -> ``[..., n, n]``.

    ``A_ij = sigmoid(z_ij) prod_{j<k<=i} (1 - sigmoid(z_ik))`` for ``j <= i`` and 0 above the
    diagonal (``causal``): the query's own key breaks the stick first, then ``i-1``, and
    so on back (Tan et al. 2025; the authors' ``attend_current=True``; their default,
    ``attend_current=False``, leaves the query's own key out, which is these weights with
    ``z_ii = -inf``). A logit of ``-inf`` is a masked key: weight 0, and it breaks nothing.
    Each row sums to ``1 - prod_{k<=i} (1 - sigmoid(z_ik)) <= 1``; the rest of the stick is
    left to the caller (the authors give it to the query's own value).

    Computed in log space, as the authors' reference does: ``log A_ij = logsigmoid(z_ij) +
    sum_{j<k<=i} logsigmoid(-z_ik)``, so a long product of factors near 1 neither
    underflows nor loses its digits. ``causal=False``: every key takes part, in the order
    of :func:`stick_breaking_order` (the course's bidirectional extension).
    """
    z = _float_array("logits", logits, min_ndim=2)
    n = z.shape[-1]
    if z.shape[-2] != n:
        raise ValueError(f"logits must be square in the last two axes [..., n, n] (one "
                         f"query per key), got shape {z.shape}")
    if np.isnan(z).any() or np.isposinf(z).any():
        raise ValueError("logits must be real numbers or -inf (a masked key), not nan or +inf")
    if _check_causal(causal):
        z = np.where(np.tril(np.ones((n, n), dtype=bool)), z, -np.inf)
    log_take = -np.logaddexp(0.0, -z)  # log sigmoid(z): the share key j takes
    log_leave = -np.logaddexp(0.0, z)  # log (1 - sigmoid(z)): what it leaves (0 if masked)
    order, rank = stick_breaking_order(n)
    # sum of log_leave over the keys visited before key j: an exclusive cumulative sum in
    # the visiting order, read back at j's rank
    visited = np.take_along_axis(log_leave, np.broadcast_to(order, z.shape), axis=-1)
    before = np.cumsum(visited, axis=-1) - visited
    before = np.take_along_axis(before, np.broadcast_to(rank, z.shape), axis=-1)
    return np.exp(log_take + before)


def householder(w, beta) -> np.ndarray:
    """``H = I - beta w w^T``: ``w`` ``[..., d]`` (unit length), ``beta`` ``[...]`` ->
    ``[..., d, d]``, float64.

    Symmetric; eigenvalue ``1 - beta`` along ``w`` and 1 across it, so for ``beta`` in
    ``[0, 2]`` it never lengthens a vector, and ``beta = 2`` is the reflection through the
    plane orthogonal to ``w`` (orthogonal, ``H^2 = I``). PaTH computes ``w`` from each token
    (a projection, a short convolution, L2-normalised) and ``beta = 2 sigmoid(.)``
    (fla-org/flash-linear-attention, ``fla/layers/path_attn.py``).
    """
    w = _float_array("w", w, min_ndim=1)
    beta = _float_array("beta", beta, min_ndim=0)
    if not np.allclose(np.linalg.norm(w, axis=-1), 1.0, atol=1e-9):
        raise ValueError("w must have unit length along its last axis (PaTH L2-normalises it)")
    if beta.shape != w.shape[:-1]:
        raise ValueError(f"beta must have shape {w.shape[:-1]} (w's without the last axis), "
                         f"got {beta.shape}")
    if not np.all((beta >= 0) & (beta <= 2)):
        raise ValueError("beta must lie in [0, 2] (PaTH's 2 sigmoid(.))")
    eye = np.eye(w.shape[-1])
    return eye - beta[..., None, None] * w[..., :, None] * w[..., None, :]


def path_transforms(w, beta) -> np.ndarray:
    """PaTH's cumulative transforms: ``w`` ``[..., n, d]``, ``beta`` ``[..., n]`` ->
    ``P`` ``[..., n, n, d, d]``, float64.

    ``P[i, j] = H_i H_{i-1} ... H_{j+1}`` (the product over ``s = j+1 .. i``, the newest
    factor on the left) for ``j <= i``, the identity on the diagonal, zeros above it (a
    causal query never uses them). The order is the authors' decoding step, which turns
    every cached key by the new token's ``H_t`` before appending the new key
    (``rank_one_update`` in ``fla/layers/path_attn.py``). Telescopes:
    ``P[i, j] = P[i, l] P[l, j]`` for ``j <= l <= i``. With one ``w`` and ``beta`` for every
    token (no data in them) ``P[i, j] = I - (1 - (1 - beta)^(i-j)) w w^T`` depends on
    ``i - j`` alone, a relative encoding; PaTH's point is that they come from the tokens.
    A demonstration for small ``n`` and ``d``: ``n^2`` matrix products, no chunking (the
    authors' kernels use the UT transform to stay at attention's cost).
    """
    w = _float_array("w", w, min_ndim=2)
    h = householder(w, beta)  # [..., n, d, d]
    n, d = w.shape[-2], w.shape[-1]
    out = np.zeros((*w.shape[:-2], n, n, d, d))
    eye = np.eye(d)
    for j in range(n):  # one column at a time: P[i, j] = H_i P[i-1, j]
        out[..., j, j, :, :] = eye
        for i in range(j + 1, n):
            out[..., i, j, :, :] = h[..., i, :, :] @ out[..., i - 1, j, :, :]
    return out


def path_logits(q, k, w, beta) -> np.ndarray:
    """PaTH's attention logits ``q_i^T P[i, j] k_j``: ``q``, ``k``, ``w`` ``[..., n, d]``,
    ``beta`` ``[..., n]`` -> ``[..., n, n]`` (unscaled: divide by ``sqrt(d)`` as attention
    does), ``-inf`` above the diagonal. ``beta = 0`` gives plain ``q_i . k_j`` (no
    position); RoPE is the special case of fixed rotations, which a product of two
    reflections is (:func:`path_transforms`)."""
    q = _float_array("q", q, min_ndim=2)
    k = _float_array("k", k, min_ndim=2)
    w = _float_array("w", w, min_ndim=2)
    if not q.shape == k.shape == w.shape:
        raise ValueError(f"q, k and w must have one shape [..., n, d], got {q.shape}, "
                         f"{k.shape}, {w.shape}")
    p = path_transforms(w, beta)  # [..., i, j, d, d]
    logits = np.einsum("...id,...ijde,...je->...ij", q, p, k)
    n = q.shape[-2]
    return np.where(np.tril(np.ones((n, n), dtype=bool)), logits, -np.inf)
