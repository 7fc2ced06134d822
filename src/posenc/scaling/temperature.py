"""Query temperatures: one family of logit multipliers that grow with the number of keys.

A softmax over ``n`` keys flattens as ``n`` grows: one relevant key whose logit is ``g``
above ``n - 1`` equal others gets ``e^g / (e^g + n - 1)``, which falls towards 0 once ``n``
passes ``e^g``. Each function here multiplies the logits (or the queries, which is the same)
by a factor that grows with ``n`` or the position, one function per published formula:

=============================  ============================================================
function                       formula (``n`` keys, position ``p = n - 1``, length ``L``)
=============================  ============================================================
:func:`log_n_scale`            ``max(1, ln n / ln L)``: Su's entropy invariance (2021), as
                               Qwen's ``logn`` applies it (:func:`logn_scale` per position)
:func:`attention_temperature`  Llama 4: ``1 + 0.1 ln(1 + floor((p + 1) / 8192))``
:func:`llama_4_beta_scale`     ``llama_4_scaling_beta`` (Ministral 3):
                               ``1 + beta ln(1 + floor(p / L))``
:func:`scalable_softmax_scale` Scalable-Softmax (Nakanishi, 2025): ``s ln n``
``yarn_mscale(s) ** 2``        YaRN's attention factor, on queries and keys (:mod:`.frequencies`)
:func:`qk_norm_gap_bound`      QK-norm: no multiplier, a bound on the logit gap
=============================  ============================================================

:data:`QUERY_TEMPERATURES` is the table of them (formula, who uses it, source) with one
common reading, :attr:`QueryTemperature.logit_scale` ``(n, train_length)``: the multiplier
on the logits of the last query of ``n`` keys in a model trained at ``train_length``.
Numpy in, numpy out (float64); :func:`attention_temperature` also takes a torch tensor and
gives one back, without this module importing torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .._validation import check_float, is_tensor
from .frequencies import yarn_mscale

__all__ = ["attention_temperature", "log_n_scale", "logn_scale", "llama_4_beta_scale",
           "scalable_softmax_scale", "qk_norm_gap_bound", "QueryTemperature",
           "QUERY_TEMPERATURES"]


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
    return np.log1p(np.floor((_positions(positions) + 1.0) / floor_scale)) * attn_scale + 1.0


def _key_counts(n) -> np.ndarray:
    """``n`` as float64, refusing anything but real numbers >= 1 (a count of keys)."""
    arr = np.asarray(n)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"n must be numbers (the number of keys), got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.size and not (np.all(np.isfinite(arr)) and arr.min() >= 1):
        raise ValueError("n must be finite and >= 1 (the number of keys a query sees)")
    return arr


def _positions(positions) -> np.ndarray:
    arr = np.asarray(positions)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"positions must be integers, got dtype {arr.dtype}")
    if arr.size and arr.min() < 0:
        raise ValueError("positions must be >= 0")
    return arr


def log_n_scale(n, train_length: float) -> np.ndarray:
    """The log-n scale: ``max(1, ln n / ln train_length)``, the logit multiplier for a query
    that sees ``n`` keys in a model trained on ``train_length`` tokens.

    Jianlin Su, "从熵不变性看Attention的Scale操作" (Attention's scale from entropy
    invariance, kexue.fm/archives/8823, December 2021): the entropy of a softmax over ``n``
    logits ``lambda z`` is about ``ln n - lambda (z_max - mean z)``, so a multiplier
    ``lambda`` proportional to ``ln n`` keeps it from growing with ``n``; normalised to 1 at
    the training length it is ``ln n / ln L``. Applied only past the training length (never
    below 1), it is Qwen's LogN-Scaling (``use_logn_attn``; :func:`logn_scale` indexes it by
    position). Without the ``max`` it is :func:`scalable_softmax_scale` with ``s = 1 / ln L``.

    ``n``: numbers >= 1, any shape (integers, or reals for a smooth curve);
    ``train_length`` > 1. Returns float64 of ``n``'s shape.
    """
    train_length = check_float("train_length", train_length, greater_than=1.0)
    return np.maximum(np.log(_key_counts(n)) / math.log(train_length), 1.0)


def logn_scale(positions, *, train_length: int) -> np.ndarray:
    """Qwen's log-n attention scaling (``use_logn_attn``): the query multiplier per position.

    :func:`log_n_scale` of the number of keys a causal query at position ``p`` sees,
    ``n = p + 1``: ``log(p + 1) / log(train_length)`` once ``p + 1 > train_length``, else
    1, as ``QWenAttention`` builds its ``logn_list`` (Qwen-7B's ``modeling_qwen.py``, Aug
    2023, ``seq_length`` 2048 as ``train_length``; Bai et al., 2023, "LogN-Scaling").
    ``positions``: integers >= 0, any shape (numpy or list); returns float64 of that shape.
    """
    # Qwen indexes 1 .. n: the number of keys a causal query sees
    return log_n_scale(_positions(positions) + 1, train_length)


def llama_4_beta_scale(positions, *, beta: float,
                       original_max_position_embeddings: float) -> np.ndarray:
    """``llama_4_scaling_beta``'s query multiplier per position (Ministral 3, Mistral Large 3,
    Devstral 2; every layer): ``1 + beta * ln(1 + floor(p / L0))``.

    Hugging Face's ``get_llama_4_attn_scale`` (``modeling_ministral3``, transformers 5.x,
    December 2025) from ``position_ids`` with ``beta`` = ``rope_parameters
    ["llama_4_scaling_beta"]`` (0.1 in Ministral 3's configs) and ``L0`` =
    ``rope_parameters["original_max_position_embeddings"]`` (16,384). Llama 4's
    :func:`attention_temperature` differs by one position: it floors ``(p + 1) / 8192``.
    ``positions``: integers >= 0, any shape; returns float64 of that shape, to multiply
    queries ``[batch, heads, seq, head_dim]`` by ``scale[..., None]``.
    """
    beta = check_float("beta", beta, at_least=0.0)
    length0 = check_float("original_max_position_embeddings", original_max_position_embeddings,
                          greater_than=0.0)
    return 1.0 + beta * np.log1p(np.floor(_positions(positions) / length0))


def scalable_softmax_scale(n, *, s: float) -> np.ndarray:
    """Scalable-Softmax's logit multiplier, ``s * ln n``, for a fixed ``s``.

    Nakanishi (2025, arXiv:2501.19399, "Scalable-Softmax Is Superior for Attention"):
    ``SSMax(z)_i = n^(s z_i) / sum_j n^(s z_j)``, a softmax of the logits times ``s ln n``
    with ``n`` the number of keys and ``s`` a learned scalar per layer and head (here given).
    With ``s = 1 / ln L`` it equals :func:`log_n_scale` from ``L`` keys on, and is below 1
    before. ``n``: numbers >= 1, any shape; ``s`` > 0. Returns float64 of ``n``'s shape.
    """
    s = check_float("s", s, greater_than=0.0)
    return s * np.log(_key_counts(n))


def qk_norm_gap_bound(head_dim: int, *, gain_q=1.0, gain_k=1.0, scale: float | None = None
                      ) -> float:
    """The largest logit gap a head with QK-norm can make: ``2 d scale max|g_q| max|g_k|``.

    QK-norm (Henry et al., 2020; Dehghani et al., 2023, ViT-22B; per head in Qwen3's and
    Gemma 3's code, and without a gain on Llama 4's RoPE layers) RMS-normalises each query
    and key over its ``d = head_dim`` features and multiplies by a learned gain,
    ``q' = g_q * q / rms(q)``. ``q / rms(q)`` has norm ``sqrt(d)`` (below it with the norm's
    ``eps``), so ``|q'| <= max|g_q| sqrt(d)``, and the same for keys. A rotation applied
    after the norm (RoPE) keeps these norms. So for one query and two keys, by Cauchy-Schwarz,
    ``scale * q'.(k1' - k2') <= scale * |q'| (|k1'| + |k2'|) <= 2 d scale max|g_q| max|g_k|``;
    equality with constant gains and ``k2' = -k1'`` parallel to ``q'``. With the usual
    ``scale = 1 / sqrt(d)`` the bound is ``2 sqrt(d) max|g_q| max|g_k|``. A temperature
    multiplies the gap; QK-norm caps it, so past ``n - 1 = e^bound`` keys no head can give
    one key half the weight unless its gains grow.

    ``gain_q``, ``gain_k``: a scalar or ``[head_dim]`` gains; ``scale``: the softmax scale
    (``None``: ``1 / sqrt(head_dim)``). Returns a float.
    """
    if isinstance(head_dim, bool) or not isinstance(head_dim, int | np.integer) or head_dim < 1:
        raise ValueError(f"head_dim must be an integer >= 1, got {head_dim!r}")
    scale = 1.0 / math.sqrt(head_dim) if scale is None else check_float(
        "scale", scale, greater_than=0.0)
    peaks = []
    for name, gain in (("gain_q", gain_q), ("gain_k", gain_k)):
        g = np.asarray(gain, dtype=np.float64)
        if g.ndim > 1 or (g.ndim == 1 and g.shape[0] != head_dim):
            raise ValueError(f"{name} must be a scalar or [head_dim] = [{head_dim}], "
                             f"got shape {g.shape}")
        if not np.all(np.isfinite(g)):
            raise ValueError(f"{name} must be finite")
        peaks.append(float(np.max(np.abs(g))))
    return 2.0 * head_dim * scale * peaks[0] * peaks[1]


# --- the family as one table ------------------------------------------------------------------

@dataclass(frozen=True)
class QueryTemperature:
    """One row of :data:`QUERY_TEMPERATURES`.

    ``function``: the formula's one definition above. ``logit_scale(n, train_length)``: what
    it multiplies the logits by for the last query of ``n`` keys (position ``n - 1``) in a
    model trained at ``train_length``, with the parameters the course reads it at (``None``
    for QK-norm, which bounds the gap instead). ``formula``: LaTeX; ``text``: the same in
    plain text; ``used_by`` and ``source``: who ships it, and the paper or code it follows.
    """

    name: str
    function: Callable
    logit_scale: Callable | None
    formula: str
    text: str
    used_by: str
    source: str


def _yarn_logit_scale(n, train_length):
    # YaRN scales cos and sin, so queries AND keys, by mscale: the logits by mscale ** 2; the
    # factor is the stretch the model is configured for, here the one that reaches n keys
    factor = _key_counts(n) / check_float("train_length", train_length, greater_than=1.0)
    return np.vectorize(yarn_mscale, otypes=[np.float64])(factor) ** 2


QUERY_TEMPERATURES = MappingProxyType({row.name: row for row in (
    QueryTemperature(
        "log-n (Su; Qwen's logn)", log_n_scale, log_n_scale,
        r"\max\left(1, \frac{\ln n}{\ln L}\right)", "max(1, ln n / ln L)",
        "Qwen-7B/14B (use_logn_attn)",
        "Su, kexue.fm 8823 (Dec 2021); Qwen modeling_qwen.py (Aug 2023)"),
    QueryTemperature(
        "Llama 4", attention_temperature,
        lambda n, length: attention_temperature(np.asarray(n, dtype=np.int64) - 1,
                                                floor_scale=length),
        r"1 + 0.1\,\ln\left(1 + \left\lfloor \frac{p + 1}{8192} \right\rfloor\right)",
        "1 + 0.1 ln(1 + floor((p + 1) / 8192))", "Llama 4 (NoPE layers)",
        "Meta (Apr 2025); HF Llama4TextAttention"),
    QueryTemperature(
        "llama_4_scaling_beta", llama_4_beta_scale,
        lambda n, length: llama_4_beta_scale(np.asarray(n, dtype=np.int64) - 1, beta=0.1,
                                             original_max_position_embeddings=length),
        r"1 + \beta\,\ln\left(1 + \left\lfloor \frac{p}{L_0} \right\rfloor\right)",
        "1 + beta ln(1 + floor(p / L0))", "Ministral 3, Mistral Large 3, Devstral 2",
        "Mistral AI (Dec 2025); HF get_llama_4_attn_scale"),
    QueryTemperature(
        "Scalable-Softmax", scalable_softmax_scale,
        lambda n, length: scalable_softmax_scale(
            n, s=1.0 / math.log(check_float("train_length", length, greater_than=1.0))),
        r"s \ln n", "s ln n", "research (s learned per head)",
        "Nakanishi, arXiv:2501.19399 (Jan 2025)"),
    QueryTemperature(
        "YaRN", yarn_mscale, _yarn_logit_scale,
        r"(0.1 \ln s + 1)^2", "(0.1 ln s + 1)^2", "gpt-oss, DeepSeek-V3, Qwen3 past 32K",
        "Peng et al., arXiv:2309.00071 (Aug 2023)"),
    QueryTemperature(
        "QK-norm", qk_norm_gap_bound, None,
        r"|\Delta| \le 2\sqrt{d}\,\max|g_q|\,\max|g_k|",
        "|gap| <= 2 sqrt(d) max|g_q| max|g_k|", "Qwen3, Gemma 3, Llama 4 (RoPE layers)",
        "Henry et al. (2020); Dehghani et al. (2023)"),
)})
