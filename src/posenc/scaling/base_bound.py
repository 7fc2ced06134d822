"""How long a context a RoPE base supports: Men et al. (2024)'s lower bound on the base.

"Base of RoPE bounds context length" (Men et al., 2024, arXiv:2405.14591; Su's
re-derivation, kexue.fm 10122) asks that a key similar to the query gets, in expectation,
more attention than a random key at every distance ``m`` the model is trained on; for
i.i.d. query components that difference is proportional to

    B(m) = sum_{i < d/2} cos(m * base ** (-2i/d)),

``d`` the rotated size of one head, so the criterion is ``B(m) >= 0``. ``B`` is the
sinusoidal dot product at distance ``m``
(:func:`posenc.sinusoidal.sinusoidal_dot_product` with ``d_model = d``).

* :func:`rope_base_lower_bound`: the smallest base with ``B(m) >= 0`` for every ``m``
  below a context length (base as a function of length).
* :func:`rope_base_reach`: the first ``m`` where a given base's ``B(m) < 0`` (length as
  a function of base). The criterion is not monotone in the base, so this, not a
  comparison with a tabulated bound, says whether a base supports a length.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._validation import check_even_int, check_float, check_int
from ..sinusoidal import sinusoidal_dot_product

__all__ = ["rope_base_lower_bound", "rope_base_reach"]


def _decay_holds(bases: np.ndarray, head_dim: int, length: int) -> np.ndarray:
    """For each base, whether ``sum_i cos(m theta_i) >= 0`` for every ``m < length``.

    ``bases``: ``[n]``. Checked in growing chunks of ``m``, dropping a base at its first
    negative value, so bases far below the bound cost a few hundred ``m`` each."""
    exponents = -np.arange(0, head_dim, 2, dtype=np.float64) / head_dim
    alive = np.ones(len(bases), dtype=bool)
    start, size = 0, 256
    while start < length and alive.any():
        m = np.arange(start, min(start + size, length), dtype=np.float64)
        theta = bases[alive, None] ** exponents                       # [alive, d/2]
        decay = np.cos(m[None, :, None] * theta[:, None, :]).sum(-1)  # [alive, m]
        alive[np.flatnonzero(alive)[(decay < 0).any(axis=1)]] = False
        start, size = start + size, min(size * 2, 2048)
    return alive


def rope_base_lower_bound(context_length: int, head_dim: int = 128, *,
                          rtol: float = 1e-3) -> float:
    """Men et al. (2024)'s lower bound on RoPE's base for a context length.

    "Base of RoPE bounds context length" (arXiv:2405.14591) asks that a key similar to the
    query gets, in expectation, more attention than a random key at every distance the
    model is trained on; for i.i.d. query components that difference is proportional to

        B(m) = sum_{i < d/2} cos(m * base ** (-2i/d)),

    so the bound is the smallest base with ``B(m) >= 0`` for every ``m`` in
    ``0 .. context_length - 1`` (the parametrisation of Su's re-derivation, kexue.fm 10122).
    ``B >= 0`` is not monotone in the base (a base that works can be followed by one that
    fails), so the bound is found by a geometric scan upward from ``context_length / 2``
    in steps of ``1 + rtol`` (no bisection); the result is within a factor ``1 + rtol`` of
    the smallest working base on that grid. Su's finer GPU search gives tighter values than
    the paper's published table at several lengths; this function agrees with Su's.

    ``head_dim`` ``d``: the rotated size of one head (even). Returns the base (float).
    """
    length = check_int("context_length", context_length, minimum=2)
    head_dim = check_even_int("head_dim", head_dim)
    rtol = check_float("rtol", rtol, greater_than=0.0)
    step = math.log1p(rtol)
    first = math.log(max(length / 2.0, 1.0 + rtol))
    for batch in itertools.count():
        bases = np.exp(first + step * np.arange(batch * 64, (batch + 1) * 64))
        holds = _decay_holds(bases, head_dim, length)
        if holds.any():
            return float(bases[np.argmax(holds)])


def rope_base_reach(base: float, head_dim: int = 128, *, max_length: int = 1 << 22) -> int | None:
    """The longest context a RoPE base supports by Men et al. (2024)'s criterion.

    The first distance ``m`` with ``B(m) = sum_{i < d/2} cos(m * base ** (-2i/d)) < 0``
    (:func:`rope_base_lower_bound`'s margin): a base supports contexts up to that many
    tokens. ``None`` when ``B`` stays non-negative for every ``m <= max_length``. Because
    the criterion is not monotone in the base, this, not a comparison with a tabulated
    bound, says whether a given base supports a given length: for ``head_dim`` 128, base
    ``1e6`` reaches 27,115 tokens although it is above the 32k bound ``6.3e5``.
    ``head_dim`` ``d``: the rotated size of one head (even). Scans every ``m`` in chunks.
    """
    base = check_float("base", base, greater_than=1.0)
    head_dim = check_even_int("head_dim", head_dim)
    max_length = check_int("max_length", max_length)
    for start in range(0, max_length + 1, 1 << 15):
        m = np.arange(start, min(start + (1 << 15), max_length + 1), dtype=np.float64)
        # B(m) is the sinusoidal dot product at distance m for d_model = head_dim
        negative = np.flatnonzero(sinusoidal_dot_product(m, head_dim, base) < 0)
        if negative.size:
            return int(m[negative[0]])
    return None
