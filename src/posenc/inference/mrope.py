"""Shifting an M-RoPE cache: three ids per token, so a shift is a shift per axis.

Qwen2-VL's M-RoPE (Wang et al., 2024) gives each token three ids (temporal, height,
width; :func:`posenc.rope_variants.mrope_position_ids`) and turns each section of the
frequencies by one of them. The angles are linear in the ids, so a cached key moves from
ids ``p`` to ``p + delta`` by one more M-RoPE rotation by the three-component ``delta``
(:func:`rerotate_mrope`), as a RoPE key moves by ``delta``. What is new is finding
``delta``: ids advance by an image's *extent*, not its token count, and evicting part of
an image changes one axis and not the others (:func:`mrope_shift`). A shift by one
number per token, the kernel llama.cpp uses for RoPE, cannot do that; llama.cpp disables
context shifting for M-RoPE models (Feb 2026). Numpy.
"""

from __future__ import annotations

import numpy as np

from ..rope_variants import apply_mrope, mrope_position_ids

__all__ = ["mrope_shift", "rerotate_mrope"]


def mrope_shift(before, after, kept) -> np.ndarray:
    """How each kept token's three ids change when the sequence ``before`` (segments, as
    :func:`~posenc.rope_variants.mrope_position_ids` takes them) becomes ``after``.

    ``kept``: for each token of ``after``, its index in ``before`` (increasing). Returns
    int64 ``[3, len(kept)]``: new ids minus old ids, per axis.
    """
    old, new = mrope_position_ids(before), mrope_position_ids(after)
    kept = np.asarray(kept)
    if kept.ndim != 1 or kept.dtype.kind not in "iu" or len(kept) != new.shape[1]:
        raise ValueError(f"kept must give one index into before per token of after "
                         f"({new.shape[1]}), got shape {kept.shape}")
    if kept.size and (kept.min() < 0 or kept.max() >= old.shape[1] or np.any(np.diff(kept) <= 0)):
        raise ValueError(f"kept must be increasing indices in [0, {old.shape[1]})")
    return new - old[:, kept]


def rerotate_mrope(keys, delta, *, sections, base: float = 10000.0) -> np.ndarray:
    """Keys rotated by M-RoPE at ids ``p``, moved to ``p + delta``: M-RoPE by ``delta``
    (``[3, n]``, any sign), half layout. ``keys`` ``[..., n, head_dim]``."""
    delta = np.asarray(delta)
    if delta.dtype.kind not in "iu":
        raise TypeError(f"delta must be integers, got dtype {delta.dtype}")
    return apply_mrope(keys, delta, sections=sections, base=base)
