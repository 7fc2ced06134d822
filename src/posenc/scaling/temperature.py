"""Query scales that grow with the position: Llama 4's temperature on its NoPE layers, and
Qwen's log-n scaling (:func:`logn_scale`).

A layer without positional encoding (NoPE) attends over ever more keys as the context
grows, and its softmax flattens. Llama 4 (Meta, April 2025; Hugging Face
``Llama4TextAttention``, ``attn_temperature_tuning``) multiplies the queries of those
layers only by a factor that grows with ``log`` of the position; its RoPE (local) layers
are left alone. :func:`attention_temperature` computes that factor. Numpy in, numpy out;
a torch tensor in gives a torch tensor out, without this module importing torch.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_float, is_tensor

__all__ = ["attention_temperature", "logn_scale"]


def attention_temperature(positions, *, floor_scale: float = 8192, attn_scale: float = 0.1):
    """Llama 4's query multiplier for its NoPE (global) layers, one per position.

    ``scale(p) = log1p(floor((p + 1) / floor_scale)) * attn_scale + 1``, as Hugging Face's
    ``Llama4TextAttention`` computes it from ``cache_position`` (``attn_temperature_tuning``,
    ``floor_scale`` 8192, ``attn_scale`` 0.1 in the released configs, April 2025) and
    multiplies into the queries of the layers WITHOUT RoPE only. The multiplier is 1 for
    the first ``floor_scale - 1`` positions, then grows like ``attn_scale * log(p /
    floor_scale)``: a step-wise form of Scalable-Softmax's ``s * log n`` (Nakanishi, 2025),
    which keeps the softmax from flattening as the number of keys grows (Chiang & Cholak,
    2022, scale logits by ``log n``).

    ``positions``: integer positions >= 0, any shape, a numpy array (or list) or a torch
    tensor; returns float64 numpy of that shape, or for a tensor a float32 tensor on its
    device (Hugging Face computes in float32: ``cache_position.float()``). Multiply
    queries ``[batch, heads, seq, head_dim]`` by ``scale[..., None]``.
    """
    floor_scale = check_float("floor_scale", floor_scale, greater_than=0.0)
    attn_scale = check_float("attn_scale", attn_scale, at_least=0.0)
    if is_tensor(positions):
        if positions.is_floating_point() or positions.is_complex():
            raise TypeError(f"positions must be integers, got {positions.dtype}")
        if positions.device.type != "meta" and positions.numel() and positions.min() < 0:
            raise ValueError("positions must be >= 0")
        # the tensor's own methods: the same formula, and this numpy module imports no torch
        return ((positions.float() + 1.0) / floor_scale).floor().log1p() * attn_scale + 1.0
    arr = np.asarray(positions)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"positions must be integers, got dtype {arr.dtype}")
    if arr.size and arr.min() < 0:
        raise ValueError("positions must be >= 0")
    return np.log1p(np.floor((arr + 1.0) / floor_scale)) * attn_scale + 1.0


def logn_scale(positions, *, train_length: int):
    """Qwen's log-n attention scaling (``use_logn_attn``): the query multiplier per position.

    ``log(p + 1) / log(train_length)`` for a position ``p`` with ``p + 1 > train_length``,
    else 1, as ``QWenAttention`` builds its ``logn_list`` (Qwen-7B's ``modeling_qwen.py``,
    Aug 2023, ``seq_length`` 2048 as ``train_length``; Bai et al., 2023, "LogN-Scaling"):
    past the training length a query sees more keys, and the factor keeps its softmax as
    sharp as Chiang & Cholak's ``log n`` scaling would. ``positions``: integers >= 0, any
    shape (numpy or list); returns float64 of that shape.
    """
    train_length = check_float("train_length", train_length, greater_than=1.0)
    arr = np.asarray(positions)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"positions must be integers, got dtype {arr.dtype}")
    if arr.size and arr.min() < 0:
        raise ValueError("positions must be >= 0")
    count = arr + 1.0  # Qwen indexes 1 .. n: the number of keys a causal query sees
    return np.where(count > train_length, np.log(count) / np.log(train_length), 1.0)
