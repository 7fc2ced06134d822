"""Which keys a query may attend to: causal, sliding-window and chunked masks.

Every mask is a bool ``[n, n]`` array, ``mask[i, j]`` True when query ``i`` may attend
to key ``j`` (the convention of ``torch.nn.functional.scaled_dot_product_attention``'s
bool ``attn_mask``). The rules follow Hugging Face transformers' ``masking_utils``:

==================  ====================================================================
``causal``          ``j <= i``                                       (``causal_mask_function``)
``sliding window``  ``j <= i`` and ``j > i - window``  (``sliding_window_overlay``: Mistral
                    7B, Gemma 2/3's local layers, Command A, GPT-OSS's banded layers)
``chunked``         ``j <= i`` and ``i // chunk == j // chunk``  (``chunked_overlay`` with no
                    left padding: Llama 4's RoPE layers, "chunked local attention")
==================  ====================================================================

A window of ``w`` lets a query see itself and the ``w - 1`` keys before it, so no query
ever meets a distance ``>= w``. A chunk of ``c`` cuts the sequence into blocks
``[0, c), [c, 2c), ...``; a query sees the keys of its own block up to itself, so the
first query of a block sees only itself and distances stay ``< c``.

:func:`visible` is the one definition of the rule: it uses only comparisons, ``//``
and ``&``, so the same function builds a numpy mask here and a torch mask on any
device inside the model (:mod:`posenc.layer_patterns`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._validation import check_int

__all__ = ["causal_mask", "sliding_window_mask", "chunked_mask", "visible",
           "receptive_field", "reach_mask"]


def visible(i, j, *, window: int | None = None, chunk: int | None = None):
    """Elementwise: may query position ``i`` attend to key position ``j``?

    ``i`` and ``j`` are integer arrays or tensors that broadcast (e.g. ``[n, 1]`` and
    ``[1, n]``); the result is bool with their broadcast shape. Always causal
    (``j <= i``); ``window`` adds ``j > i - window``, ``chunk`` adds
    ``i // chunk == j // chunk`` (positions must be >= 0). Works unchanged on numpy
    arrays and torch tensors. Arguments are not validated here (the public builders do).
    """
    allowed = j <= i
    if window is not None:
        allowed = allowed & (j > i - window)
    if chunk is not None:
        allowed = allowed & (i // chunk == j // chunk)
    return allowed


def _grid(n: int) -> tuple[np.ndarray, np.ndarray]:
    idx = np.arange(check_int("n", n))
    return idx[:, None], idx[None, :]  # queries down, keys across


def causal_mask(n: int) -> np.ndarray:
    """bool ``[n, n]``: ``mask[i, j] = j <= i`` (a decoder's causal mask)."""
    return visible(*_grid(n))


def sliding_window_mask(n: int, window: int) -> np.ndarray:
    """bool ``[n, n]``: ``j <= i`` and ``j > i - window``: each query sees itself and the
    ``window - 1`` keys before it (Hugging Face's ``sliding_window_overlay`` on a causal
    mask). ``window >= n`` gives the causal mask."""
    window = check_int("window", window)
    return visible(*_grid(n), window=window)


def chunked_mask(n: int, chunk: int) -> np.ndarray:
    """bool ``[n, n]``: ``j <= i`` and ``i // chunk == j // chunk``: causal attention
    inside blocks of ``chunk`` tokens (Hugging Face's ``chunked_overlay``, no padding;
    Llama 4's RoPE layers). ``chunk >= n`` gives the causal mask."""
    chunk = check_int("chunk", chunk)
    return visible(*_grid(n), chunk=chunk)


def reach_mask(n: int, reach: str = "full", size: int | None = None) -> np.ndarray:
    """The mask of a layer whose ``reach`` is ``"full"`` (causal), ``"window"``
    (sliding window of ``size``) or ``"chunk"`` (chunks of ``size``): bool ``[n, n]``."""
    if reach == "full":
        return causal_mask(n)
    if reach == "window":
        return sliding_window_mask(n, size)
    if reach == "chunk":
        return chunked_mask(n, size)
    raise ValueError(f"reach must be one of 'full', 'window', 'chunk'; got {reach!r}")


def receptive_field(masks: Sequence[np.ndarray]) -> np.ndarray:
    """Which input tokens can reach each output after a stack of attention layers.

    ``masks`` are the layers' bool ``[n, n]`` masks, first layer first. Returns bool
    ``[n, n]``: ``out[i, j]`` True when token ``j`` at the input can influence position
    ``i`` after the last layer -- a path ``j -> ... -> i`` with one attention step per
    layer (the boolean matrix product ``M_L ... M_2 M_1``). The residual stream adds no
    path of its own: every mask here lets a position see itself. With ``k`` sliding-window
    layers of window ``w``, position ``i`` reaches back ``k (w - 1)`` tokens; with chunked
    layers it never leaves its chunk, however deep the stack.
    """
    if isinstance(masks, np.ndarray) and masks.ndim == 2:
        raise TypeError("masks must be a sequence of [n, n] masks (one per layer), "
                        "got a single array")
    masks = [np.asarray(m) for m in masks]
    if not masks:
        raise ValueError("masks must hold at least one layer's mask")
    n = masks[0].shape[0]
    for k, m in enumerate(masks):
        if m.dtype != bool or m.shape != (n, n):
            raise ValueError(f"masks[{k}] must be a bool [n, n] array with n = {n}, "
                             f"got {m.dtype} {m.shape}")
    reach = masks[0]
    for m in masks[1:]:
        # out[i, j] = any_k m[i, k] and reach[k, j]; int matmul avoids bool overflow issues
        reach = (m.astype(np.int64) @ reach.astype(np.int64)) > 0
    return reach
