"""Order from recurrence: a short causal convolution and a gated diagonal decay (numpy).

Kimi Linear's MLA layers, Granite 4.0-H's and Nemotron-H's attention layers carry no
position at all: their recurrent layers (Kimi Delta Attention, Mamba-2) already know order,
because a recurrence reads its inputs one after another. This module holds the two pieces
that give such a layer its order, in their simplest forms (float64; the torch layer
:class:`posenc.nn.GatedDecayRecurrence` is tested equal to them):

* a **short causal convolution**, depthwise (one kernel per channel), as Mamba, Mamba-2
  and KDA put before their recurrence (kernel 4): ``y_t = sum_{j<k} w_j x_{t-j}``
  (:func:`causal_conv`). It sees the last ``k`` tokens, *each at its own offset*: a
  previous-token step built in.
* a **gated diagonal decay**, the recurrence at the heart of GLA, Griffin's RG-LRU, Mamba-2
  and (without its delta rule) KDA: each channel keeps a state
  ``h_t = a_t h_{t-1} + (1 - a_t) x_t`` with a gate ``a_t`` in ``[0, 1]`` computed from the
  token (:func:`gated_decay_scan`). Older inputs fade by the product of the gates since.

The same recurrence unrolled is a weighted sum over the past,
``h_t = sum_{s<=t} (1 - a_s) prod_{l=s+1..t} a_l x_s`` (:func:`gated_decay_weights`): the
weight's log is FoX's forgetting bias with ``log f = log a``
(:func:`posenc.data_dependent.forgetting_attention_bias`), used without a softmax. This is
the "state-space duality" of Mamba-2 (Dao & Gu, 2024): a linear recurrence and masked
attention with a decay mask compute the same thing.
"""

from __future__ import annotations

import numpy as np

from .data_dependent import _float_array, forgetting_attention_bias

__all__ = ["causal_conv", "gated_decay_scan", "gated_decay_weights"]


def _gates(a, x_shape=None) -> np.ndarray:
    a = _float_array("a", a, min_ndim=2)
    if not np.all((a >= 0) & (a <= 1)):
        raise ValueError("a must hold decay gates in [0, 1] (a sigmoid's output)")
    if x_shape is not None and a.shape != x_shape:
        raise ValueError(f"a must have x's shape [..., n, d] = {x_shape}, got {a.shape}")
    return a


def causal_conv(x, kernel) -> np.ndarray:
    """Depthwise causal convolution: ``x`` ``[..., n, d]``, ``kernel`` ``[k, d]`` ->
    ``[..., n, d]``, ``y_t = sum_{j=0..k-1} kernel[j] * x_{t-j}`` (zeros before the first
    token).

    ``kernel[0]`` weighs the token itself, ``kernel[j]`` the token ``j`` back. (PyTorch's
    ``conv1d`` is a cross-correlation over a left-padded input, so its weight
    ``[d, 1, k]`` holds this kernel reversed along ``k``: ``weight[c, 0, k-1-j] =
    kernel[j, c]``.)
    """
    x = _float_array("x", x, min_ndim=2)
    kernel = _float_array("kernel", kernel, min_ndim=2)
    if kernel.ndim != 2 or kernel.shape[1] != x.shape[-1]:
        raise ValueError(f"kernel must be [k, d] with d = x.shape[-1] = {x.shape[-1]}, got "
                         f"{kernel.shape}")
    n = x.shape[-2]
    y = np.zeros_like(x)
    for j in range(min(len(kernel), n)):  # the token j back, shifted into place
        y[..., j:, :] += kernel[j] * x[..., :n - j, :]
    return y


def gated_decay_scan(x, a) -> np.ndarray:
    """The recurrence, one token after another: ``x``, ``a`` ``[..., n, d]`` ->
    ``h`` ``[..., n, d]`` with ``h_t = a_t h_{t-1} + (1 - a_t) x_t``, ``h_{-1} = 0``.

    ``a_t = 1`` keeps the state and ignores token ``t``; ``a_t = 0`` forgets everything
    before it. ``(1 - a_t)`` on the input keeps ``h`` a weighted average of the inputs
    (weights summing to at most 1); Griffin's RG-LRU scales its input by
    ``sqrt(1 - a_t^2)`` for the same reason, Mamba by its step ``Delta``.
    """
    x = _float_array("x", x, min_ndim=2)
    a = _gates(a, x.shape)
    h = np.zeros_like(x)
    state = np.zeros(x.shape[:-2] + x.shape[-1:])
    for t in range(x.shape[-2]):
        state = a[..., t, :] * state + (1 - a[..., t, :]) * x[..., t, :]
        h[..., t, :] = state
    return h


def gated_decay_weights(a) -> np.ndarray:
    """The recurrence as a weighted sum: ``a`` ``[..., n, d]`` -> ``W`` ``[..., d, n, n]``
    with ``h[..., t, c] = sum_s W[..., c, t, s] x[..., s, c]``.

    ``W[c, t, s] = (1 - a_s) prod_{l=s+1..t} a_l`` for ``s <= t``, 0 above the diagonal:
    ``exp`` of FoX's bias with ``log f = log a`` (:func:`posenc.data_dependent.
    forgetting_attention_bias`) times the input gate. Gates must be in ``(0, 1]`` (a zero
    gate has no log; :func:`gated_decay_scan` takes it).
    """
    a = _gates(a)
    if np.any(a == 0):
        raise ValueError("a must be in (0, 1] for the weighted-sum form (log 0 is -inf); "
                         "gated_decay_scan accepts gates of 0")
    gates = np.swapaxes(a, -1, -2)  # [..., d, n]
    decay = np.exp(forgetting_attention_bias(np.log(gates)))  # [..., d, t, s]
    return decay * (1 - gates)[..., None, :]
