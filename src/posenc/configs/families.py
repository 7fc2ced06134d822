"""What a model family's code adds to its config.json: the rules no field spells out.

A Hugging Face ``config.json`` does not say everything about position. Some of it lives in
the family's modelling code in ``transformers`` (``models/<model_type>/``): the default
``rope_theta`` when the field is absent, which layers skip RoPE, which layers get which
rotary parameters, whether the head has learned attention sinks. :data:`FAMILIES` holds
these rules for the families the course reads, keyed by ``model_type``; any other
``model_type`` gets :data:`GENERIC` (the rules of the plain Llama-style decoder).

Each rule names the Hugging Face code it transcribes (transformers 5.x,
``configuration_<family>.py`` / ``modeling_<family>.py``):

================  =========================================================================
``model_type``    rule
================  =========================================================================
gemma3_text       ``sliding_attention`` layers rotate with ``rope_local_base_freq`` (default
                  1e4) and no scaling; ``full_attention`` layers with ``rope_theta``
                  (default 1e6) and ``rope_scaling``; ``layer_types`` from
                  ``sliding_window_pattern`` (default 6: five local, one global)
olmo3             ``rope_scaling`` on ``full_attention`` layers only; ``sliding_attention``
                  layers keep plain RoPE with the same ``rope_theta`` (default 5e5);
                  default ``layer_types``: three sliding, one full
exaone4           the ``full_attention`` layers apply no RoPE when a ``sliding_window`` is
                  set (``Exaone4Attention``); ``layer_types`` from ``sliding_window_pattern``
                  (an int, or a string such as ``"LLLG"``)
smollm3, llama4   ``no_rope_layers`` (1 = RoPE, 0 = NoPE), else a NoPE layer every
_text             ``no_rope_layer_interval`` (default 4) layers; Llama 4's RoPE layers use
                  chunked attention (``attention_chunk_size``) and its NoPE layers get the
                  attention temperature (``attn_temperature_tuning``, ``floor_scale``,
                  ``attn_scale``); default ``rope_theta`` 2e6 (SmolLM3), 5e5 (Llama 4)
gpt_oss           learned attention sinks on every layer (``GptOssAttention.sinks``, no
                  config field); default ``layer_types`` alternate sliding and full;
                  default ``rope_theta`` 1.5e5
qwen2, qwen3      a sliding window only with ``use_sliding_window`` and only on layers
                  ``>= max_window_layers`` (default 28)
qwen3_next,       ``linear_attention`` (no RoPE) except every ``full_attention_interval``-th
qwen3_5_text      layer (default 4); ``mrope_section`` / ``mrope_interleaved`` allowed in the
                  rope parameters (text positions rotate as plain partial RoPE)
ministral3,       ``llama_4_scaling_beta`` in the rope parameters: a query temperature on
mistral4          every layer, ``1 + beta ln(1 + floor(p / original_max_position_embeddings))``
deepseek_v2,      multi-head latent attention: only ``qk_rope_head_dim`` features per head
deepseek_v3,      rotate; with a ``mscale_all_dim`` the softmax scale is multiplied by
deepseek_v32      ``yarn_mscale(factor, mscale_all_dim) ** 2`` (``yarn_apply_mscale``)
deepseek_v32      every layer ``indexed_attention``: full attention restricted to the top
                  ``index_topk`` keys its indexer picks; the indexer (``DeepseekV32Indexer``)
                  rotates the first ``qk_rope_head_dim`` of its ``index_head_dim`` features
                  with the model's frequencies in the half (``rotate_half``) layout, while the
                  latent attention rotates interleaved pairs (``apply_rotary_pos_emb_interleave``)
gemma4_text       ``rope_parameters`` keyed by layer type (default: ``sliding_attention`` plain
                  RoPE base 1e4, ``full_attention`` ``proportional`` p = 0.25 base 1e6); the
                  ``full_attention`` layers have a head of their own, ``global_head_dim``
                  (default 512, ``Gemma4TextConfig.per_layer_config``), which their rotary
                  frequencies and KV cache use
kimi_linear       ``linear_attention`` layers (Kimi Delta Attention, order from its recurrence
                  and short convolution) and ``full_attention`` layers of multi-head latent
                  attention with no RoPE at all: ``KimiLinearModel`` builds no rotary
                  embedding, and its key is the latent plus an unrotated ``k_rot``; default
                  ``layer_types``: a full layer at every index ``i > 0`` with ``i % 4 == 0``
phi3, qwen2,      no ``head_dim`` of their own in Hugging Face's config class: the head is
smollm3, olmo3,   ``hidden_size / num_attention_heads``, and a ``head_dim`` that disagrees is
exaone4           a contradiction
================  =========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Family", "FAMILIES", "GENERIC", "get_family"]


@dataclass(frozen=True)
class Family:
    """The position rules of one ``model_type`` (see the module docstring).

    ``default_theta``: the ``rope_theta`` when a config has none (a float, or
    ``{"full_attention": ..., "sliding_attention": ...}``). ``rope_by_layer_type``:
    ``None`` (one set of rotary parameters for every layer), ``"gemma3"`` or ``"olmo3"``.
    ``layer_rule``: how ``layer_types`` are derived when the config lists none.
    ``nope_rule``: ``None``, ``"no_rope_layers"``, ``"exaone4"`` or ``"all"`` (no layer
    rotates, Kimi Linear). ``extra_rope_keys``:
    keys the family stores inside its rope parameters beyond Hugging Face's standard ones.
    ``derived_head_dim``: the head is ``hidden_size // num_attention_heads``, and a given
    ``head_dim`` must agree. ``sinks``: learned attention sinks on every layer.
    ``temperature``: ``None``, ``"llama4"`` or ``"llama_4_scaling_beta"``. ``latent``:
    DeepSeek's multi-head latent attention (``qk_rope_head_dim``). ``indexer``: DeepSeek
    Sparse Attention's indexer, with a rotary part of its own (``qk_rope_head_dim`` of
    ``index_head_dim``; its layout is the family's: half for DeepSeek-V3.2, interleaved for
    GLM-5, :data:`posenc.configs.sparse.SIDE_ROPE`).
    """

    default_theta: float | dict = 10000.0
    rope_by_layer_type: str | None = None
    layer_rule: str = "generic"
    nope_rule: str | None = None
    default_nope_interval: int | None = None
    extra_rope_keys: frozenset = field(default_factory=frozenset)
    derived_head_dim: bool = False
    sinks: bool = False
    temperature: str | None = None
    latent: bool = False
    indexer: bool = False
    global_head_dim: int | None = None


#: The rules of any ``model_type`` not in :data:`FAMILIES`.
GENERIC = Family()

_MROPE = frozenset({"mrope_section", "mrope_interleaved"})
_LLAMA4_BETA = frozenset({"llama_4_scaling_beta", "max_position_embeddings"})

#: The families whose config.json needs more than its fields, by ``model_type``.
FAMILIES: dict[str, Family] = {
    "llama": Family(),
    "mistral": Family(extra_rope_keys=_LLAMA4_BETA),
    "qwen2": Family(layer_rule="qwen2", derived_head_dim=True),
    "qwen3": Family(layer_rule="qwen2"),
    "phi3": Family(derived_head_dim=True),
    "smollm3": Family(default_theta=2_000_000.0, layer_rule="smollm3", nope_rule="no_rope_layers",
                      default_nope_interval=4, derived_head_dim=True),
    "llama4_text": Family(default_theta=500_000.0, layer_rule="llama4",
                          nope_rule="no_rope_layers", default_nope_interval=4,
                          temperature="llama4"),
    "olmo3": Family(default_theta=500_000.0, rope_by_layer_type="olmo3", layer_rule="olmo3",
                    derived_head_dim=True),
    "exaone4": Family(layer_rule="exaone4", nope_rule="exaone4", derived_head_dim=True),
    "gemma3_text": Family(default_theta={"full_attention": 1_000_000.0,
                                         "sliding_attention": 10_000.0},
                          rope_by_layer_type="gemma3", layer_rule="gemma3"),
    "gpt_oss": Family(default_theta=150_000.0, layer_rule="gpt_oss", sinks=True),
    "qwen3_next": Family(layer_rule="full_attention_interval", extra_rope_keys=_MROPE),
    "qwen3_5_text": Family(layer_rule="full_attention_interval", extra_rope_keys=_MROPE),
    "ministral3": Family(extra_rope_keys=_LLAMA4_BETA, temperature="llama_4_scaling_beta"),
    "mistral4": Family(extra_rope_keys=_LLAMA4_BETA, temperature="llama_4_scaling_beta"),
    "deepseek_v2": Family(latent=True),
    "deepseek_v3": Family(latent=True),
    "deepseek_v32": Family(latent=True, indexer=True),
    "gemma4_text": Family(layer_rule="gemma3", global_head_dim=512),
    "kimi_linear": Family(latent=True, nope_rule="all", layer_rule="kimi_linear"),
}


def get_family(model_type) -> Family:
    """The rules of ``model_type`` (:data:`GENERIC` for one not in :data:`FAMILIES`, or None)."""
    return FAMILIES.get(model_type, GENERIC) if isinstance(model_type, str) else GENERIC
