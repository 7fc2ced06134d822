"""Positions at inference (chapter 16): what a serving engine must get right, run on the
course's own :class:`~posenc.model.TinyLM`. One concept per module:

==============  ==========================================================================
module          what it holds
==============  ==========================================================================
``forward``     :func:`run`: the model with explicit position ids, mask and a
                :class:`KVCache` of rotated keys (equal to ``model(tokens)`` by default)
``positions``   ids and masks for left padding and packing: :func:`position_ids_from_mask`,
                :func:`padded_mask`, :func:`packed_position_ids`, :func:`packed_mask`
``cache``       shifting and evicting a cache: :func:`rerotate_keys`,
                :func:`streaming_keep` (StreamingLLM), :func:`evict`
``prefill``     prefix caching and chunked prefill: :func:`chunked_prefill`
``layout``      interleaved <-> half RoPE layout of a checkpoint: :func:`with_layout`
``latent``      MLA's decoupled RoPE key (numpy): :func:`decoupled_keys`,
                :func:`decoupled_scores`
``mrope``       shifting M-RoPE's three ids (numpy): :func:`mrope_shift`,
                :func:`rerotate_mrope`
``mismatch``    a dropped query scale, measured: :func:`attention_entropy`,
                :func:`next_byte_loss`, :func:`train_briefly`
==============  ==========================================================================

The maths is the library's own: RoPE from :mod:`posenc.rope` / :mod:`posenc.nn.rope_kernel`,
ALiBi's slopes from :mod:`posenc.alibi`, masks from :func:`posenc.masks.visible`, scalings
and temperatures from :mod:`posenc.scaling`.
"""

from . import cache, forward, latent, layout, mismatch, mrope, positions, prefill
from .cache import *  # noqa: F403
from .forward import *  # noqa: F403
from .latent import *  # noqa: F403
from .layout import *  # noqa: F403
from .mismatch import *  # noqa: F403
from .mrope import *  # noqa: F403
from .positions import *  # noqa: F403
from .prefill import *  # noqa: F403

__all__ = [*forward.__all__, *positions.__all__, *cache.__all__, *prefill.__all__,
           *layout.__all__, *latent.__all__, *mrope.__all__, *mismatch.__all__]
