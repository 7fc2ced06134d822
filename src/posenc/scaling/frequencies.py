"""Stretching RoPE to longer contexts: new per-pair frequencies (and an attention factor).

A model trained with RoPE at context length ``L0`` (``original_max_position_embeddings``)
has seen pair ``i`` rotate by at most ``L0 * theta_i`` radians. Every context-extension
method below keeps RoPE itself and only changes the frequency vector ``theta`` (Hugging
Face calls it ``inv_freq``); YaRN also returns an attention factor. The names, options
and numbers follow Hugging Face transformers' ``ROPE_INIT_FUNCTIONS``
(``modeling_rope_utils.py``), computed here in float64 (Hugging Face computes in
float32, so the two agree to float32 precision):

===========  ==================================================================
``method``   new frequencies ``theta'_i`` (``s`` = ``factor``, ``d`` = ``head_dim``)
===========  ==================================================================
default      ``theta_i = base ** (-2i/d)``
linear       ``theta_i / s`` -- Position Interpolation (Chen et al., 2023)
ntk          ``base' = base * s ** (d / (d-2))`` -- NTK-aware (bloc97, 2023)
dynamic      ``base' = base * (s * L / L0 - (s - 1)) ** (d / (d-2))``, ``L = max(seq_len, L0)``
yarn         per-pair blend of ``theta_i`` and ``theta_i / s`` (Peng et al., 2024)
llama3       unchanged / blended / ``theta_i / s`` by wavelength (Llama 3.1)
longrope     ``theta_i / lambda_i``, searched per-pair factors (Ding et al., 2024)
proportional the fastest pairs keep ``theta_i``, the rest 0 (p-RoPE; Barbero et al., 2025)
===========  ==================================================================

Each method is one row of ``_METHODS``, the one dispatch table: its function, the keyword
options it accepts (with their defaults) and what it needs. :func:`rope_scaling_frequencies`
checks the arguments once and calls the row's function.

How to use the output::

    inv_freq, attention_factor = rope_scaling_frequencies("yarn", 128, factor=16,
                                                          original_max_position_embeddings=4096)
    q = apply_rope(q, frequencies=inv_freq) * attention_factor
    k = apply_rope(k, frequencies=inv_freq) * attention_factor

Hugging Face multiplies both ``cos`` and ``sin`` by ``attention_factor``, which scales
the rotated queries *and* the rotated keys, so the logits ``q . k`` grow by
``attention_factor ** 2`` (YaRN's ``1 / t`` with ``sqrt(1/t) = 0.1 ln s + 1``).
Multiplying the logits by ``attention_factor ** 2`` does the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .._validation import check_base, check_choice, check_even_int, check_float
from ..rope import rope_frequencies

__all__ = [
    "SCALING_METHODS",
    "ROPE_TYPES",
    "rope_scaling_frequencies",
    "pi_frequencies",
    "yarn_correction_range",
    "yarn_attention_factor",
    "yarn_mscale",
]


class _Inputs(NamedTuple):
    """What every method's function receives, already checked."""

    default: np.ndarray  # [head_dim // 2]: base ** (-2i / head_dim)
    head_dim: int
    base: float
    factor: float  # s >= 1
    length0: float | None  # original_max_position_embeddings, L0
    seq_len: float | None
    opts: dict  # the method's options, defaults filled in


# --- one function per method: (inputs) -> (inv_freq [head_dim // 2], attention_factor) ----

def _default(x: _Inputs) -> tuple[np.ndarray, float]:
    return x.default, 1.0


def _linear(x: _Inputs) -> tuple[np.ndarray, float]:
    return x.default / x.factor, 1.0


def _ntk_frequencies(head_dim: int, base: float, scale: float) -> np.ndarray:
    """Default frequencies with ``base * scale ** (d / (d - 2))`` as the base."""
    return rope_frequencies(head_dim, base * scale ** (head_dim / (head_dim - 2)))


def _ntk(x: _Inputs) -> tuple[np.ndarray, float]:
    return _ntk_frequencies(x.head_dim, x.base, x.factor), 1.0


def _dynamic(x: _Inputs) -> tuple[np.ndarray, float]:
    length = x.length0 if x.seq_len is None else max(x.seq_len, x.length0)
    effective = x.factor * length / x.length0 - (x.factor - 1.0)
    return _ntk_frequencies(x.head_dim, x.base, effective), 1.0


def _correction_dim(rotations: float, head_dim: int, base: float, length0: float) -> float:
    """The (fractional) pair index that turns ``rotations`` times within ``length0``.

    From ``length0 * base ** (-2i / d) / (2 pi) = rotations``:
    ``i = d ln(length0 / (2 pi rotations)) / (2 ln base)``.
    """
    return head_dim * math.log(length0 / (rotations * 2 * math.pi)) / (2 * math.log(base))


def yarn_correction_range(head_dim: int, base: float, original_max_position_embeddings: float,
                          *, beta_fast: float = 32.0, beta_slow: float = 1.0,
                          truncate: bool = True) -> tuple[float, float]:
    """YaRN's ramp bounds ``(low, high)`` in pair indices, as Hugging Face computes them.

    ``low`` is the pair that turns ``beta_fast`` times within ``L0``, ``high`` the pair
    that turns ``beta_slow`` times; with ``truncate`` (the default) ``low`` is floored
    and ``high`` ceiled. The range is then clamped to ``[0, head_dim - 1]`` (Hugging
    Face clamps to ``dim - 1``, not to the last pair ``head_dim // 2 - 1``; a ``high``
    beyond the last pair means the ramp never reaches 1). Returns Python numbers
    (ints when ``truncate``).

    Two edge cases are Hugging Face's and kept: when ``low == high`` the ramp gets width
    0.001; when every pair turns more than ``beta_fast`` times within ``L0`` (tiny
    ``head_dim`` or ``base``), ``low`` can exceed ``high = head_dim - 1`` and the ramp
    is 1 everywhere, i.e. YaRN then divides every pair by ``s``.
    """
    head_dim = check_even_int("head_dim", head_dim)
    base = check_base(base)
    length0 = check_float("original_max_position_embeddings", original_max_position_embeddings,
                          greater_than=0.0)
    beta_fast = check_float("beta_fast", beta_fast, greater_than=0.0)
    beta_slow = check_float("beta_slow", beta_slow, greater_than=0.0)
    if beta_fast < beta_slow:  # equal is a ramp of one pair (Kimi K2: both 1.0)
        raise ValueError(f"beta_fast must be >= beta_slow, got beta_fast={beta_fast}, "
                         f"beta_slow={beta_slow}")
    if not isinstance(truncate, bool | np.bool_):
        raise TypeError(f"truncate must be True or False, got {truncate!r}")
    low = _correction_dim(beta_fast, head_dim, base, length0)
    high = _correction_dim(beta_slow, head_dim, base, length0)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, head_dim - 1)


def yarn_mscale(factor: float, mscale: float = 1.0) -> float:
    """YaRN's ``mscale(s, m) = 0.1 m ln s + 1`` (1.0 for ``s <= 1``).

    ``yarn_get_mscale`` in YaRN's, DeepSeek's and Hugging Face's code. DeepSeek-V2/V3 also
    multiply the softmax scale by ``yarn_mscale(factor, mscale_all_dim) ** 2``.
    """
    factor = check_float("factor", factor, greater_than=0.0)
    mscale = check_float("mscale", mscale, greater_than=0.0)
    return 1.0 if factor <= 1 else 0.1 * mscale * math.log(factor) + 1.0


def yarn_attention_factor(factor: float, *, mscale: float | None = None,
                          mscale_all_dim: float | None = None) -> float:
    """YaRN's default attention factor ``0.1 ln s + 1`` (1.0 for ``s <= 1``).

    With both ``mscale`` and ``mscale_all_dim`` given (DeepSeek's configs), Hugging Face
    uses ``(0.1 mscale ln s + 1) / (0.1 mscale_all_dim ln s + 1)``; one alone is ignored,
    as there. The logits grow by the square of this number (module docstring).
    """
    factor = check_float("factor", factor, greater_than=0.0)
    if mscale is not None:
        mscale = check_float("mscale", mscale, greater_than=0.0)
    if mscale_all_dim is not None:
        mscale_all_dim = check_float("mscale_all_dim", mscale_all_dim, greater_than=0.0)
    if mscale is not None and mscale_all_dim is not None:
        return yarn_mscale(factor, mscale) / yarn_mscale(factor, mscale_all_dim)
    return yarn_mscale(factor)


def _yarn(x: _Inputs) -> tuple[np.ndarray, float]:
    opts = x.opts
    low, high = yarn_correction_range(x.head_dim, x.base, x.length0,
                                      beta_fast=opts["beta_fast"], beta_slow=opts["beta_slow"],
                                      truncate=opts["truncate"])
    if low == high:
        high += 0.001  # Hugging Face's guard against a zero-width ramp
    pairs = np.arange(x.head_dim // 2, dtype=np.float64)
    ramp = np.clip((pairs - low) / (high - low), 0.0, 1.0)  # 0: unchanged, 1: divided by s
    inv_freq = x.default * (1.0 - ramp) + (x.default / x.factor) * ramp
    if opts["attention_factor"] is not None:
        attention = check_float("attention_factor", opts["attention_factor"], greater_than=0.0)
    else:
        attention = yarn_attention_factor(x.factor, mscale=opts["mscale"],
                                          mscale_all_dim=opts["mscale_all_dim"])
    return inv_freq, attention


def _llama3(x: _Inputs) -> tuple[np.ndarray, float]:
    default, factor, length0 = x.default, x.factor, x.length0
    low = check_float("low_freq_factor", x.opts["low_freq_factor"], greater_than=0.0)
    high = check_float("high_freq_factor", x.opts["high_freq_factor"], greater_than=0.0)
    if not high > low:
        raise ValueError(f"high_freq_factor must be > low_freq_factor, got "
                         f"high_freq_factor={high}, low_freq_factor={low}")
    wavelength = 2 * np.pi / default  # [head_dim // 2]
    long_wave, short_wave = length0 / low, length0 / high
    smooth = (length0 / wavelength - low) / (high - low)  # 1 at short_wave, 0 at long_wave
    blended = (1.0 - smooth) * default / factor + smooth * default
    return np.where(wavelength < short_wave, default,
                    np.where(wavelength > long_wave, default / factor, blended)), 1.0


def _rescale_factors(name: str, values, num_pairs: int) -> np.ndarray:
    if values is None:
        raise ValueError(f"method 'longrope' needs {name}: {num_pairs} per-pair rescale "
                         "factors (head_dim // 2 numbers)")
    if isinstance(values, str) or not hasattr(values, "__len__"):
        raise TypeError(f"{name} must be a sequence of {num_pairs} numbers, got {values!r}")
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape != (num_pairs,):
        raise ValueError(f"{name} must hold head_dim // 2 = {num_pairs} numbers, got shape "
                         f"{arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0.0):
        # LongRoPE's search keeps lambda_i >= 1, but released configs hold factors just
        # below 1 (MiniCPM4: 0.9978), which Hugging Face and vLLM accept: any lambda_i > 0
        raise ValueError(f"{name} must hold finite numbers > 0 (a rescale factor lambda_i "
                         f"divides a pair's frequency), got min {float(arr.min())}")
    return arr


def _longrope(x: _Inputs) -> tuple[np.ndarray, float]:
    factor, length0, opts = x.factor, x.length0, x.opts
    short = _rescale_factors("short_factor", opts["short_factor"], len(x.default))
    long = _rescale_factors("long_factor", opts["long_factor"], len(x.default))
    ext = long if x.seq_len is not None and x.seq_len > length0 else short
    if opts["attention_factor"] is not None:
        attention = check_float("attention_factor", opts["attention_factor"], greater_than=0.0)
    elif factor <= 1.0:
        attention = 1.0
    elif not length0 > 1.0:
        raise ValueError("method 'longrope' with factor > 1 needs original_max_position_"
                         f"embeddings > 1 (its attention factor divides by ln L0), got {length0}")
    else:
        attention = math.sqrt(1.0 + math.log(factor) / math.log(length0))
    return x.default / ext, attention


def _proportional(x: _Inputs) -> tuple[np.ndarray, float]:
    p = check_float("partial_rotary_factor", x.opts["partial_rotary_factor"], greater_than=0.0)
    if p > 1.0:
        raise ValueError(f"partial_rotary_factor must be in (0, 1], got {p}")
    kept = int(p * x.head_dim // 2)  # Hugging Face's rope_angles: (p * head_dim) // 2
    return np.where(np.arange(x.head_dim // 2) < kept, x.default, 0.0) / x.factor, 1.0


# --- the one dispatch table ---------------------------------------------------------------

class _Method(NamedTuple):
    """One row of the dispatch table."""

    compute: Callable[[_Inputs], tuple[np.ndarray, float]]
    options: dict  # the extra keyword options it accepts, with their defaults
    needs_length0: bool = False  # cannot run without original_max_position_embeddings
    ntk_exponent: bool = False  # its base exponent d / (d - 2) needs head_dim >= 4
    factor_only: bool = True  # False: needs more than a factor (in ROPE_TYPES only)


#: Every method, in the order the course meets them: name -> function, options, needs.
_METHODS: dict[str, _Method] = {
    "default": _Method(_default, {}),
    "linear": _Method(_linear, {}),
    "ntk": _Method(_ntk, {}, ntk_exponent=True),
    "dynamic": _Method(_dynamic, {}, needs_length0=True, ntk_exponent=True),
    "yarn": _Method(_yarn, {"beta_fast": 32.0, "beta_slow": 1.0, "attention_factor": None,
                           "mscale": None, "mscale_all_dim": None, "truncate": True},
                    needs_length0=True),
    "llama3": _Method(_llama3, {"low_freq_factor": 1.0, "high_freq_factor": 4.0},
                      needs_length0=True),
    "longrope": _Method(_longrope, {"short_factor": None, "long_factor": None,
                                    "attention_factor": None},
                        needs_length0=True, factor_only=False),
    "proportional": _Method(_proportional, {"partial_rotary_factor": 1.0}, factor_only=False),
}

#: Every ``method`` :func:`rope_scaling_frequencies` accepts: :data:`SCALING_METHODS` and two
#: that need more than a factor (LongRoPE's searched per-pair factors; p-RoPE's fraction).
ROPE_TYPES = tuple(_METHODS)

#: The methods :func:`rope_scaling_frequencies` knows, in the order the course meets them.
SCALING_METHODS = tuple(name for name, row in _METHODS.items() if row.factor_only)


def rope_scaling_frequencies(method: str, head_dim: int, *, base: float = 10000.0,
                             factor: float = 1.0,
                             original_max_position_embeddings: float | None = None,
                             seq_len: float | None = None,
                             **options) -> tuple[np.ndarray, float]:
    """Per-pair RoPE frequencies of a context-extension method, and its attention factor.

    Shape: returns ``(inv_freq, attention_factor)`` with ``inv_freq`` a float64 array
    ``[head_dim // 2]`` (plug it into ``apply_rope(..., frequencies=inv_freq)`` or
    ``posenc.nn.RotaryEmbedding(frequencies=inv_freq)``) and ``attention_factor`` a
    float that multiplies the rotated queries and keys (see the module docstring):
    1.0 for every method except YaRN and LongRoPE.

    ``method`` is one of :data:`ROPE_TYPES`; ``factor`` (``s >= 1``) is the
    context extension ratio; ``original_max_position_embeddings`` (``L0``) the
    training length, required by ``dynamic``, ``yarn`` and ``llama3`` and ignored by
    the others; ``seq_len`` is the current length, used by ``dynamic`` only.

    * ``"default"``: ``base ** (-2i / head_dim)``.
    * ``"linear"``: Position Interpolation (Chen et al., 2023): every frequency / ``s``,
      the same as feeding positions ``m / s``.
    * ``"ntk"``: NTK-aware base change (bloc97, 2023): ``base * s ** (d / (d - 2))``, so
      the fastest pair is unchanged and the slowest is divided by exactly ``s``. Not a
      Hugging Face ``rope_type`` (it has only the dynamic variant). Needs ``head_dim >= 4``.
    * ``"dynamic"``: dynamic NTK (bloc97 and emozilla, 2023; Hugging Face
      ``_compute_dynamic_ntk_parameters``): the NTK base change with the effective
      scale ``s * L / L0 - (s - 1)``, ``L = max(seq_len, L0)``; equal to default at or
      below ``L0`` and when ``seq_len`` is None. Note that above ``L0`` it changes the
      frequencies even for ``s = 1`` (effective scale ``L / L0``). Hugging Face reads
      ``L0`` from ``config.max_position_embeddings`` for this method. Needs ``head_dim >= 4``.
    * ``"yarn"`` (Peng et al., 2024; Hugging Face ``_compute_yarn_parameters``), options
      ``beta_fast=32``, ``beta_slow=1``, ``attention_factor=None``, ``mscale=None``,
      ``mscale_all_dim=None``, ``truncate=True``: pair ``i`` gets
      ``theta_i * (1 - gamma_i) + (theta_i / s) * gamma_i`` with ``gamma_i`` a ramp that
      rises linearly in the pair index from 0 at ``low`` to 1 at ``high``
      (:func:`yarn_correction_range`: the pairs that turn ``beta_fast`` and ``beta_slow``
      times within ``L0``). Pairs at or below ``low`` keep their frequency, pairs at or
      above ``high`` are divided by ``s``. ``truncate=True`` (Hugging Face's current
      default, and the behaviour of its older versions, which had no such option)
      floors ``low`` and ceils ``high``; ``truncate=False`` keeps them fractional. The
      attention factor is :func:`yarn_attention_factor` (``0.1 ln s + 1`` by default).
    * ``"llama3"`` (Llama 3.1; Hugging Face ``_compute_llama3_parameters``), options
      ``low_freq_factor=1``, ``high_freq_factor=4``: pairs whose wavelength
      ``2 pi / theta_i`` is below ``L0 / high_freq_factor`` are unchanged, above
      ``L0 / low_freq_factor`` divided by ``s``; in between
      ``(1 - g) theta_i / s + g theta_i`` with ``g = (L0 / wavelength - low) / (high - low)``.
    * ``"longrope"`` (Ding et al., 2024, used by Phi-3; Hugging Face
      ``_compute_longrope_parameters``), options ``short_factor``, ``long_factor`` (each
      ``head_dim // 2`` rescale factors ``lambda_i >= 1`` found by search, required) and
      ``attention_factor=None``: ``theta_i / lambda_i`` with the long factors when
      ``seq_len > L0`` and the short ones otherwise (also when ``seq_len`` is None). The
      default attention factor is ``sqrt(1 + ln s / ln L0)`` for ``s > 1``, else 1
      (Hugging Face sets ``s = max_position_embeddings / L0``).
    * ``"proportional"`` (p-RoPE, Barbero et al., 2025; Hugging Face's ``proportional``
      rope type, used by Gemma), option ``partial_rotary_factor=1.0`` (``p`` in (0, 1]):
      the first ``int(p * head_dim // 2)`` pairs -- the fastest -- keep
      ``base ** (-2i / head_dim)`` (computed over the whole head), the remaining, slowest
      pairs get frequency 0 (no rotation: they carry no position); all divided by ``s``.

    Raises ``ValueError`` for an unknown method, ``factor < 1``, an odd ``head_dim``,
    ``base <= 1``, a missing ``original_max_position_embeddings`` where it is needed,
    or an option out of range; ``TypeError`` for an option the method does not have.
    """
    method = check_choice("method", method, ROPE_TYPES)
    row = _METHODS[method]
    head_dim = check_even_int("head_dim", head_dim)
    base = check_base(base)
    factor = check_float("factor", factor, at_least=1.0)
    unknown = sorted(set(options) - set(row.options))
    if unknown:
        accepted = ", ".join(row.options) or "none"
        raise TypeError(f"method {method!r} got unknown option(s) {', '.join(unknown)}; "
                        f"its options are: {accepted}")
    # an option given as None takes its default, as Hugging Face's ``.get(...) or default``
    opts = {**row.options, **{k: v for k, v in options.items() if v is not None}}
    length0 = None
    if original_max_position_embeddings is not None:
        length0 = check_float("original_max_position_embeddings",
                              original_max_position_embeddings, greater_than=0.0)
    elif row.needs_length0:
        raise ValueError(f"method {method!r} needs original_max_position_embeddings "
                         "(the context length the model was trained at)")
    if seq_len is not None:
        seq_len = check_float("seq_len", seq_len, greater_than=0.0)
    if row.ntk_exponent and head_dim < 4:
        raise ValueError(f"method {method!r} needs head_dim >= 4 (its exponent is "
                         f"head_dim / (head_dim - 2)), got {head_dim}")

    default = rope_frequencies(head_dim, base)  # [head_dim // 2]
    return row.compute(_Inputs(default, head_dim, base, factor, length0, seq_len, opts))


def pi_frequencies(head_dim: int, base: float, train_length: int,
                   eval_length: int) -> np.ndarray:
    """Position Interpolation for ``eval_length``: ``theta_i / s`` with ``s = L_eval / L_train``.

    From :func:`rope_scaling_frequencies` (``method="linear"``); ``s = 1``
    (no change) at or below the training length. Shape ``[head_dim // 2]``.
    """
    factor = max(eval_length / train_length, 1.0)
    inv_freq, attention_factor = rope_scaling_frequencies(
        "linear", head_dim, base=base, factor=factor,
        original_max_position_embeddings=train_length, seq_len=eval_length)
    assert attention_factor == 1.0  # PI rescales nothing else
    return inv_freq
