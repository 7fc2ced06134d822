"""Running RoPE past its training length, one concept per module (numpy only):

==================  ===================================================================
module              what it holds
==================  ===================================================================
``frequencies``     new per-pair frequencies and an attention factor:
                    :func:`rope_scaling_frequencies` (PI, NTK-aware, dynamic NTK, YaRN,
                    Llama 3.1, LongRoPE, p-RoPE; one dispatch table), the YaRN helpers,
                    :func:`pi_frequencies`, :data:`SCALING_METHODS`, :data:`ROPE_TYPES`
``remapping``       the same frequencies, remapped distances: :func:`rerope_distance`
                    (ReRoPE), :func:`self_extend_distance` (Self-Extend)
``base_bound``      the base a context length needs (Men et al., 2024):
                    :func:`rope_base_lower_bound`, :func:`rope_base_reach`
``temperature``     Llama 4's query scale on its NoPE layers: :func:`attention_temperature`
==================  ===================================================================

Every public name is importable from here (``from posenc.scaling import yarn_mscale``).
"""

from .base_bound import rope_base_lower_bound, rope_base_reach
from .frequencies import (
    ROPE_TYPES,
    SCALING_METHODS,
    pi_frequencies,
    rope_scaling_frequencies,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_mscale,
)
from .remapping import rerope_distance, self_extend_distance
from .temperature import attention_temperature

__all__ = [
    "SCALING_METHODS",
    "ROPE_TYPES",
    "rope_scaling_frequencies",
    "pi_frequencies",
    "yarn_correction_range",
    "yarn_attention_factor",
    "yarn_mscale",
    "rerope_distance",
    "self_extend_distance",
    "rope_base_lower_bound",
    "rope_base_reach",
    "attention_temperature",
]
