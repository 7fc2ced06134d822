"""What a model's rotary frequencies mean for lengths: turns in training, unseen angles at a target.

Chapter 5's test of a RoPE layer at a new length, applied to one layer of a real config
(a :class:`~posenc.configs.LayerPositions`):

* the model was pre-trained at ``L0`` (:func:`trained_length`: the rope parameters'
  ``original_max_position_embeddings``, else ``max_position_embeddings``) with its
  *unscaled* frequencies (:func:`unscaled_frequencies`, the ``default`` rope type with the
  same base and rotary dimension);
* a layer's largest distance is its reach, ``min(length, window or chunk)``
  (:func:`reach`): a sliding layer never meets a distance of its window or more;
* pair ``i`` turned less than once in training when ``reach(L0) * theta_i < 2 pi``; for such
  a pair, an angle larger than ``reach(L0) * theta_i`` was never seen. At a target length
  ``T`` the layer rotates by ``theta'_i`` (its shipped frequencies, recomputed at ``T`` for
  ``dynamic`` and ``longrope``); the pair meets unseen angles when
  ``reach(T) * theta'_i > reach(L0) * theta_i`` (:func:`unseen_pairs`);
* :func:`pair_regions` names what the scaling did to each pair: ``"kept"`` (frequency
  unchanged), ``"interpolated"`` (divided by the full factor) or ``"blended"`` (in between:
  YaRN's and Llama 3.1's ramp, LongRoPE's searched factors).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_int
from ..scaling import rope_scaling_frequencies
from .reader import LayerPositions, ModelPositions

__all__ = ["trained_length", "unscaled_frequencies", "reach", "turns", "angle_ratio",
           "unseen_pairs", "pair_regions", "REGIONS"]

#: The names :func:`pair_regions` gives, in the order of the pairs (fast to slow).
REGIONS = ("kept", "blended", "interpolated")


def _rotating(layer: LayerPositions) -> LayerPositions:
    if not isinstance(layer, LayerPositions):
        raise TypeError(f"layer must be a LayerPositions, got {type(layer).__name__}")
    if layer.rope is None:
        raise ValueError(f"layer {layer.index} applies no rotation (method 'none')")
    return layer


def trained_length(model: ModelPositions, layer: LayerPositions) -> int:
    """``L0``: the length the layer's unscaled frequencies were pre-trained at (the rope
    parameters' ``original_max_position_embeddings``, else the model's
    ``max_position_embeddings``)."""
    spec = _rotating(layer).rope
    length0 = spec.original_max_position_embeddings
    if length0 is None or spec.rope_type == "dynamic":
        length0 = model.max_position_embeddings
    if length0 is None:
        raise ValueError("the model has no max_position_embeddings and the layer no "
                         "original_max_position_embeddings: its trained length is unknown")
    return int(length0)


def unscaled_frequencies(layer: LayerPositions) -> np.ndarray:
    """The layer's frequencies before any scaling: the ``default`` rope type with its base
    and rotary dimension (float64 ``[rotary_dim // 2]``); for ``proportional``, the pairs it
    zeroes stay 0."""
    layer = _rotating(layer)
    freqs, _ = rope_scaling_frequencies("default", layer.rotary_dim, base=layer.theta)
    if layer.method == "proportional":
        freqs = np.where(layer.frequencies > 0, freqs, 0.0)
    return freqs


def reach(layer: LayerPositions, length: int) -> int:
    """The largest distance plus one that the layer meets in a sequence of ``length``
    tokens: ``min(length, window or chunk)``."""
    length = check_int("length", length)
    limit = layer.window or layer.chunk
    return length if limit is None else min(length, limit)


def turns(frequencies, length: int) -> np.ndarray:
    """Full turns each pair makes over ``length`` positions: ``length * theta / (2 pi)``."""
    return np.asarray(frequencies, dtype=np.float64) * check_int("length", length) / (2 * np.pi)


def angle_ratio(model: ModelPositions, layer: LayerPositions, target: int) -> np.ndarray:
    """Per pair, the largest angle at ``target`` tokens over the largest angle in training:
    ``reach(T) * theta'_i(T) / (reach(L0) * theta_i)`` (``nan`` for a zeroed pair)."""
    length0 = trained_length(model, layer)
    new = layer.frequencies_at(check_int("target", target))
    old = unscaled_frequencies(layer)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = reach(layer, target) * new / (reach(layer, length0) * old)
    return np.where(old > 0, ratio, np.nan)


def unseen_pairs(model: ModelPositions, layer: LayerPositions, target: int) -> np.ndarray:
    """Boolean ``[rotary_dim // 2]``: the pairs that turned less than once in training and
    meet, at ``target`` tokens, an angle larger than any they met in training."""
    length0 = trained_length(model, layer)
    old = unscaled_frequencies(layer)
    under_one_turn = (old > 0) & (turns(old, reach(layer, length0)) < 1)
    ratio = angle_ratio(model, layer, target)
    return under_one_turn & (np.nan_to_num(ratio) > 1 + 1e-9)


def pair_regions(layer: LayerPositions, target: int | None = None) -> np.ndarray:
    """Per pair, what the scaling did (:data:`REGIONS`): ``"kept"`` where the frequency is
    the unscaled one, ``"interpolated"`` where it is divided by the whole factor (or more),
    ``"blended"`` in between. ``target``: the length at which ``dynamic`` and ``longrope``
    layers are read (``None``: as initialised). A zeroed pair counts as kept."""
    layer = _rotating(layer)
    new = layer.frequencies if target is None else layer.frequencies_at(target)
    old = unscaled_frequencies(layer)
    factor = layer.rope.factor or 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(old > 0, new / old, 1.0)
    kept = np.isclose(ratio, 1.0, rtol=1e-9)
    full = ~kept & (ratio <= 1.0 / factor * (1 + 1e-9))
    return np.where(kept, "kept", np.where(full, "interpolated", "blended"))
