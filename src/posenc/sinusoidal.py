"""Sinusoidal absolute position encoding (Vaswani et al., 2017, section 3.5).

Layout is the paper's *interleaved* one, as in PyTorch's tutorial:
column ``2i`` holds ``sin(p * w_i)`` and column ``2i + 1`` holds ``cos(p * w_i)``
with ``w_i = base ** (-2i / d_model)``. (fairseq and x-transformers concatenate
``[sin | cos]`` instead; the two differ only by a permutation of columns.)

Everything here is float64 numpy: it feeds the figures and is the single
definition the torch module :class:`posenc.nn.SinusoidalPositionalEncoding` reuses.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_base, check_int

__all__ = [
    "sinusoidal_frequencies",
    "sinusoidal_wavelengths",
    "sinusoidal_encoding",
    "sinusoidal_shift_matrix",
    "sinusoidal_dot_product",
]


def sinusoidal_frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    """Angular frequency ``w_i = base ** (-2i / d_model)`` of each sin/cos pair.

    Shape: ``[ceil(d_model / 2)]`` (an odd ``d_model`` ends with a lone sin column,
    which still has a frequency). Radians per position; ``w_0 = 1``.
    """
    d_model = check_int("d_model", d_model)
    base = check_base(base)
    two_i = np.arange(0, d_model, 2, dtype=np.float64)  # 0, 2, 4, ...
    # base ** (-2i/d) rather than exp(-ln(base) * 2i/d): equal in float64 and the
    # power form is the more accurate one if a caller ever casts to float32.
    return base ** (-two_i / d_model)


def sinusoidal_wavelengths(d_model: int, base: float = 10000.0) -> np.ndarray:
    """Wavelength ``2 * pi / w_i`` (in positions) of each pair. Shape ``[ceil(d_model / 2)]``.

    Runs geometrically from ``2 * pi`` (pair 0) towards ``2 * pi * base``.
    """
    return 2.0 * np.pi / sinusoidal_frequencies(d_model, base)


def sinusoidal_encoding(num_positions: int, d_model: int, base: float = 10000.0, *,
                        normalize: bool = False) -> np.ndarray:
    """The position-encoding table ``PE``, shape ``[num_positions, d_model]``, float64.

    ``PE[p, 2i] = sin(p * w_i)``, ``PE[p, 2i + 1] = cos(p * w_i)``. An odd ``d_model``
    works: its last column is a sin.

    ``normalize=True`` scales every row to unit L2 norm. (For even ``d_model`` every
    row has norm ``sqrt(d_model / 2)`` because each pair contributes
    ``sin^2 + cos^2 = 1``; dividing by ``sqrt(d_model)``, as some notes do, leaves
    norm ``1 / sqrt(2)``, not 1.)
    """
    num_positions = check_int("num_positions", num_positions)
    d_model = check_int("d_model", d_model)
    frequencies = sinusoidal_frequencies(d_model, base)  # [ceil(d/2)]
    positions = np.arange(num_positions, dtype=np.float64)
    angles = positions[:, None] * frequencies[None, :]  # [num_positions, ceil(d/2)]
    pe = np.empty((num_positions, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin(angles)  # ceil(d/2) even columns
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])  # floor(d/2) odd columns
    if normalize:
        pe /= np.linalg.norm(pe, axis=1, keepdims=True)
    return pe


def _require_even(d_model: int, what: str) -> int:
    d_model = check_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(
            f"d_model must be even for {what}: with an odd d_model the last sin column "
            f"has no cos partner, so it is not a rotation; got {d_model}"
        )
    return d_model


def sinusoidal_shift_matrix(k: float, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The matrix ``M_k`` with ``PE[p + k] = M_k @ PE[p]`` for every position ``p``.

    Shape ``[d_model, d_model]``: block-diagonal, one 2x2 block per pair,
    ``[[cos(k w), sin(k w)], [-sin(k w), cos(k w)]]`` (the angle-addition formulas
    written for a ``(sin, cos)`` column pair). It depends on ``k`` only, not on ``p``.
    Needs an even ``d_model``.
    """
    d_model = _require_even(d_model, "the shift matrix")
    angle = float(k) * sinusoidal_frequencies(d_model, base)  # [d/2]
    c, s = np.cos(angle), np.sin(angle)
    m = np.zeros((d_model, d_model), dtype=np.float64)
    idx = np.arange(0, d_model, 2)
    m[idx, idx], m[idx, idx + 1] = c, s  # sin row: sin(a+b) = sin a cos b + cos a sin b
    m[idx + 1, idx], m[idx + 1, idx + 1] = -s, c  # cos row: cos(a+b) = cos a cos b - sin a sin b
    return m


def sinusoidal_dot_product(distances, d_model: int, base: float = 10000.0) -> np.ndarray:
    """``PE[p] . PE[p + k]`` as a function of the distance ``k`` alone.

    Equals ``sum_i cos(k * w_i)``: symmetric in ``k``, maximal (``d_model / 2``) at
    ``k = 0``, and it oscillates while decaying only *on average*. Needs an even
    ``d_model`` (an odd one adds a term that depends on ``p``). Shape: that of
    ``distances``.
    """
    d_model = _require_even(d_model, "a distance-only dot product")
    k = np.asarray(distances, dtype=np.float64)
    return np.cos(k[..., None] * sinusoidal_frequencies(d_model, base)).sum(axis=-1)
