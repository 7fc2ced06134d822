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
``temperature``     query temperatures, one family (:data:`QUERY_TEMPERATURES`): Su's
                    and Qwen's log-n (:func:`log_n_scale`, :func:`logn_scale`), Llama 4's
                    :func:`attention_temperature`, :func:`llama_4_beta_scale`,
                    :func:`scalable_softmax_scale`, QK-norm's :func:`qk_norm_gap_bound`
==================  ===================================================================

Every public name is importable from here (``from posenc.scaling import yarn_mscale``).
"""

from . import base_bound, frequencies, remapping, temperature
from .base_bound import *  # noqa: F403
from .frequencies import *  # noqa: F403
from .remapping import *  # noqa: F403
from .temperature import *  # noqa: F403

# each module's public names, in this order; one list per module, no copy here
__all__ = [*frequencies.__all__, *remapping.__all__, *base_bound.__all__, *temperature.__all__]
