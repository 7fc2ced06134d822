"""Position in practice: the position fields of Hugging Face ``config.json`` files (numpy only).

==================  ===================================================================
module              what it holds
==================  ===================================================================
``reader``          :func:`read_config` -> :class:`ModelPositions` (one
                    :class:`LayerPositions` per layer: frequencies, attention factor,
                    window, chunk, method, sinks, :class:`Temperature`)
``rope_parameters`` the three rope schemas (``rope_scaling`` with ``type`` or
                    ``rope_type``, v5's ``rope_parameters``, flat or per layer type),
                    their checks, and their frequencies via :mod:`posenc.scaling`
``layers``          layer types, sliding windows, chunks and NoPE layers
``families``        what a family's code adds to its fields (:data:`FAMILIES`)
``bundled``         real configs of 2023-26 models: :func:`bundled_names`,
                    :func:`load_bundled`, :func:`read_bundled`
``angles``          what the frequencies mean for lengths: turns within the trained
                    length, pairs meeting unseen angles at a target, the scaling's
                    regions (:func:`unseen_pairs`, :func:`pair_regions`)
``kv_cache``        the KV cache's bytes per token (:func:`kv_cache`: GQA, DeepSeek's
                    latent attention, sliding windows and chunks)
``survey``          one row per bundled model: its layers by kind, base, rotated share,
                    scaling, temperature and KV bytes (:func:`survey_row`)
``per_layer``       one row per kind of layer of a model, with its source and date
                    (:func:`layer_kinds`, :func:`layer_table`; :data:`UNBUNDLED`: GLM-5,
                    DeepSeek-V4-Flash)
``sparse``          sparse attention's side paths: the indexer's own RoPE slice and
                    layout (:data:`SIDE_ROPE`, :func:`rotate_slot`), DeepSeek-V4's
                    compressed entries and rotations, GLM-5's shared indexers
==================  ===================================================================

Example::

    from posenc.configs import read_bundled
    model = read_bundled("gpt-oss-20b")
    model.layers[0].window, model.layers[0].method, model.layers[0].attention_factor
    # (128, 'yarn', 1.3465735902799727)

Every public name is importable from here.
"""

from .angles import (
    REGIONS,
    angle_ratio,
    pair_regions,
    reach,
    trained_length,
    turns,
    unscaled_frequencies,
    unseen_pairs,
)
from .bundled import bundled_names, load_bundled, read_bundled
from .families import FAMILIES, Family
from .kv_cache import DTYPE_BYTES, KVCache, kv_cache
from .layers import LAYER_TYPES
from .per_layer import UNBUNDLED, LayerKindRow, layer_kinds, layer_table
from .reader import LayerPositions, ModelPositions, Temperature, read_config
from .rope_parameters import ROPE_KEYS
from .sparse import (
    SIDE_ROPE,
    SLOTS,
    SideRope,
    compressed_positions,
    deepseek_v4_rope,
    indexer_types,
    rotate_slot,
    visible_entries,
)
from .survey import SurveyRow, survey_row

__all__ = [
    "read_config",
    "ModelPositions",
    "LayerPositions",
    "Temperature",
    "ROPE_KEYS",
    "LAYER_TYPES",
    "FAMILIES",
    "Family",
    "bundled_names",
    "load_bundled",
    "read_bundled",
    "kv_cache",
    "KVCache",
    "DTYPE_BYTES",
    "trained_length",
    "unscaled_frequencies",
    "reach",
    "turns",
    "angle_ratio",
    "unseen_pairs",
    "pair_regions",
    "REGIONS",
    "SurveyRow",
    "survey_row",
    "LayerKindRow",
    "layer_kinds",
    "layer_table",
    "UNBUNDLED",
    "SideRope",
    "SIDE_ROPE",
    "SLOTS",
    "rotate_slot",
    "compressed_positions",
    "visible_entries",
    "deepseek_v4_rope",
    "indexer_types",
]
