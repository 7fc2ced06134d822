"""Positions on sparse attention's side paths: DeepSeek Sparse Attention's indexer and
DeepSeek-V4's compressed branches (numpy only).

A sparse-attention layer scores every cached token with a small *indexer* and attends only to
the top ``index_topk`` of them (DeepSeek Sparse Attention, DSA: DeepSeek-V3.2-Exp, GLM-5).
The indexer has queries and keys of its own, so it has a RoPE of its own: like the decoupled
rotary key of multi-head latent attention, a slice of ``qk_rope_head_dim`` features turns and
the rest does not. Which slice, and in which layout, differs between the families, and
between the indexer and the attention of one family (:data:`SIDE_ROPE`):

==============  ================================  ==================================
family          attention (its rotary slice)      indexer (its rotary slice)
==============  ================================  ==================================
deepseek_v32    last 64, interleaved pairs        **first** 64 of 128, **half** layout
glm_moe_dsa     last 64, interleaved pairs        first 64 of 128, interleaved pairs
deepseek_v4     last 64 of 512, interleaved       last 64 of 128, interleaved
==============  ================================  ==================================

each transcribed from Hugging Face transformers 5.23.0 (``DeepseekV32Attention`` /
``DeepseekV32Indexer``, ``GlmMoeDsaAttention`` / ``GlmMoeDsaIndexer``, and DeepSeek-V4's
``apply_rotary_pos_emb``, which rotates ``x[..., -rope_dim:]``). :func:`rotate_slot` applies
any of them.

DeepSeek-V4 compresses the KV cache of a layer's distant tokens: every ``ratio`` tokens
(4 in its compressed sparse attention, CSA; 128 in its heavily compressed attention, HCA)
become one entry, rotated at the position of its window's first token
(:func:`compressed_positions`), and a query at ``t`` reads only the entries whose window
has closed (:func:`visible_entries`). Those layers rotate with a base of their own,
``compress_rope_theta``, and the config's YaRN; the sliding-window-only layers keep
``rope_theta`` unscaled (:func:`deepseek_v4_rope`). GLM-5's DSA lets some layers reuse the
top-k of the last layer that ran an indexer (:func:`indexer_types`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._validation import check_choice, check_even_int, check_int
from ..rope import LAYOUTS, apply_rope
from ..rope_variants import apply_partial_rope
from ..scaling import rope_scaling_frequencies

__all__ = ["SideRope", "SIDE_ROPE", "SLOTS", "rotate_slot", "compressed_positions",
           "visible_entries", "deepseek_v4_rope", "indexer_types"]

#: Where a head's rotary slice sits: its ``"first"`` or its ``"last"`` features.
SLOTS = ("first", "last")


@dataclass(frozen=True)
class SideRope:
    """How one path of a sparse-attention layer rotates: ``layout`` (``"interleaved"`` or
    ``"half"``, :mod:`posenc.rope`), ``slot`` (the head's ``"first"`` or ``"last"``
    ``qk_rope_head_dim`` features turn), ``base`` (the config field its base comes from) and
    ``source`` (the Hugging Face code it is transcribed from)."""

    layout: str
    slot: str
    base: str
    source: str


_V32 = "transformers 5.23.0 models/deepseek_v32/modular_deepseek_v32.py"
_GLM = "transformers 5.23.0 models/glm_moe_dsa/modular_glm_moe_dsa.py"
_V4 = "transformers 5.23.0 models/deepseek_v4/modular_deepseek_v4.py"

#: The rotary slice of each path, by ``model_type`` and path (``"attention"``,
#: ``"indexer"``, and DeepSeek-V4's ``"compressor"``).
SIDE_ROPE: dict[str, dict[str, SideRope]] = {
    "deepseek_v32": {
        "attention": SideRope("interleaved", "last", "rope_theta",
                              f"{_V32}, DeepseekV32Attention (apply_rotary_pos_emb_interleave)"),
        "indexer": SideRope("half", "first", "rope_theta",
                            f"{_V32}, DeepseekV32Indexer (apply_rotary_pos_emb)"),
    },
    "glm_moe_dsa": {
        "attention": SideRope("interleaved", "last", "rope_theta",
                              f"{_GLM}, GlmMoeDsaAttention (apply_rotary_pos_emb_interleave)"),
        "indexer": SideRope("interleaved", "first", "rope_theta",
                            f"{_GLM}, GlmMoeDsaIndexer (apply_rotary_pos_emb_interleave)"),
    },
    "deepseek_v4": {
        "attention": SideRope("interleaved", "last", "rope_theta or compress_rope_theta",
                              f"{_V4}, DeepseekV4Attention (apply_rotary_pos_emb)"),
        "compressor": SideRope("interleaved", "last", "compress_rope_theta",
                               f"{_V4}, DeepseekV4HCACompressor / DeepseekV4CSACompressor"),
        "indexer": SideRope("interleaved", "last", "compress_rope_theta",
                            f"{_V4}, DeepseekV4Indexer"),
    },
}


def rotate_slot(x, positions=None, *, rotary_dim: int, slot: str = "first",
                layout: str = "interleaved", base: float = 10000.0, frequencies=None):
    """Rotate one slice of each head: its first or last ``rotary_dim`` features.

    Shape: ``x`` ``[..., seq, head_dim]`` (numpy), same shape and dtype out. The slice turns
    with ``base ** (-2i / rotary_dim)`` (or ``frequencies``, ``[rotary_dim // 2]``), its pairs
    laid out in ``layout`` *within the slice*; the other ``head_dim - rotary_dim`` features
    pass through. ``slot="first"`` is :func:`posenc.rope_variants.apply_partial_rope`
    (DeepSeek-V3.2's and GLM-5's indexers); ``slot="last"`` is the ``[nope | rope]`` head of
    multi-head latent attention and of DeepSeek-V4 (:data:`SIDE_ROPE`).
    """
    slot = check_choice("slot", slot, SLOTS)
    layout = check_choice("layout", layout, LAYOUTS)
    rotary_dim = check_even_int("rotary_dim", rotary_dim)
    if slot == "first":
        return apply_partial_rope(x, rotary_dim, positions, base=base, layout=layout,
                                  frequencies=frequencies)
    if np.ndim(x) < 2:
        raise ValueError(f"x must have shape [..., seq, head_dim], got shape {np.shape(x)}")
    head_dim = int(np.shape(x)[-1])
    if rotary_dim > head_dim:
        raise ValueError(f"rotary_dim must be an even integer in [2, head_dim={head_dim}], "
                         f"got {rotary_dim}")
    x = np.asarray(x)
    # the rotary slice is the head's tail: rotate it as a head of its own, keep the rest
    rotated = apply_rope(x[..., head_dim - rotary_dim:], positions, base=base, layout=layout,
                         frequencies=frequencies)
    return np.concatenate([x[..., :head_dim - rotary_dim], rotated], axis=-1)


def compressed_positions(num_entries: int, ratio: int, *, first_position: int = 0) -> np.ndarray:
    """The position at which DeepSeek-V4 rotates each compressed KV entry: ``int64
    [num_entries]``, ``first_position + w * ratio`` for entry ``w``, the first token of the
    ``ratio`` tokens it summarises (``DeepseekV4HCACompressor``; ``first_position`` is where
    this call's first window starts, a multiple of ``ratio`` when a cache is kept). A
    query at ``t`` therefore meets entry ``w`` at the distance ``t - w * ratio``: the
    distance to the *start* of the window."""
    num_entries = check_int("num_entries", num_entries, minimum=0)
    ratio = check_int("ratio", ratio)
    first_position = check_int("first_position", first_position, minimum=0)
    return first_position + ratio * np.arange(num_entries, dtype=np.int64)


def visible_entries(positions, ratio: int) -> np.ndarray:
    """How many compressed entries a query at each position may read: ``(t + 1) // ratio``
    (entries ``0 ..`` that many ``- 1``; entry ``w`` only once all of its tokens
    ``w * ratio .. (w + 1) * ratio - 1`` are at or before ``t``), as the causal threshold of
    DeepSeek-V4's compressors and indexer. ``positions``: integers >= 0, any shape."""
    ratio = check_int("ratio", ratio)
    pos = np.asarray(positions)
    if pos.dtype.kind not in "iu" or (pos.size and pos.min() < 0):
        raise ValueError(f"positions must be integers >= 0, got {positions!r}")
    return (pos.astype(np.int64) + 1) // ratio


def _rope_scaling(config: Mapping) -> dict:
    scaling = dict(config.get("rope_scaling") or {})
    if "type" in scaling:  # the 2023 spelling of rope_type
        scaling.setdefault("rope_type", scaling.pop("type"))
    return scaling


def deepseek_v4_rope(config: Mapping) -> dict[str, tuple[np.ndarray, float]]:
    """DeepSeek-V4's two rotations, ``{"main": ..., "compress": ...}``, each ``(frequencies
    float64 [qk_rope_head_dim // 2], attention_factor)``, as Hugging Face's
    ``DeepseekV4Config`` builds them from a ``config.json``'s fields:

    * ``"main"`` (the sliding-window-only layers): ``rope_theta`` (default 10,000), no
      scaling;
    * ``"compress"`` (the CSA and HCA layers, their compressors and indexer):
      ``compress_rope_theta`` (default 160,000) with the config's ``rope_scaling`` (YaRN),
      its attention factor 1 unless the config gives one ("the V4 reference does NOT
      multiply cos/sin by YaRN's computed mscale", ``configuration_deepseek_v4.py``).

    The rotated features are ``qk_rope_head_dim`` (default 64) of a ``head_dim`` of 512.
    """
    if not isinstance(config, Mapping):
        raise TypeError("config must be a mapping (a config.json's dict), "
                        f"got {type(config).__name__}")
    head_dim = check_int("head_dim", config.get("head_dim", 512))
    rotary_dim = check_even_int("qk_rope_head_dim", config.get("qk_rope_head_dim", 64))
    if rotary_dim > head_dim:
        raise ValueError(f"qk_rope_head_dim must be <= head_dim ({head_dim}), got {rotary_dim}")
    main = rope_scaling_frequencies("default", rotary_dim,
                                    base=float(config.get("rope_theta", 10000.0)))
    scaling = _rope_scaling(config)
    method = scaling.pop("rope_type", "default")
    options = {k: v for k, v in scaling.items()
               if k in ("beta_fast", "beta_slow", "attention_factor", "mscale", "mscale_all_dim")}
    if method == "yarn":
        options.setdefault("attention_factor", 1.0)
    compress = rope_scaling_frequencies(
        method, rotary_dim, base=float(config.get("compress_rope_theta", 160000.0)),
        factor=float(scaling.get("factor", 1.0)),
        original_max_position_embeddings=scaling.get("original_max_position_embeddings"),
        **options)
    return {"main": main, "compress": compress}


def indexer_types(num_layers: int, *, freq: int = 1, offset: int = 2,
                  pattern: str | None = None) -> tuple[str, ...]:
    """Which layers of a GLM-5-style DSA model run their own indexer (``"full"``) and which
    reuse the top-k of the last one that did (``"shared"``), as Hugging Face's
    ``GlmMoeDsaConfig`` derives them: from ``pattern`` (``index_topk_pattern``, one letter
    ``F`` or ``S`` per layer) when given, else layer ``i`` is full when
    ``max(i - offset + 1, 0) % freq == 0`` (``index_topk_freq``, ``index_skip_topk_offset``).
    ``freq=1`` (the class's default) gives every layer its own indexer."""
    num_layers = check_int("num_layers", num_layers)
    if pattern is not None:
        if not isinstance(pattern, str) or len(pattern) != num_layers or set(pattern) - set("FS"):
            raise ValueError(f"pattern must be a string of {num_layers} letters F or S, "
                             f"got {pattern!r}")
        return tuple({"F": "full", "S": "shared"}[c] for c in pattern)
    freq = check_int("freq", freq)
    offset = check_int("offset", offset, minimum=0)
    return tuple("full" if max(i - offset + 1, 0) % freq == 0 else "shared"
                 for i in range(num_layers))
